"""The HTML report in a real browser: headless Chromium, driven by playwright.

The page is opened from a file, as a reader would. Every request the browser
tries is routed and recorded; only the page's own file may load. The tests
need Debian's ``chromium-headless-shell`` (``CHARTSCORE_BROWSER`` overrides
its path) and playwright from the ``test`` extra; playwright never downloads
a browser. Without them the tests skip with the reason, unless
``CHARTSCORE_REQUIRE_BROWSER=1`` (set by .ci/run), which makes that a failure.

``CHARTSCORE_UPDATE_SCREENSHOT=1`` rewrites docs/img/report.png and docs/img/comparison.png.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from chartscore import GoldField, Prediction, Report, score
from chartscore.render import render
from chartscore.workflows.demo import run_demo

ROOT = Path(__file__).resolve().parent.parent
BROWSER = os.environ.get("CHARTSCORE_BROWSER", "/usr/bin/chromium-headless-shell")
REQUIRED = os.environ.get("CHARTSCORE_REQUIRE_BROWSER") == "1"
SCREENSHOT = ROOT / "docs" / "img" / "report.png"
COMPARISON_SCREENSHOT = ROOT / "docs" / "img" / "comparison.png"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
DEMO = run_demo()


def unavailable() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed: pip install -e '.[test]'"
    if not (os.path.isfile(BROWSER) and os.access(BROWSER, os.X_OK)):
        return (
            f"headless Chromium not found at {BROWSER}: apt-get install chromium-headless-shell "
            "(or set CHARTSCORE_BROWSER)"
        )
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = unavailable()
    if reason is not None:
        if REQUIRED:
            pytest.fail(f"CHARTSCORE_REQUIRE_BROWSER=1, but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,  # a fresh user-data dir
            executable_path=BROWSER,
            headless=True,
            args=ARGS,
            viewport={"width": 1000, "height": 800},
            timeout=120_000,
        )
        context.set_default_timeout(60_000)
        yield context
        context.close()


@dataclass
class Visit:
    """A page opened from a file, with everything it tried to do."""

    page: Any
    url: str
    blocked: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)


def visit(browser: Any, path: Path) -> Visit:
    page = browser.new_page()
    record = Visit(page, path.resolve().as_uri())

    def route(route: Any) -> None:
        if route.request.url == record.url:
            route.continue_()
        else:
            record.blocked.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.on("request", lambda request: record.requests.append(request.url))
    page.on(
        "console",
        lambda message: (
            record.console_errors.append(message.text) if message.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: record.page_errors.append(str(error)))
    page.goto(record.url, wait_until="load")
    return record


def write(tmp_path: Path, report: Report, name: str = "report.html") -> Path:
    path = tmp_path / name
    path.write_text(render(report, "html"), encoding="utf-8")
    return path


_READ_MARKS = """
() => Array.from(document.querySelectorAll('svg.forest')).flatMap(svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  const axis = [Number(svg.dataset.axisLow), Number(svg.dataset.axisHigh)];
  const left = Number(svg.dataset.left), right = Number(svg.dataset.right);
  return Array.from(svg.querySelectorAll('g.mark')).map(g => {
    const point = g.querySelector('.point'), ci = g.querySelector('line.ci');
    const rect = e => { const r = e.getBoundingClientRect();
                        return {x: r.x, y: r.y, width: r.width, height: r.height}; };
    return {slice: g.dataset.slice, name: g.dataset.name, metric: g.dataset.metric,
            label: g.dataset.label === undefined ? "" : g.dataset.label,
            value: g.dataset.value === undefined ? null : Number(g.dataset.value),
            lower: g.dataset.lower === undefined ? null : Number(g.dataset.lower),
            upper: g.dataset.upper === undefined ? null : Number(g.dataset.upper),
            error: g.classList.contains('error'),
            suppressed: g.classList.contains('suppressed'),
            title: g.querySelector('title').textContent,
            shape: point ? point.tagName : null,
            point: point ? rect(point) : null, ci: ci ? rect(ci) : null,
            svg: {x: box.x, width: box.width}, scale, axis, left, right};
  });
})
"""


def _expected_x(mark: dict[str, Any], value: float) -> float:
    low, high = mark["axis"]
    inside = mark["left"] + (value - low) / (high - low) * (mark["right"] - mark["left"])
    return float(mark["svg"]["x"] + inside * mark["scale"])


def test_the_plot_has_a_mark_per_field_and_metric_drawn_where_its_numbers_say(
    browser: Any, tmp_path: Path
) -> None:
    record = visit(browser, write(tmp_path, DEMO))
    marks = record.page.evaluate(_READ_MARKS)
    document = json.loads(DEMO.to_json())
    expected = (
        {
            (name, metric, "")
            for name, part in document["by_field"].items()
            for metric, number in part.items()
            if isinstance(number, dict)
            and metric not in ("labels", "error_magnitude", "declared_uncertainty")
        }
        | {
            (name, metric, label)
            for name, part in document["by_field"].items()
            for label, table in part.get("labels", {}).items()
            for metric in ("sensitivity", "specificity", "ppv", "npv")
        }
        | {  # the risk-coverage plot: ten steps per field with rows that declared an uncertainty
            (name, "risk_coverage", f"{10 * k}%")
            for name, part in document["by_field"].items()
            if part.get("declared_uncertainty", {}).get("rows")
            for k in range(1, 11)
        }
    )
    drawn = [(m["name"], m["metric"], m["label"]) for m in marks if m["slice"] == "field"]
    assert sorted(drawn) == sorted(expected)  # one mark each, none missing, none extra
    assert {m["metric"] for m in marks if m["slice"] == "overall"} >= {"exact_agreement"}
    for mark in marks:
        if mark["value"] is None:
            continue
        point, ci = mark["point"], mark["ci"]
        assert point["width"] > 0 and point["height"] > 0 and ci["width"] >= 0
        center = point["x"] + point["width"] / 2
        # The browser drew the point at the rate and the line from bound to bound (1 px).
        assert abs(center - _expected_x(mark, mark["value"])) < 1, mark
        assert abs(ci["x"] - _expected_x(mark, mark["lower"])) < 2, mark
        assert abs(ci["x"] + ci["width"] - _expected_x(mark, mark["upper"])) < 2, mark
        assert mark["shape"] == ("rect" if mark["error"] else "circle")
    assert record.page.evaluate("document.querySelectorAll('script').length") == 0
    record.page.close()


def test_no_console_error_and_no_request_but_the_file_itself(browser: Any, tmp_path: Path) -> None:
    record = visit(browser, write(tmp_path, DEMO))
    record.page.wait_for_timeout(500)  # anything deferred would have started by now
    assert record.blocked == []
    assert record.requests == [record.url]
    assert record.console_errors == [] and record.page_errors == []
    record.page.close()


def test_the_detectors_see_a_request_and_a_console_error(browser: Any, tmp_path: Path) -> None:
    # A control page, so the two tests above could fail: the request is routed and aborted,
    # never sent.
    control = tmp_path / "control.html"
    control.write_text(
        '<!DOCTYPE html><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>',
        encoding="utf-8",
    )
    record = visit(browser, control)
    record.page.wait_for_timeout(200)
    assert record.blocked == ["http://127.0.0.1:9/x.png"]
    assert "boom" in record.console_errors
    record.page.close()


def test_the_page_prints_to_pdf_with_its_plots(browser: Any, tmp_path: Path) -> None:
    record = visit(browser, write(tmp_path, DEMO))
    page = record.page
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    marks = page.evaluate(_READ_MARKS)
    assert all(m["point"]["width"] > 0 for m in marks if m["value"] is not None)
    pdf = tmp_path / "report.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", data)) >= 2  # the demo report spans pages
    assert record.blocked == [] and record.console_errors == []
    page.close()


def test_long_field_ids_wrap_in_the_plot_and_every_field_is_drawn(
    browser: Any, tmp_path: Path
) -> None:
    ids = ["a" * 64, "registry." + "b" * 64, ".".join(chr(ord("c") + i) * 64 for i in range(8))]
    gold = [GoldField(f"c{i}", f, "text", "v") for f in ids for i in range(4)]
    predictions = [Prediction(f"c{i}", f, "v" if i % 2 else "w") for f in ids for i in range(4)]
    record = visit(browser, write(tmp_path, score(gold, predictions)))
    marks = record.page.evaluate(_READ_MARKS)
    assert {m["name"] for m in marks if m["slice"] == "field"} == set(ids)
    labels = record.page.evaluate(
        "Array.from(document.querySelectorAll('svg.forest text.label')).map(t => t.textContent)"
    )
    assert max(map(len, labels)) <= 40
    assert record.console_errors == [] and record.blocked == []
    record.page.close()


def test_screenshot_for_the_docs(browser: Any, tmp_path: Path) -> None:
    record = visit(browser, write(tmp_path, DEMO))
    shot = tmp_path / "report.png"
    record.page.screenshot(path=str(shot), clip={"x": 0, "y": 0, "width": 1000, "height": 760})
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    if os.environ.get("CHARTSCORE_UPDATE_SCREENSHOT") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCREENSHOT.write_bytes(data)
    record.page.close()


def test_the_docs_screenshot_is_committed_and_small() -> None:
    data = SCREENSHOT.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) < 200_000
    assert "img/report.png" in (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")


def test_a_comparison_draws_a_difference_mark_per_field_and_paired_metric(
    browser: Any, tmp_path: Path
) -> None:
    from chartscore import compare

    gold = [
        GoldField(f"c{i}", field_id, "categorical", value)
        for i in range(12)
        for field_id, value in (("hx.smoking", ["never", "former"][i % 2]), ("hx.alcohol", "none"))
    ]
    baseline = [Prediction(g.case_id, g.field_id, g.value) for g in gold[::2]]
    candidate = [Prediction(g.case_id, g.field_id, "former") for g in gold]
    comparison = compare(gold, baseline, candidate)
    path = tmp_path / "comparison.html"
    path.write_text(render(comparison, "html"), encoding="utf-8")
    record = visit(browser, path)
    marks = record.page.evaluate(_READ_MARKS)
    document = json.loads(comparison.to_json())
    expected = {
        (name, metric)
        for name, part in document["by_field"].items()
        for metric, number in part.items()
        if isinstance(number, dict) and "difference" in number
    }
    drawn = [(m["name"], m["metric"]) for m in marks if m["slice"] == "field"]
    assert sorted(drawn) == sorted(expected)
    scale = marks[0]["axis"][1]
    assert scale in (0.05, 0.1, 0.2, 0.5)  # one scale for every difference panel
    for mark in marks:
        assert mark["axis"] == [-scale, scale]
        if mark["value"] is not None and abs(mark["value"]) <= scale:
            center = mark["point"]["x"] + mark["point"]["width"] / 2
            assert abs(center - _expected_x(mark, mark["value"])) < 1, mark
        elif mark["value"] is not None:
            assert mark["point"] is None  # off the axis: the arrow and the numbers tell
    assert record.blocked == [] and record.console_errors == [] and record.page_errors == []
    record.page.close()


_READ_MARGINS = """
() => Array.from(document.querySelectorAll('svg.forest')).flatMap(svg => {
  const box = svg.getBoundingClientRect(), scale = box.width / svg.viewBox.baseVal.width;
  const left = Number(svg.dataset.left), right = Number(svg.dataset.right);
  const axis = [Number(svg.dataset.axisLow), Number(svg.dataset.axisHigh)];
  const zero = svg.querySelector('line.reference').getBoundingClientRect();
  return Array.from(svg.querySelectorAll('g.margin')).map(g => {
    const line = g.querySelector('line').getBoundingClientRect();
    const style = getComputedStyle(g.querySelector('line'));
    return {panel: svg.closest('figure').id, value: Number(g.dataset.value),
            title: g.querySelector('title').textContent, x: line.x + line.width / 2,
            height: line.height, zero: zero.x + zero.width / 2, stroke: style.stroke,
            svg: {x: box.x}, scale, axis, left, right};
  });
})
"""


def test_a_declared_margin_is_drawn_on_its_row_and_a_2_point_margin_is_visible(
    browser: Any, tmp_path: Path
) -> None:
    from chartscore.documents.gates import parse_gates

    comparison = _study_comparison()
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.02\n"
        '[[gate]]\nslice = "field:triage.acuity"\nmetric = "ordinal_later"\n'
        'max_difference_upper = 0.05\nlevel = "warning"\n'
    )
    path = tmp_path / "comparison.html"
    path.write_text(render(comparison, "html", gates=gates), encoding="utf-8")
    record = visit(browser, path)
    margins = record.page.evaluate(_READ_MARGINS)
    assert sorted((m["panel"], m["value"]) for m in margins) == [
        ("plot-difference-normalized_agreement", -0.02),
        ("plot-difference-type_metrics", 0.05),
    ]
    for margin in margins:
        assert abs(margin["x"] - _expected_x(margin, margin["value"])) < 1, margin
        assert margin["height"] >= 14 and margin["stroke"] != "none"
    (two_points,) = [m for m in margins if m["value"] == -0.02]
    assert "gate 1 (required): min_difference_lower -0.02" in two_points["title"]
    assert two_points["title"].startswith("all fields")
    assert two_points["zero"] - two_points["x"] >= 7  # 2 points apart on screen, at 1000 px
    assert record.console_errors == [] and record.blocked == []
    record.page.close()


def test_a_shared_report_page_draws_published_marks_only(browser: Any, tmp_path: Path) -> None:
    # The shared report of a synthetic cohort (share, min_cell 11): published estimates are
    # drawn where their numbers say; suppressed ones keep their row but draw nothing.
    from shared_data import full_and_shared

    _, shared = full_and_shared()
    path = tmp_path / "shared.html"
    path.write_text(render(shared, "html"), encoding="utf-8")
    record = visit(browser, path)
    marks = record.page.evaluate(_READ_MARKS)
    drawn = [m for m in marks if m["value"] is not None]
    assert drawn and len(drawn) < len(marks)
    for mark in marks:
        if mark["value"] is None:
            assert mark["point"] is None and mark["ci"] is None
            continue
        center = mark["point"]["x"] + mark["point"]["width"] / 2
        assert abs(center - _expected_x(mark, mark["value"])) < 1, mark
    # An undrawn mark is suppressed, or a rate with no trials, or evidence support where no
    # answer carried evidence (each read as such, not as hidden).
    undrawn = [m for m in marks if m["value"] is None]
    assert any(m["suppressed"] for m in undrawn)
    for mark in undrawn:
        unrated = mark["title"].endswith("no trials") or mark["title"].endswith("not provided")
        assert mark["suppressed"] != unrated, mark
    # The shared labels have their marks (share withheld every label rate of this cohort:
    # each row keeps its label and says so, with its bound where it has one).
    labelled = [m for m in marks if m["metric"] in ("sensitivity", "specificity", "ppv", "npv")]
    expected = {
        (name, metric, label)
        for name, part in shared.by_field.items()
        for label in part.labels or {}
        for metric in ("sensitivity", "specificity", "ppv", "npv")
    }
    assert expected and sorted((m["name"], m["metric"], m["label"]) for m in labelled) == sorted(
        expected
    )
    assert any("bound" in m["title"] for m in labelled if m["suppressed"])
    assert record.blocked == [] and record.requests == [record.url]
    assert record.console_errors == [] and record.page_errors == []
    record.page.close()


def _study_comparison() -> Any:
    # Like a registry study: 200 charts, fields of several types, counts of three digits.
    import random

    from chartscore import Schema, compare

    schema = Schema.from_dict(
        {
            "fields": {
                "lab.creatinine": {"type": "number", "tolerance": "0.1"},
                "vitals.weight_kg": {"type": "number", "tolerance": "0.5"},
                "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
                "dx.hf_onset": {"type": "date", "tolerance_days": 3},
                "hx.smoking": {"type": "categorical"},
            }
        }
    )
    values = {
        "lab.creatinine": ("number", lambda r: r.randint(5, 35)),
        "vitals.weight_kg": ("number", lambda r: r.randint(45, 140)),
        "triage.acuity": ("ordinal", lambda r: str(r.randint(1, 5))),
        "dx.hf_onset": ("date", lambda r: f"20{r.randint(10, 23)}-0{r.randint(1, 9)}-12"),
        "hx.smoking": ("categorical", lambda r: r.choice(["never", "former", "current"])),
    }
    rng = random.Random(7)
    gold, baseline, candidate = [], [], []
    for index in range(200):
        for field_id, (kind, draw) in values.items():
            value = None if rng.random() < 0.1 else draw(rng)
            gold.append(GoldField(f"HF-{index:04d}", field_id, kind, value))
            for answers, right in ((baseline, 0.9), (candidate, 0.55)):
                if rng.random() < 0.05:
                    continue  # missing
                answer = value if rng.random() < right else draw(rng)
                answers.append(Prediction(f"HF-{index:04d}", field_id, answer))
    return compare(gold, baseline, candidate, schema=schema)


_PAIRED_BOX = """
() => { const table = document.getElementById('table-paired'), box = table.parentElement;
  const heads = table.querySelectorAll('thead th'), last = heads[heads.length - 1];
  const cells = Array.from(table.querySelectorAll('tbody tr')).map(r => r.lastElementChild);
  const b = box.getBoundingClientRect(), h = last.getBoundingClientRect();
  return {scroll: box.scrollWidth, client: box.clientWidth, heading: last.textContent,
          boxLeft: b.left, boxRight: b.right, headLeft: h.left, headRight: h.right,
          cellsInside: cells.every(c => { const r = c.getBoundingClientRect();
                                          return r.width > 0 && r.right <= b.right + 0.5; })}; }
