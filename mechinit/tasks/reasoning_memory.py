"""Reasoning and memory anchors in one dataset (after Yao et al., ICML 2025; our definition).

A sequence holds ``n_ctx`` items (20–99) with one anchor token right after a key item ``x``; the
label is read at the last position. Anchors ``1..R`` (``task.reasoning_anchors``) are *reasoning*
anchors: the label is ``x + shift(a)``, a rule of the key. Anchors ``R+1..R+M``
(``task.memory_anchors``) are *memory* anchors: the label is a fixed random draw per
``(anchor, key)`` from the same output range, which can only be memorised. A fraction
``task.memory_fraction`` of the training sequences carries a memory anchor.

Split (as App C of the main paper): a key ``x`` at position ``p`` is a test key when
``x mod (n_ctx − 1) == p``. Reasoning anchors are scored on train and test keys (``reasoning_train``,
``reasoning_test``); memory anchors on train keys only (``memory_train``; an unseen key's memory
label is unknowable). ``delta_loss = loss(memory_train) − loss(reasoning_train)``, on held-out
sequences with training keys: positive when reasoning is fitted first. The companion paper
defines ΔL between two datasets' losses; its exact synthetic definition was not available, so this
is the choice made here (docs/other-tasks.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import torch

from mechinit.errors import ConfigError
from mechinit.task_options import ModelSection, TaskOptions, TaskSection
from mechinit.tasks.vocabulary import HEADLINE, Metric, Vocabulary

ITEM_MIN, ITEM_MAX = 20, 99
SHIFTS = (5, 1, -2, -8, 3, -5, 7, -4, 2, -7)
LABEL_MIN, LABEL_MAX = ITEM_MIN + min(SHIFTS), ITEM_MAX + max(SHIFTS)
MEMORY_TABLE_SEED = 4242
SUBSETS = ("reasoning_train", "reasoning_test", "memory_train")


@dataclass(frozen=True)
class ReasoningMemoryOptions(TaskOptions):
    """``task.reasoning_anchors`` (R), ``task.memory_anchors`` (M), ``task.memory_fraction``."""

    LATER = ("reasoning_anchors", "memory_anchors", "memory_fraction")
    reasoning_anchors: int = 4
    memory_anchors: int = 4
    memory_fraction: float = 0.5

    def __post_init__(self):
        self.check_finite()
        for name in ("reasoning_anchors", "memory_anchors"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"task.{name} = {getattr(self, name)!r} must be > 0")
        if not 0.0 < self.memory_fraction < 1.0:
            raise ConfigError(f"task.memory_fraction = {self.memory_fraction!r} must be in (0, 1)")


DELTA_LOSS = Metric("delta_loss", "ΔL = L_memory − L_reasoning", bounded=False)


class ReasoningMemoryVocabulary(Vocabulary):
    summary_keys = ("delta_loss",)
    sweep_metrics = (DELTA_LOSS,)
    plotted = table = (HEADLINE, DELTA_LOSS)

    def sweep_record(self, rows: list[dict]) -> dict:
        return {"delta_loss": rows[-1].get("delta_loss")}


class ReasoningMemoryTask:
    HEADLINE = "accuracy of reasoning anchors on test keys"
    Options = ReasoningMemoryOptions
    metrics = ReasoningMemoryVocabulary()
    target_positions = "last"

    def __init__(self, cfg: TaskSection, model_cfg: ModelSection):
        self.cfg, self.n_ctx = cfg, model_cfg.n_ctx
        R, M = cfg.options.reasoning_anchors, cfg.options.memory_anchors
        if R > len(SHIFTS):
            raise ConfigError(f"task.reasoning_anchors = {R} must be at most {len(SHIFTS)}")
        if R + M >= ITEM_MIN:
            raise ConfigError(f"task.reasoning_anchors + task.memory_anchors = {R + M} must be below {ITEM_MIN} (anchor ids sit below the items)")
        if model_cfg.d_vocab <= LABEL_MAX:
            raise ConfigError(f"task reasoning-memory needs model.d_vocab > {LABEL_MAX} (it is {model_cfg.d_vocab})")
        if self.n_ctx < 3:
            raise ConfigError(f"task reasoning-memory needs model.n_ctx >= 3 (it is {self.n_ctx})")
        self.reasoning = tuple(range(1, R + 1))
        self.memory = tuple(range(R + 1, R + M + 1))
        gen = torch.Generator().manual_seed(MEMORY_TABLE_SEED)
        self.memory_labels = torch.randint(LABEL_MIN, LABEL_MAX + 1, (M, ITEM_MAX + 1), generator=gen)

    @property
    def n_train(self) -> int:
        return self.cfg.n_train

    def token_groups(self) -> dict[str, list[int]]:
        return {"reasoning anchors": list(self.reasoning), "memory anchors": list(self.memory)}

    def labels(self, anchors: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        shifts = torch.tensor((0,) + SHIFTS[: len(self.reasoning)])
        is_memory = anchors > len(self.reasoning)
        memory = self.memory_labels[(anchors - len(self.reasoning) - 1).clamp_min(0), keys]
        return torch.where(is_memory, memory, keys + shifts[anchors.clamp_max(len(self.reasoning))])

    def sample(self, n: int, anchors: tuple[int, ...], split: str, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """``n`` sequences with anchors drawn from ``anchors`` and keys from the ``split`` keys."""
        period = self.n_ctx - 1
        pos = torch.randint(self.n_ctx - 1, (n,), generator=gen)
        keys = torch.randint(ITEM_MIN, ITEM_MAX + 1, (n,), generator=gen)
        is_test = keys % period == pos
        while bool((is_test != (split == "test")).any()):  # redraw keys until each is in the split
            bad = is_test != (split == "test")
            keys[bad] = torch.randint(ITEM_MIN, ITEM_MAX + 1, (int(bad.sum()),), generator=gen)
            is_test = keys % period == pos
        anchor = torch.tensor(anchors)[torch.randint(len(anchors), (n,), generator=gen)]
        tokens = torch.randint(ITEM_MIN, ITEM_MAX + 1, (n, self.n_ctx), generator=gen)
        rows = torch.arange(n)
        tokens[rows, pos], tokens[rows, pos + 1] = keys, anchor
        return tokens, self.labels(anchor, keys)

    def train_set(self, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        gen = torch.Generator().manual_seed(seed)
        n_memory = round(self.cfg.n_train * self.cfg.options.memory_fraction)
        t_m, y_m = self.sample(n_memory, self.memory, "train", gen)
        t_r, y_r = self.sample(self.cfg.n_train - n_memory, self.reasoning, "train", gen)
        order = torch.randperm(self.cfg.n_train, generator=gen)
        return torch.cat([t_m, t_r])[order], torch.cat([y_m, y_r])[order]

    def eval_sets(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """Held-out sequences per subset from ``task.eval_seed``, drawn once per task object."""
        return self._eval_sets

    @cached_property
    def _eval_sets(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        gen = torch.Generator().manual_seed(self.cfg.eval_seed)
        return {"reasoning_train": self.sample(self.cfg.n_eval, self.reasoning, "train", gen),
                "reasoning_test": self.sample(self.cfg.n_eval, self.reasoning, "test", gen),
                "memory_train": self.sample(self.cfg.n_eval, self.memory, "train", gen)}

    @torch.no_grad()
    def evaluate(self, logits_fn: Callable[[torch.Tensor], torch.Tensor], device: str = "cpu") -> dict:
        """Loss and accuracy per subset, and ``delta_loss`` (memory − reasoning, training keys)."""
        loss, acc = {}, {}
        for name, (tokens, labels) in self.eval_sets().items():
            logits = logits_fn(tokens.to(device)).float().cpu()
            loss[name] = float(torch.nn.functional.cross_entropy(logits, labels))
            acc[name] = float((logits.argmax(-1) == labels).float().mean())
        return {"loss": loss, "acc": acc, "delta_loss": loss["memory_train"] - loss["reasoning_train"],
                "headline": acc["reasoning_test"]}

    def verdict(self, metrics: dict) -> str:
        a = metrics["acc"]
        return f"ΔL {metrics['delta_loss']:+.3f} acc R {a['reasoning_train']:.2f}/{a['reasoning_test']:.2f} M {a['memory_train']:.2f}"
