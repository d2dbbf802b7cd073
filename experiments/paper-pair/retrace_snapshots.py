"""Rebuild a finished run's lost snapshots by training its config again from step 0, and take them only if
the retrace is the same run to every digit.

usage: python experiments/paper-pair/retrace_snapshots.py RUN RETRACE            # train or continue the retrace
       python experiments/paper-pair/retrace_snapshots.py RUN RETRACE --adopt    # compare, then copy the snapshots

A run carried to another machine by its resume point keeps no snapshots from before that point. Training its
config.json again (same code, one thread, the same CPU kernel set) retraces it bit for bit, and the retrace's
snapshots are then the run's own. The first form trains RETRACE with ``mechinit train --config RUN/config.json``
up to the first evaluation step of RUN at or after the last planned snapshot step that RUN lacks (``--stop-at``;
run it again to continue from the retrace's resume point), so that every snapshot it writes is followed by an
evaluation to compare. ``--adopt`` compares every evaluation row the retrace holds with RUN's, field for field
(timing aside), and the retrace's threads and CPU kernel set with RUN's; only if all agree does it copy the
snapshots RUN lacks, up to the retrace's last evaluation step (a snapshot written after it is not yet vouched
for), into RUN's checkpoints/ and write RUN/snapshots-retraced.json (which a zoo entry published from RUN
carries). Otherwise it names the first step that differs, copies nothing and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from mechinit import runs
from mechinit.files import read_metrics
from mechinit.training.schedule import make_plan

TIMING = ("elapsed_s", "samples_per_s")  # the only fields of an evaluation row that a bit-identical rerun may change
RECORD = "snapshots-retraced.json"


def planned_snapshots(run: Path) -> list[int]:
    """Every snapshot step the run's plan holds, 0 and its last step included."""
    cfg = runs.load_run_config(run)
    return sorted(make_plan(cfg.train, cfg.task.n_train).snapshots)


def missing(run: Path) -> list[int]:
    have = set(runs.snapshot_steps_on_disk(run))
    return [s for s in planned_snapshots(run) if s not in have]


def float_path(run: Path) -> list[tuple]:
    """(threads, CPU kernel set) at the start and at every resume: what decides the float path on a CPU."""
    prov = json.loads((run / runs.CONFIG).read_text())["provenance"]
    return [(prov.get("threads"), prov.get("cpu_capability"))] + [(r.get("threads"), r.get("cpu_capability"))
                                                                   for r in prov.get("resumed") or []]


def first_difference(run: Path, retrace: Path) -> int | str | None:
    """The first evaluation step at which the retrace differs from the run (None: none differs)."""
    if set(float_path(retrace)) != set(float_path(run)[:1]) or set(float_path(run)) != set(float_path(run)[:1]):
        return f"float path {float_path(retrace)} against the run's {float_path(run)}"
    mine = [{k: v for k, v in r.items() if k not in TIMING} for r in read_metrics(retrace)]
    theirs = {r["step"]: {k: v for k, v in r.items() if k not in TIMING} for r in read_metrics(run)}
    for row in mine:
        if theirs.get(row["step"]) != row:
            return row["step"]
    return None


def train(run: Path, retrace: Path) -> int:
    end = planned_snapshots(run)[-1]  # the run's last step
    lost = [s for s in missing(run) if s < end]
    if not lost:
        print(f"{run} holds every planned snapshot; nothing to retrace")
        return 0
    stop = min(r["step"] for r in read_metrics(run) if r["step"] >= max(lost))  # an evaluation vouches for each snapshot
    if (retrace / runs.RESUME).is_dir():
        args = ["--resume", str(retrace)]
    elif retrace.exists():
        print(f"{retrace} exists without a resume point; remove it or choose another folder", file=sys.stderr)
        return 2
    else:
        args = ["--config", str(run / runs.CONFIG), "--out", str(retrace)]
    threads = str(float_path(run)[0][0] or 1)
    until = [] if stop >= end else ["--stop-at", str(stop)]  # at the run's last step: trained to its end
    cmd = [sys.executable, "-m", "mechinit", "train", *args, *until, "--quiet"]
    print(f"retracing {run} into {retrace} to step {stop} (snapshots {lost}): {' '.join(cmd)}")
    return subprocess.run(cmd, env={**os.environ, "OMP_NUM_THREADS": threads}).returncode


def adopt(run: Path, retrace: Path) -> int:
    differs = first_difference(run, retrace)
    if differs is not None:
        print(f"{retrace} is not {run} retraced: it differs at {differs}; nothing copied")
        return 1
    rows = read_metrics(retrace)
    last = rows[-1]["step"] if rows else None
    have = set(runs.snapshot_steps_on_disk(retrace))
    taken = [s for s in missing(run) if s in have and last is not None and s <= last]
    for step in taken:
        target = runs.snapshot_path(run, step)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(runs.snapshot_path(retrace, step), target)
    if not taken:
        print(f"{run}: the retrace holds no missing snapshot up to its last evaluation (step {last}); nothing copied")
        return 0
    record = run / RECORD
    before = json.loads(record.read_text())["steps"] if record.is_file() else []
    record.write_text(json.dumps({
        "steps": sorted(set(before) | set(taken)),
        "how": ("trained again from step 0 with this run's config.json, the same threads and CPU kernel set; every "
                f"evaluation to step {last} equal to this run's, field for field (timing aside)"),
        "retrace_provenance": json.loads((retrace / runs.CONFIG).read_text())["provenance"],
    }, indent=2) + "\n")
    print(f"{run}: took snapshots {taken} from {retrace} (identical at every evaluation to step {last}); still missing "
          f"{missing(run)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("retrace", type=Path)
    ap.add_argument("--adopt", action="store_true", help="compare the retrace with the run and copy its snapshots")
    args = ap.parse_args(argv)
    if not (args.run / runs.CONFIG).is_file():
        print(f"{args.run} is not a run folder ({runs.CONFIG} not found)", file=sys.stderr)
        return 2
    return adopt(args.run, args.retrace) if args.adopt else train(args.run, args.retrace)


if __name__ == "__main__":
    sys.exit(main())
