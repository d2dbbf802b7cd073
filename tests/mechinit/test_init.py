import pytest
import torch

from mechinit.config import InitConfig, ModelConfig
from mechinit.model.build import build_model, new_model
from mechinit.model.init import init_rule


def _tolerance(numel: int) -> float:
    return 0.05 if numel >= 1000 else 0.15  # DESIGN Decisions


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("gamma", [0.3, 0.8])
def test_every_weight_has_its_target_std(norm, gamma):
    mc = ModelConfig(n_layers=2, d_model=96, d_head=24, n_heads=4, d_mlp=192, d_vocab=150, n_ctx=9, norm=norm, bias=True)
    model, table = new_model(mc, InitConfig(gamma=gamma), seed=0)
    checked = 0
    for name, param in model.named_parameters():
        rule = table[name]
        if "std" in rule:
            assert rule["std"] == pytest.approx(rule["d_in"] ** -gamma)
            empirical = param.detach().float().std().item()
            assert abs(empirical / rule["std"] - 1) < _tolerance(param.numel()), name
            checked += 1
        else:
            assert torch.all(param == rule["const"]), name
    assert checked == 1 + 1 + 2 * 6 + 1  # W_E, W_pos, per block W_Q W_K W_V W_O W_in W_out, W_U


def test_fan_in_table_uses_heads_times_d_head_for_W_O():
    mc = ModelConfig(d_model=64, d_head=16, n_heads=4, d_mlp=256)
    ic = InitConfig(gamma=0.5)
    assert init_rule("blocks.0.attn.W_O", mc, ic)["d_in"] == 64  # n_heads·d_head, not TL's d_head
    assert init_rule("blocks.0.attn.W_Q", mc, ic)["d_in"] == 64
    assert init_rule("blocks.1.mlp.W_out", mc, ic)["d_in"] == 256
    assert init_rule("unembed.W_U", mc, ic)["d_in"] == 64
    assert init_rule("embed.W_E", mc, ic)["d_in"] == 64
    assert init_rule("embed.W_E", mc, InitConfig(gamma=0.5, embed_fan_in="d_vocab"))["d_in"] == mc.d_vocab


def test_uniform_6_and_row_count_fan_in_the_sibling_folders_convention():
    """init.distribution = "uniform-6" draws U(±(6/d_in)^γ); init.embed_fan_in = "rows" gives W_E
    d_in = d_vocab and W_pos d_in = n_ctx (model.py of the authors' multi-step folder)."""
    mc = ModelConfig(n_layers=1, d_model=96, d_head=48, n_heads=2, d_mlp=192, d_vocab=150, n_ctx=9)
    ic = InitConfig(gamma=0.8, distribution="uniform-6", embed_fan_in="rows")
    model, table = new_model(mc, ic, seed=0)
    expected_d_in = {"embed.W_E": 150, "pos_embed.W_pos": 9, "blocks.0.attn.W_Q": 96, "blocks.0.attn.W_O": 96,
                     "blocks.0.mlp.W_in": 96, "blocks.0.mlp.W_out": 192, "unembed.W_U": 96}
    params = dict(model.named_parameters())
    for name, d_in in expected_d_in.items():
        bound = (6 / d_in) ** 0.8
        assert table[name] == {"uniform": pytest.approx(bound), "d_in": d_in}, name
        w = params[name].detach().float()
        assert w.abs().max().item() <= bound and w.abs().max().item() > 0.9 * bound, name  # fills its interval
        assert abs(w.std().item() / (bound / 3 ** 0.5) - 1) < _tolerance(w.numel()), name
    assert table["pos_embed.W_pos"]["uniform"] == pytest.approx(0.723, abs=1e-3)  # (6/9)^0.8: position rows get the largest bound
    assert init_rule("embed.W_E", mc, InitConfig(gamma=0.8, embed_fan_in="rows")) == {"std": pytest.approx(150 ** -0.8), "d_in": 150}
    assert init_rule("pos_embed.W_pos", mc, InitConfig(gamma=0.8, embed_fan_in="rows"))["d_in"] == 9
    assert all(torch.all(params[n] == r["const"]) for n, r in table.items() if "const" in r)  # LayerNorms untouched


def test_no_parameter_left_uninitialised():
    mc = ModelConfig(d_model=32, d_head=16, d_mlp=64, d_vocab=120)
    model = build_model(mc)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))  # whatever init misses stays NaN
    from mechinit.model.init import gamma_init_

    table = gamma_init_(model, mc, InitConfig(gamma=0.8), torch.Generator().manual_seed(0))
    assert set(table) == {n for n, _ in model.named_parameters()}
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_unknown_parameter_name_raises():
    with pytest.raises(KeyError, match="no init rule"):
        init_rule("blocks.0.attn.W_X", ModelConfig(), InitConfig())


def test_init_depends_only_on_seed():
    mc = ModelConfig(d_model=32, d_head=16, d_mlp=64, d_vocab=120)
    a, _ = new_model(mc, InitConfig(), seed=3)
    b, _ = new_model(mc, InitConfig(), seed=3)
    c, _ = new_model(mc, InitConfig(), seed=4)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))
    assert not torch.equal(a.embed.W_E, c.embed.W_E)


def test_unembed_bias_is_trained_and_starts_like_a_torch_linear_bias():
    mc = ModelConfig(d_model=64, d_head=16, n_heads=4, d_mlp=256, d_vocab=2000, unembed_bias=True)
    model, table = new_model(mc, InitConfig(gamma=0.8), seed=0)
    assert table["unembed.b_U"] == {"uniform": 64 ** -0.5, "d_in": 64}
    b = model.unembed.b_U.detach()
    assert b.requires_grad is False and model.unembed.b_U.requires_grad
    assert b.abs().max() <= 64 ** -0.5 and b.abs().max() > 0.9 * 64 ** -0.5
    assert abs(b.std().item() / (64 ** -0.5 / 3 ** 0.5) - 1) < _tolerance(b.numel())  # uniform: bound / sqrt(3)
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert "blocks.0.attn.b_Q" in frozen and "blocks.1.mlp.b_out" in frozen and "unembed.b_U" not in frozen
    plain, _ = new_model(ModelConfig(d_model=64, d_head=16, n_heads=4, d_mlp=256), InitConfig(gamma=0.8), seed=0)
    assert not plain.unembed.b_U.requires_grad and torch.all(plain.unembed.b_U == 0)
