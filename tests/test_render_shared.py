"""Rendering a shared report: every format, suppressed numbers read suppressed, nothing leaks back.

A shared report (docs/formats.md#shared-report) has the report's shape with
``null`` for every suppressed number. The renderers must show each one as
``suppressed`` (never 0), show no rate or interval for a metric with a
suppressed part (a rate or an interval with its total gives the count back),
state the disclosure rule, and never print a number of the full report that
the shared report withheld.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, Report
from chartscore.canonical_json import format_number
from chartscore.cli import main
from chartscore.disclosure.shared import SharedReport, SharedSlice, shared_from_report
from chartscore.documents import load_document
from chartscore.render import FORMATS, SORTS, render, report_view
from chartscore.render._numbers import kappa_number, percent
from report_data import FIELD_TYPES, scored_reports
from shared_data import full_and_shared
from test_render_html import Page, assert_self_contained

from helpers import examples

Key = tuple[str, str, str]


def renderings(shared: SharedReport) -> dict[str, str]:
    return {f"{fmt} by {sort}": render(shared, fmt, sort=sort) for fmt in FORMATS for sort in SORTS}


def full_slice(report: Report, kind: str, name: str) -> object:
    if kind == "overall":
        return report.overall
    return (report.by_field if kind == "field" else report.by_field_type)[name]


def metric_pairs(report: Report, shared: SharedReport) -> Iterator[tuple[Key, object, object]]:
    """(key, full metric, shared metric) for every binomial metric and kappa."""
    for kind, name, part in shared.slices():
        whole = full_slice(report, kind, name)
        for metric, number in part.metrics.items():
            yield (kind, name, metric), whole.metrics[metric], number  # type: ignore[attr-defined]
        if part.kappa is not None:
            yield (kind, name, "kappa"), whole.kappa, part.kappa  # type: ignore[attr-defined]


def _long(number: float) -> bool:
    # Short decimals (0, 1, 0.5, 0.25) are everywhere in a page; long ones are specific.
    return len(format_number(number)) >= 6


def published_and_hidden(
    report: Report, shared: SharedReport
) -> tuple[set[float], set[str], set[float], set[str]]:
    """Floats and short interval texts the shared report shows, and those it withholds."""
    shown: set[float] = set()
    shown_text: set[str] = set()
    hidden: set[float] = set()
    hidden_text: set[str] = set()
    for key, whole, part in metric_pairs(report, shared):
        kappa = key[2] == "kappa"
        if kappa:
            value, interval = part.value, part.interval  # type: ignore[attr-defined]
            full_value, full_interval = whole.value, whole.interval  # type: ignore[attr-defined]
        else:
            k, n, interval = part.success_count, part.total_count, part.interval  # type: ignore[attr-defined]
            value = k / n if k is not None and n else None
            fk, fn = whole.success_count, whole.total_count  # type: ignore[attr-defined]
            full_value, full_interval = (fk / fn if fn else None), whole.interval  # type: ignore[attr-defined]

        def text(bounds: tuple[float, float], kappa: bool = kappa) -> str:
            if kappa:
                return f"[{kappa_number(bounds[0])}, {kappa_number(bounds[1])}]"
            return f"[{percent(bounds[0])}-{percent(bounds[1])}]"

        if value is not None or interval is not None:
            shown.update(x for x in (value, *(interval or ())) if x is not None)
            if interval is not None:
                shown_text.add(text(interval))
        else:
            hidden.update(x for x in (full_value, *(full_interval or ())) if x is not None)
            if full_interval is not None:
                hidden_text.add(text(full_interval))
    return shown, shown_text, hidden, hidden_text


def assert_nothing_withheld_appears(report: Report, shared: SharedReport) -> None:
    shown, shown_text, hidden, hidden_text = published_and_hidden(report, shared)
    needles = {
        form
        for number in hidden - shown
        if _long(number)
        for form in (format_number(number), repr(number))
    }
    texts = hidden_text - shown_text
    for where, output in renderings(shared).items():
        for needle in needles:
            assert needle not in output, (where, needle)
        if not where.startswith("csv"):
            for interval in texts:
                assert interval not in output, (where, interval)


def csv_rows(text: str) -> dict[Key, dict[str, str]]:
    return {(r["slice"], r["name"], r["metric"]): r for r in csv.DictReader(io.StringIO(text))}


def assert_csv_matches(shared: SharedReport, text: str) -> None:
    rows = csv_rows(text)
    assert text.startswith(
        "slice,name,metric,label,success_count,total_count,rate,lower,upper,"
        "design_effect,clustered_lower,clustered_upper,suppressed\r\n"
    )
    expected: set[Key] = set()
    for kind, name, part in shared.slices():
        for metric, number in part.metrics.items():
            row = rows[(kind, name, metric)]
            expected.add((kind, name, metric))
            k, n = number.success_count, number.total_count
            assert row["success_count"] == ("" if k is None else str(k))
            assert row["total_count"] == ("" if n is None else str(n))
            withheld = row["suppressed"].split()
            clustered = ["design_effect", "clustered_lower", "clustered_upper"]
            if k is None or n is None:
                assert row["rate"] == row["lower"] == row["upper"] == ""
                assert all(row[cell] == "" for cell in clustered)
                pooled = kind != "field"
                assert withheld[-6 if pooled else -3 :] == ["rate", "lower", "upper"] + (
                    clustered if pooled else []
                )
                assert ("success_count" in withheld) == (k is None)
                assert ("total_count" in withheld) == (n is None)
            else:
                assert withheld == []
                interval = number.interval
                assert row["lower"] == ("" if interval is None else format_number(interval[0]))
                shown = number.clustered_interval  # pooled slices, where both counts are shown
                assert row["clustered_lower"] == ("" if shown is None else format_number(shown[0]))
        if part.kappa is not None:
            row = rows[(kind, name, "kappa")]
            expected.add((kind, name, "kappa"))
            pairs = part.kappa.pairs
            assert row["success_count"] == ""
            assert row["total_count"] == ("" if pairs is None else str(pairs))
            if part.kappa.value is None and pairs != 0:
                assert row["rate"] == row["lower"] == row["upper"] == ""
                assert row["suppressed"].endswith("rate lower upper")
        expected |= assert_csv_figures(rows, kind, name, part)
    assert set(rows) == expected


def assert_csv_figures(
    rows: dict[Key, dict[str, str]], kind: str, name: str, part: SharedSlice
) -> set[Key]:
    """The validation figures' rows: a withheld figure has empty cells, named as withheld."""
    found: set[Key] = set()
    magnitude = part.magnitude
    if magnitude is not None:
        figures = {
            "mean_absolute_error": (magnitude.mean_absolute_error, magnitude.pairs),
            "mean_signed_error": (magnitude.bias, magnitude.pairs),
            "chance_level": (magnitude.chance_level, magnitude.gold_rows),
        }
        for metric, (value, count) in figures.items():
            row = rows[(kind, name, metric)]
            assert row["rate"] == ("" if value is None else format_number(value))
            assert row["total_count"] == ("" if count is None else str(count))
            assert ("rate" in row["suppressed"].split()) == (
                value is None and row["suppressed"] != ""
            )
            found.add((kind, name, metric))
        limits = rows[(kind, name, "limits_of_agreement")]
        shown = magnitude.limits_of_agreement
        assert limits["lower"] == ("" if shown is None else format_number(shown[0]))
        found.add((kind, name, "limits_of_agreement"))
    uncertainty = part.uncertainty
    if uncertainty is not None:
        auroc = rows[(kind, name, "uncertainty_auroc")]
        assert auroc["rate"] == (
            "" if uncertainty.auroc is None else format_number(uncertainty.auroc)
        )
        withheld = "auroc" in uncertainty.withheld or uncertainty.rows is None
        assert auroc["suppressed"].endswith("rate lower upper") == withheld
        without = rows[(kind, name, "without_uncertainty")]
        count = uncertainty.without
        assert without["total_count"] == ("" if count is None else str(count))
        found |= {
            (kind, name, m) for m in ("uncertainty_auroc", "brier_score", "without_uncertainty")
        }
        found.add((kind, name, "risk_coverage"))  # ten rows, one per label: keyed once here
    return found


