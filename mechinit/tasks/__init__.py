"""Task registry: a task is one module plus one line in ``TASKS``.

A task class is built as ``Task(task_cfg, model_cfg)`` and provides ``train_set(seed) -> (tokens,
targets)``, ``n_train``, ``target_positions`` (``"last"``: one target per sequence, read at the last
position; ``"all"``: a target per position, ``IGNORE`` where there is none),
``evaluate(logits_fn, device) -> metrics`` (``logits_fn`` gives last-position or all-position
logits, as ``target_positions`` says) and ``verdict(metrics) -> str``. Optional: ``artifacts()``
(JSON kept in the run folder as ``data.json``), ``token_groups()`` (for ``embedding_cosine``) and
``HEADLINE`` (what the ``headline`` metric means, for the model card).
"""

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


def register(name: str, task_class: type) -> None:
    """Add a task under ``name`` (user code or a ``mechinit.tasks`` entry point); a name that
    exists is an error. The class follows the contract in this module's docstring."""
    from mechinit.config import ConfigError

    if name in TASKS:
        raise ConfigError(f"task {name!r} is already registered ({TASKS[name].__module__}.{TASKS[name].__name__})")
    if not isinstance(task_class, type) or not all(hasattr(task_class, a) for a in ("train_set", "evaluate", "verdict")):
        raise ConfigError(f"task {name!r}: {task_class!r} is not a task class (needs train_set, evaluate and verdict)")
    TASKS[name] = task_class


def registered() -> dict[str, type]:
    """Every task, the ``mechinit.tasks`` entry points included."""
    from mechinit import plugins

    plugins.load("mechinit.tasks", register)
    return TASKS


def make_task(run_cfg):
    """The task object of a :class:`~mechinit.config.RunConfig`."""
    return registered()[run_cfg.task.name](run_cfg.task, run_cfg.model)
