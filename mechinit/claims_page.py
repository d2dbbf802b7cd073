"""The one page of ``mechinit paper``: a verdict table, then each claim with its criterion, numbers and figure."""

from __future__ import annotations

import html
import json

from mechinit.htmlpage import figure_html, page, row_html

COLOURS = {"reproduced": "#1a7f37", "partly": "#9a6700", "not reproduced": "#cf222e", "not run": "#6e7781"}


def _figure(spec: dict):
    import plotly.graph_objects as go

    fig = go.Figure()
    if spec["kind"] == "bars":
        names = sorted({k for values in spec["groups"].values() for k in values})
        for name in names:
            fig.add_trace(go.Bar(name=name, x=list(spec["groups"]), y=[spec["groups"][g].get(name) for g in spec["groups"]]))
        fig.update_layout(barmode="group")
    else:
        for name, points in spec["curves"].items():
            fig.add_trace(go.Scatter(name=name, x=[p[0] for p in points], y=[p[1] for p in points], mode="lines+markers"))
    fig.update_xaxes(title_text=spec["x"])
    fig.update_yaxes(title_text=spec["y"])
    fig.update_layout(title=spec["title"], height=380)
    return fig


def render(claims: dict) -> str:
    rows = "".join(f"<tr><td>{c['id']}</td><td>{html.escape(c['statement'])}</td><td>{html.escape(c['paper_figure'])}</td>"
                   f"<td style='color:{COLOURS[c['verdict']]};font-weight:600'>{c['verdict']}</td></tr>" for c in claims["claims"])
    body = ["<h1>The paper's claims, checked by mechinit</h1>",
            "<p>Computed by <code>mechinit paper</code> from the shipped zoo and the committed results under <code>experiments/</code>; "
            "each verdict is computed from the evidence against the stated criterion (<code>claims.json</code> holds everything).</p>",
            f"<table><tr><th>claim</th><th>statement</th><th>paper</th><th>verdict</th></tr>{rows}</table>"]
    for c in claims["claims"]:
        body.append(f"<h2>{c['id']} — <span style='color:{COLOURS[c['verdict']]}'>{c['verdict']}</span></h2>")
        body.append(f"<p>{html.escape(c['statement'])} ({html.escape(c['paper_figure'])})<br><b>Criterion.</b> {html.escape(c['criterion'])}</p>")
        evidence = json.dumps(c["evidence"], indent=1, default=str)
        body.append(f"<details><summary>evidence</summary><pre style='white-space:pre-wrap;font-size:0.85em'>{html.escape(evidence)}</pre></details>")
        if c["figure"]:
            body.append(row_html([("", figure_html(_figure(c["figure"]), f"fig-{c['id']}"))]))
    return page("mechinit: the paper's claims", "".join(body))
