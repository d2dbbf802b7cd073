"""The reference entries shipped in the repository's zoo load offline and match their recorded numbers."""

import json
import re

import pytest
import torch
from mechinit.zoo.store import SHIPPED, read_index

from mechinit import zoo
from mechinit.model.fastpath import last_logits

INDEX = read_index(SHIPPED)
SHIPPED_IDS = sorted(INDEX["entries"])
FP32 = [i for i in SHIPPED_IDS if INDEX["entries"][i].get("dtype", "float32") == "float32"]
HALF = [i for i in SHIPPED_IDS if i not in FP32]


def test_the_paper_pair_and_the_cpu_pair_are_shipped_with_their_aliases():
    aliases = INDEX["aliases"]
    assert aliases["small-init"].startswith("anchor-post-L2-d400-g0.80-") and aliases["large-init"].startswith("anchor-post-L2-d400-g0.50-")
    for name in ("cpu-small-init", "cpu-large-init"):
        assert {name, f"{name}-s0", f"{name}-s1", f"{name}-s2"} <= set(aliases)
        assert aliases[name] == aliases[f"{name}-s0"] and "-d128-" in aliases[name]
    assert aliases["paper-g0.8-replay"] != aliases["small-init"]  # a rerun that ended `other` did not take the alias
    assert aliases["paper-g0.8-replay-avx2"] == aliases["small-init"]  # the AVX2 rerun, inferential >= 0.9, took it
    assert aliases["paper-g0.8-first-replay"] == "anchor-post-L2-d400-g0.80-s1-76720d"  # the run it replaced keeps its id
    assert aliases["paper-g0.5-twin"] == aliases["large-init"]  # the twin, symmetric >= 0.9, took it
    assert aliases["paper-g0.5-s0"] == "anchor-post-L2-d400-g0.50-s0-50f812"  # the γ 0.5 run it replaced keeps its id


def test_the_zoo_docs_list_every_shipped_entry_and_state_its_size():
    docs = (SHIPPED.parents[1] / "docs" / "zoo.md").read_text()
    listed = set(re.findall(r"^\| `(anchor-[^`]+)`", docs, flags=re.M))
    assert listed == set(SHIPPED_IDS) == {p.name for p in SHIPPED.iterdir() if p.is_dir()}
    megabytes = sum(f.stat().st_size for f in SHIPPED.parent.rglob("*") if f.is_file()) / 1e6
    stated = re.search(r"`zoo/` holds \w+ entries, \*\*([0-9.]+) MB\*\* in all", docs)
    assert stated and abs(float(stated.group(1)) - megabytes) < 0.5, f"docs/zoo.md says {stated and stated.group(1)} MB, zoo/ holds {megabytes:.1f} MB"


def test_large_init_carries_its_own_runs_snapshots():
    info = zoo.card("large-init")
    assert info["snapshot_dtype"] == "float16" and info["snapshots"] == [0, 370, 1110, 1850, 2960, 4440, 6660, 8880]
    assert info["config"]["train"]["replay"] == "authors:1" and info["config"]["init"]["gamma"] == 0.5


def test_small_init_carries_six_snapshots_of_its_own_run():
    info = zoo.card("small-init")
    assert info["snapshot_dtype"] == "float16" and info["snapshots"] == [0, 370, 1110, 1850, 2960, 8880]
    retraced = json.loads((SHIPPED / INDEX["aliases"]["small-init"] / "snapshots-retraced.json").read_text())["steps"]
    assert retraced == info["snapshots"][:-1]  # all but the run's own final step came from the retrace


@pytest.mark.slow
def test_small_inits_retraced_snapshots_give_its_runs_recorded_numbers(monkeypatch, tmp_path):
    """A snapshot rebuilt by a retrace is the run's own: in fp16 it gives the run's recorded seen-pair loss (±0.01)
    and seen-pair and (4,3) accuracies (±0.005) at that step, as the final weights do."""
    from mechinit.runs import read_metrics

    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "empty-user-zoo"))
    entry = SHIPPED / INDEX["aliases"]["small-init"]
    retraced = json.loads((entry / "snapshots-retraced.json").read_text())["steps"]
    target = zoo.load_target("small-init")
    assert set(retraced) < set(target.snapshots) and max(target.snapshots) == 8880
    recorded = {row["step"]: row for row in read_metrics(entry)}
    for step in retraced:
        model = zoo.load(f"small-init@step{step}")
        fresh = target.task.evaluate(lambda t, m=model: last_logits(m, t))
        assert abs(fresh["seen_test_acc"] - recorded[step]["seen_test_acc"]) <= 0.005, step
        assert abs(fresh["seen_test_loss"] - recorded[step]["seen_test_loss"]) <= 0.01, step  # parts steps 370 apart
        for mapping in ("inferential", "symmetric"):
            assert abs(fresh["pairs"]["4,3"][mapping] - recorded[step]["pairs"]["4,3"][mapping]) <= 0.005, (step, mapping)


