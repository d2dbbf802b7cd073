import json
import subprocess
import sys

import pytest

from mechinit import runs
from mechinit.cli import main


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "tiny", "--set", "train.lrr=1"], "unknown key 'train.lrr'"),
        (["--preset", "tiny", "--set", "model.n_layers=two"], "model.n_layers = 'two' must be an integer"),
        (["--preset", "tiny", "--set", "task.name=sudoku"], "task.name = 'sudoku' is not allowed; choose one of ['anchor', 'reasoning-memory'"),
        (["--preset", "huge"], "unknown preset 'huge'"),
        (["--preset", "tiny", "--set", "train.lr"], "must look like KEY=VALUE"),
        (["--preset", "tiny", "--device", "tpu"], "invalid choice: 'tpu'"),
        (["--preset", "tiny", "--set", "train.batch_size=99999"], "train.batch_size = 99999 is larger than task.n_train"),
    ],
)
def test_bad_input_gives_one_line_exit_2_and_writes_nothing(args, message, tmp_path, capsys):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        raise SystemExit(main(["train", *args, "--out", str(out), "--quiet"]))
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mechinit: error:") and message in err
    assert not out.exists()


def test_malformed_config_file(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[train\nlr = ")
    assert main(["train", "--config", str(bad), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is malformed" in err
    assert not (tmp_path / "run").exists()


def test_out_folder_holding_a_different_run_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--preset", "tiny", "--out", str(out), "--quiet"]) == 0
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    capsys.readouterr()
    assert main(["train", "--preset", "tiny", "--set", "init.gamma=0.3", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already holds files" in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before


def test_resume_refuses_config_flags_and_missing_state(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path), "--set", "train.lr=1"]) == 2
    assert "--resume continues a run" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path / "nothing")]) == 2
    assert "is not a run folder" in capsys.readouterr().err


def test_train_prints_summary_and_the_unseen_pair(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mechinit", "train", "--preset", "tiny", "--set", "train.epochs=1", "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"run folder: {out}"
    assert any(line.strip().startswith("seen_test_acc:") for line in lines)
    (held,) = [line.strip() for line in lines if line.strip().startswith("(4,3) unseen: inferential acc")]
    rec = runs.read_metrics(out)[-1]["pairs"]["4,3"]
    best = rec["max_over_training"]["test_keys"]
    assert held.endswith(f"(train-split keys: {rec['train_keys']['inferential']:.3f} / {rec['train_keys']['symmetric']:.3f}; "
                         f"max over training: {best['inferential']:.3f} / {best['symmetric']:.3f})")
    assert runs.read_metrics(out)[-1]["step"] == 16
    assert json.loads((out / "config.json").read_text())["train"]["epochs"] == 1


def test_default_out_is_a_new_folder_under_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--preset", "tiny", "--set", "train.epochs=1", "--quiet"]) == 0
    assert main(["train", "--preset", "tiny", "--set", "train.epochs=1", "--quiet"]) == 0
    made = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(made) == 2 and made[0].startswith("anchor-post-L2-d32-g0.80-s0-") and made[1] == made[0] + "-2"
