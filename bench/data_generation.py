"""Anchor-task data generation rate (target: >= 1M sequences/s on CPU).

usage: python bench/data_generation.py [--n 1000000] [--threads 2] [--device cpu]
"""

import argparse
import statistics
import time

import torch

from mechinit.config import RunConfig
from mechinit.tasks import make_task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = RunConfig().with_overrides({"task.n_train": args.n})
    task = make_task(cfg)
    times = []
    for seed in range(5):
        t = time.perf_counter()
        tokens, targets = task.train_set(seed)
        times.append(time.perf_counter() - t)
    print(f"{args.n} sequences of {tokens.shape[1]} tokens: median {statistics.median(times):.3f} s "
          f"-> {args.n / statistics.median(times) / 1e6:.2f}M sequences/s ({args.threads} threads)")


if __name__ == "__main__":
    main()
