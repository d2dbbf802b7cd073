"""The CLI parses its arguments before anything heavy is imported: help and the zoo's JSON/sha256
commands never import torch or TransformerLens (a behaviour test; wall times in docs/benchmarks.md)."""

import subprocess
import sys

import pytest

PROBE = """
import sys
from mechinit.cli import main
try:
    code = main({argv!r})
except SystemExit as e:
    code = e.code
print("CODE", code)
print("HEAVY", sorted(m for m in ("torch", "transformer_lens") if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["zoo", "list"], ["zoo", "verify"], ["zoo", "list", "--wide"]])
def test_light_commands_import_neither_torch_nor_transformer_lens(argv, tmp_path):
    done = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, timeout=120,
                          env={"MECHINIT_ZOO": str(tmp_path / "zoo"), "PATH": "/usr/bin:/bin"})
    lines = done.stdout.strip().splitlines()
    assert lines[-2] == "CODE 0", done.stderr
    assert lines[-1] == "HEAVY []"


def test_zoo_list_fits_100_columns(capsys):
    from mechinit.cli import main

    assert main(["zoo", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) >= 7 and max(map(len, out)) <= 100
    shown = {name for line in out[1:] for name in line.split()[1].split(",")}
    assert {"small-init", "large-init", "cpu-small-init", "cpu-large-init"} <= shown  # the everyday names stay whole
    assert "NaN" not in " ".join(out)  # a missing number reads null
    assert main(["zoo", "list", "--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()
    assert max(map(len, wide)) > 100 and "acc_43_inferential" in wide[0]

