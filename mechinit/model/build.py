"""Model construction: the one module that builds TransformerLens models.

Two block types, both inside a plain ``HookedTransformer`` with TL hook names:

* ``norm="pre"`` — TL's own pre-LN block (with TL's final LayerNorm).
* ``norm="post"`` — the paper's eq. (6): ``X_ao = LN(X + Attn(X)·W_O)``, ``X_do = LN(FFN(X_ao) + X_ao)``,
  no final LayerNorm. ``hook_resid_mid`` is X^ao (after its LN), ``hook_resid_post`` is X^do.

The paper counts layers from 1, TransformerLens from 0: paper layer l is ``blocks.{l-1}``.
:func:`paper_hook` is the single place that maps the paper's symbols onto hook names.
"""

from __future__ import annotations

import warnings
from typing import Optional

import torch
from jaxtyping import Float, Int
from transformer_lens import HookedTransformer, HookedTransformerConfig
from transformer_lens.components import LayerNorm, TransformerBlock

from mechinit.config import InitConfig, ModelConfig
from mechinit.model.init import gamma_init_

# paper symbol -> TL hook name template (``{block}`` is the 0-based TL block index)
PAPER_HOOKS: dict[str, str] = {
    "X": "blocks.{block}.hook_resid_pre",  # X^(l), input of layer l
    "X_ao": "blocks.{block}.hook_resid_mid",  # X^ao(l), after the attention sub-layer's LN
    "X_do": "blocks.{block}.hook_resid_post",  # X^do(l) = X^(l+1)
    "Attn": "blocks.{block}.attn.hook_pattern",  # Attn^(l) [batch head_index query_pos key_pos]
    "Q": "blocks.{block}.attn.hook_q",
    "K": "blocks.{block}.attn.hook_k",
    "V": "blocks.{block}.attn.hook_v",  # V^(l) [batch pos head_index d_head]
    "X_qkv": "blocks.{block}.attn.hook_z",  # Attn^(l) V^(l) before W_O
}


def paper_hook(symbol: str, layer: int) -> str:
    """Hook name of the paper's ``symbol`` at paper layer ``layer`` (counted from 1)."""
    if symbol not in PAPER_HOOKS:
        raise KeyError(f"unknown paper symbol {symbol!r}; known: {sorted(PAPER_HOOKS)}")
    if layer < 1:
        raise ValueError(f"paper layers count from 1, got {layer}")
    return PAPER_HOOKS[symbol].format(block=layer - 1)


class PostLNBlock(TransformerBlock):
    """The paper's post-LN block, eq. (6), with TL's attention, MLP and hook points."""

    def __init__(self, cfg: HookedTransformerConfig, block_index: int):
        super().__init__(cfg, block_index)  # cfg.normalization_type is None: ln1/ln2 are identities
        self.ln1 = LayerNorm(cfg)
        self.ln2 = LayerNorm(cfg)

    def forward(
        self,
        resid_pre: Float[torch.Tensor, "batch pos d_model"],
        shortformer_pos_embed: Optional[torch.Tensor] = None,
        past_kv_cache_entry=None,
        attention_mask: Optional[Int[torch.Tensor, "batch offset_pos"]] = None,
    ) -> Float[torch.Tensor, "batch pos d_model"]:
        """TL's block with the LayerNorms moved after the residual adds; every hook and switch of
        TL's block is honoured (``use_attn_in``, ``use_split_qkv_input``, ``use_hook_mlp_in``,
        ``use_attn_result`` inside the attention module)."""
        resid_pre = self.hook_resid_pre(resid_pre)  # [batch pos d_model]
        per_head = lambda x: x[:, :, None, :].repeat(1, 1, self.cfg.n_heads, 1)  # noqa: E731  [batch pos head_index d_model], a copy
        attn_in = self.hook_attn_in(per_head(resid_pre)) if self.cfg.use_attn_in else resid_pre
        if self.cfg.use_split_qkv_input:
            query_input = self.hook_q_input(per_head(resid_pre))
            key_input = self.hook_k_input(per_head(resid_pre))
            value_input = self.hook_v_input(per_head(resid_pre))
        else:
            query_input = key_input = value_input = attn_in
        attn_out = self.attn(query_input=query_input, key_input=key_input, value_input=value_input,
                             past_kv_cache_entry=past_kv_cache_entry, attention_mask=attention_mask)
        attn_out = self.hook_attn_out(attn_out)  # what the attention adds to the residual, before LN1
        resid_mid = self.hook_resid_mid(self.ln1(resid_pre + attn_out))  # X^ao
        mlp_in = self.hook_mlp_in(resid_mid.clone()) if self.cfg.use_hook_mlp_in else resid_mid
        mlp_out = self.hook_mlp_out(self.mlp(mlp_in))
        return self.hook_resid_post(self.ln2(resid_mid + mlp_out))  # X^do


