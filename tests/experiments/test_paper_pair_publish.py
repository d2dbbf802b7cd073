"""experiments/paper-pair/publish_reruns.py: the AVX2 γ 0.8 rerun's rule, fixed before the run reached any
evaluation past step 0 — published under an id of its own (`-avx2`) whatever it ends at, and `small-init`
moves to it only if (4,3) inferential >= 0.9 on test-split keys."""

import json
import shutil
from pathlib import Path

import pytest

from mechinit import runs, zoo
from mechinit.runs.ids import run_id
from tests.experiments import experiment_script

publish_reruns = experiment_script("paper-pair/publish_reruns.py")


def _avx2_run(finished: Path, runs_dir: Path, inferential: float) -> Path:
    """The finished tiny run as RUNS_DIR/g0.8-avx2, its last (4,3) record planted at ``inferential``."""
    run = runs_dir / "g0.8-avx2"
    shutil.copytree(finished, run)
    rows = runs.read_metrics(run)
    pair = rows[-1]["pairs"]["4,3"]
    pair.update(inferential=inferential, symmetric=0.0, label="inferential" if inferential >= 0.9 else "other")
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def _alone(tmp_path: Path, monkeypatch) -> Path:
    """A zoo folder whose names no other zoo shares: the user zoo and the shipped entries point elsewhere
    (the shipped `small-init` would otherwise refuse a second `small-init`: one namespace)."""
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "user-zoo"))
    monkeypatch.setattr("mechinit.zoo.store.SHIPPED", tmp_path / "shipped")
    return tmp_path / "zoo"


def _zoo_with_small_init(finished: Path, zoo_dir: Path) -> str:
    return zoo.publish(finished, id="committed-replay", aliases=("small-init",), zoo_dir=zoo_dir, dtype="float16")


def _avx2_run_without_middle_snapshots(finished: Path, tmp_path: Path, monkeypatch) -> tuple[Path, Path, list[int]]:
    """A zoo with `small-init`, and the planted AVX2 run (inferential 0.95) whose snapshots but the first and last
    are gone (a resume point carried to another machine keeps none); returns the zoo, the run and its steps before."""
    zoo_dir = _alone(tmp_path, monkeypatch)
    _zoo_with_small_init(finished, zoo_dir)
    run = _avx2_run(finished, tmp_path / "runs", 0.95)
    steps = runs.snapshot_steps_on_disk(run)
    for step in steps[1:-1]:
        runs.snapshot_path(run, step).unlink()
    return zoo_dir, run, steps


@pytest.mark.parametrize("inferential, moves", [(0.91, True), (0.9, True), (0.8795, False)])
def test_small_init_moves_to_the_avx2_rerun_only_at_inferential_0_9(finished, tmp_path, monkeypatch, capsys,
                                                                   inferential, moves):
    zoo_dir = _alone(tmp_path, monkeypatch)
    before = _zoo_with_small_init(finished, zoo_dir)
    run = _avx2_run(finished, tmp_path / "runs", inferential)
    assert publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)]) == 0
    index = json.loads((zoo_dir / "index.json").read_text())
    entry = run_id(runs.load_run_config(run)) + "-avx2"
    assert index["aliases"]["paper-g0.8-replay-avx2"] == entry  # published whatever it ends at
    assert sorted(p.name for p in (zoo_dir / entry / "checkpoints").iterdir())  # with its own snapshots
    assert index["aliases"]["small-init"] == (entry if moves else before)
    out = capsys.readouterr().out
    assert ("small-init`: committed-replay -> " + entry in out) == moves
    assert ("stays where it is: (4,3) inferential" in out) == (not moves)


def test_a_published_avx2_rerun_is_left_as_it_is(finished, tmp_path, monkeypatch, capsys):
    zoo_dir = _alone(tmp_path, monkeypatch)
    _zoo_with_small_init(finished, zoo_dir)
    _avx2_run(finished, tmp_path / "runs", 0.95)
    publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)])
    index = (zoo_dir / "index.json").read_text()
    assert publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)]) == 0
    assert (zoo_dir / "index.json").read_text() == index
    assert "g0.8-avx2: already published" in capsys.readouterr().out


