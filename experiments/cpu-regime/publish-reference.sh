#!/usr/bin/env bash
# Publish the reference runs (experiments/cpu-regime/reference.sh) into the zoo shipped with the package.
# Seed 0 keeps its step snapshots in float16 (for the eigenvalue evolution); seeds 1-2 ship final
# weights only, which keeps the shipped zoo under 50 MB.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
for p in small-init large-init; do
  .venv/bin/mechinit zoo publish runs/ref/$p-s0 --zoo zoo/entries --alias $p --alias $p-s0 --snapshot-dtype float16
  for s in 1 2; do
    .venv/bin/mechinit zoo publish runs/ref/$p-s$s --zoo zoo/entries --alias $p-s$s --no-snapshots
  done
done
rm -f zoo/entries/.lock
du -sh zoo/entries
