"""Zoo folders on disk: where they are, their index, file hashes and id rules.

A zoo folder holds one sub-folder per entry (a run folder without ``resume/``) and ``index.json``::

    {"entries": {ID: {"files": {REL_PATH: {"sha256": ..., "size": ...}}, "summary": {...},
                      "snapshot_dtype": "float32" | "float16"}},
     "aliases": {ALIAS: ID}}

Zoo folders searched, in order: one passed explicitly, the user zoo (``$MECHINIT_ZOO``, default
``~/.cache/mechinit/zoo``), and the read-only entries shipped inside the package.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from pathlib import Path
from typing import Iterator

from mechinit import files
from mechinit.errors import ZooError  # noqa: F401  (re-exported)
from mechinit.files import SNAPSHOTS, read_json, write_json

INDEX = "index.json"
SHIPPED = Path(__file__).resolve().parent / "entries"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


def user_zoo() -> Path:
    if os.environ.get("MECHINIT_ZOO"):
        return Path(os.environ["MECHINIT_ZOO"])
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "mechinit" / "zoo"


def zoo_dirs(zoo_dir: str | Path | None = None) -> list[Path]:
    dirs = [Path(zoo_dir)] if zoo_dir is not None else []
    return dirs + [user_zoo(), SHIPPED]


def check_name(name: str, what: str = "id") -> str:
    """Ids and aliases are plain names: no separators, no '..', nothing that leaves the zoo folder."""
    if not isinstance(name, str) or not _ID.match(name) or ".." in name:
        raise ZooError(f"invalid zoo {what} {name!r}: use letters, digits, '.', '_', '+', '-' (no '/', no '..')")
    return name


def read_index(zoo_dir: Path) -> dict:
    path = Path(zoo_dir) / INDEX
    if not path.is_file():
        return {"entries": {}, "aliases": {}}
    index = read_json(path)
    if not isinstance(index, dict) or not isinstance(index.get("entries", {}), dict) or not isinstance(index.get("aliases", {}), dict):
        raise ZooError(f"{path} is not a zoo index (a JSON object with 'entries' and 'aliases' tables)")
    index.setdefault("entries", {})
    index.setdefault("aliases", {})
    for name in list(index["entries"]) + list(index["aliases"]) + list(index["aliases"].values()):
        check_name(name, f"name in {path}")  # an index is input too: no '../elsewhere'
    return index


def snapshot_steps(record: dict) -> list[int]:
    """The ``step{N}`` snapshots an index record lists, as sorted step numbers ([] for final weights only)."""
    folder = f"{SNAPSHOTS}/"
    return files.snapshot_steps(f[len(folder):] for f in record["files"] if f.startswith(folder))


def write_index(zoo_dir: Path, index: dict) -> None:
    write_json(Path(zoo_dir) / INDEX, index)


@contextlib.contextmanager
def locked(zoo_dir: Path) -> Iterator[None]:
    """An exclusive lock on the zoo folder (``.lock``), held while the index changes."""
    Path(zoo_dir).mkdir(parents=True, exist_ok=True)
    with open(Path(zoo_dir) / ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_table(entry_dir: Path) -> dict[str, dict]:
    entry_dir = Path(entry_dir)
    return {
        p.relative_to(entry_dir).as_posix(): {"sha256": sha256(p), "size": p.stat().st_size}
        for p in sorted(entry_dir.rglob("*"))
        if p.is_file()
    }


def unlisted_files(entry_dir: Path, files: dict[str, dict]) -> list[str]:
    """Files in the entry folder that its index record does not list (ignored when loading)."""
    return sorted(str(p.relative_to(entry_dir)) for p in Path(entry_dir).rglob("*") if p.is_file() and str(p.relative_to(entry_dir)) not in files)


def verify_files(entry_dir: Path, files: dict[str, dict]) -> None:
    """Raise ZooError naming the first file that is missing or whose size or sha256 differs."""
    for rel, meta in sorted(files.items()):
        path = Path(entry_dir) / rel
        if not path.is_file() and rel.endswith(".safetensors"):
            raise ZooError(f"zoo entry {Path(entry_dir).name} has no weights here (looked for {path}): an installed package carries "
                           "the zoo's index and cards but no weights; clone the repository (its zoo/ has them) or point "
                           "MECHINIT_ZOO at a zoo that does")
        if not path.is_file():
            raise ZooError(f"zoo entry {Path(entry_dir).name}: file {rel} is missing")
        if path.stat().st_size != meta["size"] or sha256(path) != meta["sha256"]:
            raise ZooError(f"zoo entry {Path(entry_dir).name}: file {rel} fails its sha256 check (modified or corrupt); refusing to load")


