"""HTML without a browser: self-contained, well formed, escaped, and its plot marks are right.

test_browser.py opens the same page in headless Chromium.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings

from chartscore import Report
from chartscore.documents.tally import ERROR_METRICS
from chartscore.render import render, render_view, report_view
from chartscore.render.definitions import LEGEND_ORDER, definition
from chartscore.render.forest import PLOT_WIDTH
from chartscore.render.view import Column, Estimate, Kind, Plot, PlotRow, Row, Table, View
from chartscore.workflows.demo import run_demo
from report_data import scored_reports

from helpers import examples

DEMO = run_demo()
ROOT = Path(__file__).resolve().parent.parent
VOID = {"meta", "br", "wbr", "hr", "img", "input", "link", "col", "area", "base", "source"}
SVG_LEAVES = {"line", "circle", "rect"}


class Page(HTMLParser):
    """Every element with its attributes, plus a check that tags nest properly."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unexpected </{tag}> in {self.stack[-3:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, **wanted: str) -> list[dict[str, str]]:
        return [
            attrs
            for name, attrs in self.elements
            if name == tag and all(attrs.get(k.replace("_", "-")) == v for k, v in wanted.items())
        ]


@pytest.fixture(scope="module")
def demo_page() -> tuple[str, Page]:
    text = render(DEMO, "html")
    return text, Page(text)


def test_the_page_is_well_formed(demo_page: tuple[str, Page]) -> None:
    _, page = demo_page
    assert page.errors == [] and page.stack == []


def test_the_page_is_self_contained(demo_page: tuple[str, Page]) -> None:
    text, page = demo_page
    assert_self_contained(text, page)


def assert_self_contained(text: str, page: Page) -> None:
    """No script, no external resource, no event handler; a Content-Security-Policy."""
    tags = {tag for tag, _ in page.elements}
    assert not tags & {
        "script",
        "link",
        "img",
        "iframe",
        "object",
        "embed",
        "image",
        "use",
        "video",
        "audio",
        "source",
        "form",
        "base",
        "foreignobject",
    }
    for tag, attrs in page.elements:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in {"href", "src", "xlink:href", "action", "srcset", "poster"}:
                assert value.startswith("#"), (tag, name, value)
    lowered = text.lower()
    for needle in ("http:", "https:", "//", "url(", "@import", "javascript:", "data:"):
        assert needle not in lowered, needle
    policy = page.find("meta", http_equiv="Content-Security-Policy")
    assert policy and policy[0]["content"].startswith("default-src 'none'")


def test_internal_links_all_resolve(demo_page: tuple[str, Page]) -> None:
    _, page = demo_page
    ids = {attrs["id"] for _, attrs in page.elements if "id" in attrs}
    targets = {attrs["href"][1:] for tag, attrs in page.elements if tag == "a"}
    assert targets and targets <= ids
    labelled = {
        attrs["aria-labelledby"] for _, attrs in page.elements if "aria-labelledby" in attrs
    }
    assert labelled <= ids
    assert len(ids) == len([1 for _, attrs in page.elements if "id" in attrs])  # ids are unique


def _marks(page: Page) -> dict[tuple[str, str, str], dict[str, str]]:
    marks = [attrs for tag, attrs in page.elements if tag == "g" and "mark" in attrs["class"]]
    keyed = {
        (m["data-slice"], m["data-name"], m["data-metric"]): m
        for m in marks
        if "data-label" not in m
    }
    labelled = [m for m in marks if "data-label" in m]
    assert len(keyed) + len(labelled) == len(marks)  # one mark per slice and metric
    return keyed


# Figures with no forest-plot mark of their own: labels have theirs (by label); error
# magnitudes and declared uncertainty are in their tables (risk and coverage in its plot).
_NOT_MARKS = ("labels", "error_magnitude", "declared_uncertainty")


def _label_marks(page: Page) -> dict[tuple[str, str, str, str], dict[str, str]]:
    marks = [attrs for tag, attrs in page.elements if tag == "g" and "data-label" in attrs]
    keyed = {(m["data-slice"], m["data-name"], m["data-metric"], m["data-label"]): m for m in marks}
    assert len(keyed) == len(marks)  # one mark per slice, metric and label
    return keyed


