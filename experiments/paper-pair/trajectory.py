"""The mechanism over training, snapshot by snapshot: (4,3) on both maps, seen-pair accuracy, and the
headlines of the probes behind the paper's claims (key→anchor flow, fused-vector parallelism, W_Q(1)
groups, embedding effective rank), read from a zoo entry's ``step{N}`` snapshots.

usage: python experiments/paper-pair/trajectory.py ALIAS [--steps N,N,...] [--json FILE]
  ALIAS   a zoo alias or id with snapshots, e.g. small-init
  --steps only these snapshots (default: all)
  --json  also write the rows as JSON (e.g. experiments/paper-pair/trajectory-small-init.json)
Prints a markdown table, one row per snapshot (the last is the entry's final weights).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from tqdm.auto import tqdm

from mechinit import probes, zoo
from mechinit.model.fastpath import last_logits

COLUMNS = ("step", "seen-pair acc", "(4,3) inferential", "(4,3) symmetric", "key→anchor flow", "parallelism gap",
           "W_Q(1) groups (90%)", "embedding effective rank")


def row(step: int, model, task) -> dict:
    metrics = task.evaluate(lambda tokens: last_logits(model, tokens))
    pair = metrics["pairs"]["4,3"]
    head = {name: probes.run(name, model, task).headline for name in
            ("information_flow", "cosine_maps", "condensation", "embedding_spectrum")}
    values = (step, metrics["seen_test_acc"], pair["inferential"], pair["symmetric"], head["information_flow"]["key_to_anchor_mass"],
              head["cosine_maps"]["parallelism_gap"], head["condensation"]["n_groups_90"], head["embedding_spectrum"]["effective_rank"])
    return dict(zip(COLUMNS, values))


def cell(value) -> str:
    return "null" if value is None else f"{value:.3g}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("alias")
    ap.add_argument("--steps", type=lambda text: [int(s) for s in text.split(",")])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore", message=".*HookedTransformer.*")
    try:
        target = zoo.load_target(args.alias)
    except zoo.ZooError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not target.snapshots:
        print(f"error: {args.alias} has no snapshots (mechinit zoo show {args.alias})", file=sys.stderr)
        return 2
    missing = sorted(set(args.steps or []) - set(target.snapshots))
    if missing:
        print(f"error: {args.alias} has no snapshot at step {missing[0]}; it has {sorted(target.snapshots)}", file=sys.stderr)
        return 2
    steps = sorted(args.steps or target.snapshots)
    rows = [row(step, zoo.load(f"{args.alias}@step{step}"), target.task) for step in tqdm(steps, desc="snapshots")]
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for r in rows:
        print("| " + " | ".join(cell(r[c]) for c in COLUMNS) + " |")
    if args.json:
        args.json.write_text(json.dumps({"alias": args.alias, "id": zoo.resolve(args.alias).id, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
