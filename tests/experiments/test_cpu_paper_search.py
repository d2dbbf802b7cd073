"""The CPU preset search's bookkeeping: the screen stays within 12 runs, confirm builds seeds 0-4 of both inits
(or small init on the other kernel set), and the table counts planted outcomes against the bar."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("cpu_paper_search", ROOT / "experiments" / "cpu-paper" / "search.py")
search = importlib.util.module_from_spec(spec)
spec.loader.exec_module(search)


def plant(folder: Path, inferential: float, symmetric: float, label: str) -> None:
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "config.json").write_text("{}")
    row = {"step": 3900, "elapsed_s": 480.0, "seen_test_acc": 1.0,
           "pairs": {"4,3": {"label": label, "inferential": inferential, "symmetric": symmetric}}}
    (folder / "metrics.jsonl").write_text(json.dumps(row) + "\n")


def test_the_screen_is_at_most_12_runs_and_all_on_the_cpu_pair():
    assert 0 < len(search.SCREEN) <= 12
    for argv in search.SCREEN.values():
        assert "model.n_layers=2" in argv or "model.n_layers=4" in argv
        assert any(a.startswith("train.weight_decay=") for a in argv)


def test_confirm_builds_seeds_0_to_4_of_both_inits_and_small_init_on_avx2(tmp_path):
    runs = search.confirm_runs(tmp_path, "L2-g1.0-wd0.1", 0.6, None)
    assert sorted(p.name for p in runs) == [*(f"large-g0.6-s{s}" for s in range(5)), *(f"small-s{s}" for s in range(5))]
    argv, env = runs[tmp_path / "L2-g1.0-wd0.1" / "large-g0.6-s3"]
    assert argv[-3:] == ["init.gamma=0.6", "--set", "train.seed=3"] and env is None
    avx2 = search.confirm_runs(tmp_path, "L2-g1.0-wd0.1", 0.6, "avx2")
    assert sorted(p.name for p in avx2) == [f"small-s{s}" for s in range(5)]
    assert all(env == {"ATEN_CPU_CAPABILITY": "avx2"} and p.parent.parent.name == "avx2" for p, (_, env) in avx2.items())


def test_the_table_counts_planted_outcomes_against_the_bar(tmp_path):
    group = tmp_path / "L2-g1.0-wd0.1"
    for s, inf in enumerate((0.95, 0.90, 0.89, 0.97, 0.2)):
        plant(group / f"small-s{s}", inf, 0.0, "inferential" if inf >= 0.9 else "other")
    for s, sym in enumerate((1.0, 0.99, 0.5, 0.93, 0.91)):
        plant(group / f"large-g0.6-s{s}", 0.0, sym, "symmetric" if sym >= 0.9 else "other")
    (group / "small-s5").mkdir()  # under way: no final weights yet, so not counted
    plant(tmp_path / "screen" / "L4-g0.6-wd0.1", 0.8, 0.078, "other")
    lines = search.table_lines(tmp_path)
    assert "| screen/L4-g0.6-wd0.1 | other | 0.800 | 0.078 | 1.000 | 8.0 |" in lines
    assert lines[-1].strip() == ("L2-g1.0-wd0.1: small init inferential >= 0.9 on 3 of 5 finished (bar not met: 2 of 5 "
                                 "below 0.9); large init symmetric >= 0.9 on 4 of 5 finished (bar met)")


def test_the_bar_is_open_until_enough_seeds_have_finished():
    assert search.standing(3, 3) == "open: needs 4 of 5"
    assert search.standing(2, 3) == "open: needs 4 of 5"  # one miss still leaves 4 of 5 possible
    assert search.standing(1, 3) == "bar not met: 2 of 5 below 0.9"
    assert search.standing(4, 4) == "bar met"


def test_write_puts_the_table_between_the_markers_and_records_the_runs(tmp_path):
    plant(tmp_path / "runs" / "screen" / "L4-g0.6-wd0.1", 0.8, 0.078, "other")
    page = tmp_path / "README.md"
    page.write_text(f"before\n{search.BEGIN}\nold\n{search.END}\nafter\n")
    search.write_table(["| new |"], page)
    assert page.read_text() == f"before\n{search.BEGIN}\n| new |\n{search.END}\nafter\n"
    search.record_runs(tmp_path / "runs", tmp_path / "record")
    assert sorted(p.name for p in (tmp_path / "record" / "screen" / "L4-g0.6-wd0.1").iterdir()) == ["config.json", "metrics.jsonl"]
