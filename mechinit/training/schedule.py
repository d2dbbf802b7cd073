"""Step arithmetic of a run: learning rate per step, evaluation and snapshot steps.

The learning rate (App A, DESIGN Decisions): ``train.lr`` is the peak. It warms up linearly from
``lr / lr_multiplier`` over ``warmup_epochs``, then decays by a cosine to ``lr_floor`` over
``decay_epochs`` (default: the rest of the run) and stays there. It is a pure function of the step,
so a resumed run needs no scheduler state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mechinit.config import ConfigError, TrainConfig


@dataclass(frozen=True)
class Plan:
    steps_per_epoch: int
    total_steps: int
    warmup_steps: int
    decay_steps: int
    eval_every: int
    snapshots: tuple[int, ...]


def default_eval_every(steps_per_epoch: int, batch_size: int, eval_sequences: int | None) -> int:
    """Evaluate every k epochs, k the smallest that keeps evaluation to about a quarter of the run:
    one evaluation sequence costs about a quarter of a training sequence (forward only, last
    position only in the last block; measured at the CPU presets), so k = ceil(evaluation sequences
    / training sequences per epoch). Every shipped preset gets k = 1; a task that does not say how
    many sequences it evaluates (``eval_sequences`` None) is evaluated every epoch."""
    if not eval_sequences:
        return steps_per_epoch
    return steps_per_epoch * max(1, math.ceil(eval_sequences / (steps_per_epoch * batch_size)))


def make_plan(cfg: TrainConfig, n_train: int, eval_sequences: int | None = None) -> Plan:
    """Step arithmetic of a run; ``eval_sequences`` (how many sequences one evaluation scores) sets
    the default evaluation interval (:func:`default_eval_every`) when ``train.eval_every`` is None."""
    steps_per_epoch = n_train // cfg.batch_size
    if steps_per_epoch < 1:
        raise ConfigError(f"train.batch_size = {cfg.batch_size} is larger than task.n_train = {n_train}")
    total = cfg.steps if cfg.steps is not None else cfg.epochs * steps_per_epoch
    warmup = round(cfg.warmup_epochs * steps_per_epoch)  # in epochs: a run stopped inside it keeps the full run's lr path
    decay = round(cfg.decay_epochs * steps_per_epoch) if cfg.decay_epochs is not None else total - warmup
    snaps = cfg.snapshot_steps if cfg.snapshot_steps is not None else log_spaced(total, cfg.n_snapshots)
    bad = [s for s in snaps if not 0 <= s <= total]
    if bad:
        raise ConfigError(f"train.snapshot_steps has {bad[0]}, outside 0..{total} (the run's steps)")
    eval_every = cfg.eval_every or default_eval_every(steps_per_epoch, cfg.batch_size, eval_sequences)
    return Plan(steps_per_epoch, total, warmup, max(decay, 1), eval_every, tuple(sorted(set(snaps) | {0, total})))


def log_spaced(total: int, n: int) -> tuple[int, ...]:
    """``0``, ``total`` and ``n`` roughly log-spaced steps in between (integers, deduplicated)."""
    if total <= 0 or n <= 0:
        return (0, total)
    steps = {0, total}
    for i in range(n):
        steps.add(int(round(math.exp(math.log(total) * (i + 1) / (n + 1)))))
    return tuple(sorted(steps))


def lr_at(step: int, cfg: TrainConfig, plan: Plan) -> float:
    start = cfg.lr / cfg.lr_multiplier
    if step < plan.warmup_steps:
        return start + (cfg.lr - start) * step / plan.warmup_steps
    t = (step - plan.warmup_steps) / plan.decay_steps
    if t >= 1.0:
        return cfg.lr_floor
    return cfg.lr_floor + (cfg.lr - cfg.lr_floor) * 0.5 * (1.0 + math.cos(math.pi * t))


def weight_decay_at(step: int, cfg: TrainConfig, plan: Plan) -> float:
    """``train.weight_decay`` inside ``train.weight_decay_window`` (fractions of the planned steps,
    start inclusive, end exclusive), 0 outside it."""
    start, end = cfg.weight_decay_window
    return cfg.weight_decay if start * plan.total_steps <= step < end * plan.total_steps else 0.0
