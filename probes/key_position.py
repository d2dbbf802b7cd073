"""Answers by key position: each anchor pair's accuracy under each of its maps, at every position of the key.

The task's evaluation averages a pair's accuracy over where the key sits (position p, the anchors at
p+1 and p+2, the answer read at the last position). A model whose inferential route works for some
key positions and not others looks merely "mixed" there; this probe shows where. For each pair in
``pairs`` (default: the held-out (4,3) and its seen mirror (3,4)) and every key position p, it takes
``n_inputs`` sequences in the fixed layout of :mod:`mechinit.probes.patching` (key at p, the pair
right after it, noise per sequence) with keys from the ``split`` half of App C's split, and reports
the fraction answered under each map that exists for the pair — ``inferential`` (x + shift(a1) +
shift(a2)), ``designated`` (what a seen pair is trained on), ``symmetric`` (its mirror's designated
map) — and under none of them (``none``). A map that coincides with another for a pair is listed
under each name (for (3,4), designated = symmetric of (4,3)).

Headline (the first pair): ``inferential_by_position`` and ``symmetric_by_position`` (lists over p),
``inferential_spread`` (max − min over positions) and ``worst_position`` (lowest inferential).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from mechinit.probes.base import ProbeError, Result, require
from mechinit.probes.logit_lens import mappings
from mechinit.probes.patching import LayoutConfig, layout

from mechinit.tasks.anchor import pair_name

NAME = "key_position"
TASKS = ("anchor",)
NEEDS_ATTENTION = False  # reads the model's answers only


@dataclass(frozen=True)
class Config(LayoutConfig):
    n_inputs: int = 512  # sequences per pair and key position
    split: str = "test"  # which keys: "test" (App C's held-out keys) or "train"

    NAME = "key_position"

    def validate(self) -> None:
        super().validate()
        require(self, "split", self.split in ("test", "train"), "choose one of ['test', 'train']")


def hooks(model, cfg: Config) -> list[str]:
    return []  # reads the model's output only


def answers(model, tokens: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """The model's answer (argmax at the last position) per sequence, through its own forward."""
    device = next(model.parameters()).device
    with torch.inference_mode():
        return torch.cat([model(t.to(device))[:, -1].argmax(-1).cpu() for t in tokens.split(chunk)])


def _pair(model, task, cfg: Config, pair: tuple[int, int]) -> dict:
    maps = mappings(task, pair)
    out = {name: [] for name in maps} | {"none": []}
    for p in range(task.n_ctx - 2):
        tokens, keys = layout(task, replace(cfg, key_pos=p, seed=cfg.seed * 1000 + p), pair, cfg.split)
        said = answers(model, tokens)
        hit = torch.zeros(len(keys), dtype=torch.bool)
        for name, shift in maps.items():
            match = said == keys + shift
            out[name].append(float(match.float().mean()))
            hit |= match
        out["none"].append(float((~hit).float().mean()))
    return out


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:  # noqa: ARG001 - reads the final weights
    pairs = [tuple(cfg.pairs[i : i + 2]) for i in range(0, len(cfg.pairs), 2)]
    if not pairs:
        raise ProbeError("key_position.pairs is empty; give anchor pairs, e.g. 4,3")
    per_pair = {pair_name(p): _pair(model, task, cfg, p) for p in pairs}
    first = per_pair[pair_name(pairs[0])]
    inf = first.get("inferential")
    headline = {"inferential_by_position": inf, "symmetric_by_position": first.get("symmetric"),
                "inferential_spread": max(inf) - min(inf), "worst_position": min(range(len(inf)), key=inf.__getitem__)}
    meta = {"hooks": [], "positions": list(range(task.n_ctx - 2)), "answer_position": task.n_ctx - 1, **cfg.to_dict()}
    return Result(NAME, {"pairs": per_pair}, headline, meta, draw=_figure)


COLOURS = {"inferential": "#1f77b4", "designated": "#2ca02c", "symmetric": "#d62728", "none": "#999999"}


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    pairs = result.numbers["pairs"]
    positions = result.meta["positions"]
    fig = make_subplots(rows=1, cols=len(pairs), subplot_titles=[f"({p})" for p in pairs])
    shown = set()  # one legend entry per map, wherever it first appears
    for i, (name, maps) in enumerate(pairs.items(), start=1):
        for m, values in maps.items():
            fig.add_trace(go.Bar(x=positions, y=values, name=m, marker_color=COLOURS[m], legendgroup=m, showlegend=m not in shown), 1, i)
            shown.add(m)
        fig.update_xaxes(title_text="key position p (anchors at p+1, p+2)", tickmode="linear", row=1, col=i)
        fig.update_yaxes(title_text="fraction of answers", range=[0, 1], row=1, col=i)
    fig.update_layout(title=f"answers by key position ({result.meta['split']}-split keys, {result.meta['n_inputs']} sequences each)",
                      barmode="group", height=450)
    return fig
