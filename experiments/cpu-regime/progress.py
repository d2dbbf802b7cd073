"""Markdown tables of the authors'-regime runs (paper width and the width-128 search) from their
metrics.jsonl, beside the authors' logged numbers. usage: python experiments/cpu-regime/progress.py"""

import json
from pathlib import Path

import authors_log

HERE = Path(__file__).parent
SMALL = {3330: "γ 0.8: (4,3) inf 0.12", 5550: "γ 0.8: training acc 0.37", 6660: "γ 0.8: (4,3) inf 0.73",
         8880: "γ 0.8: (4,3) inf 0.96, sym 0.00"}
LARGE = {2220: "γ 0.5: symmetric 1.000 from here", 8880: "γ 0.5: symmetric 1.000"}
# the authors' run whose init std this run matches: paper γ at d_model 400, or its std at d_model 128
AUTHORS = {0.8: SMALL, 1.0: SMALL, 0.5: LARGE, 0.6: LARGE}
# the authors' logged mean training loss of each 370-step epoch (result_0.8 and result_0.5 train_log.log,
# "Epoch: e Train Loss"), shown at step 370·(e+1) beside a paper-width run's loss over the same steps
AUTHORS_LOSS = {
    0.8: [4.7682, 4.5071, 4.1231, 3.8600, 3.4568, 3.2508, 3.0074, 2.6384, 2.3954, 2.1780, 2.0048, 1.8503, 1.7119, 1.5485,
          1.4078, 1.3405, 1.1729, 1.0600, 0.97274, 0.75335, 0.62186, 0.16115, 0.046189, 0.037357],
    0.5: [4.6139, 2.5683, 1.1987, 0.08533, 0.011401, 0.0046026, 0.0023737, 0.0013766, 0.00085552, 0.00055687, 0.00037900,
          0.00027062, 0.00020035, 0.00015209, 0.00011752, 9.2026e-05, 7.2777e-05, 5.8009e-05],
}


def authors_loss(gamma: float, width: int, step: int) -> str:
    losses = AUTHORS_LOSS.get(gamma, []) if width == 400 else []
    epoch = step // 370 - 1
    return f"{losses[epoch]:#.3g}" if step % 370 == 0 and 0 <= epoch < len(losses) else ""


