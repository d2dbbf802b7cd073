#!/usr/bin/env bash
# Run the numeric tests again under the second CPU kernel set: ATEN_CPU_CAPABILITY=avx2 where torch
# picks AVX-512. Float results differ between kernel sets; every tolerance, and every recorded verdict a
# test checks, must hold on both. A CPU without AVX-512 cannot run the AVX-512 set, and its native set is
# AVX2 already, which the whole suite has just run on: a second pass there would repeat the first, so it is
# skipped with a line that says so (torch's scalar "default" set is no machine's kernel set here: the
# authors' initial draw itself differs under it, through torch's vectorised normal_).
set -euo pipefail
cd "$(dirname "$0")/.."
native=$(.venv/bin/python -c "import torch; print(torch.backends.cpu.get_cpu_capability())")
case "$native" in
  AVX512|avx512*) other=avx2 ;;
  *) echo "[kernels] native: $native; this CPU has no AVX-512, and the suite has just run on its AVX2 set:" \
       "no second set to run here (the AVX-512 set is checked where CI or another machine has it)"
     exit 0 ;;
esac
echo "[kernels] native: $native; running the numeric tests again with ATEN_CPU_CAPABILITY=$other"
ATEN_CPU_CAPABILITY=$other .venv/bin/python -m pytest tests/mechinit tests/probes -m "not browser and not slow" "$@"
# the zoo's checks whole, the fp16 weights' accuracies (slow-marked) included
ATEN_CPU_CAPABILITY=$other .venv/bin/python -m pytest tests/zoo -m "not browser" "$@"
