"""Where a rerun drifts from the committed replay: every evaluation step both hold, with train loss,
seen-pair accuracy and the (4,3) accuracies (test-split keys) side by side.

usage: python experiments/paper-pair/drift.py RERUN [COMMITTED]
       python experiments/paper-pair/drift.py --side-by-side [--from STEP] RUN RUN [RUN ...]
  RERUN      a run folder (or its metrics.jsonl), e.g. ../frozen/runs/paper-pair/g0.8
  COMMITTED  default: experiments/cpu-regime/paper-width/g0.8-authors-seed (the docs script's replay)
Prints a markdown table and the first step at which each quantity moved. --side-by-side prints one row per
evaluation step that every RUN holds (from STEP on), each cell the runs' values in the order given, "a / b / c".
"""

from __future__ import annotations

import sys
from pathlib import Path

from mechinit.files import read_metrics

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "experiments/cpu-regime/paper-width/g0.8-authors-seed"


def quantities(row: dict) -> dict[str, float | None]:
    pair = row.get("pairs", {}).get("4,3", {})
    return {"train loss": row.get("train_loss"), "seen-pair acc": row.get("seen_test_acc"),
            "(4,3) inferential": pair.get("inferential"), "(4,3) symmetric": pair.get("symmetric")}


def side_by_side(argv: list[str]) -> int:
    start = 0
    if argv[:1] == ["--from"]:
        start, argv = int(argv[1]), argv[2:]
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[3], file=sys.stderr)
        return 2
    tables = [{r["step"]: quantities(r) for r in read_metrics(folder(Path(a)))} for a in argv]
    steps = sorted(set.intersection(*(set(t) for t in tables)))
    names = list(quantities({}))
    print("| step | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for step in (s for s in steps if s >= start):
        cells = [" / ".join("—" if t[step][n] is None else f"{t[step][n]:.3f}" for t in tables) for n in names]
        print(f"| {step:,} | " + " | ".join(cells) + " |")
    return 0


def folder(p: Path) -> Path:
    return p.parent if p.name == "metrics.jsonl" else p


def main(argv: list[str]) -> int:
    if argv[:1] == ["--side-by-side"]:
        return side_by_side(argv[1:])
    if not argv or len(argv) > 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    rerun, committed = (Path(a) for a in (argv + [str(DEFAULT)])[:2])
    folders = [folder(p) for p in (rerun, committed)]
    mine, theirs = ({r["step"]: r for r in read_metrics(f)} for f in folders)
    steps = sorted(set(mine) & set(theirs))
    names = list(quantities({}))
    print("| step | " + " | ".join(f"{n} (committed / rerun)" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    first: dict[str, int] = {}
    for step in steps:
        a, b = quantities(theirs[step]), quantities(mine[step])
        cells = []
        for n in names:
            if a[n] is None or b[n] is None:
                cells.append(f"{a[n]} / {b[n]}")
                continue
            digits = 10 if n == "train loss" else 4
            cells.append(f"{a[n]:.{digits}g} / {b[n]:.{digits}g}")
            tolerance = 1e-6 if n == "train loss" else 0.005
            if abs(a[n] - b[n]) > tolerance * (abs(a[n]) if n == "train loss" else 1):
                first.setdefault(n, step)
        print(f"| {step} | " + " | ".join(cells) + " |")
    print()
    for n in names:
        moved = first.get(n)
        print(f"{n}: " + (f"first moved at step {moved}" if moved is not None else
                          f"equal at every shared step (to {'1e-6 relative' if n == 'train loss' else '0.005'})")
              + f" ({len(steps)} shared steps, last {steps[-1] if steps else None})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
