"""Task registry: a task is one module plus one line in ``TASKS``.

The contract is :class:`Task` (a ``typing.Protocol``, checked by :func:`register`). A task class is
built as ``Task(task_cfg, model_cfg)`` and provides ``train_set(seed) -> (tokens, targets)``,
``n_train``, ``target_positions`` (``"last"``: one target per sequence, read at the last position;
``"all"``: a target per position, ``IGNORE`` where there is none), ``evaluate(logits_fn, device) ->
metrics`` (``logits_fn`` gives last-position or all-position logits, as ``target_positions`` says;
the metrics dict holds ``headline``) and ``verdict(metrics) -> str``.

Optional: ``Options`` (a frozen :class:`~mechinit.config.TaskOptions` dataclass: the task's own
``task.*`` config fields, read from ``task_cfg.options``), ``metrics`` (a
:class:`~mechinit.tasks.vocabulary.Vocabulary`: which metrics the CLI, card, sweeps and zoo show),
``HEADLINE`` (what the ``headline`` metric means, for the model card), ``artifacts()`` (JSON kept in
the run folder as ``data.json``), ``token_groups()`` (for ``embedding_cosine``), ``eval_sequences``
(sequences one evaluation scores; sets the default evaluation interval) and
``with_max_over_training(metrics, previous_rows)``.
"""

import dataclasses
from typing import Callable, Protocol, runtime_checkable

from mechinit.tasks.addition import AdditionTask
from mechinit.tasks.anchor import AnchorTask
from mechinit.tasks.cogs import CogsTask
from mechinit.tasks.prontoqa import ProntoqaTask
from mechinit.tasks.reasoning_memory import ReasoningMemoryTask
from mechinit.tasks.scan import ScanTask

TASKS: dict[str, type] = {
    "anchor": AnchorTask,
    "reasoning-memory": ReasoningMemoryTask,
    "addition": AdditionTask,
    "prontoqa": ProntoqaTask,
    "scan": ScanTask,
    "cogs": CogsTask,
}


@runtime_checkable
class Task(Protocol):
    """What the trainer, the evaluator and the probes need from a task class."""

    target_positions: str

    @property
    def n_train(self) -> int: ...

    def train_set(self, seed: int) -> tuple: ...

    def evaluate(self, logits_fn: Callable, device: str = "cpu") -> dict: ...

    def verdict(self, metrics: dict) -> str: ...


TARGET_POSITIONS = ("last", "all")


def check_task_class(name: str, task_class: object) -> None:
    """Raise ConfigError naming what ``task_class`` lacks of the :class:`Task` contract."""
    from mechinit.errors import ConfigError
    from mechinit.task_options import TaskOptions
    from mechinit.tasks.vocabulary import Vocabulary

    if not isinstance(task_class, type):
        raise ConfigError(f"task {name!r}: {task_class!r} is not a class")
    missing = [m for m in ("target_positions", "n_train", "train_set", "evaluate", "verdict") if not hasattr(task_class, m)]
    if missing or not isinstance(task_class, Task):
        raise ConfigError(f"task {name!r}: {task_class.__name__} is not a task class (missing {missing}; see mechinit.tasks.Task)")
    if task_class.target_positions not in TARGET_POSITIONS:
        raise ConfigError(f"task {name!r}: target_positions = {task_class.target_positions!r} must be one of {list(TARGET_POSITIONS)}")
    options = getattr(task_class, "Options", None)
    if options is not None and not (isinstance(options, type) and issubclass(options, TaskOptions) and dataclasses.is_dataclass(options)):
        raise ConfigError(f"task {name!r}: Options must be a dataclass subclassing mechinit.config.TaskOptions")
    if options is not None:
        common = {f.name for f in dataclasses.fields(options)} & {"name", "n_train", "n_eval", "n_eval_train", "eval_seed", "options"}
        if common:
            raise ConfigError(f"task {name!r}: Options fields {sorted(common)} clash with TaskConfig's common fields")
    if not isinstance(getattr(task_class, "metrics", Vocabulary()), Vocabulary):
        raise ConfigError(f"task {name!r}: metrics must be a mechinit.tasks.vocabulary.Vocabulary")


def register(name: str, task_class: type) -> None:
    """Add a task under ``name`` (user code or a ``mechinit.tasks`` entry point); a name that
    exists is an error, and so is a class that breaks the :class:`Task` contract."""
    from mechinit.errors import ConfigError

    if name in TASKS:
        raise ConfigError(f"task {name!r} is already registered ({TASKS[name].__module__}.{TASKS[name].__name__})")
    check_task_class(name, task_class)
    TASKS[name] = task_class


def registered() -> dict[str, type]:
    """Every task, the ``mechinit.tasks`` entry points included."""
    from mechinit import plugins

    plugins.load("mechinit.tasks", register)
    return TASKS


def vocabulary_of(task_name: str | None):
    """The :class:`~mechinit.tasks.vocabulary.Vocabulary` of a registered task (the default one for an unknown name)."""
    from mechinit.tasks.vocabulary import DEFAULT, Vocabulary

    task_class = registered().get(task_name) if task_name else None
    vocab = getattr(task_class, "metrics", None)
    return vocab if isinstance(vocab, Vocabulary) else DEFAULT


def make_task(run_cfg):
    """The task object of a :class:`~mechinit.config.RunConfig`."""
    return registered()[run_cfg.task.name](run_cfg.task, run_cfg.model)
