"""Will a run fit on this machine? A coarse memory estimate, checked before anything is written.

The estimate counts, in float32: parameters with their gradients and AdamW's two moments (4 copies),
the activations of one training batch kept for the backward pass (residual stream, attention
scores and pattern, MLP hidden layer, logits), and the training data held as int64 tokens and
targets. It is meant to refuse what cannot possibly run (``model.n_layers=100000``,
``model.n_ctx=100000``, ``task.n_train=1e10``) with one line naming the estimate, not to predict
memory use closely: runs that pass may still need up to a few times less or somewhat more.
"""

from __future__ import annotations

import os

from mechinit.config import ConfigError, RunConfig

FLOAT = 4
INT = 8
HEADROOM = 0.9  # refuse estimates above this fraction of the memory available


def parameter_count(cfg: RunConfig) -> int:
    """Parameters of the HookedTransformer (or Emb-MLP) ``cfg.model`` describes, biases included
    (exact for biased models; an upper bound by the bias count otherwise)."""
    m = cfg.model
    embed = m.d_vocab * m.d_model * 2 + m.n_ctx * m.d_model + m.d_vocab
    if m.arch == "emb-mlp":  # W_in takes the n_ctx embeddings concatenated (mechinit.model.emb_mlp)
        return m.d_vocab * m.d_model * 2 + m.d_vocab + m.n_ctx * m.d_model * m.d_mlp + m.d_mlp + m.d_mlp * m.d_model + m.d_model
    attn = 4 * m.n_heads * m.d_head * m.d_model + 3 * m.n_heads * m.d_head + m.d_model
    mlp = 2 * m.d_model * m.d_mlp + m.d_mlp + m.d_model
    return embed + m.n_layers * (attn + mlp + 4 * m.d_model) + 2 * m.d_model


def estimate(cfg: RunConfig) -> dict[str, int]:
    """Bytes per part: ``parameters`` (with gradients and AdamW state), ``activations``, ``data``."""
    m, b = cfg.model, cfg.train.batch_size
    per_layer = m.n_ctx * (6 * m.d_model + 2 * m.d_mlp + 4 * m.n_heads * m.d_head) + 2 * m.n_heads * m.n_ctx * m.n_ctx
    activations = b * (m.n_layers * per_layer + 2 * m.n_ctx * m.d_vocab) * FLOAT
    data = cfg.task.n_train * m.n_ctx * 2 * INT
    return {"parameters": 4 * parameter_count(cfg) * FLOAT, "activations": activations, "data": data}


def available_bytes() -> int | None:
    """Memory available to a new process (``MemAvailable`` of /proc/meminfo), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


def check_fits(cfg: RunConfig, members: int = 1, available: int | None = None, cpus: int | None = None) -> None:
    """Raise :class:`ConfigError` when ``members`` runs of ``cfg`` (an ensemble) cannot fit in memory,
    or when ``train.threads`` asks for more threads than this machine has CPUs."""
    cpus = cpus if cpus is not None else os.cpu_count()
    if cfg.train.threads is not None and cpus and cfg.train.threads > cpus:
        raise ConfigError(f"train.threads = {cfg.train.threads} is more than the {cpus} CPUs of this machine")
    parts = {k: v * members for k, v in estimate(cfg).items()}
    where, have = "this machine", available
    if have is None:
        where, have = _device_memory(cfg.train.device)
    if have is None or sum(parts.values()) <= HEADROOM * have:
        return
    detail = ", ".join(f"{k} {_gb(v)}" for k, v in parts.items())
    raise ConfigError(f"this run needs about {_gb(sum(parts.values()))} of memory ({detail}) and {where} has {_gb(have)} "
                      "available; make the model, the batch (train.batch_size) or the data (task.n_train) smaller")


def _device_memory(device: str) -> tuple[str, int | None]:
    """Free memory where training will run: the GPU's for ``cuda`` (and ``auto`` with a GPU), else the host's."""
    if device in ("cuda", "auto"):
        import torch

        if torch.cuda.is_available():
            return "the GPU", torch.cuda.mem_get_info()[0]
    return "this machine", available_bytes()
