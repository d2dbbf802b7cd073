"""One guard for every forward path: the fast path (solo, last position or all positions) and the
stacked ensemble path give the HookedTransformer's logits and gradients, over every block variant
mechinit builds; the fast path refuses architectures it was not written for."""

import itertools

import pytest
import torch
from transformer_lens import HookedTransformer, HookedTransformerConfig

from mechinit.config import InitConfig, ModelConfig
from mechinit.model.build import new_model
from mechinit.model.fastpath import FastPathUnsupported, all_logits, fast_path_refusal, last_logits, model_logits
from mechinit.model.stacked import stacked_logits

VARIANTS = list(itertools.product(("pre", "post"), ("relu", "gelu"), (True, False), (1, 4)))
# float32 sums of a few hundred terms: relative errors near 1e-6; 1e-4 leaves room for any kernel set
RTOL, ATOL = 1e-4, 1e-5


def _model(norm, act, bias, heads, seed=0):
    mc = ModelConfig(n_layers=2, d_model=32, d_head=8, n_heads=heads, d_mlp=64, d_vocab=120, norm=norm, act_fn=act, bias=bias)
    model, _ = new_model(mc, InitConfig(gamma=0.3), seed=seed)
    if bias:  # biases start at zero; give them values so they are tested
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.rsplit(".", 1)[-1].startswith("b_"):
                    p.normal_(0, 0.1, generator=torch.Generator().manual_seed(seed + 7))
    return model


def _grads(model, loss):
    model.zero_grad(set_to_none=True)
    loss.backward()
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}


GRAD_ATOL = 1e-4  # b_K's true gradient is 0 (softmax ignores a per-query shift): both paths give float noise ~1e-5


def _close_grads(a, b):
    for name in a:
        assert (a[name] - b[name]).norm() <= RTOL * b[name].norm() + GRAD_ATOL, name


@pytest.mark.parametrize("norm, act, bias, heads", VARIANTS)
@pytest.mark.parametrize("positions", ["last", "all"])
def test_solo_fast_path_equals_the_hooked_forward(norm, act, bias, heads, positions):
    model = _model(norm, act, bias, heads)
    tokens = torch.randint(20, 100, (6, 9), generator=torch.Generator().manual_seed(3))
    fast = last_logits if positions == "last" else all_logits
    hooked = (lambda t: model(t)[:, -1]) if positions == "last" else model
    a, b = fast(model, tokens), hooked(tokens)
    torch.testing.assert_close(a, b, rtol=RTOL, atol=ATOL)
    weights = torch.randn(a.shape, generator=torch.Generator().manual_seed(4))
    _close_grads(_grads(model, (fast(model, tokens) * weights).sum()), _grads(model, (hooked(tokens) * weights).sum()))


@pytest.mark.parametrize("norm, act, bias, heads", VARIANTS)
def test_stacked_path_equals_each_hooked_model(norm, act, bias, heads):
    models = [_model(norm, act, bias, heads, seed=s) for s in (0, 1)]
    tokens = torch.randint(20, 100, (2, 5, 9), generator=torch.Generator().manual_seed(5))
    names = [n for n, _ in models[0].named_parameters()]
    stacked = {n: torch.stack([dict(m.named_parameters())[n].detach() for m in models]).requires_grad_() for n in names}
    logits = stacked_logits(stacked, models[0].cfg, tokens)
    weights = torch.randn(logits.shape, generator=torch.Generator().manual_seed(6))
    (logits * weights).sum().backward()
    for k, model in enumerate(models):
        torch.testing.assert_close(logits[k], model(tokens[k])[:, -1], rtol=RTOL, atol=ATOL)
        hooked = _grads(model, (model(tokens[k])[:, -1] * weights[k]).sum())
        _close_grads({n: stacked[n].grad[k] for n in hooked}, hooked)


@pytest.mark.parametrize("field, value", [("normalization_type", "LNPre"), ("normalization_type", "RMS"),
                                          ("positional_embedding_type", "rotary"), ("attn_only", True),
                                          ("parallel_attn_mlp", True)])
def test_the_fast_path_refuses_what_it_was_not_written_for_and_training_falls_back(field, value):
    kw = dict(n_layers=1, d_model=16, d_head=8, n_heads=2, d_mlp=32, d_vocab=50, n_ctx=9, act_fn="relu", normalization_type="LN")
    kw[field] = value
    if field == "positional_embedding_type":
        kw["rotary_dim"] = 8
    model = HookedTransformer(HookedTransformerConfig(**kw))
    tokens = torch.randint(0, 50, (3, 9))
    reason = fast_path_refusal(model)
    assert reason is not None and field in reason
    with pytest.raises(FastPathUnsupported, match=field):
        last_logits(model, tokens)
    torch.testing.assert_close(model_logits(model, torch.autocast("cpu", enabled=False))(tokens), model(tokens)[:, -1])


def test_a_tl_model_without_layernorm_is_not_taken_for_the_post_ln_block():
    kw = dict(n_layers=1, d_model=16, d_head=8, n_heads=2, d_mlp=32, d_vocab=50, n_ctx=9, act_fn="relu", normalization_type=None)
    assert "PostLNBlock" in fast_path_refusal(HookedTransformer(HookedTransformerConfig(**kw)))
