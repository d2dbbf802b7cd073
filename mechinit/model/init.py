"""γ-scaled initialisation: every weight ~ N(0, std = d_in**-gamma), by exact parameter name.

The table below is the single place that says which d_in each weight gets. TransformerLens stores
weights d_in × d_out, but W_O's fan-in is n_heads·d_head (all heads feed one output), not d_head
as TL's own fan-in helper would say. Biases start at zero, LayerNorm scales at one and shifts at
zero. :func:`gamma_init_` returns the std applied to every parameter; it is stored with the run.

``model.unembed_bias`` (the authors' teaching code): ``unembed.b_U`` is trained and starts as a
PyTorch ``nn.Linear`` bias does, uniform in ±1/√d_model — not γ-scaled (rule ``{"uniform": bound}``).

``init.distribution = "uniform-6"`` draws each γ-scaled weight uniformly in ±(6/d_in)^γ instead (std
(6/d_in)^γ/√3; at γ = 0.5 the Kaiming-uniform bound): the convention of ``model.py`` in the
authors' sibling folder ``code/multi-step_reasoning_code``, where the token and position tables take
their row counts as d_in (``init.embed_fan_in = "rows"``). The paper's text and the composition
folder's ``GPT_specific.py`` use the normal rule (docs/paper-fidelity.md).
"""

from __future__ import annotations

import re
from typing import Callable

import torch
from torch import nn

from mechinit.config import InitConfig, ModelConfig


def _embed_fan_in(m: ModelConfig, i: InitConfig, rows: int) -> int:
    """d_in of an embedding table: ``init.embed_fan_in`` names a model size, or "rows" (the table's rows)."""
    return rows if i.embed_fan_in == "rows" else getattr(m, i.embed_fan_in)


# parameter-name suffix -> function of (model config, init config) giving d_in
_FAN_IN: dict[str, Callable[[ModelConfig, InitConfig], int]] = {
    "embed.W_E": lambda m, i: _embed_fan_in(m, i, m.d_vocab),
    "pos_embed.W_pos": lambda m, i: _embed_fan_in(m, i, m.n_ctx),
    "attn.W_Q": lambda m, i: m.d_model,
    "attn.W_K": lambda m, i: m.d_model,
    "attn.W_V": lambda m, i: m.d_model,
    "attn.W_O": lambda m, i: m.n_heads * m.d_head,
    "mlp.W_in": lambda m, i: m.d_model * (m.n_ctx if m.arch == "emb-mlp" else 1),  # Emb-MLP: concatenated positions
    "mlp.W_out": lambda m, i: m.d_mlp,
    "unembed.W_U": lambda m, i: m.d_model,
}
# parameter-name pattern -> constant value
_CONSTANT: dict[str, float] = {
    r"\.b_(Q|K|V|O|in|out|U)$": 0.0,
    r"ln\w*\.w$": 1.0,
    r"ln\w*\.b$": 0.0,
}


def init_rule(name: str, model_cfg: ModelConfig, init_cfg: InitConfig) -> dict:
    """The rule for one parameter: ``{"std": s, "d_in": n}``, ``{"uniform": bound, "d_in": n}`` or
    ``{"const": c}``; KeyError if none."""
    if name == "unembed.b_U" and model_cfg.unembed_bias:
        return {"uniform": float(model_cfg.d_model) ** -0.5, "d_in": model_cfg.d_model}
    suffix = ".".join(name.split(".")[-2:])
    if suffix in _FAN_IN:
        d_in = _FAN_IN[suffix](model_cfg, init_cfg)
        if init_cfg.distribution == "uniform-6":
            return {"uniform": (6.0 / d_in) ** init_cfg.gamma, "d_in": d_in}
        return {"std": float(d_in) ** -init_cfg.gamma, "d_in": d_in}
    for pattern, value in _CONSTANT.items():
        if re.search(pattern, name):
            return {"const": value}
    raise KeyError(f"no init rule for parameter {name!r}; add it to mechinit/model/init.py")


@torch.no_grad()
def gamma_init_(model: nn.Module, model_cfg: ModelConfig, init_cfg: InitConfig, generator: torch.Generator) -> dict:
    """Initialise every parameter of ``model`` in place (in name order) and return the rule table."""
    table = {}
    for name, param in model.named_parameters():
        rule = init_rule(name, model_cfg, init_cfg)
        if "std" in rule:
            noise = torch.randn(param.shape, generator=generator, dtype=torch.float32)
            param.copy_(noise.mul_(rule["std"]).to(param.dtype))
        elif "uniform" in rule:
            noise = torch.rand(param.shape, generator=generator, dtype=torch.float32)
            param.copy_(noise.mul_(2 * rule["uniform"]).sub_(rule["uniform"]).to(param.dtype))
        else:
            param.fill_(rule["const"])
        table[name] = rule
    return table
