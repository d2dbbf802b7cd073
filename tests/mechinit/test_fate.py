"""``mechinit fate``: the fixed rule on planted evaluations, the read-out step, and bad input."""

import json

import pytest

from mechinit import fate
from mechinit.cli import main
from mechinit.readout import predict
from mechinit.training.trainer import train
from tests.conftest import build_cfg


@pytest.mark.parametrize("seen, inf, sym, fraction, verdict, p", [
    (1.0, 0.0, 0.89, 0.21, "symmetric", 0.0), (0.99, 0.95, 0.0, 0.9, "inferential", 0.95), (1.0, 0.6, 0.3, 0.6, "other", 0.5),
    (0.05, 0.08, 0.02, 0.21, "uncertain", 0.5), (0.39, 0.2, 0.03, 0.21, "uncertain", 0.2), (0.05, 0.0, 0.0, 0.05, "uncertain", 0.2),
    (0.95, 0.3, 0.3, 0.2, "uncertain", 0.5), (0.95, 0.0, 0.5, 0.2, "uncertain", 0.1)])
def test_the_rule_on_planted_evidence(seen, inf, sym, fraction, verdict, p):
    got, prob, reason = predict(seen, inf, sym, fraction)
    assert (got, prob) == (verdict, pytest.approx(p)) and reason


def planted_run(tmp_path, rows):
    """A tiny run folder whose metrics are replaced by planted rows (step, seen, inferential, symmetric)."""
    run = tmp_path / "run"
    train(build_cfg(**{"train.epochs": 1, "train.threads": 1}), run, quiet=True)
    real = json.loads((run / "metrics.jsonl").read_text().splitlines()[-1])
    lines = []
    for step, seen, inf, sym in rows:
        pairs = {**real["pairs"], "4,3": {**real["pairs"]["4,3"], "inferential": inf, "symmetric": sym}}
        lines.append(json.dumps({**real, "step": step, "seen_test_acc": seen, "pairs": pairs}))
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    return run


def test_at_resolves_to_the_last_evaluation_at_or_before_it(tmp_path, capsys):
    run = planted_run(tmp_path, [(0, 0.0, 0.0, 0.0), (5, 0.95, 0.0, 0.95), (10, 0.95, 0.95, 0.0)])  # 16 planned steps
    assert fate(run, at=7).verdict == "symmetric" and fate(run, at=7).step == 5
    assert fate(run).step == 10 and fate(run).verdict == "inferential"
    assert main(["fate", str(run), "--at", "9"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "fate: symmetric p_inferential=0.00 step=5"


@pytest.mark.parametrize("argv, words", [(["--at", "11"], "beyond the run's last evaluation"), (["--at", "x"], "not a step")])
def test_bad_at_is_one_line_exit_2(argv, words, tmp_path, capsys):
    run = planted_run(tmp_path, [(0, 0.0, 0.0, 0.0), (10, 0.95, 0.95, 0.0)])
    try:
        code = main(["fate", str(run), *argv])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and words in err


def test_bad_runs_are_one_line_exit_2(tmp_path, capsys):
    run = planted_run(tmp_path, [(0, 0.0, 0.0, 0.0)])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text((run / "config.json").read_text())
    (tmp_path / "bad" / "metrics.jsonl").write_text("{not json\n{}\n")
    for target, words in ((tmp_path / "nothing-here", "does not exist"), (tmp_path, "is not a run folder"),
                          (tmp_path / "bad", "cannot be read")):
        assert main(["fate", str(target)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err, err


def test_a_task_without_the_pair_is_refused(tmp_path, capsys):
    run = tmp_path / "seq"
    train(build_cfg(**{"task.name": "addition", "model.d_vocab": 16, "model.n_ctx": 16, "model.norm": "pre", "train.epochs": 1,
                       "task.n_train": 256, "task.n_eval": 16, "task.n_eval_train": 16}), run, quiet=True)
    assert main(["fate", str(run)]) == 2
    assert "has no (4,3) pair" in capsys.readouterr().err


@pytest.mark.parametrize("alias, verdict", [("small-init", "uncertain"), ("large-init", "symmetric")])
def test_the_paper_pair_at_step_1850(alias, verdict, capsys):
    assert main(["fate", alias, "--at", "1850"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith(f"fate: {verdict} ")


@pytest.mark.parametrize("label, verdict, p", [("other", "other", 0.0), ("inferential", "inferential", 1.0),
                                               ("unfitted", "other", 0.0), ("symmetric", "symmetric", 0.0)])
def test_at_the_runs_end_the_fate_is_its_own_label(label, verdict, p, tmp_path):
    # 16 planned steps; at the end (4,3) is at 0.88 inferential, which rule 1 would call inferential
    run = planted_run(tmp_path, [(0, 0.0, 0.0, 0.0), (16, 0.97, 0.88, 0.0)])
    lines = (run / "metrics.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["pairs"]["4,3"]["label"] = label
    (run / "metrics.jsonl").write_text("\n".join([lines[0], json.dumps(last)]) + "\n")
    called = fate(run)
    assert (called.verdict, called.p_inferential, called.step, called.fraction) == (verdict, p, 16, 1.0)
    assert "observed" in called.evidence["rule"]
    assert predict(0.97, 0.88, 0.0, 1.0)[0] == "inferential"  # what the rule alone would have said
    assert fate(run, at=15).verdict == "uncertain"  # before the end the rule reads step 0
