"""The errors a user can cause, in one light module (no torch), so the CLI can catch them without
importing the heavy modules that raise them. Each is re-exported where it is raised."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value or key is invalid; the message names the field and what is allowed."""


class RunFolderError(ValueError):
    """A path is not a usable run folder (missing, not a run, already holding one, not writable)."""


class ZooError(ValueError):
    """Unknown id, bad id, a second publisher of the same id, or an entry that fails its checks."""


class ProbeError(ValueError):
    """A probe cannot run on this target (missing snapshots, no attention, bad config)."""


class TrainingInterrupted(RunFolderError):
    """Ctrl-C or SIGTERM: a resume point was saved; the message names the ``--resume`` command."""


class TrainingDiverged(RuntimeError):
    """The loss became NaN or inf; the run folder keeps the last good snapshot."""


USER_ERRORS = (ConfigError, RunFolderError, ZooError, ProbeError)
__all__ = ["ConfigError", "RunFolderError", "ZooError", "ProbeError", "TrainingDiverged", "TrainingInterrupted", "USER_ERRORS"]
