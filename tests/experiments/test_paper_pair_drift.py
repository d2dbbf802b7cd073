"""experiments/paper-pair/drift.py: the drift tables in experiments/paper-pair/README.md are printed by it."""

import json
from pathlib import Path

from tests.experiments import experiment_script

drift = experiment_script("paper-pair/drift.py")


def _run(folder: Path, rows: list[tuple[int, float, float, float]]) -> Path:
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text("".join(
        json.dumps({"step": s, "train_loss": loss, "seen_test_acc": seen, "pairs": {"4,3": {"inferential": inf, "symmetric": 0.0}}}) + "\n"
        for s, loss, seen, inf in rows))
    return folder


def test_side_by_side_lists_the_steps_every_run_holds_in_the_order_given(tmp_path, capsys):
    a = _run(tmp_path / "a", [(0, 5.0, 0.0, 0.0), (370, 4.0, 0.1, 0.2), (740, 3.0, 0.5, 0.9)])
    b = _run(tmp_path / "b", [(0, 5.0, 0.0, 0.0), (370, 4.5, 0.2, 0.25)])
    assert drift.main(["--side-by-side", "--from", "370", str(a), str(b / "metrics.jsonl")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == ["| 370 | 4.000 / 4.500 | 0.100 / 0.200 | 0.200 / 0.250 | 0.000 / 0.000 |"]


def test_the_two_run_form_names_the_first_step_that_moved(tmp_path, capsys):
    a = _run(tmp_path / "a", [(0, 5.0, 0.0, 0.0), (370, 4.0, 0.1, 0.2), (740, 3.0, 0.5, 0.9)])
    b = _run(tmp_path / "b", [(0, 5.0, 0.0, 0.0), (370, 4.0, 0.1, 0.2), (740, 3.1, 0.5, 0.9)])
    assert drift.main([str(b), str(a)]) == 0
    out = capsys.readouterr().out
    assert "train loss: first moved at step 740" in out
    assert "seen-pair acc: equal at every shared step (to 0.005) (3 shared steps, last 740)" in out
