"""Shared test factories (SAELens style): tiny configs built with overrides, seeded every test."""

import warnings

import pytest
import torch

from mechinit.config import RunConfig
from mechinit.presets import preset

warnings.filterwarnings("ignore", message="HookedTransformer is deprecated", category=DeprecationWarning)


@pytest.fixture(autouse=True)
def _seed_and_threads():
    torch.manual_seed(0)
    yield


def build_cfg(**overrides) -> RunConfig:
    """The ``tiny`` preset with dotted overrides, e.g. ``build_cfg(**{"init.gamma": 0.5})``."""
    return preset("tiny").with_overrides(overrides)


@pytest.fixture
def cfg_factory():
    return build_cfg


def stop_after_resume_point(monkeypatch, run, at: int | None = None) -> None:
    """Call ``run()`` (a training call) and end it right after its resume point at step ``at`` (the
    first one when ``None``) is saved, as a kill there would: ``KeyboardInterrupt``, expected here."""
    import mechinit.training.resume as resume_module

    original = resume_module.save

    def save_then_die(out, model, opt, c, step, *args):
        original(out, model, opt, c, step, *args)
        if at is None or step == at:
            raise KeyboardInterrupt

    monkeypatch.setattr(resume_module, "save", save_then_die)
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        monkeypatch.setattr(resume_module, "save", original)
