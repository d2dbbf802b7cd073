"""The composite anchor task of Zhang et al. (NeurIPS 2024), §3.1–3.3 and Appendices B, C, E, G.

A sequence holds ``n_ctx`` tokens: noise items and key items from 20–99, and one anchor pair
``(a1, a2)`` directly after the key item ``x``. Anchors 1, 2, 3, 4 shift by +5, +1, −2, −8; the
inferential target of ``(a1, a2)`` is ``x + shift(a1) + shift(a2)``, read at the last position. A
token id is the number itself.

Split (App C): a key item ``x`` at position ``p`` (0-based, p in 0..n_ctx−3) is a *test* key when
``x mod m == p`` and a *train* key otherwise; noise items are unconstrained. ``m`` is
``task.split_modulus``: the paper's text says n_ctx − 2 (the default), the authors' code uses 9.

Variants (``task.variant``) set each pair's designated shift (``None`` = held out):

* ``paper`` (§4): (3,4) → x−6 (inferential would be x−10), (4,3) held out, 14 pairs inferential.
* ``app-e``: (3,4) and (4,3) both held out.
* ``app-g``: the first ``task.groups`` of App G's six groups {(1,2),(2,1)}, {(1,3),(3,1)}, …,
  {(3,4),(4,3)} are non-inferential: both pairs of a group get the inferential shift + 4 (as (3,4)
  gets x−6 instead of x−10); nothing is held out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import torch
from jaxtyping import Int

from mechinit.errors import ConfigError
from mechinit.fields import _choice
from mechinit.task_options import ModelSection, TaskOptions, TaskSection
from mechinit.tasks.anchor_vocabulary import ANCHOR

ANCHORS = (1, 2, 3, 4)
SHIFT = {1: 5, 2: 1, 3: -2, 4: -8}
ITEM_MIN, ITEM_MAX = 20, 99
PAIRS: tuple[tuple[int, int], ...] = tuple((a, b) for a in ANCHORS for b in ANCHORS)
APP_G_GROUPS = (((1, 2), (2, 1)), ((1, 3), (3, 1)), ((1, 4), (4, 1)), ((2, 3), (3, 2)), ((2, 4), (4, 2)), ((3, 4), (4, 3)))
NON_INFERENTIAL_OFFSET = 4


def pair_name(pair: tuple[int, int]) -> str:
    return f"{pair[0]},{pair[1]}"


def inferential_shift(pair: tuple[int, int]) -> int:
    return SHIFT[pair[0]] + SHIFT[pair[1]]


def designated_shifts(variant: str, groups: int = 0) -> dict[tuple[int, int], int | None]:
    """Each pair's designated shift under a variant; ``None`` marks a held-out pair."""
    shifts: dict[tuple[int, int], int | None] = {p: inferential_shift(p) for p in PAIRS}
    if variant == "paper":
        shifts[(3, 4)] = inferential_shift((3, 4)) + NON_INFERENTIAL_OFFSET
        shifts[(4, 3)] = None
    elif variant == "app-e":
        shifts[(3, 4)] = shifts[(4, 3)] = None
    elif variant == "app-g":
        for group in APP_G_GROUPS[:groups]:
            for pair in group:
                shifts[pair] = inferential_shift(pair) + NON_INFERENTIAL_OFFSET
    else:
        raise ConfigError(f"task.variant = {variant!r} is not allowed; choose one of ['paper', 'app-e', 'app-g']")
    return shifts


@dataclass(frozen=True)
class Batch:
    tokens: Int[torch.Tensor, "batch pos"]
    keys: Int[torch.Tensor, " batch"]
    pair_index: Int[torch.Tensor, " batch"]  # index into PAIRS


