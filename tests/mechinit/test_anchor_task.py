import pytest
import torch

from mechinit.config import ConfigError, ModelConfig, TaskConfig
from mechinit.tasks.anchor import PAIRS, SHIFT, AnchorTask, designated_shifts, inferential_shift

MC = ModelConfig(d_model=32, d_head=16, d_mlp=64, d_vocab=120)


def _task(**kw) -> AnchorTask:
    return AnchorTask(TaskConfig.from_dict({"n_train": 4000, "n_eval": 200, "n_eval_train": 50, **kw}), MC)


def _locate(tokens: torch.Tensor):
    """Key position, key and anchors of each sequence (the first anchor pair)."""
    is_anchor = (tokens >= 1) & (tokens <= 4)
    pos = is_anchor.int().argmax(1) - 1
    rows = torch.arange(len(tokens))
    return pos, tokens[rows, pos], tokens[rows, pos + 1], tokens[rows, pos + 2], is_anchor.sum(1)


def test_paper_mapping_table():
    d = designated_shifts("paper")
    assert d[(4, 3)] is None and d[(3, 4)] == -6 and inferential_shift((3, 4)) == -10
    assert d[(1, 2)] == 6 and d[(2, 1)] == 6 and d[(1, 1)] == 10 and d[(4, 4)] == -16
    assert sum(v is None for v in d.values()) == 1
    e = designated_shifts("app-e")
    assert e[(3, 4)] is None and e[(4, 3)] is None
    g = designated_shifts("app-g", 2)
    assert g[(1, 2)] == g[(2, 1)] == 10 and g[(1, 3)] == g[(3, 1)] == 7 and g[(1, 4)] == -3
    assert [SHIFT[a] for a in (1, 2, 3, 4)] == [5, 1, -2, -8]


def test_training_sequences_follow_the_split_and_the_targets():
    task = _task()
    tokens, targets = task.train_set(seed=0)
    assert tokens.shape == (4000, 9)
    pos, key, a1, a2, n_anchor_tokens = _locate(tokens)
    assert torch.all(n_anchor_tokens == 2)  # exactly one anchor pair, adjacent
    assert torch.all((pos >= 0) & (pos <= 6))
    assert torch.all((key >= 20) & (key <= 99))
    assert torch.all(key % 7 != pos)  # App C: train keys avoid x mod (n-2) == pos
    assert not torch.any((a1 == 4) & (a2 == 3))  # held out
    shifts = torch.tensor([designated_shifts("paper")[(int(x), int(y))] for x, y in zip(a1, a2)])
    assert torch.equal(targets, key + shifts)
    noise = tokens.clone()
    rows = torch.arange(len(tokens))
    for off in range(3):
        noise[rows, pos + off] = 50
    assert torch.all((noise >= 20) & (noise <= 99))
    seen = {(int(x), int(y)) for x, y in zip(a1, a2)}
    assert len(seen) == 15


def test_generation_is_seeded():
    task = _task()
    a, b, c = task.train_set(1), task.train_set(1), task.train_set(2)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])


def test_eval_sets_use_test_keys_for_every_pair():
    batches = _task().eval_batches()
    assert {k for k in batches if k.startswith("test/")} == {f"test/{a},{b}" for a, b in PAIRS}
    assert {k for k in batches if k.startswith("train/")} == {f"train/{a},{b}" for a, b in PAIRS}  # (4,3) too
    for name, batch in batches.items():
        pos, key, a1, a2, _ = _locate(batch.tokens)
        assert torch.all((key % 7 == pos) if name.startswith("test/") else (key % 7 != pos)), name
        assert torch.equal(key, batch.keys)


def _planted(shift_of_pair):
    """A 'model' that answers key + shift_of_pair(a1, a2) exactly."""

    def logits_fn(tokens):
        _, key, a1, a2, _ = _locate(tokens)
        target = key + torch.tensor([shift_of_pair((int(x), int(y))) for x, y in zip(a1, a2)])
        return torch.nn.functional.one_hot(target, MC.d_vocab).float()

    return logits_fn


