"""The HTML renderer: one self-contained page with forest plots, tables and a legend.

The page is a single file with inline CSS and inline SVG: no script, no font,
image or stylesheet to fetch, no external URL. :func:`render_html_fragment` lays out the
same tables as one ``<div>`` for a notebook cell (:func:`notebook_html`, a document's
``_repr_html_``), with its style scoped to that ``<div>``. A Content-Security-Policy that
allows nothing but the inline style makes a browser refuse any fetch even if
one slipped in. It prints to PDF (A4, panels and tables kept whole where they
fit). Every string is escaped, the field ids included.
"""

from __future__ import annotations

from html import escape
from typing import Final

from chartscore.render._numbers import (
    bound_text,
    cell_text,
    fraction_text,
    interval_text,
    no_trials,
    value_text,
    withheld_rate,
)
from chartscore.render.document_view import Viewable, document_view
from chartscore.render.forest import Geometry, forest_svg
from chartscore.render.view import Cell, Estimate, Kind, LabelText, Table, View, slice_label

_POLICY: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
)

_CSS: Final = """
:root { color-scheme: light; --ink: #1b1b1b; --muted: #595959; --rule: #d9d9d9;
  --good: #0072b2; --bad: #d55e00; --band: #f3f5f7; --bad-tint: #fdf0e8; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
  Arial, sans-serif; color: var(--ink); margin: 2rem auto; max-width: 72rem; padding: 0 1.5rem; }
h1 { font-size: 1.7rem; margin: 0 0 .4rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .6rem; border-bottom: 1px solid var(--rule); }
h3 { font-size: 1.05rem; margin: 0; }
h3 a, thead a { color: inherit; text-decoration: none; border-bottom: 1px dotted var(--muted); }
code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
  font-size: .92em; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
.note { color: var(--muted); font-size: .92em; margin: .2rem 0 .5rem; }
nav ul { list-style: none; padding: 0; display: flex; gap: 1.2rem; }
.key { display: flex; flex-wrap: wrap; gap: .4rem 1.6rem; align-items: center;
  margin: .3rem 0 1rem; }
.key svg { vertical-align: middle; }
figure.panel { margin: 1.4rem 0; break-inside: avoid; page-break-inside: avoid; }
figure.panel figcaption { margin-bottom: .2rem; }
.scroll { overflow-x: auto; }
svg.forest { max-width: 100%; height: auto; display: block;
  font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
svg .band { fill: var(--band); }
svg .grid { stroke: #dedede; stroke-width: 1; }
svg .axis { stroke: #8c8c8c; stroke-width: 1; }
svg .reference { stroke: #4d4d4d; stroke-width: 1; stroke-dasharray: 4 3; }
svg .tick, svg .value, svg .absent { fill: var(--muted); }
svg .label { fill: var(--ink); }
svg .label.overall { font-weight: 700; }
svg .mark .ci, svg .mark .cap { stroke: var(--good); stroke-width: 2; }
svg .mark .point { fill: var(--good); }
svg .mark.error .ci, svg .mark.error .cap { stroke: var(--bad); }
svg .mark.error .point { fill: var(--bad); }
svg .absent { font-style: italic; }
svg .zoom { fill: var(--muted); font-style: italic; }
svg .mark .arrow { fill: var(--good); }
svg .mark.error .arrow { fill: var(--bad); }
svg .margin line { stroke: #cc79a7; stroke-width: 2; stroke-dasharray: 3 2; }
svg .margin-label { fill: #a1467e; font-weight: 700; }
table { border-collapse: collapse; margin: .4rem 0 1.6rem; font-variant-numeric: tabular-nums; }
caption { text-align: left; padding-bottom: .3rem; }
caption .title { font-weight: 600; font-size: 1.05rem; display: block; }
th, td { padding: .22rem .7rem; border-bottom: 1px solid var(--rule); text-align: left;
  vertical-align: top; }
thead th { border-bottom: 2px solid #9a9a9a; font-weight: 600; }
th.label { font-weight: normal; }
td span, td.count { white-space: nowrap; }
td.count { text-align: right; }
th.error, td.error { background: var(--bad-tint); }
tbody.overall th, tbody.overall td { font-weight: 600; border-top: 2px solid #9a9a9a; }
tbody + tbody tr:first-child > * { border-top: 2px solid #bdbdbd; }
.kn, .ci { color: var(--muted); }
.suppressed { font-style: italic; }
.badge { font-size: .78em; border: 1px solid var(--bad); color: var(--bad); border-radius: 3px;
  padding: 0 .3em; margin-left: .4em; white-space: nowrap; }
dl.legend dt { font-weight: 600; margin-top: .7rem; }
dl.legend dd { margin: .1rem 0 0 1.2rem; }
.source { color: var(--muted); }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .88em;
  border-top: 1px solid var(--rule); padding-top: .6rem; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { margin: 0; max-width: none; padding: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  table, figure.panel { break-inside: avoid; page-break-inside: avoid; }
  .scroll { overflow: visible; }
  td.estimate { white-space: normal; }
  a { color: inherit; text-decoration: none; }
}
"""

