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
    assert grid.committed(record) == {"b-init3-data0"}


def _metrics(folder: Path, loss_at_1850: float, last: int = 1850) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"step": s, "elapsed_s": s * 2.3, "samples_per_s": 900.0, "seen_test_acc": 0.05,
             "train_loss": None if s == 0 else (loss_at_1850 if s == 1850 else 4.0),
             "pairs": {"4,3": {"label": "inferential" if s == 8880 else "unfitted", "inferential": 0.95 if s == 8880 else 0.04,
                               "symmetric": 0.0}}} for s in (0, 370, 1850, 8880) if s <= last]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "config.json").write_text(json.dumps({"provenance": {"cpu_capability": "AVX2", "cuda": None, "threads": 1}}))


@pytest.fixture
def on_record(stopped):
    """``stopped``, with its prediction and its metrics to 1,850 committed in the record checkout."""
    run, record = stopped
    _metrics(run, 3.3612)
    _metrics(record / run.name, 3.3612)
    (record / "predictions.jsonl").write_text(json.dumps({"run": run.name, "verdict": "uncertain", "p_inferential": 0.5,
                                                         "first_line": "fate: uncertain p_inferential=0.50 step=1850"}) + "\n")
    _git(record, "add", ".")
    _git(record, "commit", "-qm", "prediction")
    return run, record


def test_only_the_timing_may_differ_for_a_run_to_count_as_the_recorded_one(on_record):
    run, record = on_record
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rows[1]["elapsed_s"], rows[1]["samples_per_s"] = 1.0, 1.0
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert grid.is_recorded_run(run.name, run, record)
    _metrics(run, 3.3613)  # a retrace on another kernel set: one digit off at 1,850
    assert not grid.is_recorded_run(run.name, run, record)


def test_the_grid_does_not_train_again_a_run_whose_prediction_is_on_record(on_record, monkeypatch, capsys):
    run, record = on_record
    monkeypatch.setattr(grid, "mechinit_train", lambda *a: pytest.fail("trained a run whose prediction is on record"))
    grid.to_stop(run.name, run.parent, record)
    assert "on record; not trained again" in capsys.readouterr().out