def test_planted_inferential_model_scores_inferential():
    task = _task()
    d = designated_shifts("paper")
    m = task.evaluate(_planted(lambda p: d[p] if p != (4, 3) else inferential_shift(p)))
    rec = m["pairs"]["4,3"]
    train_keys = rec.pop("train_keys")
    assert rec == {"seen": False, "inferential": 1.0, "designated": None, "symmetric": 0.0, "train_acc": None, "label": "inferential"}
    assert train_keys == {"inferential": 1.0, "designated": None, "symmetric": 0.0, "label": "inferential"}
    assert m["pairs"]["3,4"]["train_keys"]["designated"] == m["pairs"]["3,4"]["train_acc"] == 1.0
    assert m["seen_test_acc"] == 1.0 and m["train_acc"] == 1.0
    assert m["pairs"]["3,4"]["label"] == "designated" and m["pairs"]["3,4"]["inferential"] == 0.0
    assert sum(r["label"] == "indistinct" for r in m["pairs"].values()) == 14
    assert task.verdict(m) == "(4,3)=inferential"


def test_planted_symmetric_model_scores_symmetric():
    task = _task()
    d = designated_shifts("paper")
    m = task.evaluate(_planted(lambda p: d[p] if p != (4, 3) else d[(3, 4)]))
    assert m["pairs"]["4,3"]["label"] == "symmetric" and m["pairs"]["4,3"]["symmetric"] == 1.0
    assert m["pairs"]["4,3"]["inferential"] == 0.0


def test_threshold_and_other_label():
    task = _task(label_threshold=0.5)
    d = designated_shifts("paper")
    m = task.evaluate(_planted(lambda p: d[p] if p != (4, 3) else 0))  # (4,3): answers the key itself
    assert m["pairs"]["4,3"]["label"] == "other"
    assert m["seen_test_acc"] == 1.0


def test_vocab_too_small_is_rejected():
    with pytest.raises(ConfigError, match="model.d_vocab = 100 must be >= 110"):
        AnchorTask(TaskConfig(), ModelConfig(d_vocab=100))


def test_split_modulus_nine_is_the_authors_split():
    task = _task(split_modulus=9)
    tokens, _ = task.train_set(seed=0)
    pos, key, *_ = _locate(tokens)
    assert torch.all(key % 9 != pos)
    assert torch.any(key % 7 == pos)  # keys that are test keys under the text's mod 7 are trained on
    for name, batch in task.eval_batches().items():
        pos, key, *_ = _locate(batch.tokens)
        assert torch.all((key % 9 == pos) if name.startswith("test/") else (key % 9 != pos)), name
    with pytest.raises(ConfigError, match="task.split_modulus = 5 must be >= n_ctx - 2 = 7"):
        _task(split_modulus=5)


def test_split_modulus_default_keeps_the_texts_split():
    a, b = _task(), _task(split_modulus=7)
    assert torch.equal(a.train_set(3)[0], b.train_set(3)[0])
    assert TaskConfig.from_dict({"split_modulus": None}).canonical_dict() == TaskConfig().canonical_dict()  # ids unchanged


def test_held_out_verdict_of_an_unfitted_model_is_unfitted():
    task = _task()
    d = designated_shifts("paper")
    # fits only 3 of the 15 seen pairs, answers (4,3) inferentially: the verdict must not count
    fitted = {(1, 1), (2, 2), (4, 3)}
    m = task.evaluate(_planted(lambda p: (d[p] if p != (4, 3) else inferential_shift(p)) if p in fitted else 0))
    assert m["seen_test_acc"] == pytest.approx(2 / 15)
    assert m["pairs"]["4,3"]["inferential"] == 1.0
    assert m["pairs"]["4,3"]["label"] == "unfitted" and m["pairs"]["4,3"]["train_keys"]["label"] == "unfitted"
    assert m["pairs"]["1,1"]["label"] == "indistinct"


def test_max_over_training_keeps_each_maps_best():
    task = _task()
    d = designated_shifts("paper")
    rows = []
    for answer in (inferential_shift((4, 3)), d[(3, 4)], 0):  # inferential, then symmetric, then neither
        m = task.evaluate(_planted(lambda p: d[p] if p != (4, 3) else answer))
        rows.append(task.with_max_over_training(m, rows))
    best = rows[-1]["pairs"]["4,3"]["max_over_training"]
    assert best["test_keys"] == {"inferential": 1.0, "designated": None, "symmetric": 1.0}
    assert best["train_keys"] == {"inferential": 1.0, "designated": None, "symmetric": 1.0}
    assert rows[-1]["pairs"]["4,3"]["inferential"] == 0.0 and rows[0]["pairs"]["4,3"]["max_over_training"]["test_keys"]["symmetric"] == 0.0
