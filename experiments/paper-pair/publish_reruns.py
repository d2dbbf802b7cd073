"""Publish the finished paper-pair reruns (run.sh) into the shipped zoo, fp16 final weights and fp16
step{N} snapshots from the same run, and move the pair's aliases to them when they earn it.

usage: python experiments/paper-pair/publish_reruns.py RUNS_DIR [--zoo DIR] [--dry-run]
RUNS_DIR holds run.sh's run folders g0.8 and g0.5, and g0.8-avx2 (the same command as g0.8, run on torch's
AVX2 kernels); a run is finished when model.safetensors is present.

Each finished rerun is published under its own alias (`paper-g0.8-replay`, `paper-g0.5-twin`), so that its
training dynamics are loadable whatever its verdict. The pair's aliases move only when earned:
- `small-init` moves to g0.8 (the authors'-seed-1 replay, γ 0.8) only if its final (4,3) label is that of the
  entry `small-init` points at now (inferential);
- `large-init` moves to g0.5 (the twin: the same draw scaled to γ 0.5, the same data and order) only if it is
  symmetric >= 0.9 on (4,3) (test-split keys);
- `small-init` moves to g0.8-avx2 only if it ends (4,3) inferential >= 0.9 on test-split keys (the rule fixed
  for that run in experiments/paper-pair/README.md before it reached any evaluation past step 0). Its config is
  g0.8's, so its entry takes the id g0.8's would have, with `-avx2` added.
Otherwise the alias stays where it is, and the script says why. The entries they replace stay in the zoo
under their ids (ids never change). A published rerun whose run folder has since gained snapshots (rebuilt by
retrace_snapshots.py --adopt) is published again under its id, aliases unchanged. Add the moves to CHANGELOG.md and the zoo's size to docs/zoo.md by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mechinit.zoo.publishing import point_alias, publish, republish
from mechinit.zoo.store import SHIPPED, read_index

from mechinit import runs
from mechinit.runs.ids import run_id

SYMMETRIC_BAR = 0.9
COMMAND = ("mechinit train --preset paper-code --replay authors:1 --set init.gamma={gamma} --set train.steps=8880 "
           "--set train.snapshot_steps=370,1110,1850,2960,4440,6660 --set train.device=cpu --set train.threads=1")
DESCRIPTIONS = {
    "g0.8": ("The paper's small initialisation at its own width (d_model 400, γ 0.8, the authors' teaching-code "
             "recipe, `--preset paper-code`): a replay of the authors' seed 1 — their initial weights, data and batch "
             "order — trained by `mechinit train --replay authors:1` for 8,880 steps, with fp16 snapshots at steps 0, 370, "
             "1,110, 1,850, 2,960, 4,440, 6,660 and 8,880 from this same run. On (4,3) it ends {label} (inferential "
             "{inf:.3f}, symmetric {sym:.3f} on test-split keys; at most {max_inf:.3f} / {max_sym:.3f} over training). "
             "The replay of the same seed shipped first (`anchor-post-L2-d400-g0.80-s1-76720d`, trained by an earlier "
             "script) ends inferential 0.959 / 0.000; the two part at float level from step 740 and keep one course, "
             "the slow path, to the end (experiments/paper-pair/README.md). How often a draw takes that path is "
             "measured in experiments/seed-odds/."),
    "g0.5": ("The paper's large-initialisation model at its own width (d_model 400, γ 0.5, `--preset paper-code`): the "
             "twin of `small-init` — the authors' seed-1 initial draw scaled to γ 0.5, on the same data and batch order "
             "(`--replay authors:1 --set init.gamma=0.5`) — trained for 8,880 steps, with fp16 snapshots at steps 0, 370, "
             "1,110, 1,850, 2,960, 4,440, 6,660 and 8,880 from this same run. On (4,3) it is {label} (inferential "
             "{inf:.3f}, symmetric {sym:.3f} on test-split keys; at most {max_inf:.3f} / {max_sym:.3f} over training; the "
             "authors' γ 0.5 log: symmetric 1.000 from step 2,220)."),
}
DESCRIPTIONS["g0.8-avx2"] = (
    "The paper's small initialisation at its own width (d_model 400, γ 0.8, the authors' teaching-code recipe, "
    "`--preset paper-code`): a replay of the authors' seed 1 — their initial weights, data and batch order — trained by "
    "`mechinit train --replay authors:1` for 8,880 steps on torch's AVX2 kernels (one thread), with fp16 snapshots at "
    "steps {snapshots} from this same run. On (4,3) it ends {label} (inferential "
    "{inf:.3f}, symmetric {sym:.3f} on test-split keys; at most {max_inf:.3f} / {max_sym:.3f} over training). Two replays "
    "of the same seed on AVX-512 kernels end inferential 0.959 / 0.000 (`anchor-post-L2-d400-g0.80-s1-76720d`, trained "
    "by an earlier script) and 0.880 / 0.000 (`paper-g0.8-replay`); the runs part at float level and keep one course, "
    "the slow path (experiments/paper-pair/README.md). How often a draw takes that path is measured in "
    "experiments/seed-odds/.")
ALIASES = {"g0.8": "small-init", "g0.5": "large-init", "g0.8-avx2": "small-init"}
OWN_ALIASES = {"g0.8": "paper-g0.8-replay", "g0.5": "paper-g0.5-twin", "g0.8-avx2": "paper-g0.8-replay-avx2"}
ID_SUFFIX = {"g0.8-avx2": "-avx2"}  # the kernel set is provenance, not config: same config, an id of its own
INFERENTIAL_BAR = 0.9
KERNELS = {"g0.8-avx2": ", torch's AVX2 kernels: a CPU without AVX-512, or `ATEN_CPU_CAPABILITY=avx2`"}


def final_pair(run: Path) -> dict:
    """The run's last (4,3) record: label, inferential and symmetric on test-split keys."""
    rows = [r for r in runs.read_metrics(run) if "4,3" in r.get("pairs", {})]
    return rows[-1]["pairs"]["4,3"]


