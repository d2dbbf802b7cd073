"""Activation patching: where the order of the anchor pair, and the key, are used (causal, not pictures).

A symmetric model answers (4,3) as it answers (3,4); an inferential one answers (4,3) by composing
the single-anchor shifts (x−10) and (3,4) by its memorised exception (x−6), so somewhere it reads the
order. Sequences have a fixed layout — key x at ``key_pos``, the anchors right after it, noise items
elsewhere (drawn per sequence) — so a position means the same token role in every sequence.

* **Order patching**, per pair P in ``pairs`` (default the held-out (4,3) and its seen mirror (3,4)
  as control): clean = P in its order, corrupted = the same sequences with the two anchors swapped.
  Metric: the logit difference LD between the pair group's two candidate targets, x + inferential
  shift (x−10) and x + the group's non-inferential shift (x−6), at the last position, averaged.
  ``order_sensitivity`` = the mean over sequences of |σ(LD_clean) − σ(LD_corrupted)|: how much
  swapping the anchors moves the choice between the two candidates (0: not at all, the symmetric
  solution; 1: it flips, the inferential one). When the swap moves LD by at least ``min_effect``
  and the choice by at least ``min_sensitivity`` (a large LD change that leaves both runs on the same
  candidate is no order effect: the maps would be ratios of noise), the clean run's activations are patched into the corrupted run at every layer × position of
  ``resid_pre``, ``attn_out``, ``mlp_out`` and per head (``z`` through W_O, all positions), normalised
  so 0 = corrupted behaviour and 1 = clean behaviour (and the reverse, corrupted into clean, for
  ``resid_pre``: 1 = fully corrupted). Otherwise the maps are null with the reason: there is no order
  effect to restore. ``order_site`` is the layer and position whose ``resid_pre`` patch restores most.
* **Key patching** (the first pair): corrupted = the key x replaced by another test-split key x' at
  the same position; metric logit[x + s] − logit[x' + s] with s the model's own answer shift on the
  clean sequences. ``key_route``: per layer, the position whose ``resid_pre`` patch restores most —
  where the key's information sits as it travels to the last position (Fig 3's question, causally).

The patching itself is TransformerLens's (``transformer_lens.patching.get_act_patch_resid_pre``,
``get_act_patch_attn_out``, ``get_act_patch_mlp_out``, ``get_act_patch_attn_head_out_all_pos``), with
the metric as a closure over the sequences' targets; the clean caches hold only the hooks those
helpers read (``names_filter``).
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

import torch
import transformer_lens.patching as tl_patching
from mechinit.probes.base import ProbeConfig, ProbeError, Result, cache, require, require_attention

from mechinit.tasks.anchor import ITEM_MAX, ITEM_MIN, SHIFT, inferential_shift, pair_name

NAME = "patching"
TASKS = ("anchor",)
NEEDS_ATTENTION = True
CACHED = ("hook_resid_pre", "hook_attn_out", "hook_mlp_out", "attn.hook_z")  # what TL's helpers read, per block


@dataclass(frozen=True)
class LayoutConfig(ProbeConfig):
    """Pairs and the fixed sequence layout shared by the causal probes (patching, logit_lens)."""

    pairs: tuple[int, ...] = (4, 3, 3, 4)  # flattened anchor pairs; the first is the headline's
    n_inputs: int = 256
    key_pos: int = 1
    seed: int = 0

    def validate(self) -> None:
        require_pairs_and_inputs(self)
        require(self, "key_pos", self.key_pos >= 0, "a position >= 0")


def require_pairs_and_inputs(cfg) -> None:
    """The checks of a probe config's ``pairs`` (flattened anchor pairs) and ``n_inputs``."""
    require(cfg, "pairs", len(cfg.pairs) % 2 == 0 and all(a in SHIFT for a in cfg.pairs),
            "anchor pairs, flattened: an even number of anchors from 1..4, e.g. 4,3,3,4")
    require(cfg, "n_inputs", cfg.n_inputs >= 2, "must be at least 2")


