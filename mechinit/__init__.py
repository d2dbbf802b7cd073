"""mechinit: how the scale of a transformer's initial weights decides reasoning versus memorising."""

__version__ = "0.1.0"
