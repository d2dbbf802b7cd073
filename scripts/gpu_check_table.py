"""Print the table of scripts/gpu-check.sh: each run's (4,3) trajectory at the authors' logged steps
and its final verdict, beside the authors' logs, then the ensemble benchmark's lines.

usage: python scripts/gpu_check_table.py WORK_DIR
"""

import json
import sys
from pathlib import Path

AUTHORS = {  # the authors' teaching-code logs (docs/research.md): step -> (4,3) on train-split keys
    "0.8": "inferential 0.12 @3330, 0.73 @6660, 0.96 @8880; symmetric 0.00 throughout",
    "0.5": "symmetric 1.000 from step 2220",
}


def main(work: Path) -> None:
    print("| run | step | seen-pair test | (4,3) inf / sym (test keys) | (4,3) inf / sym (train keys) | label | max inf / sym over training | samples/s | authors' log |")
    print("|---|---|---|---|---|---|---|---|---|")
    for run in sorted(p for p in work.iterdir() if (p / "metrics.jsonl").is_file()):
        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
        last, pair = rows[-1], rows[-1]["pairs"]["4,3"]
        tk, best = pair["train_keys"], pair["max_over_training"]["test_keys"]
        speed = [r["samples_per_s"] for r in rows if r.get("samples_per_s")]
        gamma = run.name.split("-")[0][1:]
        print(f"| {run.name} | {last['step']} | {last['seen_test_acc']:.3f} | {pair['inferential']:.3f} / {pair['symmetric']:.3f} | "
              f"{tk['inferential']:.3f} / {tk['symmetric']:.3f} | {pair['label']} | {best['inferential']:.3f} / {best['symmetric']:.3f} | "
              f"{max(speed) if speed else float('nan'):.0f} | {AUTHORS.get(gamma, '')} |")
    bench = work / "ensemble.txt"
    if bench.is_file():
        print("\nensemble benchmark:\n" + bench.read_text())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
