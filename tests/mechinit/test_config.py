import json

import pytest

from mechinit.config import ConfigError, ModelConfig, RunConfig, TrainConfig
from mechinit.presets import PRESETS, preset
from mechinit.resolve import parse_sets, resolve_config


def test_round_trip_through_json_is_lossless():
    cfg = RunConfig().with_overrides({"train.snapshot_steps": "0,5,9", "train.steps": "9", "model.norm": "pre"})
    again = RunConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg
    assert again.train.snapshot_steps == (0, 5, 9)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_builds_and_round_trips(name):
    cfg = preset(name)
    assert RunConfig.from_dict(cfg.to_dict()) == cfg


def test_overrides_are_coerced_by_field_type():
    cfg = RunConfig().with_overrides({"train.lr": "3e-4", "model.n_layers": "3", "model.bias": "true", "train.steps": "null"})
    assert cfg.train.lr == 3e-4 and isinstance(cfg.train.lr, float)
    assert cfg.model.n_layers == 3 and isinstance(cfg.model.n_layers, int)
    assert cfg.model.bias is True and cfg.train.steps is None


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"model.norm": "sandwich"}, "model.norm = 'sandwich' is not allowed; choose one of ['pre', 'post']"),
        ({"model.n_layers": "two"}, "model.n_layers = 'two' must be an integer"),
        ({"model.n_layers": "2.5"}, "model.n_layers = '2.5' must be an integer"),
        ({"train.lr": "-1"}, "train.lr = -1.0 must be > 0"),
        ({"model.bias": "maybe"}, "model.bias = 'maybe' must be a boolean"),
        ({"task.name": "nope"}, "task.name = 'nope' is not allowed; choose one of ['anchor', "),
        ({"train.lrr": "1"}, "unknown key 'train.lrr'"),
        ({"optim.lr": "1"}, "unknown key 'optim.lr'"),
        ({"init.embed_fan_in": "vocab"}, "init.embed_fan_in = 'vocab' is not allowed; choose one of ['d_model', 'd_vocab', 'rows']"),
        ({"init.distribution": "uniform"}, "init.distribution = 'uniform' is not allowed; choose one of ['normal', 'uniform-6']"),
        ({"train.tf32": "true"}, "train.tf32 = true needs train.device = 'cuda'"),  # the default device is cpu
    ],
)
def test_validation_names_the_field_and_allowed_values(overrides, message):
    with pytest.raises(ConfigError) as e:
        RunConfig().with_overrides(overrides)
    assert message in str(e.value)


def test_from_dict_rejects_unknown_sections_and_keys():
    with pytest.raises(ConfigError, match="unknown config section 'optim'"):
        RunConfig.from_dict({"optim": {}})
    with pytest.raises(ConfigError, match=r"unknown key model\.width"):
        ModelConfig.from_dict({"width": 3})


def test_lr_floor_above_peak_is_rejected():
    with pytest.raises(ConfigError, match="train.lr_floor"):
        TrainConfig(lr=1e-4, lr_floor=1e-3)


