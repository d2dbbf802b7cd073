"""The reference entries shipped inside the package load offline and match their recorded numbers."""

import pytest

from mechinit import zoo
from mechinit.fastpath import last_logits
from mechinit.zoo.store import SHIPPED, read_index

SHIPPED_IDS = sorted(read_index(SHIPPED)["entries"])


def test_the_reference_pair_is_shipped_with_aliases():
    aliases = read_index(SHIPPED)["aliases"]
    for preset in ("small-init", "large-init"):
        assert {preset, f"{preset}-s0", f"{preset}-s1", f"{preset}-s2"} <= set(aliases)
        assert aliases[preset] == aliases[f"{preset}-s0"]
    assert len(SHIPPED_IDS) == 6
    assert sum(f.stat().st_size for f in SHIPPED.rglob("*") if f.is_file()) < 50e6


@pytest.mark.parametrize("entry", SHIPPED_IDS)
def test_shipped_entry_matches_a_fresh_evaluation(entry, monkeypatch, tmp_path):
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "empty-user-zoo"))
    target = zoo.load_target(entry)
    summary = zoo.card(entry)["summary"]
    fresh = target.task.evaluate(lambda t: last_logits(target.model, t))
    assert fresh["seen_test_acc"] == summary["seen_test_acc"]
    assert fresh["pairs"]["4,3"]["inferential"] == summary["acc_43_inferential"]
    assert fresh["pairs"]["4,3"]["symmetric"] == summary["acc_43_symmetric"]
    assert fresh["pairs"]["4,3"]["label"] == summary["verdict_43"]


def test_seed0_entries_carry_float16_snapshots_for_the_eigenvalue_evolution():
    for alias in ("small-init", "large-init"):
        info = zoo.card(alias)
        assert info["snapshot_dtype"] == "float16" and len(info["snapshots"]) >= 10 and info["snapshots"][0] == 0
        assert zoo.load(f"{alias}@step{info['snapshots'][3]}").W_E.dtype.is_floating_point


@pytest.mark.parametrize("entry", SHIPPED_IDS)
def test_shipped_ids_still_equal_the_run_id_of_their_config(entry):
    """Config fields added later stay out of the id hash while at their defaults (config.LATER)."""
    from mechinit.ids import run_id
    from mechinit.runs import load_run_config

    assert run_id(load_run_config(SHIPPED / entry)) == entry
