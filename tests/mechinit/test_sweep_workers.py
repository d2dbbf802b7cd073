"""How a sweep's runs are handed out and stopped (mechinit/sweeps/workers.py): the submitit path, a
failed run's own log, and SIGTERM to a sweep with one or two workers stopping every run at a resume
point that the next call of the same command continues."""

import json

import pytest

from mechinit import runs
from mechinit.cli import main
from mechinit.runs.ids import run_id
from mechinit.sweeps.grid import SweepSpec, run_sweep
from tests.conftest import build_cfg

BASE = build_cfg(**{"train.epochs": 1})


def test_submitit_path_with_its_local_executor(tmp_path):
    pytest.importorskip("submitit", reason="submitit is part of the dev extra")
    spec = SweepSpec(BASE, {"train.seed": (0, 1)}, mean_over=("train.seed",))
    finished = []
    summary = run_sweep(spec, tmp_path / "sw", executor="submitit-local", progress=False, on_finished=finished.append)
    assert summary["failed"] == {}
    assert sorted(f.name for f in finished) == sorted(run_id(c) for c in spec.configs())
    assert (tmp_path / "sw" / "submitit").is_dir()
    (cell,) = summary["cells"]
    assert cell["seen_test_acc"]["n"] == 2 and cell["seen_test_acc"]["mean"] is not None


def test_an_interrupted_sweep_run_continues_from_its_resume_point(tmp_path, monkeypatch):
    import torch
    from safetensors.torch import load_file

    import mechinit.training.resume as resume_module

    cfg = build_cfg(**{"train.epochs": 4, "train.threads": 1, "train.eval_every": 8})
    spec = SweepSpec(cfg, {"init.gamma": (0.8,)}, mean_over=())
    original = resume_module.save

    def save_then_die(out, model, opt, cfg, step, *args):
        original(out, model, opt, cfg, step, *args)
        if step == 40:
            raise RuntimeError("killed at the end of a session")

    monkeypatch.setattr(resume_module, "save", save_then_die)
    first = run_sweep(spec, tmp_path / "sw", progress=False, ensemble="off")
    assert len(first["failed"]) == 1
    folder = tmp_path / "sw" / "runs" / run_id(spec.configs()[0])
    assert runs.read_json(folder / "resume" / "state.json")["step"] == 40
    monkeypatch.setattr(resume_module, "save", original)
    second = run_sweep(spec, tmp_path / "sw", progress=False, ensemble="off")
    assert second["failed"] == {} and second["units"] == [[folder.name]]
    assert [r["step"] for r in runs.read_metrics(folder)][:6] == [0, 8, 16, 24, 32, 40]  # kept, not retrained
    from mechinit.training.trainer import train

    train(spec.configs()[0], tmp_path / "alone", quiet=True)
    a, b = load_file(str(tmp_path / "alone" / "model.safetensors")), load_file(str(folder / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_each_failed_run_keeps_its_own_log(tmp_path):
    """Run ids hold dots (g0.50): the failure log is named after the whole id, one per run."""
    spec = SweepSpec(build_cfg(**{"train.epochs": 1, "train.lr": 1e37, "train.grad_clip": 0}), {"init.gamma": (0.5, 0.8)}, mean_over=())
    summary = run_sweep(spec, tmp_path / "sw", progress=False, ensemble="off")
    logs = sorted(summary["failed"].values())
    assert len(logs) == 2 and len(set(logs)) == 2
    for cfg in spec.configs():
        log = tmp_path / "sw" / "runs" / f"{run_id(cfg)}.log"
        assert log.is_file() and "loss became" in log.read_text()


def test_sigterm_stops_a_one_job_sweep_and_the_next_call_continues_it(tmp_path, monkeypatch, capsys):
    """A stopped sweep must not record the stopped run as failed and go on to the next grid point."""
    import os
    import signal

    import mechinit.training.resume as resume_module
    from mechinit.cli import EXIT_INTERRUPTED

    original = resume_module.save

    def save_then_sigterm(out, model, opt, cfg, step, *args):
        original(out, model, opt, cfg, step, *args)
        if step == 8:
            os.kill(os.getpid(), signal.SIGTERM)  # what the end of a session sends

    argv = ["sweep", "--preset", "tiny", "--set", "sweep.init.gamma=0.5,0.8", "--set", "train.resume_every=8",
            "--set", "train.threads=1", "--ensemble", "off", "--jobs", "1", "--out", str(tmp_path / "sw"), "--quiet"]
    monkeypatch.setattr(resume_module, "save", save_then_sigterm)
    assert main(argv) == EXIT_INTERRUPTED
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "sweep stopped (SIGTERM at step 8: resume point saved)" in err[0] and "same `mechinit sweep` command" in err[0]
    folders = sorted(p for p in (tmp_path / "sw" / "runs").iterdir())
    assert [p.name for p in folders] == [folders[0].name] and folders[0].is_dir()  # the second grid point never started
    assert runs.read_json(folders[0] / "resume" / "state.json")["step"] == 8
    assert not (tmp_path / "sw" / "sweep.json").exists()

    monkeypatch.setattr(resume_module, "save", original)
    assert main(argv) == 0
    summary = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert summary["failed"] == {} and len(summary["units"]) == 2
    assert [r["step"] for r in runs.read_metrics(folders[0])][0] == 0 and (folders[0] / runs.WEIGHTS).is_file()


def test_sigterm_to_a_sweep_with_two_workers_stops_both_runs_at_a_resume_point(tmp_path):
    """The parent alone is signalled (as `kill PID` or a scheduler does): it stops every worker's
    run, each saving a resume point, leaves no worker behind and starts no queued run; the same
    command then finishes the sweep."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "sw"
    # tiny runs of 200 steps, one thread each, a resume point every 2 steps: the signal lands mid-run
    command = [sys.executable, "-m", "mechinit", "sweep", "--preset", "tiny", "--set", "sweep.train.seed=0,1,2",
               "--set", "task.n_train=512", "--set", "task.n_eval=32", "--set", "train.epochs=50", "--set", "train.threads=1",
               "--set", "train.resume_every=2", "--ensemble", "off", "--jobs", "2", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    states = []
    while time.time() < deadline and proc.poll() is None:
        states = sorted(out.glob("runs/*/resume/state.json"))
        if len(states) == 2 and all(json.loads(s.read_text())["step"] >= 4 for s in states):
            break
        time.sleep(0.05)
    assert proc.poll() is None and len(states) == 2, "both workers should be training"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1].startswith("mechinit: stopped: sweep stopped (SIGTERM with 2 workers")
    folders = sorted(out.glob("runs/*/"))
    assert len(folders) == 2 and not any((f / runs.WEIGHTS).exists() for f in folders)  # the third never started
    assert all((f / runs.RESUME / "state.safetensors").is_file() for f in folders)
    left = [p for p in os.listdir("/proc") if p.isdigit() and str(out).encode() in _cmdline(p)]
    assert left == [], "a worker outlived the sweep"
    assert main(command[3:]) == 0  # the same command: both resume, the third trains
    assert len(list(out.glob("runs/*/" + runs.WEIGHTS))) == 3


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
