"""key_position on a planted answer rule with known per-position fractions, and on a real model."""

import pytest
import torch
from mechinit.probes import key_position

from mechinit import probes
from mechinit.model.build import new_model
from mechinit.model.fastpath import last_logits
from mechinit.tasks import make_task
from tests.conftest import build_cfg


def planted_answers(model, tokens, chunk=512):
    """Key at position p (the anchors 1-4 follow at p+1, p+2): x−10 (inferential for {3,4}) when p < 3,
    x−6 (the (3,4) exception, the symmetric answer for (4,3)) otherwise."""
    pos = (tokens <= 4).int().argmax(1) - 1
    keys = tokens[torch.arange(len(tokens)), pos]
    return torch.where(pos < 3, keys - 10, keys - 6)


def test_a_planted_rule_gives_its_known_fractions_per_position(monkeypatch):
    cfg = build_cfg()  # n_ctx 9: key positions 0..6
    model, _ = new_model(cfg.model, cfg.init, 0)
    monkeypatch.setattr(key_position, "answers", planted_answers)
    r = probes.run("key_position", model, make_task(cfg), n_inputs=64)
    early, late = [1.0] * 3 + [0.0] * 4, [0.0] * 3 + [1.0] * 4
    assert r.numbers["pairs"]["4,3"] == {"inferential": early, "symmetric": late, "none": [0.0] * 7}
    assert r.numbers["pairs"]["3,4"] == {"designated": late, "inferential": early, "none": [0.0] * 7}  # (3,4) has no symmetric map
    assert r.headline == {"inferential_by_position": early, "symmetric_by_position": late, "inferential_spread": 1.0, "worst_position": 3}
    assert r.meta["positions"] == list(range(7)) and r.meta["answer_position"] == 8
    assert r.figure().data


def test_on_a_real_model_answers_are_the_fast_path_argmax_and_fractions_add_up():
    cfg = build_cfg(**{"init.gamma": 0.5})
    model, _ = new_model(cfg.model, cfg.init, 0)
    task = make_task(cfg)
    tokens = torch.randint(20, 100, (300, 9))
    tokens[:, 3], tokens[:, 4] = 4, 3
    logits = last_logits(model, tokens)  # the fast path, one batch; answers() is the hooked forward in chunks
    top2 = logits.topk(2).values
    clear = (top2[:, 0] - top2[:, 1]) > 1e-4  # an argmax is comparable across forwards only where it is not a near-tie
    assert clear.float().mean() > 0.9
    assert torch.equal(key_position.answers(model, tokens, chunk=128)[clear], logits.argmax(-1)[clear])
    r = probes.run("key_position", model, task, n_inputs=32, split="train")
    for maps in r.numbers["pairs"].values():  # the maps of a pair are distinct shifts: each answer is under one of them or none
        for p in range(7):
            assert sum(values[p] for values in maps.values()) == pytest.approx(1.0)
    assert r.meta["split"] == "train"


def test_key_position_applies_to_the_anchor_task_only():
    cfg = build_cfg(**{"task.name": "reasoning-memory"})
    assert "key_position" not in probes.applicable(make_task(cfg))
    assert "key_position" in probes.applicable(make_task(build_cfg()))
