"""Two checkouts of mechinit side by side: is a refactor slower? (solo training and ensemble training)

Each round runs, in fresh subprocesses and alternating (A B A B ...), so machine load affects both
alike: a whole ``train()`` of ``--preset`` for ``--steps`` steps (data, evaluations, snapshots,
metrics, resume points, card) and a ``train_ensemble`` of ``--k`` members of that shape for the same
steps. Reported: the median wall time of each, and the ratio this checkout / the other (< 1: this
checkout is faster); and the training steps alone — the samples/s the runs record in their metrics
rows, which leave out evaluation (at the small presets, evaluation is most of the wall time, so the
wall-time ratio mostly compares evaluations). Start-up (imports) is outside the timed part.

usage: python bench/checkouts.py --before /path/to/other/checkout [--preset cpu-small-init] [--steps 200] [--k 4] [--rounds 5]
(make the other checkout with ``git worktree add /tmp/before <commit>``)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, tempfile, time, warnings
from pathlib import Path
warnings.filterwarnings("ignore")
from mechinit.presets import preset
from mechinit.training.trainer import train
from mechinit.training.ensemble import train_ensemble
kind, name, steps, k, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sets = {"train.steps": str(steps), "train.threads": str(threads), "train.n_snapshots": "4", "train.device": "cpu"}
with tempfile.TemporaryDirectory() as tmp:
    if kind == "solo":
        cfg = preset(name).with_overrides(sets)
        t = time.perf_counter(); train(cfg, Path(tmp) / "run", quiet=True); dt = time.perf_counter() - t
        folders = [Path(tmp) / "run"]
    else:
        cfgs = [preset(name).with_overrides({**sets, "train.seed": str(s)}) for s in range(k)]
        folders = [Path(tmp) / f"m{s}" for s in range(k)]
        t = time.perf_counter(); train_ensemble(cfgs, folders, quiet=True); dt = time.perf_counter() - t
    rows = [json.loads(line) for line in (folders[0] / "metrics.jsonl").read_text().splitlines() if line.strip()]
    batch = preset(name).train.batch_size  # samples_per_s = steps since the last evaluation x batch / their seconds
    train_s = sum((r["step"] - p["step"]) * batch / r["samples_per_s"] for p, r in zip(rows, rows[1:]) if r.get("samples_per_s"))
print(json.dumps({"seconds": dt, "train_seconds": train_s}))
"""


def timed(checkout: Path, kind: str, args) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": str(args.threads)}
    done = subprocess.run([sys.executable, "-c", CHILD, kind, args.preset, str(args.steps), str(args.k), str(args.threads)],
                          capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    if done.returncode != 0:
        raise SystemExit(f"{checkout} {kind} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, required=True, help="the other checkout (its root folder)")
    p.add_argument("--preset", default="cpu-small-init")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    times = {(side, kind): [] for side in ("this", "before") for kind in ("solo", "ensemble")}
    for r in range(args.rounds):
        for kind in ("solo", "ensemble"):
            for side, root in (("this", HERE), ("before", args.before.resolve())) if r % 2 == 0 else (("before", args.before.resolve()), ("this", HERE)):
                times[(side, kind)].append(timed(root, kind, args))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{args.preset}, {args.steps} steps, {args.threads} thread(s), ensemble K={args.k}, {args.rounds} rounds (median s)")
    print("| | this checkout | before | this / before |\n|---|---:|---:|---:|")
    for kind in ("solo", "ensemble"):
        for key, label in (("seconds", "wall"), ("train_seconds", "training steps only")):
            a = statistics.median(t[key] for t in times[("this", kind)])
            b = statistics.median(t[key] for t in times[("before", kind)])
            print(f"| {kind}, {label} | {a:.2f} | {b:.2f} | {a / b:.3f} |")


if __name__ == "__main__":
    main()
