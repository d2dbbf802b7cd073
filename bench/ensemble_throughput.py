"""Ensemble training (K models stacked in one process) against the same K runs one after another.

Both sides produce the same K normal run folders (metrics, final evaluation, weights, model card):
the ensemble side with :func:`mechinit.training.ensemble.train_ensemble`, the sequential side with
:func:`mechinit.training.trainer.train`, each run ``--steps`` AdamW steps with per-model clipping and no
intermediate snapshots. The members differ in seed, γ, learning rate and weight decay. Reported:
training samples/s summed over the K models, and the ratio ensemble / sequential (> 1: the ensemble
is faster), measured side by side in one process.

usage: python bench/ensemble_throughput.py [--threads 2] [--steps 40] [--ks 1,4,8,16] [--shapes tiny,cpu-small-init]
"""

import argparse
import tempfile
import time
from pathlib import Path

import torch

from mechinit.presets import preset
from mechinit.training.ensemble import train_ensemble
from mechinit.training.trainer import train


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--ks", default="1,4,8,16")
    ap.add_argument("--shapes", default="tiny,cpu-small-init")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {args.threads} threads, device {args.device}")
    for name in args.shapes.split(","):
        base = preset(name).with_overrides({"train.steps": args.steps, "train.threads": args.threads,
                                            "train.n_snapshots": 0, "train.device": args.device})
        bs = base.train.batch_size
        print(f"{name}: d_model {base.model.d_model}, L{base.model.n_layers}, batch {bs}, {args.steps} steps")
        for k in (int(x) for x in args.ks.split(",")):
            cfgs = [base.with_overrides({"train.seed": i, "init.gamma": 0.5 + 0.05 * i, "train.lr": 1e-3 * (1 + i % 3),
                                         "train.weight_decay": 0.01 * (1 + i % 2)}) for i in range(k)]
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                timed(lambda: train_ensemble(cfgs[:1], [root / "warm"]))  # warm-up (allocator, kernels)
                t_ens = timed(lambda: train_ensemble(cfgs, [root / f"e{i}" for i in range(k)]))
                t_seq = timed(lambda: [train(c, root / f"s{i}", quiet=True) for i, c in enumerate(cfgs)])
            rate = lambda sec: k * args.steps * bs / sec  # noqa: E731
            print(f"  K={k:2d}: ensemble {rate(t_ens):8.0f} samples/s, sequential {rate(t_seq):8.0f} samples/s -> {t_seq / t_ens:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
