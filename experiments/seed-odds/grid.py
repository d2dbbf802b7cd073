"""The seed-odds grid at paper width: γ 0.8, lr 2e-4, the `paper-code` recipe, each run to step 1,850 with a
resume point there, then its fate read-out appended to predictions.jsonl (before any run is continued).

usage: python experiments/seed-odds/grid.py RUNS_DIR [--record DIR] [--jobs N] [--only NAME ...] [--list] [--bf16] [--device cuda]
       python experiments/seed-odds/grid.py RUNS_DIR --continue NAME [NAME ...] [--record DIR] [--jobs N]
       python experiments/seed-odds/grid.py RUNS_DIR --retrace NAME [NAME ...] [--record DIR] [--jobs N]

Run it from a pinned checkout (git worktree add ../frozen-odds COMMIT, with its own .venv): every run and
every prediction records that commit. Rerun the same line to continue: a run past 1,850 is skipped, a run
with an earlier resume point resumes, a run whose prediction is already recorded is not trained again. --record is the
checkout whose experiments/seed-odds/ receives predictions.jsonl and each run's config.json and
metrics.jsonl (default: this one).

--continue trains the named runs on from their resume point at 1,850 to the run's end (step 8,880), but
only a run whose prediction is in the committed predictions.jsonl of the --record checkout (HEAD): the
prediction is on record before the run goes past 1,850. A finished run's config and metrics are copied as
before and its outcome is appended to outcomes.jsonl (final and max-over-training (4,3) accuracies).

--retrace is for a run whose prediction is on record but whose resume point is gone (a new machine): it trains
the run again from step 0 to 1,850 and appends to retraces.jsonl how the new run compares with the recorded
one at 1,850 (loss, seen-pair and (4,3) accuracies, whether every evaluation to 1,850 is identical) and the
rule's call on the new run; its config and metrics go to <run>/retrace/. A retraced run that is not identical
to the recorded one goes on with --continue only once its retraces.jsonl row is committed, and its outcome is
recorded under <run>/retrace/ too, so that the recorded run's 1,850 numbers stay what the counts were made of.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
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


def command(name: str, device: str = "cpu", bf16: bool = False) -> list[str]:
    """The ``mechinit train`` arguments that start ``name`` (the full run's config; --stop-at is the caller's)."""
    settings = [f"train.device={device}" if a == "train.device=cpu" else a for a in COMMON]
    return [*settings, *GRID[name], *(["--set", "train.bf16=true"] if bf16 else [])]


def train_to_stop(name: str, runs: Path, bf16: bool = False, device: str = "cpu") -> Path:
    run = runs / name
    at = step_of(run)
    if at is not None and at >= STOP:
        return run
    if at is None:
        shutil.rmtree(run, ignore_errors=True)
        args = [*command(name, device, bf16), "--out", str(run), "--stop-at", str(STOP)]
    else:
        args = ["--resume", str(run), "--stop-at", str(STOP)]
    mechinit_train(args, runs / f"{name}.log")
    return run


def to_stop(name: str, runs: Path, record_dir: Path, bf16: bool = False, device: str = "cpu") -> None:
    """The grid's own step: train ``name`` to 1,850 and record its prediction, unless that is on record already."""
    if name in recorded(record_dir):
        print(f"{name}: prediction at {STOP} on record; not trained again (--continue goes on from its resume "
              "point, --retrace trains it again from step 0 if that point is gone)", flush=True)
        return
    record(name, train_to_stop(name, runs, bf16, device), record_dir)


def by_run(text: str) -> dict[str, dict]:
    """The rows of a jsonl text (one row per run), by run."""
    return {row["run"]: row for row in map(json.loads, filter(str.strip, text.splitlines()))}


def committed(record_dir: Path, jsonl: str = "predictions.jsonl") -> set[str]:
    """The runs that have a row in ``jsonl`` as committed at HEAD of the record checkout."""
    shown = subprocess.run(["git", "-C", str(record_dir), "show", f"HEAD:./{jsonl}"], capture_output=True, text=True)
    return set(by_run(shown.stdout)) if shown.returncode == 0 else set()


def recorded(record_dir: Path, jsonl: str = "predictions.jsonl") -> dict[str, dict]:
    """The rows of ``record_dir/jsonl`` (committed or not), by run."""
    path = record_dir / jsonl
    return by_run(path.read_text()) if path.is_file() else {}


TIMING = ("elapsed_s", "samples_per_s")  # the only fields of an evaluation row that a bit-identical rerun may change


def evaluations_to(rows: list[dict], step: int) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows if r["step"] <= step]


def is_recorded_run(name: str, run: Path, record_dir: Path) -> bool:
    """Whether the run folder's evaluations to 1,850 are exactly those recorded for ``name`` (so it is the run the
    prediction was made on, or a bit-identical retrace of it)."""
    from mechinit.files import read_metrics

    kept = record_dir / name / "metrics.jsonl"
    return kept.is_file() and evaluations_to(read_metrics(run), STOP) == evaluations_to(read_metrics(kept.parent), STOP)


