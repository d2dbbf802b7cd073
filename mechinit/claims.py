"""The paper's claims C1–C10, each checked by code against a stated criterion from the shipped zoo and the
committed results under ``experiments/`` (nothing is retrained): ``mechinit paper``.

Every claim is a function from :class:`Sources` to a record ``{"id", "statement", "paper_figure",
"criterion", "verdict", "evidence": {"numbers", "models", "commands"}, "figure"}``; the verdict —
``reproduced``, ``partly``, ``not reproduced`` or ``not run`` — is computed from the numbers in the
evidence, never written by hand. Probe results on the zoo's pair are cached in the output folder
(keyed by each entry's weight-file sha256), so a second run only rereads them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mechinit.errors import RunFolderError
from mechinit.files import read_metrics

VERDICTS = ("reproduced", "partly", "not reproduced", "not run")
PAIR = ("small-init", "large-init")
PROBES = ("information_flow", "cosine_maps", "condensation", "embedding_spectrum")
OVER_TRAINING = ("embedding_spectrum",)  # read over the entry's snapshots too, when it has them (C6's stages)
PHASE = "experiments/phase-diagram/paper-protocol/sweep.json"
OTHER = "experiments/other-tasks/results"
SEED_ODDS = "experiments/seed-odds/predictions.jsonl"
PAPER_WIDTH = "experiments/cpu-regime/paper-width"


@dataclass
class Sources:
    """What the claims read: the checkout's ``experiments/``, and the pair's numbers (evaluated and probed)."""

    root: Path
    pair: dict = field(default_factory=dict)  # alias -> {"id", "d_model", "gamma", "eval": {...}, "probes": {name: headline}}
    snapshots: dict = field(default_factory=dict)  # alias -> the steps of the entry's snapshots ([] when none)

    def json(self, rel: str):
        return json.loads((self.root / rel).read_text())


def check_checkout(root: Path) -> None:
    """One line naming what is missing when the checkout cannot give the evidence."""
    missing = [rel for rel in ("experiments", PHASE, OTHER, PAPER_WIDTH) if not (root / rel).exists()]
    if missing:
        raise RunFolderError(f"mechinit paper reads the committed results of a checkout; {root} lacks {', '.join(missing)} "
                             "(run it from a clone of the repository)")


def _record(cid, statement, figure, criterion, verdict, numbers, models=(), commands=(), plot=None) -> dict:
    assert verdict in VERDICTS
    return {"id": cid, "statement": statement, "paper_figure": figure, "criterion": criterion, "verdict": verdict,
            "evidence": {"numbers": numbers, "models": list(models), "commands": list(commands)}, "figure": plot}


def _pair_models(s: Sources) -> list[str]:
    return [f"{alias} = {s.pair[alias]['id']}" for alias in PAIR]


def _head(s: Sources, alias: str, probe: str) -> dict:
    return s.pair[alias]["probes"][probe]


def c1(s: Sources) -> dict:
    small, large = (s.pair[a]["eval"] for a in PAIR)
    ours = []
    for name in ("g0.8", "g0.8-s1", "g0.8-s2"):
        rows = read_metrics(s.root / PAPER_WIDTH / name)
        last = rows[-1]
        ours.append({"run": f"{PAPER_WIDTH}/{name}", "step": last["step"], "finished": last["step"] >= 8880,
                     "label": last["pairs"]["4,3"]["label"], "inferential": last["pairs"]["4,3"]["inferential"]})
    finished = [r for r in ours if r["finished"]]
    odds = [json.loads(line) for line in (s.root / SEED_ODDS).read_text().splitlines() if line.strip()] if (s.root / SEED_ODDS).is_file() else []
    pair_holds = small["inferential"] >= 0.9 and large["symmetric"] >= 0.9
    seeds_hold = bool(finished) and sum(r["label"] == "inferential" for r in finished) / len(finished) >= 0.5
    verdict = "reproduced" if pair_holds and seeds_hold else "partly" if pair_holds else "not reproduced"
    numbers = {"small-init (4,3) test keys": small, "large-init (4,3) test keys": large,
               "mechinit's own gamma 0.8 seeds at paper width": ours,
               "seed-odds predictions recorded at step 1,850": len(odds),
               "how far this matches Fig 2a,b": "the paper takes, per cell, the best of 9 learning rates averaged over 3 seeds; "
                                                "here one pair at one lr (the small-init model is the authors' own seed, replayed), "
                                                "our seeds at that lr, and the seed-odds runs (experiments/seed-odds) as they finish"}
    return _record("C1", "Small init gives the inferential solution on the unseen pair (4,3), large init the symmetric one.",
                   "Fig 2a,b", "reproduced: small-init inferential >= 0.9 and large-init symmetric >= 0.9 on test-split keys, and at least "
                   "half of mechinit's own finished gamma 0.8 seeds at paper width inferential; partly: the pair alone", verdict, numbers,
                   _pair_models(s), ["mechinit zoo show small-init", "mechinit train --preset paper-code --replay authors:1"],
                   _bars("(4,3) on test-split keys", {a: {"inferential": s.pair[a]["eval"]["inferential"],
                                                          "symmetric": s.pair[a]["eval"]["symmetric"]} for a in PAIR}))


def c2(s: Sources) -> dict:
    cells = s.json(PHASE)["cells"]
    lowest = min(c["axes"]["init.gamma"] for c in cells)
    return _record("C2", "Very large init (small gamma) with depth fails to fit even the seen pairs.", "Fig 2 (shaded region)",
                   "reproduced: a cell at gamma <= 0.2 and depth >= 4 with seen-pair test accuracy < 0.9; not run without such a cell",
                   "not run", {"smallest gamma in the committed phase diagram": lowest,
                               "needs": "a sweep at gamma 0.1-0.2 and depth 4-6 (mechinit sweep --set sweep.init.gamma=0.1,0.2 "
                                        "--set sweep.model.n_layers=4,6 ...); the committed diagram starts at gamma 0.3, where every "
                                        "cell fits"}, commands=[f"python experiments/phase-diagram/table.py {Path(PHASE).parent}"])


def c3(s: Sources) -> dict:
    small, large = (_head(s, a, "information_flow") for a in PAIR)
    ok = small["mechanism"] == "inferential-flow" and large["mechanism"] == "symmetric-flow"
    part = small["key_to_anchor_mass"] > large["key_to_anchor_mass"]
    return _record("C3", "Layer 1 moves the key to the anchors in the inferential solution, and merges the anchors at the last token in "
                   "the symmetric one.", "Fig 3", "reproduced: information_flow labels small-init inferential-flow and large-init "
                   "symmetric-flow; partly: only more key->anchor mass with small init",
                   "reproduced" if ok else "partly" if part else "not reproduced",
                   {a: _head(s, a, "information_flow") for a in PAIR}, _pair_models(s), ["mechinit probe small-init large-init --probe information_flow"],
                   _bars("information flow, layer 1", {a: {"key->anchor": _head(s, a, "information_flow")["key_to_anchor_mass"],
                                                           "anchors->last": _head(s, a, "information_flow")["anchors_to_last_mass"]} for a in PAIR}))


def c4(s: Sources) -> dict:
    small, large = (_head(s, a, "cosine_maps")["parallelism_gap"] for a in PAIR)
    ok = small is not None and large is not None and small >= 0.3 and large <= 0.1
    part = small is not None and large is not None and small - large >= 0.1
    return _record("C4", "Fused vectors with the same target are parallel only in the inferential solution.", "Fig 4a,b",
                   "reproduced: the centred same-target gap on the paper's seen-pair panels is >= 0.3 for small-init and <= 0.1 for "
                   "large-init (docs/c4-audit.md gives the definition); partly: small-init's exceeds large-init's by >= 0.1",
                   "reproduced" if ok else "partly" if part else "not reproduced",
                   {a: _head(s, a, "cosine_maps") for a in PAIR}, _pair_models(s), ["mechinit probe small-init large-init --probe cosine_maps"],
                   _bars("fused-vector parallelism (centred gap)", {a: {"gap": _head(s, a, "cosine_maps")["parallelism_gap"]} for a in PAIR}))


def c5(s: Sources) -> dict:
    small, large = (_head(s, a, "condensation")["n_groups_90"] for a in PAIR)
    ok = small is not None and large is not None and small <= 3 and large >= 10
    return _record("C5", "The neurons of W_Q in layer 1 condense into a few directions with small init.", "Fig 5a,b, 10",
                   "reproduced: small-init needs <= 3 groups for 90% of W_Q(1)'s neurons and large-init >= 10; partly: fewer with small init",
                   "reproduced" if ok else "partly" if (small or 0) < (large or 0) else "not reproduced",
                   {a: _head(s, a, "condensation") for a in PAIR}, _pair_models(s), ["mechinit probe small-init large-init --probe condensation"],
                   _bars("W_Q(1) groups covering 90% of neurons", {a: {"groups": _head(s, a, "condensation")["n_groups_90"]} for a in PAIR}))


def staged_growth(half_growth_step: list | None) -> bool:
    """Fig 12b's stages, read from snapshots: every top eigenvalue reaches half its final value after step 0
    (it grew; it was not there at initialisation), and they do so at two or more different snapshot steps."""
    steps = half_growth_step or []
    return bool(steps) and all(g is not None and g > 0 for g in steps) and len(set(steps)) >= 2


def c6(s: Sources) -> dict:
    small, large = (_head(s, a, "embedding_spectrum")["effective_rank"] for a in PAIR)
    low_rank = small is not None and large is not None and small <= large / 2
    growth = _head(s, "small-init", "embedding_spectrum").get("half_growth_step")
    staged = staged_growth(growth)
    verdict = ("reproduced" if low_rank and staged else "partly" if low_rank else "not reproduced")
    numbers = {a: _head(s, a, "embedding_spectrum") for a in PAIR}
    numbers["staged growth"] = (
        f"small-init's top eigenvalues reach half their final value at steps {growth} of its snapshots {s.snapshots.get('small-init')}"
        if growth else "small-init ships final weights only: no snapshots to read the growth from (experiments/paper-pair "
                       "retrains it with snapshots; docs/probes.md shows staged growth on cpu-small-init's 22 snapshots)")
    return _record("C6", "Small init gives a few large embedding-covariance eigenvalues that grow in stages, and low-rank weights.",
                   "Fig 12, 13", "reproduced: small-init's item-embedding effective rank is at most half of large-init's, and over "
                   "small-init's snapshots its top 4 eigenvalues each reach half their final value after step 0, at two or more "
                   "different steps; partly: the low rank at the end only", verdict, numbers,
                   _pair_models(s), ["mechinit probe small-init large-init --probe embedding_spectrum"],
                   _bars("item-embedding effective rank", {a: {"rank": _head(s, a, "embedding_spectrum")["effective_rank"]} for a in PAIR}))


def c7(s: Sources) -> dict:
    return _record("C7", "A larger learning rate and weight decay push towards the inferential solution.", "Fig 14",
                   "reproduced: inferential accuracy on (4,3) rises with lr and with wd over a grid at fixed gamma", "not run",
                   {"needs": "an lr x weight-decay grid at fixed gamma and depth (mechinit sweep --set sweep.train.lr=... "
                             "--set sweep.train.weight_decay=...), several seeds a cell; no such experiment is committed"})


def c8(s: Sources) -> dict:
    return _record("C8", "Non-inferential groups slow the fitting of small-init models only.", "Fig 18, 19",
                   "reproduced: with App G's groups (task.variant=app-g), small-init runs need more epochs to fit the seen pairs "
                   "while large-init runs do not", "not run",
                   {"needs": "a sweep over task.groups at small and large gamma (mechinit sweep --preset cpu-small-init --set "
                             "task.variant=app-g --set sweep.task.groups=0,2,4 --set sweep.init.gamma=0.6,1.0 ...); Fig 18/19 are drawn by "
                             "the sweep report, but no such sweep is committed"})


def _delta(cells: list) -> list[tuple[float, float | None]]:
    return sorted((c["axes"]["init.gamma"], c["delta_loss"]["mean"]) for c in cells)


FIVE_SEEDS = {"AVX-512 kernels": "c9-memory12-5seeds-avx512.json", "AVX2 kernels": "c9-memory12-5seeds-avx2.json"}


def _rises(curve: list) -> bool:
    """dL rises with gamma (every step up, or the end above the start by > 0.1) and is positive at the largest gamma."""
    if not curve:
        return False
    rising = all(b[1] >= a[1] for a, b in zip(curve, curve[1:])) or curve[-1][1] - curve[0][1] > 0.1
    return rising and curve[-1][1] > 0


def c9(s: Sources) -> dict:
    setups = {"transformer": "c9-transformer.json", "transformer, 12 memory labels": "c9-memory12.json", "emb-mlp": "c9-emb-mlp.json"}
    closest = {k: v for k, v in FIVE_SEEDS.items() if (s.root / OTHER / v).is_file()}
    curves, holds = {}, {}
    for name, file in {**setups, **{f"12 memory labels, 5 seeds, {k}": v for k, v in closest.items()}}.items():
        data = json.loads((s.root / OTHER / file).read_text())
        curve = [(g, d) for g, d in _delta(data["cells"]) if d is not None]
        spread = {c["axes"]["init.gamma"]: c["delta_loss"]["std"] for c in data["cells"]}
        holds[name] = _rises(curve)
        curves[name] = {"delta_loss_by_gamma": curve, "std_by_gamma": spread, "seeds": min(c["delta_loss"]["n"] for c in data["cells"])}
    if len(closest) == len(FIVE_SEEDS):  # the closest reading, on both kernel sets, decides; the other setups qualify it
        both = all(holds[f"12 memory labels, 5 seeds, {k}"] for k in closest)
        verdict = "reproduced" if both and all(holds[k] for k in setups) else "partly" if both or any(holds.values()) else "not reproduced"
    else:
        n = sum(holds.values())
        verdict = "reproduced" if n == len(holds) else "partly" if n else "not reproduced"
    return _record("C9", "(Companion paper) Reasoning anchors are learned faster with small init: the loss gap dL = L_memory - "
                   "L_reasoning grows with gamma.", "Yao et al. 2025, Fig 2-3",
                   "reproduced: dL (at the end of the run) rises with gamma and is positive at the largest gamma at the closest reading "
                   "(12 memory labels, 5 seeds) on both CPU kernel sets and in every other setup; partly: at the closest reading or in some setup",
                   verdict, {"setups": curves, "setting holds": holds,
                             "where our reading may differ": "dL at the end of a 10-epoch CPU run, where the companion paper reads it "
                             "early in training; our memory anchors give each (anchor, key) one fixed random label, and 12 memory anchors "
                             "make memorising costlier than 4 (docs/other-tasks.md)"},
                   commands=["bash experiments/other-tasks/run.sh", "bash experiments/other-tasks/c9-five-seeds.sh"],
                   plot=_lines("dL = L_memory - L_reasoning against gamma", {k: v["delta_loss_by_gamma"] for k, v in curves.items()}))


def c10(s: Sources) -> dict:
    tasks, holds = {}, {}
    for task in ("scan", "addition", "prontoqa"):
        data = json.loads((s.root / OTHER / f"c10-{task}.json").read_text())
        cell = {(c["axes"]["init.gamma"], c["axes"]["train.weight_decay"]): c["headline"]["mean"] for c in data["cells"]}
        small_wd, large_plain = cell[(max(g for g, _ in cell), max(w for _, w in cell))], cell[(min(g for g, _ in cell), min(w for _, w in cell))]
        tasks[task] = {"small init + large wd": small_wd, "large init + small wd": large_plain,
                       "cells": {f"gamma {g}, wd {w}": v for (g, w), v in sorted(cell.items())}}
        holds[task] = small_wd is not None and large_plain is not None and small_wd - large_plain >= 0.05
    n = sum(holds.values())
    return _record("C10", "Small init with large weight decay generalises better on real compositional data (SCAN, COGS).", "Fig 6",
                   "reproduced: small init + large wd beats large init + small wd by >= 0.05 test accuracy on every task run; partly: on some",
                   "reproduced" if n == len(holds) else "partly" if n else "not reproduced",
                   {"tasks": tasks, "holds": holds, "COGS": "not run at CPU scale (its sequences are too long for the budget)"},
                   commands=["bash experiments/other-tasks/run.sh"],
                   plot=_bars("test accuracy", {t: {"small init + large wd": v["small init + large wd"],
                                                    "large init + small wd": v["large init + small wd"]} for t, v in tasks.items()}, x="task"))


CLAIMS: tuple[Callable[[Sources], dict], ...] = (c1, c2, c3, c4, c5, c6, c7, c8, c9, c10)


def _bars(title: str, groups: dict, x: str = "model") -> dict:
    """A figure spec (plotly-free, JSON): grouped bars, one group per key; the y axis is titled ``title``."""
    return {"kind": "bars", "title": title, "groups": groups, "x": x, "y": title}


def _lines(title: str, curves: dict) -> dict:
    return {"kind": "lines", "title": title, "curves": {k: [list(p) for p in v] for k, v in curves.items()}, "x": "gamma",
            "y": "dL (nats)"}


def pair_sources(root: Path, out: Path, zoo_dir=None, progress: bool = True) -> Sources:
    """Evaluate and probe the zoo's pair (cached in ``out/cache.json`` by weight sha256)."""
    from mechinit import probes, zoo
    from mechinit.model.fastpath import last_logits
    from mechinit.zoo.store import snapshot_steps

    cache_path = out / "cache.json"
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    s = Sources(root)
    for alias in PAIR:
        try:
            ref = zoo.resolve(alias, zoo_dir=zoo_dir)
        except zoo.ZooError as e:
            raise RunFolderError(f"mechinit paper needs the zoo's {alias!r} entry (the paper-width pair): {e}") from None
        summary, files = ref.record["summary"], ref.record["files"]
        if summary.get("d_model") != 400:
            raise RunFolderError(f"mechinit paper needs the paper-width pair; the zoo's {alias!r} is d_model {summary.get('d_model')}")
        steps = snapshot_steps(ref.record)
        key = f"{ref.id}:{files['model.safetensors']['sha256']}:snapshots={len(steps)}"
        if key not in cache:
            if progress:
                print(f"[paper] evaluating and probing {alias} ({ref.id}, about 20 s) ...", flush=True)
            target = zoo.load_target(alias, zoo_dir=zoo_dir)
            pair = target.task.evaluate(lambda t: last_logits(target.model, t))["pairs"]["4,3"]
            cache[key] = {"eval": {"inferential": pair["inferential"], "symmetric": pair["symmetric"], "label": pair["label"]},
                          "probes": {name: probes.run(name, target.model, target.task, snapshots=target.snapshots if name in OVER_TRAINING
                                                      else None).headline for name in PROBES}}
            cache_path.write_text(json.dumps(cache, indent=1))
        elif progress:
            print(f"[paper] {alias}: probe results reused from {cache_path}", flush=True)
        s.pair[alias] = {"id": ref.id, **cache[key]}
        s.snapshots[alias] = steps
    return s


def build(root: Path, out: Path, zoo_dir=None, progress: bool = True) -> dict:
    """``{"claims": [...]}`` for C1–C10."""
    check_checkout(root)
    s = pair_sources(root, out, zoo_dir, progress)
    return {"claims": [claim(s) for claim in CLAIMS]}
