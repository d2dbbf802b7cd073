"""The seed-odds table: which γ 0.8 paper-width runs are on the slow path at step 1,850, counted by where
their initial draw and their data order come from, with Wilson 95% intervals, and the fate rule's
recorded calls beside what the runs did.

usage: python experiments/seed-odds/table.py            (prints markdown)
       python experiments/seed-odds/table.py --write    (puts the tables into README.md here and docs/seed-odds.md)

Reads the grid's records here (predictions.jsonl, outcomes.jsonl, <run>/metrics.jsonl), the metrics of a run being
continued (in-progress/<run>/, kept beside its tracked resume point) and the earlier paper-width runs under
experiments/cpu-regime/paper-width/. A run is on the slow path when its seen-pair test
accuracy at step 1,850 is below 0.2 (the fast-path runs are at 0.28-0.46 there, the slow ones at 0.05-0.17).
"Ran on" comes from each run's provenance: where it started and where each resume continued it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from mechinit.files import read_metrics

HERE = Path(__file__).resolve().parent
EARLIER = HERE.parents[0] / "cpu-regime" / "paper-width"
IN_PROGRESS = HERE / "in-progress"  # a continued run's folder with its resume point (config, metrics, resume/)
AT, SLOW_BELOW = 1850, 0.2
# the earlier paper-width runs: folder -> (initial draw, data and batch order)
EARLIER_RUNS = {
    "g0.8-authors-seed": ("authors seed 1", "authors seed 1"),
    "g0.8-their-init-our-data": ("authors seed 1", "mechinit seed 0"),
    "g0.8-our-init-their-data": ("mechinit seed 0", "authors seed 1"),
    "g0.8": ("mechinit seed 0", "mechinit seed 0"),
    "g0.8-s1": ("mechinit seed 1", "mechinit seed 1"),
    "g0.8-s2": ("mechinit seed 2", "mechinit seed 2"),
    "g0.5": ("mechinit seed 0", "mechinit seed 0"),
}


def sources(config: dict) -> tuple[str, str]:
    """(initial draw, data order) of a grid run, from its config."""
    t = config["train"]
    replay = t.get("replay")
    init = f"mechinit seed {t['init_seed'] if t.get('init_seed') is not None else t['seed']}"
    data = f"mechinit seed {t['data_seed'] if t.get('data_seed') is not None else t['seed']}"
    if replay:
        _, seed, *part = replay.split(":")
        if not part or part[0] == "init":
            init = f"authors seed {seed}"
        if not part or part[0] == "data":
            data = f"authors seed {seed}"
    return init, data


def ran_on(provenance: dict) -> str:
    """Where a run trained: the device or CPU kernel set of its start and of each resume (in order, repeats
    merged), and its thread count, from the provenance in its config.json."""
    legs = [provenance, *provenance.get("resumed", [])]
    kinds: list[str] = []
    for leg in legs:
        kind = (f"CUDA {leg['cuda']}" if leg.get("cuda") else
                leg.get("cpu_capability") or "kernel set not recorded")
        if not kinds or kinds[-1] != kind:
            kinds.append(kind)
    threads = sorted({leg["threads"] for leg in legs if leg.get("threads") is not None})
    device = "" if kinds[0].startswith("CUDA") else "CPU "
    count = f", {'/'.join(map(str, threads))} thread{'s' if threads != [1] else ''}" if threads and device else ""
    return device + " → ".join(kinds) + count


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def row_at(rows: list[dict], step: int) -> dict | None:
    return next((r for r in rows if r["step"] == step), None)


def records(name: str) -> dict[str, dict]:
    """The rows of ``HERE/name`` (a jsonl of one row per run), by run."""
    path = HERE / name
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
    return {r["run"]: r for r in rows}


def runs() -> list[dict]:
    predictions = records("predictions.jsonl")
    found = []
    for name, (init, data) in EARLIER_RUNS.items():
        config = json.loads((EARLIER / name / "config.json").read_text())
        found.append({"run": name, "where": f"experiments/cpu-regime/paper-width/{name}", "init": init, "data": data,
                      "gamma": config["init"]["gamma"], "bf16": False, "ran_on": ran_on(config["provenance"]),
                      "rows": read_metrics(EARLIER / name), "prediction": None})
    retraces = records("retraces.jsonl")
    for folder in sorted(p for p in HERE.iterdir() if (p / "metrics.jsonl").is_file()):
        config = json.loads((folder / "config.json").read_text())
        init, data = sources(config)
        again = folder / "retrace"  # the run trained again from step 0 (grid.py --retrace), when continued from there
        found.append({"run": folder.name, "where": f"experiments/seed-odds/{folder.name}", "init": init, "data": data,
                      "gamma": config["init"]["gamma"], "bf16": config["train"].get("bf16", False),
                      "ran_on": ran_on(config["provenance"]),
                      "rows": read_metrics(folder), "prediction": predictions.get(folder.name),
                      "retrace": retraces.get(folder.name),
                      "retrace_rows": read_metrics(again) if (again / "metrics.jsonl").is_file() else []})
    for r in found:
        at = row_at(r["rows"], AT)
        r["loss"], r["seen"] = (at["train_loss"], at["seen_test_acc"]) if at else (None, None)
        r["slow"] = None if at is None else at["seen_test_acc"] < SLOW_BELOW
        last = r["rows"][-1] if r["rows"] else {}
        r["outcome"] = outcome(r["rows"])
        o, note = r["outcome"], ""
        if o is None and r.get("retrace_rows"):
            r["outcome"] = o = outcome(r["retrace_rows"])
            note = f" — the retrace from step 0 ({r['retrace']['ran_on']}), not the run above" if o else ""
        going = IN_PROGRESS / r["run"]
        r["final"] = (f"(4,3)={o['label']} (inferential {o['inferential']:.2f}, symmetric {o['symmetric']:.2f}; "
                      f"max {o['max_inferential']:.2f} / {o['max_symmetric']:.2f}){note}" if o else
                      progress(read_metrics(going) if (going / "metrics.jsonl").is_file() else [], last.get("step")))
    return found


def progress(rows: list[dict], recorded_to: int | None) -> str:
    """Where a run being continued stands: its last evaluation past the recorded ones, or where the record stops."""
    last = rows[-1] if rows else {}
    if recorded_to is None or last.get("step", 0) <= recorded_to:
        return f"stopped at {recorded_to}"
    pair = last.get("pairs", {}).get("4,3", {})
    shown = {k: "—" if pair.get(k) is None else f"{pair[k]:.2f}" for k in ("inferential", "symmetric")}
    return (f"going on: at step {last['step']:,} seen-pair {last['seen_test_acc']:.3f}, (4,3) inferential "
            f"{shown['inferential']}, symmetric {shown['symmetric']}")


def outcome(rows: list[dict]) -> dict | None:
    """How a run ended on (4,3), final and max over training, or None for a run short of step 8,880."""
    last = rows[-1] if rows else {}
    pair = last.get("pairs", {}).get("4,3", {})
    if last.get("step") != 8880 or not pair:
        return None
    tracked = [x["pairs"]["4,3"] for x in rows if "4,3" in x.get("pairs", {})]
    return {"label": pair.get("label"), "inferential": pair["inferential"], "symmetric": pair["symmetric"],
            "max_inferential": max(t["inferential"] for t in tracked), "max_symmetric": max(t["symmetric"] for t in tracked)}


def call_on_continued(r: dict) -> dict:
    """The rule's call on the run that was continued: the recorded prediction, or, where the run was trained again
    from step 0 and continued from there, the call on that retrace at 1,850 (committed before it went on)."""
    if r.get("retrace_rows") and r.get("retrace"):
        t = r["retrace"]
        return {"verdict": t["retrace_verdict"], "p_inferential": t["retrace_p_inferential"],
                "first_line": f"{t['retrace_call']} (on the retrace; recorded run: {t['recorded_call']})"}
    return r["prediction"]


def hits(found: list[dict]) -> list[str]:
    """The fate rule's recorded calls at 1,850 against how the continued runs ended."""
    called = [{**r, "prediction": call_on_continued(r)} for r in found if r["prediction"] and r["outcome"]]
    out = ["| run | fate at 1,850 | ended | call |", "|---|---|---|---|"]
    for r in called:
        verdict, label = r["prediction"]["verdict"], r["outcome"]["label"]
        call = "no call" if verdict == "uncertain" else ("hit" if verdict == label else "miss")
        out.append(f"| {r['run']} | {r['prediction']['first_line']} | {label} | {call} |")
    made = [r for r in called if r["prediction"]["verdict"] != "uncertain"]
    right = sum(r["prediction"]["verdict"] == r["outcome"]["label"] for r in made)
    brier = [(r["prediction"]["p_inferential"] - (r["outcome"]["label"] == "inferential")) ** 2 for r in called]
    out.append("")
    out.append(f"Continued runs with a recorded call: {len(called)}; calls made (not `uncertain`): {len(made)}, right: {right}; "
               f"Brier score of p_inferential: {sum(brier) / len(brier):.3f}" if called else "No continued run with a recorded call yet.")
    return out


