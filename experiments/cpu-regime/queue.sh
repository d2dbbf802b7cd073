#!/usr/bin/env bash
# Run a batch of regime-search runs, at most $JOBS (default 2) at once, each single-threaded.
# usage: experiments/cpu-regime/queue.sh BATCH_FILE   (one run a line: NAME mechinit-train-arguments...)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/experiments/cpu-regime/logs" "$root/runs/regime"
run_one() {
  name=$1; shift
  [ -f "$root/runs/regime/$name/model.safetensors" ] && exit 0
  OMP_NUM_THREADS=1 "$root/.venv/bin/mechinit" train --quiet --set train.threads=1 --out "$root/runs/regime/$name" "$@" \
    >"$root/experiments/cpu-regime/logs/$name.log" 2>&1
}
export -f run_one; export root
grep -v '^\s*#' "$1" | grep -v '^\s*$' | xargs -P "${JOBS:-2}" -L 1 bash -c 'run_one "$@"' _
