"""TransformerLens's hook contract on both of mechinit's blocks: every hook point fires under each of
TL's switches, per-head input patching touches exactly the heads patched, and TL's own activation
patching helpers run."""

import itertools

import pytest
import torch
import transformer_lens.patching as patching

from mechinit.config import InitConfig, ModelConfig
from mechinit.model.build import new_model

SWITCHES = ("set_use_split_qkv_input", "set_use_attn_in", "set_use_hook_mlp_in", "set_use_attn_result")
# hooks that fire only under a switch (TL's own block behaves the same)
GATED = {"hook_q_input": "set_use_split_qkv_input", "hook_k_input": "set_use_split_qkv_input", "hook_v_input": "set_use_split_qkv_input",
         "hook_attn_in": "set_use_attn_in", "hook_mlp_in": "set_use_hook_mlp_in", "hook_result": "set_use_attn_result"}


def _set(model, switch: str, on: bool) -> None:
    getattr(model, switch)(on)


def _model(norm: str, heads: int):
    mc = ModelConfig(n_layers=2, d_model=32, d_head=8, n_heads=heads, d_mlp=64, d_vocab=120, norm=norm)
    model, _ = new_model(mc, InitConfig(gamma=0.3), seed=0)
    return model


def _tokens(n=4):
    return torch.randint(20, 100, (n, 9), generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("norm, heads", list(itertools.product(("pre", "post"), (1, 4))))
def test_every_hook_fires_with_its_switch_and_switches_change_no_logit(norm, heads):
    model, tokens = _model(norm, heads), _tokens()
    base = model(tokens)
    for switch in SWITCHES:  # (hook_tokens exists only when cfg.use_hook_tokens is set at construction, in TL too)
        _set(model, switch, True)
        logits, cache = model.run_with_cache(tokens)
        _set(model, switch, False)
        torch.testing.assert_close(logits, base, rtol=0, atol=1e-5)
        for name in model.hook_dict:
            gate = GATED.get(name.rsplit(".", 1)[-1])
            assert (name in cache) == (gate is None or gate == switch), f"{name} under {switch}"


@pytest.mark.parametrize("norm, heads", [("pre", 4), ("post", 4), ("post", 1)])
def test_per_head_input_patch_changes_exactly_the_heads_patched(norm, heads):
    model, tokens = _model(norm, heads), _tokens()
    model.set_use_split_qkv_input(True)
    model.set_use_attn_result(True)
    _, clean = model.run_with_cache(tokens)
    patched_head = heads - 1

    def patch_q(q_input, hook):  # [batch pos head_index d_model]: feed head `patched_head` another input
        q_input[:, :, patched_head] = q_input[:, :, patched_head].flip(0)
        return q_input

    with model.hooks(fwd_hooks=[("blocks.0.hook_q_input", patch_q)]):
        _, cache = model.run_with_cache(tokens)
    diff = (cache["blocks.0.attn.hook_result"] - clean["blocks.0.attn.hook_result"]).abs().amax(dim=(0, 1, 3))  # per head
    assert diff[patched_head] > 1e-4
    assert torch.all(diff[torch.arange(heads) != patched_head] == 0)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_transformer_lens_patching_helpers_run_on_both_blocks(norm):
    model = _model(norm, 2)
    clean, corrupted = _tokens(2), _tokens(2).flip(0)
    _, clean_cache = model.run_with_cache(clean)
    metric = lambda logits: logits[:, -1].logsumexp(-1).mean()  # noqa: E731
    for helper in (patching.get_act_patch_resid_pre, patching.get_act_patch_attn_out, patching.get_act_patch_mlp_out):
        out = helper(model, corrupted, clean_cache, metric)
        assert out.shape == (2, 9) and torch.isfinite(out).all()
    heads = patching.get_act_patch_attn_head_out_all_pos(model, corrupted, clean_cache, metric)
    assert heads.shape == (2, 2)
    # corrupt position 0 only: patching layer 0's residual there restores the clean metric, any other position changes nothing
    clean_one = _tokens(1)
    corrupted_one = clean_one.clone()
    corrupted_one[0, 0] = 20 if clean_one[0, 0] != 20 else 21
    _, cache_one = model.run_with_cache(clean_one)
    per_site = patching.get_act_patch_resid_pre(model, corrupted_one, cache_one, metric)
    clean_value, corrupted_value = metric(model(clean_one)), metric(model(corrupted_one))
    assert not torch.isclose(clean_value, corrupted_value)
    torch.testing.assert_close(per_site[0, 0], clean_value, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(per_site[0, 1:], corrupted_value.expand(8), rtol=1e-5, atol=1e-5)
