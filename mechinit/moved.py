"""Module paths of 0.2 that moved into the stage packages of 0.3: importing an old path still works
for one release, with a ``DeprecationWarning`` that names the new one (``import mechinit.train`` →
:mod:`mechinit.training.trainer`). ``mechinit.model`` and ``mechinit.runs`` are packages now and keep
their names and their public functions."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

MOVED = {
    "mechinit.init": "mechinit.model.init",
    "mechinit.fastpath": "mechinit.model.fastpath",
    "mechinit.emb_mlp": "mechinit.model.emb_mlp",
    "mechinit.stacked": "mechinit.model.stacked",
    "mechinit.train": "mechinit.training.trainer",
    "mechinit.loop": "mechinit.training.loop",
    "mechinit.schedule": "mechinit.training.schedule",
    "mechinit.resume": "mechinit.training.resume",
    "mechinit.guards": "mechinit.training.guards",
    "mechinit.budget": "mechinit.training.budget",
    "mechinit.ensemble": "mechinit.training.ensemble",
    "mechinit.replay": "mechinit.training.replay",
    "mechinit.card": "mechinit.runs.card",
    "mechinit.ids": "mechinit.runs.ids",
    "mechinit.targets": "mechinit.runs.targets",
    "mechinit.sweep": "mechinit.sweeps.grid",
    "mechinit.sweep_workers": "mechinit.sweeps.workers",
    "mechinit.sweep_report": "mechinit.sweeps.report",
}
# names that changed with the move: old module -> {old name: new name}
RENAMED = {"mechinit.targets": {"load_target": "target_from_path"}}


class _OldPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a moved module's old name and loads a stand-in that hands every attribute on."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} moved to {new}; import it from there (the old path goes in the next release)",
                      DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__dict__.update({k: v for k, v in vars(target).items() if not k.startswith("__")})
        module.__dict__.update({old: getattr(target, now) for old, now in RENAMED.get(module.__name__, {}).items()})
        module.__doc__ = target.__doc__


def install() -> None:
    if not any(isinstance(f, _OldPath) for f in sys.meta_path):
        sys.meta_path.append(_OldPath())
