#!/usr/bin/env bash
# The paper-width pair with snapshots: the authors'-seed-1 γ 0.8 replay and its γ 0.5 twin (the same draw
# scaled to γ 0.5, the same data and batch order), fp32, one thread each, side by side, niced.
# Snapshots at steps 0, 370, 1110, 1850, 2960, 4440, 6660, 8880; a resume point every 37 steps.
# Run it from a pinned checkout (git worktree add ../frozen COMMIT) with its own .venv; rerun the same
# line to continue: a run with a resume point resumes, a finished one is left alone.
# usage: bash experiments/paper-pair/run.sh [RUNS_DIR]   (default: runs/paper-pair in the checkout)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/runs/paper-pair}
mkdir -p "$out"
echo 19 > /proc/self/autogroup 2>/dev/null || true
common=(--preset paper-code --replay authors:1 --set train.steps=8880 --set train.device=cpu --set train.threads=1
        --set train.resume_every=37 --set train.snapshot_steps=370,1110,1850,2960,4440,6660 --quiet)
for gamma in 0.8 0.5; do
  run=$out/g$gamma
  if [ -f "$run/model.safetensors" ]; then echo "g$gamma finished"; continue; fi
  if [ -f "$run/resume/state.safetensors" ]; then args=(--resume "$run" --quiet); else rm -rf "$run"; args=("${common[@]}" --set init.gamma=$gamma --out "$run"); fi
  (OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" train "${args[@]}" >>"$out/g$gamma.log" 2>&1; echo "exit $?" >>"$out/g$gamma.log") &
  echo "g$gamma: started (log $out/g$gamma.log)"
done
wait