"""


@pytest.mark.parametrize("width", [1400, 1000])
def test_the_paired_table_fits_its_box_and_shows_the_p_value_column(
    browser: Any, tmp_path: Path, width: int
) -> None:
    path = tmp_path / "comparison.html"
    path.write_text(render(_study_comparison(), "html"), encoding="utf-8")
    record = visit(browser, path)
    record.page.set_viewport_size({"width": width, "height": 800})
    found = record.page.evaluate(_PAIRED_BOX)
    assert found["heading"] == "McNemar p"
    assert found["scroll"] <= found["client"], found  # nothing hidden behind a scroll bar
    assert found["boxLeft"] <= found["headLeft"] < found["headRight"] <= found["boxRight"] + 0.5
    assert found["cellsInside"], found
    assert record.console_errors == [] and record.blocked == []
    record.page.close()


_READ_HEADER = """
() => { const facts = {};
  for (const dt of document.querySelectorAll('header dl.facts dt')) {
    const dd = dt.nextElementSibling, r = dd.getBoundingClientRect();
    (facts[dt.textContent] = facts[dt.textContent] || []).push(
      {text: dd.textContent, top: r.top, height: r.height, visible: r.width > 0 && r.height > 0});
  }
  const key = document.querySelector('.key .margin-key');
  const k = key === null ? null : key.getBoundingClientRect();
  return {title: document.querySelector('h1').textContent, facts,
          key: k === null ? null : {width: k.width, height: k.height}}; }