@dataclass(frozen=True)
class AnchorOptions(TaskOptions):
    """``task.variant`` (see the module docstring), ``task.groups`` (App G), ``task.label_threshold``
    (the accuracy a map needs for a pair's label) and ``task.split_modulus`` (App C; None = n_ctx − 2)."""

    LATER = ("split_modulus",)
    variant: str = "paper"
    groups: int = 0
    label_threshold: float = 0.9
    split_modulus: int | None = None

    def __post_init__(self):
        self.check_finite()
        _choice("task", "variant", self.variant, ("paper", "app-e", "app-g"))
        if not 0 <= self.groups <= len(APP_G_GROUPS):
            raise ConfigError(f"task.groups = {self.groups!r} must be in 0..{len(APP_G_GROUPS)} (App G has six pair groups)")
        if self.groups and self.variant != "app-g":
            raise ConfigError("task.groups is only used with task.variant = 'app-g'")
        if not 0.0 < self.label_threshold <= 1.0:
            raise ConfigError(f"task.label_threshold = {self.label_threshold!r} must be in (0, 1]")
        if self.split_modulus is not None and self.split_modulus < 2:
            raise ConfigError(f"task.split_modulus = {self.split_modulus!r} must be >= 2 (or null for n_ctx - 2)")


class AnchorTask:
    """Data generation and scoring of the anchor task for one config."""

    HEADLINE = "accuracy on seen pairs with test-split keys"
    Options = AnchorOptions
    metrics = ANCHOR

    name = "anchor"
    target_positions = "last"

    def __init__(self, cfg: TaskSection, model_cfg: ModelSection):
        self.cfg, self.options = cfg, cfg.options
        self.n_ctx = model_cfg.n_ctx
        if self.n_ctx < 3:
            raise ConfigError(f"model.n_ctx = {self.n_ctx} must be >= 3 for the anchor task (key + anchor pair)")
        self.modulus = self.options.split_modulus if self.options.split_modulus is not None else self.n_ctx - 2
        if self.modulus < self.n_ctx - 2:
            raise ConfigError(f"task.split_modulus = {self.modulus} must be >= n_ctx - 2 = {self.n_ctx - 2} "
                              "(else some key positions have no test keys)")
        self.designated = designated_shifts(self.options.variant, self.options.groups)
        self.seen = tuple(p for p in PAIRS if self.designated[p] is not None)
        shifts = [inferential_shift(p) for p in PAIRS] + [s for s in self.designated.values() if s is not None]
        need = ITEM_MAX + max(shifts) + 1
        if model_cfg.d_vocab < need:
            raise ConfigError(f"model.d_vocab = {model_cfg.d_vocab} must be >= {need} for the anchor task's outputs")
        self._key_tables = {split: self._key_table(split) for split in ("train", "test")}
        # CPU evaluation runs fastest when a chunk's widest activation stays cache-sized (~2M floats;
        # measured at d_model 128: chunks of 512 take 2.5 s where 8192 take 5-6 s)
        widest = self.n_ctx * max(model_cfg.d_mlp, model_cfg.d_model, model_cfg.d_vocab)
        self.cpu_chunk = max(64, 2 ** int(math.log2(max(1, 2_000_000 // widest))))

    @property
    def n_train(self) -> int:
        return self.cfg.n_train

    @property
    def eval_sequences(self) -> int:
        """Sequences one evaluation scores (sets the default evaluation interval)."""
        return len(PAIRS) * (self.cfg.n_eval + self.cfg.n_eval_train)

    def token_groups(self) -> dict[str, list[int]]:
        return {"anchors": list(ANCHORS), "items": list(range(ITEM_MIN, ITEM_MAX + 1))}

    # ---------------------------------------------------------------- generation
    def key_values(self, split: str, pos: int) -> torch.Tensor:
        """The key values a ``split``-split (``"train"`` or ``"test"``) sequence may hold at position ``pos``."""
        if split not in self._key_tables:
            raise ValueError(f"split {split!r}: one of {sorted(self._key_tables)}")
        table, counts = self._key_tables[split]
        return table[pos, : counts[pos]]

    def _key_table(self, split: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Per key position p: the allowed key values (padded) and their count."""
        modulus = self.modulus
        values = torch.arange(ITEM_MIN, ITEM_MAX + 1)
        rows = []
        for p in range(self.n_ctx - 2):
            test = values % modulus == p
            rows.append(values[test] if split == "test" else values[~test])
        counts = torch.tensor([len(r) for r in rows])
        table = torch.zeros(len(rows), int(counts.max()), dtype=torch.long)
        for p, r in enumerate(rows):
            table[p, : len(r)] = r
        return table, counts

    def sample(self, n: int, split: str, pairs: tuple[tuple[int, int], ...], generator: torch.Generator) -> Batch:
        """``n`` sequences with pairs drawn uniformly from ``pairs`` and keys from ``split``."""
        table, counts = self._key_tables[split]
        pair_ids = torch.tensor([PAIRS.index(p) for p in pairs])
        pair_index = pair_ids[torch.randint(len(pairs), (n,), generator=generator)]
        pos = torch.randint(self.n_ctx - 2, (n,), generator=generator)
        choice = (torch.rand(n, generator=generator) * counts[pos]).long()
        keys = table[pos, choice]
        tokens = torch.randint(ITEM_MIN, ITEM_MAX + 1, (n, self.n_ctx), generator=generator)
        rows = torch.arange(n)
        pair_tensor = torch.tensor(PAIRS)[pair_index]
        tokens[rows, pos] = keys
        tokens[rows, pos + 1] = pair_tensor[:, 0]
        tokens[rows, pos + 2] = pair_tensor[:, 1]
        return Batch(tokens, keys, pair_index)

    def shift_table(self, kind: str) -> torch.Tensor:
        """Shift per pair index under ``inferential``, ``designated`` or ``symmetric`` (the mirror
        pair's designated map); pairs without such a map get a shift that no key can reach."""
        unreachable = 10_000
        if kind == "inferential":
            values = [inferential_shift(p) for p in PAIRS]
        elif kind == "designated":
            values = [self.designated[p] for p in PAIRS]
        elif kind == "symmetric":
            values = [self.designated[(p[1], p[0])] for p in PAIRS]
        else:
            raise KeyError(kind)
        return torch.tensor([unreachable if v is None else v for v in values])

    def train_set(self, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The training sequences and their designated targets, from ``seed``."""
        batch = self.sample(self.cfg.n_train, "train", self.seen, torch.Generator().manual_seed(seed))
        return batch.tokens, batch.keys + self.shift_table("designated")[batch.pair_index]

    # ---------------------------------------------------------------- evaluation
    def eval_batches(self) -> dict[str, Batch]:
        """Fixed evaluation sets: per pair, ``n_eval`` test-key sequences (``test/a,b``) and
        ``n_eval_train`` train-key sequences (``train/a,b``), all from ``task.eval_seed``. (For a held-out
        pair the train-split keys are still unseen *with that pair*: the authors' code scores (4,3) there.)"""
        out = {}
        for i, pair in enumerate(PAIRS):
            gen = torch.Generator().manual_seed(self.cfg.eval_seed * 1000 + i)
            out[f"test/{pair_name(pair)}"] = self.sample(self.cfg.n_eval, "test", (pair,), gen)
            out[f"train/{pair_name(pair)}"] = self.sample(self.cfg.n_eval_train, "train", (pair,), gen)
        return out

    @cached_property
    def eval_set(self) -> dict[str, Batch]:
        """:meth:`eval_batches`, generated once per task object."""
        return self.eval_batches()

    @torch.inference_mode()
    def evaluate(self, logits_fn: Callable[[torch.Tensor], torch.Tensor], device: str = "cpu", chunk: int | None = None) -> dict:
        """Score a model given ``logits_fn(tokens) -> last-position logits``.

        Returns ``{"seen_test_acc", "seen_test_loss", "train_acc", "pairs": {"a,b": {...}}}``; each pair
        has its accuracy on test-split keys under the inferential, designated and symmetric maps
        (``None`` where the map does not exist) and a label (see :func:`label_pair`), and the same on
        train-split keys under ``train_keys`` (the authors' code reports (4,3) there). ``train_acc``
        of a seen pair is its designated accuracy on train-split keys (the fit of its training data).
        """
        batches = self.eval_set
        chunk = chunk or (8192 if device == "cuda" else self.cpu_chunk)
        tables = {k: self.shift_table(k) for k in ("inferential", "designated", "symmetric")}
        pairs, seen_acc, seen_loss, train_acc = {}, [], [], []
        everything = torch.cat([b.tokens for b in batches.values()])  # one pass in large chunks
        all_logits = torch.cat([logits_fn(t.to(device)).float().cpu() for t in everything.split(chunk)])
        for (key, batch), logits in zip(batches.items(), all_logits.split([len(b.tokens) for b in batches.values()])):
            split, name = key.split("/")
            pred = logits.argmax(-1)
            pair = PAIRS[int(batch.pair_index[0])]
            acc = {k: float((pred == batch.keys + t[batch.pair_index]).float().mean()) for k, t in tables.items()}
            record = {
                "seen": pair in self.seen,
                "inferential": acc["inferential"],
                "designated": acc["designated"] if self.designated[pair] is not None else None,
                "symmetric": acc["symmetric"] if self.designated[(pair[1], pair[0])] is not None else None,
            }
            record["label"] = label_pair(pair, self.designated, record, self.options.label_threshold)
            if split == "train":
                pairs[name]["train_keys"] = {k: v for k, v in record.items() if k != "seen"}
                pairs[name]["train_acc"] = record["designated"]
                if record["seen"]:
                    train_acc.append(acc["designated"])
                continue
            pairs[name] = {**record, "train_acc": None}
            if record["seen"]:
                seen_acc.append(acc["designated"])
                target = batch.keys + tables["designated"][batch.pair_index]
                seen_loss.append(float(torch.nn.functional.cross_entropy(logits, target)))
        mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
        if mean(seen_acc) is not None and mean(seen_acc) < self.options.label_threshold:
            for pair in self.unseen_pairs():  # a verdict on a model that has not fitted its data means nothing
                for record in (pairs[pair_name(pair)], pairs[pair_name(pair)]["train_keys"]):
                    record["label"] = "unfitted" if record["label"] != "indistinct" else record["label"]
        return {"seen_test_acc": mean(seen_acc), "seen_test_loss": mean(seen_loss), "train_acc": mean(train_acc), "pairs": pairs,
                "headline": mean(seen_acc)}

    def with_max_over_training(self, metrics: dict, previous: list[dict]) -> dict:
        """Add each pair's ``max_over_training`` (the largest accuracy under each map, on test-split
        and train-split keys, over this and every earlier evaluation row) to ``metrics``, in place."""
        for name, record in metrics["pairs"].items():
            history = [r["pairs"][name] for r in previous if name in r.get("pairs", {})] + [record]
            best = {}
            for keys in ("test_keys", "train_keys"):
                rows = [h if keys == "test_keys" else h.get("train_keys") for h in history]
                rows = [r for r in rows if r]
                best[keys] = {m: max((r[m] for r in rows if r.get(m) is not None), default=None)
                              for m in ("inferential", "designated", "symmetric")}
            record["max_over_training"] = best
        return metrics

    def unseen_pairs(self) -> tuple[tuple[int, int], ...]:
        return tuple(p for p in PAIRS if self.designated[p] is None)

    def verdict(self, metrics: dict) -> str:
        """Short text for progress bars: the label of each held-out pair."""
        parts = [f"({pair_name(p)})={metrics['pairs'][pair_name(p)]['label']}" for p in self.unseen_pairs()]
        return " ".join(parts) or "all pairs seen"


def label_pair(pair: tuple[int, int], designated: dict, record: dict, threshold: float) -> str:
    """``indistinct`` when the inferential and symmetric maps coincide; else the first of
    ``inferential``, ``symmetric``, ``designated`` (a seen non-inferential pair fitting its own map)
    whose accuracy reaches ``threshold``; else ``other``."""
    inf = inferential_shift(pair)
    sym = designated[(pair[1], pair[0])]
    if sym is not None and sym == inf:
        return "indistinct"
    if record["inferential"] >= threshold:
        return "inferential"
    if record["symmetric"] is not None and record["symmetric"] >= threshold:
        return "symmetric"
    if record["designated"] is not None and designated[pair] != inf and record["designated"] >= threshold:
        return "designated"
    return "other"
