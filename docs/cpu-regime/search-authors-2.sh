#!/usr/bin/env bash
# Next cells of the width-128 search under the authors' optimiser (issue 11, item 2), planned in
# session 5 and NOT YET RUN: between the two width-128 peaks measured so far — 2e-4 (γ 1.0 never fitted
# its seen pairs in 8,880 steps) and 6e-4 (γ 1.0 fitted by step 2,960 but went symmetric) — try 4e-4,
# at γ 1.0 (the std of the paper's γ 0.8 at width 400) and γ 1.2 (smaller still), to step 8,880, one
# thread, resumable like search-authors.sh. Start it when a core is free (the paper-width runs first).
# usage: bash docs/cpu-regime/search-authors-2.sh     (log: docs/cpu-regime/logs/search-authors-2.log)
set -uo pipefail
echo 19 > /proc/self/autogroup 2>/dev/null || true  # background priority also across autogroups (setsid)
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/docs/cpu-regime/logs"
OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" sweep --quiet --preset paper-code \
  --set model.d_model=128 --set model.d_head=64 --set model.d_mlp=384 \
  --set train.device=cpu --set train.threads=1 --set train.steps=8880 --set train.resume_every=37 \
  --set train.snapshot_steps=1110,2220,3330,4440 \
  --set sweep.init.gamma=1.0,1.2 --set sweep.train.lr=4e-4 \
  --ensemble off --jobs 1 --out "$root/docs/cpu-regime/search-authors-2" >>"$root/docs/cpu-regime/logs/search-authors-2.log" 2>&1
