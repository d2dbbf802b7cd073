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
from mechinit.config import ConfigError
from mechinit.training.trainer import TrainingDiverged, train
from tests.conftest import build_cfg, stop_after_resume_point


def _weights(run_dir, name="model.safetensors"):
    return load_file(str(run_dir / name))


def test_run_folder_is_complete(tmp_path):
    cfg = build_cfg()
    row = train(cfg, tmp_path / "run", quiet=True)
    run = tmp_path / "run"
    saved = json.loads((run / "config.json").read_text())
    assert runs.load_run_config(run) == cfg
    model_params = set(_weights(run))
    assert set(saved["init_table"]) == model_params
    assert saved["init_table"]["blocks.0.attn.W_Q"] == {"std": 32 ** -0.8, "d_in": 32}
    assert saved["provenance"]["torch"] == torch.__version__
    assert saved["provenance"]["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert saved["provenance"]["threads"] == torch.get_num_threads()
    assert runs.snapshot_steps_on_disk(run) == [0, 2, 6, 13, 32]  # log-spaced, init and final included
    assert set(_weights(run, "checkpoints/step0.safetensors")) == model_params
    for name, tensor in _weights(run).items():
        assert torch.equal(tensor, _weights(run, "checkpoints/step32.safetensors")[name])
    metrics = runs.read_metrics(run)
    assert [m["step"] for m in metrics] == [0, 16, 32]
    assert metrics[0]["train_loss"] is None and metrics[-1]["train_loss"] > 0
    assert metrics[-1]["samples_per_s"] > 0 and set(metrics[-1]["pairs"]) == {f"{a},{b}" for a in range(1, 5) for b in range(1, 5)}
    assert row == metrics[-1]
    card = (run / "README.md").read_text()
    assert card.startswith("---\nlibrary_name: mechinit") and "| (4,3) |" in card
    (line,) = [ln for ln in card.splitlines() if ln.startswith("| (4,3) |")]
    held = row["pairs"]["4,3"]
    best = max(m["pairs"]["4,3"]["inferential"] for m in metrics)  # the card's max over training is over every evaluation
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == held["label"] and len(cells) == 8
    assert float(cells[4]) == pytest.approx(held["train_keys"]["inferential"], abs=5e-4)
    assert float(cells[6]) == pytest.approx(best, abs=5e-4) and "max over training" in card


def test_same_config_and_seed_give_identical_weights(tmp_path):
    cfg = build_cfg(**{"train.threads": 2})
    train(cfg, tmp_path / "a", quiet=True)
    train(cfg, tmp_path / "b", quiet=True)
    train(cfg.with_overrides({"train.seed": 1}), tmp_path / "c", quiet=True)
    a, b, c = (_weights(tmp_path / n) for n in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["embed.W_E"], c["embed.W_E"])
    strip = lambda rows: [{k: v for k, v in r.items() if k not in ("samples_per_s", "elapsed_s")} for r in rows]  # noqa: E731
    assert strip(runs.read_metrics(tmp_path / "a")) == strip(runs.read_metrics(tmp_path / "b"))


def test_existing_out_folder_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "note.txt").write_text("x")
    with pytest.raises(runs.RunFolderError, match="already holds files"):
        train(build_cfg(), tmp_path / "run", quiet=True)
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["note.txt"]


def test_nan_loss_stops_and_keeps_last_good_snapshot(tmp_path):
    cfg = build_cfg(**{"train.lr": 1e37, "train.grad_clip": 0})
    with pytest.raises(TrainingDiverged, match="loss became nan at step 1"):
        train(cfg, tmp_path / "run", quiet=True)
    assert runs.snapshot_steps_on_disk(tmp_path / "run") == [0]
    assert not (tmp_path / "run" / "model.safetensors").exists()
    assert all(torch.isfinite(t).all() for t in _weights(tmp_path / "run", "checkpoints/step0.safetensors").values())


