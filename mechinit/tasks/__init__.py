"""Task registry: a task is one module plus one line in ``TASKS``.

A task class is built as ``Task(task_cfg, model_cfg)`` and provides ``train_set(seed) -> (tokens,
targets)``, ``n_train``, ``target_positions`` (``"last"``: one target per sequence, read at the last
position; ``"all"``: a target per position, ``IGNORE`` where there is none),
``evaluate(logits_fn, device) -> metrics`` (``logits_fn`` gives last-position or all-position
logits, as ``target_positions`` says) and ``verdict(metrics) -> str``. Optional: ``artifacts()``
(JSON kept in the run folder as ``data.json``) and ``token_groups()`` (for ``embedding_cosine``).
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


def make_task(run_cfg):
    """The task object of a :class:`~mechinit.config.RunConfig`."""
    return TASKS[run_cfg.task.name](run_cfg.task, run_cfg.model)
