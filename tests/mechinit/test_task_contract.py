"""Tasks own their options and their metric vocabulary (issue 14, item 4).

Old config files (written while ``TaskConfig`` was the union of every task's fields) load unchanged
and keep their ids; a task's options are refused on another task; the generic modules name no task
metric; ``register`` checks the :class:`mechinit.tasks.Task` protocol."""

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from mechinit.config import ConfigError, RunConfig, TaskConfig, TaskOptions
from mechinit.presets import preset
from mechinit.runs.ids import run_id
from mechinit.tasks import TASKS, register, vocabulary_of
from mechinit.tasks.vocabulary import DEFAULT

ROOT = Path(__file__).resolve().parents[2]
GENERIC_MODULES = ["mechinit/cli.py", "mechinit/runs/card.py", "mechinit/runs/lifecycle.py", "mechinit/sweeps/grid.py", "mechinit/sweeps/report.py", "mechinit/runs/targets.py",
                   "probes/report.py", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "zoo").glob("*.py"))]


def _sections(path: Path) -> dict:
    data = json.loads(path.read_text())
    return {k: data[k] for k in RunConfig.SECTIONS}


def test_the_shipped_entries_config_files_load_unchanged_and_keep_their_ids():
    files = sorted((ROOT / "zoo" / "entries").glob("*/config.json"))
    assert [f.parent.name for f in files] == sorted(json.loads((ROOT / "zoo" / "entries" / "index.json").read_text())["entries"])
    for path in files:
        data = _sections(path)
        assert {"variant", "groups", "label_threshold"} <= set(data["task"])  # written while TaskConfig was a union
        cfg = RunConfig.from_dict(data)
        kernels = str(json.loads(path.read_text())["provenance"].get("cpu_capability")).lower()
        assert path.parent.name in (run_id(cfg), f"{run_id(cfg)}-{kernels}")  # a rerun on another kernel set: its own id
        assert cfg.task.options.variant == "paper" and cfg.task.to_dict()["variant"] == "paper"


# ids computed before tasks owned their options (main at 8c682f5), one per task and option
IDS_BEFORE = {
    ("cpu-small-init", ()): "anchor-post-L2-d128-g1.00-s0-35fc01",
    ("cpu-small-init", (("task.variant", "app-g"), ("task.groups", "2"))): "anchor-post-L2-d128-g1.00-s0-8d8f21",
    ("paper-code", ()): "anchor-post-L2-d400-g0.80-s0-ce3620",
    ("reasoning-memory", (("task.memory_fraction", "0.3"), ("task.reasoning_anchors", "3"))): "reasoning-memory-post-L2-d128-g1.00-s0-d8a9a2",
    ("prontoqa", (("task.chain_length", "2"),)): "prontoqa-pre-L2-d128-g0.50-s0-f2b090",
    ("scan", (("task.data_dir", "/y"), ("task.split", "simple"))): "scan-pre-L2-d128-g0.50-s0-e1006e",
    ("cogs", (("task.data_dir", "/x"),)): "cogs-pre-L2-d128-g0.50-s0-290d77",
    ("addition", ()): "addition-pre-L2-d128-g0.50-s0-32ebe2",
}


@pytest.mark.parametrize("name,sets", list(IDS_BEFORE))
def test_run_ids_are_the_ones_minted_before_tasks_owned_their_options(name, sets):
    assert run_id(preset(name).with_overrides(dict(sets))) == IDS_BEFORE[(name, sets)]


def test_a_union_era_file_of_another_task_loads_and_a_foreign_option_is_refused():
    union = {"name": "scan", "n_train": 100, "variant": "paper", "groups": 0, "label_threshold": 0.9, "split_modulus": None,
             "reasoning_anchors": 4, "memory_anchors": 4, "memory_fraction": 0.5, "chain_length": 3, "data_dir": "/d", "split": None,
             "n_eval": 10, "n_eval_train": 10, "eval_seed": 1}
    cfg = TaskConfig.from_dict(union)
    assert cfg.to_dict() == {"name": "scan", "n_train": 100, "n_eval": 10, "n_eval_train": 10, "eval_seed": 1, "data_dir": "/d", "split": None}
    with pytest.raises(ConfigError, match="task.variant belongs to task 'anchor', not 'scan'"):
        TaskConfig.from_dict({**union, "variant": "app-e"})
    with pytest.raises(ConfigError, match=r"unknown key task.bogus for task 'scan'; known keys: \[.*'split'"):
        TaskConfig.from_dict({**union, "bogus": 1})
    with pytest.raises(ConfigError, match="task.split belongs to task 'scan', not 'anchor'"):
        preset("cpu-small-init").with_overrides({"task.split": "simple"})
    with pytest.raises(ConfigError, match="task.data_dir belongs to task 'scan', not 'anchor'"):
        preset("cpu-small-init").with_overrides({"task.data_dir": "/tmp"})


