"""Deviation: where a pair's answers land relative to its inferential target.

The authors' teaching code logs a "Deviation Distribution" for the held-out (4,3): over its sequences
with train-split keys, the share of each offset answer − target, the target being the inferential
x + shift(4) + shift(3) = x − 10. A share at 0 is the inferential solution, one at +4 the symmetric
one ((3,4)'s memorised x − 6), and mass at small offsets (±1–3) an answer *near* the target: the
graded, not-yet-exact phase their γ 0.8 run spends thousands of steps in. For each pair in ``pairs``
(default (4,3) and its seen mirror (3,4)) this probe draws ``n_inputs`` sequences as the task's own
evaluation does (key at any position, noise elsewhere; ``seed``) with keys from the ``split`` half of
App C's split (default ``train``, as the authors log it) and reports the fraction of answers at
every offset that occurs.

Headline (the first pair): ``at_inferential`` (offset 0), ``at_symmetric`` (the offset of the pair's
symmetric map, null for a pair without one), ``near`` (1 ≤ |offset| ≤ 3, the symmetric offset
excluded) and ``mode`` (the most common offset).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mechinit.probes.base import ProbeConfig, ProbeError, Result, require
from mechinit.probes.key_position import answers
from mechinit.probes.patching import require_pairs_and_inputs

from mechinit.tasks.anchor import inferential_shift, pair_name

NAME = "deviation"
TASKS = ("anchor",)
NEEDS_ATTENTION = False  # reads the model's answers only
NEAR = 3  # offsets 1..NEAR away from the target count as near misses


@dataclass(frozen=True)
class Config(ProbeConfig):
    pairs: tuple[int, ...] = (4, 3, 3, 4)  # flattened anchor pairs; the first is the headline's
    n_inputs: int = 4096  # sequences per pair
    split: str = "train"  # which keys: "train" (the authors' log) or "test" (App C's held-out keys)
    seed: int = 0

    NAME = "deviation"

    def validate(self) -> None:
        require_pairs_and_inputs(self)
        require(self, "split", self.split in ("test", "train"), "choose one of ['test', 'train']")


def hooks(model, cfg: Config) -> list[str]:
    return []  # reads the model's output only


def map_offset(task, pair: tuple[int, int], kind: str) -> int | None:
    """Offset from the inferential target of the pair's ``designated`` map (what a seen pair is trained
    on) or its ``symmetric`` one (its mirror's designated map); None where the pair has no such map."""
    shift = task.designated[pair if kind == "designated" else (pair[1], pair[0])]
    return None if shift is None else shift - inferential_shift(pair)


def offsets(model, task, cfg: Config, pair: tuple[int, int]) -> dict[int, float]:
    """Fraction of the pair's answers at each offset from its inferential target, offsets ascending."""
    gen = torch.Generator().manual_seed(cfg.seed * 1000 + 10 * pair[0] + pair[1])
    batch = task.sample(cfg.n_inputs, cfg.split, (pair,), gen)
    said = answers(model, batch.tokens)
    values, counts = torch.unique(said - (batch.keys + inferential_shift(pair)), return_counts=True)
    return {int(v): float(c) / cfg.n_inputs for v, c in zip(values, counts)}


def summary(dist: dict[int, float], symmetric: int | None) -> dict:
    near = float(sum(share for offset, share in dist.items() if 1 <= abs(offset) <= NEAR and offset != symmetric))
    return {"at_inferential": dist.get(0, 0.0), "at_symmetric": None if symmetric is None else dist.get(symmetric, 0.0),
            "near": near, "mode": max(dist, key=dist.get)}


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:  # noqa: ARG001 - reads the final weights
    pairs = [tuple(cfg.pairs[i : i + 2]) for i in range(0, len(cfg.pairs), 2)]
    if not pairs:
        raise ProbeError("deviation.pairs is empty; give anchor pairs, e.g. 4,3")
    per_pair = {}
    for pair in pairs:
        dist, symmetric = offsets(model, task, cfg, pair), map_offset(task, pair, "symmetric")
        per_pair[pair_name(pair)] = {"offsets": dist, "symmetric_offset": symmetric,
                                     "designated_offset": map_offset(task, pair, "designated"), **summary(dist, symmetric)}
    first = per_pair[pair_name(pairs[0])]
    headline = {k: first[k] for k in ("at_inferential", "at_symmetric", "near", "mode")}
    meta = {"hooks": [], "near": NEAR, **cfg.to_dict()}
    return Result(NAME, {"pairs": per_pair}, headline, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    pairs = result.numbers["pairs"]
    fig = make_subplots(rows=1, cols=len(pairs), subplot_titles=[f"({p})" for p in pairs])
    for i, rec in enumerate(pairs.values(), start=1):
        dist = {int(x): share for x, share in rec["offsets"].items()}  # JSON keeps the offsets as strings
        marked = {rec["designated_offset"]: "#2ca02c", rec["symmetric_offset"]: "#d62728", 0: "#1f77b4"}  # 0 last: stays blue
        marked.pop(None, None)
        ends = list(dist) + list(marked)
        xs = list(range(min(ends), max(ends) + 1))  # every offset in between, so each bar is one offset wide
        fig.add_trace(go.Bar(x=xs, y=[dist.get(x, 0.0) for x in xs], width=0.9, showlegend=False,
                             marker_color=[marked.get(x, "#999999") for x in xs]), 1, i)
        fig.update_xaxes(title_text="answer − inferential target (blue: inferential, green: designated, red: symmetric)",
                         row=1, col=i)
        fig.update_yaxes(title_text="fraction of answers", range=[0, 1], row=1, col=i)
    fig.update_layout(title=f"deviation of the answers ({result.meta['split']}-split keys, {result.meta['n_inputs']} sequences per pair)",
                      height=450)
    return fig