def tables() -> str:
    """The three tables, markdown: every run, the slow-path counts with intervals, the rule's calls."""
    found = [r for r in runs() if r["slow"] is not None]
    out = ["| run | γ | precision | ran on | initial draw | data order | loss at 1,850 | seen-pair acc at 1,850 | path | fate at 1,850 (rule 1) | end |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in found:
        fate = r["prediction"]["first_line"] if r["prediction"] else "— (before the rule)"
        out.append(f"| {r['run']} | {r['gamma']} | {'bf16' if r['bf16'] else 'fp32'} | {r['ran_on']} | {r['init']} | {r['data']} | {r['loss']:.3f} | "
                   f"{r['seen']:.3f} | {'slow' if r['slow'] else 'fast'} | {fate} | {r['final']} |")
    counted, again = replicates(found)
    at = {g: [r for r in counted if r["gamma"] == g] for g in sorted({r["gamma"] for r in counted}, reverse=True)}
    eight = at.get(0.8, [])
    groups = {
        "γ 0.8, the authors' seed-1 initial draw, any data order": [r for r in eight if r["init"] == "authors seed 1"],
        "γ 0.8, other initial draws (mechinit's, the authors' other seeds)": [r for r in eight if r["init"] != "authors seed 1"],
        "γ 0.8, the authors' seed-1 data order, any initial draw": [r for r in eight if r["data"] == "authors seed 1"],
        **{f"γ {g}, mechinit's initial draws": [r for r in rs if r["init"].startswith("mechinit")] for g, rs in at.items()},
    }
    out += ["", "| runs | slow at 1,850 | N | share | Wilson 95% |", "|---|---|---|---|---|"]
    for label, rs in groups.items():
        k, n = sum(r["slow"] for r in rs), len(rs)
        lo, hi = wilson(k, n)
        out.append(f"| {label} | {k} | {n} | {k / n if n else float('nan'):.2f} | [{lo:.2f}, {hi:.2f}] |")
    if again:
        out += ["", "Counted once: a run of the same γ, initial draw and data order as an earlier one (another kernel set or "
                "code) is a replicate, not another draw. " + "; ".join(
                    f"`{r['run']}` replicates `{first['run']}`: {'slow' if r['slow'] else 'fast'} here, "
                    f"{'slow' if first['slow'] else 'fast'} there" for r, first in again) + "."]
    return "\n".join(out + [""] + hits(found))


def replicates(found: list[dict]) -> tuple[list[dict], list[tuple[dict, dict]]]:
    """The runs with one per (γ, initial draw, data order) — the first found — and each later run paired with it."""
    first: dict[tuple, dict] = {}
    again = []
    for r in found:
        key = (r["gamma"], r["init"], r["data"])
        if key in first:
            again.append((r, first[key]))
        else:
            first[key] = r
    return list(first.values()), again


BEGIN, END = "<!-- seed-odds tables: python experiments/seed-odds/table.py --write -->", "<!-- /seed-odds tables -->"
PAGES = (HERE / "README.md", HERE.parents[1] / "docs" / "seed-odds.md")


def main(argv: list[str]) -> int:
    text = tables()
    if argv != ["--write"]:
        print(text)
        return 0
    for page in PAGES:  # the tables between the markers, nothing else
        old = page.read_text()
        if BEGIN not in old or END not in old:
            print(f"{page}: no {BEGIN} ... {END} markers", file=sys.stderr)
            return 2
        head, rest = old.split(BEGIN, 1)
        page.write_text(f"{head}{BEGIN}\n{text}\n{END}{rest.split(END, 1)[1]}")
        print(f"wrote the tables into {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
