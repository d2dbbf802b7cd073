"""Where a task's data files are looked for, the error when one is missing, and the record of which
files a run used (``data.json``'s ``files``: name, bytes, sha256) that probes and ``--resume`` check."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from mechinit.errors import ConfigError
from mechinit.files import DATA, read_json
from mechinit.task_options import TaskOptions, TaskSection


@dataclass(frozen=True)
class DataDirOptions(TaskOptions):
    """``task.data_dir``: the folder that holds the task's data files."""

    LATER = ("data_dir",)
    data_dir: str | None = None


def data_file(cfg: TaskSection, name: str, required: bool = True) -> Path | None:
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


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # control characters other than tab and newline


def data_lines(path: Path) -> list[tuple[int, str]]:
    """``(line number, line)`` for every non-blank line of a UTF-8 text data file. A leading byte-order
    mark is dropped; bytes that are not UTF-8, or a control character (NUL …) in a line, are a
    :class:`ConfigError` naming the file and line."""
    raw = Path(path).read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line} is not UTF-8 text (byte 0x{raw[e.start]:02x})") from None
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        bad = CONTROL.search(line)
        if bad:
            raise ConfigError(f"{path}:{number} holds the control character {bad.group()!r}")
        if line.strip():
            out.append((number, line))
    return out


def file_record(path: Path) -> dict:
    """What ``data.json`` keeps of one data file."""
    data = path.read_bytes()
    return {"name": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def check_same_data(task, folder: Path) -> None:
    """Refuse (:class:`ConfigError`, one line) a task whose data differ from what ``folder/data.json``
    recorded when the run was trained: a data file changed or gone, or another tokenizer or data
    size. Runs of tasks without ``artifacts()`` and folders without ``data.json`` pass."""
    path = Path(folder) / DATA
    if not hasattr(task, "artifacts") or not path.is_file():
        return
    recorded, now = read_json(path), task.artifacts()
    if not isinstance(recorded, dict):
        raise ConfigError(f"{path} is not a data record (a JSON object)")
    data_dir = getattr(task.cfg.options, "data_dir", None)
    where = f"task {task.cfg.name}" + (f" (task.data_dir {data_dir})" if data_dir else "")
    current = {f["name"]: f for f in now.get("files", [])}
    files = recorded.get("files") or []
    if not isinstance(files, list) or not all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in files):
        raise ConfigError(f"{path}: 'files' is not a list of {{name, bytes, sha256}} records")
    for rec in files:
        cur = current.get(rec["name"])
        if cur is None:
            raise ConfigError(f"{where}: the run was trained on {rec['name']}, which this task does not read")
        if (cur["bytes"], cur["sha256"]) != (rec.get("bytes"), rec.get("sha256")):
            raise ConfigError(f"{where}: {rec['name']} is not the file the run was trained on "
                              f"(sha256 {str(rec.get('sha256'))[:12]}…, {rec.get('bytes')} bytes in {path}; now {cur['sha256'][:12]}…, {cur['bytes']} bytes)")
    for key in sorted(set(recorded) - {"files"}):
        if recorded[key] != now.get(key):
            raise ConfigError(f"{where}: the data give another {key} than the run recorded in {path}")
