"""mechinit: how the scale of a transformer's initial weights decides reasoning versus memorising.

One import name: the probes and the zoo install as ``mechinit.probes`` and ``mechinit.zoo`` (the
repository keeps them in ``probes/`` and ``zoo/`` beside ``mechinit/``; pyproject's package-dir maps
them), the command line as ``mechinit.cli``."""

__version__ = "0.5.1"


def fate(run, at=None):
    """Predict a run's final (4,3) verdict from what it holds at or before step ``at``
    (:func:`mechinit.readout.fate`; imported on first use)."""
    from mechinit.readout import fate as _fate

    return _fate(run, at)
