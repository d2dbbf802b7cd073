"""Tables of docs/other-tasks.md from the sweep folders written by experiments/other-tasks/run.sh.

usage: python experiments/other-tasks/table.py [SWEEPS_DIR]   (default sweeps/)
Missing sweeps or runs print as null.
"""

import statistics
import sys
from pathlib import Path

from mechinit.probes.embedding_cosine import mean_cosines
from safetensors.torch import load_file

from mechinit import runs
from mechinit.tasks import make_task

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else "sweeps")


def fmt(values):
    values = [v for v in values if v is not None]
    if not values:
        return "null"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.fmean(values):.3f} ± {statistics.pstdev(values):.3f}"


def finished(sweep: str):
    for folder in sorted((ROOT / sweep / "runs").glob("*")):
        if (folder / runs.WEIGHTS).is_file():
            yield folder, runs.load_run_config(folder), runs.read_metrics(folder)


def at_epoch(rows, epoch, key):
    row = next((r for r in rows if r["epoch"] >= epoch - 1e-9), None)
    return None if row is None else key(row)


def c9(sweep: str) -> None:
    by_gamma: dict[float, list] = {}
    for folder, cfg, rows in finished(sweep):
        by_gamma.setdefault(cfg.init.gamma, []).append((folder, cfg, rows))
    print(f"\n{sweep}: ΔL = L(memory, train keys) − L(reasoning, train keys); mean ± std over seeds (n)\n")
    print("| γ | n | ΔL ep 1 | ΔL ep 2 | ΔL ep 3 | ΔL ep 5 | ΔL final | mean ΔL over evals | acc R-test ep 1 | acc M ep 1 | acc R-test final | acc M final | cos R anchors | cos M anchors |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for gamma in sorted(by_gamma):
        group = by_gamma[gamma]
        col = lambda f: [f(rows) for _, _, rows in group]  # noqa: E731
        dl = lambda e: col(lambda rows: at_epoch(rows, e, lambda r: r["delta_loss"]))  # noqa: E731
        acc = lambda e, k: col(lambda rows: at_epoch(rows, e, lambda r: r["acc"][k]))  # noqa: E731
        mean_dl = col(lambda rows: statistics.fmean(r["delta_loss"] for r in rows[1:]))
        cos_r, cos_m = [], []
        for folder, cfg, _ in group:
            groups = make_task(cfg).token_groups()
            cos = mean_cosines(load_file(str(folder / runs.WEIGHTS))["embed.W_E"], groups)
            cos_r.append(cos["reasoning anchors"])
            cos_m.append(cos["memory anchors"])
        final = lambda k: col(lambda rows: rows[-1]["acc"][k])  # noqa: E731
        print(f"| {gamma} | {len(group)} | {fmt(dl(1))} | {fmt(dl(2))} | {fmt(dl(3))} | {fmt(dl(5))} | {fmt(col(lambda r: r[-1]['delta_loss']))} "
              f"| {fmt(mean_dl)} | {fmt(acc(1, 'reasoning_test'))} | {fmt(acc(1, 'memory_train'))} | {fmt(final('reasoning_test'))} "
              f"| {fmt(final('memory_train'))} | {fmt(cos_r)} | {fmt(cos_m)} |")


def c10(sweep: str) -> None:
    cells: dict[tuple, list] = {}
    for _, cfg, rows in finished(sweep):
        cells.setdefault((cfg.init.gamma, cfg.train.weight_decay), []).append(rows)
    print(f"\n{sweep}: exact match, mean ± std over seeds (n)\n")
    print("| γ | wd | n | test (held out) final | test best over evals | train final | train loss final | epochs |")
    print("|---|---|---|---|---|---|---|---|")
    for (gamma, wd) in sorted(cells):
        group = cells[(gamma, wd)]
        print(f"| {gamma} | {wd} | {len(group)} | {fmt([r[-1]['exact_match']['test'] for r in group])} "
              f"| {fmt([max(x['exact_match']['test'] for x in r) for r in group])} | {fmt([r[-1]['exact_match']['train'] for r in group])} "
              f"| {fmt([r[-1]['train_loss'] for r in group])} | {group[0][-1]['epoch']:.0f} |")


if __name__ == "__main__":
    c9("c9-transformer")
    c9("c9-emb-mlp")
    c9("c9-memory12")
    c10("c10-addition")
    c10("c10-scan")
    c10("c10-prontoqa")
