import json
import math
import warnings

import pytest
import torch
from mechinit.probes import information_flow, representation_tsne
from mechinit.probes.base import ProbeError

from mechinit import probes
from mechinit.config import InitConfig, ModelConfig
from mechinit.model.build import new_model
from mechinit.tasks import make_task
from mechinit.tasks.anchor import inferential_shift
from tests.conftest import build_cfg

CFG = build_cfg()


def _model(**kw):
    mc = ModelConfig(**{**CFG.model.to_dict(), **kw})
    model, _ = new_model(mc, InitConfig(gamma=0.5), seed=0)
    return model


@pytest.fixture
def task():
    return make_task(CFG)


@pytest.mark.parametrize("kw", [{"norm": "post"}, {"norm": "pre"}, {"n_heads": 2, "d_head": 8, "n_layers": 3}])
def test_every_declared_hook_exists_and_every_probe_runs(kw, task):
    model = _model(**kw)
    for name, module in probes.PROBES.items():
        declared = module.hooks(model, module.Config())
        assert all(h in model.hook_dict for h in declared), name
        result = probes.run(name, model, task)
        d = result.to_dict()
        json.dumps(d)  # plain JSON
        assert d["meta"]["weights"] == "unprocessed" and d["meta"]["hooks"] == declared
        assert result.figure().data  # a plotly figure with traces


def test_headline_names(task):
    model = _model()
    expected = {"information_flow": {"mechanism", "key_to_anchor_mass"}, "representation_tsne": {"symmetric_merge_score"},
                "cosine_maps": {"parallelism_gap"}, "condensation": {"n_groups_90", "largest_group"}, "embedding_spectrum": {"effective_rank"}}
    for name, keys in expected.items():
        assert keys <= set(probes.run(name, model, task).headline)


# ---------------------------------------------------------------- condensation
def test_identical_neurons_condense_into_one_group(task):
    model = _model()
    with torch.no_grad():
        v = torch.randn(model.cfg.d_model)
        model.blocks[0].attn.W_Q[0] = v[:, None].repeat(1, model.cfg.d_head) * torch.linspace(-2, 2, model.cfg.d_head)  # ±v: |cos| = 1
    h = probes.run("condensation", model, task).headline
    assert h == {"n_groups_90": 1, "largest_group": model.cfg.d_head, "mean_abs_cos": pytest.approx(1.0)}


def test_orthogonal_neurons_are_separate_groups(task):
    model = _model()
    d_head = model.cfg.d_head
    with torch.no_grad():
        model.blocks[0].attn.W_Q[0] = torch.eye(model.cfg.d_model)[:, :d_head] * 3.0
    r = probes.run("condensation", model, task)
    assert r.numbers["heads"]["0"]["n_groups"] == d_head
    assert r.headline["n_groups_90"] == math.ceil(0.9 * d_head) and r.headline["largest_group"] == 1
    assert r.headline["mean_abs_cos"] == pytest.approx(0.0)


def test_planted_groups_of_known_sizes(task):
    model = _model()
    d_model = model.cfg.d_model  # 32
    basis = torch.eye(d_model)
    sizes = [9, 5, 2]
    cols = [basis[:, g] * (1 + 0.01 * i) for g, size in enumerate(sizes) for i in range(size)]
    with torch.no_grad():
        model.blocks[0].attn.W_Q[0] = torch.stack(cols, 1)
    r = probes.run("condensation", model, task)
    assert [len(g) for g in r.numbers["heads"]["0"]["groups"]] == sizes
    assert r.headline["n_groups_90"] == 3  # 9+5 = 14/16 = 87.5% < 90%


