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

import torch
import torch.nn.functional as F
from jaxtyping import Float, Int
from transformer_lens import HookedTransformer

_ACT = {"relu": F.relu, "gelu": F.gelu}


def _ln(x: torch.Tensor, ln, eps: float) -> torch.Tensor:
    return F.layer_norm(x, (x.shape[-1],), ln.w, ln.b, eps)


def _attention(block, x_q: torch.Tensor, x_kv: torch.Tensor, causal: bool) -> torch.Tensor:
    """Multi-head attention of TL's ``Attention`` module: queries from x_q, keys/values from x_kv."""
    attn = block.attn
    q = torch.einsum("bpd,hde->bhpe", x_q, attn.W_Q) + attn.b_Q[None, :, None, :]
    k = torch.einsum("bpd,hde->bhpe", x_kv, attn.W_K) + attn.b_K[None, :, None, :]
    v = torch.einsum("bpd,hde->bhpe", x_kv, attn.W_V) + attn.b_V[None, :, None, :]
    z = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # [batch head_index pos d_head]
    return torch.einsum("bhpe,hed->bpd", z, attn.W_O) + attn.b_O


def _mlp(block, x: torch.Tensor, act) -> torch.Tensor:
    mlp = block.mlp
    return act(x @ mlp.W_in + mlp.b_in) @ mlp.W_out + mlp.b_out


def last_logits(model: HookedTransformer, tokens: Int[torch.Tensor, "batch pos"]) -> Float[torch.Tensor, "batch d_vocab"]:
    """Logits at the last position, equal to ``model(tokens)[:, -1]``."""
    cfg = model.cfg
    act = _ACT[cfg.act_fn]
    post = cfg.normalization_type is None  # mechinit's post-LN model (see mechinit.model)
    x = model.embed.W_E[tokens] + model.pos_embed.W_pos[: tokens.shape[1]]
    n = len(model.blocks)
    for i, block in enumerate(model.blocks):
        last = i == n - 1
        if post:
            x_q = x[:, -1:] if last else x
            x = _ln(x_q + _attention(block, x_q, x, causal=not last), block.ln1, cfg.eps)
            x = _ln(x + _mlp(block, x, act), block.ln2, cfg.eps)
        else:
            h = _ln(x, block.ln1, cfg.eps)
            h_q = h[:, -1:] if last else h
            x = (x[:, -1:] if last else x) + _attention(block, h_q, h, causal=not last)
            x = x + _mlp(block, _ln(x, block.ln2, cfg.eps), act)
    if not post:
        x = _ln(x, model.ln_final, cfg.eps)
    return x[:, -1] @ model.unembed.W_U + model.unembed.b_U
