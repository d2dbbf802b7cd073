#!/usr/bin/env bash
# Launch one regime-search run in the background, single-threaded, logging to experiments/cpu-regime/logs.
# usage: experiments/cpu-regime/launch.sh NAME --preset cpu-small-init --set init.gamma=0.8 ...
set -euo pipefail
name=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/experiments/cpu-regime/logs" "$root/runs/regime"
OMP_NUM_THREADS=1 nohup "$root/.venv/bin/mechinit" train --quiet --set train.threads=1 --out "$root/runs/regime/$name" "$@" \
  >"$root/experiments/cpu-regime/logs/$name.log" 2>&1 &
echo "$name started (pid $!)"
