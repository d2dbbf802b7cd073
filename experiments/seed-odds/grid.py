"""The seed-odds grid at paper width: γ 0.8, lr 2e-4, the `paper-code` recipe, each run to step 1,850 with a
resume point there, then its fate read-out appended to predictions.jsonl (before any run is continued).

usage: python experiments/seed-odds/grid.py RUNS_DIR [--record DIR] [--jobs N] [--only NAME ...] [--list] [--bf16]
       python experiments/seed-odds/grid.py RUNS_DIR --continue NAME [NAME ...] [--record DIR] [--jobs N]

Run it from a pinned checkout (git worktree add ../frozen-odds COMMIT, with its own .venv): every run and
every prediction records that commit. Rerun the same line to continue: a run past 1,850 is skipped, a run
with an earlier resume point resumes, a prediction already recorded is not recorded again. --record is the
checkout whose experiments/seed-odds/ receives predictions.jsonl and each run's config.json and
metrics.jsonl (default: this one).

--continue trains the named runs on from their resume point at 1,850 to the run's end (step 8,880), but
only a run whose prediction is in the committed predictions.jsonl of the --record checkout (HEAD): the
prediction is on record before the run goes past 1,850. A finished run's config and metrics are copied as
before and its outcome is appended to outcomes.jsonl (final and max-over-training (4,3) accuracies).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
STOP = 1850
COMMON = ["--preset", "paper-code", "--set", "init.gamma=0.8", "--set", "train.lr=2e-4", "--set", "train.steps=8880",
          "--set", "train.device=cpu", "--set", "train.threads=1", "--set", "train.resume_every=37",
          "--set", "train.snapshot_steps=370,1110,1850,2960,4440,6660"]
GRID = {  # name -> extra arguments, in the order they run
    **{f"a-authors1init-data{k}": ["--replay", "authors:1:init", "--set", f"train.data_seed={k}"] for k in (1, 2, 3)},
    **{f"b-init{k}-data0": ["--set", f"train.init_seed={k}", "--set", "train.data_seed=0"] for k in range(3, 9)},
    **{f"c-authors{k}": ["--replay", f"authors:{k}"] for k in (2, 3)},
    # (d)'s swap: the authors' seed-1 initial weights with our data seed 0, as experiments/cpu-regime/paper-width/
    # g0.8-their-init-our-data was drawn (stopped at 1,850 there); it must retrace those metrics to 1,850
    "d-swap-authors1init-data0": ["--replay", "authors:1:init", "--set", "train.data_seed=0"],
    # (e), as cores allow: γ 1.0 and γ 0.5 on init seeds 3-6 with data seed 0
    **{f"e-g{g}-init{k}-data0": ["--set", f"init.gamma={g}", "--set", f"train.init_seed={k}", "--set", "train.data_seed=0"]
       for g in ("1.0", "0.5") for k in range(3, 7)},
}


def commit() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def step_of(run: Path) -> int | None:
    state = run / "resume" / "state.json"
    return json.loads(state.read_text())["step"] if state.is_file() else None


@contextmanager
def only_grid(runs: Path) -> Iterator[None]:
    """Hold ``RUNS/grid.lock`` while this grid trains runs to 1,850. A second such grid on the same folder stops
    with one line: it would otherwise clear and restart a run of the first whose first resume point is not yet
    written. (--continue needs no such lock: it never clears a folder.)"""
    runs.mkdir(parents=True, exist_ok=True)
    with open(runs / "grid.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(f"{runs}: another grid is running on this folder; wait for it or stop it") from None
        yield


def mechinit_train(args: list[str], log: Path) -> None:
    """``mechinit train ARGS``, one thread, niced, its output appended to ``log``."""
    with open(log, "a") as out:
        subprocess.run(["nice", "-n", "19", sys.executable, "-m", "mechinit", "train", *args, "--quiet"], stdout=out,
                       stderr=subprocess.STDOUT, env={**os.environ, "OMP_NUM_THREADS": "1"}, check=True)


def train_to_stop(name: str, runs: Path, bf16: bool = False) -> Path:
    run = runs / name
    at = step_of(run)
    if at is not None and at >= STOP:
        return run
    if at is None:
        shutil.rmtree(run, ignore_errors=True)
        precision = ["--set", "train.bf16=true"] if bf16 else []
        args = [*COMMON, *GRID[name], *precision, "--out", str(run), "--stop-at", str(STOP)]
    else:
        args = ["--resume", str(run), "--stop-at", str(STOP)]
    mechinit_train(args, runs / f"{name}.log")
    return run


def committed_predictions(record_dir: Path) -> set[str]:
    """The runs whose prediction is in predictions.jsonl as committed at HEAD of the record checkout."""
    shown = subprocess.run(["git", "-C", str(record_dir), "show", "HEAD:./predictions.jsonl"], capture_output=True, text=True)
    if shown.returncode != 0:
        return set()
    return {json.loads(line)["run"] for line in shown.stdout.splitlines() if line.strip()}


def continue_to_end(name: str, runs: Path, record_dir: Path) -> None:
    """Train ``name`` on from its resume point to the run's end; copy its records and append its outcome."""
    run = runs / name
    if not (run / "model.safetensors").is_file():
        at = step_of(run)
        if at is None or at < STOP:
            raise SystemExit(f"{name}: no resume point at or past step {STOP} in {run}; run the grid to {STOP} first")
        if name not in committed_predictions(record_dir):
            raise SystemExit(f"{name}: its prediction at {STOP} is not committed in {record_dir}/predictions.jsonl; "
                             "commit it before the run goes on")
        mechinit_train(["--resume", str(run)], runs / f"{name}.log")
    record_outcome(name, run, record_dir)


