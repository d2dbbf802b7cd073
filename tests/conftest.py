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