# --- a cohort shared by chartscore.workflows.share.share (min_cell 11) -------------------------


@pytest.fixture(scope="module")
def cohort() -> tuple[Report, SharedReport]:
    return full_and_shared()


def test_the_cohort_has_every_kind_of_cell(cohort: tuple[Report, SharedReport]) -> None:
    _, shared = cohort
    values = [value for _, value in shared.numbers()]
    assert None in values and any(v is not None and v > 0 for v in values)
    metrics = [m for _, _, part in shared.slices() for m in part.metrics.values()]
    assert any(m.interval is not None for m in metrics)
    assert any(m.success_count is None and m.total_count is not None for m in metrics)
    assert any(m.success_count is not None and m.total_count is None for m in metrics)
    kappas = [part.kappa for part in shared.by_field.values() if part.kappa is not None]
    assert any(k.value is not None for k in kappas) and any(k.value is None for k in kappas)


def test_every_format_renders_a_shared_report(cohort: tuple[Report, SharedReport]) -> None:
    _, shared = cohort
    total = len(list(shared.numbers()))
    rule = f"{shared.disclosure.suppressed_count} of {total} numbers suppressed"
    for where, text in renderings(shared).items():
        assert text.endswith("\n"), where
        assert "None" not in text and "null" not in text, where
        assert "suppressed" in text, where
        if not where.startswith("csv"):
            flat = " ".join(text.replace("\\_", "_").split())  # Markdown escapes "_"
            assert "chartscore shared report" in flat, where
            assert "chartscore.shared_report, format version 3" in flat, where
            assert "min_cell 11, unit cases" in flat and rule in flat, where
            assert "1 to 10 cases" in flat, where


