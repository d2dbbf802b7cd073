"""Sweeps: a grid over config keys, one normal run folder per grid point, reduced into cells.

A :class:`SweepSpec` holds a base config, the grid (``{"init.gamma": [0.5, 0.8], ...}``) and the
reduction: ``best_over`` keys (e.g. ``train.lr``: a cell takes the best run over them, per metric,
as the paper's Fig 2 does over 9 learning rates) and ``mean_over`` keys (e.g. ``train.seed``: the
mean and std across them). Every other grid key is a cell axis.

Runs are identified by :func:`mechinit.runs.ids.run_id`; a run whose folder under ``OUT/runs/`` is
finished (:func:`finished`: final weights, or — a folder carried to another checkout without its
weights — an evaluation at the run's last step) is skipped, so starting a sweep again only trains what is missing; a run that
was interrupted with a resume point (``resume/state.safetensors``, e.g. a sweep killed at the end of a
session) continues from it on its own, one without is started again cleanly. A failed run is
recorded with its log path and does not stop the others; Ctrl-C or SIGTERM stops the whole sweep
(:class:`~mechinit.errors.TrainingInterrupted`), the run in progress keeping its resume point — with
``--jobs N``, a signal to the sweep's own process stops every worker's run that way, and no queued run
starts.
"""

from __future__ import annotations

import itertools
import json
import shutil
import statistics
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mechinit.config import ConfigError, RunConfig, TaskConfig, coerce
from mechinit.errors import TrainingInterrupted
from mechinit.runs import folder as runs
from mechinit.runs.ids import run_id
from mechinit.sweeps.workers import local_results, submitit_results
from mechinit.tasks import make_task, vocabulary_of
from mechinit.tasks.vocabulary import EPOCHS_TO_LOSS, HEADLINE, LOSS_TARGET, Metric
from mechinit.training import resume as resume_point
from mechinit.training.budget import check_fits
from mechinit.training.schedule import make_plan

GENERIC_METRICS = (HEADLINE, EPOCHS_TO_LOSS)  # every task has these; the task's vocabulary adds its own


def cell_metrics(task_name: str) -> tuple[Metric, ...]:
    """The numbers a sweep over ``task_name`` keeps per run and reduces per cell."""
    return GENERIC_METRICS + vocabulary_of(task_name).sweep_metrics


@dataclass(frozen=True)
class SweepSpec:
    base: RunConfig
    grid: dict[str, tuple] = field(default_factory=dict)
    best_over: tuple[str, ...] = ()
    mean_over: tuple[str, ...] = ("train.seed",)

    def __post_init__(self):
        if not self.grid:
            raise ConfigError("a sweep needs at least one grid key, e.g. --set sweep.init.gamma=0.5,0.8")
        for key in (*self.best_over, *self.mean_over):
            if key not in self.grid:
                raise ConfigError(f"sweep reduce key {key!r} is not a grid key; grid keys: {sorted(self.grid)}")
        for cfg in self.configs():  # builds (and so validates) every grid point before anything runs
            check_fits(cfg)

    @property
    def axes(self) -> list[str]:
        return [k for k in self.grid if k not in self.best_over and k not in self.mean_over]

    def points(self) -> list[dict[str, Any]]:
        keys = list(self.grid)
        return [dict(zip(keys, values)) for values in itertools.product(*(self.grid[k] for k in keys))]

    def configs(self) -> list[RunConfig]:
        return [self.base.with_overrides(p) for p in self.points()]

    def to_dict(self) -> dict:
        return {"base": self.base.to_dict(), "grid": {k: list(v) for k, v in self.grid.items()},
                "best_over": list(self.best_over), "mean_over": list(self.mean_over)}