def continue_to_end(name: str, runs: Path, record_dir: Path) -> None:
    """Train ``name`` on from its resume point to the run's end; copy its records and append its outcome."""
    run = runs / name
    if not (run / "model.safetensors").is_file():
        at = step_of(run)
        if at is None or at < STOP:
            raise SystemExit(f"{name}: no resume point at or past step {STOP} in {run}; run the grid to {STOP} first")
        if name not in committed(record_dir):
            raise SystemExit(f"{name}: its prediction at {STOP} is not committed in {record_dir}/predictions.jsonl; "
                             "commit it before the run goes on")
        if not is_recorded_run(name, run, record_dir) and name not in committed(record_dir, "retraces.jsonl"):
            raise SystemExit(f"{name}: {run} is not the run whose prediction is on record (its evaluations to step {STOP} "
                             "differ); record it with --retrace and commit retraces.jsonl before it goes on")
        mechinit_train(["--resume", str(run)], runs / f"{name}.log")
    record_outcome(name, run, record_dir)


def retrace(name: str, runs: Path, record_dir: Path, device: str = "cpu") -> None:
    """Train ``name`` again from step 0 to 1,850 (its prediction on record, its resume point gone) and append to
    retraces.jsonl how it compares with the recorded run at 1,850, with the rule's call on the new run."""
    from mechinit.files import read_metrics
    from mechinit.readout import fate

    if name not in committed(record_dir):
        raise SystemExit(f"{name}: no committed prediction in {record_dir}/predictions.jsonl; the grid itself trains it to {STOP}")
    run = runs / name
    at = step_of(run)
    if (run / "model.safetensors").is_file() or (at is not None and at > STOP):
        raise SystemExit(f"{name}: {run} is already past step {STOP}; a retrace starts from step 0 in a folder of its own")
    train_to_stop(name, runs, device=device)
    predicted = recorded(record_dir)[name]
    was, now = (next(r for r in read_metrics(folder) if r["step"] == STOP) for folder in (record_dir / name, run))

    def numbers(row: dict) -> dict:
        pair = row["pairs"]["4,3"]
        return {"train_loss": row["train_loss"], "seen_test_acc": row["seen_test_acc"],
                "inferential": pair["inferential"], "symmetric": pair["symmetric"]}

    def comparison() -> dict:
        called = fate(run, at=STOP)
        return {"commit": commit(), "ran_on": provenance_line(run), "identical_to_1850": is_recorded_run(name, run, record_dir),
                "recorded_at_1850": numbers(was), "retrace_at_1850": numbers(now),
                "recorded_call": predicted["first_line"], "retrace_call": called.first_line(),
                "same_call": (called.verdict, called.p_inferential) == (predicted["verdict"], predicted["p_inferential"]),
                "retrace_verdict": called.verdict, "retrace_p_inferential": called.p_inferential}

    row = append_once(record_dir / "retraces.jsonl", name, run, comparison, folder=record_dir / name / "retrace")
    if row is not None:
        print(f"{name}: retraced to {STOP} on {row['ran_on']}: identical {row['identical_to_1850']}; loss "
              f"{row['recorded_at_1850']['train_loss']:.4f} → {row['retrace_at_1850']['train_loss']:.4f}; "
              f"{row['retrace_call']} (recorded: {row['recorded_call']})", flush=True)


def provenance_line(run: Path) -> str:
    """Where the run trained (its start and every resume), as the table says it: table.py's ``ran_on``."""
    spec = importlib.util.spec_from_file_location("seed_odds_table", HERE / "table.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    return table.ran_on(json.loads((run / "config.json").read_text())["provenance"])


def append_once(path: Path, name: str, run: Path, make_row, folder: Path | None = None) -> dict | None:
    """Append ``make_row()`` to the jsonl ``path`` unless it already holds a row for ``name``, after copying
    the run's config.json and metrics.jsonl into ``folder`` (default ``path.parent/name``); returns the row
    (None: already there)."""
    if name in recorded(path.parent, path.name):
        return None
    folder = folder or path.parent / name
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

    retraced = name in recorded(record_dir, "retraces.jsonl") and not is_recorded_run(name, run, record_dir)
    row = append_once(record_dir / "outcomes.jsonl", name, run, lambda: {**outcome(), "retrace": retraced},
                      folder=record_dir / name / "retrace" if retraced else None)
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
    ap.add_argument("--retrace", nargs="+", default=None, metavar="NAME",
                    help="train these runs again from step 0 to 1,850 (prediction on record, resume point gone)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="where new runs (and retraces) train; a resumed run keeps its own device")
    args = ap.parse_args()
    retrace_on = lambda name, runs, record: retrace(name, runs, record, args.device)  # noqa: E731
    for flag, chosen, action in (("--continue", args.cont, continue_to_end), ("--retrace", args.retrace, retrace_on)):
        if chosen is None:
            continue
        unknown = [n for n in chosen if n not in GRID]
        if unknown:
            raise SystemExit(f"{flag}: unknown run {unknown[0]!r}; the grid's runs: {', '.join(GRID)}")
        with ThreadPoolExecutor(args.jobs) as pool:  # mechinit's own lock keeps one trainer per run folder
            list(pool.map(lambda n: action(n, args.runs, args.record), chosen))
        return 0
    names = [n for n in GRID if args.only is None or n in args.only]
    if args.list:
        print("\n".join(f"{n}: mechinit train {' '.join(command(n, args.device, args.bf16))} --stop-at {STOP}" for n in names))
        return 0

    with only_grid(args.runs), ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda n: to_stop(n, args.runs, args.record, args.bf16, args.device), names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
