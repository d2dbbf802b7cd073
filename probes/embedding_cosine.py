"""Average pairwise cosine similarity of the embeddings of token groups, and its evolution.

The companion paper (Yao et al., ICML 2025) reads the reasoning bias of small initialisation off
the embedding space: tokens of a reasoning task (PrOntoQA) end far less alike (mean cosine 0.123)
than tokens of a memory task (TinyStories, 0.531). This probe computes, for every token group, the
mean cosine over all pairs of distinct tokens of the group (rows of ``W_E``), the mean cosine across
each two groups (in float64), and — with the run's ``step{N}`` snapshots — the same numbers at every snapshot.

Groups: ``groups = "auto"`` takes the task's own (``task.token_groups()``: reasoning vs memory
anchors, anchors vs items, input vs output words); or spell them out:
``groups = "reasoning:1,2,3,4;memory:5,6,7,8"``.

A cosine with a zero (or NaN/inf) embedding is undefined: a group holding such a token gets ``null``
and ``numbers.undefined`` names the tokens — never 0.0.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
from mechinit.probes.base import ProbeConfig, ProbeError, Result, finite, require

NAME = "embedding_cosine"
TASKS = None  # any task with token groups


@dataclass(frozen=True)
class Config(ProbeConfig):
    groups: str = "auto"
    evolution: str = "auto"  # auto: use snapshots when given; on: require them; off

    NAME = 'embedding_cosine'

    def validate(self) -> None:
        require(self, "evolution", self.evolution in ("auto", "on", "off"), "choose one of ['auto', 'on', 'off']")



def hooks(model, cfg: Config) -> list[str]:
    return []  # reads W_E only


def parse_groups(spec: str, task, d_vocab: int) -> dict[str, list[int]]:
    if spec == "auto":
        if not hasattr(task, "token_groups"):
            raise ProbeError("embedding_cosine: this task defines no token groups; pass groups='name:1,2;other:3,4'")
        groups = task.token_groups()
    else:
        groups = {}
        for part in filter(None, spec.split(";")):
            name, _, ids = part.partition(":")
            try:
                groups[name.strip()] = [int(i) for i in ids.split(",") if i.strip()]
            except ValueError:
                raise ProbeError(f"embedding_cosine.groups: {part!r} must look like name:1,2,3") from None
    for name, ids in groups.items():
        if len(ids) < 2:
            raise ProbeError(f"embedding_cosine group {name!r} needs at least 2 tokens, has {len(ids)}")
        bad = [i for i in ids if not 0 <= i < d_vocab]
        if bad:
            raise ProbeError(f"embedding_cosine group {name!r} has token {bad[0]}, outside the vocabulary 0..{d_vocab - 1}")
    return groups


def undefined_tokens(W_E: torch.Tensor, ids: list[int]) -> list[int]:
    """Tokens whose embedding has no direction: a zero row, or one holding NaN/inf."""
    rows = W_E[ids]
    bad = ~torch.isfinite(rows).all(dim=-1) | (rows.abs().sum(dim=-1) == 0)
    return [i for i, b in zip(ids, bad.tolist()) if b]


def mean_cosines(W_E: torch.Tensor, groups: dict[str, list[int]]) -> tuple[dict[str, float | None], dict[str, str]]:
    """``{group: mean cosine over distinct pairs, "a × b": mean cosine across groups}`` and, for every
    entry that is ``None``, the reason. A cosine with a zero or non-finite embedding is undefined, so
    an entry whose tokens include one is ``None`` (never 0.0)."""
    W = W_E.detach().double()
    unit = torch.nn.functional.normalize(W, dim=-1)
    undefined = {name: undefined_tokens(W, ids) for name, ids in groups.items()}
    out, reasons = {}, {}

    def undefined_in(*names):
        tokens = sorted({t for n in names for t in undefined[n]})
        return f"tokens {tokens[:8]}{' …' if len(tokens) > 8 else ''} have a zero or non-finite embedding: cosine undefined" if tokens else None

    for name, ids in groups.items():
        n = len(ids)
        g = unit[ids]
        sims = g @ g.T
        out[name] = finite((sims.sum() - sims.diagonal().sum()) / (n * (n - 1)))
        reasons[name] = undefined_in(name)
    for (a, ia), (b, ib) in itertools.combinations(groups.items(), 2):
        out[f"{a} × {b}"] = finite((unit[ia] @ unit[ib].T).mean())
        reasons[f"{a} × {b}"] = undefined_in(a, b)
    out = {k: (None if reasons[k] else v) for k, v in out.items()}
    return out, {k: r for k, r in reasons.items() if r}


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    if cfg.evolution == "on" and not snapshots:
        raise ProbeError("embedding_cosine with evolution=on needs the run's step snapshots; this target has none")
    W_E = model.embed.W_E.detach()
    groups = parse_groups(cfg.groups, task, W_E.shape[0])
    final, undefined = mean_cosines(W_E, groups)
    evolution = None
    if snapshots and cfg.evolution != "off":
        steps = sorted(snapshots)
        evolution = {"steps": steps, "cosines": [mean_cosines(snapshots[s]()["embed.W_E"], groups)[0] for s in steps]}
    numbers = {"groups": {k: len(v) for k, v in groups.items()}, "mean_cosine": final, "undefined": undefined, "evolution": evolution}
    meta = {"hooks": [], "weights_read": ["embed.W_E"], "tokens": groups, **cfg.to_dict()}
    return Result(NAME, numbers, {"mean_cosine": final}, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = result.numbers
    fig = make_subplots(rows=1, cols=2, subplot_titles=("mean pairwise cosine of embeddings", "over training"))
    names = list(n["mean_cosine"])
    fig.add_trace(go.Bar(x=names, y=[n["mean_cosine"][k] for k in names], showlegend=False), 1, 1)
    if n["evolution"]:
        ev = n["evolution"]
        for k in names:
            fig.add_trace(go.Scatter(x=[max(s, 1) for s in ev["steps"]], y=[c[k] for c in ev["cosines"]], mode="lines+markers", name=k), 1, 2)
        fig.update_xaxes(type="log", title_text="optimizer step", row=1, col=2)
        fig.update_yaxes(title_text="mean cosine", row=1, col=2)
    fig.update_xaxes(title_text="token group", row=1, col=1)
    fig.update_yaxes(title_text="mean cosine", row=1, col=1)
    fig.update_layout(title="embedding cosine similarity per token group", height=450)
    return fig
