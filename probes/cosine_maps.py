"""Cosine maps of fused vectors (paper Fig 4a–c).

The fused vector v(x; a1, a2) is the last-token X^ao of block ``fused_layer`` (default: the last
block; paper layer 2 of a 2-layer model, ``blocks.1.hook_resid_mid``) for key x directly before
the pair, over a key grid (default 30–40, as the paper's axes) in one fixed noise context.

The paper's claim (§5.2, Fig 4a,b) compares two *seen* pairs, (3,3) against (2,2) and (1,2) against
(1,3): where f(x; A) = f(y; B), v(x; A) and v(y; B) are nearly parallel in the inferential solution
and not in the symmetric one. ``panels`` holds those pairs of pairs. A model can put every fused
vector along one shared direction (small init does: their raw cosines are all near 1), which hides
the same-target structure from a raw-cosine contrast, so the headline ``parallelism_gap`` is the mean
cosine on same-target cells minus the mean elsewhere **after removing the mean fused vector over
every seen pair and key**, averaged over the panels; ``same_target_cos`` / ``other_cos`` are the raw
means the paper's heatmaps show. ``heldout_parallelism_gap`` is a different question, kept under its
own name: the held-out ``focus`` pair's vectors (at its inferential target) against every seen pair's
(at its designated target), raw cosines. The same contrast is drawn for u(x; a1) = V of block
``value_layer`` at the first-anchor position, anchor against anchor (Fig 4c).
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
    sig3,
)

from mechinit.tasks.anchor import ANCHORS, ITEM_MAX, ITEM_MIN, SHIFT, inferential_shift, pair_name

NAME = "cosine_maps"
TASKS = ("anchor",)
NEEDS_ATTENTION = True  # reads blocks / attention; refuses attention-free models (Emb-MLP)


@dataclass(frozen=True)
class Config(ProbeConfig):
    focus: tuple[int, ...] = (4, 3)
    key_min: int = 30
    key_max: int = 40
    key_pos: int = 1
    fused_layer: int = -1
    value_layer: int = -1
    show: tuple[int, ...] = (3, 4, 2, 4)  # pairs drawn in the figure, flattened
    panels: tuple[int, ...] = (3, 3, 2, 2, 1, 2, 1, 3)  # the paper's Fig 4a,b comparisons: pairs of seen pairs, flattened
    seed: int = 0

    NAME = 'cosine_maps'

    def validate(self) -> None:
        require_pair(self, "focus")
        require(self, "key_min", ITEM_MIN <= self.key_min <= ITEM_MAX, f"must be an item in {ITEM_MIN}..{ITEM_MAX}")
        require(self, "key_max", self.key_min < self.key_max <= ITEM_MAX, f"must be in key_min+1..{ITEM_MAX}")
        require(self, "key_pos", self.key_pos >= 0, "a position >= 0")
        require(self, "show", len(self.show) % 2 == 0 and all(a in (1, 2, 3, 4) for a in self.show),
                "anchor pairs, flattened: an even number of anchors from 1..4")
        require(self, "panels", len(self.panels) % 4 == 0 and len(self.panels) > 0 and all(a in (1, 2, 3, 4) for a in self.panels),
                "pairs of anchor pairs, flattened: a multiple of four anchors from 1..4")



def hooks(model, cfg: Config) -> list[str]:
    f = check_layer(cfg.fused_layer, model, "cosine_maps.fused_layer")
    v = check_layer(cfg.value_layer, model, "cosine_maps.value_layer")
    return sorted({f"blocks.{f}.hook_resid_mid", f"blocks.{v}.attn.hook_v"})


def cosine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a = a / a.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    b = b / b.norm(dim=-1, keepdim=True).clamp_min(1e-30)
    return a @ b.T


def gap(cos: torch.Tensor, same: torch.Tensor) -> float | None:
    if not same.any() or same.all():
        return None
    return finite(cos[same].mean() - cos[~same].mean())


def seen_pair_panels(fused: dict, keys: torch.Tensor, designated: dict, panels: list) -> dict:
    """The paper's Fig 4a,b contrast: for each panel (A, B) of seen pairs, raw and centred cosines of
    v(x; A) against v(y; B), same-target cells where x + f_A = y + f_B. ``fused`` maps every seen pair to
    its ``[key d_model]`` vectors; the centre is their mean over every seen pair and key."""
    centre = torch.cat(list(fused.values())).mean(0)
    out = {}
    for a, b in panels:
        same = (keys + designated[a])[:, None] == (keys + designated[b])[None, :]
        raw = cosine(fused[a], fused[b])
        centred = cosine(fused[a] - centre, fused[b] - centre)
        out[f"{pair_name(a)} vs {pair_name(b)}"] = {
            "cos": raw.tolist(), "centred_cos": centred.tolist(), "same_target": same.tolist(), "gap": gap(centred, same),
            "raw_gap": gap(raw, same), "same_target_cos": finite(raw[same].mean()) if same.any() else None,
            "other_cos": finite(raw[~same].mean()) if (~same).any() else None}
    return out


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return finite(sum(values) / len(values)) if values else None


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    require_attention(model, NAME)
    if len(cfg.focus) != 2 or len(cfg.show) % 2:
        raise ProbeError("cosine_maps.focus must be two anchors and cosine_maps.show a flat list of pairs")
    names = hooks(model, cfg)
    fused = f"blocks.{check_layer(cfg.fused_layer, model, 'cosine_maps.fused_layer')}.hook_resid_mid"
    value = f"blocks.{check_layer(cfg.value_layer, model, 'cosine_maps.value_layer')}.attn.hook_v"
    keys = torch.arange(cfg.key_min, cfg.key_max + 1)
    focus = tuple(cfg.focus)

    def vectors(pair):
        c = cache(model, sequences(task, pair, keys, cfg.key_pos, cfg.seed), names)
        v = c[value][:, cfg.key_pos + 1].flatten(1)  # [batch, head_index*d_head] at the first anchor
        return c[fused][:, -1].float().cpu(), v.float().cpu()

    v_focus, _ = vectors(focus)
    target_focus = keys + inferential_shift(focus)
    maps, gaps = {}, []
    seen_fused = {pair: vectors(pair)[0] for pair in task.seen}
    panels = [((cfg.panels[i], cfg.panels[i + 1]), (cfg.panels[i + 2], cfg.panels[i + 3])) for i in range(0, len(cfg.panels), 4)]
    unseen = [p for panel in panels for p in panel if p not in seen_fused]
    if unseen:
        raise ProbeError(f"cosine_maps.panels compare seen pairs; {pair_name(unseen[0])} is not seen in this task")
    panel_maps = seen_pair_panels(seen_fused, keys, task.designated, panels)
    for pair in task.seen:
        v_b = seen_fused[pair]
        cos = cosine(v_focus, v_b)
        same = target_focus[:, None] == (keys + task.designated[pair])[None, :]
        g = gap(cos, same)
        maps[pair_name(pair)] = {"cos": cos.tolist(), "same_target": same.tolist(), "gap": g}
        if g is not None:
            gaps.append(g)
    u = {a: vectors((a, a))[1] for a in ANCHORS}  # V at the first anchor depends only on tokens up to it
    u_maps, u_gaps = {}, []
    for a in ANCHORS:
        for b in ANCHORS:
            cos = cosine(u[a], u[b])
            same = (keys + SHIFT[a])[:, None] == (keys + SHIFT[b])[None, :]
            g = gap(cos, same)
            u_maps[f"{a},{b}"] = {"cos": cos.tolist(), "gap": g}
            if g is not None:
                u_gaps.append(g)
    numbers = {"keys": keys.tolist(), "panels": panel_maps, "fused": maps, "value": u_maps}
    headline = {"parallelism_gap": _mean([m["gap"] for m in panel_maps.values()]),
                "raw_parallelism_gap": _mean([m["raw_gap"] for m in panel_maps.values()]),
                "same_target_cos": _mean([m["same_target_cos"] for m in panel_maps.values()]),
                "other_cos": _mean([m["other_cos"] for m in panel_maps.values()]),
                "heldout_parallelism_gap": finite(sum(gaps) / len(gaps)) if gaps else None,
                "mirror_gap": maps.get(pair_name((focus[1], focus[0])), {}).get("gap"),
                "value_parallelism_gap": finite(sum(u_gaps) / len(u_gaps)) if u_gaps else None}
    meta = {"hooks": names, "fused_hook": fused, "value_hook": value, **cfg.to_dict()}
    return Result(NAME, numbers, headline, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    keys = result.numbers["keys"]
    show = result.meta["show"]
    pairs = [f"{show[i]},{show[i + 1]}" for i in range(0, len(show), 2) if f"{show[i]},{show[i + 1]}" in result.numbers["fused"]]
    focus = pair_name(tuple(result.meta["focus"]))
    panels = result.numbers.get("panels", {})
    cols = max(len(panels), len(pairs) + 1)
    titles = ([f"seen pairs {name}, centred: gap {sig3(m['gap'])}" for name, m in panels.items()]
              + [f"held out v(x;{focus})·v(y;{p}), raw: gap {sig3(result.numbers['fused'][p]['gap'])}" for p in pairs]
              + [f"u(x;{focus[0]})·u(y;{focus[-1]})"])
    specs = [[{}] * len(panels) + [None] * (cols - len(panels)), [{}] * (len(pairs) + 1) + [None] * (cols - len(pairs) - 1)]
    fig = make_subplots(rows=2, cols=cols, specs=specs, subplot_titles=titles, horizontal_spacing=0.08, vertical_spacing=0.18)
    for i, m in enumerate(panels.values(), start=1):
        fig.add_trace(go.Heatmap(z=m["centred_cos"], x=keys, y=keys, zmin=-1, zmax=1, colorscale="RdBu_r", showscale=False), 1, i)
        same = [(keys[c], keys[r]) for r, row in enumerate(m["same_target"]) for c, s in enumerate(row) if s]
        fig.add_trace(go.Scatter(x=[s[0] for s in same], y=[s[1] for s in same], mode="markers", showlegend=False,
                                 marker=dict(symbol="square-open", size=14, color="black")), 1, i)
    for i, p in enumerate(pairs, start=1):
        m = result.numbers["fused"][p]
        fig.add_trace(go.Heatmap(z=m["cos"], x=keys, y=keys, zmin=-1, zmax=1, colorscale="RdBu_r", showscale=i == 1), 2, i)
        same = [(keys[c], keys[r]) for r, row in enumerate(m["same_target"]) for c, s in enumerate(row) if s]
        fig.add_trace(go.Scatter(x=[s[0] for s in same], y=[s[1] for s in same], mode="markers", marker=dict(symbol="square-open", size=14, color="black"),
                                 name="same target", showlegend=i == 1), 2, i)
    u = result.numbers["value"][f"{focus[0]},{focus[-1]}"]
    fig.add_trace(go.Heatmap(z=u["cos"], x=keys, y=keys, zmin=-1, zmax=1, colorscale="RdBu_r", showscale=False), 2, len(pairs) + 1)
    fig.update_xaxes(title_text="key y")
    fig.update_yaxes(title_text="key x")
    fig.update_layout(title=f"fused-vector cosines (parallelism gap {sig3(result.headline['parallelism_gap'])})", height=860,
                      legend=dict(orientation="h", y=-0.2))
    return fig
