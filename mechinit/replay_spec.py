"""The text of ``train.replay`` — ``SOURCE:SEED[:PART]`` — parsed and checked (no torch: the config
validates it; :mod:`mechinit.training.replay` draws what it names)."""

from __future__ import annotations

from dataclasses import dataclass

from mechinit.errors import ConfigError

SOURCES = ("authors",)
PARTS = ("both", "init", "data")  # "both" is written without a part: "authors:1"


@dataclass(frozen=True)
class ReplaySpec:
    """A parsed ``train.replay``: whose run (``source``), its ``seed``, and which ``part`` of its draws."""

    source: str
    seed: int
    part: str = "both"

    @property
    def init(self) -> bool:
        """Whether the initial weights are replayed."""
        return self.part in ("both", "init")

    @property
    def data(self) -> bool:
        """Whether the training data and its batch order are replayed."""
        return self.part in ("both", "data")

    def text(self) -> str:
        return f"{self.source}:{self.seed}" + ("" if self.part == "both" else f":{self.part}")


def parse(text: str) -> ReplaySpec:
    """``SOURCE:SEED[:PART]`` → :class:`ReplaySpec`, or :class:`ConfigError` naming what is wrong."""
    rule = (f"train.replay = {text!r}: write SOURCE:SEED[:PART] with SOURCE in {list(SOURCES)}, SEED an integer >= 0, "
            f"PART in {list(PARTS[1:])} (none: both)")
    bits = str(text).split(":")
    if len(bits) not in (2, 3) or bits[0] not in SOURCES or not bits[1].isdigit() or int(bits[1]) >= 2**32:
        raise ConfigError(rule)
    part = bits[2] if len(bits) == 3 else "both"
    if part not in PARTS:
        raise ConfigError(rule)
    return ReplaySpec(bits[0], int(bits[1]), part)
