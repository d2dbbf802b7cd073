"""The anchor task's metric vocabulary: the held-out pair's two mappings, the seen-pair fit, per-pair
training speed (Fig 19), and where each is shown (see :mod:`mechinit.tasks.vocabulary`)."""

from __future__ import annotations

from mechinit.tasks.vocabulary import Metric, Vocabulary, fmt

HELD_OUT = "4,3"  # the pair sweeps, the card and the zoo index report (paper §4)
SEEN_SHADE = 0.9  # the paper shades cells whose seen-pair test accuracy is below 90%
PAIR_ACC_TARGET = 0.6  # Fig 19: epochs until a pair's training accuracy reaches 60%

INFERENTIAL = Metric("acc_inferential", "inferential mapping")
SYMMETRIC = Metric("acc_symmetric", "symmetric mapping")
SEEN = Metric("seen_test_acc", "seen-pair test")
INFERENTIAL_MAX = Metric("acc_inferential_max_over_training", "inferential mapping, max over training")
SYMMETRIC_MAX = Metric("acc_symmetric_max_over_training", "symmetric mapping, max over training")


def train_keys_and_best(rec: dict) -> tuple[dict, dict]:
    """A pair's accuracies on train-split keys and its maximum over training (test-split keys); ``{}`` where missing."""
    return rec.get("train_keys") or {}, (rec.get("max_over_training") or {}).get("test_keys") or {}


def verdict_line(name: str, pairs: dict) -> str:
    """One line for the held-out pair: ``NAME: (4,3) LABEL (inferential 0.96, symmetric 0.00)``."""
    rec = pairs[HELD_OUT]
    return f"{name}: ({HELD_OUT}) {rec['label']} (inferential {rec['inferential']:.2f}, symmetric {rec['symmetric']:.2f})"


