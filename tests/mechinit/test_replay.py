"""``train(..., replay=Replay(...))``: another code's initial weights and batch order in place of
mechinit's draws (``train.replay`` builds one to replay the authors' run)."""

import pytest
import torch
from safetensors.torch import load_file

from mechinit import runs
from mechinit.config import ConfigError
from mechinit.training.replay import Replay
from mechinit.training.trainer import train
from tests.conftest import build_cfg, stop_after_resume_point

VISITED: list[int] = []


def identity_order(epoch: int, n: int) -> torch.Tensor:
    """Visits the training sequences in stored order every epoch (a planted batch order)."""
    VISITED.append(epoch)
    return torch.arange(n)


def _cfg():
    return build_cfg(**{"train.epochs": 6, "train.threads": 1, "train.eval_every": 10, "train.resume_every": 5})


def test_replayed_weights_are_the_step_0_weights_and_the_run_records_it(tmp_path):
    cfg = _cfg()
    plain = tmp_path / "plain"
    train(cfg, plain, quiet=True)
    given = {"blocks.0.attn.W_Q": torch.full_like(load_file(str(plain / "model.safetensors"))["blocks.0.attn.W_Q"], 0.01)}
    run = tmp_path / "replayed"
    train(cfg, run, quiet=True, replay=Replay("planted W_Q", weights=given))
    step0 = load_file(str(runs.snapshot_path(run, 0)))
    assert torch.equal(step0["blocks.0.attn.W_Q"], given["blocks.0.attn.W_Q"])
    reference = load_file(str(runs.snapshot_path(plain, 0)))
    assert all(torch.equal(step0[k], reference[k]) for k in reference if k != "blocks.0.attn.W_Q")  # the rest: mechinit's draws
    assert runs.read_json(run / "config.json")["provenance"]["replayed"] == "planted W_Q"
    assert "replayed" not in runs.read_json(plain / "config.json")["provenance"]


@pytest.mark.parametrize("weights, words", [({"blocks.0.attn.W_X": torch.zeros(1)}, "blocks.0.attn.W_X"),
                                            ({"blocks.0.attn.W_Q": torch.zeros(3)}, "shape (3,)")])
def test_replayed_weights_that_do_not_fit_are_refused_before_anything_is_written(tmp_path, weights, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        train(_cfg(), tmp_path / "run", quiet=True, replay=Replay("bad", weights=weights))
    assert not (tmp_path / "run").exists()


def test_a_replayed_order_is_used_and_resumes_bit_identically(tmp_path, monkeypatch):
    cfg = _cfg()
    replay = Replay("stored order", permutation=identity_order)
    VISITED.clear()
    whole = tmp_path / "whole"
    train(cfg, whole, quiet=True, replay=replay)
    assert VISITED == list(range(6))
    train(cfg, tmp_path / "plain", quiet=True)
    plain, replayed = load_file(str(tmp_path / "plain" / "model.safetensors")), load_file(str(whole / "model.safetensors"))
    assert not torch.equal(plain["blocks.0.attn.W_Q"], replayed["blocks.0.attn.W_Q"])  # the order changed the run

    stopped = tmp_path / "stopped"
    stop_after_resume_point(monkeypatch, lambda: train(cfg, stopped, quiet=True, replay=replay), at=25)
    with pytest.raises(runs.RunFolderError, match="replays another code's draws"):
        train(None, stopped, resume=True, quiet=True)  # a plain resume would train on mechinit's order
    train(None, stopped, resume=True, quiet=True, replay=replay)
    resumed = load_file(str(stopped / "model.safetensors"))
    assert all(torch.equal(resumed[k], replayed[k]) for k in replayed)

    def logged(run):
        return [(r["step"], r["train_loss"], r["seen_test_acc"]) for r in runs.read_metrics(run)]

    assert logged(stopped) == logged(whole)


def test_a_plain_run_is_not_resumed_as_a_replay(tmp_path, monkeypatch):
    stop_after_resume_point(monkeypatch, lambda: train(_cfg(), tmp_path / "run", quiet=True))
    with pytest.raises(runs.RunFolderError, match="is not a replay"):
        train(None, tmp_path / "run", resume=True, quiet=True, replay=Replay("x", permutation=identity_order))
