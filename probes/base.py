"""The probe contract and what probes share.

A probe module defines ``NAME``, a ``Config`` dataclass (subclass :class:`ProbeConfig`),
``hooks(model, cfg) -> list[str]`` (the only hooks it caches) and
``run(model, task, cfg, snapshots=None) -> Result``. A :class:`Result` holds plain JSON numbers, a
``headline`` of the key ones, ``meta`` (hooks read, layers, weights unprocessed) and a figure
builder; ``to_dict()``, ``figure()`` (plotly, imported lazily) and ``save(dir)``.

Probes read unprocessed weights: models are built by mechinit or loaded from safetensors, never
through ``from_pretrained``'s fold_ln / centring, and every result records ``weights:
"unprocessed"``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from mechinit.config import ConfigError, coerce
from mechinit.errors import ProbeError  # noqa: F401  (re-exported)
from mechinit.tasks.anchor import ITEM_MAX, ITEM_MIN, AnchorTask


@dataclass(frozen=True)
class ProbeConfig:
    """Base of probe configs: dict round-trip and ``with_overrides`` with type coercion.

    Validation like the training configs': every float field must be finite, and a probe's
    ``validate()`` checks its ranges (with :func:`require`), raising ConfigError naming the field.
    Limits that depend on the model (a layer, a head) are checked when the probe runs."""

    NAME = "probe"

    def __post_init__(self):
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"{self.NAME}.{f.name} = {value!r} must be a finite number")
            if hints[f.name] in (tuple[int, ...], tuple[int, ...] | None) and value is not None and len(value) == 0:
                raise ConfigError(f"{self.NAME}.{f.name} is empty; give at least one value")
        self.validate()

    def validate(self) -> None:
        """Range checks of the subclass (none here)."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in dataclasses.fields(self)}

    def with_overrides(self, overrides: dict[str, Any], probe: str = "probe") -> "ProbeConfig":
        hints = typing.get_type_hints(type(self))
        names = {f.name for f in dataclasses.fields(self)}
        values = self.to_dict()
        for key, value in overrides.items():
            if key not in names:
                raise ConfigError(f"unknown key {probe}.{key}; known keys: {sorted(names)}")
            values[key] = coerce(f"{probe}.{key}", value, hints[key])
        return type(self)(**values)


def sig3(value) -> str:
    """A headline value for the table: floats to 3 significant digits, missing as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(sig3(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {sig3(v)}" for k, v in value.items())
    return str(value)


def tsne_2d(vectors: torch.Tensor, seed: int) -> tuple[list[list[float]] | None, str | None]:
    """A 2-D t-SNE of the rows, or ``(None, reason)`` where it would mean nothing or crash:
    scikit-learn's t-SNE segfaults on constant input and raises on non-finite input."""
    from sklearn.manifold import TSNE

    x = vectors.double()
    if len(x) < 5:
        return None, f"{len(x)} points: t-SNE needs at least 5"
    if not torch.isfinite(x).all():
        return None, "non-finite values in the input"
    if (x - x.mean(0)).abs().max() <= 1e-12 * (1 + x.abs().max()):
        return None, "constant input: every point is the same"
    xy = TSNE(n_components=2, perplexity=min(30.0, (len(x) - 1) / 3), random_state=seed, init="pca").fit_transform(x.numpy())
    return xy.tolist(), None


def require(cfg: ProbeConfig, name: str, ok: bool, allowed: str) -> None:
    """Raise ConfigError ``probe.name = value: allowed`` unless ``ok``."""
    if not ok:
        raise ConfigError(f"{cfg.NAME}.{name} = {getattr(cfg, name)!r}: {allowed}")


def require_pair(cfg: ProbeConfig, name: str) -> None:
    """A field holding one anchor pair, e.g. ``4,3``."""
    value = getattr(cfg, name)
    require(cfg, name, len(value) == 2 and all(a in (1, 2, 3, 4) for a in value), "must be two anchors from 1..4, e.g. 4,3")


@dataclass
class Result:
    probe: str
    numbers: dict[str, Any]
    headline: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    draw: Callable[["Result"], Any] | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"probe": self.probe, "headline": self.headline, "numbers": self.numbers, "meta": {"weights": "unprocessed", **self.meta}}

    def figure(self):
        """A plotly figure of the result."""
        if self.draw is None:
            raise ProbeError(f"probe {self.probe} has no figure")
        return self.draw(self)

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{self.probe}.json").write_text(json.dumps(self.to_dict(), indent=2, default=_json_default) + "\n")
        self.figure().write_html(directory / f"{self.probe}.html", include_plotlyjs=True, full_html=True)
        return directory


def _json_default(value):
    if isinstance(value, torch.Tensor):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def finite(x: float) -> float | None:
    """A float for JSON, or None where it is NaN/inf (missing is null, never a number)."""
    x = float(x)
    return x if math.isfinite(x) else None


def cache(model, tokens: torch.Tensor, names: list[str]):
    missing = [n for n in names if n not in model.hook_dict]
    if missing:
        raise ProbeError(f"the model has no hook {missing[0]!r}")
    with torch.no_grad():
        _, c = model.run_with_cache(tokens, names_filter=names)
    return c


def n_layers(model) -> int:
    return model.cfg.n_layers


def check_layer(layer: int, model, what: str) -> int:
    """A 0-based TL block index (negative counts from the end)."""
    L = n_layers(model)
    index = layer if layer >= 0 else L + layer
    if not 0 <= index < L:
        raise ProbeError(f"{what} = {layer} is outside the model's {L} blocks (0..{L - 1}, or negative from the end)")
    return index


def has_attention(model) -> bool:
    return hasattr(model, "blocks") and all(hasattr(b, "attn") for b in model.blocks)


def require_attention(model, probe: str) -> None:
    if not has_attention(model):
        raise ProbeError(f"probe {probe} needs attention layers; this model has none")


def sequences(task: AnchorTask, pair: tuple[int, int], keys: list[int] | torch.Tensor, key_pos: int, seed: int) -> torch.Tensor:
    """Sequences with key ``keys[i]`` at ``key_pos`` followed by ``pair``; noise items from ``seed``
    (the same noise for every key, so a grid differs only in the key and the pair)."""
    keys = torch.as_tensor(keys)
    n_ctx = task.n_ctx
    if not 0 <= key_pos <= n_ctx - 3:
        raise ProbeError(f"key_pos = {key_pos} must be in 0..{n_ctx - 3}")
    noise = torch.randint(ITEM_MIN, ITEM_MAX + 1, (n_ctx,), generator=torch.Generator().manual_seed(seed))
    tokens = noise.repeat(len(keys), 1)
    tokens[:, key_pos] = keys
    tokens[:, key_pos + 1], tokens[:, key_pos + 2] = pair
    return tokens
