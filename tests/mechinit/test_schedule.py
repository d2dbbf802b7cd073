import math

import pytest

from mechinit.config import ConfigError, TrainConfig
from mechinit.training.schedule import log_spaced, lr_at, make_plan


def test_warmup_then_cosine_to_floor():
    cfg = TrainConfig(lr=2.5e-4, lr_multiplier=25, warmup_epochs=10, decay_epochs=200, lr_floor=1e-5, epochs=210, batch_size=10)
    plan = make_plan(cfg, n_train=100)  # 10 steps per epoch
    assert plan.total_steps == 2100 and plan.warmup_steps == 100 and plan.decay_steps == 2000
    assert lr_at(0, cfg, plan) == pytest.approx(1e-5)  # App A: base 1e-5 = peak / 25
    assert lr_at(50, cfg, plan) == pytest.approx((1e-5 + 2.5e-4) / 2)
    assert lr_at(100, cfg, plan) == pytest.approx(2.5e-4)
    assert lr_at(1100, cfg, plan) == pytest.approx(1e-5 + (2.5e-4 - 1e-5) / 2)  # cosine midpoint
    assert lr_at(2100, cfg, plan) == pytest.approx(1e-5)
    lrs = [lr_at(s, cfg, plan) for s in range(100, 2101)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))


def test_a_run_stopped_inside_the_warm_up_keeps_the_full_runs_learning_rates():
    full = TrainConfig(lr=2e-4, lr_multiplier=20, warmup_epochs=10, decay_epochs=200, lr_floor=1e-5, epochs=210, batch_size=10)
    short = TrainConfig(**{**full.to_dict(), "steps": 6})
    full_plan, short_plan = make_plan(full, 100), make_plan(short, 100)
    assert short_plan.total_steps == 6 and short_plan.warmup_steps == full_plan.warmup_steps == 100
    assert [lr_at(s, short, short_plan) for s in range(7)] == [lr_at(s, full, full_plan) for s in range(7)]
    assert lr_at(5, short, short_plan) == pytest.approx(1e-5 + (2e-4 - 1e-5) * 5 / 100)


def test_default_decay_spans_the_rest_of_the_run():
    cfg = TrainConfig(lr=1e-3, warmup_epochs=1, lr_floor=0, epochs=4, batch_size=10)
    plan = make_plan(cfg, 100)
    assert plan.decay_steps == 30
    assert lr_at(40, cfg, plan) == 0
    assert math.isclose(lr_at(25, cfg, plan), 1e-3 * 0.5 * (1 + math.cos(math.pi * 0.5)))


def test_snapshots_are_log_spaced_and_include_init_and_end():
    steps = log_spaced(1000, 5)
    assert steps[0] == 0 and steps[-1] == 1000 and len(steps) == 7
    ratios = [b / a for a, b in zip(steps[1:], steps[2:])]
    assert max(ratios) / min(ratios) < 1.1
    plan = make_plan(TrainConfig(epochs=2, batch_size=10, snapshot_steps=(3, 7)), 100)
    assert plan.snapshots == (0, 3, 7, 20)


def test_plan_errors_name_the_field():
    with pytest.raises(ConfigError, match="train.batch_size = 256 is larger than task.n_train = 100"):
        make_plan(TrainConfig(), 100)
    with pytest.raises(ConfigError, match="train.snapshot_steps has 99"):
        make_plan(TrainConfig(epochs=1, batch_size=10, snapshot_steps=(99,)), 100)


def test_steps_override_epochs():
    assert make_plan(TrainConfig(epochs=5, steps=7, batch_size=10), 100).total_steps == 7


def test_default_evaluation_interval_keeps_evaluation_a_small_share():
    from mechinit.presets import PRESETS, preset
    from mechinit.tasks import make_task

    cfg = TrainConfig(epochs=3, batch_size=512)
    assert make_plan(cfg, 20_480, eval_sequences=40_000).eval_every == 2 * 40  # an epoch shorter than an evaluation
    assert make_plan(cfg, 20_480, eval_sequences=10_000).eval_every == 40
    assert make_plan(cfg, 20_480).eval_every == 40  # a task that does not say: every epoch
    assert make_plan(TrainConfig(epochs=3, batch_size=512, eval_every=7), 20_480, 40_000).eval_every == 7
    for name in PRESETS:  # every preset still evaluates every epoch (or where it says)
        c = preset(name)
        if c.task.name != "anchor":
            continue
        plan = make_plan(c.train, c.task.n_train, make_task(c).eval_sequences)
        assert plan.eval_every == (c.train.eval_every or plan.steps_per_epoch), name
