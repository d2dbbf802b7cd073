#!/usr/bin/env bash
# Regime search around the authors' optimiser (issue 11, item 2), at width 128: the `paper-code`
# preset (batch 2048, warm-up 3,700 steps from lr/20, cosine over 74,000 steps, 759,375 sequences)
# with d_model 128 / d_head 64 / d_mlp 384, stopped at step 8,880 (18M samples) like the paper-width
# run. A `mechinit sweep`, one thread, resumable across sessions (each run keeps a resume point
# every 37 steps; rerun this script to continue). Results: experiments/cpu-regime/README.md.
# usage: bash experiments/cpu-regime/search-authors.sh [NAME GAMMAS PEAK_LR SNAPSHOT_STEPS]
#   defaults: search-authors 1.0,0.6 2e-4 1110,2220,4440 (the first cells, finished in session 4);
#   the next cells, planned in session 5 and not yet run (between the peaks measured so far: 2e-4 never
#   fitted γ 1.0 in 8,880 steps, 6e-4 fitted it by step 2,960 but went symmetric):
#   bash experiments/cpu-regime/search-authors.sh search-authors-2 1.0,1.2 4e-4 1110,2220,3330,4440
#   (folder experiments/cpu-regime/NAME, log experiments/cpu-regime/logs/NAME.log)
set -uo pipefail
echo 19 > /proc/self/autogroup 2>/dev/null || true  # background priority also across autogroups (setsid)
root=$(cd "$(dirname "$0")/../.." && pwd)
name=${1:-search-authors} gammas=${2:-1.0,0.6} lr=${3:-2e-4} snapshots=${4:-1110,2220,4440}
mkdir -p "$root/experiments/cpu-regime/logs"
OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/mechinit" sweep --quiet --preset paper-code \
  --set model.d_model=128 --set model.d_head=64 --set model.d_mlp=384 \
  --set train.device=cpu --set train.threads=1 --set train.steps=8880 --set train.resume_every=37 \
  --set train.snapshot_steps="$snapshots" \
  --set sweep.init.gamma="$gammas" --set sweep.train.lr="$lr" \
  --ensemble off --jobs 1 --out "$root/experiments/cpu-regime/$name" >>"$root/experiments/cpu-regime/logs/$name.log" 2>&1
