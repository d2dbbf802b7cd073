"""The 0.2 module paths (``mechinit.train``, ``mechinit.sweep``, ...) still import for one release, warn
with the new path, and hand on the very same objects; the new paths import without a warning."""

import importlib
import subprocess
import sys
import warnings

import pytest

from mechinit.moved import MOVED


@pytest.mark.parametrize("old, new", sorted(MOVED.items()))
def test_an_old_path_warns_and_gives_the_same_objects(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        stand_in = importlib.import_module(old)
    target = importlib.import_module(new)
    public = [k for k in vars(target) if not k.startswith("_")]
    assert public and all(getattr(stand_in, k) is getattr(target, k) for k in public)


def test_from_old_import_name_works_in_a_fresh_interpreter():
    code = ("import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            "try:\n    from mechinit.train import train\nexcept DeprecationWarning as w:\n    print('warned:', w)\n"
            "warnings.simplefilter('ignore')\nfrom mechinit.train import train\nfrom mechinit.training.trainer import train as t2\n"
            "print(train is t2)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "warned: mechinit.train moved to mechinit.training.trainer" in out and out.strip().endswith("True")


def test_the_packages_that_kept_their_names_keep_their_public_functions_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        from mechinit import runs
        from mechinit.model import build_model, new_model  # noqa: F401
        from mechinit.runs import load_run_config, read_metrics  # noqa: F401

    assert runs.read_metrics is read_metrics


def test_a_renamed_function_keeps_its_old_name_under_the_old_path():
    sys.modules.pop("mechinit.targets", None)
    with pytest.warns(DeprecationWarning):
        from mechinit.targets import load_target
    from mechinit.runs.targets import target_from_path

    assert load_target is target_from_path


def test_a_name_that_never_existed_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("mechinit.no_such_module")
