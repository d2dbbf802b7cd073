"""The base of a task's own config options (``task.<field>`` beside TaskConfig's common fields): a leaf
module, so that task modules can define their options without importing the run config."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from mechinit.fields import _Section


class TaskOptions(_Section):
    """Base of a task's own options: ``task.<field>`` in config files, beside :class:`TaskConfig`'s
    common fields. A task class names its frozen options dataclass as ``Options`` (a task without
    options gets :class:`NoOptions`); the dataclass validates its fields in ``__post_init__``.

    Run ids were first minted while ``TaskConfig`` was the union of every task's fields, so every
    id hashes the anchor task's ``variant``, ``groups`` and ``label_threshold``. Options that do not
    own those fields add their union-era values (``UNION_ERA_ID``) to the canonical form: no
    existing id changes, and the values mean nothing to the task."""

    SECTION = "task"
    UNION_ERA_ID: dict[str, Any] = {"variant": "paper", "groups": 0, "label_threshold": 0.9}

    def canonical_dict(self) -> dict[str, Any]:
        own = {f.name for f in dataclasses.fields(self)}
        return {**{k: v for k, v in self.UNION_ERA_ID.items() if k not in own}, **super().canonical_dict()}


@dataclass(frozen=True)
class NoOptions(TaskOptions):
    """The options of a task that has none."""


def _options_class(task_class: type) -> type:
    return getattr(task_class, "Options", NoOptions)


# What a task class is built from, named for annotations: the run config's sections
# (mechinit.config.TaskConfig and ModelConfig). Tasks never import the run config: the config asks the
# task registry for a task's options, and an import back would close a loop.
TaskSection = Any
ModelSection = Any
