"""Run folders: the self-describing directory a training run writes (and the zoo publishes).

::

    RUN/config.json                    the four configs, the init table, provenance
    RUN/model.safetensors              final weights
    RUN/checkpoints/step{N}.safetensors  weights at optimizer step N (N=0 is the init)
    RUN/metrics.jsonl                  one JSON line per evaluation
    RUN/README.md                      model card
    RUN/resume/state.safetensors       latest resume state (weights + optimizer); never published
    RUN/resume/state.json

Safetensors and JSON only; nothing is ever unpickled.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from mechinit.config import RunConfig
from mechinit.errors import RunFolderError  # noqa: F401  (re-exported)
from mechinit.files import (  # noqa: F401
    CARD,
    CONFIG,
    DATA,
    METRICS,
    RESUME,
    SNAPSHOTS,
    WEIGHTS,
    atomic_write_bytes,
    read_json,
    read_metrics,
    snapshot_steps,
    write_json,
)


def save_tensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> None:
    """Atomic safetensors write (tensors are copied to contiguous CPU memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        save_file({k: v.detach().to("cpu").contiguous().clone() for k, v in tensors.items()}, tmp, metadata=metadata)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save_weights(path: Path, model: torch.nn.Module) -> None:
    save_tensors(path, weights_of(model))


def weights_of(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Parameters only (TL's attention masks are buffers rebuilt on construction)."""
    return dict(model.named_parameters())


def read_tensors(path: Path) -> dict[str, torch.Tensor]:
    """A safetensors file's tensors; a damaged or foreign file is a :class:`RunFolderError` naming it."""
    try:
        return load_file(str(path))
    except Exception as e:  # noqa: BLE001 - safetensors raises its own (Rust) error types
        raise RunFolderError(f"{path} is not a readable safetensors file ({type(e).__name__}: {e})") from None


def load_weights(model: torch.nn.Module, path: Path) -> None:
    tensors = read_tensors(path)
    expected = weights_of(model)
    missing = sorted(set(expected) - set(tensors))
    if missing:
        raise RunFolderError(f"{path} lacks weights for {missing[:3]} (is it a checkpoint of this model?)")
    wrong = [f"{n} {tuple(tensors[n].shape)} (the model's is {tuple(p.shape)})" for n, p in expected.items() if tensors[n].shape != p.shape]
    if wrong:
        raise RunFolderError(f"{path} holds weights of another shape: {wrong[0]}")
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(tensors[name].to(param.dtype))


def snapshot_path(run_dir: Path, step: int) -> Path:
    return Path(run_dir) / SNAPSHOTS / f"step{step}.safetensors"


def snapshot_steps_on_disk(run_dir: Path) -> list[int]:
    folder = Path(run_dir) / SNAPSHOTS
    return snapshot_steps(f.name for f in folder.glob("step*.safetensors")) if folder.is_dir() else []


def compute_environment() -> dict[str, Any]:
    """What decides the float results of a CPU run besides the config: the CPU kernel set torch
    dispatches to (``avx512``, ``avx2``, ``default``; ``ATEN_CPU_CAPABILITY`` can lower it), the
    thread count, and the machine. Runs are bit-identical only when these agree."""
    return {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "threads": torch.get_num_threads(),
            "machine": platform.machine(), "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}


def provenance() -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    def v(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "mechinit": v("mechinit"),
        "torch": torch.__version__,
        "transformer_lens": v("transformer-lens"),
        "safetensors": v("safetensors"),
        "python": platform.python_version(),
        "git_commit": git_commit(),
        **compute_environment(),
    }


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def load_run_config(run_dir: Path) -> RunConfig:
    path = Path(run_dir) / CONFIG
    if not path.is_file():
        raise RunFolderError(f"{run_dir} is not a run folder: {CONFIG} not found")
    data = read_json(path)
    return RunConfig.from_dict({k: data[k] for k in RunConfig.SECTIONS if k in data})


def write_metrics(run_dir: Path, rows: list[dict]) -> None:
    atomic_write_bytes(Path(run_dir) / METRICS, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode())


def append_metrics(run_dir: Path, row: dict) -> None:
    with open(Path(run_dir) / METRICS, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")