class AnchorVocabulary(Vocabulary):
    summary_keys = ("seen_test_acc", "seen_test_loss", "train_acc")
    sweep_metrics = (INFERENTIAL, SYMMETRIC, SEEN, INFERENTIAL_MAX, SYMMETRIC_MAX)
    plotted = (SYMMETRIC, INFERENTIAL, SYMMETRIC_MAX, INFERENTIAL_MAX)
    table = (SEEN, SYMMETRIC, INFERENTIAL, SYMMETRIC_MAX, INFERENTIAL_MAX)
    subject = f"({HELD_OUT}) accuracy"
    shade = ("seen_test_acc", SEEN_SHADE, "seen-pair test")
    report_note = f"({HELD_OUT}) scored on test-split keys"

    def summary_lines(self, row: dict) -> list[str]:
        lines = []
        for name, rec in row.get("pairs", {}).items():
            if rec["seen"]:
                continue
            train_keys, best = train_keys_and_best(rec)
            lines.append(f"  ({name}) unseen: inferential acc {fmt(rec['inferential'])}, symmetric acc {fmt(rec['symmetric'])} -> {rec['label']}"
                         f" (train-split keys: {fmt(train_keys.get('inferential'))} / {fmt(train_keys.get('symmetric'))};"
                         f" max over training: {fmt(best.get('inferential'))} / {fmt(best.get('symmetric'))})")
        return lines

    def sweep_record(self, rows: list[dict]) -> dict:
        last = rows[-1]
        pairs = last.get("pairs") or {}
        pair = pairs.get(HELD_OUT, {})
        best = train_keys_and_best(pair)[1]
        reached = lambda name: next((r["epoch"] for r in rows if (r["pairs"][name].get("train_acc") or 0) >= PAIR_ACC_TARGET), None)  # noqa: E731
        return {"acc_inferential": pair.get("inferential"), "acc_symmetric": pair.get("symmetric"), "label": pair.get("label"),
                "seen_test_acc": last.get("seen_test_acc"),
                "acc_inferential_max_over_training": best.get("inferential"), "acc_symmetric_max_over_training": best.get("symmetric"),
                "epochs_to_pair_acc": {name: reached(name) for name, rec in pairs.items() if rec.get("seen")}}

    def card_lines(self, row: dict) -> list[str]:
        unseen = [(name, rec) for name, rec in row.get("pairs", {}).items() if not rec["seen"]]
        if not unseen:
            return []
        lines = ["Held-out pairs: accuracy under each mapping at the end of training on test-split and on train-split keys "
                 "(the authors' code scores (4,3) on the latter), and the maximum over training (test-split keys):", "",
                 "| pair | inferential | symmetric | label | inferential, train-split keys | symmetric, train-split keys "
                 "| inferential, max over training | symmetric, max over training |", "|---|---|---|---|---|---|---|---|"]
        for name, rec in unseen:
            train_keys, best = train_keys_and_best(rec)
            cells = [rec["inferential"], rec["symmetric"], rec["label"], train_keys.get("inferential"), train_keys.get("symmetric"),
                     best.get("inferential"), best.get("symmetric")]
            lines.append(f"| ({name}) | " + " | ".join(c if isinstance(c, str) else fmt(c, '.4g') for c in cells) + " |")
        return lines + [""]

    def model_rows(self, row: dict) -> dict[str, float | str | None]:
        out = {"seen-pair test accuracy": row.get("seen_test_acc")}
        for name, rec in sorted((row.get("pairs") or {}).items()):
            if not rec.get("seen"):
                out[f"({name}) held out: verdict"] = (f"{rec.get('label')} (inferential {fmt(rec.get('inferential'), '.3g')}, "
                                                      f"symmetric {fmt(rec.get('symmetric'), '.3g')})")
        return out

    def precision_record(self, row: dict) -> dict:
        """Every held-out pair's final accuracies on both key splits (checked against float16 entries)."""
        out = {}
        for name, rec in sorted((row.get("pairs") or {}).items()):
            if not rec.get("seen"):
                keys = rec.get("train_keys") or {}
                out[name] = {"test_keys": {"inferential": rec.get("inferential"), "symmetric": rec.get("symmetric")},
                             "train_keys": {"inferential": keys.get("inferential"), "symmetric": keys.get("symmetric")}}
        return {"pairs": out}

    def index_row(self, task_options: dict, row: dict) -> dict:
        pair = row.get("pairs", {}).get(HELD_OUT, {})
        return {"variant": task_options.get("variant"), "seen_test_acc": row.get("seen_test_acc"),
                "acc_43_inferential": pair.get("inferential"), "acc_43_symmetric": pair.get("symmetric"), "verdict_43": pair.get("label")}

    def figures(self, summary: dict) -> list:
        """Fig 19: epochs until each seen pair's training accuracy reaches 60%, per cell: the mean over the
        cell's finished runs (every lr and seed), its trace named with how many of the cell's runs that is.
        A pair that some finished run never brings to 60% has no mean (no bar); the trace's name says how
        many runs that holds for."""
        import plotly.graph_objects as go

        cells = summary["cells"]
        if not any(r.get("epochs_to_pair_acc") for c in cells for r in c["runs"]):
            return []
        fig = go.Figure()
        for c in cells:
            per_pair: dict[str, list] = {}
            for r in c["runs"]:
                for name, epoch in (r.get("epochs_to_pair_acc") or {}).items():
                    per_pair.setdefault(name, []).append(epoch)
            names = sorted(per_pair)
            means = [None if any(e is None for e in per_pair[n]) else sum(per_pair[n]) / len(per_pair[n]) for n in names]
            done = sum(1 for r in c["runs"] if not r.get("missing"))
            short = sum(1 for r in c["runs"] if any(e is None for e in (r.get("epochs_to_pair_acc") or {}).values()))
            label = ", ".join(f"{k}={v}" for k, v in c["axes"].items()) or "all runs"
            gap = f"; {short} never reach {PAIR_ACC_TARGET:.0%} on some pair, which has no bar" if short else ""
            fig.add_trace(go.Bar(x=[f"({n})" for n in names], y=means, name=f"{label} (mean of {done} of {len(c['runs'])} runs{gap})"))
        title = f"epochs for each seen pair to reach {PAIR_ACC_TARGET:.0%} training accuracy"
        if all(y is None for trace in fig.data for y in trace.y):
            title += f" (no bars: every pair has a finished run that never brings it to {PAIR_ACC_TARGET:.0%})"
        fig.update_layout(title=title, xaxis_title="seen pair",
                          yaxis_title="epochs", barmode="group", showlegend=True)
        return [fig]


ANCHOR = AnchorVocabulary()