def table(run: Path) -> str:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    config = json.loads((run / "config.json").read_text())
    gamma, width = config["init"]["gamma"], config["model"]["d_model"]
    authors = AUTHORS.get(gamma, {})
    out = [f"`{run.relative_to(HERE.parent.parent)}` (γ {gamma}, d_model {width}, {column(run)})", "",
           "| step | seen-pair test | (4,3) inf / sym, test keys | (4,3) inf / sym, train keys | (3,4) train acc | train loss "
           "| authors' train loss, same steps | samples/s | authors' log at this step |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p, tk = r["pairs"]["4,3"], r["pairs"]["4,3"].get("train_keys", {})
        loss = "null" if r["train_loss"] is None else f"{r['train_loss']:.3f}"
        sps = "null" if r["samples_per_s"] is None else f"{r['samples_per_s']:.0f}"
        out.append(f"| {r['step']} | {r['seen_test_acc']:.3f} | {p['inferential']:.3f} / {p['symmetric']:.3f} | "
                   f"{tk.get('inferential', float('nan')):.3f} / {tk.get('symmetric', float('nan')):.3f} | "
                   f"{r['pairs']['3,4']['train_acc']:.3f} | {loss} | {authors_loss(gamma, width, r['step'])} | {sps} | "
                   f"{authors.get(r['step'], '')} |")
    state = run / "resume" / "state.json"
    if state.is_file():
        out.append(f"\nresume point: step {json.loads(state.read_text())['step']}")
    return "\n".join(out)


def column(run: Path) -> str:
    """A run's column title: its seed, and its init convention when it is not the paper's normal rule."""
    if (run / "REPLAY.md").is_file():  # experiments/cpu-regime/authors_seed.py: their draws, not mechinit's seed
        return "the authors' seed, replayed"
    config = json.loads((run / "config.json").read_text())
    replayed = config.get("provenance", {}).get("replayed")
    if replayed is not None:  # authors_seed.py --init/--data: one half of their seed, the other mechinit's seed 0
        theirs = {part: f"{part}: the authors'" in replayed for part in ("initial weights", "data and batch order")}
        if all(theirs.values()):
            return "the authors' seed, replayed"
        return (f"{'their' if theirs['initial weights'] else 'seed-0'} init, "
                f"{'their' if theirs['data and batch order'] else 'seed-0'} data and order")
    init = config["init"]
    other = init.get("distribution", "normal") != "normal" or init.get("embed_fan_in", "d_model") != "d_model"
    extra = f" ({init.get('distribution', 'normal')} init, embedding d_in {init.get('embed_fan_in')})" if other else ""
    return f"seed {config['train']['seed']}{extra}"


def seeds_table(gamma: float) -> str:
    """Training loss per 370-step epoch of every paper-width seed at ``gamma`` beside the authors' log,
    and the seen-pair test accuracy in brackets: where (and whether) each run leaves the loss plateau."""
    runs = sorted(r for r in (HERE / "paper-width").glob(f"g{gamma}*") if (r / "metrics.jsonl").is_file())
    if not runs:
        return ""
    seeds = [column(r) for r in runs]
    rows = {r: {m["step"]: m for m in map(json.loads, (r / "metrics.jsonl").read_text().splitlines())} for r in runs}
    steps = sorted({s for per in rows.values() for s in per if s and s % 370 == 0})
    out = [f"γ {gamma} at d_model 400: training loss of each 370-step epoch (seen-pair test accuracy at its end)", "",
           "| step | authors' log | " + " | ".join(seeds) + " |", "|---|---|" + "---|" * len(seeds)]
    for step in steps:
        cells = []
        for r in runs:
            m = rows[r].get(step)
            cells.append("" if m is None else f"{m['train_loss']:#.3g} ({m['seen_test_acc']:.2f})")
        out.append(f"| {step} | {authors_loss(gamma, 400, step)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def pairs_table() -> str:
    """γ 0.8 at d_model 400, pair by pair on train-split keys, at the steps the authors' log has them:
    the mean over the 15 seen pairs, the exception (3,4), and (4,3) under each map (authors: also the
    share of near misses, 1-3 away from x - 10). Ours per seed, from metrics.jsonl."""
    runs = sorted(r for r in (HERE / "paper-width").glob("g0.8*") if (r / "metrics.jsonl").is_file())
    rows = {r: {m["step"]: m for m in map(json.loads, (r / "metrics.jsonl").read_text().splitlines())} for r in runs}
    seeds = [column(r) for r in runs]
    out = ["γ 0.8 at d_model 400, train-split keys: mean seen pair / (3,4) / (4,3) inferential / (4,3) symmetric "
           "(authors: / (4,3) near misses)", "",
           "| step | authors' log | " + " | ".join(seeds) + " |", "|---|---|" + "---|" * len(seeds)]
    for step, accs in sorted(authors_log.PAIRS.items()):
        dev = authors_log.DEVIATION_43[step]
        cells = [f"{sum(accs.values()) / len(accs):.2f} / {accs['3,4']:.2f} / {dev.get(0, 0.0):.2f} / {dev.get(4, 0.0):.2f} / "
                 f"{authors_log.near(dev):.2f}"]
        for r in runs:
            m = rows[r].get(step)
            if m is None:
                cells.append("")
                continue
            seen = [rec["train_keys"]["designated"] for rec in m["pairs"].values() if rec["seen"]]
            tk = m["pairs"]["4,3"]["train_keys"]
            cells.append(f"{sum(seen) / len(seen):.2f} / {m['pairs']['3,4']['train_keys']['designated']:.2f} / "
                         f"{tk['inferential']:.2f} / {tk['symmetric']:.2f}")
        out.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def replay_deviation_table() -> str:
    """(4,3)'s answers on train-split keys relative to x - 10, the authors' logged "Deviation Distribution"
    beside the replay's (experiments/probes/authors-seed-replay/step{N}.json, by replay-deviation.sh): the share at
    each offset -3..+4, the near misses (1-3 away, +4 excluded) and the most common offset."""
    probed = {int(f.stem.removeprefix("step")): next(iter(json.loads(f.read_text()).values()))["deviation"]["numbers"]["pairs"]["4,3"]
              for f in sorted((HERE.parent / "probes" / "authors-seed-replay").glob("step*.json"))}
    if not probed:
        return ""
    shown = range(-3, 5)
    signed = lambda o: f"{o:+d}" if o else "0"  # noqa: E731
    pair = lambda a, b: f"{a} / {b}"  # noqa: E731
    fmt = lambda dist, o: "" if dist is None else f"{dist.get(o, 0.0):.2f}"  # noqa: E731
    out = ["γ 0.8, the authors' seed: (4,3) answers on train-split keys, share at each offset from x − 10 "
           "(0 inferential, +4 symmetric), authors' log / replay", "",
           "| step | " + " | ".join(map(signed, shown)) + " | near misses (1-3 away) | most common |",
           "|---|" + "---|" * (len(shown) + 2)]
    for step in sorted(set(probed) | set(authors_log.DEVIATION_43)):
        theirs, ours = authors_log.DEVIATION_43.get(step), probed.get(step)
        ours_dist = None if ours is None else {int(k): v for k, v in ours["offsets"].items()}
        cells = [pair(fmt(theirs, o), fmt(ours_dist, o)) for o in shown]
        near = pair("" if theirs is None else f"{authors_log.near(theirs):.2f}", "" if ours is None else f"{ours['near']:.2f}")
        mode = pair("" if theirs is None else signed(max(theirs, key=theirs.get)), "" if ours is None else signed(ours["mode"]))
        out.append(f"| {step} | " + " | ".join(cells) + f" | {near} | {mode} |")
    return "\n".join(out)


if __name__ == "__main__":
    runs = sorted((HERE / "paper-width").glob("g*")) + sorted((HERE / "search-authors" / "runs").glob("*"))
    print("\n\n".join([seeds_table(0.8), pairs_table(), replay_deviation_table(), *(table(r) for r in runs if (r / "metrics.jsonl").is_file())]))
