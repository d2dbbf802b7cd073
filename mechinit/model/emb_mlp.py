"""Emb-MLP: token embeddings into one MLP, no attention (the companion paper's attention-free model).

A small ``HookedRootModule`` with TL-style parameter and hook names, so ``run_with_cache``, the zoo
and the weight-only probes work on it unchanged; probes that need attention refuse it.

    x = concat_pos(W_E[tokens])                 hook_embed   [batch pos d_model]
    h = act(x_flat @ mlp.W_in + mlp.b_in)       mlp.hook_pre / mlp.hook_post   [batch d_mlp]
    r = h @ mlp.W_out + mlp.b_out               hook_resid   [batch d_model]
    logits = r @ unembed.W_U + unembed.b_U      [batch 1 d_vocab]

The embeddings of all ``n_ctx`` positions are concatenated (``W_in [n_ctx·d_model d_mlp]``), so the
position is carried by where a token sits, not by a positional embedding. The output is one
prediction per sequence, returned at the last position (``[batch 1 d_vocab]``) so that
``model(tokens)[:, -1]`` means the same as for the transformers.
"""

from __future__ import annotations

import torch
from jaxtyping import Float, Int
from torch import nn
from transformer_lens import HookedRootModule
from transformer_lens.hook_points import HookPoint

from mechinit.ops import ACT


class EmbMLPBlock(nn.Module):
    def __init__(self, d_in: int, d_mlp: int, d_model: int):
        super().__init__()
        self.W_in = nn.Parameter(torch.empty(d_in, d_mlp))
        self.b_in = nn.Parameter(torch.zeros(d_mlp))
        self.W_out = nn.Parameter(torch.empty(d_mlp, d_model))
        self.b_out = nn.Parameter(torch.zeros(d_model))
        self.hook_pre = HookPoint()
        self.hook_post = HookPoint()


class Named(nn.Module):
    """A holder so parameters get TL names (``embed.W_E``, ``unembed.W_U``)."""


class EmbMLP(HookedRootModule):
    def __init__(self, tl_cfg):
        super().__init__()
        self.cfg = tl_cfg
        d, n = tl_cfg.d_model, tl_cfg.n_ctx
        self.embed = Named()
        self.embed.W_E = nn.Parameter(torch.empty(tl_cfg.d_vocab, d))
        self.mlp = EmbMLPBlock(n * d, tl_cfg.d_mlp, d)
        self.unembed = Named()
        self.unembed.W_U = nn.Parameter(torch.empty(d, tl_cfg.d_vocab))
        self.unembed.b_U = nn.Parameter(torch.zeros(tl_cfg.d_vocab))
        self.hook_embed = HookPoint()
        self.hook_resid = HookPoint()
        self.setup()

    def forward(self, tokens: Int[torch.Tensor, "batch pos"]) -> Float[torch.Tensor, "batch 1 d_vocab"]:
        if tokens.shape[1] != self.cfg.n_ctx:
            raise ValueError(f"Emb-MLP reads exactly n_ctx = {self.cfg.n_ctx} tokens per sequence, got {tokens.shape[1]}")
        x = self.hook_embed(self.embed.W_E[tokens])
        pre = self.mlp.hook_pre(x.flatten(1) @ self.mlp.W_in + self.mlp.b_in)
        post = self.mlp.hook_post(ACT[self.cfg.act_fn](pre))
        resid = self.hook_resid(post @ self.mlp.W_out + self.mlp.b_out)
        return (resid @ self.unembed.W_U + self.unembed.b_U)[:, None]
