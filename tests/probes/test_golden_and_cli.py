import json
import shutil

import pytest

from mechinit.cli import main
from mechinit.training.trainer import train
from tests.conftest import build_cfg
from tests.probes.golden import GOLDEN, golden_headlines


def test_golden_headlines_of_a_fixed_seeded_tiny_model():
    expected = json.loads(GOLDEN.read_text())
    got = golden_headlines()
    for probe, headline in expected.items():
        for key, value in headline.items():
            _assert_close(got[probe][key], value, (probe, key))


def _assert_close(got, want, where) -> None:
    """Floats (also inside dicts and lists) to float32 precision, as any CPU kernel set gives them."""
    if isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-4, abs=1e-6), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for k in want:
            _assert_close(got[k], want[k], (*where, k))
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_close(g, w, (*where, i))
    else:
        assert got == want, where


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "tiny"
    train(build_cfg(), out, quiet=True)
    return out


def test_probe_two_targets_side_by_side(run_dir, tmp_path, capsys):
    other = tmp_path / "other"
    train(build_cfg(**{"init.gamma": 0.4, "train.epochs": 1}), other, quiet=True)
    out = tmp_path / "report"
    assert main(["probe", str(run_dir), str(other), "--out", str(out), "--quiet", "--set", "condensation.threshold=0.9",
                 "--set", "representation_tsne.n_tsne=100"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 * 10 + 1 and lines[-1] == f"report: {out / 'report.html'}"
    assert lines[0].startswith("tiny information_flow: mechanism=")
    results = json.loads((out / "results.json").read_text())
    assert list(results) == ["tiny", "other"]
    assert list(results["tiny"]) == ["information_flow", "representation_tsne", "cosine_maps", "condensation", "embedding_spectrum",
                                     "embedding_cosine", "patching", "logit_lens", "key_position", "deviation"]
    assert results["tiny"]["condensation"]["meta"]["threshold"] == 0.9
    assert results["tiny"]["embedding_spectrum"]["numbers"]["evolution"]["steps"] == [0, 2, 6, 13, 32]
    page = (out / "report.html").read_text()
    assert page.count("class='row'") == 10 and "Plotly" in page and "<script src=" not in page  # self-contained


def test_probe_a_checkpoint_file(run_dir, tmp_path, capsys):
    assert main(["probe", str(run_dir / "checkpoints" / "step2.safetensors"), "--probe", "condensation", "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert "tiny@step2 condensation:" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["unknown_probe", "missing_target", "not_a_model", "needs_snapshots", "bad_set", "three_targets"])
def test_probe_bad_input_one_line_exit_2(case, run_dir, tmp_path, capsys):
    bare = tmp_path / "bare"
    shutil.copytree(run_dir, bare, ignore=shutil.ignore_patterns("checkpoints"))
    junk = tmp_path / "junk.txt"
    junk.write_text("hello")
    args = {
        "unknown_probe": [str(run_dir), "--probe", "attention_entropy"],
        "missing_target": [str(tmp_path / "nowhere")],
        "not_a_model": [str(junk)],
        "needs_snapshots": [str(bare), "--probe", "embedding_spectrum", "--set", "embedding_spectrum.evolution=on"],
        "bad_set": [str(run_dir), "--set", "threshold=0.5"],
        "three_targets": [str(run_dir)] * 3,
    }[case]
    out = tmp_path / "out"
    assert main(["probe", *args, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mechinit: error:")
    assert not out.exists()
