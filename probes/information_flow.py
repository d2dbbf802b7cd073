"""Information flow through attention (paper Fig 3a,c).

For each layer the probe reads ``blocks.{l}.attn.hook_pattern`` and measures, for the key at
position p and the anchor pair at p+1, p+2:

* ``key_to_anchor`` — mean attention of the two anchor positions to the key, A[p+1,p] and A[p+2,p];
* ``anchors_to_last`` — attention of the last position to both anchors, A[-1,p+1] + A[-1,p+2];
* ``key_to_last`` — attention of the last position to the key, A[-1,p].

Averaged over ``n_inputs`` random test sequences of ``pair`` (heads averaged; per head kept), the
``mechanism`` at ``flow_layer`` (default paper layer 1) is ``inferential-flow`` when that layer
moves the key to the anchors (key_to_anchor ≥ threshold and above anchors_to_last),
``symmetric-flow`` when it merges both anchors at the last token (the reverse), else ``unclear``.
The figure draws the flow graph of one example input (default key 99 before (4,3)) with edge width
= attention weight, and attention rollout as an extra view.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mechinit.probes.base import (
    ProbeConfig,
    ProbeError,
    Result,
    cache,
    check_layer,
    finite,
    require,
    require_attention,
    require_pair,
    sequences,
)

from mechinit.tasks.anchor import ITEM_MAX, ITEM_MIN

NAME = "information_flow"
TASKS = ("anchor",)
NEEDS_ATTENTION = True  # reads blocks / attention; refuses attention-free models (Emb-MLP)


@dataclass(frozen=True)
class Config(ProbeConfig):
    pair: tuple[int, ...] = (4, 3)
    example_key: int = 99
    example_key_pos: int | None = None  # default: the test-split position of the key (key mod (n_ctx-2))
    n_inputs: int = 512
    flow_layer: int = 0
    threshold: float = 0.4
    seed: int = 0
    min_edge: float = 0.05

    NAME = 'information_flow'

    def validate(self) -> None:
        require_pair(self, "pair")
        require(self, "example_key", ITEM_MIN <= self.example_key <= ITEM_MAX, f"must be an item in {ITEM_MIN}..{ITEM_MAX}")
        require(self, "example_key_pos", self.example_key_pos is None or self.example_key_pos >= 0, "a position >= 0, or null")
        require(self, "n_inputs", self.n_inputs >= 1, "must be at least 1")
        require(self, "threshold", 0.0 <= self.threshold <= 1.0, "must be in [0, 1] (an attention weight)")
        require(self, "min_edge", 0.0 <= self.min_edge <= 1.0, "must be in [0, 1] (an attention weight)")



def hooks(model, cfg: Config) -> list[str]:
    return [f"blocks.{l}.attn.hook_pattern" for l in range(model.cfg.n_layers)]


def flow_masses(patterns: list[torch.Tensor], key_pos: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per layer [layer, batch, head] masses from patterns [batch head_index query_pos key_pos]."""
    rows = torch.arange(len(key_pos))
    out = {"key_to_anchor": [], "anchors_to_last": [], "key_to_last": []}
    for A in patterns:
        a1, a2 = A[rows, :, key_pos + 1, key_pos], A[rows, :, key_pos + 2, key_pos]
        out["key_to_anchor"].append((a1 + a2) / 2)
        out["anchors_to_last"].append(A[rows, :, -1, key_pos + 1] + A[rows, :, -1, key_pos + 2])
        out["key_to_last"].append(A[rows, :, -1, key_pos])
    return {k: torch.stack(v) for k, v in out.items()}


def label(key_to_anchor: float, anchors_to_last: float, threshold: float) -> str:
    if key_to_anchor >= threshold and key_to_anchor > anchors_to_last:
        return "inferential-flow"
    if anchors_to_last >= threshold and anchors_to_last > key_to_anchor:
        return "symmetric-flow"
    return "unclear"


