"""Score the fate rule (mechinit.readout, fixed in code before this ran) on finished runs held out whole.

usage: python experiments/fate/score.py [--out experiments/fate/scores.json]

Pool: every finished anchor-task run folder under experiments/ and zoo/entries with a (4,3) pair (a run is
finished when its last evaluation is at its planned last step; the swap runs, planned to stop at step 1,850,
are left out), each once (a run published to the zoo as well counts once). The seed-odds grid
(experiments/seed-odds/) is left out wherever its runs appear, the zoo included: it is the rule's
pre-registered test, scored against predictions committed at step 1,850 by that study's table.py, and no
run of it may shape the rule. Truth: the
final (4,3) label on test-split keys (`unfitted` and `indistinct` count as `other`). At each read-out
fraction of the planned steps the rule reads the last evaluation at or before it. Scores: balanced
accuracy over the classes present (an `uncertain` call counts as a miss; coverage says how often the rule
calls at all) and the Brier score of p_inferential. Baselines, fitted on the other runs (leave one run
out): the majority class, and a train-loss threshold with one class on each side (chosen for balanced
accuracy). The rule itself has nothing fitted, so holding a run out does not change its call.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from pathlib import Path

from mechinit import files
from mechinit.readout import PAIR, planned_steps, predict
from mechinit.runs import load_run_config
from mechinit.runs.ids import run_id

ROOT = Path(__file__).resolve().parents[2]
FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
CLASSES = ("inferential", "symmetric", "other")
SWAPS = ("-init-",)  # the paper-width swap runs were planned to stop at step 1,850: no final verdict to score
HELD_OUT = "experiments/seed-odds"  # the rule's pre-registered test (module docstring)


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / files.METRICS).read_bytes()).hexdigest()


def pool() -> list[dict]:
    held_out = {_digest(m.parent) for m in (ROOT / HELD_OUT).glob(f"**/{files.METRICS}")}
    runs, seen = [], set(held_out)
    for config in sorted([*ROOT.glob("experiments/**/config.json"), *ROOT.glob("zoo/entries/*/config.json")]):
        folder = config.parent
        try:
            cfg = load_run_config(folder)
            rows = files.read_metrics(folder)
        except Exception:  # noqa: BLE001 - not a run folder of this version
            continue
        if cfg.task.name != "anchor" or not rows or PAIR not in (rows[-1].get("pairs") or {}):
            continue
        total = planned_steps(cfg)
        if rows[-1]["step"] != total:
            continue
        if any(part in folder.name for part in SWAPS):
            continue
        key = _digest(folder)  # one run published twice counts once; a seed-odds run (its digest), published or not, never
        if key in seen:
            continue
        seen.add(key)
        label = rows[-1]["pairs"][PAIR]["label"]
        runs.append({"folder": str(folder.relative_to(ROOT)), "id": run_id(cfg), "total": total, "rows": rows,
                     "truth": label if label in CLASSES else "other", "d_model": cfg.model.d_model})
    return runs


def read_out(run: dict, fraction: float) -> dict:
    rows = [r for r in run["rows"] if r["step"] <= fraction * run["total"]] or run["rows"][:1]
    row = rows[-1]
    pair = row["pairs"][PAIR]
    return {"step": row["step"], "seen": row.get("seen_test_acc") or 0.0, "inf": pair.get("inferential") or 0.0,
            "sym": pair.get("symmetric") or 0.0, "loss": row.get("train_loss"), "fraction": row["step"] / run["total"]}


def balanced_accuracy(truth: list[str], calls: list[str]) -> float:
    recalls = [sum(c == t for t, c in zip(truth, calls) if t == k) / truth.count(k) for k in CLASSES if k in truth]
    return sum(recalls) / len(recalls)


def brier(truth: list[str], p: list[float]) -> float:
    return sum((q - (t == "inferential")) ** 2 for t, q in zip(truth, p)) / len(truth)


def threshold_fit(train: list[tuple[float | None, str]]):
    """Best (threshold, below, above) by balanced accuracy on ``train`` (loss, truth); None losses go above."""
    truth = [t for _, t in train]
    losses = sorted({x for x, _ in train if x is not None})
    best = (-1.0, None)
    for cut in losses:
        for below in CLASSES:
            for above in CLASSES:
                calls = [below if (x is not None and x <= cut) else above for x, _ in train]
                score = balanced_accuracy(truth, calls)
                if score > best[0]:
                    best = (score, (cut, below, above))
    cut, below, above = best[1]
    side = lambda x: x is not None and x <= cut  # noqa: E731
    p_below = [t == "inferential" for x, t in train if side(x)]
    p_above = [t == "inferential" for x, t in train if not side(x)]
    return cut, below, above, (sum(p_below) / len(p_below) if p_below else 0.0), (sum(p_above) / len(p_above) if p_above else 0.0)


def score(runs: list[dict]) -> dict:
    truth = [r["truth"] for r in runs]
    table = []
    for fraction in FRACTIONS:
        points = [read_out(r, fraction) for r in runs]
        rule = [predict(p["seen"], p["inf"], p["sym"], p["fraction"]) for p in points]
        major, major_p, loss_calls, loss_p = [], [], [], []
        for i in range(len(runs)):
            others = [t for j, t in enumerate(truth) if j != i]
            major.append(Counter(others).most_common(1)[0][0])
            major_p.append(others.count("inferential") / len(others))
            cut, below, above, pb, pa = threshold_fit([(points[j]["loss"], truth[j]) for j in range(len(runs)) if j != i])
            low = points[i]["loss"] is not None and points[i]["loss"] <= cut
            loss_calls.append(below if low else above)
            loss_p.append(pb if low else pa)
        calls = [c for c, _, _ in rule]
        table.append({"fraction": fraction, "rule_ba": balanced_accuracy(truth, calls), "rule_brier": brier(truth, [p for _, p, _ in rule]),
                      "rule_coverage": sum(c != "uncertain" for c in calls) / len(calls),
                      "majority_ba": balanced_accuracy(truth, major), "majority_brier": brier(truth, major_p),
                      "loss_ba": balanced_accuracy(truth, loss_calls), "loss_brier": brier(truth, loss_p),
                      "calls": dict(Counter(calls))})
    lead = next((row["fraction"] for row in table if row["rule_ba"] > max(row["majority_ba"], row["loss_ba"])), None)
    return {"n_runs": len(runs), "truth": dict(Counter(truth)), "table": table, "lead_fraction": lead}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "scores.json")
    args = ap.parse_args()
    runs = pool()
    result = score(runs)
    result["runs"] = [{"folder": r["folder"], "truth": r["truth"], "d_model": r["d_model"],
                       "calls": {f: predict(p["seen"], p["inf"], p["sym"], p["fraction"])[0]
                                 for f in FRACTIONS for p in [read_out(r, f)]}} for r in runs]
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{result['n_runs']} finished runs; truth {result['truth']}; lead fraction {result['lead_fraction']}")
    print("\n".join(markdown(result["table"])))
    return 0


def markdown(table: list[dict]) -> list[str]:
    """The table as docs/fate.md shows it: a header, a rule and a line per read-out fraction."""
    return ["| fraction | rule BA | rule coverage | rule Brier | majority BA | majority Brier | loss-threshold BA | loss-threshold Brier | rule's calls |",
            "|---|---|---|---|---|---|---|---|---|"] + [
        f"| {row['fraction']} | {row['rule_ba']:.2f} | {row['rule_coverage']:.2f} | {row['rule_brier']:.3f} | {row['majority_ba']:.2f} | "
        f"{row['majority_brier']:.3f} | {row['loss_ba']:.2f} | {row['loss_brier']:.3f} | {row['calls']} |" for row in table]


if __name__ == "__main__":
    raise SystemExit(main())