def say_steps(steps: list[int]) -> str:
    """Steps as a card says them ("0, 370 and 8,880")."""
    said = [f"{s:,}" for s in steps]
    return " and ".join([", ".join(said[:-1]), said[-1]]) if len(said) > 1 else "".join(said)


def snapshot_list(run: Path) -> str:
    """The run's snapshot steps on disk, as a card says them."""
    return say_steps(runs.snapshot_steps_on_disk(run))


def retraced_text(run: Path) -> str:
    """What the card says of snapshots rebuilt by retrace_snapshots.py (nothing when none were)."""
    record = run / "snapshots-retraced.json"
    if not record.is_file():
        return ""
    steps = json.loads(record.read_text())["steps"]
    which = f"step {steps[0]:,} was" if len(steps) == 1 else f"steps {say_steps(steps)} were"
    return (f" The snapshot{'s' if len(steps) > 1 else ''} at {which} rebuilt after the run by training its "
            "config again from step 0 (same code, one thread, the same CPU kernel set), a retrace equal to the run at "
            "every evaluation it holds (`snapshots-retraced.json`, experiments/paper-pair/retrace_snapshots.py).")


def qualifies(name: str, pair: dict, zoo_dir: Path) -> str | None:
    """Why the finished rerun ``name`` may not take its alias (None: it may)."""
    if name == "g0.8-avx2":
        inf = pair.get("inferential")
        return None if inf is not None and inf >= INFERENTIAL_BAR else f"(4,3) inferential {inf} < {INFERENTIAL_BAR}"
    if name == "g0.8":
        index = read_index(zoo_dir)
        current = index["entries"][index["aliases"][ALIASES[name]]]["summary"].get("verdict_43")
        return None if pair.get("label") == current else f"(4,3) {pair.get('label')}, where `small-init` is {current}"
    sym = pair.get("symmetric")
    return None if sym is not None and sym >= SYMMETRIC_BAR else f"(4,3) symmetric {sym} < {SYMMETRIC_BAR}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("runs", type=Path)
    ap.add_argument("--zoo", type=Path, default=SHIPPED)
    ap.add_argument("--dry-run", action="store_true", help="say what would be published and moved; write nothing")
    args = ap.parse_args(argv)
    for name in ("g0.8", "g0.5", "g0.8-avx2"):
        run = args.runs / name
        if not (run / runs.WEIGHTS).is_file():
            print(f"{name}: not finished ({run / runs.WEIGHTS} not found); nothing published")
            continue
        published = read_index(args.zoo)["aliases"].get(OWN_ALIASES[name])
        gained = sorted(set(runs.snapshot_steps_on_disk(run)) - set(runs.snapshot_steps_on_disk(args.zoo / published))) if published else []
        if published and not gained:
            print(f"{name}: already published as `{OWN_ALIASES[name]}` ({published}); left as it is")
            continue
        pair = final_pair(run)
        why = qualifies(name, pair, args.zoo)
        gamma = runs.load_run_config(run).init.gamma
        peak = pair["max_over_training"]["test_keys"]
        text = (DESCRIPTIONS[name].format(snapshots=snapshot_list(run), label=pair.get("label"), inf=pair["inferential"], sym=pair["symmetric"],
                                          max_inf=peak["inferential"], max_sym=peak["symmetric"])
                + retraced_text(run)
                + f"\n\nTrained by (about 9 h of one CPU thread on a 2-core machine{KERNELS.get(name, '')}): `{COMMAND.format(gamma=gamma)}`")
        moves = "" if why else f" and point `{ALIASES[name]}` at it"
        stays = f"; `{ALIASES[name]}` stays where it is: {why}" if why else ""
        if published:  # the run gained snapshots (retrace_snapshots.py --adopt): its entry again, aliases as they are
            if not args.dry_run:
                republish(run, published, zoo_dir=args.zoo, dtype="float16", snapshot_dtype="float16", description=text)
            print(f"{name}: {'would publish' if args.dry_run else 'published'} {published} again with snapshots at steps "
                  f"{snapshot_list(run)} (gained {', '.join(f'{s:,}' for s in gained)}); aliases unchanged")
            continue
        if args.dry_run:
            print(f"{name}: would publish {run} as `{OWN_ALIASES[name]}` (fp16, fp16 snapshots at steps {snapshot_list(run)}){moves}{stays}")
            continue
        suffix = ID_SUFFIX.get(name)
        entry_id = run_id(runs.load_run_config(run)) + suffix if suffix else None
        entry = publish(run, id=entry_id, aliases=(OWN_ALIASES[name],), zoo_dir=args.zoo, dtype="float16", snapshot_dtype="float16",
                        description=text)
        print(f"{name}: published {entry} as `{OWN_ALIASES[name]}`{stays}")
        if why is None:
            before = point_alias(ALIASES[name], entry, zoo_dir=args.zoo)
            print(f"{name}: `{ALIASES[name]}`: {before} -> {entry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
