import pytest

from mechinit.training.trainer import train
from tests.conftest import build_cfg


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished tiny run (its snapshots, metrics and final weights), one per test module."""
    out = tmp_path_factory.mktemp("runs") / "tiny"
    train(build_cfg(), out, quiet=True)
    return out
