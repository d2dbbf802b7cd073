"""Where a task's data files are looked for, and the error when one is missing."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from mechinit.config import ConfigError, TaskConfig, TaskOptions


@dataclass(frozen=True)
class DataDirOptions(TaskOptions):
    """``task.data_dir``: the folder that holds the task's data files."""

    LATER = ("data_dir",)
    data_dir: str | None = None


def data_file(cfg: TaskConfig, name: str, required: bool = True) -> Path | None:
    """``task.data_dir / name``; a missing required file is a :class:`ConfigError` naming the file
    and the folder it was looked for in (``None`` for a missing optional file)."""
    folder = cfg.options.data_dir
    if folder is None:
        raise ConfigError(f"task {cfg.name} reads {name}; set task.data_dir to the folder that holds it")
    path = Path(folder).expanduser() / name
    if path.is_file():
        return path
    if required:
        raise ConfigError(f"task {cfg.name}: {name} not found in {Path(folder).expanduser().resolve()} (task.data_dir)")
    return None


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
