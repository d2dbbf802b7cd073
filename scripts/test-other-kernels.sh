#!/usr/bin/env bash
# Run the numeric tests again under a second CPU kernel set: ATEN_CPU_CAPABILITY=avx2 where torch
# picks AVX-512, =default where it picks AVX2 (or less). Float results differ between kernel sets;
# every tolerance, and every recorded verdict a test checks, must hold on both.
set -euo pipefail
cd "$(dirname "$0")/.."
native=$(.venv/bin/python -c "import torch; print(torch.backends.cpu.get_cpu_capability())")
case "$native" in
  AVX512|avx512*) other=avx2 ;;
  *) other=default ;;
esac
echo "[kernels] native: $native; running the numeric tests again with ATEN_CPU_CAPABILITY=$other"
ATEN_CPU_CAPABILITY=$other .venv/bin/python -m pytest tests/mechinit tests/probes -m "not browser and not slow" "$@"
# the zoo's checks whole, the fp16 weights' accuracies (slow-marked) included
ATEN_CPU_CAPABILITY=$other .venv/bin/python -m pytest tests/zoo -m "not browser" "$@"
