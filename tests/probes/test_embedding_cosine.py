"""embedding_cosine on planted embeddings, and which probes apply to which tasks."""

import json

import pytest
import torch
from mechinit.probes.base import ProbeError

from mechinit import probes
from mechinit.model.build import new_model
from mechinit.tasks import make_task
from tests.conftest import build_cfg


def planted(cfg):
    model, _ = new_model(cfg.model, cfg.init, 0)
    with torch.no_grad():
        W = torch.zeros_like(model.embed.W_E)
        W[1:5, 0] = 1.0  # anchors 1-4: one shared direction -> cosine 1 within
        for i, token in enumerate(range(20, 52)):  # items 20-51: orthonormal -> cosine 0 within
            W[token, 1 + i % 31] = 1.0 if i < 31 else 0.0
        W[51, 0] = -1.0  # ...except item 51, opposite to the anchors
        model.embed.W_E.copy_(W)
    return model


def test_planted_groups_give_their_known_cosines():
    cfg = build_cfg()
    model, task = planted(cfg), make_task(cfg)
    result = probes.run("embedding_cosine", model, task, groups="anchors:1,2,3,4;items:20,21,22,23;far:51,20")
    cos = result.numbers["mean_cosine"]
    assert cos["anchors"] == pytest.approx(1.0) and cos["items"] == pytest.approx(0.0)
    assert cos["far"] == pytest.approx(0.0) and cos["anchors × far"] == pytest.approx(-0.5)
    assert cos["anchors × items"] == pytest.approx(0.0)
    auto = probes.run("embedding_cosine", model, task)  # the task's own groups: anchors vs items 20-99
    assert auto.numbers["groups"] == {"anchors": 4, "items": 80} and auto.headline["mean_cosine"]["anchors"] == pytest.approx(1.0)


def test_evolution_over_snapshots_and_bad_groups():
    cfg = build_cfg()
    model, task = planted(cfg), make_task(cfg)
    before = {n: p.detach().clone() for n, p in new_model(cfg.model, cfg.init, 1)[0].named_parameters()}
    snaps = {0: lambda: before, 10: lambda: dict(model.named_parameters())}
    result = probes.run("embedding_cosine", model, task, snapshots=snaps, groups="a:1,2,3,4")
    ev = result.numbers["evolution"]
    assert ev["steps"] == [0, 10] and abs(ev["cosines"][0]["a"]) < 0.5 and ev["cosines"][1]["a"] == pytest.approx(1.0)
    assert result.figure().data
    with pytest.raises(ProbeError, match="needs at least 2 tokens"):
        probes.run("embedding_cosine", model, task, groups="a:1")
    with pytest.raises(ProbeError, match="outside the vocabulary"):
        probes.run("embedding_cosine", model, task, groups="a:1,999")


def test_anchor_probes_refuse_other_tasks_and_attention_probes_refuse_emb_mlp():
    cfg = build_cfg(**{"task.name": "reasoning-memory"})
    model, task = new_model(cfg.model, cfg.init, 0)[0], make_task(cfg)
    assert probes.applicable(task) == ["condensation", "embedding_spectrum", "embedding_cosine"]
    with pytest.raises(ProbeError, match="reads models of the anchor task; this target's task is reasoning-memory"):
        probes.run("information_flow", model, task)
    mlp_cfg = build_cfg(**{"task.name": "reasoning-memory", "model.arch": "emb-mlp"})
    emb_mlp = new_model(mlp_cfg.model, mlp_cfg.init, 0)[0]
    assert probes.applicable(task, emb_mlp) == ["embedding_spectrum", "embedding_cosine"]  # mechinit probe's default
    assert probes.applicable(task, model) == ["condensation", "embedding_spectrum", "embedding_cosine"]
    with pytest.raises(ProbeError, match="needs attention layers"):
        probes.run("condensation", emb_mlp, task)
    spectrum = probes.run("embedding_spectrum", emb_mlp, task, evolution="off")
    assert set(spectrum.numbers["weights"]) == {"embed.W_E", "unembed.W_U", "mlp.W_in", "mlp.W_out"}
    cos = probes.run("embedding_cosine", emb_mlp, task)
    assert set(cos.numbers["mean_cosine"]) == {"reasoning anchors", "memory anchors", "reasoning anchors × memory anchors"}


@pytest.mark.parametrize("bad", [0.0, float("nan")])
def test_a_zero_or_non_finite_embedding_gives_null_never_zero(bad):
    cfg = build_cfg()
    model, task = planted(cfg), make_task(cfg)
    with torch.no_grad():
        model.embed.W_E[22] = bad  # items 20-23 were orthonormal (mean cosine 0.0): now one has no direction
    result = probes.run("embedding_cosine", model, task, groups="anchors:1,2,3,4;items:20,21,22,23")
    cos = result.numbers["mean_cosine"]
    assert cos["anchors"] == pytest.approx(1.0)  # untouched group keeps its number
    assert cos["items"] is None and cos["anchors × items"] is None
    assert result.numbers["undefined"] == {
        "items": "tokens [22] have a zero or non-finite embedding: cosine undefined",
        "anchors × items": "tokens [22] have a zero or non-finite embedding: cosine undefined"}
    assert json.loads(json.dumps(result.to_dict()))["headline"]["mean_cosine"]["items"] is None
    assert result.figure().data