_KEY: Final = (
    '<div class="key">'
    '<span><svg width="34" height="14" aria-hidden="true"><line x1="3" x2="31" y1="7" y2="7" '
    'stroke="#0072b2" stroke-width="2"/><circle cx="17" cy="7" r="4.5" fill="#0072b2"/></svg>'
    " a metric where higher is better (rate, kappa or difference) and its interval</span>"
    '<span><svg width="34" height="14" aria-hidden="true"><line x1="3" x2="31" y1="7" y2="7" '
    'stroke="#d55e00" stroke-width="2"/><rect x="12.5" y="2.5" width="9" height="9" '
    'fill="#d55e00"/></svg> an error metric, where lower is better, and its interval</span>'
    "</div>"
)
_MARGIN_KEY: Final = (
    '<span class="margin-key"><svg width="34" height="14" aria-hidden="true"><line x1="17" '
    'x2="17" y1="0" y2="14" stroke="#cc79a7" stroke-width="2" stroke-dasharray="3 2"/></svg>'
    " a gate's margin: the interval's bound must clear it (named in the header)</span>"
)


def _breakable(name: str) -> str:
    # Escaped first: entities hold no "." or "_", so the break hints land only in the name.
    return escape(name).replace(".", ".<wbr>").replace("_", "_<wbr>")


def _code(name: str) -> str:
    return f"<code>{_breakable(name)}</code>"


def _label(slice_kind: str, name: str) -> str:
    return slice_label(slice_kind, name, code=_code, text=escape)


def _estimate_cell(estimate: Estimate) -> str:
    classes = ["estimate"]
    if estimate.error:
        classes.append("error")
    if estimate.suppressed and not no_trials(estimate):
        classes.append("suppressed")
    parts = []
    fraction = fraction_text(estimate) if estimate.kind is Kind.RATE else ""
    if fraction:
        parts.append(f'<span class="kn">{escape(fraction)}</span>')
    if not withheld_rate(estimate):
        parts.append(f'<span class="rate">{escape(value_text(estimate))}</span>')
        interval = interval_text(estimate)
        if interval:
            parts.append(f'<span class="ci">{escape(interval)}</span>')
    elif estimate.bound is not None:
        parts.append(f'<span class="bound">{escape(bound_text(estimate))}</span>')
    return f'<td class="{" ".join(classes)}">{" ".join(parts)}</td>'


def _cell(cell: Cell) -> str:
    if isinstance(cell, Estimate):
        return _estimate_cell(cell)
    if cell is None:
        return f'<td class="count suppressed">{escape(cell_text(cell))}</td>'
    if isinstance(cell, int):
        return f'<td class="count">{cell}</td>'
    if isinstance(cell, LabelText):
        return f'<td class="label">{escape(cell.text)}</td>'
    return f"<td>{escape(cell)}</td>"


def _table(table: Table) -> list[str]:
    headings = [f'<th scope="col">{escape(table.label_heading)}</th>']
    for column in table.columns:
        text = escape(column.heading)
        if column.metric:
            text = f'<a href="#def-{escape(column.metric)}">{text}</a>'
        css = ' class="error"' if column.error else ""
        headings.append(f'<th scope="col"{css}>{text}</th>')
    out = [
        f'<div class="scroll"><table id="table-{escape(table.key)}">',
        f'<caption><span class="title">{escape(table.title)}</span>'
        f'<span class="note">{escape(table.note)}</span></caption>',
        f"<thead><tr>{''.join(headings)}</tr></thead>",
    ]
    group = None
    for row in table.rows:
        if row.slice != group:
            if group is not None:
                out.append("</tbody>")
            out.append(f'<tbody class="{escape(row.slice)}">')
            group = row.slice
        cells = "".join(_cell(cell) for cell in row.cells)
        out.append(
            f'<tr><th scope="row" class="label">{_label(row.slice, row.name)}</th>{cells}</tr>'
        )
    if group is not None:
        out.append("</tbody>")
    out.append("</table></div>")
    return out