def parse_grid(sets: dict[str, str], base: RunConfig) -> dict[str, tuple]:
    """``{"sweep.init.gamma": "0.5,0.8"}`` -> ``{"init.gamma": (0.5, 0.8)}`` with field types."""
    grid = {}
    for key, value in sets.items():
        inner = key.removeprefix("sweep.")
        section, _, name = inner.partition(".")
        sec = RunConfig.SECTIONS.get(section)
        if sec is None or name not in {f for f in base.to_dict()[section]}:
            raise ConfigError(f"unknown sweep key {key!r}; keys look like sweep.SECTION.FIELD, e.g. sweep.init.gamma")
        owner = type(base.task.options) if section == "task" and name not in TaskConfig.common_fields() else sec  # a task option
        hint = typing.get_type_hints(owner)[name]
        values = value if isinstance(value, (list, tuple)) else [v for v in str(value).split(",") if v.strip() != ""]
        if not values:
            raise ConfigError(f"sweep key {key} has no values; give one or more, e.g. {key}=0.5,0.8")
        grid[inner] = tuple(coerce(inner, v, hint) for v in values)
        if len(set(grid[inner])) != len(grid[inner]):
            raise ConfigError(f"sweep key {key} repeats a value: {list(grid[inner])}")
    return grid


EXECUTORS = ("local", "slurm", "submitit-local")
ENSEMBLE_MODES = ("auto", "off")


