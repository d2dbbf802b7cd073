"""Tests that read the real SCAN / COGS files in ../shared/data (or ``$MECHINIT_DATA``).

Where that folder is absent (a user's clone) they are skipped with a reason; ``.ci/run`` sets
``MECHINIT_REQUIRE_DATA=1``, which turns the skip into a failure, so CI always runs them."""

import os
from pathlib import Path

import pytest

SHARED_DATA = Path(os.environ.get("MECHINIT_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
REQUIRED = os.environ.get("MECHINIT_REQUIRE_DATA") == "1"

needs_data = pytest.mark.skipif(not SHARED_DATA.is_dir() and not REQUIRED,
                                reason=f"{SHARED_DATA} not found (the real SCAN/COGS files); set MECHINIT_DATA")


@pytest.fixture
def shared_data() -> Path:
    assert SHARED_DATA.is_dir(), f"MECHINIT_REQUIRE_DATA=1 but {SHARED_DATA} does not exist (set MECHINIT_DATA)"
    return SHARED_DATA
