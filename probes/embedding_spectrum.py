"""Low-rank structure of the embedding and the weights (paper Fig 5c,d, 11, 12, 13, 16).

Numbers: the eigenvalues of the covariance of the item-token embeddings (rows 20–99 of W_E by
default: untrained rows would inflate the rank), their effective rank ``exp(entropy)``, the
energy fraction of the top k, the singular values (and effective rank) of every linear weight, and
— when the run's ``step{N}`` snapshots are given — the evolution of the top eigenvalues over
training with the step at which each one first reaches half of its final value (Fig 12b). When the
snapshots begin after step 0 (a run resumed in another checkout keeps only its later ones) and an
eigenvalue is already past half at the first of them, its step is unknown: ``null``, and
``evolution.note`` says from which step the snapshots run.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from mechinit.probes.base import ProbeConfig, ProbeError, Result, finite, require, sig3, tsne_2d

NAME = "embedding_spectrum"
TASKS = ("anchor", "reasoning-memory")  # item tokens 20-99
LINEAR_WEIGHTS = ("W_Q", "W_K", "W_V", "W_O")


@dataclass(frozen=True)
class Config(ProbeConfig):
    token_min: int = 20
    token_max: int = 99
    top_k: int = 4
    evolution: str = "auto"  # auto: use snapshots when given; on: require them; off
    tsne_seed: int = 0

    NAME = 'embedding_spectrum'

    def validate(self) -> None:
        require(self, "token_min", 0 <= self.token_min, "must be a token id >= 0")
        require(self, "token_max", self.token_max - self.token_min >= 1, "must exceed token_min (at least two tokens)")
        require(self, "top_k", self.top_k >= 1, "must be at least 1")
        require(self, "evolution", self.evolution in ("auto", "on", "off"), "choose one of ['auto', 'on', 'off']")



def hooks(model, cfg: Config) -> list[str]:
    return []  # reads weights only


def covariance_eigenvalues(vectors: torch.Tensor) -> torch.Tensor:
    centred = vectors.double() - vectors.double().mean(0, keepdim=True)
    cov = centred.T @ centred / max(len(vectors) - 1, 1)
    return torch.linalg.eigvalsh(cov).flip(0).clamp_min(0.0)


def effective_rank(values: torch.Tensor) -> float | None:
    total = values.sum()
    if total <= 0:
        return None
    p = values[values > 0] / total
    return finite(torch.exp(-(p * p.log()).sum()))


def _spectrum(W_E: torch.Tensor, cfg: Config) -> dict:
    if not torch.isfinite(W_E).all():
        return {"eigenvalues": [], "effective_rank": None, "top_k_energy": None, "note": "non-finite embedding weights"}
    eig = covariance_eigenvalues(W_E[cfg.token_min : cfg.token_max + 1])
    total = float(eig.sum())
    return {"eigenvalues": eig.tolist(), "effective_rank": effective_rank(eig),
            "top_k_energy": finite(eig[: cfg.top_k].sum() / total) if total > 0 else None}


def linear_weights(model) -> dict[str, torch.Tensor]:
    out = {"embed.W_E": model.embed.W_E, "unembed.W_U": model.unembed.W_U}
    if not hasattr(model, "blocks"):  # Emb-MLP
        out.update({"mlp.W_in": model.mlp.W_in, "mlp.W_out": model.mlp.W_out})
    for l, block in enumerate(getattr(model, "blocks", [])):
        if hasattr(block, "attn"):
            for name in LINEAR_WEIGHTS:
                w = getattr(block.attn, name)
                for h in range(w.shape[0]):
                    out[f"blocks.{l}.attn.{name}[{h}]"] = w[h]
        out[f"blocks.{l}.mlp.W_in"] = block.mlp.W_in
        out[f"blocks.{l}.mlp.W_out"] = block.mlp.W_out
    return {k: v.detach().float() for k, v in out.items()}


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    if cfg.token_max >= model.cfg.d_vocab or cfg.token_min < 0 or cfg.token_min >= cfg.token_max:
        raise ProbeError(f"embedding_spectrum token range {cfg.token_min}..{cfg.token_max} does not fit d_vocab {model.cfg.d_vocab}")
    if cfg.evolution == "on" and not snapshots:
        raise ProbeError("embedding_spectrum with evolution=on needs the run's step snapshots; this target has none")
    W_E = model.embed.W_E.detach().float()
    numbers = _spectrum(W_E, cfg)
    singular = {}
    for name, w in linear_weights(model).items():
        if not torch.isfinite(w).all():
            singular[name] = {"singular_values": [], "effective_rank": None, "note": "non-finite weights"}
            continue
        s = torch.linalg.svdvals(w.double())  # float64: no overflow in the norms of huge weights
        singular[name] = {"singular_values": s.tolist(), "effective_rank": effective_rank(s)}
    numbers["weights"] = singular
    evolution = None
    if snapshots and cfg.evolution != "off":
        steps = sorted(snapshots)
        tops = [_spectrum(snapshots[s]()["embed.W_E"].float(), cfg)["eigenvalues"][: cfg.top_k] for s in steps]
        growth = []
        for i in range(cfg.top_k):
            final = tops[-1][i]
            first = next((s for s, t in zip(steps, tops) if t[i] >= 0.5 * final), None) if final > 0 else None
            growth.append(None if first is not None and first == steps[0] != 0 else first)  # reached at or before it: unknown
        note = None if steps[0] == 0 else (f"the snapshots begin at step {steps[0]}, not 0: an eigenvalue already past half "
                                           "of its final value there has no known half-growth step (null)")
        evolution = {"steps": steps, "top_eigenvalues": tops, "half_growth_step": growth, "note": note}
    numbers["evolution"] = evolution
    numbers["tsne"], numbers["tsne_note"] = tsne_2d(W_E[cfg.token_min : cfg.token_max + 1], cfg.tsne_seed)
    headline = {"effective_rank": numbers["effective_rank"], "top_k_energy": numbers["top_k_energy"],
                "half_growth_step": evolution["half_growth_step"] if evolution else None}
    meta = {"hooks": [], "weights_read": ["embed.W_E", "all linear weights"], "tokens": [cfg.token_min, cfg.token_max], **cfg.to_dict()}
    return Result(NAME, numbers, headline, meta, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = result.numbers
    evolution = n["evolution"] or {}
    over = "top eigenvalues over training" + (f" (snapshots from step {evolution['steps'][0]})" if evolution.get("note") else "")
    fig = make_subplots(rows=2, cols=2, subplot_titles=("embedding covariance eigenvalues", over,
                                                        "normalised singular values of every linear weight", "t-SNE of item embeddings"))
    top = max(n["eigenvalues"], default=0.0) or 1.0
    shown = [v for v in n["eigenvalues"] if v is not None and v > 1e-10 * top]  # numerically zero ones (rank <= tokens - 1) left out
    fig.add_trace(go.Scatter(x=list(range(1, len(shown) + 1)), y=shown, mode="lines+markers", name="eigenvalues", showlegend=False), 1, 1)
    fig.update_xaxes(title_text="index (largest first)", row=1, col=1)
    fig.update_yaxes(type="log", title_text="eigenvalue", row=1, col=1)
    if n["evolution"]:
        ev = n["evolution"]
        for i in range(len(ev["top_eigenvalues"][0])):
            fig.add_trace(go.Scatter(x=[max(s, 1) for s in ev["steps"]], y=[t[i] for t in ev["top_eigenvalues"]], mode="lines+markers", name=f"λ{i + 1}"), 1, 2)
        fig.update_xaxes(type="log", title_text="optimizer step", row=1, col=2)
        fig.update_yaxes(type="log", title_text="eigenvalue", row=1, col=2)
    for name, w in n["weights"].items():
        s = w["singular_values"]
        if not s:  # non-finite weights: nothing to draw
            continue
        fig.add_trace(go.Scatter(x=list(range(1, len(s) + 1)), y=[v / s[0] for v in s] if s[0] > 0 else s, mode="lines", name=name,
                                 showlegend=False, hovertext=name), 2, 1)
    fig.update_xaxes(title_text="index", row=2, col=1)
    fig.update_yaxes(type="log", title_text="σ_i / σ_1", row=2, col=1)  # log, as the paper's Fig 13
    if n["tsne"]:
        tokens = list(range(result.meta["tokens"][0], result.meta["tokens"][1] + 1))
        fig.add_trace(go.Scatter(x=[p[0] for p in n["tsne"]], y=[p[1] for p in n["tsne"]], mode="markers+text", text=[str(t) for t in tokens],
                                 marker=dict(color=tokens, colorscale="Viridis"), textposition="top center", showlegend=False), 2, 2)
    fig.update_xaxes(title_text="t-SNE 1", row=2, col=2)
    fig.update_yaxes(title_text="t-SNE 2", row=2, col=2)
    fig.update_yaxes(exponentformat="power", showexponent="all")  # one tick style (no SI prefixes like 100μ)
    fig.update_layout(title=f"embedding spectrum: effective rank {sig3(result.headline['effective_rank'])}", height=860,
                      legend=dict(title_text="λ (top)"))
    return fig