def render_html(view: View) -> str:
    """The view as one self-contained HTML page (UTF-8, no script, no external reference)."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{escape(_POLICY)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(view.title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>{escape(view.title)}</h1>",
        '<dl class="facts">',
        *(f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>" for name, text in view.facts),
        "</dl>",
        "</header>",
        '<nav><ul><li><a href="#plots">Forest plots</a></li><li><a href="#tables">Tables</a>'
        '</li><li><a href="#definitions">Definitions</a></li></ul></nav>',
    ]
    if view.plots:
        key = _KEY
        if any(row.margins for plot in view.plots for row in plot.rows):
            key = key.removesuffix("</div>") + _MARGIN_KEY + "</div>"
        out += ['<section id="plots">', "<h2>Forest plots</h2>", key]
        geometry = Geometry.fit(view.plots)  # one axis position for every panel
        for number, plot in enumerate(view.plots):
            target = f"def-{plot.metric}" if plot.metric else "definitions"
            out += [
                f'<figure class="panel" id="plot-{escape(plot.key)}">',
                f'<figcaption><h3><a href="#{escape(target)}">{escape(plot.title)}</a>'
                f'</h3><p class="note">{escape(plot.note)}</p></figcaption>',
                '<div class="scroll">',
                forest_svg(plot, element_id=f"plot-title-{number}", geometry=geometry),
                "</div>",
                "</figure>",
            ]
        out.append("</section>")
    out += ['<section id="tables">', "<h2>Tables</h2>"]
    for table in view.tables:
        out += _table(table)
    out.append("</section>")
    if view.definitions:
        out += ['<section id="definitions">', "<h2>Definitions</h2>", '<dl class="legend">']
        for definition in view.definitions:
            badge = '<span class="badge">error: lower is better</span>' if definition.error else ""
            out += [
                f'<dt id="def-{escape(definition.metric)}">{escape(definition.title)} '
                f"<code>{escape(definition.metric)}</code>{badge}</dt>",
                f"<dd>{escape(definition.text)} "
                f'<span class="source">Defined in <code>{escape(definition.source)}</code>.'
                "</span></dd>",
            ]
        out += ["</dl>", "</section>"]
    out.append("<footer>")
    out += [f"<p>{escape(note)}</p>" for note in view.notes]
    out += [
        "<p>Rendered from a value-free chartscore report: counts, intervals, field ids and "
        "metric names only; no values, case ids or paths.</p>",
        "</footer>",
        "</body>",
        "</html>",
    ]
    return "\n".join(out) + "\n"


# The notebook fragment's style: the page's table rules, scoped to the fragment's <div> so
# that a notebook's own page keeps its look.
_FRAGMENT_CSS: Final = """
.chartscore-doc { font-variant-numeric: tabular-nums; }
.chartscore-doc .facts { display: grid; grid-template-columns: max-content 1fr;
  gap: 0 1rem; margin: 0 0 .6rem; }
.chartscore-doc .facts dt { opacity: .7; }
.chartscore-doc .facts dd { margin: 0; }
.chartscore-doc table { border-collapse: collapse; margin: .4rem 0 1.2rem; }
.chartscore-doc caption { text-align: left; padding-bottom: .3rem; }
.chartscore-doc caption .title { font-weight: 600; display: block; }
.chartscore-doc .note { opacity: .7; font-size: .92em; }
.chartscore-doc th, .chartscore-doc td { padding: .2rem .6rem; text-align: left;
  vertical-align: top; border-bottom: 1px solid rgba(128, 128, 128, .35); }
.chartscore-doc thead th { font-weight: 600; }
.chartscore-doc th.label { font-weight: normal; }
.chartscore-doc td span, .chartscore-doc td.count { white-space: nowrap; }
.chartscore-doc td.count { text-align: right; }
.chartscore-doc tbody.overall th, .chartscore-doc tbody.overall td { font-weight: 600; }
.chartscore-doc .kn, .chartscore-doc .ci { opacity: .7; }
.chartscore-doc .suppressed { font-style: italic; }
"""


def render_html_fragment(view: View) -> str:
    """The view's title, facts, tables, legend and notes as one ``<div>`` for a notebook.

    The page's tables (:func:`render_html`) without the forest plots, and no
    ``<html>``, ``<head>``, script or external reference: a style element scoped to
    the ``<div class="chartscore-doc">``. Every string is escaped.
    """
    out = [
        '<div class="chartscore-doc">',
        f"<style>{_FRAGMENT_CSS}</style>",
        f"<h3>{escape(view.title)}</h3>",
        '<dl class="facts">',
        *(f"<dt>{escape(name)}</dt><dd>{escape(text)}</dd>" for name, text in view.facts),
        "</dl>",
    ]
    for table in view.tables:
        out += _table(table)
    if view.definitions:
        out += ["<details><summary>Definitions</summary>", '<dl class="legend">']
        for definition in view.definitions:
            out += [
                f'<dt id="def-{escape(definition.metric)}">{escape(definition.title)} '
                f"<code>{escape(definition.metric)}</code></dt>",
                f"<dd>{escape(definition.text)}</dd>",
            ]
        out += ["</dl>", "</details>"]
    out += [f'<p class="note">{escape(note)}</p>' for note in view.notes]
    out.append("</div>")
    return "\n".join(out) + "\n"


def notebook_html(document: Viewable) -> str:
    """A document's rich display in a notebook: :func:`render_html_fragment` of its view.

    What a document's ``_repr_html_`` returns (Jupyter, VS Code, ...): the tables
    ``chartscore render --format html`` shows, sorted by name.

    Raises:
        ChartscoreError: ``usage`` for anything that is not exactly one of the five
            value-free documents.
    """
    return render_html_fragment(document_view(document))
