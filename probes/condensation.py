"""Condensation of W_Q neurons (paper Fig 5a,b, 10, 15).

Neuron j of head h has the input-weight vector ``W_Q[h, :, j]`` (a column of TL's d_model × d_head
matrix; a row of the paper's). The probe takes the cosine similarity between every two neurons,
groups neurons whose |cos| exceeds ``threshold`` (connected components, as the paper's reordered
heatmaps do) and reports the number of groups needed to cover 90% of the neurons, the largest
group and the mean off-diagonal |cos|. Default: paper layer 1 (``blocks.0``), every head.

Cosines are computed in float64, so weights near the float32 limit (a diverged run) still give true
cosines. A head whose W_Q holds a NaN/inf, or whose neurons are all zero, has no cosine structure:
its numbers are ``null`` with a ``reason``, never a count of singleton groups.

Headline: with one head, that head's ``n_groups_90``, ``largest_group`` and ``mean_abs_cos``. With
several heads, each head's numbers as ``head{h}.n_groups_90`` … and, under the plain names, one
summary: the **mean over the heads that have numbers** for all three (``meta.headline_summary`` says
which heads); ``null`` if no head has numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mechinit.probes.base import ProbeConfig, ProbeError, Result, check_layer, finite, require, require_attention

NAME = "condensation"
TASKS = None  # any task: reads W_Q of a layer
NEEDS_ATTENTION = True  # reads blocks / attention; refuses attention-free models (Emb-MLP)


@dataclass(frozen=True)
class Config(ProbeConfig):
    layer: int = 0  # TL block index (paper layer 1)
    heads: tuple[int, ...] | None = None  # default: every head
    threshold: float = 0.7
    coverage: float = 0.9

    NAME = 'condensation'

    def validate(self) -> None:
        require(self, "threshold", 0.0 <= self.threshold <= 1.0, "must be in [0, 1] (a |cosine|)")
        require(self, "coverage", 0.0 < self.coverage <= 1.0, "must be in (0, 1]")
        require(self, "heads", self.heads is None or all(h >= 0 for h in self.heads), "head indices count from 0")
        require(self, "layer", self.layer >= -64, "a block index (negative counts from the end)")



def hooks(model, cfg: Config) -> list[str]:
    return []  # reads weights only


def cosine_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of the rows of ``vectors`` in float64 (zero rows get cosine 0 with everything)."""
    vectors = vectors.double()
    norms = vectors.norm(dim=1, keepdim=True)
    unit = torch.where(norms > 0, vectors / norms.clamp_min(1e-300), torch.zeros_like(vectors))
    return unit @ unit.T


def groups(cos: torch.Tensor, threshold: float) -> list[list[int]]:
    """Connected components of the graph |cos| > threshold, largest first."""
    n = cos.shape[0]
    adjacent = (cos.abs() > threshold).tolist()
    seen, out = [False] * n, []
    for start in range(n):
        if seen[start]:
            continue
        stack, comp = [start], []
        seen[start] = True
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in range(n):
                if adjacent[i][j] and not seen[j]:
                    seen[j] = True
                    stack.append(j)
        out.append(sorted(comp))
    return sorted(out, key=lambda g: (-len(g), g[0]))


def groups_covering(sizes: list[int], coverage: float) -> int:
    total, covered = sum(sizes), 0
    for k, size in enumerate(sorted(sizes, reverse=True), start=1):
        covered += size
        if covered >= coverage * total - 1e-9:
            return k
    return len(sizes)


def analyse(vectors: torch.Tensor, cfg: Config) -> dict:
    n = vectors.shape[0]
    empty = {"n_neurons": n, "n_groups": None, "n_groups_90": None, "largest_group": None, "mean_abs_cos": None,
             "groups": None, "order": None, "cos": None}
    if not torch.isfinite(vectors).all():
        return {**empty, "reason": "W_Q holds NaN or inf (a diverged model): no cosines"}
    if not vectors.abs().sum(dim=1).gt(0).any():
        return {**empty, "reason": "every W_Q neuron is the zero vector: no cosines"}
    cos = cosine_matrix(vectors)
    found = groups(cos, cfg.threshold)
    order = [i for g in found for i in g]
    off = cos.abs()[~torch.eye(n, dtype=torch.bool)]
    return {
        "n_neurons": n,
        "n_groups": len(found),
        "n_groups_90": groups_covering([len(g) for g in found], cfg.coverage),
        "largest_group": len(found[0]),
        "mean_abs_cos": finite(off.mean()) if n > 1 else None,
        "groups": found,
        "order": order,
        "cos": cos[order][:, order].tolist(),
    }


HEADLINE_KEYS = ("n_groups_90", "largest_group", "mean_abs_cos")


def headline_of(per_head: dict[str, dict]) -> tuple[dict, str]:
    """The headline (see the module docstring) and a sentence saying how its summary was formed."""
    if len(per_head) == 1:
        (h, only), = per_head.items()
        return {k: only[k] for k in HEADLINE_KEYS}, f"head {h} alone"
    out = {}
    for k in HEADLINE_KEYS:  # the summary first, then each head
        values = [r[k] for r in per_head.values() if r[k] is not None]
        out[k] = sum(values) / len(values) if values else None
    out.update({f"head{h}.{k}": r[k] for h, r in per_head.items() for k in HEADLINE_KEYS})
    counted = [h for h, r in per_head.items() if r["n_groups_90"] is not None]
    return out, f"mean over heads {counted} (heads without numbers are left out)" if counted else "no head has numbers"


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    require_attention(model, NAME)
    layer = check_layer(cfg.layer, model, "condensation.layer")
    W_Q = model.blocks[layer].attn.W_Q.detach()  # [head_index d_model d_head]
    heads = cfg.heads if cfg.heads is not None else tuple(range(W_Q.shape[0]))
    if any(h >= W_Q.shape[0] for h in heads):
        raise ProbeError(f"condensation.heads = {list(heads)}: the model has {W_Q.shape[0]} heads (0..{W_Q.shape[0] - 1})")
    per_head = {str(h): analyse(W_Q[h].T, cfg) for h in heads}  # rows = neurons' input-weight vectors
    headline, summary = headline_of(per_head)
    meta = {"hooks": [], "weights_read": [f"blocks.{layer}.attn.W_Q"], "layer": layer, "heads": list(heads),
            "headline_summary": summary, **cfg.to_dict()}
    return Result(NAME, {"heads": per_head}, headline, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    per_head = result.numbers["heads"]
    heads = list(per_head)

    def title(h):
        r = per_head[h]
        return f"head {h}: {r['n_groups_90']} groups cover 90%" if r["n_groups_90"] is not None else f"head {h}: {r['reason']}"

    fig = make_subplots(rows=1, cols=len(heads), subplot_titles=[title(h) for h in heads])
    for i, h in enumerate(heads, start=1):
        fig.add_trace(go.Heatmap(z=per_head[h]["cos"] or [[None]], zmin=-1, zmax=1, colorscale="RdBu_r", showscale=i == 1,
                                 colorbar=dict(title="cos")), 1, i)
    fig.update_xaxes(title_text="W_Q neuron (grouped)")
    fig.update_yaxes(title_text="W_Q neuron (grouped)", autorange="reversed")
    summary = f"; headline numbers: {result.meta['headline_summary']}" if len(heads) > 1 else ""
    fig.update_layout(title=f"W_Q neuron cosine similarity, block {result.meta['layer']} (grouped at |cos| > {result.meta['threshold']}){summary}",
                      height=520)
    return fig