def test_killed_run_resumes_to_bit_identical_weights(tmp_path):
    cfg = build_cfg(**{"train.epochs": 20, "train.threads": 1, "train.eval_every": 8})  # 320 steps
    reference = tmp_path / "reference"
    train(cfg, reference, quiet=True)

    config_file = tmp_path / "cfg.json"
    config_file.write_text(json.dumps(cfg.to_dict()))
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "mechinit", "train", "--config", str(config_file), "--out", str(killed), "--quiet"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state = killed / "resume" / "state.json"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if state.is_file() and json.loads(state.read_text())["step"] >= 40:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = json.loads(state.read_text())["step"]
    assert 40 <= killed_at < 320, "the run was not killed part-way"
    assert not (killed / "model.safetensors").exists()

    train(None, killed, resume=True, quiet=True)
    a, b = _weights(reference), _weights(killed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    steps = [r["step"] for r in runs.read_metrics(killed)]
    assert steps == [r["step"] for r in runs.read_metrics(reference)]


def test_resume_between_evaluations_gives_the_same_weights_and_metrics(tmp_path, monkeypatch):
    """``train.resume_every`` saves state between evaluations; a run killed right after such a save
    and resumed logs the same rows (train loss over the whole interval included) and ends with the
    same weights."""
    cfg = build_cfg(**{"train.epochs": 6, "train.threads": 1, "train.eval_every": 10, "train.resume_every": 3})
    reference = tmp_path / "reference"
    train(cfg, reference, quiet=True)
    killed = tmp_path / "killed"
    stop_after_resume_point(monkeypatch, lambda: train(cfg, killed, quiet=True), at=45)
    state = runs.read_json(killed / "resume" / "state.json")
    assert state["step"] == 45 and state["n_loss"] == 5  # 5 steps since the evaluation at 40
    train(None, killed, resume=True, quiet=True)
    resumed = runs.read_json(killed / "config.json")["provenance"]["resumed"]
    assert [r["step"] for r in resumed] == [45] and resumed[0]["threads"] == 1
    a, b = _weights(reference), _weights(killed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    ref_rows, rows = runs.read_metrics(reference), runs.read_metrics(killed)
    assert [r["step"] for r in rows] == [r["step"] for r in ref_rows]
    assert [r["train_loss"] for r in rows] == [r["train_loss"] for r in ref_rows]


@pytest.mark.parametrize("snapshots", ["0,1,2,3,4,5,6,7", "0,2,4", "0,1"])
def test_divergence_names_a_snapshot_with_finite_loss_and_weights(tmp_path, snapshots):
    cfg = build_cfg(**{"train.lr": 1e37, "train.grad_clip": 0, "train.snapshot_steps": snapshots})
    with pytest.raises(TrainingDiverged) as e:
        train(cfg, tmp_path / "run", quiet=True)
    import re

    diverged = int(re.search(r"at step (\d+)", str(e.value)).group(1))
    named = int(re.search(r"Last good snapshot: step(\d+)", str(e.value)).group(1))
    assert named < diverged
    assert all(torch.isfinite(t).all() for t in _weights(tmp_path / "run", f"checkpoints/step{named}.safetensors").values())


def _stopped_run(tmp_path, monkeypatch, at: int = 45):
    """A run of 60 steps stopped right after its resume point at step ``at`` (and its reference)."""
    cfg = build_cfg(**{"train.epochs": 6, "train.threads": 1, "train.eval_every": 10, "train.resume_every": 5})
    stop_after_resume_point(monkeypatch, lambda: train(cfg, tmp_path / "run", quiet=True), at=at)
    return cfg, tmp_path / "run"


def test_resume_refuses_an_edited_config_and_a_damaged_state(tmp_path, monkeypatch, capsys):
    from mechinit.cli import main

    cfg, run = _stopped_run(tmp_path, monkeypatch)
    config = runs.read_json(run / "config.json")
    edited = json.loads(json.dumps(config))
    edited["train"]["lr"] = 0.5
    runs.write_json(run / "config.json", edited)
    assert main(["train", "--resume", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "config.json has changed since this resume point" in err
    runs.write_json(run / "config.json", config)
    state = run / "resume" / "state.safetensors"
    good = state.read_bytes()
    for damage in (good[: len(good) // 2], b"", b"\x00" * 100):
        state.write_bytes(damage)
        assert main(["train", "--resume", str(run), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "is damaged or unreadable" in err and "Traceback" not in err
    state.write_bytes(good)
    (run / "resume" / "state.json").write_text("[1, 2]")  # the readable copy is not what resume trusts
    with open(run / "metrics.jsonl", "a") as f:
        f.write('{"step": 50, "cut')  # a kill in the middle of appending a row
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    train(cfg, tmp_path / "reference", quiet=True)
    a, b = _weights(tmp_path / "reference"), _weights(run)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [r["step"] for r in runs.read_metrics(run)] == [r["step"] for r in runs.read_metrics(tmp_path / "reference")]


def test_weights_and_counters_are_one_unit(tmp_path, monkeypatch):
    """A kill between the two files used to pair one step's weights with another's counters: the
    counters now travel in the safetensors metadata, and state.json is only a readable copy."""
    cfg, run = _stopped_run(tmp_path, monkeypatch)
    stale = {"step": 40, "elapsed_s": 0.0, "loss_sum": 0.0, "n_loss": 0}
    runs.write_json(run / "resume" / "state.json", stale)  # as if the kill came before state.json was rewritten
    train(None, run, resume=True, quiet=True)
    train(cfg, tmp_path / "reference", quiet=True)
    a, b = _weights(tmp_path / "reference"), _weights(run)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_second_trainer_of_one_folder_gets_one_line(tmp_path, monkeypatch):
    import fcntl

    cfg, run = _stopped_run(tmp_path, monkeypatch)
    with open(run / "resume" / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process holds the run
        with pytest.raises(runs.RunFolderError, match="is being trained by another process"):
            train(None, run, resume=True, quiet=True)
    rows = runs.read_metrics(run)
    assert len(rows) == len({r["step"] for r in rows})  # no duplicated rows
    train(None, run, resume=True, quiet=True)  # once the lock is free, it resumes


def test_tf32_is_set_for_cuda_runs_exactly_as_configured_and_restored_after():
    """A CUDA run computes its fp32 matmuls in TF32 exactly when train.tf32 says so, whatever the
    notebook had set; the notebook's settings come back afterwards. (The flags are torch globals,
    settable without a GPU; a CPU run leaves them alone and refuses tf32.)"""
    import torch

    from mechinit.config import ConfigError
    from mechinit.training.guards import deterministic

    flags = lambda: (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)  # noqa: E731
    saved = flags()
    try:
        for notebook in (False, True):
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = notebook
            for tf32 in (False, True):
                with deterministic("cuda", None, tf32):
                    assert flags() == (tf32, tf32)
                assert flags() == (notebook, notebook)
            with deterministic("cpu", 1):
                assert flags() == (notebook, notebook)
        with pytest.raises(ConfigError, match="train.tf32 = true needs a CUDA device; this run resolved to 'cpu'"):
            with deterministic("cpu", 1, True):
                pass
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_a_resume_may_change_the_thread_count_and_records_it(tmp_path, monkeypatch, capsys):
    from mechinit.cli import main

    cfg, run = _stopped_run(tmp_path, monkeypatch)
    with pytest.raises(ConfigError, match="given only to a resume"):
        train(cfg, tmp_path / "new", quiet=True, threads=2)
    before = torch.get_num_threads()
    assert main(["train", "--resume", str(run), "--quiet", "--threads", "2"]) == 0
    assert torch.get_num_threads() == before  # the setting does not leak out of the run
    resumed = runs.read_json(run / "config.json")["provenance"]["resumed"]
    assert [(r["step"], r["threads"]) for r in resumed] == [(45, 2)]
    assert runs.load_run_config(run).train.threads == 1  # the config is the run's own, unchanged
    assert main(["train", "--preset", "tiny", "--threads", "2", "--out", str(tmp_path / "fresh"), "--quiet",
                 "--set", "train.epochs=1"]) == 0
    assert runs.load_run_config(tmp_path / "fresh").train.threads == 2  # a new run: shorthand for --set train.threads


@pytest.mark.parametrize("sets, expected", [
    ({}, "initial weights from seed 3, data and batch order from seed 3."),
    ({"train.data_seed": 5}, "initial weights from seed 3, data and batch order from seed 5."),
    ({"train.replay": "authors:1"}, "initial weights from the authors' seed 1, data and batch order from the authors' seed 1; replay `authors:1`"),
    ({"train.replay": "authors:2:init", "train.data_seed": 5},
     "initial weights from the authors' seed 2, data and batch order from seed 5; replay `authors:2:init`"),
    ({"train.replay": "authors:2:data"}, "initial weights from seed 3, data and batch order from the authors' seed 2; replay `authors:2:data`")])
def test_the_card_says_where_the_weights_and_the_data_order_came_from(sets, expected):
    from mechinit.runs.card import seed_line

    line = seed_line(build_cfg(**{"train.seed": 3, **sets}).train)
    assert line.startswith("Seeds: `train.seed` 3; ") and expected in line