def plan_units(todo: list[tuple[RunConfig, Path]], ensemble: str, size: int, jobs: int) -> list[list[tuple[RunConfig, Path]]]:
    """Split the runs into units of work. ``off``: one run per unit. ``auto``: runs whose shapes
    and shared training settings agree (:func:`mechinit.training.ensemble.ensemble_key`) train together, in
    ensembles of at most ``size``, split further while there are fewer units than ``jobs`` workers."""
    if ensemble not in ENSEMBLE_MODES:
        raise ConfigError(f"sweep ensemble mode {ensemble!r} is not allowed; choose one of {list(ENSEMBLE_MODES)}")
    if size < 1:
        raise ConfigError(f"sweep ensemble size {size} must be at least 1")
    if ensemble == "off" or size == 1:
        return [[item] for item in todo]
    from mechinit.training.ensemble import ensemble_key

    groups: dict[tuple, list] = {}
    for cfg, folder in todo:
        key = ensemble_key(cfg)
        groups.setdefault(key if key is not None else ("alone", folder), []).append((cfg, folder))
    chunks = {key: -(-len(members) // size) for key, members in groups.items()}  # fewest ensembles of <= size
    while chunks and sum(chunks.values()) < jobs:  # then split the largest ensembles until every worker has one
        key = max(chunks, key=lambda k: len(groups[k]) / chunks[k])
        if len(groups[key]) <= chunks[key]:
            break
        chunks[key] += 1
    return [members[i :: chunks[key]] for key, members in groups.items() for i in range(chunks[key])]


def run_sweep(spec: SweepSpec, out_dir: str | Path, jobs: int = 1, progress: bool = True, executor: str = "local",
              slurm: dict | None = None, on_finished=None, ensemble: str = "auto", ensemble_size: int = 8) -> dict:
    """Train every missing grid point, then reduce and write ``sweep.json``.

    ``executor``: ``local`` (``jobs`` processes), ``slurm`` (a submitit job array; ``slurm`` holds
    submitit parameters such as ``slurm_partition``), or ``submitit-local`` (the same path through
    submitit's LocalExecutor). ``ensemble``: ``auto`` trains same-shape runs together (see
    :func:`plan_units`), ``off`` one by one. ``on_finished(folder)`` is called for every finished
    run (the CLI publishes it to the sweep's zoo folder)."""
    from tqdm.auto import tqdm

    if executor not in EXECUTORS:
        raise ConfigError(f"sweep executor {executor!r} is not allowed; choose one of {list(EXECUTORS)}")
    if jobs < 1:
        raise ConfigError(f"sweep --jobs {jobs} must be at least 1")
    out_dir = Path(out_dir)
    (out_dir / "runs").mkdir(parents=True, exist_ok=True)
    todo, resumed, failures = [], [], {}
    for cfg in spec.configs():
        folder = out_dir / "runs" / run_id(cfg)
        if not finished(cfg, folder):
            if resume_point.has_point(folder):  # interrupted with a resume point: continue it alone
                resumed.append([(cfg, folder)])
                continue
            if folder.exists():  # interrupted before its first resume point: start it again cleanly
                shutil.rmtree(folder)
            todo.append((cfg, folder))
    units = resumed + plan_units(todo, ensemble, ensemble_size, jobs)
    todo = [item for unit in units for item in unit]
    results = (local_results(units, jobs) if executor == "local"
               else submitit_results(units, out_dir, executor, jobs, slurm or {}))
    with tqdm(total=len(todo), disable=not progress, desc="sweep runs") as bar:
        try:
            for folders, unit_results in results:
                for folder, result in zip(folders, unit_results):
                    if not result["ok"]:
                        failures[folder.name] = result["log"]
                bar.update(len(folders))
        except TrainingInterrupted as e:  # the run keeps its resume point; the next sweep call continues it
            what = str(e).split(";")[0]
            raise TrainingInterrupted(f"sweep stopped ({what}); run the same `mechinit sweep` command again to continue "
                                      "(stopped runs resume from their resume points, finished runs are kept)") from e
    if on_finished is not None:
        for cfg in spec.configs():
            folder = out_dir / "runs" / run_id(cfg)
            if (folder / runs.WEIGHTS).is_file():
                on_finished(folder)
    return _summarise(spec, out_dir, failures, [[f.name for _, f in u] for u in units])


def reduce_sweep(spec: SweepSpec, out_dir: str | Path) -> dict:
    """Reduce the runs a sweep has finished so far into ``sweep.json``, training nothing (a partial
    phase diagram while the sweep runs elsewhere or waits for the next session). Cells with a
    missing run stay ``None``; ``pending`` lists the runs not finished, ``failed`` those of them
    that left an error log."""
    out_dir = Path(out_dir)
    if not (out_dir / "runs").is_dir():
        raise ConfigError(f"sweep folder {out_dir} has no runs/ folder: nothing to reduce (train the sweep first)")
    failures = {}
    for cfg in spec.configs():
        folder = out_dir / "runs" / run_id(cfg)
        log = Path(f"{folder}.log")
        if log.is_file() and not finished(cfg, folder):
            failures[folder.name] = str(log)
    return _summarise(spec, out_dir, failures, [])


def _summarise(spec: SweepSpec, out_dir: Path, failures: dict, units: list[list[str]]) -> dict:
    summary = reduce_runs(spec, out_dir / "runs")
    records = [r for c in summary["cells"] for r in c["runs"]]
    summary["failed"] = failures
    summary["pending"] = sorted(r["id"] for r in records if r.get("missing") and r["id"] not in failures)
    summary["finished"] = sum(1 for r in records if not r.get("missing"))
    summary["without_weights"] = sorted(r["id"] for r in records if r.get("weights") is False)
    summary["units"] = units
    runs.write_json(out_dir / "sweep.json", summary)
    return summary


def finished(cfg: RunConfig, folder: Path, rows: list[dict] | None = None) -> bool:
    """Whether ``folder`` holds a finished run of ``cfg``: its final weights, or, for a folder kept
    without them (a long sweep carried between checkouts by its ``config.json`` and
    ``metrics.jsonl`` only), a metrics row at the run's last step (the evaluation that ends a run).
    ``rows``: the folder's metrics when the caller has read them already."""
    if (folder / runs.WEIGHTS).is_file():
        return True
    return _reached_last_step(cfg, _metrics(folder) if rows is None else rows)


def _metrics(folder: Path) -> list[dict]:
    """A run folder's metrics rows, without a line cut by a kill or mid-append by a running sweep."""
    return runs.read_metrics(folder, drop_cut_tail=True) if (folder / runs.METRICS).is_file() else []


def _reached_last_step(cfg: RunConfig, rows: list[dict]) -> bool:
    return bool(rows) and rows[-1].get("step") == make_plan(cfg.train, make_task(cfg).n_train).total_steps


def run_record(spec: SweepSpec, folder: Path, cfg: RunConfig) -> dict | None:
    """A finished run's numbers: the generic ones and those of the task's vocabulary (``weights``:
    whether its final weights are in the folder)."""
    rows = _metrics(folder)
    if not rows or not finished(cfg, folder, rows):
        return None
    last = rows[-1]
    to_loss = next((r["epoch"] for r in rows if r.get("train_loss") is not None and r["train_loss"] <= LOSS_TARGET), None)
    return {"id": folder.name, "step": last.get("step"), "weights": (folder / runs.WEIGHTS).is_file(),
            "headline": last.get("headline"), "epochs_to_loss": to_loss,
            **vocabulary_of(spec.base.task.name).sweep_record(rows)}


def reduce_runs(spec: SweepSpec, runs_dir: Path) -> dict:
    """Cells keyed by the axis values: per metric, best over ``best_over``, then mean/std over
    ``mean_over``. A missing or failed run makes its cell's numbers ``None``, never a default."""
    cells: dict[tuple, dict] = {}
    for point, cfg in zip(spec.points(), spec.configs()):
        key = tuple(point[a] for a in spec.axes)
        group = tuple(point[m] for m in spec.mean_over)
        cell = cells.setdefault(key, {"axes": {a: point[a] for a in spec.axes}, "groups": {}})
        cell["groups"].setdefault(group, []).append(run_record(spec, runs_dir / run_id(cfg), cfg) or {"id": run_id(cfg), "missing": True})
    out = []
    for cell in cells.values():
        entry = {"axes": cell["axes"], "runs": [r for g in cell["groups"].values() for r in g]}
        for metric in cell_metrics(spec.base.task.name):
            per_group = []
            for records in cell["groups"].values():
                values = [r.get(metric.key) for r in records]
                if metric.never and not any(r.get("missing") for r in records):  # None = never reached: the others compete
                    values = [v for v in values if v is not None] or [None]
                per_group.append(None if any(v is None for v in values) else (max if metric.best == "max" else min)(values))
            ok = [v for v in per_group if v is not None]
            complete = len(ok) == len(per_group)
            entry[metric.key] = {"mean": statistics.fmean(ok) if complete else None,
                             "std": statistics.pstdev(ok) if complete else None, "n": len(ok)}
        out.append(entry)
    return {"spec": spec.to_dict(), "axes": spec.axes, "cells": out}


def spec_from_sets(base: RunConfig, sweep_sets: dict[str, str], grid_file: Path | None = None,
                   best_over: list[str] | None = None, mean_over: list[str] | None = None) -> SweepSpec:
    """A spec from ``sweep.KEY=v1,v2`` items and an optional grid file (the items win); ``mean_over``
    defaults to ``train.seed`` when it is a grid key."""
    file = load_grid_file(grid_file) if grid_file else {}
    grid = {**parse_grid(file.get("grid", {}), base), **parse_grid(sweep_sets, base)}
    if mean_over is None:
        mean_over = file.get("mean_over", ["train.seed"] if "train.seed" in grid else [])
    return SweepSpec(base, grid, tuple(best_over or file.get("best_over", [])), tuple(mean_over))


def load_grid_file(path: Path) -> dict:
    """A JSON grid file: ``{"grid": {"init.gamma": [...]}, "best_over": [...], "mean_over": [...]}``."""
    try:
        data = json.loads(Path(path).read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"grid file {path} is not valid JSON: {e}") from None
    if not isinstance(data, dict) or "grid" not in data:
        raise ConfigError(f"grid file {path} must be a JSON object with a 'grid' table")
    return data
