"""experiments/fate/score.py: the committed scores are those of today's pool, docs/fate.md shows them, and the
seed-odds grid (the rule's pre-registered test) never enters the pool, published to the zoo or not."""

import importlib.util
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("fate_score", ROOT / "experiments" / "fate" / "score.py")
score = importlib.util.module_from_spec(spec)
spec.loader.exec_module(score)
COMMITTED = json.loads((ROOT / "experiments" / "fate" / "scores.json").read_text())
FINISHED = ROOT / "experiments" / "paper-pair" / "g0.5"  # a finished paper-width run: config and metrics


def test_the_committed_scores_are_those_of_todays_pool_and_docs_show_them():
    assert sorted(r["folder"] for r in score.pool()) == sorted(r["folder"] for r in COMMITTED["runs"])
    doc = (ROOT / "docs" / "fate.md").read_text()
    assert f"{COMMITTED['n_runs']} finished anchor runs" in doc
    for line in score.markdown(COMMITTED["table"]):
        assert line in doc, line


def test_seed_odds_runs_stay_out_of_the_pool_wherever_they_appear(tmp_path, monkeypatch):
    for where in ("experiments/other-study/run", "experiments/seed-odds/d-run", "zoo/entries/d-run-entry"):
        shutil.copytree(FINISHED, tmp_path / where, ignore=shutil.ignore_patterns("*.safetensors", "checkpoints"))
    (tmp_path / "experiments/other-study/run/metrics.jsonl").write_text(
        (FINISHED / "metrics.jsonl").read_text().replace('"elapsed_s": 0.0', '"elapsed_s": 0.5', 1))  # another run (own digest)
    monkeypatch.setattr(score, "ROOT", tmp_path)
    assert [r["folder"] for r in score.pool()] == ["experiments/other-study/run"]
    shutil.rmtree(tmp_path / "experiments/seed-odds")
    assert sorted(r["folder"] for r in score.pool()) == ["experiments/other-study/run", "zoo/entries/d-run-entry"]