def test_suppressed_numbers_read_suppressed(cohort: tuple[Report, SharedReport]) -> None:
    _, shared = cohort
    markdown = render(shared, "markdown")
    for field_id, part in shared.by_field.items():
        counts = [part.counts[name] for name in ("field_count", "answerable_count")]
        cells = ["suppressed" if c is None else str(c) for c in counts]
        assert f"| `{field_id}` | {cells[0]} | {cells[1]} |" in markdown
        exact = part.metrics["exact_agreement"]
        k, n = exact.success_count, exact.total_count
        if k is None and n is None:
            cell = "suppressed"
        elif k is None or n is None:
            cell = f"{'suppressed' if k is None else k}/{'suppressed' if n is None else n}"
        else:
            continue
        # The cell may end with the rate's bound (docs/reports.md#shared-reports).
        bound = r"( (<= |>= )?[0-9.]+(-[0-9.]+)?% \(95% (upper |lower )?bounds?\))?"
        assert re.search(rf"\| `{re.escape(field_id)}` \| {cell}{bound} \|", markdown), field_id


def test_no_withheld_number_appears(cohort: tuple[Report, SharedReport]) -> None:
    report, shared = cohort
    _, _, hidden, hidden_text = published_and_hidden(report, shared)
    assert hidden and hidden_text  # the test below checks something
    assert_nothing_withheld_appears(report, shared)


def test_csv_cells_match_the_shared_report(cohort: tuple[Report, SharedReport]) -> None:
    _, shared = cohort
    assert_csv_matches(shared, render(shared, "csv"))


def test_pandas_reads_the_shared_csv_with_integer_counts(
    cohort: tuple[Report, SharedReport],
) -> None:
    pd = pytest.importorskip("pandas")
    _, shared = cohort
    # The line docs/reports.md gives for reports reads a shared report's CSV too.
    frame = pd.read_csv(
        io.StringIO(render(shared, "csv")),
        dtype={"success_count": "Int64", "total_count": "Int64"},
    )
    assert frame["total_count"].isna().any() and frame["total_count"].notna().any()
    withheld = frame[frame["total_count"].isna()]
    assert withheld["suppressed"].str.contains("total_count").all()


