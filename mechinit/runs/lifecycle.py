"""A run folder's life: checked before anything is written, created with its ``config.json``,
cleared for a restart, stamped at each resume, and finished with its weights and model card.

The trainer calls these; it only trains. Whoever else writes run folders (the ensemble trainer)
calls the same functions, so every run folder is made one way."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import torch

from mechinit.config import RunConfig
from mechinit.runs import folder as runs
from mechinit.runs.card import write_card


def check_out(out: Path) -> None:
    """Refuse an ``--out`` that cannot become a run folder, before anything is written."""
    if out.exists() and not out.is_dir():
        raise runs.RunFolderError(f"{out} is a file, not a folder; choose another --out")
    parent = next((p for p in [out, *out.parents] if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise runs.RunFolderError(f"{out} cannot be created: {parent} is not writable")


def is_empty(out: Path) -> bool:
    """Nothing there, or only what a cleared restart leaves (``resume/lock``)."""
    if not out.exists():
        return True
    files = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    return files in ([], [f"{runs.RESUME}/lock"])


def create(out: Path, cfg: RunConfig, table: dict, trained_with: dict | None = None, task=None,
           replayed: str | None = None) -> None:
    """Create the run folder with its ``config.json`` (refusing a folder that already holds files)
    and the task's ``data.json`` (tokenizer, data used) when it has one. ``trained_with`` records
    how the run was trained when that is not alone (an ensemble); ``replayed`` what of another
    code's run it replays (:class:`mechinit.training.replay.Replay`), under ``provenance.replayed``."""
    if not is_empty(out):
        raise runs.RunFolderError(f"{out} already holds files; pass --resume {out} to continue it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    provenance = {**runs.provenance(), "trained_with": trained_with}
    if replayed is not None:
        provenance["replayed"] = replayed
    runs.write_json(out / runs.CONFIG, {**cfg.to_dict(), "init_table": table, "provenance": provenance})
    if hasattr(task, "artifacts"):
        runs.write_json(out / runs.DATA, task.artifacts())


def clear_for_restart(out: Path) -> None:
    """Empty a run folder for a restart, keeping only the lock file (its inode is what is locked)."""
    for child in out.iterdir():
        if child.name == runs.RESUME:
            for item in child.iterdir():
                if item.name != "lock":
                    shutil.rmtree(item) if item.is_dir() else item.unlink()
        else:
            shutil.rmtree(child) if child.is_dir() else child.unlink()


def record_resume(out: Path, step: int) -> None:
    """Append where and how a resume ran to ``config.json``'s provenance (``resumed``): a run is
    bit-identical to an uninterrupted one only if every part ran on the same kernel set and threads."""
    data = runs.read_json(out / runs.CONFIG)
    data.setdefault("provenance", {}).setdefault("resumed", []).append({"step": step, **runs.compute_environment()})
    runs.write_json(out / runs.CONFIG, data)


def finish(out: Path, model, cfg: RunConfig, row: dict) -> None:
    """The final weights and the model card: a run folder with ``model.safetensors`` is finished."""
    runs.save_weights(out / runs.WEIGHTS, model)
    write_card(out, cfg, row)


def last_good_snapshot(out: Path, step: int) -> int | None:
    """The last snapshot whose loss was finite — taken before ``step``, whose weights gave the
    non-finite loss — and whose weights are all finite."""
    for s in reversed([s for s in runs.snapshot_steps_on_disk(out) if s < step]):
        if all(torch.isfinite(t).all() for t in runs.read_tensors(runs.snapshot_path(out, s)).values()):
            return s
    return None
