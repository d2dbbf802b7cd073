"""The share of a whole ``mechinit train`` run's wall time spent in evaluation (target: <= 10%).

Trains a preset into a temporary folder, timing every evaluation (the trainer's own
``SoloStepper.evaluate``, wrapped) against the whole ``train()`` call, which includes building the
data, the model, snapshots, resume points and the card. Run it with no other run on the machine.

usage: python bench/eval_share.py [--preset cpu-small-init] [--threads 2] [--set KEY=VALUE ...]
"""

import argparse
import tempfile
import time
from pathlib import Path

from mechinit.resolve import resolve_config
from mechinit.training import trainer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="cpu-small-init")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--set", dest="sets", action="append", default=[])
    args = ap.parse_args()
    cfg = resolve_config(args.preset, None, [*args.sets, f"train.threads={args.threads}"])
    spent: list[float] = []
    evaluate = trainer.SoloStepper.evaluate

    def timed(self, *a, **k):
        t = time.perf_counter()
        try:
            return evaluate(self, *a, **k)
        finally:
            spent.append(time.perf_counter() - t)

    trainer.SoloStepper.evaluate = timed
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        row = trainer.train(cfg, Path(tmp) / "run", quiet=True)
        wall = time.perf_counter() - t
    print(f"{args.preset}, {args.threads} threads: {len(spent)} evaluations, {sum(spent):.1f} s of {wall:.1f} s "
          f"= {100 * sum(spent) / wall:.1f}% (first {spent[0]:.2f} s, median {sorted(spent)[len(spent) // 2]:.2f} s); "
          f"final headline {row['headline']:.3f}")


if __name__ == "__main__":
    main()
