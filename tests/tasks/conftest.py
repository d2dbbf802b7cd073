"""The SCAN / COGS files the file-task tests read: the full copies in ../shared/data (or ``$MECHINIT_DATA``)
where present, else the slices committed in tests/data (tests/data/SOURCE.md), so a fresh clone skips
nothing. ``.ci/run`` sets ``MECHINIT_REQUIRE_DATA=1``: there the full copies must be present. ``FACTS``
holds the numbers each copy must give (line counts, longest sequence, vocabulary)."""

import os
from pathlib import Path

import pytest

FULL = Path(os.environ.get("MECHINIT_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
SLICES = Path(__file__).resolve().parents[1] / "data"
REQUIRED = os.environ.get("MECHINIT_REQUIRE_DATA") == "1"
DATA = FULL if FULL.is_dir() else SLICES
FACTS = ({"scan_addprim": (21890, 1208), "scan_simple": (16728, 4182), "cogs": (24155, 3000, 177, 835)} if DATA == FULL else
         {"scan_addprim": (3000, 200), "scan_simple": (2500, 300), "cogs": (1500, 300, 151, 668)})


@pytest.fixture
def shared_data() -> Path:
    assert not REQUIRED or FULL.is_dir(), f"MECHINIT_REQUIRE_DATA=1 but {FULL} does not exist (set MECHINIT_DATA)"
    return DATA