def test_reading_and_rendering_a_shared_report_does_not_load_the_solver(
    cohort: tuple[Report, SharedReport], tmp_path: Path
) -> None:
    _, shared = cohort
    path = tmp_path / "shared.json"
    path.write_text(shared.to_json(), encoding="utf-8")
    code = (
        "import sys\n"
        "from chartscore.documents import load_document\n"
        "from chartscore.render import FORMATS, render\n"
        f"document = load_document(open({str(path)!r}, encoding='utf-8').read())\n"
        "for fmt in FORMATS:\n"
        "    render(document, fmt, sort='rate')\n"
        "light = {'chartscore.disclosure', 'chartscore.disclosure.rule',\n"
        "    'chartscore.disclosure.shared', 'chartscore.disclosure.solver',\n"
        "    'chartscore.disclosure.figures',\n"  # checks on call
        # The shared comparison's reader and its model's names: pure Python, no solver.
        "    'chartscore.disclosure.shared_comparison', 'chartscore.disclosure.comparison_model',\n"
        "    'chartscore.disclosure.model'}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'\n"
        "    or (m.startswith('chartscore.disclosure') and m not in light))\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout == "[]\n"


def test_the_html_page_is_self_contained_and_marks_suppressed_estimates(
    cohort: tuple[Report, SharedReport],
) -> None:
    _, shared = cohort
    text = render(shared, "html")
    page = Page(text)
    assert page.errors == [] and page.stack == []
    assert_self_contained(text, page)
    marks = page.find("g")
    suppressed = [m for m in marks if "suppressed" in m.get("class", "").split()]
    drawn = [m for m in marks if "data-value" in m]
    assert suppressed and drawn
    for mark in suppressed:
        assert "empty" in mark["class"].split() and "data-value" not in mark
    view = report_view(shared)
    plotted = [row.estimate for plot in view.plots for row in plot.rows]
    assert len(suppressed) == sum(1 for e in plotted if e.suppressed)


def test_sort_by_rate_puts_suppressed_rates_last(cohort: tuple[Report, SharedReport]) -> None:
    report, _ = cohort
    types = {"dx.diabetes": "boolean", "hx.smoking": "categorical", "triage.acuity": "ordinal"}
    rates = {
        name: part.metrics["normalized_agreement"].rate for name, part in report.by_field.items()
    }
    lowest = min(rates, key=lambda name: rates[name])  # type: ignore[arg-type,return-value]
    hidden = {("field", lowest, "normalized_agreement.success_count")}
    shared = shared_from_report(json.loads(report.core().to_json()), types, 11, hidden, ())
    order = [row.name for row in report_view(shared, sort="rate").tables[0].rows]
    published = sorted((r, n) for n, r in rates.items() if n != lowest)
    assert order == [*(n for _, n in published), lowest, ""]
    table = " ".join(render(shared, "table", sort="rate").split())
    assert "suppressed rates and no trials last" in table


def test_a_suppressed_ignored_prediction_count(cohort: tuple[Report, SharedReport]) -> None:
    report, _ = cohort
    document = json.loads(report.core().to_json())
    document["ignored_prediction_count"] = 30
    types = {"dx.diabetes": "boolean", "hx.smoking": "categorical", "triage.acuity": "ordinal"}
    shown = shared_from_report(document, types, 11, (), ())
    assert "ignored: 30 predictions not in gold, skipped" in render(shown, "table")
    hidden = shared_from_report(
        document, types, 11, {("overall", "", "ignored_prediction_count")}, ()
    )
    table = render(hidden, "table")
    assert "ignored: suppressed (predictions not in gold, skipped)" in table
    assert "30 predictions" not in table


def test_load_document_and_the_command_line_read_a_shared_report(
    cohort: tuple[Report, SharedReport], tmp_path: Path
) -> None:
    _, shared = cohort
    text = shared.to_json()
    loaded = load_document(text)
    assert isinstance(loaded, SharedReport) and loaded.to_json() == text
    path = tmp_path / "shared.json"
    path.write_text(text, encoding="utf-8")
    for fmt in FORMATS:
        out, err = io.StringIO(), io.StringIO()
        assert main(["render", str(path), "--format", fmt], stdout=out, stderr=err) == 0
        assert out.getvalue() == render(shared, fmt) and err.getvalue() == ""


# --- any suppression pattern, on random reports -----------------------------------------------


@st.composite
def shared_reports(draw: st.DrawFn) -> tuple[Report, SharedReport]:
    """A random report with a random set of its numbers hidden and kappas withheld.

    ``shared_from_report`` applies exactly the shared format's rules (a hidden
    part drops the interval, hidden pairs withhold kappa), without the audit:
    every pattern the renderers could meet, not only those ``share`` picks.
    """
    report = draw(scored_reports())
    document = json.loads(report.core().to_json())
    types = {field_id: FIELD_TYPES[field_id] for field_id in document["by_field"]}
    keys = sorted(key for key, _ in shared_from_report(document, types, 11, (), ()).numbers())
    hidden = draw(st.sets(st.sampled_from(keys)))
    kappa_fields = sorted(f for f, part in document["by_field"].items() if "kappa" in part)
    withheld = draw(st.sets(st.sampled_from(kappa_fields))) if kappa_fields else set()
    shared = shared_from_report(document, types, 11, hidden, withheld)
    return report, SharedReport.from_json(shared.to_json())


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_reports())
def test_any_suppression_pattern_renders_without_giving_numbers_back(
    pair: tuple[Report, SharedReport],
) -> None:
    report, shared = pair
    assert_nothing_withheld_appears(report, shared)
    assert_csv_matches(shared, render(shared, "csv"))
    for where, text in renderings(shared).items():
        assert "None" not in text, where


