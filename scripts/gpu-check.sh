#!/usr/bin/env bash
# The GPU checks of issue 11, in one call on a lent CUDA machine (target: under 9 minutes on an H200):
#   1. `paper-code` (the authors' code) at γ 0.8 and γ 0.5, fp32 and bf16, and γ 0.8 with TF32 matmuls
#      (PyTorch's default on Ampere GPUs before 1.12: does the authors' slower γ 0.8 path come from it?),
#      to step 8,880 of the authors' schedule — five runs at once on the one GPU — and their (4,3)
#      verdicts beside the authors' logs (docs/research.md);
#   2. the ensemble benchmark at the paper shape, K = 16 (bench/ensemble_throughput.py);
#   3. one table of both (scripts/gpu_check_table.py), also written to $OUT/gpu-check.md.
# usage: bash scripts/gpu-check.sh                  (on the GPU machine, from the repository root)
#        GPU_CHECK_TINY=1 bash scripts/gpu-check.sh (anywhere: a seconds-long CPU rehearsal, tiny shapes)
# Python: the environment's own `python3` with mechinit importable (PYTHONPATH=.); on the lent machine
# its dependencies come from wheels carried in .whl/ (scripts/gpu-wheels.sh fetches them here).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"  # the table is written there; a missing folder must not fail the run at its last line
work=$(mktemp -d)
if [ -n "${GPU_CHECK_TINY:-}" ]; then
  shape=(--set model.d_model=32 --set model.d_head=16 --set model.d_mlp=64 --set task.n_train=8192 --set task.n_eval=64
         --set task.n_eval_train=32 --set train.batch_size=256 --set train.eval_every=8 --set train.device=cpu --set train.threads=1)
  steps=24; bench=(--shapes tiny --ks 2 --steps 5 --device cpu --threads 1); variants=(0.8:bf16 0.5:bf16)  # no TF32 on a CPU
else
  if [ -d .whl ] && ! "$PY" -c "import transformer_lens" 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps .whl/*.whl
  fi
  shape=(--set train.device=cuda); steps=8880; bench=(--shapes paper-code --ks 16 --steps 50 --device cuda --threads 1)
  variants=(0.8:bf16 0.5:bf16 0.8:tf32)
fi
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
pids=()
for variant in "${variants[@]}"; do  # γ:bf16 -> fp32 and bf16 runs; γ:tf32 -> a TF32 run
  g=${variant%%:*}; kind=${variant#*:}
  if [ "$kind" = tf32 ]; then precisions=("tf32 --set train.tf32=true"); else precisions=("bf16-false --set train.bf16=false" "bf16-true --set train.bf16=true"); fi
  for p in "${precisions[@]}"; do
    name=g$g-${p%% *}; read -r -a sets <<<"${p#* }"
    "$PY" -m mechinit train --quiet --preset paper-code --set init.gamma=$g "${sets[@]}" --set train.steps=$steps \
      --set train.n_snapshots=0 "${shape[@]}" --out "$work/$name" >"$work/$name.log" 2>&1 &
    pids+=($!)
  done
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ $status -eq 0 ] || { tail -n 5 "$work"/*.log; exit 1; }
"$PY" bench/ensemble_throughput.py "${bench[@]}" | tee "$work/ensemble.txt"
"$PY" scripts/gpu_check_table.py "$work" | tee "$OUT/gpu-check.md"
