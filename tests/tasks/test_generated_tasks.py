"""reasoning-memory, addition and prontoqa: data rules, splits and metrics."""

import pytest
import torch

from mechinit import runs
from mechinit.config import ConfigError
from mechinit.tasks import make_task
from mechinit.tasks.addition import held_out
from mechinit.tasks.reasoning_memory import SHIFTS
from mechinit.training.trainer import train
from tests.conftest import build_cfg


def rm_cfg(**sets):
    return build_cfg(**{"task.name": "reasoning-memory", **sets})


def test_reasoning_labels_follow_the_rule_and_memory_labels_a_fixed_table():
    task = make_task(rm_cfg(**{"task.n_train": 4000, "task.memory_fraction": 0.25}))
    tokens, labels = task.train_set(seed=3)
    assert tokens.shape == (4000, task.n_ctx)
    anchor_pos = ((tokens >= 1) & (tokens <= 8)).int().argmax(1)
    anchors = tokens[torch.arange(4000), anchor_pos]
    keys = tokens[torch.arange(4000), anchor_pos - 1]
    reasoning = anchors <= 4
    assert ((anchors >= 1) & (anchors <= 8)).all() and abs(float((~reasoning).float().mean()) - 0.25) < 1e-3
    expected = keys + torch.tensor((0,) + SHIFTS)[anchors.clamp(max=4)]
    assert torch.equal(labels[reasoning], expected[reasoning])
    table = task.memory_labels
    assert torch.equal(labels[~reasoning], table[anchors[~reasoning] - 5, keys[~reasoning]])
    assert torch.equal(make_task(rm_cfg()).memory_labels, table)  # the table belongs to the task, not the seed
    # training keys never meet the test rule; the test eval set only has test keys
    assert not ((keys % (task.n_ctx - 1)) == anchor_pos - 1).any()
    t_tok, _ = task.eval_sets()["reasoning_test"]
    pos = ((t_tok >= 1) & (t_tok <= 4)).int().argmax(1) - 1
    assert ((t_tok[torch.arange(len(t_tok)), pos] % (task.n_ctx - 1)) == pos).all()


def test_delta_loss_is_memory_minus_reasoning_loss():
    task = make_task(rm_cfg(**{"task.n_eval": 200}))
    sets = task.eval_sets()
    reasoning_labels = sets["reasoning_train"][1]

    def knows_reasoning(tokens):  # perfect on reasoning sequences, uniform on memory ones
        logits = torch.zeros(len(tokens), 120)
        for name, (t, y) in sets.items():
            if torch.equal(t, tokens) and name.startswith("reasoning"):
                logits[torch.arange(len(y)), y] = 50.0
        return logits

    metrics = task.evaluate(knows_reasoning)
    assert metrics["loss"]["reasoning_train"] < 1e-6 and metrics["acc"]["reasoning_train"] == 1.0
    assert metrics["loss"]["memory_train"] == pytest.approx(torch.log(torch.tensor(120.0)).item(), rel=1e-5)
    assert metrics["delta_loss"] == pytest.approx(metrics["loss"]["memory_train"] - metrics["loss"]["reasoning_train"])
    assert len(reasoning_labels) == 200


def test_reasoning_memory_validation():
    with pytest.raises(ConfigError, match="must be below 20"):
        make_task(rm_cfg(**{"task.reasoning_anchors": 10, "task.memory_anchors": 10}))
    with pytest.raises(ConfigError, match=r"task.memory_fraction = 1.0 must be in \(0, 1\)"):
        rm_cfg(**{"task.memory_fraction": 1.0})


def test_emb_mlp_trains_on_reasoning_memory_with_hooks_and_gamma_init(tmp_path):
    cfg = rm_cfg(**{"model.arch": "emb-mlp", "init.gamma": 0.5, "task.n_train": 2048, "train.epochs": 2})
    row = train(cfg, tmp_path / "run", quiet=True)
    from mechinit.runs import load_run_config
    from mechinit.runs.targets import target_from_path

    model = target_from_path(tmp_path / "run").model
    assert not hasattr(model, "blocks") and sorted(model.hook_dict) == ["hook_embed", "hook_resid", "mlp.hook_post", "mlp.hook_pre"]
    table = runs.read_json(tmp_path / "run" / "config.json")["init_table"]
    assert table["mlp.W_in"]["d_in"] == cfg.model.n_ctx * cfg.model.d_model  # concatenated positions
    tokens, _ = make_task(load_run_config(tmp_path / "run")).train_set(0)
    logits, cache = model.run_with_cache(tokens[:4])
    assert logits.shape == (4, 1, cfg.model.d_vocab) and cache["mlp.hook_pre"].shape == (4, cfg.model.d_mlp)
    assert {"loss", "acc", "delta_loss"} <= set(row)


def test_addition_holds_out_the_square_and_writes_digits():
    task = make_task(build_cfg(**{"task.name": "addition", "task.n_train": 3000, "task.n_eval": 100, "model.n_ctx": 16,
                                  "model.d_vocab": 16, "model.norm": "pre"}))
    parse = lambda words: int("".join(words))  # noqa: E731
    for inp, out in task.all_train:
        plus = inp.index("+")
        a, b = parse(inp[:plus]), parse(inp[plus + 1 :])
        assert not held_out(a, b) and parse(out) == a + b
    for inp, out in task.eval_examples["test"]:
        plus = inp.index("+")
        a, b = parse(inp[:plus]), parse(inp[plus + 1 :])
        assert 400 <= a <= 600 and 400 <= b <= 600 and parse(out) == a + b
    assert len(set(task.all_train)) == 3000 and len(task.tokenizer) == 15


def test_prontoqa_answers_are_derivable_and_balanced():
    task = make_task(build_cfg(**{"task.name": "prontoqa", "task.n_train": 2000, "task.n_eval": 200, "task.chain_length": 4,
                                  "model.n_ctx": 64, "model.d_vocab": 48, "model.norm": "pre"}))
    answers = []
    for words, (answer,) in task.all_train:
        text = " ".join(words)
        facts = [f.split() for f in text.split(" . ")]
        rules = {f[1]: f[4] for f in facts if f[0] == "Every"}
        entity, concept = next((f[0], f[3]) for f in facts if f[0] != "Every" and f[0] != "Is")
        query = text.split("Is ")[-1].split()[2]
        reachable, hops = set(), 0
        while concept in rules or concept not in reachable:
            reachable.add(concept)
            if concept not in rules:
                break
            concept, hops = rules[concept], hops + 1
        reachable.add(concept)
        assert (query in reachable) == (answer == "True")
        assert text.split("Is ")[-1].split()[0] == entity
        answers.append(answer == "True")
    assert 0.45 < sum(answers) / len(answers) < 0.55
    with pytest.raises(ConfigError, match=r"chain_length = 20 must be in 1\.\.13"):
        make_task(build_cfg(**{"task.name": "prontoqa", "task.chain_length": 20, "model.n_ctx": 200, "model.d_vocab": 48}))
