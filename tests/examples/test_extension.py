"""Extension from user code: the worked example runs, and a third-party package's entry points add
a task and a probe without any change to mechinit."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mechinit.probes.base import ProbeError

from mechinit import probes
from mechinit.config import ConfigError
from mechinit.tasks import TASKS, register

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run_mechinit(args, env_path: Path | None = None, script: list[str] | None = None):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(env_path or ""), str(ROOT)]))}
    return subprocess.run([sys.executable, *(script or ["-m", "mechinit"]), *args], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.slow
def test_the_worked_example_registers_trains_and_probes(tmp_path):
    done = run_mechinit([str(tmp_path)], script=[str(EXAMPLES / "extension_demo.py")])
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((tmp_path / "probe" / "results.json").read_text())["run"]
    entropy = results["attention_entropy"]["numbers"]["entropy"]
    assert list(entropy) == ["blocks.0.attn.hook_pattern", "blocks.1.attn.hook_pattern"]
    assert all(0.0 <= h <= 2.2 for per_head in entropy.values() for h in per_head)  # at most log(9 positions)
    assert results["embedding_cosine"]["numbers"]["groups"] == {"anchors": 4, "keys": 5}
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["train_loss"] < rows[1]["train_loss"] and set(rows[-1]["acc"]) == {"seen", "held_out"}


def test_example_files_stay_under_sixty_lines():
    for name, limit in (("three_anchor.py", 80), ("attention_entropy.py", 60)):  # the task also shows an option and a vocabulary
        assert len((EXAMPLES / name).read_text().splitlines()) < limit, name


def fake_plugin_package(root: Path) -> Path:
    """An importable package plus a ``.dist-info`` whose entry points importlib.metadata reads, as pip
    would install it: one task, one probe, one probe that fails to import, one that takes a used name."""
    pkg = root / "demo_plugin"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    shutil.copy(EXAMPLES / "three_anchor.py", pkg / "three_anchor.py")
    shutil.copy(EXAMPLES / "attention_entropy.py", pkg / "attention_entropy.py")
    (pkg / "broken.py").write_text("raise ImportError('this plugin is broken on purpose')\n")
    info = root / "demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[mechinit.tasks]\nthree-anchor = demo_plugin.three_anchor:ThreeAnchorTask\n\n"
        "[mechinit.probes]\nattention_entropy = demo_plugin.attention_entropy\nbroken_probe = demo_plugin.broken\n"
        "condensation = demo_plugin.attention_entropy\n")
    return root


@pytest.mark.slow
def test_a_plugin_package_adds_a_task_and_a_probe_through_entry_points(tmp_path):
    site = fake_plugin_package(tmp_path / "site")
    run = tmp_path / "run"
    trained = run_mechinit(["train", "--preset", "tiny", "--set", "task.name=three-anchor", "--out", str(run), "--quiet"], site)
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert "verdict: seen" in trained.stdout
    probed = run_mechinit(["probe", str(run), "--probe", "attention_entropy", "--out", str(tmp_path / "p"), "--quiet"], site)
    assert probed.returncode == 0, probed.stderr[-2000:]
    assert "attention_entropy" in json.loads((tmp_path / "p" / "results.json").read_text())["run"]
    problems = [line for line in probed.stderr.splitlines() if line.startswith("mechinit: plugin")]
    assert len(problems) == 2
    assert "'broken_probe'" in problems[0] and "demo-plugin" in problems[0] and "broken on purpose" in problems[0]
    assert "'condensation'" in problems[1] and "already registered" in problems[1]
    # the built-in probes keep working next to the broken plugin
    builtin = run_mechinit(["probe", str(run), "--probe", "condensation", "--out", str(tmp_path / "p2"), "--quiet"], site)
    assert builtin.returncode == 0 and "threshold" in (tmp_path / "p2" / "results.json").read_text()


def test_register_refuses_a_used_name_and_a_non_probe(monkeypatch):
    monkeypatch.setattr(probes, "PROBES", dict(probes.PROBES))
    with pytest.raises(ProbeError, match="probe 'condensation' is already registered"):
        probes.register("condensation", lambda *a, **k: None, probes.get("condensation").Config)
    with pytest.raises(ProbeError, match="needs a callable run and a Config"):
        probes.register("mine", lambda *a, **k: None, dict)
    with pytest.raises(ConfigError, match="task 'anchor' is already registered"):
        register("anchor", TASKS["anchor"])
    with pytest.raises(ConfigError, match="is not a task class"):
        register("mine", object)
