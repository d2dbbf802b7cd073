"""The fast path for K models at once: TL-named parameters stacked along a leading member axis.

``stacked_logits(p, cfg, tokens)`` computes, for every member k, the same last-position logits as
:func:`mechinit.model.fastpath.logits_from_params` on ``{name: p[name][k]}`` and ``tokens[k]``. Members
are independent, so the gradient of the *sum* of the members' mean losses, taken by plain autograd,
is each member's own gradient: no ``vmap`` is needed, and every matmul is one batched kernel over
the members (``bmm``-shaped einsums, the fused attention kernel over ``[member batch head pos]``).
``tests/mechinit/test_ensemble.py`` proves member-for-member equality with the single-model path.

Shapes use TL's dimension names with ``member`` in front: ``W_Q [member head_index d_model d_head]``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int

from mechinit.ops import ACT


def _ln(x: torch.Tensor, p: dict, name: str, eps: float) -> torch.Tensor:
    # x [member batch pos d_model]; w, b [member d_model]
    return F.layer_norm(x, x.shape[-1:], eps=eps) * p[f"{name}.w"][:, None, None] + p[f"{name}.b"][:, None, None]


def _attention(p: dict, b: str, x_q: torch.Tensor, x_kv: torch.Tensor, causal: bool) -> torch.Tensor:
    def project(x, w):  # [member batch pos d_model] x [member head_index d_model d_head]
        return torch.einsum("kbpd,khde->kbhpe", x, p[f"{b}.attn.W_{w}"]) + p[f"{b}.attn.b_{w}"][:, None, :, None, :]

    z = F.scaled_dot_product_attention(project(x_q, "Q"), project(x_kv, "K"), project(x_kv, "V"), is_causal=causal)
    return torch.einsum("kbhpe,khed->kbpd", z, p[f"{b}.attn.W_O"]) + p[f"{b}.attn.b_O"][:, None, None]


def _mlp(p: dict, b: str, x: torch.Tensor, act) -> torch.Tensor:
    h = act(torch.einsum("kbpd,kdm->kbpm", x, p[f"{b}.mlp.W_in"]) + p[f"{b}.mlp.b_in"][:, None, None])
    return torch.einsum("kbpm,kmd->kbpd", h, p[f"{b}.mlp.W_out"]) + p[f"{b}.mlp.b_out"][:, None, None]


def stacked_logits(p: dict[str, torch.Tensor], cfg, tokens: Int[torch.Tensor, "member batch pos"]
                   ) -> Float[torch.Tensor, "member batch d_vocab"]:
    """Last-position logits of every member (pre- or post-LN mechinit models; ``cfg`` is the TL config)."""
    act = ACT[cfg.act_fn]
    post = cfg.normalization_type is None
    n_members, _, n_pos = tokens.shape
    W_E = p["embed.W_E"]
    offsets = torch.arange(n_members, device=tokens.device)[:, None, None] * W_E.shape[1]
    x = W_E.flatten(0, 1)[tokens + offsets] + p["pos_embed.W_pos"][:, None, :n_pos]
    for i in range(cfg.n_layers):
        b, last = f"blocks.{i}", i == cfg.n_layers - 1
        if post:
            x_q = x[:, :, -1:] if last else x
            x = _ln(x_q + _attention(p, b, x_q, x, not last), p, f"{b}.ln1", cfg.eps)
            x = _ln(x + _mlp(p, b, x, act), p, f"{b}.ln2", cfg.eps)
        else:
            h = _ln(x, p, f"{b}.ln1", cfg.eps)
            h_q = h[:, :, -1:] if last else h
            x = (x[:, :, -1:] if last else x) + _attention(p, b, h_q, h, not last)
            x = x + _mlp(p, b, _ln(x, p, f"{b}.ln2", cfg.eps), act)
    if not post:
        x = _ln(x, p, "ln_final", cfg.eps)
    return torch.bmm(x[:, :, -1], p["unembed.W_U"]) + p["unembed.b_U"][:, None]