@dataclass(frozen=True)
class Config(LayoutConfig):
    min_effect: float = 0.5  # logit units: a swap that moves LD less has no order effect to restore
    min_sensitivity: float = 0.05  # σ units: a swap that moves the choice less has none either

    NAME = "patching"

    def validate(self) -> None:
        super().validate()
        require(self, "min_effect", self.min_effect > 0, "must be > 0 (logit units)")
        require(self, "min_sensitivity", 0 <= self.min_sensitivity < 1, "must be in [0, 1) (σ units)")


def hooks(model, cfg: Config | None) -> list[str]:
    names = [n for n in CACHED if not (model.cfg.attn_only and "mlp" in n)]
    return [f"blocks.{layer}.{name}" for layer in range(model.cfg.n_layers) for name in names]


def candidate_shifts(task, pair: tuple[int, int]) -> tuple[int, int]:
    """The pair group's two candidate shifts: inferential, and the non-inferential one that the pair
    or its mirror is trained on (x−10 and x−6 for (4,3) and (3,4))."""
    inf = inferential_shift(pair)
    mirror = (pair[1], pair[0])
    other = next((task.designated[p] for p in (pair, mirror) if task.designated[p] is not None and task.designated[p] != inf), None)
    if other is None:
        raise ProbeError(f"patching: pair ({pair_name(pair)}) has one candidate map (inferential = designated), nothing to tell apart")
    return inf, other


def layout(task, cfg: Config, pair: tuple[int, int], split: str = "test") -> tuple[torch.Tensor, torch.Tensor]:
    """``n_inputs`` sequences with a ``split``-split key at ``key_pos`` and ``pair`` after it; noise per
    sequence. Returns ``(tokens, keys)``."""
    if not 0 <= cfg.key_pos <= task.n_ctx - 3:
        raise ProbeError(f"{cfg.NAME}.key_pos = {cfg.key_pos} must be in 0..{task.n_ctx - 3}")
    allowed = task.key_values(split, cfg.key_pos)
    gen = torch.Generator().manual_seed(cfg.seed)
    keys = allowed[torch.randint(len(allowed), (cfg.n_inputs,), generator=gen)]
    tokens = torch.randint(ITEM_MIN, ITEM_MAX + 1, (cfg.n_inputs, task.n_ctx), generator=gen)
    tokens[:, cfg.key_pos] = keys
    tokens[:, cfg.key_pos + 1], tokens[:, cfg.key_pos + 2] = pair
    return tokens, keys


def logit_diff(logits: torch.Tensor, plus: torch.Tensor, minus: torch.Tensor) -> torch.Tensor:
    """Per sequence: logit of token ``plus`` minus logit of token ``minus`` at the last position."""
    last = logits[:, -1] if logits.dim() == 3 else logits
    rows = torch.arange(len(last))
    return last[rows, plus] - last[rows, minus]


def choice_shift(ld_a: torch.Tensor, ld_b: torch.Tensor) -> float:
    """Mean over sequences of |σ(LD_a) − σ(LD_b)|: how far two runs' choice between the candidates moves."""
    return (torch.sigmoid(ld_a) - torch.sigmoid(ld_b)).abs().mean().item()