def test_multi_head_headline_is_per_head_plus_the_mean_over_heads(task):
    model = _model(n_heads=4, d_head=8)  # d_model 32
    d_model, d_head = 32, 8
    basis = torch.eye(d_model)
    with torch.no_grad():
        W_Q = model.blocks[0].attn.W_Q  # [head_index d_model d_head]
        W_Q[0] = basis[:, :1].repeat(1, d_head) * torch.linspace(1, 2, d_head)  # one group of 8
        W_Q[1] = basis[:, :d_head] * 2.0  # 8 orthogonal neurons: 8 groups, 90% needs ceil(7.2) = 8
        W_Q[2] = torch.cat([basis[:, :1].repeat(1, 4), basis[:, 1:2].repeat(1, 4)], 1)  # two groups of 4
        W_Q[3] = 0.0  # no cosines: null with a reason, left out of the mean
    r = probes.run("condensation", model, task)
    h = r.headline
    assert [h[f"head{i}.n_groups_90"] for i in range(4)] == [1, 8, 2, None]
    assert [h[f"head{i}.largest_group"] for i in range(4)] == [8, 1, 4, None]
    assert h["head0.mean_abs_cos"] == pytest.approx(1.0) and h["head1.mean_abs_cos"] == pytest.approx(0.0)
    assert h["head2.mean_abs_cos"] == pytest.approx(3 / 7)  # each neuron: 3 of its 7 others at |cos| 1
    assert h["n_groups_90"] == pytest.approx((1 + 8 + 2) / 3) and h["largest_group"] == pytest.approx((8 + 1 + 4) / 3)
    assert h["mean_abs_cos"] == pytest.approx((1 + 0 + 3 / 7) / 3)
    assert r.numbers["heads"]["3"]["reason"].startswith("every W_Q neuron is the zero vector")
    assert r.meta["headline_summary"] == "mean over heads ['0', '1', '2'] (heads without numbers are left out)"
    assert r.figure().data


def test_condensation_norms_do_not_overflow_near_the_float32_limit(task):
    model = _model()
    with torch.no_grad():
        torch.manual_seed(0)
        W = torch.randn(model.cfg.d_model, model.cfg.d_head)
        model.blocks[0].attn.W_Q[0] = W
        small = probes.run("condensation", model, task).headline
        model.blocks[0].attn.W_Q[0] = W * 4e35  # squared norms ~1e72 overflow float32
        big = probes.run("condensation", model, task).headline
    assert small["mean_abs_cos"] > 0.05
    assert big == {k: pytest.approx(v, rel=1e-5) for k, v in small.items()}


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_condensation_of_non_finite_weights_is_null_with_a_reason(task, bad):
    model = _model()
    with torch.no_grad():
        model.blocks[0].attn.W_Q[0, 3, 2] = bad
    r = probes.run("condensation", model, task)
    assert r.headline == {"n_groups_90": None, "largest_group": None, "mean_abs_cos": None}
    assert "NaN or inf" in r.numbers["heads"]["0"]["reason"]
    assert r.figure().data


# ---------------------------------------------------------------- embedding spectrum
def _rank2_embedding(model, scale=1.0):
    angles = torch.arange(80) * 2 * math.pi / 80
    u, v = torch.eye(model.cfg.d_model)[0], torch.eye(model.cfg.d_model)[1]
    W_E = torch.zeros_like(model.embed.W_E)
    W_E[20:100] = scale * (torch.cos(angles)[:, None] * u + torch.sin(angles)[:, None] * v)
    return W_E


def test_rank_two_embedding_has_two_eigenvalues_and_effective_rank_two(task):
    model = _model()
    with torch.no_grad():
        model.embed.W_E.copy_(_rank2_embedding(model))
        model.embed.W_E[:20] = 100.0  # rows outside 20-99 must be ignored
    r = probes.run("embedding_spectrum", model, task)
    eig = r.numbers["eigenvalues"]
    assert eig[0] == pytest.approx(eig[1]) and eig[0] > 0.1 and max(eig[2:]) < 1e-10
    assert r.headline["effective_rank"] == pytest.approx(2.0, abs=1e-6)
    assert r.headline["top_k_energy"] == pytest.approx(1.0)
    assert r.headline["half_growth_step"] is None  # no snapshots given


def test_eigenvalue_evolution_over_snapshots(task):
    model = _model()
    scales = {0: 0.01, 10: 0.05, 100: 0.8, 1000: 1.0}  # λ ∝ scale²: half of final first reached at step 100
    snaps = {s: (lambda s=s: {"embed.W_E": _rank2_embedding(model, scales[s])}) for s in scales}
    with torch.no_grad():
        model.embed.W_E.copy_(_rank2_embedding(model))
    r = probes.run("embedding_spectrum", model, task, snapshots=snaps, top_k=2)
    assert r.numbers["evolution"]["steps"] == [0, 10, 100, 1000]
    assert r.headline["half_growth_step"] == [100, 100]
    with pytest.raises(ProbeError, match="needs the run's step snapshots"):
        probes.run("embedding_spectrum", model, task, evolution="on")
    assert r.numbers["evolution"]["note"] is None


