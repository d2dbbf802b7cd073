"""``train.init_seed`` / ``train.data_seed`` split the seed; ``train.weight_decay_window`` confines weight
decay to a part of the run; ``--stop-at`` stops with a resume point that continues bit-identically."""

import pytest
import torch
from safetensors.torch import load_file

from mechinit import runs
from mechinit.cli import main
from mechinit.config import ConfigError
from mechinit.runs.ids import run_id
from mechinit.training.trainer import SoloStepper, train
from tests.conftest import build_cfg


def weights(path) -> dict:
    return load_file(str(path))


def first_batch(cfg, tmp_path) -> torch.Tensor:
    from mechinit.tasks import make_task
    from mechinit.training.schedule import make_plan

    task = make_task(cfg)
    stepper = SoloStepper(cfg, tmp_path, "cpu", task, make_plan(cfg.train, task.n_train), torch.nn.Linear(1, 1),
                          torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1))
    return stepper.tokens[stepper.permutation(0)[: cfg.train.batch_size]]


def test_data_seed_changes_the_batches_not_the_weights_and_init_seed_the_weights_not_the_batches(tmp_path):
    base = build_cfg(**{"train.epochs": 1, "train.threads": 1})
    other_data = base.with_overrides({"train.data_seed": 5})
    other_init = base.with_overrides({"train.init_seed": 5})
    for name, cfg in (("base", base), ("data", other_data), ("init", other_init)):
        train(cfg, tmp_path / name, quiet=True)
    step0 = {name: weights(runs.snapshot_path(tmp_path / name, 0)) for name in ("base", "data", "init")}
    assert all(torch.equal(step0["base"][k], step0["data"][k]) for k in step0["base"])
    assert not torch.equal(step0["base"]["blocks.0.attn.W_Q"], step0["init"]["blocks.0.attn.W_Q"])
    assert not torch.equal(first_batch(base, tmp_path), first_batch(other_data, tmp_path))
    assert torch.equal(first_batch(base, tmp_path), first_batch(other_init, tmp_path))
    assert len({run_id(c) for c in (base, other_data, other_init)}) == 3


def test_seeds_equal_to_train_seed_are_the_same_run_and_old_ids_do_not_change():
    base = build_cfg()
    assert base.with_overrides({"train.init_seed": 0, "train.data_seed": "0"}) == base
    assert run_id(base) == run_id(build_cfg(**{"train.weight_decay_window": "0,1"}))
    card = base.with_overrides({"train.data_seed": 3}).train
    assert (card.weights_seed, card.order_seed) == (0, 3)


@pytest.mark.parametrize("key, value, words", [
    ("train.init_seed", "-1", "train.init_seed"), ("train.data_seed", "1.5", "train.data_seed"),
    ("train.weight_decay_window", "0.5", "train.weight_decay_window"), ("train.weight_decay_window", "0.6,0.5", "0 <= start < end <= 1"),
    ("train.weight_decay_window", "0,1.5", "0 <= start < end <= 1"), ("train.weight_decay_window", "0,nan", "train.weight_decay_window"),
    ("train.weight_decay_window", "0,0.5,1", "train.weight_decay_window"), ("train.weight_decay_window", "a,b", "train.weight_decay_window")])