def patch_maps(model, clean: torch.Tensor, corrupted: torch.Tensor, ld, min_effect: float, per_head: bool = True,
               min_sensitivity: float = 0.0, lds: tuple[torch.Tensor, torch.Tensor] | None = None) -> dict:
    """Patch the clean run into the corrupted one (TL's helpers) with the normalised metric
    (LD − LD_corrupted) / (LD_clean − LD_corrupted). ``ld(logits) -> [batch]``; ``lds`` are the two
    runs' per-sequence LDs when the caller has them already. Maps are ``None`` (with ``reason``) when
    the two runs differ by less than ``min_effect`` in mean LD, or when they do but the choice
    (σ(LD), mean over sequences) moves by less than ``min_sensitivity``: no effect to restore."""
    if lds is None:
        with torch.no_grad():
            lds = ld(model(clean)), ld(model(corrupted))
    ld_clean, ld_corr = lds[0].mean().item(), lds[1].mean().item()
    out = {"ld_clean": ld_clean, "ld_corrupted": ld_corr}
    if abs(ld_clean - ld_corr) < min_effect:
        return {**out, "reason": f"the two runs differ by {abs(ld_clean - ld_corr):.3g} < {min_effect} in mean logit difference"}
    moved = choice_shift(*lds)
    if moved < min_sensitivity:  # LD moves, but both runs pick the same candidate: the maps would be ratios of noise
        return {**out, "reason": f"the choice between the two candidates moves by {moved:.3g} < min_sensitivity {min_sensitivity} (σ units)"}
    with torch.no_grad():
        clean_cache = cache(model, clean, hooks(model, None))

    def metric(logits):
        return (ld(logits).mean() - ld_corr) / (ld_clean - ld_corr)

    def run(helper):  # TL's helpers draw a tqdm bar per call on stderr; the probe run has its own bar
        with torch.no_grad(), contextlib.redirect_stderr(io.StringIO()):
            return helper(model, corrupted, clean_cache, metric).tolist()

    out["resid_pre"] = run(tl_patching.get_act_patch_resid_pre)
    out["attn_out"] = run(tl_patching.get_act_patch_attn_out)
    out["mlp_out"] = None if model.cfg.attn_only else run(tl_patching.get_act_patch_mlp_out)
    if per_head:
        out["heads"] = run(tl_patching.get_act_patch_attn_head_out_all_pos)
    return out


def best_site(grid: list[list[float]]) -> dict:
    values = torch.tensor(grid)
    flat = int(values.argmax())
    layer, position = divmod(flat, values.shape[1])
    return {"layer": layer, "position": position, "restored": float(values[layer, position])}


def roles(task, key_pos: int) -> list[str]:
    names = ["·"] * task.n_ctx
    names[key_pos], names[key_pos + 1], names[key_pos + 2] = "x", "a1", "a2"
    names[-1] = names[-1] + " (last)" if names[-1] != "·" else "last"
    return [f"{i}:{n}" for i, n in enumerate(names)]


def _order(model, task, cfg: Config, pair: tuple[int, int]) -> dict:
    inf, other = candidate_shifts(task, pair)
    clean, keys = layout(task, cfg, pair)
    corrupted = clean.clone()
    corrupted[:, cfg.key_pos + 1], corrupted[:, cfg.key_pos + 2] = pair[1], pair[0]
    ld = lambda logits: logit_diff(logits, keys + inf, keys + other)  # noqa: E731
    with torch.no_grad():
        ld_c, ld_x = ld(model(clean)), ld(model(corrupted))
    sensitivity = choice_shift(ld_c, ld_x)
    forward = patch_maps(model, clean, corrupted, ld, cfg.min_effect, min_sensitivity=cfg.min_sensitivity, lds=(ld_c, ld_x))
    reverse = patch_maps(model, corrupted, clean, ld, cfg.min_effect, per_head=False, min_sensitivity=cfg.min_sensitivity, lds=(ld_x, ld_c))
    return {"candidates": {"inferential": inf, "other": other}, "order_sensitivity": sensitivity,
            "clean_prefers_inferential": (ld_c > 0).float().mean().item(), "corrupted_prefers_inferential": (ld_x > 0).float().mean().item(),
            "clean_into_corrupted": forward, "corrupted_into_clean": {k: v for k, v in reverse.items() if k != "attn_out" and k != "mlp_out"},
            "order_site": best_site(forward["resid_pre"]) if "resid_pre" in forward else None}