def test_half_growth_is_unknown_when_the_snapshots_begin_after_step_0_already_past_half(task):
    """A run resumed in another checkout keeps only its later snapshots: the first one's step is an
    upper bound, not the half-growth step, so it is null; a later crossing is still known."""
    model = _model()
    with torch.no_grad():
        model.embed.W_E.copy_(_rank2_embedding(model))
    later = {100: 0.8, 1000: 1.0}  # past half at the first snapshot
    snaps = {s: (lambda s=s: {"embed.W_E": _rank2_embedding(model, later[s])}) for s in later}
    r = probes.run("embedding_spectrum", model, task, snapshots=snaps, top_k=2)
    assert r.headline["half_growth_step"] == [None, None]
    assert "begin at step 100" in r.numbers["evolution"]["note"]
    crossing = {100: 0.3, 500: 0.9, 1000: 1.0}  # below half (0.09 of final λ) at the first snapshot
    snaps = {s: (lambda s=s: {"embed.W_E": _rank2_embedding(model, crossing[s])}) for s in crossing}
    assert probes.run("embedding_spectrum", model, task, snapshots=snaps, top_k=2).headline["half_growth_step"] == [500, 500]


# ---------------------------------------------------------------- information flow
def _plant_attention(model, layer, build):
    """Replace layer ``layer``'s attention pattern by ``build(tokens) -> [batch q k]``."""
    seen = {}
    model.register_forward_pre_hook(lambda mod, args: seen.__setitem__("tokens", args[0]))
    model.add_hook(f"blocks.{layer}.attn.hook_pattern",
                   lambda pattern, hook: build(seen["tokens"])[:, None].expand_as(pattern).clone(), is_permanent=True)


def _pattern(tokens, to_key, to_anchors):
    b, n = tokens.shape
    pos = ((tokens >= 1) & (tokens <= 4)).int().argmax(1) - 1
    A = torch.zeros(b, n, n)
    for i in range(b):
        p = int(pos[i])
        for q in range(n):
            A[i, q, q] = 1.0
        for q in (p + 1, p + 2):
            A[i, q] = 0
            A[i, q, p], A[i, q, q] = to_key, 1 - to_key
        A[i, -1] = 0
        A[i, -1, p + 1] = A[i, -1, p + 2] = to_anchors / 2
        A[i, -1, -1] = 1 - to_anchors
    return A


@pytest.mark.parametrize("to_key, to_anchors, expected", [(0.8, 0.2, "inferential-flow"), (0.1, 0.9, "symmetric-flow"), (0.2, 0.2, "unclear")])
def test_hand_fixed_attention_gives_its_masses_and_label(task, to_key, to_anchors, expected):
    model = _model()
    _plant_attention(model, 0, lambda t: _pattern(t, to_key, to_anchors))
    h = probes.run("information_flow", model, task, n_inputs=64).headline
    assert h["mechanism"] == expected
    assert h["key_to_anchor_mass"] == pytest.approx(to_key, abs=1e-6)
    assert h["anchors_to_last_mass"] == pytest.approx(to_anchors, abs=1e-6)
    assert h["key_to_last_mass"] == pytest.approx(0.0, abs=1e-6)


# ---------------------------------------------------------------- fused vectors
def _plant_fused(model, task, layer, target_of, offset: float = 0.0):
    """Make the last-token X^ao of ``layer`` a one-hot of ``target_of(key, a1, a2)``, plus ``offset`` on
    every coordinate (a direction shared by every fused vector)."""
    seen = {}
    model.register_forward_pre_hook(lambda mod, args: seen.__setitem__("tokens", args[0]))

    def hook(x, hook):
        t = seen["tokens"]
        pos = ((t >= 1) & (t <= 4)).int().argmax(1) - 1
        rows = torch.arange(len(t))
        target = torch.tensor([target_of(int(k), (int(a), int(b))) for k, a, b in zip(t[rows, pos], t[rows, pos + 1], t[rows, pos + 2])])
        x = x.clone()
        x[:, -1] = torch.nn.functional.one_hot(target % x.shape[-1], x.shape[-1]).float() + offset
        return x

    model.add_hook(f"blocks.{layer}.hook_resid_mid", hook, is_permanent=True)


