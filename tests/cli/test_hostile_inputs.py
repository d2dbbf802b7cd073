"""Issue 13, item 7 and 8: every bad input is one line, exit 2, nothing written, no traceback —
checked before any folder is created. Sizes are bounded by a memory estimate of this machine."""

import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from mechinit.cli import main
from mechinit.config import ConfigError
from mechinit.presets import PRESETS, preset
from mechinit.training.budget import check_fits, estimate, parameter_count

ROOT = Path(__file__).resolve().parents[2]
HUGE = [(["--set", size], "this run needs about") for size in (  # far beyond any machine this runs on (each >= 1 TB)
    "model.n_layers=10000000", "model.n_ctx=100000", "model.d_model=1e8", "model.d_mlp=1e10", "model.d_vocab=1e10",
    "model.n_heads=1e8", "task.n_train=1e11")]
BAD = [
    (["--set", "train.seed=9223372036854775808"], "train.seed = 9223372036854775808 must be in 0..4294967295"),
    (["--set", "train.seed=4294967296"], "train.seed = 4294967296 must be in 0..4294967295"),
    (["--set", "task.eval_seed=-1"], "task.eval_seed = -1 must be in 0..4294967295"),
    (["--set", "train.beta2=2"], "train.beta2 = 2.0 must be in [0, 1)"),
    (["--set", "train.beta1=nan"], "train.beta1 = 'nan' must be a finite number"),
    (["--set", "train.threads=100000"], "train.threads = 100000 is more than the"),
    (["--set", "task.split=length"], "task.split belongs to task 'scan', not 'anchor'"),
    (["--set", "task.data_dir=/tmp"], "task.data_dir belongs to task 'scan', not 'anchor'"),
    (["--set", "task.chain_length=5"], "task.chain_length belongs to task 'prontoqa', not 'anchor'"),
]


@pytest.mark.parametrize("args, message", HUGE + BAD)
def test_bad_values_and_sizes_are_one_line_before_any_folder(args, message, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--preset", "tiny", *args, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mechinit: error:") and message in err, err
    assert not out.exists()


def test_sweeps_check_every_grid_point_against_the_budget(tmp_path, capsys):
    argv = ["sweep", "--preset", "tiny", "--set", "sweep.model.n_layers=1,10000000", "--out", str(tmp_path / "s"), "--quiet"]
    assert main(argv) == 2
    assert "this run needs about" in capsys.readouterr().err and not (tmp_path / "s").exists()


def test_the_estimate_counts_parameters_exactly_for_biased_models_and_bounds_the_rest():
    from mechinit.model.build import build_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("tiny", "cpu-small-init", "gpt2-cpu", "prontoqa", "emb-mlp"):
            cfg = preset(name)
            built = sum(p.numel() for p in build_model(cfg.model, "cpu").parameters())
            if cfg.model.bias or cfg.model.arch == "emb-mlp":
                assert parameter_count(cfg) == built, name
            else:
                assert built <= parameter_count(cfg) <= built * 1.01, name
    tiny = preset("tiny")
    need = sum(estimate(tiny).values())
    check_fits(tiny, available=int(need / 0.9) + 1, cpus=2)
    with pytest.raises(ConfigError, match=r"this run needs about .* GB of memory \(parameters .*, activations .*, data .*\) and this machine has"):
        check_fits(tiny, available=int(need / 0.9) - 1, cpus=2)
    with pytest.raises(ConfigError, match="and this machine has"):  # an ensemble of K needs K times as much
        check_fits(tiny, members=3, available=int(2 * need / 0.9), cpus=2)
    assert all(sum(estimate(preset(p)).values()) < 2e9 for p in PRESETS)  # every preset fits a small machine


def test_malformed_grid_and_binary_config_files(tmp_path, capsys):
    grid, binary = tmp_path / "grid.json", tmp_path / "bin.json"
    grid.write_text("{nope")
    binary.write_bytes(bytes(range(256)))
    cases = [(["sweep", "--preset", "tiny", "--grid", str(grid), "--out", str(tmp_path / "s")], "is not valid JSON"),
             (["sweep", "--preset", "tiny", "--grid", str(tmp_path / "missing.json"), "--out", str(tmp_path / "s")], "No such file"),
             (["train", "--preset", "tiny", "--config", str(binary), "--out", str(tmp_path / "r")], "is not UTF-8 text")]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin.json", "grid.json"]


def test_a_file_as_zoo_is_refused_by_every_command_before_work(tmp_path, capsys):
    a_file = tmp_path / "zoo-file"
    a_file.write_text("x")
    for argv in (["train", "--preset", "tiny", "--publish", "--zoo", str(a_file), "--out", str(tmp_path / "r"), "--quiet"],
                 ["zoo", "list", "--zoo", str(a_file)], ["zoo", "show", "cpu-small-init", "--zoo", str(a_file)],
                 ["zoo", "verify", "--zoo", str(a_file)], ["zoo", "publish", str(tmp_path), "--zoo", str(a_file)],
                 ["probe", "cpu-small-init", "--zoo", str(a_file), "--out", str(tmp_path / "p"), "--quiet"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and f"--zoo {a_file} is a file, not a folder" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["zoo-file"] and a_file.read_text() == "x"


def test_garbage_and_wrong_shape_weights_as_a_probe_target(tmp_path):
    zoo_entry = ROOT / "zoo" / "entries" / "anchor-post-L2-d128-g1.00-s0-35fc01"
    garbage, wrong = tmp_path / "garbage", tmp_path / "wrong"
    for folder in (garbage, wrong):
        folder.mkdir()
        (folder / "config.json").write_bytes((zoo_entry / "config.json").read_bytes())
    (garbage / "model.safetensors").write_bytes(b"\x00not safetensors" * 20)
    tensors = load_file(str(zoo_entry / "model.safetensors"))
    tensors["embed.W_E"] = torch.zeros(3, 3)
    save_file(tensors, str(wrong / "model.safetensors"))
    for folder, message in ((garbage, "is not a readable safetensors file"), (wrong, "holds weights of another shape: embed.W_E (3, 3)")):
        done = subprocess.run([sys.executable, "-m", "mechinit", "probe", str(folder), "--out", str(tmp_path / "p"), "--quiet"],
                              capture_output=True, text=True)
        assert done.returncode == 2 and "Traceback" not in done.stderr and message in done.stderr, done.stderr
    assert not (tmp_path / "p").exists()
