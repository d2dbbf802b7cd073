"""One self-contained HTML report (plotly.js embedded once) and ``results.json`` for a probe run.

With two targets each probe gets one row with the two figures side by side, under a table of the
headline numbers — the way the paper compares small and large initialisation.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from mechinit.card import format_value
from mechinit.runs import atomic_write_bytes
from probes.base import Result


def results_json(results: dict[str, dict[str, Result]]) -> dict:
    """``{target: {probe: result.to_dict()}}``."""
    return {target: {name: r.to_dict() for name, r in by_probe.items()} for target, by_probe in results.items()}


def _headline_table(results: dict[str, dict[str, Result]]) -> str:
    targets = list(results)
    rows = []
    for probe in next(iter(results.values())):
        keys = list(results[targets[0]][probe].headline)
        for key in keys:
            cells = "".join(f"<td>{html.escape(format_value(results[t][probe].headline.get(key)))}</td>" for t in targets)
            rows.append(f"<tr><td>{probe}.{key}</td>{cells}</tr>")
    head = "".join(f"<th>{html.escape(t)}</th>" for t in targets)
    return f"<table><tr><th>headline</th>{head}</tr>{''.join(rows)}</table>"


def write_report(out_dir: str | Path, results: dict[str, dict[str, Result]]) -> Path:
    """Write ``results.json`` and ``report.html`` into ``out_dir``; returns the report's path."""
    from plotly.offline import get_plotlyjs

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out_dir / "results.json", (json.dumps(results_json(results), indent=2) + "\n").encode())
    sections = []
    for probe in next(iter(results.values())):
        figs = "".join(
            f"<div class='cell'><h3>{html.escape(t)}</h3>{results[t][probe].figure().to_html(full_html=False, include_plotlyjs=False)}</div>"
            for t in results
        )
        sections.append(f"<h2>{probe}</h2><div class='row'>{figs}</div>")
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>mechinit probe report</title>"
        f"<script type='text/javascript'>{get_plotlyjs()}</script>"
        "<style>body{font-family:sans-serif;margin:1em} .row{display:flex;gap:1em} .cell{flex:1;min-width:0}"
        " table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}</style></head><body>"
        f"<h1>mechinit probe report</h1><p>targets: {html.escape(', '.join(results))}; weights read unprocessed.</p>"
        f"{_headline_table(results)}{''.join(sections)}</body></html>"
    )
    atomic_write_bytes(out_dir / "report.html", page.encode())
    return out_dir / "report.html"
