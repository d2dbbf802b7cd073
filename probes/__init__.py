"""Hook-based probes of the paper's mechanism analyses: one module per probe plus one registry line.

>>> import probes
>>> probes.available()
>>> result = probes.run("condensation", model, task, threshold=0.8)
>>> result.headline, result.to_dict(), result.figure(), result.save("out/")
"""

from __future__ import annotations

from types import ModuleType

from probes import condensation, cosine_maps, embedding_spectrum, information_flow, representation_tsne
from probes.base import ProbeError, Result

PROBES: dict[str, ModuleType] = {
    "information_flow": information_flow,
    "representation_tsne": representation_tsne,
    "cosine_maps": cosine_maps,
    "condensation": condensation,
    "embedding_spectrum": embedding_spectrum,
}


def available() -> list[str]:
    return list(PROBES)


def get(name: str) -> ModuleType:
    if name not in PROBES:
        raise ProbeError(f"unknown probe {name!r}; available: {available()}")
    return PROBES[name]


def run(name: str, model, task, snapshots=None, **overrides) -> Result:
    """Run probe ``name`` with its default Config updated by ``overrides``."""
    module = get(name)
    cfg = module.Config().with_overrides(overrides, name)
    return module.run(model, task, cfg, snapshots=snapshots)


__all__ = ["PROBES", "ProbeError", "Result", "available", "get", "run"]