"""


def test_a_committee_comparison_shows_its_names_margin_and_verdict(
    browser: Any, tmp_path: Path
) -> None:
    # The study comparison as a committee gets it: named systems, a dated header, a
    # 2-point non-inferiority margin drawn on the plot, and the gates' verdict.
    import attrs

    from chartscore.documents.gates import evaluate, parse_gates
    from chartscore.documents.system_names import SystemNames

    comparison = attrs.evolve(_study_comparison(), names=SystemNames("model-v1", "model-v2"))
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.02\n"
    )
    verdicts = evaluate(comparison, gates)
    assert [r.passed for r in verdicts.results] == [False]  # the candidate is far worse
    path = tmp_path / "comparison.html"
    html = render(comparison, "html", gates=gates, verdicts=verdicts, date="2026-12-06")
    path.write_text(html, encoding="utf-8")
    record = visit(browser, path)
    header = record.page.evaluate(_READ_HEADER)
    assert (
        header["title"] == "chartscore comparison: model-v2 (candidate) against model-v1 (baseline)"
    )
    facts = header["facts"]
    assert [f["text"] for f in facts["date"]] == ["2026-12-06"]
    assert [f["text"] for f in facts["confidence"]] == ["95% intervals"]
    (margin,) = facts["margin"]
    assert margin["text"] == (
        "gate 1 (required): overall normalized_agreement: the lower 95% bound of candidate "
        "minus baseline must be >= -2 points"
    )
    (verdict,) = facts["verdict"]
    assert verdict["text"] == "gates FAILED: 0 of 1 passed; failed: 1 required, 0 warning"
    # All of it on the first screen, before any table.
    for name in ("systems", "date", "confidence", "margin", "verdict", "gate"):
        assert all(f["visible"] and f["top"] < 760 for f in facts[name]), name
    # The margin's line is drawn where its value says, and the key explains it.
    margins = record.page.evaluate(_READ_MARGINS)
    (line,) = margins
    assert line["panel"] == "plot-difference-normalized_agreement" and line["value"] == -0.02
    assert abs(line["x"] - _expected_x(line, -0.02)) < 1 and line["stroke"] != "none"
    assert header["key"] is not None and header["key"]["height"] > 0
    # and it is named under the axis, centred on its line, without hovering
    (label,) = record.page.evaluate(
        """() => Array.from(document.querySelectorAll('text.margin-label')).map(t => {
             const r = t.getBoundingClientRect();
             return {text: t.textContent, x: r.x + r.width / 2, height: r.height}; })"""
    )
    assert label["text"] == "margin -2" and label["height"] > 0
    assert abs(label["x"] - line["x"]) < 1.5, (label, line)
    # Screenshots: the header (names, date, margin, verdict) and the plot with its margin.
    top = tmp_path / "comparison-header.png"
    record.page.screenshot(path=str(top), clip={"x": 0, "y": 0, "width": 1000, "height": 760})
    panel = record.page.locator("#plot-difference-normalized_agreement")
    plotted = tmp_path / "comparison-margin.png"
    panel.screenshot(path=str(plotted))
    for shot in (top, plotted):
        assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and shot.stat().st_size > 5_000
    if os.environ.get("CHARTSCORE_UPDATE_SCREENSHOT") == "1":
        COMPARISON_SCREENSHOT.write_bytes(top.read_bytes())
    assert record.blocked == [] and record.console_errors == [] and record.page_errors == []
    record.page.close()


def test_the_comparison_screenshot_is_committed_and_small() -> None:
    data = COMPARISON_SCREENSHOT.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) < 200_000
    assert "img/comparison.png" in (ROOT / "docs" / "compare.md").read_text(encoding="utf-8")


_READ_ZOOM = """
() => Array.from(document.querySelectorAll('svg.forest')).map(svg => {
  const note = svg.querySelector('text.zoom'), axis = svg.querySelector('line.axis');
  const n = note === null ? null : note.getBoundingClientRect(), a = axis.getBoundingClientRect();
  return {low: Number(svg.dataset.axisLow), high: Number(svg.dataset.axisHigh),
          note: note === null ? null : note.textContent,
          below: n === null ? null : n.top >= a.bottom, visible: n !== null && n.height > 0}; })
"""


def test_a_zoomed_axis_says_so_under_it_and_full_keeps_0_to_100(
    browser: Any, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    path.write_text(render(DEMO, "html"), encoding="utf-8")
    record = visit(browser, path)
    panels = record.page.evaluate(_READ_ZOOM)
    zoomed = [p for p in panels if p["note"] is not None]
    assert zoomed, panels
    for panel in zoomed:
        assert panel["below"] and panel["visible"], panel
        assert (panel["low"], panel["high"]) not in ((0, 1), (-1, 1))
    record.page.close()
    path.write_text(render(DEMO, "html", axis="full"), encoding="utf-8")
    record = visit(browser, path)
    panels = record.page.evaluate(_READ_ZOOM)
    assert all(p["note"] is None for p in panels)
    assert {(p["low"], p["high"]) for p in panels} <= {(0, 1), (-1, 1)}
    record.page.close()
