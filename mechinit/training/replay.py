"""Replay the authors' own runs: their initial weights, their data and their batch order, re-drawn
from their seed (``train.replay = "authors:SEED"``, or ``authors:SEED:init`` / ``authors:SEED:data``
for one side of it; the other side then comes from the run's ``train.init_seed`` / ``data_seed``).

Their teaching code (xuzhiqin1990/understanding_dl, folder ``code/book_jupyter_composition_task``)
seeds torch, numpy and Python's ``random`` with one seed, draws the data with numpy (the noise tokens,
the key position) and ``random`` (the key), builds the model on the CPU (PyTorch's default layer
inits, then the γ rule on top, in module order), and shuffles each epoch with a DataLoader whose
seed comes from torch's global generator. This module re-states those draws from that description
(no code of theirs is copied). Two fingerprints of seed 1 tie it to their run: the first data rows
their notebook printed and the per-data-type accuracies their log recorded at step 0
(``tests/mechinit/test_replay_authors.py``).

The draws are defined for the authors' model and data only: the ``paper-code`` preset's shape and
task. γ comes from the run's config, so ``authors:1`` at γ 0.5 is the same draw scaled to γ 0.5.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from mechinit.errors import ConfigError
from mechinit.replay_spec import ReplaySpec, parse

PAIRS = ("13", "23", "43", "31", "32", "34", "12", "14", "21", "41", "24", "42", "11", "22", "33", "44")
GROUPS = tuple(p + "_xm0" for p in PAIRS) + tuple(p + "_xel" for p in PAIRS)  # their order; _xm0 = test-split keys
TRAINED = tuple(g for g in GROUPS if g.endswith("_xel") and g != "43_xel")  # 15 seen pairs, train-split keys
SHIFT = {1: 5, 2: 1, 3: -2, 4: -8}
N_SEQUENCES = 900_000  # drawn; the 15 trained groups hold 759,375 of them
MAX_POS = 20  # their positional table's rows (the model reads the first n_ctx)
# what the authors' draws are defined for: the paper-code preset's model and task
SHAPE = {"model.n_layers": 2, "model.d_model": 400, "model.d_head": 200, "model.d_mlp": 1200, "model.n_heads": 1,
         "model.d_vocab": 201, "model.n_ctx": 9, "model.norm": "post", "model.bias": False, "model.unembed_bias": True,
         "model.arch": "transformer", "init.distribution": "normal", "init.embed_fan_in": "d_model",
         "task.name": "anchor", "task.n_train": 759_375}
OPTIONS = {"task.variant": "paper", "task.split_modulus": 9, "task.groups": 0}


def check_config(cfg) -> ReplaySpec:
    """The run's replay, after checking that its model and task are the ones the draws are made for."""
    spec = parse(cfg.train.replay)
    flat = {f"{s}.{k}": v for s in ("model", "init", "task") for k, v in getattr(cfg, s).to_dict().items()}
    for key, want in {**SHAPE, **OPTIONS}.items():
        if flat.get(key) != want:
            raise ConfigError(f"train.replay = {cfg.train.replay!r} re-draws the authors' model and data, which need {key} = {want!r} "
                              f"(this config has {flat.get(key)!r}); start from --preset paper-code")
    return spec


def authors_data(seed: int) -> dict[str, np.ndarray]:
    """Their 32 data types, each ``[n, 10]`` (9 inputs, then the answer), drawn as their seed draws them."""
    rs, py = np.random.RandomState(seed), random.Random(seed)
    weights = np.array([1.0] * 16 + [9.0] * 16)
    shares = (weights / weights.sum()).tolist()
    keys = {split: {p: [x for x in range(20, 100) if (x % 9 == p) == (split == "test")] for p in range(9)}
            for split in ("test", "train")}
    out = {}
    for name, share in zip(GROUPS, shares):
        n = math.ceil(N_SEQUENCES * share)
        rows = rs.randint(20, 100, size=(n, 10))
        a1, a2 = int(name[0]), int(name[1])
        table = keys["test" if name.endswith("_xm0") else "train"]
        for i in range(n):
            pos = rs.randint(0, 7)
            x = py.choice(table[pos])
            rows[i, pos : pos + 3] = (x, a1, a2)
            rows[i, -1] = x + SHIFT[a1] + SHIFT[a2] + (4 if (a1, a2) == (3, 4) else 0)
        out[name] = rows
    return out


