"""A task's metric vocabulary: which of its metrics are shown where.

Generic code — the CLI's summaries, the model card, sweeps and their report, the zoo index — knows
only the numbers every task has (``step``, ``train_loss``, ``headline``, ``verdict`` and the sweep's
``epochs_to_loss``) and asks the task's :class:`Vocabulary` for everything else. A task class names
its vocabulary as ``metrics`` (a :class:`Vocabulary` instance); a task without one shows its headline
and verdict only. Every method reads metrics rows (dicts from ``metrics.jsonl``), never the task's
data, so a report can be drawn without building the task.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A number a sweep keeps per run and reduces per cell.

    ``best``: how a cell picks its best run over the ``best_over`` keys (``max`` or ``min``);
    ``bounded``: a fraction in [0, 1] (heatmaps use a fixed 0..1 colour scale); ``never``: a finished
    run's ``None`` means the target was never reached (epochs-to-target metrics), so the best over
    ``best_over`` is taken over the runs that reached it (none reached: ``None``); otherwise any
    ``None`` makes the best ``None``."""

    key: str
    title: str
    best: str = "max"
    bounded: bool = True
    never: bool = False

    def __post_init__(self):
        if self.best not in ("max", "min"):
            raise ValueError(f"Metric.best = {self.best!r} must be 'max' or 'min'")


HEADLINE = Metric("headline", "the task's headline metric")
EPOCHS_TO_LOSS = Metric("epochs_to_loss", "epochs for the training loss to reach 5e-2", best="min", bounded=False, never=True)
LOSS_TARGET = 5e-2  # App G / Fig 18: epochs until the training loss reaches 5e-2


def fmt(value, spec: str = ".3f") -> str:
    """A number for a text line; missing is ``null``."""
    return "null" if value is None else format(value, spec) if isinstance(value, float) else str(value)


class Vocabulary:
    """The default vocabulary: a task whose summary number is its headline. Subclass and override."""

    summary_keys: tuple[str, ...] = ()  # keys of a metrics row printed under the headline after training
    sweep_metrics: tuple[Metric, ...] = ()  # numbers a sweep keeps per run, beyond headline and epochs_to_loss
    plotted: tuple[Metric, ...] = (HEADLINE,)  # what the sweep report draws (heatmaps, or curves over one axis)
    table: tuple[Metric, ...] = (HEADLINE,)  # columns of the sweep report's cells table
    subject: str = ""  # what the plotted numbers are, for figure titles ("(4,3) accuracy")
    shade: tuple[str, float, str] | None = None  # (metric key, threshold, title): heatmap cells below are greyed
    report_note: str = ""  # one sentence for the sweep report's header

    def summary_lines(self, row: dict) -> list[str]:
        """Extra lines printed after the summary keys (e.g. per-pair verdicts)."""
        return []

    def sweep_record(self, rows: list[dict]) -> dict:
        """Per-run values of :attr:`sweep_metrics` (and any extras a figure needs) from its metrics rows."""
        return {}

    def card_lines(self, row: dict) -> list[str]:
        """Markdown lines for the model card, after the headline."""
        return []

    def model_rows(self, row: dict) -> dict[str, float | str | None]:
        """Rows of the probe report's model table after the model's axes (label -> a number, a text,
        or ``None`` for missing), from its metrics row."""
        return {"headline": row.get("headline")}

    def precision_record(self, row: dict) -> dict:
        """What a lower-precision zoo entry must reproduce of the run's last metrics row (``{}``: nothing)."""
        return {}

    def index_row(self, task_options: dict, row: dict) -> dict:
        """Zoo index columns of an entry, from its task options (``config.json``'s ``task``) and
        its last metrics row."""
        return {}

    def figures(self, summary: dict) -> list:
        """Extra plotly figures for the sweep report."""
        return []


DEFAULT = Vocabulary()
