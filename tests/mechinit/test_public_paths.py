"""The public faces of the stage packages import without a warning; the 0.2 module paths, kept for one
release with a warning in 0.3, are gone (CHANGELOG.md 0.3.0 maps each to its new path)."""

import importlib
import sys
import warnings

import pytest

OLD_PATHS = ("mechinit.train", "mechinit.sweep", "mechinit.sweep_report", "mechinit.targets", "mechinit.init",
             "mechinit.fastpath", "mechinit.card", "mechinit.ids", "mechinit.replay", "mechinit.schedule")


def test_the_packages_that_kept_their_names_keep_their_public_functions_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from mechinit import runs
        from mechinit.model import build_model, new_model  # noqa: F401
        from mechinit.runs import load_run_config, read_metrics  # noqa: F401
        from mechinit.sweeps.grid import run_sweep  # noqa: F401
        from mechinit.training.trainer import train  # noqa: F401

    assert runs.read_metrics is read_metrics


@pytest.mark.parametrize("old", OLD_PATHS)
def test_a_02_module_path_is_an_import_error_now(old):
    sys.modules.pop(old, None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
