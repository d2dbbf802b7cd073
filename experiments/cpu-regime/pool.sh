#!/usr/bin/env bash
# A tiny job pool for the regime search: keeps $JOBS (default 2) single-threaded runs going,
# taking lines (NAME mechinit-train-arguments...) from experiments/cpu-regime/pending.txt as slots free.
# Append lines to pending.txt at any time; the pool exits when the file is empty and nothing runs.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pending="$root/experiments/cpu-regime/pending.txt"
mkdir -p "$root/experiments/cpu-regime/logs" "$root/runs/regime"
while :; do
  running=$(pgrep -f "bin/mechinit train --quiet" | wc -l)
  if [ "$running" -lt "${JOBS:-2}" ] && [ -s "$pending" ]; then
    line=$(head -n 1 "$pending"); sed -i '1d' "$pending"
    set -- $line; name=$1; shift
    if [ ! -f "$root/runs/regime/$name/model.safetensors" ] && ! pgrep -f "runs/regime/$name " >/dev/null; then
      rm -rf "$root/runs/regime/$name"
      OMP_NUM_THREADS=1 nohup "$root/.venv/bin/mechinit" train --quiet --set train.threads=1 --out "$root/runs/regime/$name" "$@" \
        >"$root/experiments/cpu-regime/logs/$name.log" 2>&1 &
      sleep 2
    fi
    continue
  fi
  [ "$running" -eq 0 ] && [ ! -s "$pending" ] && exit 0
  sleep 5
done