def test_bad_seeds_and_windows_are_one_line_exit_2_and_nothing_written(key, value, words, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--preset", "tiny", "--set", f"{key}={value}", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and not out.exists()


def test_both_window_spellings_parse():
    assert build_cfg(**{"train.weight_decay_window": "0.5,1"}).train.weight_decay_window == (0.5, 1.0)
    assert build_cfg(**{"train.weight_decay_window": "[0.5, 1]"}).train.weight_decay_window == (0.5, 1.0)
    with pytest.raises(ConfigError):
        build_cfg(**{"train.weight_decay_window": "[1, 0.5]"})


def test_a_late_window_equals_no_weight_decay_before_half_way_and_differs_at_the_end(tmp_path):
    common = {"train.epochs": 4, "train.threads": 1, "train.weight_decay": 0.5, "train.n_snapshots": 6}
    train(build_cfg(**common, **{"train.weight_decay_window": "0.5,1"}), tmp_path / "window", quiet=True)
    train(build_cfg(**{**common, "train.weight_decay": 0.0}), tmp_path / "none", quiet=True)
    total = runs.read_metrics(tmp_path / "none")[-1]["step"]
    steps = runs.snapshot_steps_on_disk(tmp_path / "none")
    before = [s for s in steps if s <= total // 2]
    assert len(before) >= 3
    for s in before:  # decay first acts in the update of step total/2, so the weights after it are the first to differ
        a, b = weights(runs.snapshot_path(tmp_path / "window", s)), weights(runs.snapshot_path(tmp_path / "none", s))
        assert all(torch.equal(a[k], b[k]) for k in a), s
    end_a, end_b = weights(tmp_path / "window" / runs.WEIGHTS), weights(tmp_path / "none" / runs.WEIGHTS)
    assert not torch.equal(end_a["blocks.0.attn.W_Q"], end_b["blocks.0.attn.W_Q"])


def test_stop_at_writes_a_resume_point_and_the_resume_is_bit_identical(tmp_path, capsys):
    args = ["--preset", "tiny", "--set", "train.epochs=3", "--set", "train.threads=1", "--quiet"]
    assert main(["train", *args, "--out", str(tmp_path / "whole")]) == 0
    assert main(["train", *args, "--out", str(tmp_path / "stopped"), "--stop-at", "21"]) == 0
    out = capsys.readouterr().out
    assert "stopped at step 21" in out and f"--resume {tmp_path / 'stopped'}" in out
    assert not (tmp_path / "stopped" / runs.WEIGHTS).exists()
    from mechinit.training.resume import step_of

    assert step_of(tmp_path / "stopped") == 21
    assert main(["train", "--resume", str(tmp_path / "stopped"), "--quiet"]) == 0
    a, b = weights(tmp_path / "whole" / runs.WEIGHTS), weights(tmp_path / "stopped" / runs.WEIGHTS)
    assert all(torch.equal(a[k], b[k]) for k in a)
    logged = [[(r["step"], r["train_loss"], r["seen_test_acc"]) for r in runs.read_metrics(tmp_path / n)] for n in ("whole", "stopped")]
    assert logged[0] == logged[1]
    assert runs.load_run_config(tmp_path / "whole") == runs.load_run_config(tmp_path / "stopped")  # --stop-at is not config


@pytest.mark.parametrize("value", ["0", "48", "1000", "-3", "x"])
def test_a_stop_at_outside_the_run_is_one_line_exit_2(value, tmp_path, capsys):
    out = tmp_path / "run"
    try:
        code = main(["train", "--preset", "tiny", "--set", "train.epochs=3", "--out", str(out), "--stop-at", value, "--quiet"])
    except SystemExit as e:  # argparse's refusal of a value that is not a whole number
        code = e.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "stop" in err and not out.exists()


def test_bf16_on_a_cpu_run_trains_under_bf16_autocast_close_to_float32(tmp_path):
    import warnings

    from mechinit.runs import read_metrics
    from mechinit.training.trainer import train
    from tests.conftest import build_cfg

    losses = {}
    for bf16 in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)  # no "trains in float32" warning any more
            train(build_cfg(**{"train.bf16": bf16, "train.epochs": 2, "train.device": "cpu"}), tmp_path / f"bf16-{bf16}", quiet=True)
        losses[bf16] = [r["train_loss"] for r in read_metrics(tmp_path / f"bf16-{bf16}") if r.get("train_loss") is not None]
    assert len(losses[True]) == len(losses[False]) >= 1
    gaps = [abs(a - b) for a, b in zip(losses[True], losses[False])]
    assert max(gaps) > 1e-7  # bf16 acted: float32 would repeat the loss bit for bit
    assert max(gaps) < 0.05 * max(losses[False])  # and stayed near float32
