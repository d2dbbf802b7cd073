"""Publishing a run folder into a zoo folder: atomic, and safe when two processes race.

The entry is assembled in a temporary folder inside the zoo folder, hashed, then moved into place
with one ``rename`` while the zoo's lock is held; a second publisher of the same id gets a
:class:`~zoo.store.ZooError` and leaves nothing behind. ``resume/`` is never published.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from mechinit.zoo.store import ZooError, check_name, file_table, locked, read_index, user_zoo, write_index, zoo_dirs

from mechinit.runs import folder as runs
from mechinit.runs.card import card_text
from mechinit.runs.ids import run_id

SNAPSHOT_DTYPES = ("float32", "float16")
DTYPES = SNAPSHOT_DTYPES  # of the final weights too


def summary(run_dir: Path) -> dict:
    """The axes and final numbers an index row shows: the generic columns, then the task's own
    (its vocabulary's ``index_row``); anything missing is ``None``."""
    from mechinit.tasks import vocabulary_of

    cfg = runs.load_run_config(run_dir)
    rows = runs.read_metrics(run_dir)
    last = rows[-1] if rows else {}
    generic = {
        "task": cfg.task.name, "arch": cfg.model.arch, "norm": cfg.model.norm, "n_layers": cfg.model.n_layers,
        "d_model": cfg.model.d_model, "n_heads": cfg.model.n_heads, "gamma": cfg.init.gamma, "seed": cfg.train.seed,
        "init_seed": cfg.train.weights_seed, "data_seed": cfg.train.order_seed, "replay": cfg.train.replay,
        "lr": cfg.train.lr, "weight_decay": cfg.train.weight_decay, "steps": last.get("step"),
        "headline": last.get("headline"), "verdict": last.get("verdict"),
    }
    return {**generic, **vocabulary_of(cfg.task.name).index_row(cfg.task.options.to_dict(), last)}


def _cast(src: Path, target: Path, dtype: str) -> None:
    import torch
    from safetensors.torch import load_file

    tensors = {k: v.to(getattr(torch, dtype)) for k, v in load_file(str(src)).items()}
    runs.save_tensors(target, tensors, metadata={"dtype": dtype})


def fp32_record(run_dir: Path) -> dict:
    """What a lower-precision entry must reproduce, from the float32 run's last evaluation: the task's
    vocabulary says what (the anchor task: every held-out pair's accuracies on both key splits)."""
    from mechinit.tasks import vocabulary_of

    rows = runs.read_metrics(run_dir)
    last = rows[-1] if rows else {}
    return {"step": last.get("step"), **vocabulary_of(runs.load_run_config(run_dir).task.name).precision_record(last)}


def _chosen_snapshots(run_dir: Path, snapshots: bool | tuple[int, ...]) -> set[int]:
    """The snapshot steps to publish: all (True), none (False), or the steps given, each of which must exist."""
    have = runs.snapshot_steps_on_disk(run_dir)
    if snapshots is True or snapshots is False:
        return set(have) if snapshots else set()
    steps = tuple(snapshots)
    if not steps or any(isinstance(s, bool) or not isinstance(s, int) for s in steps):
        raise ZooError(f"snapshots takes True, False or whole step numbers; got {snapshots!r}")
    missing = sorted(set(steps) - set(have))
    if missing:
        raise ZooError(f"{run_dir} has no snapshot at step {missing[0]}; its snapshots are at steps {have}")
    return set(steps)


def _copy_entry(run_dir: Path, dest: Path, snapshot_dtype: str, chosen: set[int], dtype: str = "float32",
                description: str | None = None) -> None:
    have = runs.snapshot_steps_on_disk(run_dir)
    kept = {runs.snapshot_path(run_dir, s).name for s in chosen}
    for src in sorted(run_dir.rglob("*")):
        rel = src.relative_to(run_dir)
        if not src.is_file() or rel.parts[0] == runs.RESUME or src.name.startswith(".") or rel.as_posix() == runs.CARD:
            continue
        if rel.parts[0] == runs.SNAPSHOTS and src.name not in kept:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.parts[0] == runs.SNAPSHOTS and snapshot_dtype != "float32":
            _cast(src, target, snapshot_dtype)
        elif rel.as_posix() == runs.WEIGHTS and dtype != "float32":
            _cast(src, target, dtype)
        else:
            shutil.copy2(src, target)
    rows = runs.read_metrics(run_dir)
    if rows:  # today's card, even for a run finished under an older version
        card = card_text(runs.load_run_config(run_dir), rows[-1])
    else:  # metrics lost: the run's own card, else one with every number missing
        own = run_dir / runs.CARD
        card = own.read_text() if own.is_file() else card_text(runs.load_run_config(run_dir), {})
    notes = [description] if description else []
    if not chosen:
        notes.append("Training snapshots were not published with this entry (final weights only).")
    elif len(chosen) < len(have):
        notes.append(f"Training snapshots published at steps {', '.join(str(s) for s in sorted(chosen))} only "
                     f"(the run wrote {len(have)}).")
    if chosen and snapshot_dtype != "float32":
        notes.append(f"Training snapshots (`checkpoints/`) are stored in {snapshot_dtype}; final weights are {dtype}.")
    if dtype != "float32":
        notes.append(f"Final weights are stored in {dtype}; the accuracies above are the float32 model's at the end of training, "
                     f"which the {dtype} weights reproduce to ±0.005 (`fp32_reference` in the zoo index).")
    (dest / runs.CARD).write_text(card + ("\n" + "\n".join(notes) + "\n" if notes else ""))


def _check_loadable(run_dir: Path) -> None:
    """Build the run's model and load its final weights before anything is written: an entry that
    cannot be loaded is never published."""
    from mechinit.model.build import build_model

    try:
        model = build_model(runs.load_run_config(run_dir).model)
        runs.load_weights(model, run_dir / runs.WEIGHTS)
    except Exception as e:  # noqa: BLE001 - a bad config, a wrong shape, a file that is not safetensors
        raise ZooError(f"{run_dir} cannot be published: its weights do not load into its model ({type(e).__name__}: {str(e)[:100]})") from None


def _check_namespace(entry_id: str, aliases: tuple[str, ...], zoo_dir: Path, index: dict) -> None:
    """Ids and aliases share one namespace across every zoo a lookup searches (this one, the user
    zoo, the shipped entries): a new id may not be an alias, and an alias may be neither an id nor
    an alias of another entry — else a lookup by that name would silently return another model."""
    indexes = [(zoo_dir, index)] + [(d, read_index(d)) for d in zoo_dirs() if d.resolve() != zoo_dir.resolve()]
    for folder, idx in indexes:
        if entry_id in idx["aliases"]:
            raise ZooError(f"zoo id {entry_id} is already an alias (of {idx['aliases'][entry_id]}) in {folder}; ids and aliases share one namespace")
        for alias in aliases:
            if alias in idx["entries"] or alias == entry_id:
                raise ZooError(f"alias {alias!r} is a zoo id in {folder}; ids and aliases share one namespace")
            if idx["aliases"].get(alias, entry_id) != entry_id:
                raise ZooError(f"alias {alias!r} already points at {idx['aliases'][alias]} in {folder}")


def publish(run_dir: str | Path, id: str | None = None, aliases: tuple[str, ...] = (), zoo_dir: str | Path | None = None,
            snapshot_dtype: str = "float32", snapshots: bool | tuple[int, ...] = True, dtype: str = "float32",
            description: str | None = None) -> str:
    """Publish a finished run folder; returns its id. ``snapshot_dtype="float16"`` halves the
    snapshots, ``snapshots=False`` leaves them out and a tuple of steps keeps only those (each must
    exist; all three are noted in the entry's model card);
    ``dtype="float16"`` stores the final weights in half precision too, and records the float32
    run's held-out accuracies beside them (``fp32_reference``). ``description`` (a paragraph: what
    this model is) goes into the card."""
    run_dir = Path(run_dir)
    if not (run_dir / runs.WEIGHTS).is_file():
        raise ZooError(f"{run_dir} is not a finished run folder ({runs.WEIGHTS} not found)")
    for name, value in (("snapshot_dtype", snapshot_dtype), ("dtype", dtype)):
        if value not in DTYPES:
            raise ZooError(f"{name} {value!r} is not allowed; choose one of {sorted(DTYPES)}")
    _check_loadable(run_dir)
    chosen = _chosen_snapshots(run_dir, snapshots)  # refused before anything is written
    entry_id = check_name(id if id is not None else run_id(runs.load_run_config(run_dir)))
    for alias in aliases:
        check_name(alias, "alias")
    zoo_dir = Path(zoo_dir) if zoo_dir is not None else user_zoo()
    zoo_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=zoo_dir, prefix=f".tmp-{entry_id}-"))
    try:
        _copy_entry(run_dir, tmp, snapshot_dtype, chosen, dtype, description)
        record = {"files": file_table(tmp), "summary": summary(run_dir), "snapshot_dtype": snapshot_dtype if chosen else None}
        if dtype != "float32":
            record["dtype"], record["fp32_reference"] = dtype, fp32_record(run_dir)
        with locked(zoo_dir):
            index = read_index(zoo_dir)
            if entry_id in index["entries"] or (zoo_dir / entry_id).exists():
                raise ZooError(f"zoo id {entry_id} is already published in {zoo_dir}; ids never change, publish under another id")
            _check_namespace(entry_id, aliases, zoo_dir, index)
            os.chmod(tmp, 0o755)  # mkdtemp makes it private
            os.rename(tmp, zoo_dir / entry_id)
            index["entries"][entry_id] = record
            index["aliases"].update({a: entry_id for a in aliases})
            write_index(zoo_dir, index)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return entry_id


