"""``mechinit paper``: every claim computed from its evidence against its criterion, the fixed schema, and
bad input refused with one line before anything is written."""

import json
import shutil
from pathlib import Path

import pytest

from mechinit import claims
from mechinit.cli import main

ROOT = Path(__file__).parents[2]
KEYS = {"id", "statement", "paper_figure", "criterion", "verdict", "evidence", "figure"}


def planted(small: dict, large: dict) -> claims.Sources:
    """Sources whose pair numbers are planted (no model is loaded)."""
    s = claims.Sources(ROOT)
    for alias, numbers in (("small-init", small), ("large-init", large)):
        s.pair[alias] = {"id": f"planted-{alias}", **numbers}
        s.snapshots[alias] = [0, 370, 1850, 8880] if numbers["probes"]["embedding_spectrum"].get("half_growth_step") else []
    return s


def pair_numbers(inf, sym, mechanism, key_mass, gap, groups, rank):
    return {"eval": {"inferential": inf, "symmetric": sym, "label": "x"},
            "probes": {"information_flow": {"mechanism": mechanism, "key_to_anchor_mass": key_mass, "anchors_to_last_mass": 0.5},
                       "cosine_maps": {"parallelism_gap": gap}, "condensation": {"n_groups_90": groups},
                       "embedding_spectrum": {"effective_rank": rank}}}


PAPERLIKE = (pair_numbers(0.96, 0.0, "inferential-flow", 0.66, 0.61, 1, 13.7), pair_numbers(0.0, 0.97, "symmetric-flow", 0.22, 0.05, 180, 71.0))
OPPOSITE = (pair_numbers(0.0, 0.97, "symmetric-flow", 0.2, 0.0, 50, 70.0), pair_numbers(0.96, 0.0, "inferential-flow", 0.7, 0.6, 1, 10.0))


def test_every_claim_has_the_fixed_schema_and_a_computed_verdict():
    result = {"claims": [claim(planted(*PAPERLIKE)) for claim in claims.CLAIMS]}
    assert [c["id"] for c in result["claims"]] == [f"C{i}" for i in range(1, 11)]
    for c in result["claims"]:
        assert set(c) == KEYS and c["verdict"] in claims.VERDICTS and c["evidence"]["numbers"], c["id"]
        if c["verdict"] == "not run":
            assert "needs" in c["evidence"]["numbers"], c["id"]
    json.dumps(result)


@pytest.mark.parametrize("claim, paperlike, opposite", [
    (claims.c3, "reproduced", "not reproduced"), (claims.c4, "reproduced", "not reproduced"),
    (claims.c5, "reproduced", "not reproduced"), (claims.c6, "partly", "not reproduced")])
def test_verdicts_follow_the_numbers(claim, paperlike, opposite):
    assert claim(planted(*PAPERLIKE))["verdict"] == paperlike
    assert claim(planted(*OPPOSITE))["verdict"] == opposite


def test_c1_is_partly_when_only_the_pair_holds():
    assert claims.c1(planted(*PAPERLIKE))["verdict"] == "partly"  # our own finished gamma 0.8 seed ends `other`
    assert claims.c1(planted(*OPPOSITE))["verdict"] == "not reproduced"


@pytest.mark.parametrize("half_growth_step, verdict", [
    ([370, 1850, 1850, 8880], "reproduced"),  # the top eigenvalues grow one after another
    ([1850, 1850, 1850, 1850], "partly"),  # all at once: low rank, but no stages
    ([0, 370, 1850, 1850], "partly"),  # the top one was there at initialisation: it did not grow
    ([None, 370, 1850, 8880], "partly"),  # a step unknown: not counted as staged
    (None, "partly")])  # final weights only
def test_c6_reads_the_stages_from_small_inits_snapshots_not_from_having_them(half_growth_step, verdict):
    small, large = PAPERLIKE
    small = {**small, "probes": {**small["probes"], "embedding_spectrum": {"effective_rank": 13.7, "half_growth_step": half_growth_step}}}
    record = claims.c6(planted(small, large))
    assert record["verdict"] == verdict
    assert ("at steps" in record["evidence"]["numbers"]["staged growth"]) == (half_growth_step is not None)


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["paper", "--out", str(a_file)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert main(["paper", "--out", str(tmp_path / "o"), "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "lacks experiments" in err and not (tmp_path / "o").exists()


def test_a_zoo_whose_pair_is_not_the_papers_is_refused(tmp_path, capsys):
    from mechinit.zoo.store import SHIPPED, read_index

    index = read_index(SHIPPED)
    cpu = index["aliases"]["cpu-small-init"]
    shutil.copytree(SHIPPED / cpu, tmp_path / "zoo" / cpu)
    (tmp_path / "zoo" / "index.json").write_text(json.dumps({"entries": {cpu: index["entries"][cpu]}, "aliases": {"small-init": cpu}}))
    assert main(["paper", "--out", str(tmp_path / "o"), "--zoo", str(tmp_path / "zoo")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "paper-width pair" in err and "d_model 128" in err


@pytest.mark.slow
def test_the_command_on_the_shipped_pair_then_again_from_its_cache(tmp_path, capsys):
    assert main(["paper", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "claims.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in result["claims"]}
    assert verdicts["C3"] == verdicts["C5"] == "reproduced" and verdicts["C1"] in ("reproduced", "partly")
    assert verdicts["C6"] in ("reproduced", "partly") and (tmp_path / "paper.html").stat().st_size > 100_000
    capsys.readouterr()
    assert main(["paper", "--out", str(tmp_path)]) == 0
    assert "reused" in capsys.readouterr().out


@pytest.mark.browser
def test_the_page_is_whole_in_chromium_at_both_widths(tmp_path):
    from mechinit.claims_page import render
    from tests.probes.test_report_browser import _check_page

    page = tmp_path / "paper.html"
    page.write_text(render({"claims": [claim(planted(*PAPERLIKE)) for claim in claims.CLAIMS]}))
    _check_page(page, tmp_path, "paper")


@pytest.mark.parametrize("rising, verdict", [(True, "reproduced"), (False, "not reproduced")])
def test_c9_reads_every_setup_and_the_five_seed_runs_on_both_kernel_sets(tmp_path, rising, verdict):
    results = tmp_path / claims.OTHER
    results.mkdir(parents=True)
    values = [-0.1, 0.0, 0.2, 0.9] if rising else [0.3, 0.1, -0.2, -0.5]
    cells = [{"axes": {"init.gamma": g}, "delta_loss": {"mean": v, "std": 0.1, "n": 5}} for g, v in zip((0.3, 0.5, 0.8, 1.0), values)]
    for file in ("c9-transformer.json", "c9-memory12.json", "c9-emb-mlp.json", *claims.FIVE_SEEDS.values()):
        (results / file).write_text(json.dumps({"cells": cells}))
    record = claims.c9(claims.Sources(tmp_path))
    assert record["verdict"] == verdict and len(record["evidence"]["numbers"]["setups"]) == 5
