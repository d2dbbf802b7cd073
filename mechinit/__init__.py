"""mechinit: how the scale of a transformer's initial weights decides reasoning versus memorising.

One import name: the probes and the zoo install as ``mechinit.probes`` and ``mechinit.zoo`` (the
repository keeps them in ``probes/`` and ``zoo/`` beside ``mechinit/``; pyproject's package-dir maps
them), the command line as ``mechinit.cli``."""

from pathlib import Path as _Path

__version__ = "0.2.0"


def fate(run, at=None):
    """Predict a run's final (4,3) verdict from what it holds at or before step ``at``
    (:func:`mechinit.readout.fate`; imported on first use)."""
    from mechinit.readout import fate as _fate

    return _fate(run, at)

# In a source checkout (not an installed wheel), let `mechinit.probes` and `mechinit.zoo` resolve to
# the folders beside this one, as the installed distribution lays them out.
_root = _Path(__file__).resolve().parent.parent
if (_root / "pyproject.toml").is_file() and (_root / "probes" / "__init__.py").is_file() and (_root / "zoo" / "__init__.py").is_file():
    __path__.append(str(_root))  # noqa: F821  (a package's __path__)
