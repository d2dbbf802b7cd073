"""The sweep report: phase diagrams (paper Fig 2a,b) or a γ curve (Fig 2c style), one HTML file."""

from __future__ import annotations

from pathlib import Path

from mechinit.runs.folder import atomic_write_bytes


def _mean(cell: dict, metric: str):
    return (cell.get(metric) or {}).get("mean")


def vocabulary(summary: dict):
    """The metric vocabulary of the sweep's task (``spec.base.task.name``)."""
    from mechinit.config import TaskConfig
    from mechinit.tasks import vocabulary_of

    return vocabulary_of(summary["spec"]["base"]["task"].get("name", TaskConfig.name))


def shown_metrics(summary: dict) -> list:
    """The task's plotted metrics that have a number in some cell."""
    return [m for m in vocabulary(summary).plotted if any(_mean(c, m.key) is not None for c in summary["cells"])]


def figures(summary: dict) -> list:
    import plotly.graph_objects as go

    axes, cells = summary["axes"], summary["cells"]
    vocab, metrics = vocabulary(summary), shown_metrics(summary)
    titled = lambda m: f"{vocab.subject} under the {m.title}" if vocab.subject else m.title  # noqa: E731
    figs = []
    if len(axes) >= 2:
        x_key, y_key = axes[0], axes[1]
        xs = sorted({c["axes"][x_key] for c in cells})
        ys = sorted({c["axes"][y_key] for c in cells})
        lookup = {(c["axes"][x_key], c["axes"][y_key]): c for c in cells}
        for metric in metrics:
            z = [[_mean(lookup.get((x, y)) or {}, metric.key) for x in xs] for y in ys]
            hover = [[", ".join(r["id"] for r in (lookup.get((x, y)) or {}).get("runs", [])) for x in xs] for y in ys]
            bounds = {"zmin": 0, "zmax": 1} if metric.bounded else {}
            fig = go.Figure(go.Heatmap(z=z, x=[str(x) for x in xs], y=[str(y) for y in ys], colorscale="Viridis", **bounds,
                                       text=hover, hovertemplate="%{x}, %{y}: %{z}<br>%{text}<extra></extra>",
                                       colorbar=dict(title="accuracy" if metric.bounded else "")))
            title = titled(metric)
            if vocab.shade is not None:
                key, below, what = vocab.shade
                for (x, y), c in lookup.items():
                    value = _mean(c, key)
                    if value is not None and value < below:
                        fig.add_shape(type="rect", x0=xs.index(x) - 0.5, x1=xs.index(x) + 0.5, y0=ys.index(y) - 0.5, y1=ys.index(y) + 0.5,
                                      fillcolor="grey", opacity=0.6, line_width=0)
                title += f" (grey: {what} < {below:.0%})"
            missing = [(i, j) for j, row in enumerate(z) for i, value in enumerate(row) if value is None]
            for i, j in missing:  # a cell whose runs have not all finished: named, never shaded as a result
                fig.add_annotation(x=i, y=j, text="not finished", showarrow=False, font=dict(color="black"))
            if missing:
                title += "; blank: runs not finished"
            fig.update_layout(title=title, xaxis_title=x_key, yaxis_title=y_key, xaxis_type="category", yaxis_type="category")
            figs.append(fig)
    if len(axes) == 1:
        x_key = axes[0]
        fig = go.Figure()
        for metric in metrics:
            pts = sorted(((c["axes"][x_key], c.get(metric.key) or {}) for c in cells), key=lambda p: p[0])
            fig.add_trace(go.Scatter(x=[p[0] for p in pts], y=[p[1].get("mean") for p in pts], name=metric.title, mode="lines+markers",
                                     error_y=dict(type="data", array=[p[1].get("std") for p in pts])))
        fig.update_layout(title=f"{vocab.subject or 'headline metrics'} against {x_key} (mean ± std over {summary['spec']['mean_over']})", xaxis_title=x_key)
        figs.append(fig)
    figs += speed_figures(summary) + vocab.figures(summary)
    return figs


