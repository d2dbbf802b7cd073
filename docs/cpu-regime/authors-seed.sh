#!/usr/bin/env bash
# The authors' γ 0.8 run replayed with their seed (docs/cpu-regime/authors_seed.py): niced, in the background;
# resumable (rerun the same line; a run with a resume point continues from it); stop with
# pkill -TERM -f "authors_seed.py train". Arguments go to the script: `--threads 2` when a new run has both cores
# to itself; `--init mechinit` or `--data mechinit` (with e.g. `--steps 1850`) swaps one half of their seed for
# mechinit's seed 0 (folder g0.8-{our,their}-init-{our,their}-data). Log: docs/cpu-regime/logs/authors-seed.log.
set -uo pipefail
echo 19 > /proc/self/autogroup 2>/dev/null || true
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/docs/cpu-regime/logs"
OMP_NUM_THREADS=1 nice -n 19 "$root/.venv/bin/python" "$root/docs/cpu-regime/authors_seed.py" train "$@" \
  >>"$root/docs/cpu-regime/logs/authors-seed.log" 2>&1