def rollout(patterns: list[torch.Tensor]) -> torch.Tensor:
    """Attention rollout of one input: product over layers of (A + I)/2, heads averaged."""
    n = patterns[0].shape[-1]
    r = torch.eye(n)
    for A in patterns:
        a = 0.5 * A.mean(0) + 0.5 * torch.eye(n)
        r = (a / a.sum(-1, keepdim=True)) @ r
    return r


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    require_attention(model, NAME)
    pair = tuple(cfg.pair)
    if len(pair) != 2:
        raise ProbeError(f"information_flow.pair must be two anchors, got {pair}")
    flow_layer = check_layer(cfg.flow_layer, model, "information_flow.flow_layer")
    names = hooks(model, cfg)
    batch = task.sample(cfg.n_inputs, "test", (pair,), torch.Generator().manual_seed(cfg.seed))
    key_pos = ((batch.tokens >= 1) & (batch.tokens <= 4)).int().argmax(1) - 1
    keep = key_pos + 2 < task.n_ctx - 1  # the last position must not be an anchor itself
    tokens, key_pos = batch.tokens[keep], key_pos[keep]
    c = cache(model, tokens, names)
    masses = flow_masses([c[n].float().cpu() for n in names], key_pos)
    per_layer = []
    for l in range(model.cfg.n_layers):
        row = {k: finite(v[l].mean()) for k, v in masses.items()}
        row["per_head"] = {k: [finite(x) for x in v[l].mean(0)] for k, v in masses.items()}
        per_layer.append(row)
    f = per_layer[flow_layer]
    mechanism = label(f["key_to_anchor"], f["anchors_to_last"], cfg.threshold)

    ex_pos = cfg.example_key_pos if cfg.example_key_pos is not None else cfg.example_key % (task.n_ctx - 2)
    example = sequences(task, pair, [cfg.example_key], ex_pos, cfg.seed)
    ec = cache(model, example, names)
    ex_patterns = [ec[n][0].float().cpu() for n in names]
    numbers = {
        "per_layer": per_layer,
        "n_inputs": int(len(tokens)),
        "example": {"tokens": example[0].tolist(), "key_pos": ex_pos,
                    "patterns": [p.mean(0).tolist() for p in ex_patterns], "rollout": rollout(ex_patterns).tolist()},
    }
    headline = {"mechanism": mechanism, "key_to_anchor_mass": f["key_to_anchor"], "anchors_to_last_mass": f["anchors_to_last"],
                "key_to_last_mass": f["key_to_last"]}
    meta = {"hooks": names, "flow_layer": flow_layer, **cfg.to_dict()}
    return Result(NAME, numbers, headline, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    ex = result.numbers["example"]
    tokens, p = ex["tokens"], ex["key_pos"]
    n, L = len(tokens), len(ex["patterns"])
    fig = make_subplots(rows=1, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.12, subplot_titles=(
        "attention flow of one example", "attention rollout"))
    for l, A in enumerate(ex["patterns"]):
        for q in range(n):
            for k in range(q + 1):
                w = A[q][k]
                if w >= result.meta["min_edge"]:
                    fig.add_trace(go.Scatter(x=[l, l + 1], y=[k, q], mode="lines", line=dict(width=1 + 8 * w, color=f"rgba(31,119,180,{min(1.0, 0.2 + w)})"),
                                             hovertext=f"layer {l}: {q}←{k} {w:.2f}", hoverinfo="text", showlegend=False), 1, 1)
    colour = ["#d62728" if i == p else "#2ca02c" if i in (p + 1, p + 2) else "#7f7f7f" for i in range(n)]
    for l in range(L + 1):
        fig.add_trace(go.Scatter(x=[l] * n, y=list(range(n)), mode="markers+text", text=[str(t) for t in tokens], textposition="middle left",
                                 marker=dict(size=10, color=colour), showlegend=False), 1, 1)
    fig.update_xaxes(title_text="layer (block boundary)", dtick=1, row=1, col=1)
    fig.update_yaxes(title_text="position", row=1, col=1)
    fig.add_trace(go.Heatmap(z=ex["rollout"], colorscale="Blues", showscale=False), 1, 2)
    fig.update_xaxes(title_text="key position", row=1, col=2)
    fig.update_yaxes(title_text="query position", row=1, col=2)
    fig.update_layout(title=f"information flow (red: key, green: anchors); mechanism over {result.numbers['n_inputs']} inputs: "
                            f"{result.headline['mechanism']}", height=520)
    return fig
