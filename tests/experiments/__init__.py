"""Tests of the scripts under experiments/ (loaded by path: experiments/ is not a package)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def experiment_script(relpath: str):
    """The module at ``experiments/relpath``, loaded by path."""
    spec = importlib.util.spec_from_file_location(Path(relpath).stem, ROOT / "experiments" / relpath)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
