"""Run-folder file names and JSON helpers that need no torch (the CLI's zoo commands use only these).

:mod:`mechinit.runs` re-exports all of it next to the tensor helpers."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from mechinit.errors import ConfigError

CONFIG = "config.json"
DATA = "data.json"  # a task's tokenizer and the data it used (sequence tasks)
WEIGHTS = "model.safetensors"
METRICS = "metrics.jsonl"
CARD = "README.md"
SNAPSHOTS = "checkpoints"
RESUME = "resume"


def snapshot_steps(names) -> list[int]:
    """The sorted N of every ``step{N}.safetensors`` among file names (other names are skipped)."""
    digits = (n[len("step"):-len(".safetensors")] for n in names if n.startswith("step") and n.endswith(".safetensors"))
    return sorted(int(d) for d in digits if d.isdigit())


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path} is not valid JSON: {e.msg} at line {e.lineno}") from None


def read_metrics(run_dir: Path, drop_cut_tail: bool = False) -> list[dict]:
    """The rows of ``metrics.jsonl``. ``drop_cut_tail``: a last line cut by a kill mid-append is
    left out (resume rewrites the file up to its step anyway); any other bad line is an error."""
    path = Path(run_dir) / METRICS
    if not path.is_file():
        return []
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    rows = []
    for i, line in enumerate(lines):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as e:
            if drop_cut_tail and i == len(lines) - 1:
                break
            raise ConfigError(f"{path} line {i + 1} is not valid JSON: {e.msg}") from None
    return rows
