#!/usr/bin/env bash
# The decisive run at paper width (issue 11, item 4): `paper-code` (the authors' teaching code) at
# γ 0.8 and then γ 0.5, to step 8,880 of the authors' 77,700-step schedule, on one CPU thread.
# Niced (19) so foreground work keeps its speed. Resumable: rerun this script in a later session and each run continues from its resume state
# (saved every 37 steps, ~2.5 min at 4 s/step). The run folders live in docs/ so their config,
# metrics and resume state are committed between sessions (snapshots are not; see .gitignore).
# usage: bash experiments/cpu-regime/paper-width.sh [GAMMA[:SEED] ...]   (default: 0.8 0.5, one after the other;
#        give one γ per call to run them side by side; seed 0 unless given, e.g. 0.8:1 -> folder g0.8-s1;
#        log: experiments/cpu-regime/logs/paper-width-g*.log). THREADS=2 bash ... resumes a run on two threads when it has
#        the machine to itself (recorded in its config.json's provenance.resumed; new runs always start on one)
set -uo pipefail
echo 19 > /proc/self/autogroup 2>/dev/null || true  # background priority also across autogroups (setsid)
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/experiments/cpu-regime/logs"
gammas=("$@"); [ ${#gammas[@]} -gt 0 ] || gammas=(0.8 0.5)
for spec in "${gammas[@]}"; do
  g=${spec%%:*}; seed=0; [ "$spec" = "$g" ] || seed=${spec#*:}
  name=g$g; [ "$seed" = 0 ] || name=g$g-s$seed
  out="$root/experiments/cpu-regime/paper-width/$name"
  log="$root/experiments/cpu-regime/logs/paper-width-$name.log"
  [ -f "$out/model.safetensors" ] && continue
  # finished in an earlier checkout (its weights are not committed): the last metrics row is at step 8,880
  [ -f "$out/metrics.jsonl" ] && tail -n 1 "$out/metrics.jsonl" | grep -q '"step": 8880[,}]' && continue
  if [ -f "$out/resume/state.json" ] && [ ! -f "$out/resume/state.safetensors" ]; then
    # the resume weights are not tracked (32 MB): never let --resume restart a run whose weights are elsewhere
    echo "paper-width $name: resume/state.safetensors is missing; restore it first (experiments/cpu-regime/pending.txt)" | tee -a "$log" >&2
    exit 1
  fi
  if [ -f "$out/resume/state.json" ]; then
    OMP_NUM_THREADS=${THREADS:-1} nice -n 19 "$root/.venv/bin/mechinit" train --quiet --resume "$out" --threads "${THREADS:-1}" \
      >>"$log" 2>&1 || exit 1
  else
    rm -rf "$out"
    OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" train --quiet --preset paper-code --set init.gamma=$g --set train.seed=$seed \
      --set train.device=cpu --set train.threads=1 --set train.steps=8880 --set train.resume_every=37 \
      --set train.snapshot_steps=1110,2220,3330,4440,5550,6660,7770 --out "$out" >>"$log" 2>&1 || exit 1
  fi
done
