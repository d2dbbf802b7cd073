"""Logit lens: at every layer and position, how likely each mapping's target is when the residual
stream is read through the unembedding.

Components are TransformerLens's ``ActivationCache.accumulated_resid`` (``incl_mid=True``): each
block's input (``{l}_pre``), its middle (``{l}_mid``) and the final residual (``final_post``).
Post-LN (the paper's block): the residual is read as it stands — every component is already the
output of a LayerNorm and the model has no final one. Pre-LN: through the final LayerNorm, with TL's
``apply_ln_to_stack`` (``accumulated_resid(apply_ln=True)``). Logits are ``resid @ W_U + b_U``.

For each pair in ``pairs`` (fixed layout as in :mod:`mechinit.probes.patching`), each mapping that
exists for it — ``designated`` (what it was trained on), ``inferential``, ``symmetric`` (its mirror's
designated map) — gets the mean probability of its target ``x + shift`` at every component ×
position, and the accuracy (argmax over the vocabulary) at the last position.
``first_layer_correct``: per mapping, the first component whose last-position accuracy reaches
``threshold`` (``null`` if none does).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mechinit.probes.base import Result, require, require_attention
from mechinit.probes.patching import LayoutConfig, layout, roles

from mechinit.tasks.anchor import inferential_shift, pair_name

NAME = "logit_lens"
TASKS = ("anchor",)
NEEDS_ATTENTION = True


@dataclass(frozen=True)
class Config(LayoutConfig):
    threshold: float = 0.5

    NAME = "logit_lens"

    def validate(self) -> None:
        super().validate()
        require(self, "threshold", 0.0 < self.threshold <= 1.0, "must be in (0, 1]")


def hooks(model, cfg: Config | None) -> list[str]:
    layers = range(model.cfg.n_layers)
    mids = [] if model.cfg.attn_only else [f"blocks.{l}.hook_resid_mid" for l in layers]
    return ([f"blocks.{l}.hook_resid_pre" for l in layers] + mids
            + [f"blocks.{model.cfg.n_layers - 1}.hook_resid_post"] + (["ln_final.hook_scale"] if _pre_ln(model) else []))


def _pre_ln(model) -> bool:
    return model.cfg.normalization_type is not None


def mappings(task, pair: tuple[int, int]) -> dict[str, int]:
    """The shifts of the maps that exist for ``pair``."""
    mirror = (pair[1], pair[0])
    out = {"designated": task.designated[pair], "inferential": inferential_shift(pair), "symmetric": task.designated[mirror]}
    return {k: v for k, v in out.items() if v is not None}


def lens(model, tokens: torch.Tensor) -> tuple[torch.Tensor, list[str]]:
    """Probabilities ``[component batch pos d_vocab]`` read off every accumulated residual, and the labels."""
    with torch.no_grad():
        _, c = model.run_with_cache(tokens, names_filter=hooks(model, None))
        stack, labels = c.accumulated_resid(layer=None, incl_mid=not model.cfg.attn_only, apply_ln=_pre_ln(model), return_labels=True)
        logits = stack @ model.W_U + model.b_U
    return logits.softmax(-1), list(labels)


def _pair(model, task, cfg: Config, pair: tuple[int, int]) -> dict:
    tokens, keys = layout(task, cfg, pair)
    probs, labels = lens(model, tokens)
    out = {"components": labels, "maps": {}}
    rows = torch.arange(len(keys))
    for name, shift in mappings(task, pair).items():
        target = keys + shift
        p = probs[:, rows, :, target].mean(0)  # advanced indices (batch, vocab) first: [batch component pos] -> [component pos]
        acc = (probs[:, :, -1].argmax(-1) == target).float().mean(1)  # [component]
        first = next((labels[i] for i in range(len(labels)) if acc[i] >= cfg.threshold), None)
        out["maps"][name] = {"shift": shift, "probability": p.tolist(), "last_accuracy": acc.tolist(), "first_correct": first}
    return out


def run(model, task, cfg: Config, snapshots=None) -> Result:  # noqa: ARG001
    require_attention(model, NAME)
    pairs = [(cfg.pairs[i], cfg.pairs[i + 1]) for i in range(0, len(cfg.pairs), 2)]
    per_pair = {pair_name(p): _pair(model, task, cfg, p) for p in pairs}
    first = per_pair[pair_name(pairs[0])]["maps"]
    headline = {"first_layer_correct": {k: v["first_correct"] for k, v in first.items()},
                "final_accuracy": {k: v["last_accuracy"][-1] for k, v in first.items()}}
    numbers = {"pairs": per_pair, "positions": roles(task, cfg.key_pos)}
    return Result(NAME, numbers, headline, {"hooks": hooks(model, cfg), "apply_ln": _pre_ln(model), **cfg.to_dict()}, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    pair = next(iter(result.numbers["pairs"]))
    data = result.numbers["pairs"][pair]
    names = list(data["maps"])
    fig = make_subplots(rows=1, cols=len(names), horizontal_spacing=0.08,
                        subplot_titles=[f"({pair}) {m} target x{data['maps'][m]['shift']:+d}" for m in names])
    for i, m in enumerate(names, start=1):
        fig.add_trace(go.Heatmap(z=data["maps"][m]["probability"], x=result.numbers["positions"], y=data["components"], zmin=0, zmax=1,
                                 colorscale="Viridis", showscale=i == 1, colorbar=dict(title="p(target)")), 1, i)
        fig.update_xaxes(title_text="position", tickangle=-60, row=1, col=i)
        fig.update_yaxes(title_text="residual component", row=1, col=i)
    fig.update_layout(title="logit lens: mean probability of each map's target, read off every residual", height=460)
    return fig
