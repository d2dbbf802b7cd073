"""A new task from scratch: three-anchor composites (mechinit's extension example, docs/extending.md).

A sequence of items 30-99 holds a key x followed by three anchors a1 a2 a3 (each 1-4); the target,
read at the last position, is x + s(a1) + s(a2) + s(a3) with the paper's shifts s = +5, +1, -2, -8.
The 4 triples that start with ``task.held_out`` (default 4,3) are never trained on: composed or not?
"""

import itertools
from dataclasses import dataclass

import torch

from mechinit.config import ConfigError, TaskOptions
from mechinit.tasks.vocabulary import Metric, Vocabulary

SHIFTS = torch.tensor([0, 5, 1, -2, -8])  # index = anchor token
KEY_MIN, KEY_MAX = 30, 99
TRIPLES = list(itertools.product((1, 2, 3, 4), repeat=3))


@dataclass(frozen=True)
class ThreeAnchorOptions(TaskOptions):  # the task's own config field: --set task.held_out=2,1
    held_out: str = "4,3"  # the first two anchors of the triples never trained on

    def __post_init__(self):
        if self.held_out not in {f"{a},{b}" for a, b, _ in TRIPLES}:
            raise ConfigError(f"task.held_out = {self.held_out!r} must be a,b with a and b in 1..4")


class ThreeAnchorVocabulary(Vocabulary):  # what sweeps, `train` and the zoo show beside the headline
    sweep_metrics = plotted = (Metric("held_out_acc", "held-out triples"),)
    summary_keys = ("acc",)

    def sweep_record(self, rows):
        return {"held_out_acc": rows[-1]["acc"]["held_out"]}


class ThreeAnchorTask:
    target_positions, Options, metrics = "last", ThreeAnchorOptions, ThreeAnchorVocabulary()

    def __init__(self, cfg, model_cfg):
        self.cfg, self.n_ctx, prefix = cfg, model_cfg.n_ctx, tuple(map(int, cfg.options.held_out.split(",")))
        if self.n_ctx < 5 or model_cfg.d_vocab <= KEY_MAX + 15:
            raise ConfigError(f"three-anchor needs model.n_ctx >= 5 and model.d_vocab > {KEY_MAX + 15}")
        self.held_out = [t for t in TRIPLES if t[:2] == prefix]
        self.seen = [t for t in TRIPLES if t[:2] != prefix]

    @property
    def n_train(self) -> int:
        return self.cfg.n_train

    def sample(self, n: int, triples: list, gen: torch.Generator):
        """``n`` sequences with a triple from ``triples`` right after the key; returns (tokens, targets)."""
        pos = torch.randint(self.n_ctx - 3, (n,), generator=gen)
        tokens = torch.randint(KEY_MIN, KEY_MAX + 1, (n, self.n_ctx), generator=gen)
        triple = torch.tensor(triples)[torch.randint(len(triples), (n,), generator=gen)]
        for k in range(3):
            tokens[torch.arange(n), pos + 1 + k] = triple[:, k]
        return tokens, tokens[torch.arange(n), pos] + SHIFTS[triple].sum(1)

    def train_set(self, seed: int):
        return self.sample(self.cfg.n_train, self.seen, torch.Generator().manual_seed(seed))

    @torch.no_grad()
    def evaluate(self, logits_fn, device: str = "cpu") -> dict:
        gen, acc = torch.Generator().manual_seed(self.cfg.eval_seed), {}
        for name, triples in (("seen", self.seen), ("held_out", self.held_out)):
            tokens, targets = self.sample(self.cfg.n_eval, triples, gen)
            acc[name] = float((logits_fn(tokens.to(device)).argmax(-1).cpu() == targets).float().mean())
        return {"acc": acc, "headline": acc["seen"]}

    def verdict(self, metrics: dict) -> str:
        return f"seen {metrics['acc']['seen']:.2f}, held-out ({self.cfg.options.held_out},*) {metrics['acc']['held_out']:.2f}"
