"""A lean forward pass for training: the same function as the HookedTransformer, on its own weights.

``last_logits(model, tokens)`` reads the parameters of a mechinit ``HookedTransformer`` (pre- or
post-LN, built by :mod:`mechinit.model`) and computes the logits at the last position with fused
PyTorch ops and no hook points. The last block computes its query, its attention output and its
MLP at the last position only, which is all the anchor task's loss reads. Training uses this path;
gradients flow into the very same parameter tensors, so the trained weights *are* the
HookedTransformer's. ``tests/mechinit/test_fastpath.py`` proves the logits equal
``model(tokens)[:, -1]``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from transformer_lens import HookedTransformer

from mechinit.ops import ACT

# TL config fields the fast path was written for: field -> the value(s) it handles
_HANDLED = {
    "normalization_type": (None, "LN"),
    "positional_embedding_type": ("standard",),
    "attn_only": (False,),
    "parallel_attn_mlp": (False,),
    "gated_mlp": (False,),
    "final_rms": (False,),
    "use_attn_scale": (True,),
    "n_key_value_heads": (None,),
    "use_normalization_before_and_after": (False,),
    "attn_types": (None,),
}


def fast_path_refusal(model) -> str | None:
    """Why the fast path cannot compute ``model``'s logits (one line naming the field), or ``None``.
    It handles mechinit's two blocks: TL's pre-LN block with LN, and :class:`mechinit.model.PostLNBlock`
    (TL config ``normalization_type=None``); any other TL architecture uses the hooked forward."""
    from mechinit.model.build import PostLNBlock

    if not isinstance(model, HookedTransformer):
        return f"{type(model).__name__} is not a HookedTransformer"
    cfg = model.cfg
    for name, allowed in _HANDLED.items():
        if getattr(cfg, name, allowed[0]) not in allowed:
            return f"the fast path handles {name} in {list(allowed)}, not {getattr(cfg, name)!r}"
    if cfg.act_fn not in ACT:
        return f"the fast path handles act_fn in {sorted(ACT)}, not {cfg.act_fn!r}"
    if abs(cfg.attn_scale - math.sqrt(cfg.d_head)) > 1e-6 * cfg.attn_scale:
        return f"the fast path handles attn_scale = sqrt(d_head), not {cfg.attn_scale!r}"
    post = [isinstance(b, PostLNBlock) for b in model.blocks]
    if cfg.normalization_type is None and not all(post):
        return "normalization_type None without mechinit's PostLNBlock (a TL model without LayerNorm)"
    if cfg.normalization_type == "LN" and any(post):
        return "PostLNBlock with normalization_type 'LN'"
    return None


class FastPathUnsupported(ValueError):
    """The fast path was asked for a model it was not written for."""


def _checked(model) -> None:
    reason = fast_path_refusal(model)
    if reason is not None:
        raise FastPathUnsupported(reason)


def _ln(x: torch.Tensor, p: dict, name: str, eps: float) -> torch.Tensor:
    return F.layer_norm(x, (x.shape[-1],), p[f"{name}.w"], p[f"{name}.b"], eps)


def _attention(p: dict, b: str, x_q: torch.Tensor, x_kv: torch.Tensor, causal: bool) -> torch.Tensor:
    """Multi-head attention of TL's ``Attention`` module: queries from x_q, keys/values from x_kv."""
    q = torch.einsum("bpd,hde->bhpe", x_q, p[f"{b}.attn.W_Q"]) + p[f"{b}.attn.b_Q"][None, :, None, :]
    k = torch.einsum("bpd,hde->bhpe", x_kv, p[f"{b}.attn.W_K"]) + p[f"{b}.attn.b_K"][None, :, None, :]
    v = torch.einsum("bpd,hde->bhpe", x_kv, p[f"{b}.attn.W_V"]) + p[f"{b}.attn.b_V"][None, :, None, :]
    z = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # [batch head_index pos d_head]
    return torch.einsum("bhpe,hed->bpd", z, p[f"{b}.attn.W_O"]) + p[f"{b}.attn.b_O"]