def test_a_retrace_goes_on_only_once_its_comparison_is_committed(on_record, monkeypatch):
    run, record = on_record
    _metrics(run, 3.2950)  # the run trained again from step 0 on another float path
    trained = []
    monkeypatch.setattr(grid, "mechinit_train", lambda args, log: trained.append(args))
    with pytest.raises(SystemExit, match="not the run whose prediction is on record"):
        grid.continue_to_end(run.name, run.parent, record)
    assert trained == []

    class Called:  # the rule's call on the retrace (the rule itself is tested in tests/mechinit)
        verdict, p_inferential = "uncertain", 0.5

        def first_line(self):
            return "fate: uncertain p_inferential=0.50 step=1850"

    import mechinit.readout
    monkeypatch.setattr(mechinit.readout, "fate", lambda folder, at: Called())
    monkeypatch.setattr(grid, "train_to_stop", lambda name, runs, **how: runs / name)
    grid.retrace(run.name, run.parent, record)
    (row,) = [json.loads(line) for line in (record / "retraces.jsonl").read_text().splitlines()]
    assert (row["identical_to_1850"], row["same_call"], row["ran_on"]) == (False, True, "CPU AVX2, 1 thread")
    assert (row["recorded_at_1850"]["train_loss"], row["retrace_at_1850"]["train_loss"]) == (3.3612, 3.2950)
    with pytest.raises(SystemExit, match="commit retraces.jsonl"):  # written, not yet committed
        grid.continue_to_end(run.name, run.parent, record)
    _git(record, "add", ".")
    _git(record, "commit", "-qm", "retrace")
    _metrics(run, 3.2950, last=8880)  # what the continuation leaves behind
    grid.continue_to_end(run.name, run.parent, record)
    assert trained == [["--resume", str(run)]]
    (outcome,) = [json.loads(line) for line in (record / "outcomes.jsonl").read_text().splitlines()]
    assert (outcome["label"], outcome["retrace"]) == ("inferential", True)
    kept = [json.loads(line) for line in (record / run.name / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in kept] == [0, 370, 1850] and kept[-1]["train_loss"] == 3.3612  # what the counts were made of
    assert [json.loads(line)["step"] for line in (record / run.name / "retrace" / "metrics.jsonl").read_text().splitlines()][-1] == 8880


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


def test_a_continued_retrace_is_scored_on_its_own_call_and_its_own_end():
    end = [{"step": 1850, "pairs": {"4,3": {"label": "unfitted", "inferential": 0.1, "symmetric": 0.0}}},
           {"step": 8880, "pairs": {"4,3": {"label": "inferential", "inferential": 0.93, "symmetric": 0.02}}}]
    assert table.outcome(end[:1]) is None
    assert table.outcome(end) == {"label": "inferential", "inferential": 0.93, "symmetric": 0.02,
                                  "max_inferential": 0.93, "max_symmetric": 0.02}
    recorded = {"verdict": "uncertain", "p_inferential": 0.5, "first_line": "fate: uncertain p_inferential=0.50 step=1850"}
    retrace = {"retrace_verdict": "inferential", "retrace_p_inferential": 0.8, "ran_on": "CPU AVX2, 1 thread",
               "retrace_call": "fate: inferential p_inferential=0.80 step=1850", "recorded_call": recorded["first_line"]}
    run = {"run": "b-init4-data0", "prediction": recorded, "outcome": table.outcome(end), "retrace": retrace, "retrace_rows": end}
    lines = table.hits([run])
    assert lines[2] == ("| b-init4-data0 | fate: inferential p_inferential=0.80 step=1850 (on the retrace; recorded run: "
                        "fate: uncertain p_inferential=0.50 step=1850) | inferential | hit |")
    assert "calls made (not `uncertain`): 1, right: 1; Brier score of p_inferential: 0.040" in lines[-1]
    assert table.hits([{**run, "retrace": None, "retrace_rows": []}])[2].endswith("| inferential | no call |")


def test_a_grid_on_cuda_starts_the_same_runs_on_the_gpu():
    cpu, cuda = grid.command("b-init4-data0"), grid.command("b-init4-data0", "cuda")
    assert "train.device=cpu" in cpu and "train.device=cuda" in cuda and "train.device=cpu" not in cuda
    assert [a for a in cpu if a != "train.device=cpu"] == [a for a in cuda if a != "train.device=cuda"]
    assert grid.command("c-authors2", bf16=True)[-2:] == ["--set", "train.bf16=true"]


def test_a_replicate_on_another_kernel_set_is_counted_once():
    runs = [{"run": "g0.8-their-init-our-data", "gamma": 0.8, "init": "authors seed 1", "data": "mechinit seed 0", "slow": True},
            {"run": "b-init4-data0", "gamma": 0.8, "init": "mechinit seed 4", "data": "mechinit seed 0", "slow": True},
            {"run": "d-swap-authors1init-data0", "gamma": 0.8, "init": "authors seed 1", "data": "mechinit seed 0", "slow": False}]
    counted, again = table.replicates(runs)
    assert [r["run"] for r in counted] == ["g0.8-their-init-our-data", "b-init4-data0"]
    assert [(r["run"], first["run"]) for r, first in again] == [("d-swap-authors1init-data0", "g0.8-their-init-our-data")]


def test_a_run_being_continued_shows_its_last_evaluation_not_an_end():
    rows = [{"step": 1850, "seen_test_acc": 0.13, "pairs": {"4,3": {"inferential": 0.19, "symmetric": 0.10}}},
            {"step": 2590, "seen_test_acc": 0.4994, "pairs": {"4,3": {"inferential": 0.062, "symmetric": 0.0}}}]
    assert table.progress(rows, 1850) == "going on: at step 2,590 seen-pair 0.499, (4,3) inferential 0.06, symmetric 0.00"
    assert table.progress(rows[:1], 1850) == "stopped at 1850"
    assert table.outcome(rows) is None  # not an end: the hit-rate table leaves it out
