"""Markdown tables of the authors'-regime runs (paper width and the width-128 search) from their
metrics.jsonl, beside the authors' logged numbers. usage: python docs/cpu-regime/progress.py"""

import json
from pathlib import Path

HERE = Path(__file__).parent
SMALL = {3330: "γ 0.8: (4,3) inf 0.12", 5550: "γ 0.8: training acc 0.37", 6660: "γ 0.8: (4,3) inf 0.73",
         8880: "γ 0.8: (4,3) inf 0.96, sym 0.00"}
LARGE = {2220: "γ 0.5: symmetric 1.000 from here", 8880: "γ 0.5: symmetric 1.000"}
# the authors' run whose init std this run matches: paper γ at d_model 400, or its std at d_model 128
AUTHORS = {0.8: SMALL, 1.0: SMALL, 0.5: LARGE, 0.6: LARGE}


def table(run: Path) -> str:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    config = json.loads((run / "config.json").read_text())
    gamma, width = config["init"]["gamma"], config["model"]["d_model"]
    authors = AUTHORS.get(gamma, {})
    out = [f"`{run.relative_to(HERE.parent.parent)}` (γ {gamma}, d_model {width})", "",
           "| step | seen-pair test | (4,3) inf / sym, test keys | (4,3) inf / sym, train keys | (3,4) train acc | train loss | samples/s | authors' log at this step |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, tk = r["pairs"]["4,3"], r["pairs"]["4,3"].get("train_keys", {})
        loss = "null" if r["train_loss"] is None else f"{r['train_loss']:.3f}"
        sps = "null" if r["samples_per_s"] is None else f"{r['samples_per_s']:.0f}"
        out.append(f"| {r['step']} | {r['seen_test_acc']:.3f} | {p['inferential']:.3f} / {p['symmetric']:.3f} | "
                   f"{tk.get('inferential', float('nan')):.3f} / {tk.get('symmetric', float('nan')):.3f} | "
                   f"{r['pairs']['3,4']['train_acc']:.3f} | {loss} | {sps} | {authors.get(r['step'], '')} |")
    state = run / "resume" / "state.json"
    if state.is_file():
        out.append(f"\nresume point: step {json.loads(state.read_text())['step']}")
    return "\n".join(out)


if __name__ == "__main__":
    runs = sorted((HERE / "paper-width").glob("g*")) + sorted((HERE / "search-authors" / "runs").glob("*"))
    print("\n\n".join(table(r) for r in runs if (r / "metrics.jsonl").is_file()))