def speed_figures(summary: dict) -> list:
    """Fig 18: epochs until the training loss reaches 5e-2 against the first axis, one line per
    value of the second (e.g. n_layers coloured by task.groups)."""
    import plotly.graph_objects as go

    axes, cells = summary["axes"], summary["cells"]
    if not axes or all(_mean(c, "epochs_to_loss") is None for c in cells):
        return []
    x_key = axes[0]
    series = {}
    for c in cells:
        label = ", ".join(f"{k}={c['axes'][k]}" for k in axes[1:]) or "all"
        series.setdefault(label, []).append((c["axes"][x_key], c["epochs_to_loss"]["mean"], c["epochs_to_loss"]["std"]))
    def name(label: str, pts: list) -> str:  # a cell without a mean draws no point; the legend says how many and why
        gaps = sum(1 for p in pts if p[1] is None)
        return f"{label} ({gaps} of {len(pts)} cells: no point, a seed never reached 5e-2)" if gaps else label

    fig18 = go.Figure([go.Scatter(x=[p[0] for p in sorted(pts)], y=[p[1] for p in sorted(pts)], name=name(label, pts), mode="lines+markers",
                                  error_y=dict(type="data", array=[p[2] for p in sorted(pts)])) for label, pts in series.items()])
    fig18.update_layout(title="epochs for the training loss to reach 5e-2", xaxis_title=x_key, yaxis_title="epochs")
    return [fig18]


def _num(stat: dict | None) -> str:
    """``mean ± std (n)`` at 3 significant digits; ``null`` when missing."""
    if not stat or stat.get("mean") is None:
        return "null"
    std = f" ± {stat['std']:.2g}" if stat.get("std") else ""
    return f"{stat['mean']:.3g}{std}"


def cells_table(summary: dict) -> str:
    """One row per cell: its axis values, then each shown metric's mean ± std over the seeds."""
    import html

    axes, cells = summary["axes"], summary["cells"]
    shown = [m for m in vocabulary(summary).table if any(_mean(c, m.key) is not None for c in cells)]
    head = "".join(f"<th>{html.escape(a)}</th>" for a in axes) + "".join(f"<th>{html.escape(m.title)}</th>" for m in shown) + "<th>runs finished</th>"
    rows = []
    for c in sorted(cells, key=lambda c: [str(c["axes"][a]) for a in axes]):
        vals = "".join(f"<td class='num'>{html.escape(str(c['axes'][a]))}</td>" for a in axes)
        vals += "".join(f"<td class='num'>{_num(c.get(m.key))}</td>" for m in shown)
        done = sum(1 for r in c.get("runs", []) if not r.get("missing"))
        rows.append(f"<tr>{vals}<td class='num'>{done} of {len(c.get('runs', []))}</td></tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def reduction(spec: dict) -> str:
    """How a cell is made from its runs, in words."""
    best, mean = list(spec.get("best_over") or []), list(spec.get("mean_over") or [])
    if best and mean:
        return f"each cell takes, per metric, the best run over {best}, then the mean ± std over {mean}"
    if best:
        return f"each cell takes, per metric, the best run over {best}"
    return f"each cell takes the mean ± std over {mean}" if mean else "each cell is one run"


def scope(summary: dict) -> str:
    """How many cells over which axes, in words: ``4 cells over ['init.gamma', 'model.n_layers']``, or
    ``1 cell (no axis besides ['train.seed'])`` for a sweep of seeds only."""
    n, axes = len(summary["cells"]), list(summary["axes"])
    cells = f"{n} cell{'' if n == 1 else 's'}"
    if axes:
        return f"{cells} over {axes}"
    varied = [*(summary["spec"].get("best_over") or []), *(summary["spec"].get("mean_over") or [])]
    return f"{cells} (no axis besides {varied})" if varied else f"{cells} (nothing varies)"


def write_report(out_dir: str | Path, summary: dict) -> Path:
    import html

    from mechinit.htmlpage import figure_html, page, row_html

    figs = "".join(row_html([("", figure_html(f, f"fig-{i}"))]) for i, f in enumerate(figures(summary)))
    failed = "".join(f"<li>{html.escape(k)}: {html.escape(str(v))}</li>" for k, v in summary.get("failed", {}).items())
    note = vocabulary(summary).report_note
    records = [r for c in summary["cells"] for r in c.get("runs", [])]
    done = sum(1 for r in records if not r.get("missing"))
    partial = (f"<p><b>Partial: {done} of {len(records)} runs finished</b>; a cell with a run missing is null (blank) until "
               "its runs finish.</p>") if done < len(records) else ""
    body = (f"<h1>mechinit sweep</h1>{partial}<p>{html.escape(scope(summary))}; "
            f"{html.escape(reduction(summary['spec']))}"
            f"{f'; {html.escape(note)}' if note else ''}; failed runs: {len(summary.get('failed', {}))}</p>"
            f"<ul>{failed}</ul>{cells_table(summary)}{figs}")
    path = Path(out_dir) / "report.html"
    atomic_write_bytes(path, page("mechinit sweep", body).encode())
    return path
