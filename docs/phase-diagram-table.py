"""Print the CPU-scale phase diagram (docs/phase-diagram.md) from the sweep's run folders.

usage: python docs/phase-diagram-table.py [SWEEP_DIR]   (default sweeps/phase-cpu)
"""

import sys
from pathlib import Path

from mechinit.presets import preset
from mechinit.sweep import SweepSpec, reduce_runs

GAMMAS, LAYERS, SEEDS = (0.3, 0.6, 1.0), (2, 3, 4), (0, 1, 2)


def fmt(m):
    return "–" if m["mean"] is None else f"{m['mean']:.2f} ± {m['std']:.2f}"


def main(folder: Path) -> None:
    spec = SweepSpec(preset("small-init"), {"init.gamma": GAMMAS, "model.n_layers": LAYERS, "train.seed": SEEDS})
    cells = {(c["axes"]["init.gamma"], c["axes"]["model.n_layers"]): c for c in reduce_runs(spec, folder / "runs")["cells"]}
    for metric, title in (("acc_inferential", "(4,3) accuracy under the inferential map x−10"),
                          ("acc_symmetric", "(4,3) accuracy under the symmetric map x−6"),
                          ("seen_test_acc", "seen-pair test accuracy")):
        print(f"\n{title} (mean ± std over seeds 0–2; – = not all three runs finished)\n")
        print("| layers \\ γ | " + " | ".join(str(g) for g in GAMMAS) + " |")
        print("|---|" + "---|" * len(GAMMAS))
        for L in reversed(LAYERS):
            print(f"| {L} | " + " | ".join(fmt(cells[(g, L)][metric]) for g in GAMMAS) + " |")
    print("\n| run | verdict | (4,3) x−10 | (4,3) x−6 | seen test |\n|---|---|---|---|---|")
    for c in cells.values():
        for r in c["runs"]:
            if not r.get("missing"):
                print(f"| {r['id']} | {r['label']} | {r['acc_inferential']:.3f} | {r['acc_symmetric']:.3f} | {r['seen_test_acc']:.3f} |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "sweeps/phase-cpu"))