def _mlp(p: dict, b: str, x: torch.Tensor, act) -> torch.Tensor:
    return act(x @ p[f"{b}.mlp.W_in"] + p[f"{b}.mlp.b_in"]) @ p[f"{b}.mlp.W_out"] + p[f"{b}.mlp.b_out"]


def logits_from_params(p: dict[str, torch.Tensor], cfg, tokens: Int[torch.Tensor, "batch pos"],
                       last_only: bool = True) -> torch.Tensor:
    """Logits ``[batch d_vocab]`` at the last position (or ``[batch pos d_vocab]`` at every position
    with ``last_only=False``) from a dict of TL-named parameters (``dict(model.named_parameters())``)
    and the model's TL config: a pure function of the parameters."""
    act = ACT[cfg.act_fn]
    post = cfg.normalization_type is None  # mechinit's post-LN model (see mechinit.model)
    x = p["embed.W_E"][tokens] + p["pos_embed.W_pos"][: tokens.shape[1]]
    for i in range(cfg.n_layers):
        b, last = f"blocks.{i}", last_only and i == cfg.n_layers - 1
        if post:
            x_q = x[:, -1:] if last else x
            x = _ln(x_q + _attention(p, b, x_q, x, not last), p, f"{b}.ln1", cfg.eps)
            x = _ln(x + _mlp(p, b, x, act), p, f"{b}.ln2", cfg.eps)
        else:
            h = _ln(x, p, f"{b}.ln1", cfg.eps)
            h_q = h[:, -1:] if last else h
            x = (x[:, -1:] if last else x) + _attention(p, b, h_q, h, not last)
            x = x + _mlp(p, b, _ln(x, p, f"{b}.ln2", cfg.eps), act)
    if not post:
        x = _ln(x, p, "ln_final", cfg.eps)
    return (x[:, -1] if last_only else x) @ p["unembed.W_U"] + p["unembed.b_U"]


def last_logits(model: HookedTransformer, tokens: Int[torch.Tensor, "batch pos"]) -> Float[torch.Tensor, "batch d_vocab"]:
    """Logits at the last position, equal to ``model(tokens)[:, -1]``; refuses (FastPathUnsupported)
    a HookedTransformer it was not written for (see :func:`fast_path_refusal`)."""
    if not isinstance(model, HookedTransformer):  # Emb-MLP and other small HookedRootModules
        return model(tokens)[:, -1]
    _checked(model)
    return logits_from_params(dict(model.named_parameters()), model.cfg, tokens)


def all_logits(model: HookedTransformer, tokens: Int[torch.Tensor, "batch pos"]) -> Float[torch.Tensor, "batch pos d_vocab"]:
    """Logits at every position, equal to ``model(tokens)``."""
    if not isinstance(model, HookedTransformer):
        return model(tokens)
    _checked(model)
    return logits_from_params(dict(model.named_parameters()), model.cfg, tokens, last_only=False)


def model_logits(model, autocast, positions: str = "last"):
    """The logits function of ``model`` under ``autocast``: at the last position (``[batch d_vocab]``)
    or at every position (``positions="all"``, ``[batch pos d_vocab]``). The fast path where it was
    written for the model, else the hooked forward. :func:`fast_path_refusal` is asked once, here,
    not at every step."""
    last = positions == "last"
    if not isinstance(model, HookedTransformer):  # Emb-MLP and other small HookedRootModules
        forward = (lambda m, t: m(t)[:, -1]) if last else (lambda m, t: m(t))
    elif fast_path_refusal(model) is None:
        forward = lambda m, t: logits_from_params(dict(m.named_parameters()), m.cfg, t, last_only=last)  # noqa: E731
    else:
        forward = (lambda m, t: m(t)[:, -1]) if last else (lambda m, t: m(t))

    def logits_fn(t: torch.Tensor) -> torch.Tensor:
        with autocast:
            return forward(model, t)

    return logits_fn
