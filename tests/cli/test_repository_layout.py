"""What a clone holds: weights only in ``zoo/`` (plus the resume states of at most two runs in progress,
``experiments/<study>/in-progress/<run>/resume/``), nothing pickled, and ``docs/`` of ``.md``, ``.png``
and ``.svg`` only. Read from git's index, so it checks what a clone gets, not what lies in a working
folder."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEIGHT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle", ".npy", ".npz")
IN_PROGRESS = ("experiments", "in-progress", "resume", "state.safetensors")


def tracked() -> list[str]:
    """The paths in git's index (the tests ship only in a checkout, never in the wheel)."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def is_resume_state(path: str) -> bool:
    """``experiments/<study>/in-progress/<run>/resume/state.safetensors``."""
    parts = path.split("/")
    return len(parts) == 6 and (parts[0], parts[2], parts[4], parts[5]) == IN_PROGRESS


def test_weights_are_tracked_only_in_the_zoo_and_in_at_most_two_resume_states():
    weights = [p for p in tracked() if p.endswith(WEIGHT_SUFFIXES)]
    outside = [p for p in weights if not p.startswith("zoo/") and not is_resume_state(p)]
    assert outside == []
    assert len([p for p in weights if is_resume_state(p)]) <= 2
    assert [p for p in weights if p.startswith("zoo/") and not p.endswith(".safetensors")] == []


def test_a_tracked_resume_state_comes_with_the_config_and_metrics_it_resumes_from():
    for state in filter(is_resume_state, tracked()):
        run = ROOT / Path(state).parent.parent
        assert (run / "config.json").is_file() and (run / "metrics.jsonl").is_file(), run


def test_docs_hold_only_markdown_and_images():
    assert [p for p in tracked() if p.startswith("docs/") and not p.endswith((".md", ".png", ".svg"))] == []


@pytest.mark.parametrize("path, expected", [
    ("experiments/seed-odds/in-progress/d-swap/resume/state.safetensors", True),
    ("experiments/seed-odds/d-swap/resume/state.safetensors", False),
    ("experiments/seed-odds/in-progress/d-swap/checkpoints/step0.safetensors", False),
    ("zoo/entries/x/model.safetensors", False),
])
def test_which_paths_count_as_a_resume_state(path, expected):
    assert is_resume_state(path) is expected
