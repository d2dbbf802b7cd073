"""No traceback, nothing lost: signals, file-system errors, restarting a folder without a resume point."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from safetensors.torch import load_file

from mechinit import runs
from mechinit.cli import main
from mechinit.training.trainer import train
from tests.conftest import build_cfg

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "mechinit", *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def test_sigint_and_sigterm_save_a_resume_point_and_name_the_resume_command(tmp_path):
    cfg = build_cfg(**{"train.epochs": 40, "train.threads": 1, "train.eval_every": 1000})  # 640 steps
    config_file = tmp_path / "cfg.json"
    config_file.write_text(json.dumps(cfg.to_dict()))
    for sig in (signal.SIGINT, signal.SIGTERM):
        out = tmp_path / sig.name
        proc = _cli("train", "--config", str(config_file), "--out", str(out), "--quiet")
        deadline = time.time() + 120
        while time.time() < deadline and not list(out.glob("metrics.jsonl")):
            time.sleep(0.05)
        time.sleep(1.0)  # training, between evaluations
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert f"{sig.name} at step" in err and f"mechinit train --resume {out}" in err
        step = runs.read_json(out / "resume" / "state.json")["step"]
        assert 0 < step < 640 and not (out / "model.safetensors").exists()
    # the interrupted run finishes bit-identical to one never stopped
    assert main(["train", "--resume", str(tmp_path / "SIGINT"), "--quiet"]) == 0
    train(cfg, tmp_path / "whole", quiet=True)
    a, b = load_file(str(tmp_path / "whole" / "model.safetensors")), load_file(str(tmp_path / "SIGINT" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_folder_killed_before_its_first_resume_point_restarts_with_resume(tmp_path, capsys):
    cfg = build_cfg()
    out = tmp_path / "run"
    train(cfg, out, quiet=True)
    reference = load_file(str(out / "model.safetensors"))
    # what a kill before the first resume point leaves: config, step-0 snapshot, first metrics row
    for name in ("model.safetensors", "README.md"):
        (out / name).unlink()
    import shutil

    shutil.rmtree(out / "resume")
    assert main(["train", "--resume", str(out), "--quiet"]) == 0
    after = load_file(str(out / "model.safetensors"))
    assert all(torch.equal(reference[k], after[k]) for k in reference)
    assert [r["step"] for r in runs.read_metrics(out)].count(0) == 1
    capsys.readouterr()
    assert main(["train", "--resume", str(out), "--quiet"]) == 2
    assert "finished run; there is nothing to resume" in capsys.readouterr().err


def test_file_system_errors_are_one_line(tmp_path, capsys):
    a_file = tmp_path / "README.md"
    a_file.write_text("not a folder")
    assert main(["train", "--preset", "tiny", "--out", str(a_file), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is a file, not a folder" in err
    assert main(["train", "--preset", "tiny", "--out", str(a_file / "sub"), "--quiet"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["train", "--preset", "tiny", "--out", str(locked / "run"), "--quiet"]) == 2
        assert "not writable" in capsys.readouterr().err


def test_training_leaves_torch_global_settings_as_it_found_them(tmp_path):
    threads, det = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    train(build_cfg(**{"train.threads": 1}), tmp_path / "run", quiet=True)
    assert torch.get_num_threads() == threads and torch.are_deterministic_algorithms_enabled() == det


def test_probe_and_sweep_refuse_a_file_as_out_in_one_line(tmp_path, capsys):
    a_file = tmp_path / "README.md"
    a_file.write_text("x")
    for argv in (["probe", "small-init", "--probe", "condensation", "--out", str(a_file), "--quiet"],
                 ["sweep", "--preset", "tiny", "--set", "sweep.init.gamma=0.5", "--out", str(a_file), "--quiet"],
                 ["zoo", "publish", str(tmp_path), "--zoo", str(a_file)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert a_file.read_text() == "x"


def test_two_targets_with_one_folder_name_are_both_reported(tmp_path, capsys):
    for parent in ("x", "y"):
        train(build_cfg(**{"train.epochs": 1, "init.gamma": 0.5 if parent == "x" else 0.9}), tmp_path / parent / "run", quiet=True)
    out = tmp_path / "report"
    a, b = str(tmp_path / "x" / "run"), str(tmp_path / "y" / "run")
    assert main(["probe", a, b, "--probe", "condensation", "--out", str(out), "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert list(results) == [a, b]
    assert main(["probe", a, a, "--probe", "condensation", "--out", str(out), "--quiet"]) == 2
    assert "the same target twice" in capsys.readouterr().err


def test_a_restart_never_clears_a_folder_under_a_live_trainer(tmp_path):
    import fcntl

    from mechinit.errors import RunFolderError

    out = tmp_path / "run"
    train(build_cfg(), out, quiet=True)
    for name in ("model.safetensors", "README.md", "resume/state.safetensors", "resume/state.json"):
        (out / name).unlink()
    with open(out / "resume" / "lock", "w") as handle:  # another process is (re)starting it
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(RunFolderError, match="being trained by another process"):
            train(None, out, resume=True, quiet=True)
    assert (out / "config.json").is_file()  # untouched
    train(None, out, resume=True, quiet=True)  # lock free: the restart runs
    assert (out / "model.safetensors").is_file()
