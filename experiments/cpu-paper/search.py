"""The search for a CPU preset that shows the paper's claim C1 (small init inferential, large init symmetric
on (4,3)) at d_model 128, with the weight-decay window among the knobs.

usage: python experiments/cpu-paper/search.py screen RUNS_DIR [--jobs 2] [--only NAME ...]
       python experiments/cpu-paper/search.py confirm RUNS_DIR NAME --large-gamma G [--kernels avx2] [--jobs 2]
       python experiments/cpu-paper/search.py table RUNS_DIR [--write]
       python experiments/cpu-paper/search.py list

screen: at most 12 runs on seed 0 (below), one thread each, --jobs at a time. confirm: the screened config NAME on
seeds 0-4 (small init, its own γ) and at --large-gamma (large init); with --kernels avx2 it reruns small init's
seeds under ATEN_CPU_CAPABILITY=avx2 into RUNS_DIR/avx2/. The bar: small init inferential >= 0.9 on >= 4 of 5
seeds on each kernel set, large init symmetric >= 0.9 on >= 4 of 5, <= 20 min per model on 2 cores.
Rerunning a command skips the finished runs. Run it from a pinned worktree (git worktree add ../frozen-cpu COMMIT).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BASE = ["--preset", "cpu-small-init", "--set", "train.threads=1"]


def wd(value: float, window: tuple[float, float] | None = None) -> list[str]:
    sets = ["--set", f"train.weight_decay={value}"]
    return sets + (["--set", f"train.weight_decay_window={window[0]},{window[1]}"] if window else [])


def shape(layers: int, gamma: float) -> list[str]:
    return ["--set", f"model.n_layers={layers}", "--set", f"init.gamma={gamma}"]


# name -> extra arguments. Windows are compared at equal total decay (wd x window length = 0.1 x 1): full 0.1,
# [0.5,1] at 0.2, [0.25,0.5] and [0,0.25] at 0.4. Depth 4 γ 0.6 is the cell that leaned inferential; depth 2
# γ 1.0 is cpu-small-init; γ 0.8 and 1.2 are a smaller and a larger step around it.
SCREEN = {
    "L4-g0.6-wd0.01": shape(4, 0.6) + wd(0.01),
    "L4-g0.6-wd0.1": shape(4, 0.6) + wd(0.1),
    "L4-g0.6-wd0.2-late": shape(4, 0.6) + wd(0.2, (0.5, 1)),
    "L4-g0.6-wd0.4-mid": shape(4, 0.6) + wd(0.4, (0.25, 0.5)),
    "L4-g0.6-wd0.4-early": shape(4, 0.6) + wd(0.4, (0, 0.25)),
    "L4-g0.6-wd0.1-late": shape(4, 0.6) + wd(0.1, (0.5, 1)),
    "L2-g1.0-wd0.1": shape(2, 1.0) + wd(0.1),
    "L2-g1.0-wd0.2-late": shape(2, 1.0) + wd(0.2, (0.5, 1)),
    "L2-g1.0-wd0.4-mid": shape(2, 1.0) + wd(0.4, (0.25, 0.5)),
    "L4-g1.0-wd0.2-late": shape(4, 1.0) + wd(0.2, (0.5, 1)),
    "L4-g0.8-wd0.2-late": shape(4, 0.8) + wd(0.2, (0.5, 1)),
    "L4-g1.2-wd0.2-late": shape(4, 1.2) + wd(0.2, (0.5, 1)),
}
SEEDS = range(5)
BAR = 0.9
NEED = 4  # of the 5 seeds, on each kernel set


def train(argv: list[str], out: Path, env: dict | None = None) -> None:
    if (out / "model.safetensors").is_file():
        return
    args = ["--resume", str(out)] if (out / "resume" / "state.json").is_file() else [*BASE, *argv, "--out", str(out)]
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.log", "a") as log:
        subprocess.run([sys.executable, "-m", "mechinit", "train", *args, "--quiet"], stdout=log, stderr=subprocess.STDOUT,
                       env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}, check=True)


def outcome(run: Path) -> dict | None:
    """The finished run's (4,3) label and accuracies (test-split keys), seen-pair accuracy and minutes."""
    if not (run / "model.safetensors").is_file():
        return None
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    last = rows[-1]
    pair = last["pairs"]["4,3"]
    return {"label": pair["label"], "inferential": pair["inferential"], "symmetric": pair["symmetric"],
            "seen": last["seen_test_acc"], "minutes": last["elapsed_s"] / 60}


