"""The seed-odds grid's bookkeeping: a run goes past step 1,850 only once its prediction is committed, records are
appended once, and the table's sources and intervals are right."""

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"seed_odds_{name}", ROOT / "experiments" / "seed-odds" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


grid, table = _load("grid"), _load("table")


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.email=t@t", "-c", "user.name=t", *args], check=True, capture_output=True)


@pytest.fixture
def stopped(tmp_path):
    """A run folder stopped at 1,850 (its resume point) and an empty record checkout."""
    run = tmp_path / "runs" / "b-init3-data0"
    (run / "resume").mkdir(parents=True)
    (run / "resume" / "state.json").write_text(json.dumps({"step": 1850}))
    record = tmp_path / "record"
    record.mkdir()
    _git(record, "init", "-q")
    return run, record


def test_a_run_is_not_continued_before_its_prediction_is_committed(stopped):
    run, record = stopped
    with pytest.raises(SystemExit, match="prediction at 1850 is not committed"):
        grid.continue_to_end("b-init3-data0", run.parent, record)
    (record / "predictions.jsonl").write_text(json.dumps({"run": "b-init3-data0"}) + "\n")  # written, not committed
    with pytest.raises(SystemExit, match="not committed"):
        grid.continue_to_end("b-init3-data0", run.parent, record)
    _git(record, "add", "predictions.jsonl")
    _git(record, "commit", "-qm", "prediction")
    assert grid.committed_predictions(record) == {"b-init3-data0"}


def test_a_run_short_of_1850_is_not_continued(stopped):
    run, record = stopped
    (run / "resume" / "state.json").write_text(json.dumps({"step": 1813}))
    with pytest.raises(SystemExit, match="no resume point at or past step 1850"):
        grid.continue_to_end("b-init3-data0", run.parent, record)


def test_records_are_appended_once_with_the_runs_config_and_metrics(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    rows = [{"step": s, "pairs": {"4,3": {"label": lab, "inferential": i, "symmetric": y}}}
            for s, lab, i, y in ((1850, "unfitted", 0.1, 0.0), (8880, "inferential", 0.95, 0.01))]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    grid.record_outcome("x", run, tmp_path / "record")
    grid.record_outcome("x", run, tmp_path / "record")
    (row,) = [json.loads(line) for line in (tmp_path / "record" / "outcomes.jsonl").read_text().splitlines()]
    assert (row["label"], row["step"], row["max_inferential"], row["max_symmetric"]) == ("inferential", 8880, 0.95, 0.01)
    assert sorted(p.name for p in (tmp_path / "record" / "x").iterdir()) == ["config.json", "metrics.jsonl"]


def test_a_second_grid_on_the_same_folder_stops_and_clears_nothing(tmp_path):
    run = tmp_path / "runs" / "b-init3-data0"  # started by the first grid, no resume point yet
    run.mkdir(parents=True)
    (run / "config.json").write_text("{}")
    with grid.only_grid(tmp_path / "runs"):
        with pytest.raises(SystemExit, match="another grid is running on this folder"):
            with grid.only_grid(tmp_path / "runs"):
                grid.train_to_stop("b-init3-data0", tmp_path / "runs")
    assert (run / "config.json").read_text() == "{}"
    with grid.only_grid(tmp_path / "runs"):  # free again once the first grid is done
        pass


def test_every_grid_run_has_its_own_name_and_a_known_source():
    assert len(grid.GRID) == len(set(grid.GRID)) == 3 + 6 + 2 + 1 + 8
    assert table.sources({"train": {"seed": 0, "replay": "authors:1:init", "data_seed": 2}}) == ("authors seed 1", "mechinit seed 2")
    assert table.sources({"train": {"seed": 0, "replay": "authors:3"}}) == ("authors seed 3", "authors seed 3")
    assert table.sources({"train": {"seed": 0, "init_seed": 5, "data_seed": None}}) == ("mechinit seed 5", "mechinit seed 0")


def test_the_table_says_where_each_run_trained():
    cpu = {"cpu_capability": "AVX512", "cuda": None, "threads": 1}
    assert table.ran_on(cpu) == "CPU AVX512, 1 thread"
    assert table.ran_on({**cpu, "resumed": [{**cpu, "step": 37}, {**cpu, "cpu_capability": "AVX2", "step": 74}]}) == "CPU AVX512 → AVX2, 1 thread"
    assert table.ran_on({"resumed": [{**cpu, "step": 888}]}) == "CPU kernel set not recorded → AVX512, 1 thread"
    assert table.ran_on({"cpu_capability": None, "cuda": "NVIDIA H100 80GB HBM3", "threads": 16}) == "CUDA NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize("k, n, low, high", [(0, 4, 0.0, 0.49), (3, 4, 0.30, 0.95), (4, 5, 0.38, 0.96), (1, 2, 0.09, 0.91)])
def test_wilson_intervals(k, n, low, high):
    lo, hi = table.wilson(k, n)
    assert (round(lo, 2), round(hi, 2)) == (low, high)
