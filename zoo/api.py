"""Finding, verifying and loading zoo entries by id, alias or snapshot (``id@step{N}``, ``id@final``)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mechinit.zoo.store import ZooError, read_index, snapshot_steps, unlisted_files, verify_files, zoo_dirs

from mechinit import files as runs  # file names and JSON only: listing and verifying need no torch

if TYPE_CHECKING:
    from transformer_lens import HookedTransformer

SUMMARY_COLUMNS = ("task", "arch", "norm", "n_layers", "d_model", "n_heads", "gamma", "seed", "init_seed", "data_seed", "replay", "lr",
                   "weight_decay", "steps",
                   "headline", "verdict")  # every entry's columns; a task's own columns follow (its vocabulary's index_row)


@dataclass(frozen=True)
class Ref:
    """A resolved zoo reference: the zoo folder, the entry id, and a step (``None`` = final)."""

    zoo_dir: Path
    id: str
    step: int | None

    @property
    def path(self) -> Path:
        return self.zoo_dir / self.id

    @property
    def record(self) -> dict:
        return read_index(self.zoo_dir)["entries"][self.id]

    @property
    def weights_file(self) -> str:
        return runs.WEIGHTS if self.step is None else f"{runs.SNAPSHOTS}/step{self.step}.safetensors"


def _split(name: str) -> tuple[str, int | None]:
    base, at, snap = name.partition("@")
    if not at or snap == "final":
        return base, None
    if snap.startswith("step") and snap[4:].isdigit():
        return base, int(snap[4:])
    raise ZooError(f"bad snapshot {name!r}: use ID@step{{N}} or ID@final")


def resolve(name: str, step: int | None = None, zoo_dir: str | Path | None = None) -> Ref:
    """Find ``name`` (an id or alias, optionally ``@step{N}``/``@final``) in the zoo folders."""
    base, snap = _split(name)
    step = step if step is not None else snap
    known: list[str] = []
    for folder in zoo_dirs(zoo_dir):
        index = read_index(folder)
        entry_id = index["aliases"].get(base, base)
        if entry_id in index["entries"]:
            ref = Ref(folder, entry_id, step)
            if ref.weights_file not in ref.record["files"]:
                have = sorted(int(f[len("checkpoints/step"):-len(".safetensors")]) for f in ref.record["files"] if f.startswith("checkpoints/step"))
                raise ZooError(f"zoo entry {entry_id} has no snapshot at step {step}; it has steps {have}")
            return ref
        known += list(index["entries"]) + list(index["aliases"])
    close = difflib.get_close_matches(base, known, n=3, cutoff=0.0)
    hint = f"; closest: {', '.join(close)}" if close else "; the zoo is empty"
    raise ZooError(f"unknown zoo id or alias {base!r}{hint}")


def load(name: str, step: int | None = None, device: str = "cpu", zoo_dir: str | Path | None = None) -> "HookedTransformer":
    """A ready HookedTransformer from the zoo; every file of the entry is checked against its sha256."""
    return load_target(name if step is None else f"{name.partition('@')[0]}@step{step}", device, zoo_dir).model


def load_target(name: str, device: str = "cpu", zoo_dir: str | Path | None = None):
    """A probe :class:`~mechinit.runs.targets.Target` for a zoo id (its snapshots included)."""
    from mechinit.runs.targets import target_from_folder

    ref = resolve(name, None, zoo_dir)
    verify_files(ref.path, ref.record["files"])
    weights = ref.path / ref.weights_file
    target = target_from_folder(ref.path, weights, name, device)
    listed = {f for f in ref.record["files"] if f.startswith(f"{runs.SNAPSHOTS}/")}
    target.snapshots = {s: f for s, f in target.snapshots.items() if f"{runs.SNAPSHOTS}/step{s}.safetensors" in listed}
    return target


def target(name_or_path: str, zoo_dir: str | Path | None = None, device: str = "cpu"):
    """A probe target from a run folder or checkpoint path if one exists there, else from the zoo."""
    from mechinit.runs.targets import target_from_path

    if Path(name_or_path).exists():
        return target_from_path(name_or_path, device)
    return load_target(name_or_path, device, zoo_dir)


def card(name: str, zoo_dir: str | Path | None = None) -> dict:
    """Configs, summary metrics, provenance, files and the model card text of an entry."""
    ref = resolve(name, None, zoo_dir)
    verify_files(ref.path, ref.record["files"])  # show nothing that was tampered with
    config = runs.read_json(ref.path / runs.CONFIG)
    record = ref.record
    return {
        "id": ref.id, "zoo_dir": str(ref.zoo_dir), "summary": record["summary"], "snapshot_dtype": record.get("snapshot_dtype"),
        "config": {k: config[k] for k in ("model", "init", "task", "train")}, "provenance": config.get("provenance"),
        "snapshots": snapshot_steps(record),
        "files": record["files"], "card": (ref.path / runs.CARD).read_text() if (ref.path / runs.CARD).is_file() else None,
    }


def list_entries(zoo_dir: str | Path | None = None, **filters):
    """A pandas DataFrame, one row per entry (first zoo folder wins on duplicate ids), filtered by
    equality on summary columns (``gamma=0.8``; numbers to 1e-9 relative, strings as text)."""
    import pandas as pd

    rows, seen = [], set()
    for folder in zoo_dirs(zoo_dir):
        index = read_index(folder)
        aliases = {}
        for alias, target in index["aliases"].items():
            aliases.setdefault(target, []).append(alias)
        for entry_id, record in sorted(index["entries"].items()):
            if entry_id not in seen:
                seen.add(entry_id)
                rows.append({"id": entry_id, "aliases": ",".join(sorted(aliases.get(entry_id, []))), **record["summary"], "zoo_dir": str(folder)})
    task_columns = dict.fromkeys(k for row in rows for k in row if k not in SUMMARY_COLUMNS and k not in ("id", "aliases", "zoo_dir"))
    columns = ["id", "aliases", *SUMMARY_COLUMNS, *task_columns, "zoo_dir"]
    table = pd.DataFrame(rows, columns=columns)
    for key, value in filters.items():
        if table.empty:
            break
        if key not in table.columns:
            raise ZooError(f"unknown zoo column {key!r}; columns: {sorted(table.columns)}")
        if isinstance(value, str) and not _is_number(value):
            table = table[table[key].astype(str) == str(value)]
        else:  # numbers match to 1e-9 relative, so a metric like 0.1 + 0.2 still equals 0.3
            column = pd.to_numeric(table[key], errors="coerce")
            table = table[(column - float(value)).abs() <= 1e-9 * max(1.0, abs(float(value)))]
    return table.reset_index(drop=True)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def verify(name: str | None = None, zoo_dir: str | Path | None = None) -> dict[str, str]:
    """Check entries against their index; returns ``{id: "ok" | problem}``."""
    if name is not None:
        refs = [resolve(name, None, zoo_dir)]
    else:
        refs = [Ref(folder, entry_id, None) for folder in zoo_dirs(zoo_dir) for entry_id in read_index(folder)["entries"]]
    report = {}
    for ref in refs:
        try:
            verify_files(ref.path, ref.record["files"])
            extra = unlisted_files(ref.path, ref.record["files"])
            report[ref.id] = "ok" if not extra else f"ok, but files not in the index (ignored when loading): {', '.join(extra[:5])}"
        except ZooError as e:
            report[ref.id] = str(e)
    return report
