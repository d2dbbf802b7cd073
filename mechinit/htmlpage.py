"""Self-contained HTML pages of plotly figures (plotly.js embedded once), shared by the probe report
and the sweep report: figures drawn at the width of their column and at their own height, subplot
titles at a size that keeps them apart, and a final resize once the page has its layout."""

from __future__ import annotations

import html

MIN_COLUMN_PX = 900  # below this a figure's panels get cramped: stack the models instead
DEFAULT_HEIGHT = 450

STYLE = f"""
body {{ font-family: system-ui, sans-serif; margin: 16px 24px; color: #222; }}
h1 {{ font-size: 1.5em; margin: 0 0 4px; }} h2 {{ margin: 28px 0 8px; border-bottom: 1px solid #ddd; }}
h3 {{ font-size: 1em; margin: 4px 0; color: #444; }}
.row {{ display: grid; grid-template-columns: repeat(auto-fill, minmax({MIN_COLUMN_PX}px, 1fr)); gap: 16px; }}
.row.single {{ grid-template-columns: 1fr; }}
.cell {{ min-width: 0; }}
table {{ border-collapse: collapse; margin: 8px 0; font-size: 0.92em; }}
td, th {{ border: 1px solid #ccc; padding: 3px 10px; text-align: left; vertical-align: top; }}
th {{ background: #f4f4f4; }} td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
tr.group td {{ background: #fafafa; font-weight: 600; }}
"""


def figure_html(fig, div_id: str) -> str:
    """One plotly figure as a ``div``: full column width, its own height (or 450 px)."""
    height = int(fig.layout.height or DEFAULT_HEIGHT)
    fig.update_layout(width=None, autosize=True, height=height, margin=dict(t=90, l=70, r=30, b=60),
                      title=dict(y=0.98, yanchor="top", font=dict(size=15)), legend=dict(font=dict(size=11)))
    fig.update_annotations(font_size=12)  # subplot titles
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, default_width="100%",
                       default_height=f"{height}px", config={"responsive": True, "displaylogo": False})


def row_html(cells: list[tuple[str, str]]) -> str:
    """Figures side by side when two columns of MIN_COLUMN_PX fit, else one under the other;
    ``cells`` are ``(heading, figure_html)``."""
    layout = "row single" if len(cells) == 1 else "row"
    inner = "".join(f"<div class='cell'>{f'<h3>{html.escape(h)}</h3>' if h else ''}{f}</div>" for h, f in cells)
    return f"<div class='{layout}'>{inner}</div>"


def page(title: str, body: str) -> str:
    from plotly.offline import get_plotlyjs

    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><meta name='viewport' content='width=device-width'>"
            f"<title>{html.escape(title)}</title><script type='text/javascript'>{get_plotlyjs()}</script><style>{STYLE}</style>"
            f"</head><body>{body}"
            # each figure was drawn while the page was still growing: fit every one to its final column
            "<script>window.addEventListener('load', () => document.querySelectorAll('.js-plotly-plot')"
            ".forEach(d => Plotly.Plots.resize(d)));</script></body></html>")
