#!/usr/bin/env bash
# Hypothesis run (session 10, issue 11): `paper-code` γ 0.8 seed 0 with the init convention of model.py in
# the authors' sibling folder code/multi-step_reasoning_code — every weight uniform in ±(6/d_in)^γ, the token
# and position tables with their row counts as d_in (init.distribution=uniform-6, init.embed_fan_in=rows) —
# to see whether it follows the authors' slow γ 0.8 path (epoch losses 3.86 / 3.46 / 3.25 in epochs 4-6)
# where the paper's normal rule (ours: 3.14 / 2.37 / 1.75) does not. Same schedule as paper-width.sh;
# niced, one thread, resumable (rerun this script); stop with pkill -TERM -f "paper-width/g0.8-uniform6".
set -uo pipefail
echo 19 > /proc/self/autogroup 2>/dev/null || true
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/docs/cpu-regime/paper-width/g0.8-uniform6"
log="$root/docs/cpu-regime/logs/paper-width-g0.8-uniform6.log"
mkdir -p "$root/docs/cpu-regime/logs"
if [ -f "$out/resume/state.json" ] && [ ! -f "$out/resume/state.safetensors" ]; then
  echo "g0.8-uniform6: resume/state.safetensors is missing; restore it first" | tee -a "$log" >&2; exit 1
fi
if [ -f "$out/resume/state.json" ]; then
  OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" train --quiet --resume "$out" >>"$log" 2>&1
else
  rm -rf "$out"
  OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" train --quiet --preset paper-code --set init.gamma=0.8 --set train.seed=0 \
    --set init.distribution=uniform-6 --set init.embed_fan_in=rows \
    --set train.device=cpu --set train.threads=1 --set train.steps=8880 --set train.resume_every=37 \
    --set train.snapshot_steps=1110,2220,3330,4440,5550,6660,7770 --out "$out" >>"$log" 2>&1
fi
