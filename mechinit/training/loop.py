"""The training-loop skeleton that solo and ensemble training share.

:func:`run_loop` owns the order of things in a step — forward, stop on a non-finite loss, update,
snapshot, evaluate, resume point, stop on a signal — and the bookkeeping around them (mean training
loss since the last evaluation, samples/s, elapsed time, the progress bar). What a step *is* comes
from a :class:`Stepper`: one model (:mod:`mechinit.training.trainer`) or K stacked ones (:mod:`mechinit.training.ensemble`).
Losses are per member, ``[member]``; a solo run has one member.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Protocol

import torch
from tqdm.auto import tqdm

from mechinit.training.guards import TrainingInterrupted


class Stepper(Protocol):
    members: int

    def forward(self, step: int) -> torch.Tensor:
        """Per-member training losses ``[member]`` of this step's batch, with their graph."""

    def diverged(self, step: int, values: list[float]) -> None:
        """Raise :class:`~mechinit.errors.TrainingDiverged` for a step whose loss is not finite."""

    def update(self, step: int, losses: torch.Tensor) -> None:
        """Backward and optimiser step."""

    def snapshot(self, step: int) -> None:
        """Save the weights after ``step`` steps."""

    def evaluate(self, step: int, elapsed: float, train_losses: list[float] | None, samples_per_s: float | None) -> list[dict]:
        """Evaluate every member, append its metrics row, return the rows."""

    def save_resume(self, step: int, elapsed: float, loss_sums: list[float], n_loss: int) -> None:
        """Write a resume point (a stepper that cannot resume does nothing)."""


@dataclass
class Start:
    """Where a loop begins: step 0, or a resume point's step, clock and loss sums since its last evaluation."""

    step: int = 0
    elapsed: float = 0.0
    loss_sums: list[float] | None = None
    n_loss: int = 0


def run_loop(stepper: Stepper, plan, batch_size: int, start: Start, rows: list[dict], *, desc: str = "train",
             quiet: bool = False, stop=None, resume_every: int | None = None, resume_hint: str = "",
             stop_at: int | None = None) -> list[dict]:
    """Train from ``start.step`` to ``plan.total_steps``; returns the last evaluation's rows.

    ``rows`` are the rows of the last evaluation before ``start`` (shown in the progress bar).
    ``stop`` (from :func:`mechinit.training.guards.stop_on_signals`) ends the loop after the current step
    with a resume point and :class:`TrainingInterrupted`; ``resume_every`` adds resume points
    between evaluations. ``stop_at`` (a step before the plan's end) ends the loop there with a resume
    point; the plan — schedule, evaluations, snapshots — stays the full run's."""
    step, elapsed, n_loss = start.step, start.elapsed, start.n_loss
    loss_sums = list(start.loss_sums) if start.loss_sums is not None else [0.0] * stepper.members
    bar = tqdm(total=plan.total_steps, initial=step, disable=quiet, desc=desc, dynamic_ncols=True)
    t_mark, n_timed = time.perf_counter(), 0  # n_timed: steps since t_mark in this process
    try:
        end = plan.total_steps if stop_at is None else min(stop_at, plan.total_steps)
        while step < end:
            losses = stepper.forward(step)
            values = losses.detach().cpu().tolist()
            if not all(math.isfinite(v) for v in values):
                bar.close()
                stepper.diverged(step, values)
            stepper.update(step, losses)
            step += 1
            loss_sums = [s + v for s, v in zip(loss_sums, values)]
            n_loss, n_timed = n_loss + 1, n_timed + 1
            bar.update(1)
            if step % 10 == 0 and n_loss:
                bar.set_postfix_str(f"loss {sum(loss_sums) / len(loss_sums) / n_loss:.3g} (since last eval) {_verdicts(rows)}", refresh=False)
            if step in plan.snapshots:
                stepper.snapshot(step)
            if step % plan.eval_every == 0 or step == plan.total_steps:
                seconds = time.perf_counter() - t_mark
                elapsed += seconds
                bar.set_postfix_str(f"evaluating at step {step}…")
                rows = stepper.evaluate(step, elapsed, [s / n_loss for s in loss_sums], n_timed * batch_size / seconds)
                stepper.save_resume(step, elapsed, [0.0] * stepper.members, 0)
                bar.set_postfix_str(f"loss {sum(r['train_loss'] for r in rows) / len(rows):.3g} {_verdicts(rows)}")
                loss_sums, n_loss, n_timed, t_mark = [0.0] * stepper.members, 0, 0, time.perf_counter()
            elif stop or (resume_every and step % resume_every == 0) or step == end:
                stepper.save_resume(step, elapsed + time.perf_counter() - t_mark, loss_sums, n_loss)
            if stop and step < plan.total_steps:
                raise TrainingInterrupted(f"{stop.signal} at step {step}: resume point saved; {resume_hint}")
    finally:
        bar.close()
    return rows


def _verdicts(rows: list[dict]) -> str:
    return rows[0].get("verdict", "") if len(rows) == 1 else ""
