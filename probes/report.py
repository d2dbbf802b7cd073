"""One self-contained HTML report (plotly.js embedded once) and ``results.json`` for a probe run.

The page opens with the table a researcher reads first: per model its task, γ, depth, width, seed,
step and the rows its task's vocabulary adds (by default the headline; the anchor task: seen-pair
accuracy, each held-out pair's verdict with both accuracies), then every probe's headline numbers
(3 significant digits). Below it, one section per probe with the models side by side when the
window is wide enough for both (two columns of at least 900 px), else one under the other. Every
figure is drawn at the width of its column (plotly ``responsive``) and at its own height.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from mechinit.probes.base import Result, sig3

from mechinit.files import atomic_write_bytes
from mechinit.htmlpage import figure_html, page, row_html


def results_json(results: dict[str, dict[str, Result]]) -> dict:
    """``{target: {probe: result.to_dict()}}``."""
    return {target: {name: r.to_dict() for name, r in by_probe.items()} for target, by_probe in results.items()}


def summary_table(results: dict[str, dict[str, Result]], summaries: dict[str, dict] | None) -> str:
    """Models as columns; their axes and verdicts first, then each probe's headline numbers."""
    targets = list(results)
    rows: list[str] = []

    def row(label: str, values: list[str], numeric: bool = True) -> None:
        cls = " class='num'" if numeric else ""
        rows.append(f"<tr><td>{html.escape(label)}</td>" + "".join(f"<td{cls}>{html.escape(v)}</td>" for v in values) + "</tr>")

    if summaries:
        rows.append(f"<tr class='group'><td colspan='{len(targets) + 1}'>model</td></tr>")
        s = [summaries.get(t, {}) for t in targets]
        row("task", [str(x.get("task")) for x in s], numeric=False)
        for key, label in (("gamma", "γ"), ("n_layers", "layers"), ("d_model", "d_model"), ("norm", "block"), ("seed", "seed"),
                           ("step", "step")):
            row(label, [sig3(x.get(key)) for x in s])
        labels = list(dict.fromkeys(label for x in s for label in x.get("rows", {})))  # first-seen order over the models
        for label in labels:
            values = [x.get("rows", {}).get(label) for x in s]
            row(label, [v if isinstance(v, str) else sig3(v) for v in values], numeric=not any(isinstance(v, str) for v in values))
    for probe in results[targets[0]]:
        rows.append(f"<tr class='group'><td colspan='{len(targets) + 1}'>{html.escape(probe)}</td></tr>")
        for key in results[targets[0]][probe].headline:
            row(key, [sig3(results[t][probe].headline.get(key)) if probe in results[t] else "null" for t in targets])
    head = "".join(f"<th>{html.escape(t)}</th>" for t in targets)
    return f"<table><tr><th></th>{head}</tr>{''.join(rows)}</table>"


def write_report(out_dir: str | Path, results: dict[str, dict[str, Result]], summaries: dict[str, dict] | None = None) -> Path:
    """Write ``results.json``, ``models.json`` (each target's summary: γ, shape, seed, verdicts) and
    ``report.html`` into ``out_dir``; returns the report's path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out_dir / "results.json", (json.dumps(results_json(results), indent=2) + "\n").encode())
    if summaries:
        atomic_write_bytes(out_dir / "models.json", (json.dumps(summaries, indent=2) + "\n").encode())
    sections = []
    for i, probe in enumerate(next(iter(results.values()))):
        cells = [(t, figure_html(results[t][probe].figure(), f"fig-{i}-{j}")) for j, t in enumerate(results) if probe in results[t]]
        sections.append(f"<h2>{html.escape(probe)}</h2>{row_html(cells)}")
    body = (f"<h1>mechinit probe report</h1><p>{html.escape(', '.join(results))} · weights read unprocessed · numbers in "
            f"results.json, models.json</p>{summary_table(results, summaries)}{''.join(sections)}")
    atomic_write_bytes(out_dir / "report.html", page("mechinit probe report", body).encode())
    return out_dir / "report.html"