def confirm_runs(runs: Path, name: str, large_gamma: float, kernels: str | None) -> dict[Path, tuple[list[str], dict | None]]:
    small = SCREEN[name]
    large = small + ["--set", f"init.gamma={large_gamma}"]
    if kernels:
        env = {"ATEN_CPU_CAPABILITY": kernels}
        return {runs / kernels / name / f"small-s{s}": (small + ["--set", f"train.seed={s}"], env) for s in SEEDS}
    return {**{runs / name / f"small-s{s}": (small + ["--set", f"train.seed={s}"], None) for s in SEEDS},
            **{runs / name / f"large-g{large_gamma}-s{s}": (large + ["--set", f"train.seed={s}"], None) for s in SEEDS}}


def table_lines(runs: Path) -> list[str]:
    """The finished runs, one row each, then per confirmed configuration the counts against the bar."""
    lines = ["| run | (4,3) | inferential | symmetric | seen-pair | minutes |", "|---|---|---|---|---|---|"]
    for folder in sorted(p.parent for p in runs.rglob("model.safetensors")):
        o = outcome(folder)
        lines.append(f"| {folder.relative_to(runs)} | {o['label']} | {o['inferential']:.3f} | {o['symmetric']:.3f} | "
                     f"{o['seen']:.3f} | {o['minutes']:.1f} |")
    for group in sorted({p.parent.parent for p in runs.rglob("small-s*/model.safetensors")}):
        smalls, larges = finished(group, "small-s*"), finished(group, "large-*")
        k_inf = sum(1 for o in smalls if o["inferential"] >= BAR)
        k_sym = sum(1 for o in larges if o["symmetric"] >= BAR)
        lines.append(f"\n{group.relative_to(runs)}: small init inferential >= {BAR} on {k_inf} of {len(smalls)} finished "
                     f"({standing(k_inf, len(smalls))})"
                     + (f"; large init symmetric >= {BAR} on {k_sym} of {len(larges)} finished ({standing(k_sym, len(larges))})"
                        if larges else ""))
    return lines


def finished(group: Path, pattern: str) -> list[dict]:
    """The outcomes of the group's finished runs whose folder names match ``pattern`` (runs under way are left out)."""
    return [o for o in map(outcome, sorted(group.glob(pattern))) if o]


def standing(hits: int, done: int) -> str:
    """Where one side of the bar (>= NEED of the 5 seeds) stands: met, not met (too many misses already), or open."""
    if done - hits > len(SEEDS) - NEED:
        return f"bar not met: {done - hits} of {len(SEEDS)} below {BAR}"
    if hits >= NEED:
        return "bar met"
    return f"open: needs {NEED} of {len(SEEDS)}"


BEGIN, END = "<!-- cpu-paper table: python experiments/cpu-paper/search.py table RUNS_DIR --write -->", "<!-- /cpu-paper table -->"


def record_runs(runs: Path, into: Path = Path(__file__).resolve().parent / "runs") -> None:
    """Copy each finished run's config.json and metrics.jsonl into this study's runs/ (weights stay behind)."""
    for folder in sorted(p.parent for p in runs.rglob("model.safetensors")):
        target = into / folder.relative_to(runs)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "metrics.jsonl"):
            shutil.copy2(folder / name, target / name)


def write_table(lines: list[str], page: Path = Path(__file__).resolve().parent / "README.md") -> None:
    """Put the table between the markers of this study's README (the rest of the page is left as it is)."""
    text = page.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{page} has no table markers ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    page.write_text(f"{head}{BEGIN}\n" + "\n".join(lines) + f"\n{END}{rest.split(END, 1)[1]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("stage", choices=("screen", "confirm", "table", "list"))
    ap.add_argument("runs", type=Path, nargs="?")
    ap.add_argument("name", nargs="?")
    ap.add_argument("--large-gamma", type=float)
    ap.add_argument("--kernels", choices=("avx2", "avx512"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--write", action="store_true",
                    help="table: also put it into this study's README.md and copy each finished run's config and metrics to runs/")
    args = ap.parse_args(argv)
    if args.stage == "list":
        print("\n".join(f"{n}: mechinit train {' '.join(BASE + a)}" for n, a in SCREEN.items()))
        return 0
    if args.runs is None:
        ap.error(f"{args.stage} needs RUNS_DIR")
    if args.stage == "table":
        lines = table_lines(args.runs)
        print("\n".join(lines))
        if args.write:
            write_table(lines)
            record_runs(args.runs)
        return 0
    if args.stage == "screen":
        todo = {args.runs / "screen" / n: (a, None) for n, a in SCREEN.items() if not args.only or n in args.only}
    else:
        if args.name not in SCREEN or args.large_gamma is None:
            ap.error(f"confirm needs NAME (one of {', '.join(SCREEN)}) and --large-gamma")
        todo = confirm_runs(args.runs, args.name, args.large_gamma, args.kernels)
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda item: train(item[1][0], item[0], item[1][1]), todo.items()))
    print("\n".join(table_lines(args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
