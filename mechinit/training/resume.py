"""Resume points: the weights and optimizer state of a run at one step, as one atomic unit.

``resume/state.safetensors`` holds the tensors and, in its metadata, the state that belongs to them
(step, elapsed time, the running train-loss sum, and the sha256 of the run's canonical config) —
one file written atomically, so a kill can never pair weights with another step's counters.
``resume/state.json`` is a readable copy, written after it; on load the metadata wins (older resume
points, written before the metadata existed, are read from ``state.json`` as before).
A lock file makes a second process training the same folder fail with one line.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
from pathlib import Path
from typing import Iterator

import torch

from mechinit.config import RunConfig
from mechinit.runs import folder as runs

STATE = "state.safetensors"
META_KEY = "mechinit_resume"


def has_point(out: str | Path) -> bool:
    """Whether the run folder ``out`` holds a resume point to continue from."""
    return (Path(out) / runs.RESUME / STATE).is_file()


def step_of(out: str | Path) -> int:
    """The step of the run folder's resume point (read from its metadata, not its tensors)."""
    from safetensors import safe_open

    with safe_open(str(Path(out) / runs.RESUME / STATE), framework="pt") as f:
        raw = (f.metadata() or {}).get(META_KEY)
    return int(json.loads(raw)["step"]) if raw is not None else int(_legacy_meta(Path(out))["step"])


def config_hash(cfg: RunConfig) -> str:
    return hashlib.sha256(cfg.canonical_json().encode()).hexdigest()


def save(out: Path, model, opt, cfg: RunConfig, step: int, elapsed: float, loss_sum: float = 0.0, n_loss: int = 0) -> None:
    names = {id(p): n for n, p in model.named_parameters()}
    tensors = {f"model.{n}": p for n, p in model.named_parameters()}
    for p, state in opt.state.items():
        for key, value in state.items():
            tensors[f"optim.{names[id(p)]}.{key}"] = value
    meta = {"step": step, "elapsed_s": elapsed, "loss_sum": loss_sum, "n_loss": n_loss, "config_sha256": config_hash(cfg)}
    runs.save_tensors(out / runs.RESUME / STATE, tensors, metadata={META_KEY: json.dumps(meta)})
    runs.write_json(out / runs.RESUME / "state.json", meta)


def load(out: Path, model, opt, cfg: RunConfig) -> tuple[int, float, float, int]:
    """Restore weights and optimizer state; returns ``(step, elapsed_s, loss_sum, n_loss)``. Refuses
    (RunFolderError, one line) a damaged state, one whose config differs from ``config.json``'s, or
    one whose tensors do not fit the model."""
    from safetensors import safe_open

    path = out / runs.RESUME / STATE
    try:
        with safe_open(str(path), framework="pt") as f:
            raw = (f.metadata() or {}).get(META_KEY)
            tensors = {k: f.get_tensor(k) for k in f.keys()}
        meta = json.loads(raw) if raw is not None else _legacy_meta(out)
        step, elapsed = int(meta["step"]), float(meta["elapsed_s"])
    except Exception as e:  # noqa: BLE001 - an untrusted file: safetensors, json and torch each raise their own kinds
        raise runs.RunFolderError(f"{path} is damaged or unreadable ({type(e).__name__}: {str(e)[:80]}); the run cannot resume") from None
    if meta.get("config_sha256") not in (None, config_hash(cfg)):
        raise runs.RunFolderError(f"{out / runs.CONFIG} has changed since this resume point was written; a run resumes only with "
                                  "the config it started with (restore config.json, or start a new run)")
    with torch.no_grad():
        for name, p in model.named_parameters():
            saved = tensors.get(f"model.{name}")
            if saved is None or saved.shape != p.shape:
                raise runs.RunFolderError(f"{path} does not fit the model in {out / runs.CONFIG} ({name}: "
                                          f"{None if saved is None else tuple(saved.shape)} vs {tuple(p.shape)})")
            p.copy_(saved)
            if p.requires_grad and f"optim.{name}.step" in tensors:
                keys = {k.rsplit(".", 1)[-1] for k in tensors if k.startswith(f"optim.{name}.")}
                opt.state[p] = {k: tensors[f"optim.{name}.{k}"].to(p.device if k != "step" else "cpu") for k in keys}
    return step, elapsed, float(meta.get("loss_sum", 0.0)), int(meta.get("n_loss", 0))


def _legacy_meta(out: Path) -> dict:
    meta = runs.read_json(out / runs.RESUME / "state.json")
    if not isinstance(meta, dict):
        raise ValueError("state.json is not a JSON object")
    return meta


@contextlib.contextmanager
def lock(out: Path) -> Iterator[None]:
    """Hold ``out/resume/lock`` while training; a second trainer of the folder gets one line."""
    path = Path(out) / runs.RESUME / "lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise runs.RunFolderError(f"{out} is being trained by another process (lock {path}); wait for it or stop it") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