@settings(max_examples=examples(40), deadline=None)
@given(scored_reports())
def test_a_mark_per_field_and_metric_with_the_reports_numbers(report: Report) -> None:
    page = Page(render(report, "html"))
    marks = _marks(page)
    document = json.loads(report.to_json())
    hide_types = len(document["by_field_type"]) == len(document["by_field"])
    slices = [("overall", "", document["overall"])]
    slices += [("field", n, p) for n, p in document["by_field"].items()]
    if not hide_types:
        slices += [("field_type", n, p) for n, p in document["by_field_type"].items()]
    expected = set()
    label_marks = _label_marks(page)
    for kind, name, part in slices:
        for label, table in part.get("labels", {}).items():
            for metric in ("sensitivity", "specificity", "ppv", "npv"):
                mark = label_marks[(kind, name, metric, label)]
                k, n = table[metric]["success_count"], table[metric]["total_count"]
                if n:
                    assert float(mark["data-value"]) == k / n
                    assert [float(mark["data-lower"]), float(mark["data-upper"])] == (
                        table[metric]["interval"]
                    )
        for metric, number in part.items():
            if not isinstance(number, dict) or metric in _NOT_MARKS:
                continue
            expected.add((kind, name, metric))
            mark = marks[(kind, name, metric)]
            assert ("error" in mark["class"].split()) == (metric in ERROR_METRICS)
            if metric in ("kappa", "ac1", "ac2", "alpha"):
                value, interval = number["value"], number["interval"]
            else:
                k, n = number["success_count"], number["total_count"]
                # A pooled row draws its case-clustered interval.
                shown = "clustered_interval" if "clustered_interval" in number else "interval"
                value, interval = (k / n if n else None), number[shown]
            provided = part["evidence_provided"]
            if (
                metric == "evidence_support"
                and provided["total_count"] > provided["success_count"] == 0
            ):  # no answer carried evidence: "not provided", no rate drawn
                value = None
                assert "not provided" in mark.get("title", "") or "data-value" not in mark
            if value is None or interval is None:  # alpha may have no jackknife interval
                assert "empty" in mark["class"].split() and "data-value" not in mark
                continue
            assert float(mark["data-value"]) == value
            assert [float(mark["data-lower"]), float(mark["data-upper"])] == interval
    assert set(marks) == expected


def test_marks_sit_where_their_numbers_say(demo_page: tuple[str, Page]) -> None:
    text, _ = demo_page
    svgs = re.findall(r"<svg class=\"forest\".*?</svg>", text, re.S)
    assert len(svgs) == len(report_view(DEMO).plots)
    checked = 0
    for svg in svgs:
        head = Page(svg).elements[0][1]
        low, high = float(head["data-axis-low"]), float(head["data-axis-high"])
        left, right = float(head["data-left"]), float(head["data-right"])
        assert right - left == pytest.approx(PLOT_WIDTH)
        for group in re.findall(r"<g class=\"mark[^\"]*\".*?</g>", svg, re.S):
            parts = Page(group).elements
            mark = parts[0][1]
            if "data-value" not in mark:
                continue
            lines = [a for tag, a in parts if tag == "line" and a["class"] == "ci"]
            points = [(tag, a) for tag, a in parts if a.get("class") == "point"]
            assert len(lines) == 1 and len(points) == 1

            def x(value: float) -> float:
                return left + (value - low) / (high - low) * PLOT_WIDTH  # noqa: B023

            tag, point = points[0]
            center = (
                float(point["cx"])
                if tag == "circle"
                else float(point["x"]) + float(point["width"]) / 2
            )
            assert tag == ("rect" if "error" in mark["class"] else "circle")
            # Coordinates are written to 0.1 px, the axis position too: two roundings.
            assert abs(center - x(float(mark["data-value"]))) <= 0.11
            assert abs(float(lines[0]["x1"]) - x(float(mark["data-lower"]))) <= 0.11
            assert abs(float(lines[0]["x2"]) - x(float(mark["data-upper"]))) <= 0.11
            checked += 1
    assert checked > 50


def test_every_panel_shares_one_axis_position(demo_page: tuple[str, Page]) -> None:
    _, page = demo_page
    svgs = page.find("svg", **{"class": "forest"})
    assert {(s["data-left"], s["data-right"]) for s in svgs} == {
        (svgs[0]["data-left"], svgs[0]["data-right"])
    }
    kappa = [s for s in svgs if s["data-axis-low"] == "-1.0"]
    # 8 core panels, type metrics, 4 per-label panels, AC and alpha, kappa, risk and coverage
    assert len(kappa) == 2 and len(svgs) == 16


def _risk_panel(text: str) -> str:
    assert text.count('id="plot-risk_coverage"') == 1
    return text.split('id="plot-risk_coverage"', 1)[1].split("</svg>", 1)[0]


