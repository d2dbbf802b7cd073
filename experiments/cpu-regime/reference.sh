#!/usr/bin/env bash
# Train the reference models shipped in the zoo: presets small-init and large-init, seeds 0-2,
# two at a time, one thread each. Then publish them (see docs/zoo.md, "Shipped entries").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
for seed in 0 1 2; do
  for p in small-init large-init; do
    out=runs/ref/$p-s$seed
    [ -f "$out/model.safetensors" ] && continue
    rm -rf "$out"
    OMP_NUM_THREADS=1 .venv/bin/mechinit train --preset $p --set train.seed=$seed --out "$out" --quiet > "$out.log" 2>&1 &
  done
  wait
done
