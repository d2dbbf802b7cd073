"""Task registry: a task is one module plus one line in ``TASKS``.

A task class is built as ``Task(task_cfg, model_cfg)`` and provides ``train_set(seed) -> (tokens,
targets)`` (targets read at the last position), ``evaluate(logits_fn, device) -> metrics`` and
``verdict(metrics) -> str``.
"""

from mechinit.tasks.anchor import AnchorTask

TASKS: dict[str, type] = {
    "anchor": AnchorTask,
}


def make_task(run_cfg):
    """The task object of a :class:`~mechinit.config.RunConfig`."""
    return TASKS[run_cfg.task.name](run_cfg.task, run_cfg.model)
