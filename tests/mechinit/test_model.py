import pytest
import torch
import torch.nn.functional as F

from mechinit.config import InitConfig, ModelConfig
from mechinit.model.build import PAPER_HOOKS, new_model, paper_hook

SMALL = dict(n_layers=3, d_model=48, d_head=12, n_heads=2, d_mlp=96, d_vocab=130, n_ctx=9)


def _model(**kw):
    model, _ = new_model(ModelConfig(**{**SMALL, **kw}), InitConfig(gamma=0.3), seed=1)
    return model


def test_paper_layers_map_to_tl_blocks():
    assert paper_hook("X", 1) == "blocks.0.hook_resid_pre"
    assert paper_hook("X_ao", 1) == "blocks.0.hook_resid_mid"
    assert paper_hook("X_do", 2) == "blocks.1.hook_resid_post"
    assert paper_hook("Attn", 2) == "blocks.1.attn.hook_pattern"
    assert paper_hook("V", 2) == "blocks.1.attn.hook_v"
    with pytest.raises(ValueError):
        paper_hook("X", 0)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_every_paper_hook_exists_on_the_model(norm):
    model = _model(norm=norm)
    for symbol in PAPER_HOOKS:
        for layer in range(1, SMALL["n_layers"] + 1):
            assert paper_hook(symbol, layer) in model.hook_dict


def test_post_ln_block_computes_equation_6():
    """X_ao = LN(X + Attn·W_O), X_do = LN(FFN(X_ao) + X_ao), and the logits read X_do of the last layer."""
    model = _model(norm="post")
    with torch.no_grad():  # non-trivial LN affine parameters
        for block in model.blocks:
            for ln in (block.ln1, block.ln2):
                ln.w.uniform_(0.5, 1.5)
                ln.b.normal_()
    tokens = torch.randint(20, 100, (5, 9))
    logits, cache = model.run_with_cache(tokens)
    for l, block in enumerate(model.blocks):
        x = cache[f"blocks.{l}.hook_resid_pre"]
        attn_out = cache[f"blocks.{l}.hook_attn_out"]
        x_ao = F.layer_norm(x + attn_out, (SMALL["d_model"],), block.ln1.w, block.ln1.b, 1e-5)
        torch.testing.assert_close(cache[f"blocks.{l}.hook_resid_mid"], x_ao)
        ffn = F.relu(x_ao @ block.mlp.W_in + block.mlp.b_in) @ block.mlp.W_out + block.mlp.b_out
        x_do = F.layer_norm(ffn + x_ao, (SMALL["d_model"],), block.ln2.w, block.ln2.b, 1e-5)
        torch.testing.assert_close(cache[f"blocks.{l}.hook_resid_post"], x_do)
    # no final LN: the unembedding reads X_do of the last block directly
    torch.testing.assert_close(logits, cache[f"blocks.{SMALL['n_layers'] - 1}.hook_resid_post"] @ model.W_U + model.b_U)
    assert not hasattr(model, "ln_final") or not isinstance(model.ln_final, torch.nn.Module) or not list(model.ln_final.parameters())


def test_pre_ln_model_is_tls_own_block_with_final_ln():
    model = _model(norm="pre")
    assert type(model.blocks[0]).__name__ == "TransformerBlock"
    assert model.ln_final.w.shape == (SMALL["d_model"],)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_biases_off_are_zero_and_frozen(norm):
    model = _model(norm=norm, bias=False)
    biases = [(n, p) for n, p in model.named_parameters() if n.rsplit(".", 1)[-1] in ("b_Q", "b_K", "b_V", "b_O", "b_in", "b_out", "b_U")]
    assert len(biases) == 6 * SMALL["n_layers"] + 1
    assert all(not p.requires_grad and torch.all(p == 0) for _, p in biases)
    assert all(p.requires_grad for n, p in model.named_parameters() if n.endswith("ln1.w"))
