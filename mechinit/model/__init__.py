"""The model stage: γ-scaled init (:mod:`.init`), the TransformerLens models and their post-LN block
(:mod:`.build`, the one module that constructs TL models), the lean training forward (:mod:`.fastpath`),
K models stacked into one forward (:mod:`.stacked`) and the attention-free Emb-MLP (:mod:`.emb_mlp`).

``from mechinit.model import build_model`` (and the other names of :mod:`.build`) is the public face."""

from mechinit.model.build import PostLNBlock, build_model, is_linear_bias, new_model, paper_hook, tl_config, to_device

__all__ = ["PostLNBlock", "build_model", "is_linear_bias", "new_model", "paper_hook", "tl_config", "to_device"]
