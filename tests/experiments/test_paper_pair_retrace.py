"""experiments/paper-pair/retrace_snapshots.py: a run's lost snapshots are rebuilt by training its config again
from step 0, and taken only from a retrace that equals the run at every evaluation."""

import json
import shutil
from pathlib import Path

from safetensors.torch import load_file

from mechinit import runs
from mechinit.training.trainer import train
from tests.conftest import build_cfg
from tests.experiments import experiment_script

retrace_snapshots = experiment_script("paper-pair/retrace_snapshots.py")


def _lost_middle(finished: Path, tmp_path: Path) -> tuple[Path, dict[int, dict]]:
    """A copy of the finished run whose snapshots before the last two are gone; returns it and the lost tensors."""
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    steps = runs.snapshot_steps_on_disk(run)
    lost = {s: load_file(runs.snapshot_path(run, s)) for s in steps[:-2]}
    for s in lost:
        runs.snapshot_path(run, s).unlink()
    return run, lost


def test_a_retrace_rebuilds_the_lost_snapshots_bit_for_bit(finished, tmp_path, capsys):
    run, lost = _lost_middle(finished, tmp_path)
    assert retrace_snapshots.missing(run) == sorted(lost)
    retrace = tmp_path / "retrace"
    assert retrace_snapshots.main([str(run), str(retrace)]) == 0
    assert retrace_snapshots.main([str(run), str(retrace), "--adopt"]) == 0
    assert retrace_snapshots.missing(run) == []
    for step, tensors in lost.items():
        rebuilt = load_file(runs.snapshot_path(run, step))
        assert rebuilt.keys() == tensors.keys() and all((rebuilt[k] == tensors[k]).all() for k in tensors)
    record = json.loads((run / retrace_snapshots.RECORD).read_text())
    assert record["steps"] == sorted(lost)
    # the retrace stopped at the run's first evaluation after the last lost snapshot (6), not at the run's end (32)
    assert [r["step"] for r in runs.read_metrics(finished)] == [0, 16, 32]
    assert not (retrace / runs.WEIGHTS).exists()
    assert json.loads((retrace / runs.RESUME / "state.json").read_text())["step"] == 16


def test_a_snapshot_after_the_retraces_last_evaluation_is_not_taken(tmp_path, capsys):
    """A retrace caught between a snapshot and the evaluation after it: that snapshot waits for the evaluation."""
    finished = tmp_path / "finished"
    train(build_cfg(**{"train.eval_every": 4}), finished, quiet=True)
    run, lost = _lost_middle(finished, tmp_path)
    assert sorted(lost) == [0, 2, 6]
    retrace = tmp_path / "retrace"
    assert retrace_snapshots.main([str(run), str(retrace)]) == 0
    assert [r["step"] for r in runs.read_metrics(retrace)] == [0, 4, 8]  # stopped at 8, the evaluation after 6
    rows = runs.read_metrics(retrace)
    (retrace / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))  # caught before 8
    assert retrace_snapshots.main([str(run), str(retrace), "--adopt"]) == 0
    assert retrace_snapshots.missing(run) == [6]
    assert json.loads((run / retrace_snapshots.RECORD).read_text())["steps"] == [0, 2]
    (retrace / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert retrace_snapshots.main([str(run), str(retrace), "--adopt"]) == 0
    assert retrace_snapshots.missing(run) == []
    assert json.loads((run / retrace_snapshots.RECORD).read_text())["steps"] == [0, 2, 6]


def test_a_retrace_that_differs_is_not_adopted(finished, tmp_path, capsys):
    run, lost = _lost_middle(finished, tmp_path)
    retrace = tmp_path / "retrace"
    retrace_snapshots.main([str(run), str(retrace)])
    rows = runs.read_metrics(retrace)
    rows[-1]["headline"] += 1e-9
    (retrace / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert retrace_snapshots.main([str(run), str(retrace), "--adopt"]) == 1
    assert f"differs at {rows[-1]['step']}; nothing copied" in capsys.readouterr().out
    assert retrace_snapshots.missing(run) == sorted(lost)
    assert not (run / retrace_snapshots.RECORD).exists()


def test_a_retrace_on_another_thread_count_is_not_adopted(finished, tmp_path, capsys):
    run, _ = _lost_middle(finished, tmp_path)
    retrace = tmp_path / "retrace"
    retrace_snapshots.main([str(run), str(retrace)])
    config = json.loads((retrace / runs.CONFIG).read_text())
    config["provenance"]["threads"] = (config["provenance"]["threads"] or 1) + 1
    (retrace / runs.CONFIG).write_text(json.dumps(config))
    capsys.readouterr()
    assert retrace_snapshots.main([str(run), str(retrace), "--adopt"]) == 1
    assert "differs at float path" in capsys.readouterr().out