def append_once(path: Path, name: str, run: Path, make_row) -> dict | None:
    """Append ``make_row()`` to the jsonl ``path`` unless it already holds a row for ``name``, after copying
    the run's config.json and metrics.jsonl into ``path.parent/name``; returns the row (None: already there)."""
    done = {json.loads(line)["run"] for line in path.read_text().splitlines() if line.strip()} if path.is_file() else set()
    if name in done:
        return None
    folder = path.parent / name
    folder.mkdir(parents=True, exist_ok=True)
    for file in ("config.json", "metrics.jsonl"):
        shutil.copy2(run / file, folder / file)
    row = {"run": name, **make_row()}
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
    return row


def record_outcome(name: str, run: Path, record_dir: Path) -> None:
    from mechinit.files import read_metrics

    def outcome() -> dict:
        rows = [r for r in read_metrics(run) if "4,3" in r.get("pairs", {})]
        last = rows[-1]["pairs"]["4,3"]
        return {"commit": commit(), "step": rows[-1]["step"], "label": last.get("label"),
                "inferential": last.get("inferential"), "symmetric": last.get("symmetric"),
                "max_inferential": max(r["pairs"]["4,3"]["inferential"] for r in rows),
                "max_symmetric": max(r["pairs"]["4,3"]["symmetric"] for r in rows)}

    row = append_once(record_dir / "outcomes.jsonl", name, run, outcome)
    if row is not None:
        print(f"{name}: ended (4,3) {row['label']} (inferential {row['inferential']:.3f}, symmetric {row['symmetric']:.3f})", flush=True)


def record(name: str, run: Path, record_dir: Path) -> None:
    from mechinit.readout import fate

    def prediction() -> dict:
        called = fate(run, at=STOP)
        return {"rule_commit": commit(), "rule": called.rule, "first_line": called.first_line(), **called.to_dict()}

    row = append_once(record_dir / "predictions.jsonl", name, run, prediction)
    if row is not None:
        print(f"{name}: {row['first_line']}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("--record", type=Path, default=HERE)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--bf16", action="store_true",
                    help="start new runs under bf16 autocast (a run keeps the precision it started with)")
    ap.add_argument("--continue", dest="cont", nargs="+", default=None, metavar="NAME",
                    help="train these runs on from 1,850 to the end (their prediction must be committed)")
    args = ap.parse_args()
    if args.cont is not None:
        unknown = [n for n in args.cont if n not in GRID]
        if unknown:
            raise SystemExit(f"--continue: unknown run {unknown[0]!r}; the grid's runs: {', '.join(GRID)}")
        with ThreadPoolExecutor(args.jobs) as pool:  # mechinit's own lock keeps one trainer per run folder
            list(pool.map(lambda n: continue_to_end(n, args.runs, args.record), args.cont))
        return 0
    names = [n for n in GRID if args.only is None or n in args.only]
    if args.list:
        print("\n".join(f"{n}: mechinit train {' '.join(COMMON + GRID[n])} --stop-at {STOP}" for n in names))
        return 0

    def one(name: str) -> None:
        run = train_to_stop(name, args.runs, args.bf16)
        record(name, run, args.record)

    with only_grid(args.runs), ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(one, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