def test_inferential_fused_vectors_are_parallel_on_the_papers_seen_pair_panels(task):
    model = _model(d_model=128, d_head=32)
    _plant_fused(model, task, 1, lambda k, p: k + (inferential_shift(p) if p == (4, 3) else task.designated[p]))
    h = probes.run("cosine_maps", model, task).headline
    assert h["parallelism_gap"] > 0.95 and h["same_target_cos"] == pytest.approx(1.0) and h["other_cos"] == pytest.approx(0.0)
    assert h["heldout_parallelism_gap"] == pytest.approx(1.0) and h["mirror_gap"] == pytest.approx(1.0)


def test_a_direction_shared_by_every_fused_vector_hides_nothing_from_the_centred_gap(task):
    """Small init puts every fused vector along one direction: raw cosines are all near 1, and only the
    centred contrast still sees that same-target vectors are parallel."""
    model = _model(d_model=128, d_head=32)
    _plant_fused(model, task, 1, lambda k, p: k + (inferential_shift(p) if p == (4, 3) else task.designated[p]), offset=1.0)
    h = probes.run("cosine_maps", model, task).headline
    assert h["other_cos"] > 0.99 and h["raw_parallelism_gap"] < 0.01
    assert h["parallelism_gap"] > 0.95


def test_fused_vectors_that_memorise_each_sequence_have_no_gap(task):
    model = _model(d_model=128, d_head=32)
    _plant_fused(model, task, 1, lambda k, p: 7 * k + 13 * (4 * p[0] + p[1]), offset=1.0)  # one direction per (key, pair), not per target
    h = probes.run("cosine_maps", model, task).headline
    assert abs(h["parallelism_gap"]) < 0.05


def test_symmetric_fused_vectors_have_no_gap_with_the_mirror(task):
    model = _model(d_model=128, d_head=32)
    _plant_fused(model, task, 1, lambda k, p: k + task.designated[(3, 4) if p == (4, 3) else p])
    h = probes.run("cosine_maps", model, task).headline
    assert h["mirror_gap"] == pytest.approx(-1 / 10, abs=0.02)  # parallel on the same-key diagonal, not the same-target one
    assert h["heldout_parallelism_gap"] < 0.1


# ---------------------------------------------------------------- representation merging
def test_merge_ratio_of_identical_mirror_centres_is_zero():
    centres = {(a, b): torch.tensor([float(a), float(b), 0.0]) for a in range(1, 5) for b in range(1, 5)}
    centres[(4, 3)] = centres[(3, 4)].clone()
    ratios = representation_tsne.merge_ratios(centres)
    assert ratios["4,3"] == 0.0 and ratios["3,4"] == 0.0
    assert ratios["1,2"] > 0.3 and "1,1" not in ratios


def test_planted_merged_representation_scores_low(task):
    model = _model()
    seen = {}
    model.register_forward_pre_hook(lambda mod, args: seen.__setitem__("tokens", args[0]))

    def hook(x, hook):  # last-token X^ao(1) = an embedding of the unordered pair
        t = seen["tokens"]
        pos = ((t >= 1) & (t <= 4)).int().argmax(1) - 1
        rows = torch.arange(len(t))
        a, b = t[rows, pos + 1], t[rows, pos + 2]
        x = x.clone()
        x[:, -1] = 0
        x[rows, -1, torch.minimum(a, b)] += 1
        x[rows, -1, 4 + torch.maximum(a, b)] += 1
        return x

    model.add_hook("blocks.0.hook_resid_mid", hook, is_permanent=True)
    h = probes.run("representation_tsne", model, task, n_inputs=320, n_tsne=80).headline
    assert h["symmetric_merge_score"] == pytest.approx(0.0, abs=1e-6)


# ---------------------------------------------------------------- errors and other model classes
def test_bad_overrides_and_layers(task):
    model = _model()
    with pytest.raises(ProbeError, match="unknown probe 'nope'"):
        probes.run("nope", model, task)
    with pytest.raises(Exception, match="unknown key condensation.thresh"):
        probes.run("condensation", model, task, thresh=0.5)
    with pytest.raises(ProbeError, match="outside the model's 2 blocks"):
        probes.run("condensation", model, task, layer=5)


