"""A new probe from scratch: attention entropy per layer and head at the anchor positions.

For sequences of the three-anchor task, the probe reads ``blocks.{l}.attn.hook_pattern`` and takes
the entropy (nats) of each anchor position's attention distribution, averaged over inputs and the
three anchor positions: low entropy means an anchor looks at one place (e.g. the key).
"""

from dataclasses import dataclass

import torch
from mechinit.probes.base import ProbeConfig, Result, cache, require_attention

NAME = "attention_entropy"
TASKS = ("three-anchor",)
NEEDS_ATTENTION = True


@dataclass(frozen=True)
class Config(ProbeConfig):
    n_inputs: int = 256
    seed: int = 0


def hooks(model, cfg: Config) -> list[str]:
    return [f"blocks.{layer}.attn.hook_pattern" for layer in range(model.cfg.n_layers)]


def run(model, task, cfg: Config = Config(), snapshots=None) -> Result:
    require_attention(model, NAME)
    tokens, _ = task.sample(cfg.n_inputs, task.seen, torch.Generator().manual_seed(cfg.seed))
    is_anchor = tokens <= 4  # [batch pos]
    activations = cache(model, tokens, hooks(model, cfg))
    entropy = {}
    for name in hooks(model, cfg):
        pattern = activations[name]  # [batch head_index query_pos key_pos]
        h = -(pattern * pattern.clamp_min(1e-12).log()).sum(-1)  # [batch head_index query_pos]
        entropy[name] = h.permute(0, 2, 1)[is_anchor].mean(0).tolist()  # per head
    headline = {"mean_entropy": {k: sum(v) / len(v) for k, v in entropy.items()}}
    return Result(NAME, {"entropy": entropy}, headline, {"hooks": hooks(model, cfg), **cfg.to_dict()}, draw=_figure)


def _figure(result: Result):
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, per_head in result.numbers["entropy"].items():
        fig.add_trace(go.Bar(x=[f"head {h}" for h in range(len(per_head))], y=per_head, name=name))
    fig.update_layout(title="attention entropy at the anchor positions (nats)", barmode="group")
    return fig