@pytest.mark.parametrize("entry", FP32)
def test_shipped_fp32_entry_matches_a_fresh_evaluation_exactly(entry, monkeypatch, tmp_path):
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "empty-user-zoo"))
    target = zoo.load_target(entry)
    summary = zoo.card(entry)["summary"]
    fresh = target.task.evaluate(lambda t: last_logits(target.model, t))
    assert fresh["seen_test_acc"] == summary["seen_test_acc"]
    assert fresh["pairs"]["4,3"]["inferential"] == summary["acc_43_inferential"]
    assert fresh["pairs"]["4,3"]["symmetric"] == summary["acc_43_symmetric"]
    assert fresh["pairs"]["4,3"]["label"] == summary["verdict_43"]


@pytest.mark.slow
@pytest.mark.parametrize("entry", HALF)
def test_shipped_fp16_weights_reproduce_the_fp32_accuracies_on_both_key_splits(entry, monkeypatch, tmp_path):
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "empty-user-zoo"))
    target = zoo.load_target(entry)
    reference = INDEX["entries"][entry]["fp32_reference"]["pairs"]["4,3"]
    fresh = target.task.evaluate(lambda t: last_logits(target.model, t))["pairs"]["4,3"]
    for split, got in (("test_keys", fresh), ("train_keys", fresh["train_keys"])):
        for mapping in ("inferential", "symmetric"):
            assert abs(got[mapping] - reference[split][mapping]) <= 0.005, (split, mapping)


SHIFT = {1: 5, 2: 1, 3: -2, 4: -8}  # the paper's single-anchor shifts (§3)


def paper_accuracy(model, split: str, n: int = 2000) -> dict[str, float]:
    """(4,3) scored from the paper's text alone, not through mechinit's task: sequences of 9 tokens from
    20–99, the key x at position p (0–6) with the anchors 4 and 3 right after it; test-split keys have
    x mod 9 = p (the authors' code; train-split keys the rest). Inferential answer x + (−8) + (−2);
    symmetric: (3,4)'s answer x − 6."""
    gen = torch.Generator().manual_seed(7)
    tokens = torch.randint(20, 100, (4 * n, 9), generator=gen)
    pos = torch.randint(0, 7, (4 * n,), generator=gen)
    keys = torch.randint(20, 100, (4 * n,), generator=gen)
    keep = (keys % 9 == pos) if split == "test" else (keys % 9 != pos)
    tokens, pos, keys = tokens[keep][:n], pos[keep][:n], keys[keep][:n]
    rows = torch.arange(len(tokens))
    tokens[rows, pos], tokens[rows, pos + 1], tokens[rows, pos + 2] = keys, 4, 3
    with torch.inference_mode():
        guess = model(tokens)[:, -1].argmax(-1)
    return {"inferential": float((guess == keys + SHIFT[4] + SHIFT[3]).float().mean()),
            "symmetric": float((guess == keys + SHIFT[3] + SHIFT[4] + 4).float().mean())}


@pytest.mark.parametrize("alias, verdict", [("small-init", "inferential"), ("large-init", "symmetric")])
def test_the_paper_pair_gives_the_papers_verdicts_by_an_evaluator_written_from_the_paper(alias, verdict, monkeypatch, tmp_path):
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "empty-user-zoo"))
    model = zoo.load(alias)
    assert model.cfg.d_model == 400
    for split in ("test", "train"):
        assert paper_accuracy(model, split)[verdict] >= 0.9, split


def test_cpu_seed0_entries_carry_float16_snapshots_for_the_eigenvalue_evolution():
    for alias in ("cpu-small-init", "cpu-large-init"):
        info = zoo.card(alias)
        assert info["snapshot_dtype"] == "float16" and len(info["snapshots"]) >= 10 and info["snapshots"][0] == 0
        assert zoo.load(f"{alias}@step{info['snapshots'][3]}").W_E.dtype.is_floating_point


@pytest.mark.parametrize("entry", SHIPPED_IDS)
def test_shipped_ids_still_equal_the_run_id_of_their_config(entry):
    """Config fields added later stay out of the id hash while at their defaults (config.LATER)."""
    from mechinit.files import read_json
    from mechinit.runs import load_run_config
    from mechinit.runs.ids import run_id

    expected = run_id(load_run_config(SHIPPED / entry))
    kernels = str(read_json(SHIPPED / entry / "config.json")["provenance"].get("cpu_capability")).lower()
    assert entry in (expected, f"{expected}-{kernels}")  # a rerun of one config on another kernel set: its own id


def test_zoo_list_and_the_cards_name_both_seeds_and_the_replay(capsys):
    from mechinit.cli import main

    assert main(["zoo", "list"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "authors:1" in rows[INDEX["aliases"]["small-init"]] and " 1/1 " in rows[INDEX["aliases"]["cpu-small-init-s1"]]
    card = (SHIPPED / INDEX["aliases"]["small-init"] / "README.md").read_text()
    assert "initial weights from the authors' seed 1, data and batch order from the authors' seed 1; replay `authors:1`" in card