def test_probes_run_on_a_transformer_bridge(task):
    from transformer_lens.model_bridge import TransformerBridge

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bridge = TransformerBridge.boot_native({"n_layers": 2, "d_model": 32, "d_head": 16, "n_heads": 1, "d_mlp": 64, "d_vocab": 120,
                                                "n_ctx": 9, "act_fn": "relu", "normalization_type": "LN"})
    with torch.no_grad():
        bridge.blocks[0].attn.W_Q.copy_(torch.randn(1, 32, 1).repeat(1, 1, 16))
    assert probes.run("condensation", bridge, task).headline["n_groups_90"] == 1
    flow = probes.run("information_flow", bridge, task, n_inputs=32)
    assert flow.headline["mechanism"] in ("inferential-flow", "symmetric-flow", "unclear")
    assert all(h in bridge.hook_dict for h in information_flow.hooks(bridge, information_flow.Config()))


@pytest.mark.parametrize("override, message", [
    ("condensation.threshold=2", "condensation.threshold = 2.0: must be in [0, 1]"),
    ("condensation.threshold=nan", "condensation.threshold = 'nan' must be a finite number"),
    ("condensation.coverage=1.5", "condensation.coverage = 1.5: must be in (0, 1]"),
    ("condensation.heads=", "condensation.heads is empty"),
    ("condensation.heads=5", "condensation.heads = [5]: the model has 1 heads"),
    ("representation_tsne.n_tsne=1", "representation_tsne.n_tsne = 1: must be in 2..n_inputs"),
    ("representation_tsne.focus=9,9", "must be two anchors from 1..4"),
    ("information_flow.pair=9,9", "information_flow.pair = (9, 9): must be two anchors"),
    ("cosine_maps.key_max=500", "cosine_maps.key_max = 500"),
    ("embedding_spectrum.evolution=bogus", "embedding_spectrum.evolution = 'bogus': choose one of"),
    ("key_position.split=dev", "key_position.split = 'dev': choose one of ['test', 'train']"),
    ("key_position.pairs=4,3,3", "key_position.pairs = (4, 3, 3): anchor pairs, flattened"),
    ("key_position.n_inputs=1", "key_position.n_inputs = 1: must be at least 2"),
    ("deviation.pairs=4", "deviation.pairs = (4,): anchor pairs, flattened"),
])
def test_probe_overrides_out_of_range_are_one_line_errors(override, message, capsys):
    from mechinit.cli import main

    probe = override.split(".")[0]
    assert main(["probe", "small-init", "--probe", probe, "--set", override, "--quiet", "--out", "/nonexistent/never"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("damage", ["zero", "nan"])
def test_probes_never_crash_on_degenerate_weights(damage, tmp_path):
    """All-zero embeddings (γ = 30) made scikit-learn's t-SNE segfault; NaN weights raised. Now every
    probe runs and says why a number is missing (a subprocess, so a segfault would show as a code)."""
    import subprocess
    import sys

    from safetensors.torch import load_file, save_file

    from mechinit.training.trainer import train
    from tests.conftest import build_cfg

    run = tmp_path / "run"
    train(build_cfg(**{"train.epochs": 1, "init.gamma": 30.0 if damage == "zero" else 0.5}), run, quiet=True)
    if damage == "nan":
        weights = load_file(str(run / "model.safetensors"))
        weights["embed.W_E"][20:30] = float("nan")  # item tokens: every probe sees them
        save_file(weights, str(run / "model.safetensors"))
    out = tmp_path / "probes"
    done = subprocess.run([sys.executable, "-m", "mechinit", "probe", str(run), "--out", str(out), "--quiet",
                           "--set", "representation_tsne.n_inputs=64", "--set", "representation_tsne.n_tsne=32"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())["run"]
    assert results["representation_tsne"]["numbers"]["tsne"] is None
    assert results["representation_tsne"]["numbers"]["tsne_note"] in ("constant input: every point is the same", "non-finite values in the input")
    assert results["embedding_spectrum"]["numbers"]["tsne"] is None


def test_every_probe_has_one_shape_built_in_or_registered(monkeypatch):
    from mechinit.probes import Probe

    monkeypatch.setattr(probes, "PROBES", dict(probes.PROBES))
    probes.register("mine", lambda model, task, cfg, snapshots=None: None, probes.get("condensation").Config)
    assert all(type(p) is Probe for p in probes.PROBES.values())
    assert probes.get("cosine_maps").module == "mechinit.probes.cosine_maps" and probes.get("mine").hooks(None, None) == []
