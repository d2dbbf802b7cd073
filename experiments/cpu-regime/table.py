"""Summarise regime-search runs: one markdown row per run folder under runs/regime (or given dirs).

usage: python experiments/cpu-regime/table.py [RUN_DIR ...]
"""

import sys
from pathlib import Path

from mechinit.runs import load_run_config, read_metrics

KEYS = ("model.n_layers", "model.d_model", "model.bias", "init.gamma", "init.embed_fan_in", "train.lr", "train.weight_decay",
        "train.batch_size", "train.epochs", "task.n_train", "train.seed")


def flat(cfg: dict) -> dict:
    return {f"{s}.{k}": v for s, sec in cfg.items() for k, v in sec.items()}


def row(run: Path) -> str | None:
    rows = read_metrics(run)
    if not rows:
        return None
    cfg = flat(load_run_config(run).to_dict())
    last = rows[-1]
    p = last["pairs"]["4,3"]
    traj = " ".join(f"{r['pairs']['4,3']['inferential']:.2f}/{r['pairs']['4,3']['symmetric'] or 0:.2f}" for r in rows[1::max(1, len(rows) // 6)])
    done = (run / "model.safetensors").is_file()
    vals = " | ".join(str(cfg[k]) for k in KEYS)
    secs = last.get("elapsed_s") or 0
    return (f"| {run.name} | {vals} | {last['epoch']:.0f}{'' if done else '*'} | {last['seen_test_acc']:.3f} | "
            f"{p['inferential']:.2f} | {p['symmetric']:.2f} | {p['label']} | {traj} | {secs / 60:.1f} |")


def main(paths):
    runs = [Path(p) for p in paths] or sorted(Path("runs/regime").iterdir())
    head = ["run", *KEYS, "epoch", "seen test", "(4,3) inf", "(4,3) sym", "label", "inf/sym over training", "train min"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for run in runs:
        r = row(run)
        if r:
            print(r)


if __name__ == "__main__":
    main(sys.argv[1:])
