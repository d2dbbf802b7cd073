"""Print a phase diagram's tables (experiments/phase-diagram/README.md) from a sweep folder's sweep.json.

usage: python experiments/phase-diagram/table.py SWEEP_DIR

sweep.json is written by `mechinit sweep` when it ends, and by the same command with `--reduce-only`
at any time (the runs finished so far; a cell with a run missing has no number). Rows are
model.n_layers, columns init.gamma; each cell is the sweep's own reduction (e.g. best lr per mapping,
then mean ± std over seeds). Incomplete cells show how many seed groups are complete.
"""

import json
import sys
from pathlib import Path

TABLES = (("acc_inferential", "(4,3) accuracy under the inferential map x−10, at the end"),
          ("acc_symmetric", "(4,3) accuracy under the symmetric map x−6, at the end"),
          ("seen_test_acc", "seen-pair test accuracy, at the end"),
          ("acc_inferential_max_over_training", "(4,3) accuracy under the inferential map x−10, maximum over training"),
          ("acc_symmetric_max_over_training", "(4,3) accuracy under the symmetric map x−6, maximum over training"))


def fmt(stat: dict, groups: int) -> str:
    if stat["mean"] is None:
        return f"– ({stat['n']} of {groups})"
    return f"{stat['mean']:.2f} ± {stat['std']:.2f}"


def num(value) -> str:
    return "null" if value is None else f"{value:.3f}"


def main(folder: Path) -> None:
    summary = json.loads((folder / "sweep.json").read_text())
    spec, cells = summary["spec"], summary["cells"]
    gammas, layers = spec["grid"]["init.gamma"], spec["grid"].get("model.n_layers", [spec["base"]["model"]["n_layers"]])
    groups = 1
    for key in spec["mean_over"]:
        groups *= len(spec["grid"][key])
    lookup = {(c["axes"]["init.gamma"], c["axes"].get("model.n_layers", layers[0])): c for c in cells}
    done = sum(1 for c in cells for r in c["runs"] if not r.get("missing"))
    total = sum(len(c["runs"]) for c in cells)
    reduce = f"best over {spec['best_over']}, then " if spec["best_over"] else ""
    print(f"{done} of {total} runs finished. Cells: {reduce}mean ± std over {spec['mean_over']} "
          f"(– (k of {groups}): only k of the {groups} groups complete)")
    for metric, title in TABLES:
        if not any(metric in c for c in cells):
            continue
        print(f"\n{title}\n")
        print("| layers \\ γ | " + " | ".join(str(g) for g in gammas) + " |")
        print("|---|" + "---|" * len(gammas))
        for n_layers in sorted(layers, reverse=True):
            print(f"| {n_layers} | " + " | ".join(fmt(lookup[(g, n_layers)][metric], groups) for g in gammas) + " |")
    print("\n| run | lr | verdict | (4,3) x−10 | (4,3) x−6 | x−10 max over training | x−6 max over training | seen test |")
    print("|---|---|---|---|---|---|---|---|")
    for c in cells:
        for r in c["runs"]:
            if r.get("missing"):
                continue
            lr = json.loads((folder / "runs" / r["id"] / "config.json").read_text())["train"]["lr"]
            print(f"| {r['id']} | {lr:g} | {r['label']} | {num(r['acc_inferential'])} | {num(r['acc_symmetric'])} | "
                  f"{num(r.get('acc_inferential_max_over_training'))} | {num(r.get('acc_symmetric_max_over_training'))} | "
                  f"{num(r['seen_test_acc'])} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    main(Path(sys.argv[1]))
