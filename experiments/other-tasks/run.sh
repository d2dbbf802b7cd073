#!/usr/bin/env bash
# The CPU-scale science checks of docs/other-tasks.md (C9, C10), as two queues for 2 cores.
# usage: bash experiments/other-tasks/run.sh [DATA_ROOT]   (DATA_ROOT holds scan/; default ../shared/data)
# Resumable: each sweep skips finished runs. Logs in experiments/other-tasks/logs/.
set -u
cd "$(dirname "$0")/../.."
data=${1:-../shared/data}
logs=experiments/other-tasks/logs
mkdir -p "$logs"
(
  # C9: ΔL = L_memory - L_reasoning against γ, transformer and Emb-MLP, 3 seeds
  mechinit sweep --preset reasoning-memory --set sweep.train.seed=0,1,2 --set sweep.init.gamma=0.3,0.5,0.8,1.0 \
    --out sweeps/c9-transformer --jobs 1 --quiet > "$logs/c9-transformer.log" 2>&1
  mechinit sweep --preset emb-mlp --set sweep.train.seed=0,1,2 --set sweep.init.gamma=0.3,0.5,0.8,1.0 \
    --out sweeps/c9-emb-mlp --jobs 1 --quiet > "$logs/c9-emb-mlp.log" 2>&1
  # C10 on addition: (γ, wd) in {0.5, 0.7} x {0.01, 0.1}, 3 seeds (paper Fig 7 pairs: 0.5/0.01 vs 0.7/0.1)
  mechinit sweep --preset addition --set sweep.train.seed=0,1,2 --set sweep.init.gamma=0.5,0.7 --set sweep.train.weight_decay=0.01,0.1 \
    --out sweeps/c10-addition --jobs 1 --quiet > "$logs/c10-addition.log" 2>&1
) &
(
  # C10 on SCAN add-prim "turn left", a d_model-64 GPT-2-style model, evaluated every 5 epochs
  mechinit sweep --preset scan --set task.data_dir="$data/scan" --set model.d_model=64 --set model.d_head=16 --set model.d_mlp=256 \
    --set train.eval_every=855 --set sweep.train.seed=0,1,2 --set sweep.init.gamma=0.5,0.7 --set sweep.train.weight_decay=0.01,0.1 \
    --out sweeps/c10-scan --jobs 1 --quiet > "$logs/c10-scan.log" 2>&1
) &
wait
# Then, with both cores: PrOntoQA in the same (γ, wd) cells, and the C9 variant with 12 memory anchors
# (960 memorised (anchor, key) labels instead of 320).
mechinit sweep --preset prontoqa --set sweep.train.seed=0,1,2 --set sweep.init.gamma=0.5,0.7 \
  --set sweep.train.weight_decay=0.01,0.1 --out sweeps/c10-prontoqa --jobs 2 --quiet > "$logs/c10-prontoqa.log" 2>&1
mechinit sweep --preset reasoning-memory --set task.memory_anchors=12 --set sweep.train.seed=0,1,2 \
  --set sweep.init.gamma=0.3,0.5,0.8,1.0 --out sweeps/c9-memory12 --jobs 2 --quiet > "$logs/c9-memory12.log" 2>&1