def test_the_avx2_card_names_the_snapshots_the_run_holds(finished, tmp_path, monkeypatch):
    """A run whose early snapshots were lost (a resume point carried to another machine keeps no snapshots) is
    published with the snapshots it holds, and its card names those steps only."""
    zoo_dir, run, steps = _avx2_run_without_middle_snapshots(finished, tmp_path, monkeypatch)
    kept = (steps[0], steps[-1])
    assert publish_reruns.snapshot_list(run) == f"{kept[0]:,} and {kept[1]:,}"
    publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)])
    entry = run_id(runs.load_run_config(run)) + "-avx2"
    assert sorted(p.name for p in (zoo_dir / entry / "checkpoints").iterdir()) == [f"step{s}.safetensors" for s in kept]
    card = (zoo_dir / entry / runs.CARD).read_text()
    assert f"with fp16 snapshots at steps {kept[0]:,} and {kept[1]:,} from this same run" in card


@pytest.mark.parametrize("steps, says", [([0, 370, 1850], "The snapshots at steps 0, 370 and 1,850 were rebuilt after the run"),
                                         ([0], "The snapshot at step 0 was rebuilt after the run")])
def test_the_card_says_which_snapshots_a_retrace_rebuilt(finished, tmp_path, monkeypatch, steps, says):
    zoo_dir = _alone(tmp_path, monkeypatch)
    _zoo_with_small_init(finished, zoo_dir)
    run = _avx2_run(finished, tmp_path / "runs", 0.95)
    (run / "snapshots-retraced.json").write_text(json.dumps({"steps": steps}))
    publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)])
    entry = zoo_dir / (run_id(runs.load_run_config(run)) + "-avx2")
    assert says in (entry / runs.CARD).read_text()
    assert (entry / "snapshots-retraced.json").is_file()


def test_a_published_rerun_that_gains_snapshots_is_published_again_under_its_id(finished, tmp_path, monkeypatch, capsys):
    from mechinit.zoo.store import file_table

    zoo_dir, run, steps = _avx2_run_without_middle_snapshots(finished, tmp_path, monkeypatch)
    publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)])
    before = json.loads((zoo_dir / "index.json").read_text())
    entry = before["aliases"]["paper-g0.8-replay-avx2"]
    for step in steps[1:-1]:  # rebuilt by a retrace equal to the run
        shutil.copy2(runs.snapshot_path(finished, step), runs.snapshot_path(run, step))
    (run / "snapshots-retraced.json").write_text(json.dumps({"steps": steps[1:-1]}))
    capsys.readouterr()
    assert publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)]) == 0
    assert f"g0.8-avx2: published {entry} again with snapshots at steps" in capsys.readouterr().out
    after = json.loads((zoo_dir / "index.json").read_text())
    assert after["aliases"] == before["aliases"] and sorted(after["entries"]) == sorted(before["entries"])
    assert runs.snapshot_steps_on_disk(zoo_dir / entry) == steps
    assert after["entries"][entry]["files"] == file_table(zoo_dir / entry)  # the index's sha256 table is the new files'
    assert "were rebuilt after the run" in (zoo_dir / entry / runs.CARD).read_text()
    assert not [p for p in zoo_dir.iterdir() if p.name.startswith(".tmp")]
    assert publish_reruns.main([str(tmp_path / "runs"), "--zoo", str(zoo_dir)]) == 0  # nothing more to gain
    assert "already published" in capsys.readouterr().out


def test_an_entry_is_published_again_only_from_its_own_run(finished, tmp_path, monkeypatch):
    from mechinit.zoo.publishing import republish
    from mechinit.zoo.store import ZooError

    zoo_dir = _alone(tmp_path, monkeypatch)
    entry = _zoo_with_small_init(finished, zoo_dir)
    other = tmp_path / "other"
    shutil.copytree(finished, other)
    rows = runs.read_metrics(other)
    rows[-1]["train_loss"] += 1e-9
    (other / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    index = (zoo_dir / "index.json").read_text()
    with pytest.raises(ZooError, match="metrics differ"):
        republish(other, entry, zoo_dir=zoo_dir, dtype="float16")
    assert (zoo_dir / "index.json").read_text() == index and not [p for p in zoo_dir.iterdir() if p.name.startswith(".tmp")]
