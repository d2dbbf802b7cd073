"""Regenerate golden.json: ``python tests/probes/golden.py`` (only when a probe's definition changes)."""

import json
from pathlib import Path

import torch

from mechinit import probes
from mechinit.model.build import new_model
from mechinit.presets import preset
from mechinit.tasks import make_task

GOLDEN = Path(__file__).with_name("golden.json")


def golden_headlines() -> dict:
    torch.manual_seed(0)
    cfg = preset("tiny").with_overrides({"init.gamma": 0.5})
    model, _ = new_model(cfg.model, cfg.init, seed=0)
    task = make_task(cfg)
    return {name: probes.run(name, model, task).headline for name in probes.available()}


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(golden_headlines(), indent=2, sort_keys=True) + "\n")
    print(GOLDEN.read_text())
