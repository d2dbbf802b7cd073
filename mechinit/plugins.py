"""Probes and tasks from other packages, through entry points.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."mechinit.tasks"]
    three-anchor = "my_pkg.three_anchor:ThreeAnchorTask"      # a task class

    [project.entry-points."mechinit.probes"]
    attention_entropy = "my_pkg.attention_entropy"           # a probe module (Config, run, hooks, TASKS)

and, once installed, ``mechinit train --set task.name=three-anchor`` and ``mechinit probe --probe
attention_entropy`` find them. Plugins load once, the first time a registry is read. A plugin that
fails to import, or takes a name that exists, is reported in one line on stderr naming the plugin
and its package, and left out; every other probe and task keeps working.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from typing import Callable

GROUPS = ("mechinit.tasks", "mechinit.probes")
_loaded: set[str] = set()
problems: list[str] = []  # every line reported so far


def load(group: str, register: Callable[[str, object], None]) -> None:
    """Register every entry point of ``group`` once per process."""
    if group in _loaded:
        return
    _loaded.add(group)
    for ep in entry_points(group=group):
        package = ep.dist.name if ep.dist is not None else "an unknown package"
        try:
            register(ep.name, ep.load())
        except Exception as e:  # noqa: BLE001 - one plugin must not break the others
            line = f"mechinit: plugin {ep.name!r} ({group}) from package {package} was not loaded: {type(e).__name__}: {e}"
            problems.append(line)
            print(line, file=sys.stderr)
