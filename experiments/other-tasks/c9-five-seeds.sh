#!/usr/bin/env bash
# C9 at its closest reading: the reasoning-memory task with 12 memory anchors, gamma 0.3-1.0, seeds 0-4, on both CPU
# kernel sets (native, then ATEN_CPU_CAPABILITY=avx2). Resumable (a sweep skips finished runs). Results are copied to
# experiments/other-tasks/results/c9-memory12-5seeds-{avx512,avx2}.json, which `mechinit paper` reads.
# usage: bash experiments/other-tasks/c9-five-seeds.sh [SWEEPS_DIR]   (default sweeps/)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-sweeps}
for kernels in native avx2; do
  name=avx512; env=()
  if [ "$kernels" = avx2 ]; then name=avx2; env=(ATEN_CPU_CAPABILITY=avx2); fi
  env "${env[@]}" mechinit sweep --preset reasoning-memory --set task.memory_anchors=12 --set sweep.train.seed=0,1,2,3,4 \
    --set sweep.init.gamma=0.3,0.5,0.8,1.0 --out "$out/c9-memory12-5seeds-$kernels" --jobs 1 --ensemble off --quiet
  cp "$out/c9-memory12-5seeds-$kernels/sweep.json" "experiments/other-tasks/results/c9-memory12-5seeds-$name.json"
done