def test_an_interval_beside_a_suppressed_part_is_never_shown(
    cohort: tuple[Report, SharedReport],
) -> None:
    # An edited shared report may keep an interval next to a null count. Loading refuses
    # it (invalid_report) and the audit fails it as interval_published; an object built
    # in memory still reaches the renderers, which show neither rate nor interval.
    report, _ = cohort
    types = {"dx.diabetes": "boolean", "hx.smoking": "categorical", "triage.acuity": "ordinal"}
    document = shared_from_report(json.loads(report.core().to_json()), types, 11, (), ()).to_dict()
    text = json.dumps(document)
    pooled = document["by_field_type"]["ordinal"]  # type: ignore[index]

    def here(name: str, bound: float) -> int:  # in the field's metric and the type's (both)
        return json.dumps(document["by_field"]["triage.acuity"][name]).count(  # type: ignore[index]
            repr(bound)
        ) + json.dumps(pooled[name]).count(repr(bound))

    name, metric = next(
        (name, number)
        for name, number in document["by_field"]["triage.acuity"].items()  # type: ignore[attr-defined]
        if isinstance(number, dict)
        and number.get("interval")
        and all(text.count(repr(bound)) == here(name, bound) for bound in number["interval"])
    )
    interval = metric["interval"]
    metric["success_count"] = None
    document["by_field_type"]["ordinal"][name]["success_count"] = None  # type: ignore[index]
    document["disclosure"]["suppressed_count"] = 2  # type: ignore[index]
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_dict(json.loads(json.dumps(document)))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    shared = SharedReport.from_dict(json.loads(text))

    def hidden_success(part: SharedSlice) -> SharedSlice:
        metric = attrs.evolve(part.metrics[name], success_count=None)
        return attrs.evolve(part, metrics={**part.metrics, name: metric})

    edited = attrs.evolve(
        shared,
        by_field={
            **shared.by_field,
            "triage.acuity": hidden_success(shared.by_field["triage.acuity"]),
        },
        by_field_type={
            **shared.by_field_type,
            "ordinal": hidden_success(shared.by_field_type["ordinal"]),
        },
    )
    assert edited.by_field["triage.acuity"].metrics[name].interval is not None
    for where, text in renderings(edited).items():
        for bound in interval:
            assert format_number(bound) not in text and repr(bound) not in text, where
    assert f"suppressed/{metric['total_count']}" in render(edited, "markdown")


def test_a_metric_with_no_trials_reads_no_trials_even_with_its_success_count_withheld() -> None:
    # Suppression may hide the success count of a metric with no trials (it is 0 of 0
    # anyway): the reader is told it has no trials, not shown "suppressed/0".
    from chartscore import GoldField, Prediction, score

    gold = [GoldField(f"c{i}", "note.text", "text", "x") for i in range(3)]  # all answerable
    report = score(gold, [Prediction(f"c{i}", "note.text", "x") for i in range(3)])
    metric = "unanswerable_answer"
    assert report.by_field["note.text"].metrics[metric].total_count == 0
    hidden = {
        (kind, name, f"{metric}.success_count")
        for kind, name in (("field", "note.text"), ("field_type", "text"), ("overall", ""))
    }
    document = json.loads(report.core().to_json())
    shared = shared_from_report(document, {"note.text": "text"}, 11, hidden, ())
    shared = SharedReport.from_json(shared.to_json())
    assert shared.by_field["note.text"].metrics[metric].success_count is None
    for fmt in ("table", "markdown", "html"):
        text = render(shared, fmt)
        assert "suppressed/0" not in text, fmt
        assert "no trials" in text, fmt
    table = render(shared, "table")
    row = next(line for line in table.splitlines() if line.startswith("note.text"))
    error_rows = table.split("Errors (lower is better)", 1)[1]
    row = next(line for line in error_rows.splitlines() if line.startswith("note.text"))
    assert "no trials" in row and "suppressed" not in row.split()[2:4]
    # The CSV keeps the document's cells: the success count is withheld, the total is 0.
    csv_row = csv_rows(render(shared, "csv"))[("field", "note.text", metric)]
    assert (csv_row["success_count"], csv_row["total_count"]) == ("", "0")