def _key(model, task, cfg: Config, pair: tuple[int, int]) -> dict:
    clean, keys = layout(task, cfg, pair)
    allowed = task.key_values("test", cfg.key_pos)
    if len(allowed) < 2:
        raise ProbeError(f"patching: position {cfg.key_pos} has one test-split key; key patching needs two")
    index = (allowed[None, :] == keys[:, None]).int().argmax(1)
    other = allowed[(index + 1) % len(allowed)]  # another key from the same split and position
    corrupted = clean.clone()
    corrupted[:, cfg.key_pos] = other
    with torch.no_grad():
        shift = int(torch.mode(model(clean)[:, -1].argmax(-1) - keys).values)  # the model's own answer shift
    ld = lambda logits: logit_diff(logits, keys + shift, other + shift)  # noqa: E731
    maps = patch_maps(model, clean, corrupted, ld, cfg.min_effect, per_head=False)
    route = None
    if "resid_pre" in maps:
        grid = torch.tensor(maps["resid_pre"])
        route = [{"layer": layer, "position": int(grid[layer].argmax()), "restored": float(grid[layer].max())} for layer in range(len(grid))]
    return {"answer_shift": shift, "maps": maps, "key_route": route}


def run(model, task, cfg: Config, snapshots=None) -> Result:  # noqa: ARG001 - patching reads the final weights
    require_attention(model, NAME)
    pairs = [(cfg.pairs[i], cfg.pairs[i + 1]) for i in range(0, len(cfg.pairs), 2)]
    order = {pair_name(p): _order(model, task, cfg, p) for p in pairs}
    key = _key(model, task, cfg, pairs[0])
    first = order[pair_name(pairs[0])]
    headline = {"order_sensitivity": first["order_sensitivity"], "order_site": first["order_site"],
                "key_route": [r["position"] for r in key["key_route"]] if key["key_route"] else None}
    for p in pairs[1:]:
        headline[f"order_sensitivity_{pair_name(p).replace(',', '')}"] = order[pair_name(p)]["order_sensitivity"]
    numbers = {"order": order, "key": key, "positions": roles(task, cfg.key_pos), "pairs": [pair_name(p) for p in pairs]}
    meta = {"hooks": hooks(model, cfg), "tl_helpers": ["get_act_patch_resid_pre", "get_act_patch_attn_out", "get_act_patch_mlp_out",
                                                        "get_act_patch_attn_head_out_all_pos"], **cfg.to_dict()}
    return Result(NAME, numbers, headline, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = result.numbers
    pair = n["pairs"][0]
    fwd = n["order"][pair]["clean_into_corrupted"]
    key = n["key"]["maps"]
    heat = [((1, 2), f"order ({pair}): resid_pre", fwd.get("resid_pre"), n["positions"]),
            ((1, 3), f"order ({pair}): per head", fwd.get("heads"), None),
            ((2, 1), f"order ({pair}): attn_out", fwd.get("attn_out"), n["positions"]),
            ((2, 2), f"order ({pair}): mlp_out", fwd.get("mlp_out"), n["positions"]),
            ((2, 3), "key: resid_pre", key.get("resid_pre"), n["positions"])]
    titles = {(1, 1): "order sensitivity per pair"}
    titles.update({rc: t if grid is not None else f"{t}: no effect to restore" for rc, t, grid, _ in heat})
    fig = make_subplots(rows=2, cols=3, horizontal_spacing=0.1, vertical_spacing=0.22,
                        subplot_titles=[titles[(r, c)] for r in (1, 2) for c in (1, 2, 3)])
    pairs = n["pairs"]
    fig.add_trace(go.Bar(x=[f"({p})" for p in pairs], y=[n["order"][p]["order_sensitivity"] for p in pairs], showlegend=False), 1, 1)
    fig.update_xaxes(title_text="pair", row=1, col=1)
    fig.update_yaxes(title_text="|Δσ(LD)| when swapped", range=[0, 1], row=1, col=1)
    scale_at = next((rc for rc, _, grid, _ in heat if grid is not None), None)
    for (r, c), _, grid, x in heat:
        if grid is not None:
            fig.add_trace(go.Heatmap(z=grid, x=x, zmin=-0.2, zmax=1, colorscale="Viridis", showscale=(r, c) == scale_at,
                                     colorbar=dict(title="restored")), r, c)
        fig.update_xaxes(title_text="head" if x is None else "position", tickangle=0 if x is None else -60, row=r, col=c)
        fig.update_yaxes(title_text="layer", dtick=1, row=r, col=c)
    fig.update_layout(title="activation patching, clean into corrupted (1 = clean behaviour restored)", height=760)
    return fig