def point_alias(alias: str, entry_id: str, zoo_dir: str | Path | None = None) -> str | None:
    """Point ``alias`` at ``entry_id``, an entry of ``zoo_dir`` (default: the user zoo), moving it if it
    pointed elsewhere in that zoo; returns the id it pointed at before (``None``: a new alias). Ids never
    change; an alias is how a zoo says "this is now the model of that name". The alias may not be an id,
    nor an alias of another zoo that a lookup searches first or after (one namespace)."""
    check_name(alias, "alias")
    check_name(entry_id)
    zoo_dir = Path(zoo_dir) if zoo_dir is not None else user_zoo()
    with locked(zoo_dir):
        index = read_index(zoo_dir)
        if entry_id not in index["entries"]:
            raise ZooError(f"no entry {entry_id} in {zoo_dir}; an alias points at an entry of its own zoo")
        before = index["aliases"].get(alias)
        others = dict(index, aliases={k: v for k, v in index["aliases"].items() if k != alias})
        _check_namespace(entry_id, (alias,), zoo_dir, others)
        index["aliases"][alias] = entry_id
        write_index(zoo_dir, index)
    return before


def republish(run_dir: str | Path, entry_id: str, zoo_dir: str | Path | None = None, **options) -> list[int]:
    """Publish ``run_dir`` again over its own entry ``entry_id`` in ``zoo_dir``, keeping the id and every alias;
    returns the entry's snapshot steps. For a run that gained snapshots after it was published (rebuilt by a
    retrace equal to it): the run must be the entry's — the same config and the same metrics, row for row — or
    nothing is written. ``options`` are :func:`publish`'s (dtype, snapshot_dtype, snapshots, description)."""
    run_dir = Path(run_dir)
    zoo_dir = Path(zoo_dir) if zoo_dir is not None else user_zoo()
    entry = zoo_dir / check_name(entry_id)
    if entry_id not in read_index(zoo_dir)["entries"] or not entry.is_dir():
        raise ZooError(f"no entry {entry_id} in {zoo_dir} to publish again")
    if run_id(runs.load_run_config(run_dir)) != run_id(runs.load_run_config(entry)):
        raise ZooError(f"{run_dir} has another config than {entry_id}; an entry is published again only from its own run")
    if runs.read_metrics(run_dir) != runs.read_metrics(entry):
        raise ZooError(f"{run_dir}'s metrics differ from {entry_id}'s; an entry is published again only from its own run")
    staging = Path(tempfile.mkdtemp(dir=zoo_dir, prefix=f".tmp-republish-{entry_id}-"))
    try:
        publish(run_dir, id=entry_id, zoo_dir=staging, **options)
        record = read_index(staging)["entries"][entry_id]
        with locked(zoo_dir):
            index = read_index(zoo_dir)
            old = staging / ".old"
            os.rename(entry, old)
            os.rename(staging / entry_id, entry)
            index["entries"][entry_id] = record
            write_index(zoo_dir, index)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return runs.snapshot_steps_on_disk(entry)