def test_the_risk_coverage_plot_has_ten_rows_per_field_with_declared_uncertainty(
    demo_page: tuple[str, Page],
) -> None:
    # docs/reports.md: one panel, ten rows per field that has rows with an uncertainty,
    # labelled "field: 10%" to "field: 100%", each the step's agreement and Wilson interval.
    text, _ = demo_page
    svg = _risk_panel(text)
    fields = [
        name
        for name, part in DEMO.by_field.items()
        if part.uncertainty is not None and part.uncertainty.sums.rows > 0
    ]
    assert len(fields) >= 2 and len(fields) < len(DEMO.by_field)  # some fields have none
    steps = [f"{10 * k}%" for k in range(1, 11)]
    labels = re.findall(r'<text class="label"[^>]*>([^<]*)</text>', svg)
    assert labels == [f"{name}: {step}" for name in fields for step in steps]
    marks = [m for tag, m in Page(svg).elements if tag == "g" and "mark" in m.get("class", "")]
    assert [(m["data-name"], m["data-label"]) for m in marks] == [
        (name, step) for name in fields for step in steps
    ]
    for mark in marks:
        assert mark["data-metric"] == "risk_coverage" and mark["data-slice"] == "field"
        part = DEMO.by_field[mark["data-name"]]
        assert part.uncertainty is not None
        step = part.uncertainty.risk_coverage[steps.index(mark["data-label"])]
        assert step.total_count and step.interval is not None
        assert float(mark["data-value"]) == step.success_count / step.total_count
        assert [float(mark["data-lower"]), float(mark["data-upper"])] == list(step.interval)
        assert "error" not in mark["class"].split()  # agreement: higher is better
    # Its title links to the definition of risk and coverage, which the page has.
    assert 'href="#def-risk_coverage"' in text and 'id="def-risk_coverage"' in text


def test_no_risk_coverage_plot_without_declared_uncertainty() -> None:
    from chartscore import GoldField, Prediction, score

    gold = [GoldField(f"c{i}", "a.b", "text", "x") for i in range(3)]
    text = render(score(gold, [Prediction(f"c{i}", "a.b", "x") for i in range(3)]), "html")
    assert "plot-risk_coverage" not in text and 'data-metric="risk_coverage"' not in text


def test_every_string_is_escaped() -> None:
    hostile = "<script>alert('x')</script>\"&"
    estimate = Estimate("field", hostile, "exact_agreement", Kind.RATE, 1, 2, 0.5, 0.1, 0.9)
    view = View(
        title=hostile,
        facts=((hostile, hostile),),
        plots=(Plot("k<", hostile, hostile, 'm"', (0.0, 1.0), (PlotRow(hostile, estimate, "g"),)),),
        tables=(
            Table(
                hostile,
                hostile,
                hostile,
                hostile,
                (Column(hostile, hostile),),
                (Row("field", hostile, (hostile,)),),
            ),
        ),
        estimates=(estimate,),
        definitions=(),
        notes=(hostile,),
    )
    text = render_view(view, "html")
    assert "<script" not in text and "'x'" not in text
    assert text.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&quot;&amp;") >= 8
    page = Page(text)
    assert page.errors == [] and page.stack == []
    assert hostile in "".join(page.text)  # shown, as text


def test_every_metric_has_a_definition_whose_anchor_exists() -> None:
    metrics_md = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")

    def slug(heading: str) -> str:  # GitHub's heading anchors
        text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
        return text.replace(" ", "-")

    anchors = {slug(h) for h in re.findall(r"^#+ (.+)$", metrics_md, re.M)}
    for metric in LEGEND_ORDER:
        entry = definition(metric)
        path, _, anchor = entry.source.partition("#")
        assert path == "docs/metrics.md" and anchor in anchors, metric
        assert f"`{metric}`" in metrics_md or metric == "kappa"
        assert entry.error == (metric in ERROR_METRICS)
        assert entry.text.startswith("Error:") == entry.error


def test_legend_lists_every_metric_in_the_report(demo_page: tuple[str, Page]) -> None:
    _, page = demo_page
    defined = {
        attrs["id"][4:] for _, attrs in page.elements if attrs.get("id", "").startswith("def-")
    }
    assert defined == set(LEGEND_ORDER)  # the demo has every metric, and F1


def test_a_difference_plot_on_a_minus_one_to_one_axis() -> None:
    # The comparison's paired differences will use the same function: generic rows, any axis.
    from chartscore.render.forest import forest_svg

    rows = tuple(
        PlotRow(
            name,
            Estimate("field", name, "exact_agreement", Kind.DIFFERENCE, None, None, v, lo, hi),
            "field",
        )
        for name, v, lo, hi in (("a.b", -0.25, -0.5, 0.0), ("c.d", 0.1, -0.05, 0.3))
    )
    svg = forest_svg(Plot("d", "difference", "", "", (-1.0, 1.0), rows, 0.0), element_id="t")
    page = Page(svg)
    head = page.elements[0][1]
    left = float(head["data-left"])
    reference = page.find("line", **{"class": "reference"})
    assert len(reference) == 1
    assert float(reference[0]["x1"]) == pytest.approx(left + PLOT_WIDTH / 2, abs=0.11)
    points = page.find("circle")
    assert [float(p["cx"]) for p in points] == pytest.approx(
        [left + 0.375 * PLOT_WIDTH, left + 0.55 * PLOT_WIDTH], abs=0.11
    )
    ticks = [text for text in page.text if text.strip()]
    assert {"-100", "-50", "0", "+50", "+100"} <= set(ticks)
    assert {"-25 pp", "[-50, 0]", "+10 pp", "[-5, +30]"} <= set(ticks)
