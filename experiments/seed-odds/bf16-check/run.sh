#!/usr/bin/env bash
# Does bf16 autocast keep the authors'-seed-1 replay (γ 0.8, paper-code) on the slow path to step 1,850?
# The gate for running the grid in bf16: train loss at 1,850 within 0.1 of the fp32 replay's (3.486; its
# rerun 3.446) and seen-pair accuracy still near the slow path's (0.044–0.048), not the fast path's (≥ 0.28).
# One thread, niced, a resume point every 37 steps; rerun the same line to continue.
# usage: bash experiments/seed-odds/bf16-check/run.sh CHECKOUT [RUNS_DIR]   (CHECKOUT: a pinned worktree with .venv)
set -euo pipefail
root=$(cd "$1" && pwd)
out=${2:-$root/runs/bf16-check}
run=$out/g0.8-authors1-bf16
mkdir -p "$out"
if [ -f "$run/resume/state.json" ]; then
  args=(--resume "$run" --stop-at 1850 --quiet)
else
  rm -rf "$run"
  args=(--preset paper-code --replay authors:1 --set init.gamma=0.8 --set train.steps=8880 --set train.device=cpu
        --set train.threads=1 --set train.resume_every=37 --set train.snapshot_steps=370,1110,1850,2960,4440,6660
        --set train.bf16=true --out "$run" --stop-at 1850 --quiet)
fi
OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" train "${args[@]}" >>"$out/g0.8-authors1-bf16.log" 2>&1
"$root/.venv/bin/python" "$root/experiments/paper-pair/drift.py" "$run"