def tl_config(cfg: ModelConfig, device: str = "cpu") -> HookedTransformerConfig:
    return HookedTransformerConfig(
        n_layers=cfg.n_layers,
        d_model=cfg.d_model,
        d_head=cfg.d_head,
        n_heads=cfg.n_heads,
        d_mlp=cfg.d_mlp,
        d_vocab=cfg.d_vocab,
        n_ctx=cfg.n_ctx,
        act_fn=cfg.act_fn,
        eps=cfg.ln_eps,
        normalization_type="LN" if cfg.norm == "pre" else None,
        positional_embedding_type="standard",
        default_prepend_bos=False,
        init_weights=False,
        device=device,
        seed=None,
    )


def build_model(cfg: ModelConfig, device: str = "cpu") -> HookedTransformer:
    """A HookedTransformer of this shape with *uninitialised* weights (load or init them next).

    With ``cfg.bias = False`` every linear bias is zero and frozen (``requires_grad=False``), except
    ``unembed.b_U`` when ``cfg.unembed_bias`` (the authors' code trains it).
    ``cfg.arch = "emb-mlp"`` builds the attention-free :class:`mechinit.model.emb_mlp.EmbMLP` instead.
    """
    if cfg.arch == "emb-mlp":
        from mechinit.model.emb_mlp import EmbMLP

        return _freeze_biases(EmbMLP(tl_config(cfg, device)).to(device), cfg)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="HookedTransformer is deprecated", category=DeprecationWarning)
        model = HookedTransformer(tl_config(cfg, device))
    if cfg.norm == "post":
        model.blocks = torch.nn.ModuleList(PostLNBlock(model.cfg, i) for i in range(cfg.n_layers)).to(device)
        model.setup()  # re-register hook points of the new blocks
    return _freeze_biases(model, cfg)


def _freeze_biases(model, cfg: ModelConfig):
    if not cfg.bias:
        for name, param in model.named_parameters():
            if is_linear_bias(name) and not (cfg.unembed_bias and name == "unembed.b_U"):
                param.requires_grad_(False)
    return model


def is_linear_bias(name: str) -> bool:
    return name.rsplit(".", 1)[-1] in ("b_Q", "b_K", "b_V", "b_O", "b_in", "b_out", "b_U")


def new_model(model_cfg: ModelConfig, init_cfg: InitConfig, seed: int, device: str = "cpu"):
    """Build and γ-initialise a model; returns ``(model, init_table)``. Init draws on the CPU from
    ``seed`` so the weights do not depend on the device."""
    model = build_model(model_cfg, "cpu")
    generator = torch.Generator().manual_seed(seed)
    table = gamma_init_(model, model_cfg, init_cfg, generator)
    return to_device(model, device), table


def to_device(model, device: str):
    """``model.to(device)`` without TL's print (HookedTransformer) and for plain modules (Emb-MLP)."""
    return model.to(device, print_details=False) if isinstance(model, HookedTransformer) else model.to(device)
