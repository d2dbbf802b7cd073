"""Hook-based probes of the paper's mechanism analyses: one module per probe plus one registry line.

>>> from mechinit import probes
>>> probes.available()
>>> result = probes.run("condensation", model, task, threshold=0.8)
>>> result.headline, result.to_dict(), result.figure(), result.save("out/")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mechinit.probes import (
    condensation,
    cosine_maps,
    deviation,
    embedding_cosine,
    embedding_spectrum,
    information_flow,
    key_position,
    logit_lens,
    patching,
    representation_tsne,
)
from mechinit.probes.base import ProbeError, Result


@dataclass(frozen=True)
class Probe:
    """The one shape of a registered probe, built in or added: its name, ``run(model, task, cfg,
    snapshots=None) -> Result``, its ``Config`` (a :class:`~mechinit.probes.base.ProbeConfig`), the hooks
    it reads (``hooks(model, cfg) -> list``), the tasks it applies to (``None``: any), whether it needs
    attention layers, and the module that defines it."""

    NAME: str
    run: Callable
    Config: type
    hooks: Callable
    TASKS: tuple[str, ...] | None
    NEEDS_ATTENTION: bool
    module: str


def _no_hooks(model, cfg) -> list:
    return []


def _probe(name: str, run, Config: type, hooks=None, tasks=None, needs_attention: bool = False) -> Probe:
    from mechinit.probes.base import ProbeConfig

    if not (isinstance(Config, type) and issubclass(Config, ProbeConfig)) or not callable(run):
        raise ProbeError(f"probe {name!r}: needs a callable run and a Config subclassing mechinit.probes.base.ProbeConfig")
    return Probe(name, run, Config, hooks or _no_hooks, tasks, needs_attention, getattr(run, "__module__", name))


def from_module(module, name: str | None = None) -> Probe:
    """A probe module (``NAME``, ``Config``, ``run``; ``hooks``, ``TASKS``, ``NEEDS_ATTENTION`` optional) as a :class:`Probe`."""
    return _probe(name or module.NAME, module.run, module.Config, getattr(module, "hooks", None), getattr(module, "TASKS", None),
                  getattr(module, "NEEDS_ATTENTION", False))


PROBES: dict[str, Probe] = {m.NAME: from_module(m) for m in (
    information_flow, representation_tsne, cosine_maps, condensation, embedding_spectrum, embedding_cosine, patching, logit_lens,
    key_position, deviation)}


def register(name: str, run, Config: type, hooks=None, tasks: tuple[str, ...] | None = None, needs_attention: bool = False) -> None:
    """Add a probe from user code: ``run(model, task, cfg, snapshots=None) -> Result``, its ``Config``
    dataclass (a :class:`ProbeConfig`), the hooks it reads (``hooks(model, cfg) -> list``; default
    none), the task names it applies to (``None``: any) and whether it needs attention layers.
    A name that exists is an error."""
    if name in PROBES:
        raise ProbeError(f"probe {name!r} is already registered ({PROBES[name].module})")
    PROBES[name] = _probe(name, run, Config, hooks, tasks, needs_attention)


def _register_module(name: str, module) -> None:
    """A ``mechinit.probes`` entry point: a module with ``Config`` and ``run`` (``hooks``, ``TASKS`` optional)."""
    if name in PROBES:
        raise ProbeError(f"probe {name!r} is already registered ({PROBES[name].module})")
    PROBES[name] = from_module(module, name)


def _plugins() -> None:
    from mechinit import plugins

    plugins.load("mechinit.probes", _register_module)


def available() -> list[str]:
    _plugins()
    return list(PROBES)


def get(name: str) -> Probe:
    _plugins()
    if name not in PROBES:
        raise ProbeError(f"unknown probe {name!r}; available: {available()}")
    return PROBES[name]


def not_applicable(name: str, task, model=None) -> str | None:
    """Why probe ``name`` cannot read ``model`` of ``task`` (its ``TASKS``, ``NEEDS_ATTENTION``), or ``None``."""
    from mechinit.probes.base import has_attention

    probe = get(name)
    if probe.TASKS is not None and task.cfg.name not in probe.TASKS:
        return f"probe {name} reads models of the {' / '.join(probe.TASKS)} task; this target's task is {task.cfg.name}"
    if model is not None and probe.NEEDS_ATTENTION and not has_attention(model):
        return f"probe {name} needs attention layers; this model has none"
    return None


def applicable(task, model=None) -> list[str]:
    return [name for name in available() if not_applicable(name, task, model) is None]


def run(name: str, model, task, snapshots=None, **overrides) -> Result:
    """Run probe ``name`` with its default Config updated by ``overrides``."""
    module = get(name)
    reason = not_applicable(name, task, model)
    if reason:
        raise ProbeError(reason)
    cfg = module.Config().with_overrides(overrides, name)
    return module.run(model, task, cfg, snapshots=snapshots)


def split_overrides(sets: dict[str, str], names: list[str]) -> dict[str, dict[str, str]]:
    """``{"condensation.threshold": "0.8"}`` -> ``{"condensation": {"threshold": "0.8"}, ...}`` for ``names``."""
    overrides: dict[str, dict[str, str]] = {name: {} for name in names}
    for key, value in sets.items():
        probe, _, field = key.partition(".")
        if probe not in overrides or not field:
            raise ProbeError(f"--set {key}: keys look like PROBE.FIELD with PROBE one of {names}")
        overrides[probe][field] = value
    return overrides


def run_all(targets, names: list[str] | None = None, sets: dict[str, str] | None = None, progress: bool = False) -> dict[str, dict[str, Result]]:
    """Every probe in ``names`` (default: all that apply to every target) on every target:
    ``{target.name: {probe: Result}}``."""
    from tqdm.auto import tqdm

    if not names:  # the probes that apply to every target
        names = [n for n in available() if all(not_applicable(n, t.task, t.model) is None for t in targets)]
    for name in names:
        get(name)
    overrides = split_overrides(sets or {}, names)
    results: dict[str, dict[str, Result]] = {}
    with tqdm(total=len(targets) * len(names), disable=not progress, desc="probes") as bar:
        for target in targets:
            results[target.name] = {}
            for name in names:
                bar.set_postfix_str(f"{target.name}: {name}")
                results[target.name][name] = run(name, target.model, target.task, snapshots=target.snapshots, **overrides[name])
                bar.update(1)
    return results


__all__ = ["PROBES", "Probe", "from_module", "run_all", "split_overrides", "ProbeError", "Result", "available", "applicable", "get", "register", "run"]
