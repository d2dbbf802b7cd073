"""deviation on planted answer rules with known offset shares, and on a real model."""

import pytest
import torch
from mechinit.probes import deviation

from mechinit import probes
from mechinit.model.build import new_model
from mechinit.tasks import make_task
from tests.conftest import build_cfg
from tests.probes.test_key_position import planted_answers  # x−10 with the key at positions 0–2, x−6 at 3–6


def _keys(tokens):
    pos = (tokens <= 4).int().argmax(1) - 1
    return tokens[torch.arange(len(tokens)), pos]


def test_a_position_rule_splits_the_held_out_pair_between_its_two_maps(monkeypatch):
    monkeypatch.setattr(deviation, "answers", planted_answers)
    r = probes.run("deviation", new_model(build_cfg().model, build_cfg().init, 0)[0], make_task(build_cfg()))
    assert r.headline["at_inferential"] == pytest.approx(3 / 7, abs=0.03)  # key positions are uniform over 0..6
    assert r.headline["at_symmetric"] == pytest.approx(4 / 7, abs=0.03)
    assert set(r.numbers["pairs"]["4,3"]["offsets"]) == {0, 4} and r.headline["near"] == 0.0 and r.headline["mode"] == 4
    assert r.headline["at_inferential"] + r.headline["at_symmetric"] == pytest.approx(1.0)
    seen = r.numbers["pairs"]["3,4"]  # (3,4): x−6 is its designated map; it has no symmetric one
    assert seen["symmetric_offset"] is None and seen["at_symmetric"] is None and set(seen["offsets"]) == {0, 4}
    assert seen["designated_offset"] == 4 and r.numbers["pairs"]["4,3"]["designated_offset"] is None
    held, mirror = r.figure().data  # one bar per offset from the lowest to the highest, the maps' offsets coloured
    assert list(held.x) == [0, 1, 2, 3, 4] and list(held.marker.color) == ["#1f77b4", "#999999", "#999999", "#999999", "#d62728"]
    assert list(mirror.marker.color) == ["#1f77b4", "#999999", "#999999", "#999999", "#2ca02c"]
    assert r.meta["split"] == "train"


def test_near_misses_are_counted_apart_from_the_two_maps(monkeypatch):
    monkeypatch.setattr(deviation, "answers", lambda model, tokens: _keys(tokens) - 10 + (_keys(tokens) % 3) - 1)
    r = probes.run("deviation", new_model(build_cfg().model, build_cfg().init, 0)[0], make_task(build_cfg()), pairs=(4, 3))
    dist = r.numbers["pairs"]["4,3"]["offsets"]
    assert set(dist) == {-1, 0, 1} and sum(dist.values()) == pytest.approx(1.0)
    assert r.headline["near"] == pytest.approx(dist[-1] + dist[1]) and r.headline["at_symmetric"] == 0.0
    assert r.headline["at_inferential"] == pytest.approx(1 / 3, abs=0.05)


def test_on_a_real_model_the_shares_add_up_and_follow_the_split():
    cfg = build_cfg(**{"init.gamma": 0.5})
    model, _ = new_model(cfg.model, cfg.init, 0)
    task = make_task(cfg)
    a = probes.run("deviation", model, task, n_inputs=256)
    b = probes.run("deviation", model, task, n_inputs=256, split="test")
    for r in (a, b):
        for rec in r.numbers["pairs"].values():
            assert sum(rec["offsets"].values()) == pytest.approx(1.0)
    assert a.numbers["pairs"] != b.numbers["pairs"] and b.meta["split"] == "test"


def test_deviation_applies_to_the_anchor_task_only_and_checks_its_config():
    assert "deviation" not in probes.applicable(make_task(build_cfg(**{"task.name": "reasoning-memory"})))
    assert "deviation" in probes.applicable(make_task(build_cfg()))
    with pytest.raises(Exception, match="deviation.split = 'dev': choose one of"):
        deviation.Config(split="dev")
