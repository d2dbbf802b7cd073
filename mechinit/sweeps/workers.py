"""The workers of a sweep: training one unit of work (a run alone or an ensemble), and the two
ways to hand units out — a local process pool (``--jobs N``; the parent forwards SIGINT/SIGTERM to
every worker, whose run saves its resume point, and no queued run starts) or a submitit job array.
:func:`mechinit.sweeps.grid.run_sweep` plans the units and consumes the ``(folders, results)`` pairs."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import shutil
import signal
import traceback
from concurrent.futures import CancelledError, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from mechinit.config import RunConfig
from mechinit.errors import TrainingInterrupted
from mechinit.training import resume as resume_point


def _train_one(cfg_dict: dict, out: str) -> dict:
    """Train one run alone, returning its final metrics row or the path of its error log."""
    from mechinit.training.trainer import train

    cfg = RunConfig.from_dict(cfg_dict)
    log = Path(f"{out}.log")  # not with_suffix: ids hold dots (g0.80)
    try:
        resumable = resume_point.has_point(out)
        row = train(None, Path(out), resume=True, quiet=True) if resumable else train(cfg, Path(out), quiet=True)
        return {"ok": True, "row": row}
    except TrainingInterrupted:  # Ctrl-C / SIGTERM stops the sweep, not just this run (it keeps its resume point)
        raise
    except Exception:  # noqa: BLE001 - reported per run, the sweep goes on
        log.write_text(traceback.format_exc())
        return {"ok": False, "log": str(log)}


def _train_unit(cfg_dicts: list[dict], outs: list[str]) -> list[dict]:
    """Worker: one unit of work, a run alone or an ensemble of same-shape runs. An ensemble that
    fails (one member diverging stops them all) is retrained member by member, so each failure
    stays with its own run."""
    if _STOPPING is not None and _STOPPING.is_set():
        raise TrainingInterrupted("the sweep is stopping; this run was not started")
    if len(cfg_dicts) == 1:
        return [_train_one(cfg_dicts[0], outs[0])]
    from mechinit.training.ensemble import train_ensemble

    try:
        rows = train_ensemble([RunConfig.from_dict(c) for c in cfg_dicts], [Path(o) for o in outs])
        return [{"ok": True, "row": row} for row in rows]
    except Exception:  # noqa: BLE001 - fall back to training the members alone
        note = traceback.format_exc()
        for out in outs:
            shutil.rmtree(out, ignore_errors=True)
            Path(f"{out}.ensemble.log").write_text(note)
        return [_train_one(c, o) for c, o in zip(cfg_dicts, outs)]


def submitit_results(units, out_dir: Path, executor: str, jobs: int, slurm: dict):
    """Submit the units as one job array through submitit and yield ``(folders, results)``.
    ``submitit-local`` runs the same code path with submitit's LocalExecutor (no cluster)."""
    import submitit

    folder = out_dir / "submitit"
    ex = submitit.LocalExecutor(folder=folder) if executor == "submitit-local" else submitit.AutoExecutor(folder=folder)
    params = {"timeout_min": int(slurm.get("timeout_min", 60)), "cpus_per_task": int(slurm.get("cpus_per_task", 1))}
    if executor == "slurm":
        params["slurm_array_parallelism"] = jobs
        params.update({k: v for k, v in slurm.items() if k.startswith("slurm_")})
    ex.update_parameters(**params)
    submitted = ex.map_array(_train_unit, *_unit_args(units))
    for job, unit in zip(submitted, units):
        folders = [f for _, f in unit]
        try:
            yield folders, job.result()
        except Exception:  # noqa: BLE001 - a job that died (e.g. killed by the scheduler)
            yield folders, [{"ok": False, "log": str(job.paths.stderr)}] * len(unit)


def _unit_args(units) -> tuple[list, list]:
    return [[c.to_dict() for c, _ in u] for u in units], [[str(f) for _, f in u] for u in units]


_STOPPING = None  # in a pool worker: the parent's "stop" event (set by SIGINT/SIGTERM); no new run starts once it is set


def _worker_signals(stopping) -> None:
    """Pool worker: SIGTERM stops the run it trains (which saves a resume point) or, between runs,
    ends the worker; SIGINT is the parent's to forward (a terminal's Ctrl-C reaches every process)."""
    global _STOPPING
    _STOPPING = stopping
    signal.signal(signal.SIGTERM, _leave)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _leave(signum, frame):  # noqa: ARG001
    """SIGTERM to an idle worker: exit through Python, so that its finalizers run (a worker killed
    outright leaves its semaphores to the resource tracker, which then warns on the parent's stderr)."""
    raise SystemExit(0)


def local_results(units, jobs: int):
    cfgs, outs = _unit_args(units)
    if jobs <= 1:
        for unit, c, o in zip(units, cfgs, outs):
            yield [f for _, f in unit], _train_unit(c, o)
        return
    stop: list[str] = []
    context = multiprocessing.get_context("spawn")  # a forked copy of a process whose torch threads run (a notebook) can deadlock
    stopping = context.Event()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_signals, initargs=(stopping,)) as pool:

        def forward(signum, frame):  # noqa: ARG001 - stop every worker's run; each saves its resume point
            stop.append(signal.Signals(signum).name)
            stopping.set()  # runs already queued to a worker return at once
            for process in list(getattr(pool, "_processes", {}).values()):  # the executor's own table of workers
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)

        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            futures = {pool.submit(_train_unit, c, o): [f for _, f in unit] for unit, c, o in zip(units, cfgs, outs)}
            for future in as_completed(futures):
                if stop:  # collect what the stopped workers return; start nothing new
                    for waiting in futures:
                        waiting.cancel()
                    continue
                yield futures[future], future.result()
        except (TrainingInterrupted, BrokenProcessPool, CancelledError):
            if not stop:
                raise
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
    if stop:
        raise TrainingInterrupted(f"{stop[0]} with {jobs} workers: each run in progress saved its resume point")
