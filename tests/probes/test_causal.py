"""The causal probes on planted models whose answers are known: a model that copies the token at a
fixed position to the last one (patching exactly that position restores everything), a model that
pools every position alike (swapping the anchors changes nothing), and a shifted copy whose logit
lens is computed by hand."""

import math

import pytest
import torch
from mechinit.probes.logit_lens import lens
from mechinit.probes.patching import logit_diff, patch_maps
from transformer_lens import HookedTransformer, HookedTransformerConfig

from mechinit import probes
from mechinit.config import ModelConfig, TaskConfig
from mechinit.tasks.anchor import AnchorTask

VOCAB, N_CTX, P0 = 120, 9, 1
D = VOCAB + N_CTX  # one-hot token dimensions, then one-hot position dimensions


def _task():
    return AnchorTask(TaskConfig(n_train=1000), ModelConfig(d_vocab=VOCAB, n_ctx=N_CTX))


def _planted(attend_to: int | None, shift: int = 0, copy_gain: float = 10.0) -> HookedTransformer:
    """One attention-only layer, no LayerNorm. ``attend_to``: every query attends to that position
    (once it can see it), ``None``: uniform attention over the visible positions. The value copies
    the token one-hot; the unembedding maps token t to logit t + ``shift``."""
    cfg = HookedTransformerConfig(n_layers=1, d_model=D, d_head=D, n_heads=1, d_vocab=VOCAB, n_ctx=N_CTX, attn_only=True,
                                  act_fn="relu", normalization_type=None, positional_embedding_type="standard", default_prepend_bos=False)
    model = HookedTransformer(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.W_E[:, :VOCAB] = torch.eye(VOCAB)
        model.W_pos[:, VOCAB:] = torch.eye(N_CTX)
        if attend_to is not None:
            model.blocks[0].attn.W_Q[0, VOCAB:, 0] = 1.0
            model.blocks[0].attn.W_K[0, VOCAB + attend_to, 0] = 300.0
        model.blocks[0].attn.W_V[0, :VOCAB, :VOCAB] = torch.eye(VOCAB)
        model.blocks[0].attn.W_O[0, :VOCAB, :VOCAB] = copy_gain * torch.eye(VOCAB)
        for t in range(VOCAB):
            if 0 <= t + shift < VOCAB:
                model.W_U[t, t + shift] = 1.0
    return model


def test_patching_the_copied_position_restores_everything_and_nothing_else():
    model = _planted(P0)
    gen = torch.Generator().manual_seed(0)
    clean = torch.randint(20, 100, (16, N_CTX), generator=gen)
    corrupted = clean.clone()
    corrupted[:, P0] = torch.where(clean[:, P0] < 99, clean[:, P0] + 1, clean[:, P0] - 1)
    maps = patch_maps(model, clean, corrupted, lambda logits: logit_diff(logits, clean[:, P0], corrupted[:, P0]), min_effect=0.5)
    assert maps["ld_clean"] == pytest.approx(10.0, abs=1e-3) and maps["ld_corrupted"] == pytest.approx(-10.0, abs=1e-3)
    resid = torch.tensor(maps["resid_pre"])
    assert resid.shape == (1, N_CTX)
    assert resid[0, P0].item() == pytest.approx(1.0, abs=1e-5)
    assert torch.all(resid[0, torch.arange(N_CTX) != P0].abs() < 1e-6)
    attn = torch.tensor(maps["attn_out"])  # the copy reaches the last position through attention there
    assert attn[0, -1].item() == pytest.approx(1.0, abs=1e-5) and torch.all(attn[0, :-1].abs() < 1e-6)
    assert maps["mlp_out"] is None and maps["heads"] == [[pytest.approx(1.0, abs=1e-5)]]


def test_a_model_that_pools_every_position_alike_has_order_sensitivity_zero():
    result = probes.run("patching", _planted(None), _task())
    assert result.headline["order_sensitivity"] == 0.0 and result.headline["order_sensitivity_34"] == 0.0
    assert result.headline["order_site"] is None
    assert "differ by 0 <" in result.numbers["order"]["4,3"]["clean_into_corrupted"]["reason"]


def _order_nudged(delta: float, copy_gain: float) -> HookedTransformer:
    """A copy of the key (position 1) answered with x−6, the symmetric answer of (4,3); the last
    position attends to positions 1 and 2 alike, except that anchor 4 at position 2 scores ``delta``
    more: (4,3) in order gives the key weight 1/(1+e^delta), swapped 1/2. LD = logit[x−10] − logit[x−6]
    = −copy_gain × that weight: the swap moves LD by copy_gain (1/2 − 1/(1+e^delta)) and the choice
    (σ(LD)) by far less when copy_gain is large."""
    model = _planted(P0, shift=-6, copy_gain=copy_gain)
    scale = model.cfg.d_head ** 0.5  # TL divides the scores by sqrt(d_head)
    with torch.no_grad():
        model.blocks[0].attn.W_K[0, VOCAB + 2, 0] = 300.0
        model.blocks[0].attn.W_K[0, 4, 0] = delta * scale
    return model


def test_a_swap_that_moves_the_logits_but_not_the_choice_has_no_order_site():
    """The order effect passes min_effect (ΔLD ≈ 4.6 logits) but moves the choice by ≈ 0.005: no
    patching map, so no order_site that is a ratio of a tiny effect; a lower min_sensitivity maps it."""
    model = _order_nudged(delta=1.0, copy_gain=20.0)
    result = probes.run("patching", model, _task())
    order = result.numbers["order"]["4,3"]
    gap = 20 * (0.5 - 1 / (1 + math.e))
    assert order["clean_into_corrupted"]["ld_clean"] - order["clean_into_corrupted"]["ld_corrupted"] == pytest.approx(gap, abs=1e-3)
    assert result.headline["order_sensitivity"] == pytest.approx(0.0045, abs=0.002)
    assert result.headline["order_site"] is None
    assert "min_sensitivity 0.05" in order["clean_into_corrupted"]["reason"] and "resid_pre" not in order["clean_into_corrupted"]
    loose = probes.run("patching", model, _task(), min_sensitivity=0.001)
    site = loose.headline["order_site"]
    assert (site["layer"], site["position"]) == (0, 2) and site["restored"] == pytest.approx(1.0, abs=1e-4)


def test_logit_lens_of_a_shifted_copy_matches_the_hand_computation():
    model = _planted(P0, shift=-10)  # copies the key and answers key - 10: the inferential map of (4,3)
    result = probes.run("logit_lens", model, _task())
    maps = result.numbers["pairs"]["4,3"]["maps"]
    assert set(maps) == {"inferential", "symmetric"}  # (4,3) has no designated map
    assert result.headline["first_layer_correct"] == {"inferential": "final_post", "symmetric": None}
    assert result.headline["final_accuracy"] == {"inferential": 1.0, "symmetric": 0.0}
    grid = torch.tensor(maps["inferential"]["probability"])  # [component pos]
    assert grid.shape == (2, N_CTX)  # 0_pre, final_post (attention only: no mid)
    assert grid[1, -1].item() > 0.99 and grid[0, -1].item() < 0.05
    # at the last position the final residual is e_last + e_pos8 + 10 e_key: logit 10 at key-10 and
    # 1 at last-10, 0 elsewhere (118 tokens), when the last token differs from the key
    tokens = torch.tensor([[50, 60, 4, 3, 30, 31, 32, 33, 70]])
    probs, labels = lens(model, tokens)
    expected = math.exp(10) / (math.exp(10) + math.exp(1) + (VOCAB - 2))
    assert labels[-1] == "final_post"
    assert probs[-1, 0, -1, 50].item() == pytest.approx(expected, rel=1e-5)
    first = 1 / (math.exp(1) + (VOCAB - 1))  # embeddings alone: only last-10 has logit 1
    assert probs[0, 0, -1, 50].item() == pytest.approx(first, rel=1e-5)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_logit_lens_final_component_is_the_models_own_output(norm):
    """Post-LN: the residual as it stands; pre-LN: through the final LayerNorm (apply_ln_to_stack)."""
    from mechinit.config import InitConfig
    from mechinit.model.build import new_model

    model, _ = new_model(ModelConfig(d_model=32, d_head=16, n_heads=2, d_mlp=64, d_vocab=VOCAB, norm=norm), InitConfig(gamma=0.3), 0)
    tokens = torch.randint(20, 100, (5, N_CTX), generator=torch.Generator().manual_seed(2))
    probs, labels = lens(model, tokens)
    assert labels == ["0_pre", "0_mid", "1_pre", "1_mid", "final_post"]
    torch.testing.assert_close(probs[-1], model(tokens).softmax(-1), rtol=1e-5, atol=1e-6)
