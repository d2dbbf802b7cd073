"""Last-token representations after the first attention sub-layer (paper Fig 3b).

Reads X^ao(1), i.e. ``blocks.{layer}.hook_resid_mid`` at the last position (default paper layer
1), for ``n_inputs`` test sequences spread over all 16 anchor pairs, and embeds a subsample with
t-SNE (scikit-learn), coloured by pair. Number, on the full-dimensional vectors: for each ordered
pair (a,b) with a≠b, the distance from its cluster centre to (b,a)'s divided by the mean distance to
the other pairs' centres. The ``symmetric_merge_score`` headline is that ratio for (4,3)↔(3,4)
(below 1: the unseen pair sits with its mirror, as in the symmetric solution), with the mean over
all mirror pairs alongside.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mechinit.probes.base import ProbeConfig, Result, cache, check_layer, finite, require, require_pair, sig3, tsne_2d

from mechinit.tasks.anchor import PAIRS, pair_name

NAME = "representation_tsne"
TASKS = ("anchor",)
NEEDS_ATTENTION = True  # reads blocks / attention; refuses attention-free models (Emb-MLP)


@dataclass(frozen=True)
class Config(ProbeConfig):
    layer: int = 0  # TL block index; X^ao(layer+1)
    n_inputs: int = 4000
    n_tsne: int = 1000
    focus: tuple[int, ...] = (4, 3)
    seed: int = 0

    NAME = 'representation_tsne'

    def validate(self) -> None:
        require(self, "n_inputs", self.n_inputs >= 16, "must be at least 16")
        require(self, "n_tsne", 2 <= self.n_tsne <= self.n_inputs, "must be in 2..n_inputs")
        require_pair(self, "focus")



def hooks(model, cfg: Config) -> list[str]:
    return [f"blocks.{check_layer(cfg.layer, model, 'representation_tsne.layer')}.hook_resid_mid"]


def merge_ratios(centres: dict[tuple[int, int], torch.Tensor]) -> dict[str, float | None]:
    out = {}
    for (a, b), c in centres.items():
        if a == b or (b, a) not in centres:
            continue
        others = [torch.dist(c, o) for p, o in centres.items() if p not in ((a, b), (b, a))]
        mean_other = torch.stack(others).mean()
        out[f"{a},{b}"] = finite(torch.dist(c, centres[(b, a)]) / mean_other) if mean_other > 0 else None
    return out


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    (name,) = hooks(model, cfg)
    n = max(cfg.n_inputs // len(PAIRS), 1)
    gen = torch.Generator().manual_seed(cfg.seed)
    batches = [task.sample(n, "test", (p,), gen) for p in PAIRS]
    tokens = torch.cat([b.tokens for b in batches])
    labels = torch.cat([b.pair_index for b in batches])
    x = cache(model, tokens, [name])[name][:, -1].float().cpu()
    centres = {p: x[labels == i].mean(0) for i, p in enumerate(PAIRS)}
    ratios = merge_ratios(centres)
    focus = pair_name(tuple(cfg.focus))
    values = [v for v in ratios.values() if v is not None]
    pick = torch.randperm(len(x), generator=torch.Generator().manual_seed(cfg.seed))[: cfg.n_tsne]
    xy, note = tsne_2d(x[pick], cfg.seed)
    numbers = {"merge_ratio": ratios, "tsne": xy, "tsne_note": note, "tsne_pairs": [pair_name(PAIRS[int(i)]) for i in labels[pick]],
               "n_inputs": int(len(x))}
    headline = {"symmetric_merge_score": ratios.get(focus), "mean_mirror_ratio": finite(sum(values) / len(values)) if values else None}
    meta = {"hooks": [name], "position": "last", **cfg.to_dict()}
    return Result(NAME, numbers, headline, meta, draw=_figure)


PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
           "#393b79", "#e7ba52", "#637939", "#843c39", "#7b4173", "#3182bd")


def _figure(result: Result):
    import plotly.graph_objects as go

    fig = go.Figure()
    xy, pairs = result.numbers["tsne"] or [], result.numbers["tsne_pairs"]
    focus = pair_name(tuple(result.meta["focus"]))
    mirror = ",".join(reversed(focus.split(",")))
    for p in sorted(set(pairs)) if xy else []:  # no t-SNE (constant or non-finite input): an empty plot, numbers say why
        idx = [i for i, q in enumerate(pairs) if q == p]
        size = 9 if p in (focus, mirror) else 5
        colour = PALETTE[sorted(set(pairs)).index(p) % len(PALETTE)]  # 16 pairs, 16 distinct colours
        fig.add_trace(go.Scatter(x=[xy[i][0] for i in idx], y=[xy[i][1] for i in idx], mode="markers", name=f"({p})",
                                 marker=dict(size=size, color=colour)))
    fig.update_layout(title=f"t-SNE of last-token X^ao (block {result.meta['layer']}); ({focus})↔({mirror}) merge ratio "
                            f"{sig3(result.headline['symmetric_merge_score'])}", height=520,
                      xaxis_title="t-SNE 1", yaxis_title="t-SNE 2", legend_title_text="pair")
    return fig