def test_switching_the_task_drops_the_old_tasks_options():
    cfg = preset("paper-code").with_overrides({"task.name": "prontoqa", "task.chain_length": "2"})  # paper-code sets split_modulus 9
    assert cfg.task.name == "prontoqa" and cfg.task.options.chain_length == 2 and "split_modulus" not in cfg.task.to_dict()
    assert RunConfig.from_dict(cfg.to_dict()) == cfg


def test_options_validate_and_name_their_field():
    with pytest.raises(ConfigError, match=r"task.groups = 7 must be in 0..6"):
        preset("cpu-small-init").with_overrides({"task.variant": "app-g", "task.groups": "7"})
    with pytest.raises(ConfigError, match=r"task.memory_fraction = 1.5 must be in \(0, 1\)"):
        preset("reasoning-memory").with_overrides({"task.memory_fraction": "1.5"})
    with pytest.raises(ConfigError, match="task.options of task 'anchor' must be a AnchorOptions"):
        TaskConfig(name="anchor", options=TASKS["scan"].Options())


def test_every_builtin_task_keeps_the_protocol_and_its_options_are_task_options():
    from mechinit.tasks import Task

    for name, task_class in TASKS.items():
        assert isinstance(task_class, Task), name
        options = getattr(task_class, "Options", None)
        assert options is None or (issubclass(options, TaskOptions) and dataclasses.is_dataclass(options)), name


class _NoVerdict:
    target_positions = "last"
    n_train = 1

    def train_set(self, seed): ...

    def evaluate(self, logits_fn, device="cpu"): ...


def test_register_checks_the_protocol():
    with pytest.raises(ConfigError, match=r"is not a task class \(missing \['verdict'\]"):
        register("no-verdict", _NoVerdict)
    bad_positions = type("BadPositions", (_NoVerdict,), {"verdict": lambda self, m: "", "target_positions": "first"})
    with pytest.raises(ConfigError, match="target_positions = 'first' must be one of"):
        register("bad-positions", bad_positions)
    bad_options = type("BadOptions", (_NoVerdict,), {"verdict": lambda self, m: "", "Options": dict})
    with pytest.raises(ConfigError, match="Options must be a dataclass subclassing"):
        register("bad-options", bad_options)
    assert not {"no-verdict", "bad-positions", "bad-options"} & set(TASKS)


def _task_metric_names() -> set[str]:
    """Every metric name a registered task's vocabulary puts in front of a user, beyond the generic ones."""
    generic = {"step", "train_loss", "headline", "verdict", "epochs_to_loss"}
    names = set()
    for name in TASKS:
        vocab = vocabulary_of(name)
        names |= {m.key for m in (*vocab.sweep_metrics, *vocab.plotted, *vocab.table)} | set(vocab.summary_keys)
        names |= set(vocab.index_row({}, {}))
        if vocab.shade:
            names.add(vocab.shade[0])
    return (names - generic) | {"pairs", "inferential", "symmetric", "exact_match", "train_acc", "(4,3)", "4,3"}


def test_generic_modules_name_no_task_metric():
    names = _task_metric_names()
    assert {"acc_inferential", "acc_symmetric", "seen_test_acc", "delta_loss", "verdict_43", "acc_43_inferential"} <= names
    for module in GENERIC_MODULES:
        text = (ROOT / module).read_text()
        found = sorted(n for n in names if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", text))
        assert not found, f"{module} names task metrics {found}"


def test_a_plugin_task_with_an_option_and_a_vocabulary(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    sys.modules.pop("three_anchor", None)
    from three_anchor import ThreeAnchorTask

    monkeypatch.setitem(TASKS, "three-anchor", ThreeAnchorTask)
    base = preset("tiny").with_overrides({"task.name": "three-anchor"})
    moved = base.with_overrides({"task.held_out": "2,1"})
    assert moved.task.options.held_out == "2,1" and run_id(moved) != run_id(base)
    with pytest.raises(ConfigError, match=r"task.held_out = '9,9' must be a,b"):
        base.with_overrides({"task.held_out": "9,9"})
    with pytest.raises(ConfigError, match="task.held_out belongs to task 'three-anchor', not 'anchor'"):
        preset("tiny").with_overrides({"task.held_out": "2,1"})
    vocab = vocabulary_of("three-anchor")
    assert vocab is ThreeAnchorTask.metrics and vocab is not DEFAULT
    assert vocab.sweep_record([{"acc": {"seen": 0.5, "held_out": 0.25}}]) == {"held_out_acc": 0.25}
    task = ThreeAnchorTask(moved.task, moved.model)
    assert all(t[:2] == (2, 1) for t in task.held_out) and len(task.held_out) == 4 and len(task.seen) == 60