def trained_sequences(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Their training set in their order before shuffling: tokens ``[batch pos]`` and targets ``[batch]``."""
    data = authors_data(seed)
    rows = torch.from_numpy(np.concatenate([data[g] for g in TRAINED]))
    return rows[:, :-1].contiguous(), rows[:, -1].contiguous()


def authors_init_and_shuffles(seed: int, gamma: float, n_epochs: int) -> tuple[dict[str, torch.Tensor], list[int]]:
    """Their initial weights under TransformerLens names (torch's generator seeded with ``seed``, layer
    by layer as their modules are built: PyTorch's default init, then the γ rule), and the seed of
    each epoch's shuffle (their DataLoaders draw two numbers from the same generator on every pass —
    a base seed, then the sampler's seed — and every data type is passed over for the accuracies every
    third epoch, the 17 untrained ones for the test loss every epoch)."""
    d_model, d_head, d_mlp, vocab, n_ctx = 400, 200, 1200, 201, 9
    gen = torch.Generator().manual_seed(seed)

    def std(d_in: int) -> float:
        return d_in ** -gamma

    def linear(d_out: int, d_in: int, bias: bool = False):  # nn.Linear's own init, then the γ rule
        w = torch.empty(d_out, d_in)
        torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5), generator=gen)
        b = torch.empty(d_out).uniform_(-1 / math.sqrt(d_in), 1 / math.sqrt(d_in), generator=gen) if bias else None
        w.normal_(0, std(d_in), generator=gen)
        return w, b

    tok = torch.empty(vocab, d_model).normal_(generator=gen)  # nn.Embedding's own init
    pos = torch.empty(MAX_POS, d_model).normal_(generator=gen)
    tok.normal_(0, std(d_model), generator=gen), pos.normal_(0, std(d_model), generator=gen)
    w = {"embed.W_E": tok, "pos_embed.W_pos": pos[:n_ctx].clone()}
    for layer in range(2):
        for name, (d_out, d_in) in (("W_Q", (d_head, d_model)), ("W_K", (d_head, d_model)), ("W_V", (d_head, d_model)),
                                    ("W_O", (d_model, d_head))):
            weight, _ = linear(d_out, d_in)
            w[f"blocks.{layer}.attn.{name}"] = weight.T.unsqueeze(0).contiguous()
        w_in = torch.empty(d_mlp, d_model)
        w_out = torch.empty(d_model, d_mlp)
        torch.nn.init.kaiming_uniform_(w_in, a=math.sqrt(5), generator=gen)  # both layers are built before the γ rule
        torch.nn.init.kaiming_uniform_(w_out, a=math.sqrt(5), generator=gen)
        w_in.normal_(0, std(d_model), generator=gen), w_out.normal_(0, std(d_mlp), generator=gen)
        w[f"blocks.{layer}.mlp.W_in"], w[f"blocks.{layer}.mlp.W_out"] = w_in.T.contiguous(), w_out.T.contiguous()
    w_u, b_u = linear(vocab, d_model, bias=True)
    w["unembed.W_U"], w["unembed.b_U"] = w_u.T.contiguous(), b_u

    def draw() -> int:
        return int(torch.empty((), dtype=torch.int64).random_(generator=gen).item())

    shuffles = []
    for epoch in range(n_epochs):
        if epoch % 3 == 0:
            for _ in range(2 * (len(GROUPS) + 1)):  # every data type's accuracy, then (4,3)'s deviations
                draw()
        draw()  # the training pass's base seed
        shuffles.append(draw())  # its sampler's seed
        for _ in range(2 * (len(GROUPS) - len(TRAINED))):  # the test loss of the 17 untrained types
            draw()
    return w, shuffles


def shuffle(shuffle_seed: int, n: int) -> torch.Tensor:
    """Their DataLoader's order of one epoch from its sampler's seed."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(shuffle_seed))


@dataclass(frozen=True)
class Replay:
    """Another code's draws in place of mechinit's own. ``note`` says what is replayed (recorded in
    ``config.json`` as ``provenance.replayed``). ``weights`` (TransformerLens parameter names, any
    subset) are copied over the γ-init draws before step 0; ``data`` (tokens ``[batch pos]``, targets)
    replaces the training set; ``permutation(epoch, n)`` replaces each epoch's batch order. A run
    whose ``train.replay`` is set gets its :class:`Replay` from :func:`from_config`; code may pass
    its own to :func:`mechinit.training.trainer.train` (a resume then needs the same one)."""

    note: str
    weights: dict[str, torch.Tensor] | None = None
    data: tuple[torch.Tensor, torch.Tensor] | None = None
    permutation: Callable[[int, int], torch.Tensor] | None = None


def from_config(cfg, n_epochs: int) -> Replay:
    """The :class:`Replay` that ``cfg.train.replay`` names, over ``n_epochs`` epochs of batch orders."""
    spec = check_config(cfg)
    weights, shuffles = authors_init_and_shuffles(spec.seed, cfg.init.gamma, n_epochs)
    whose = f"the authors' seed {spec.seed} (their teaching code's draws, re-drawn by mechinit.training.replay)"
    ours = {"init": f"mechinit's train.init_seed {cfg.train.weights_seed}", "data": f"mechinit's train.data_seed {cfg.train.order_seed}"}
    note = (f"{spec.text()}: initial weights from {whose if spec.init else ours['init']}; "
            f"data and batch order from {whose if spec.data else ours['data']}")
    if not spec.data:
        return Replay(note, weights=weights)
    return Replay(note, weights=weights if spec.init else None, data=trained_sequences(spec.seed),
                  permutation=lambda epoch, n: shuffle(shuffles[epoch], n))
