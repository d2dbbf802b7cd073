"""scripts/gpu-check.sh, rehearsed on the CPU with tiny shapes (GPU_CHECK_TINY=1): the one script a
lent GPU machine runs must reach its table, also when $OUT does not exist yet."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_gpu_check_rehearsal_writes_its_table_into_a_new_out_folder(tmp_path):
    out = tmp_path / "not" / "yet"
    env = {**os.environ, "GPU_CHECK_TINY": "1", "OUT": str(out), "PYTHON": sys.executable}
    done = subprocess.run(["bash", "scripts/gpu-check.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    table = (out / "gpu-check.md").read_text().splitlines()
    rows = [line for line in table if line.startswith("| g0.")]
    assert sorted(r.split("|")[1].strip() for r in rows) == ["g0.5-bf16-false", "g0.5-bf16-true", "g0.8-bf16-false", "g0.8-bf16-true"]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == "24" and 0.0 <= float(cells[2]) <= 1.0  # step reached, a seen-pair accuracy
    assert any("K= 2: ensemble" in line for line in table)