def test_precedence_preset_then_file_then_set(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('[train]\nlr = 0.002\nepochs = 7\n[model]\nn_layers = 3\n')
    cfg = resolve_config("tiny", f, ["train.lr=5e-4"])
    assert cfg.model.d_model == 32  # from the preset
    assert cfg.model.n_layers == 3 and cfg.train.epochs == 7  # from the file
    assert cfg.train.lr == 5e-4  # --set wins


def test_malformed_config_file_and_set_syntax(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="malformed"):
        resolve_config(None, bad, [])
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_sets(["train.lr"])
    with pytest.raises(ConfigError, match="unknown preset 'huge'"):
        resolve_config("huge", None, [])


def test_reference_presets_differ_only_in_gamma():
    small, large = preset("cpu-small-init").to_dict(), preset("cpu-large-init").to_dict()
    assert small["init"]["gamma"] > large["init"]["gamma"]
    small["init"].pop("gamma"), large["init"].pop("gamma")
    assert small == large
    assert preset("cpu-small-init").train.threads == 1  # bit-identical on any CPU


def test_paper_preset_follows_appendix_a():
    cfg = preset("paper")
    assert (cfg.model.d_model, cfg.model.d_mlp, cfg.model.d_head, cfg.model.n_heads) == (400, 1200, 200, 1)
    assert cfg.task.n_train == 900_000 and cfg.train.batch_size == 2048 and cfg.train.epochs == 210
    assert cfg.train.lr / cfg.train.lr_multiplier == pytest.approx(1e-5) and cfg.train.lr_floor == 1e-5
    assert (cfg.train.warmup_epochs, cfg.train.decay_epochs, cfg.train.weight_decay, cfg.train.grad_clip) == (10, 200, 0.01, 1.0)


def test_paper_code_preset_is_the_authors_code():
    from mechinit.training.schedule import lr_at, make_plan

    cfg = preset("paper-code")
    assert cfg.model.unembed_bias and not cfg.model.bias and cfg.task.options.split_modulus == 9 and cfg.task.n_train == 759_375
    plan = make_plan(cfg.train, cfg.task.n_train)
    assert (plan.steps_per_epoch, plan.warmup_steps, plan.decay_steps, plan.total_steps) == (370, 3_700, 74_000, 77_700)
    assert lr_at(0, cfg.train, plan) == pytest.approx(1e-5) and lr_at(3_700, cfg.train, plan) == pytest.approx(2e-4)
    assert lr_at(77_700, cfg.train, plan) == pytest.approx(1e-5)
    # stopping early with train.steps keeps the schedule (its epochs are explicit)
    short = cfg.with_overrides({"train.steps": 8_880})
    short_plan = make_plan(short.train, short.task.n_train)
    assert all(lr_at(s, short.train, short_plan) == lr_at(s, cfg.train, plan) for s in (0, 1_000, 3_700, 6_660, 8_880))


def test_later_fields_enter_the_id_only_when_set():
    from mechinit.runs.ids import run_id
    from tests.conftest import build_cfg

    base = build_cfg()
    assert "data_dir" not in base.canonical_json() and "arch" not in base.canonical_json()
    assert run_id(build_cfg(**{"task.chain_length": 3})) == run_id(base)  # another task's field at its default: ignored
    with pytest.raises(ConfigError, match="task.chain_length belongs to task 'prontoqa', not 'anchor'"):
        build_cfg(**{"task.chain_length": 5})
    pronto = build_cfg(**{"task.name": "prontoqa"})
    assert run_id(build_cfg(**{"task.name": "prontoqa", "task.chain_length": 3})) == run_id(pronto)
    assert run_id(build_cfg(**{"task.name": "prontoqa", "task.chain_length": 5})) != run_id(pronto)
    assert run_id(build_cfg(**{"model.arch": "emb-mlp"})) != run_id(base)
    assert run_id(build_cfg(**{"train.resume_every": 5})) == run_id(base)  # never changes results
    assert run_id(build_cfg(**{"model.unembed_bias": True})) != run_id(base)
    assert run_id(build_cfg(**{"task.split_modulus": 9})) != run_id(base)
    assert "tf32" not in base.canonical_json() and "distribution" not in base.canonical_json()
    assert run_id(build_cfg(**{"init.distribution": "uniform-6"})) != run_id(base)
    assert run_id(build_cfg(**{"train.device": "cuda", "train.tf32": True})) != run_id(build_cfg(**{"train.device": "cuda"}))


def test_every_preset_has_a_one_line_description_in_train_help(capsys):
    from mechinit.cli import main
    from mechinit.presets import DESCRIPTIONS, PRESETS

    assert set(DESCRIPTIONS) == set(PRESETS)
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert all(f"  {name} " in text for name in PRESETS)


@pytest.mark.parametrize("key, value", [("init.gamma", "inf"), ("train.lr", "inf"), ("train.weight_decay", "nan"), ("train.eps", "inf"),
                                        ("train.grad_clip", "inf"), ("train.lr_multiplier", "inf"), ("train.beta1", "nan"),
                                        ("train.epochs", "1e400"), ("train.seed", "1e400"), ("train.warmup_epochs", "inf"),
                                        ("train.decay_epochs", "inf")])
def test_non_finite_values_are_refused_naming_the_field(key, value):
    with pytest.raises(ConfigError, match=f"{key} = '{value}' must be a finite number"):
        preset("tiny").with_overrides({key: value})
    section, name = key.split(".")
    with pytest.raises(ConfigError, match="must be a finite number"):  # also when a dataclass is built directly
        RunConfig.SECTIONS[section](**{name: float(value)})
