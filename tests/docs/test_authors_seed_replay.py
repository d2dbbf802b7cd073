"""docs/cpu-regime/authors_seed.py replays the authors' seed-1 draws (data, initial weights, shuffles).
Its fingerprints: the data rows their notebook printed, and the step-0 accuracies their log recorded."""

import importlib.util
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).parents[2] / "docs" / "cpu-regime" / "authors_seed.py"


@pytest.fixture(scope="module")
def replay():
    spec = importlib.util.spec_from_file_location("authors_seed", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def data(replay):
    return replay.authors_data()  # 900k sequences, drawn once for both tests


def test_the_replayed_data_has_the_rows_their_notebook_printed(replay, data):
    for name, row in replay.PRINTED.items():
        assert data[name][0].tolist() == row
    assert {len(v) for n, v in data.items() if n.endswith("_xm0")} == {5625} and {len(v) for n, v in data.items() if n.endswith("_xel")} == {50625}
    rows = torch.from_numpy(data["32_xm0"])
    pos = (rows[:, :9] == 3).int().argmax(1) - 1  # the key sits right before the anchor pair (3, 2)
    keys = rows[torch.arange(len(rows)), pos]
    assert bool((keys % 9 == pos).all())  # test-split keys: x mod 9 == its position
    assert bool((rows[:, -1] == keys - 2 + 1).all())  # (3,2): x − 2 + 1


def test_the_replayed_init_gives_their_step_0_accuracies(replay, data):
    from mechinit.model import new_model
    from mechinit.train import load_initial_weights

    weights, shuffles = replay.authors_init_and_shuffles(3)
    assert len(shuffles) == 3 and len(set(shuffles)) == 3
    cfg = replay.paper_code_config()
    model, _ = new_model(cfg.model, cfg.init, 0)
    load_initial_weights(model, weights)
    with torch.inference_mode():
        for name in ("13_xm0", "33_xm0"):
            rows = torch.from_numpy(data[name])
            right = int((model(rows[:, :9])[:, -1].argmax(-1) == rows[:, -1]).sum())
            assert right == round(replay.STEP0[name] * len(rows))  # 9 and 13 of 5,625, as their log has it
