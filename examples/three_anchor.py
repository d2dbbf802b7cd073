"""A new task from scratch: three-anchor composites (mechinit's extension example, docs/extending.md).

A sequence of items 30-99 holds a key x followed by three anchors a1 a2 a3 (each 1-4); the target,
read at the last position, is x + s(a1) + s(a2) + s(a3) with the paper's shifts s = +5, +1, -2, -8.
The 16 triples that start with (4, 3) are never trained on: does the model compose them?
"""

import itertools

import torch

from mechinit.config import ConfigError

SHIFTS = torch.tensor([0, 5, 1, -2, -8])  # index = anchor token
KEY_MIN, KEY_MAX = 30, 99
TRIPLES = list(itertools.product((1, 2, 3, 4), repeat=3))
HELD_OUT = [t for t in TRIPLES if t[:2] == (4, 3)]
SEEN = [t for t in TRIPLES if t not in HELD_OUT]


class ThreeAnchorTask:
    target_positions = "last"  # one target per sequence, at the last position
    seen_triples, held_out_triples = SEEN, HELD_OUT

    def __init__(self, cfg, model_cfg):
        self.cfg, self.n_ctx = cfg, model_cfg.n_ctx
        if self.n_ctx < 5 or model_cfg.d_vocab <= KEY_MAX + 15:
            raise ConfigError(f"three-anchor needs model.n_ctx >= 5 and model.d_vocab > {KEY_MAX + 15}")

    @property
    def n_train(self) -> int:
        return self.cfg.n_train

    def sample(self, n: int, triples: list, gen: torch.Generator):
        """``n`` sequences with a triple from ``triples`` right after the key; returns (tokens, targets)."""
        pos = torch.randint(self.n_ctx - 3, (n,), generator=gen)
        tokens = torch.randint(KEY_MIN, KEY_MAX + 1, (n, self.n_ctx), generator=gen)
        triple = torch.tensor(triples)[torch.randint(len(triples), (n,), generator=gen)]
        rows = torch.arange(n)
        for k in range(3):
            tokens[rows, pos + 1 + k] = triple[:, k]
        return tokens, tokens[rows, pos] + SHIFTS[triple].sum(1)

    def train_set(self, seed: int):
        return self.sample(self.cfg.n_train, SEEN, torch.Generator().manual_seed(seed))

    @torch.no_grad()
    def evaluate(self, logits_fn, device: str = "cpu") -> dict:
        gen = torch.Generator().manual_seed(self.cfg.eval_seed)
        acc = {}
        for name, triples in (("seen", SEEN), ("held_out", HELD_OUT)):
            tokens, targets = self.sample(self.cfg.n_eval, triples, gen)
            acc[name] = float((logits_fn(tokens.to(device)).argmax(-1).cpu() == targets).float().mean())
        return {"acc": acc, "headline": acc["seen"]}

    def verdict(self, metrics: dict) -> str:
        return f"seen {metrics['acc']['seen']:.2f}, held-out (4,3,*) {metrics['acc']['held_out']:.2f}"
