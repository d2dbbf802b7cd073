"""A probe target: a model with its run config, task and (when there are any) step snapshots.

``target_from_path(path)`` takes a run folder (or zoo entry folder) or one of its ``.safetensors``
files; the zoo resolves ids to folders and then uses :func:`target_from_folder`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

import torch

from mechinit.config import RunConfig
from mechinit.model.build import build_model, to_device
from mechinit.runs import folder as runs
from mechinit.tasks import make_task, vocabulary_of
from mechinit.tasks.datafiles import check_same_data


@dataclass
class Target:
    name: str
    model: torch.nn.Module
    cfg: RunConfig
    snapshots: dict[int, Callable[[], dict[str, torch.Tensor]]] = field(default_factory=dict)
    metrics: dict | None = None  # the metrics row of these weights when the run recorded one
    folder: Path | None = None  # the run folder, whose data.json the task's data must match

    @cached_property
    def task(self):
        task = make_task(self.cfg)
        if self.folder is not None:
            check_same_data(task, self.folder)  # the data files the run was trained on, unchanged
        return task

    def summary(self) -> dict:
        """What a report shows first about this model: its axes, its step and headline, and the rows
        its task's vocabulary adds (``rows``, e.g. held-out verdicts), from the run's metrics row for
        these weights or a fresh evaluation where it has none. Missing values are ``None``."""
        m, row = self.cfg.model, self.metrics
        if row is None:
            from mechinit.model.fastpath import model_logits

            task = self.task
            with torch.no_grad():
                logits = model_logits(self.model, contextlib.nullcontext(), task.target_positions)
                row = task.evaluate(logits, str(next(self.model.parameters()).device))
        return {"task": self.cfg.task.name, "gamma": self.cfg.init.gamma, "n_layers": m.n_layers, "d_model": m.d_model,
                "norm": m.norm, "seed": self.cfg.train.seed, "step": row.get("step"), "headline": row.get("headline"),
                "rows": vocabulary_of(self.cfg.task.name).model_rows(row)}


def snapshot_loaders(folder: Path) -> dict[int, Callable[[], dict[str, torch.Tensor]]]:
    return {s: (lambda p=runs.snapshot_path(folder, s): runs.read_tensors(p)) for s in runs.snapshot_steps_on_disk(folder)}


def target_from_folder(folder: Path, weights: Path | None = None, name: str | None = None, device: str = "cpu") -> Target:
    cfg = runs.load_run_config(folder)
    weights = weights or folder / runs.WEIGHTS
    if not weights.is_file():
        raise runs.RunFolderError(f"{folder} has no {runs.WEIGHTS} (an unfinished run? pass one of its checkpoints/step*.safetensors)")
    model = build_model(cfg.model, "cpu")
    runs.load_weights(model, weights)
    model.train(False)  # inference mode (no dropout here; kept explicit)
    return Target(name or folder.name, to_device(model, device), cfg, snapshot_loaders(folder), _metrics_row(folder, weights), folder)


def _metrics_row(folder: Path, weights: Path) -> dict | None:
    """The metrics row recorded for these weights: the last row for the final weights, the row at
    step N for ``checkpoints/step{N}`` (``None`` when the run did not evaluate there)."""
    rows = runs.read_metrics(folder)
    if not rows:
        return None
    if weights.name == runs.WEIGHTS:
        return rows[-1]
    step = weights.stem[len("step"):]
    return next((r for r in rows if step.isdigit() and r.get("step") == int(step)), None)


def target_from_path(path: str | Path, device: str = "cpu") -> Target:
    path = Path(path)
    if path.is_dir():
        return target_from_folder(path, device=device)
    if path.is_file() and path.suffix == ".safetensors":
        for folder in (path.parent, path.parent.parent):
            if (folder / runs.CONFIG).is_file():
                return target_from_folder(folder, path, f"{folder.name}@{path.stem}", device)
        raise runs.RunFolderError(f"{path} is not a mechinit model: no {runs.CONFIG} beside it or in its run folder")
    if path.exists():
        raise runs.RunFolderError(f"{path} is not a model (expected a run folder or a .safetensors checkpoint)")
    raise runs.RunFolderError(f"target {path} not found (not a file, a folder or a zoo id)")
