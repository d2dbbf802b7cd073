"""Wall time of every probe on a CPU-scale model (target: all probes <= 30 s on 2 cores).

usage: python bench/probe_cost.py [TARGET] [--threads 2]
TARGET is a run folder, checkpoint or zoo id (default: the zoo's cpu-small-init entry).
"""

import argparse
import time

import torch

from mechinit import probes, zoo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target", nargs="?", default="cpu-small-init")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    target = zoo.target(args.target)
    m = target.cfg.model
    print(f"{target.name}: L{m.n_layers} d_model {m.d_model}, {len(target.snapshots)} snapshots, {args.threads} threads")
    total = 0.0
    for name in probes.available():
        t = time.perf_counter()
        result = probes.run(name, target.model, target.task, snapshots=target.snapshots)
        result.figure()
        dt = time.perf_counter() - t
        total += dt
        print(f"{name:>20}: {dt:6.2f} s (with figure)")
    print(f"{'all probes':>20}: {total:6.2f} s")


if __name__ == "__main__":
    main()
