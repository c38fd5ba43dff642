"""Rendering a shared report: every format, suppressed numbers read suppressed, nothing leaks back.

A shared report (docs/formats.md#shared-report) has the report's shape with
``null`` for every suppressed number. The renderers must show each one as
``suppressed`` (never 0), show no rate or interval for a metric with a
suppressed part (a rate or an interval with its total gives the count back),
state the disclosure rule, and never print a number of the full report that
the shared report withheld. Its labels (four rates and F1 each), the macro F1
and the coefficients are shown as a report's, under the same rules, with no
pooled ("all labels") rows; withheld risk-coverage steps read suppressed.
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
from chartscore.cli import main
from chartscore.disclosure.rule import SHARED_FORMAT_VERSION
from chartscore.documents import load_document
from chartscore.documents.canonical_json import format_number
from chartscore.documents.shared_labels import SharedLabel
from chartscore.documents.shared_metric import SharedMetric
from chartscore.documents.shared_report import SharedReport, SharedSlice, shared_from_report
from chartscore.documents.tally import LABEL_METRICS
from chartscore.render import FORMATS, SORTS, render, report_view
from chartscore.render._numbers import kappa_number, percent
from chartscore.workflows.share import share as share_records
from report_data import FIELD_TYPES, scored_reports
from shared_data import SCHEMA, full_and_shared, shared_with_kappa
from shared_data import cohort as shared_cohort
from test_render_html import Page, assert_self_contained

from helpers import examples

Key = tuple[str, str, str]
CsvKey = tuple[str, str, str, str]
"""(slice, name, metric, label): one CSV row."""
COEFFICIENTS = ("ac1", "ac2", "alpha")


def renderings(shared: SharedReport) -> dict[str, str]:
    return {f"{fmt} by {sort}": render(shared, fmt, sort=sort) for fmt in FORMATS for sort in SORTS}


def full_slice(report: Report, kind: str, name: str) -> object:
    if kind == "overall":
        return report.overall
    return (report.by_field if kind == "field" else report.by_field_type)[name]


def metric_pairs(report: Report, shared: SharedReport) -> Iterator[tuple[Key, object, object]]:
    """(key, full metric, shared metric) for every binomial metric, kappa, each label's four
    metrics (metric ``label:metric``) and each coefficient."""
    for kind, name, part in shared.slices():
        whole = full_slice(report, kind, name)
        for metric, number in part.metrics.items():
            yield (kind, name, metric), whole.metrics[metric], number  # type: ignore[attr-defined]
        if part.kappa is not None:
            yield (kind, name, "kappa"), whole.kappa, part.kappa  # type: ignore[attr-defined]
        for label, result in (part.labels or {}).items():
            full = whole.labels[label]  # type: ignore[attr-defined]
            for metric in LABEL_METRICS:
                yield (
                    (kind, name, f"{label}:{metric}"),
                    full.metrics[metric],
                    result.metrics[metric],
                )
        for metric, coefficient in part.coefficients.items():
            yield (kind, name, metric), whole.coefficients[metric], coefficient  # type: ignore[attr-defined]


def f1_pairs(report: Report, shared: SharedReport) -> Iterator[tuple[float | None, float | None]]:
    """(full, shared) for every label's F1 and every macro F1 of the shared report."""
    for kind, name, part in shared.slices():
        if part.labels is None:
            continue
        whole = full_slice(report, kind, name)
        for label, result in part.labels.items():
            yield whole.labels[label].f1, result.f1  # type: ignore[attr-defined]
        yield whole.macro_f1, part.scores.get("macro_f1")  # type: ignore[attr-defined]


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
        kappa = key[2] in ("kappa", *COEFFICIENTS)
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
            # A pooled slice shows its case-clustered interval too: shown, whatever a hidden
            # number's interval happens to read.
            clustered = getattr(part, "clustered_interval", None)
            if clustered is not None:
                shown.update(clustered)
                shown_text.add(text(clustered))
        else:
            hidden.update(x for x in (full_value, *(full_interval or ())) if x is not None)
            if full_interval is not None:
                hidden_text.add(text(full_interval))
    for full_f1, shown_f1 in f1_pairs(report, shared):
        if shown_f1 is not None:
            shown.add(shown_f1)
        elif full_f1 is not None:
            hidden.add(full_f1)
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


def csv_rows(text: str) -> dict[CsvKey, dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text)))
    keyed = {(r["slice"], r["name"], r["metric"], r["label"]): r for r in rows}
    assert len(keyed) == len(rows)  # one row per slice, metric and label
    return keyed


def _cell(number: float | None) -> str:
    return "" if number is None else format_number(number)


def _count(count: int | None) -> str:
    return "" if count is None else str(count)


def assert_rate_row(row: dict[str, str], kind: str, number: SharedMetric) -> None:
    """A binomial metric's CSV row: its published cells, and the withheld ones named."""
    k, n = number.success_count, number.total_count
    assert row["success_count"] == _count(k)
    assert row["total_count"] == _count(n)
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
        assert row["rate"] == (_cell(k / n) if n else "")
        interval = number.interval
        assert row["lower"] == ("" if interval is None else format_number(interval[0]))
        shown = number.clustered_interval  # pooled slices, where both counts are shown
        assert row["clustered_lower"] == ("" if shown is None else format_number(shown[0]))


def f1_counts_shown(label: SharedLabel) -> bool:
    """Whether a label's F1 counts (true, gold and answered positives) are all published."""
    sensitivity, ppv = label.metrics["sensitivity"], label.metrics["ppv"]
    return None not in (sensitivity.success_count, sensitivity.total_count, ppv.total_count)


def coefficient_withheld(part: SharedSlice, metric: str) -> bool:
    """Whether the renderers must call a coefficient suppressed (docs/reports.md)."""
    coefficient = part.coefficients[metric]
    kappa_shown = part.kappa is not None and part.kappa.value is not None
    pairs = coefficient.pairs
    return pairs is None or (coefficient.value is None and pairs != 0 and not kappa_shown)


def assert_csv_labels(
    rows: dict[CsvKey, dict[str, str]], kind: str, name: str, part: SharedSlice
) -> set[CsvKey]:
    """Each label's rows, the macro F1's and the coefficients'; never a pooled label row."""
    found: set[CsvKey] = set()
    assert not set(part.metrics) & set(LABEL_METRICS) and "micro_f1" not in part.scores
    if part.labels is not None:
        for label, result in part.labels.items():
            for metric in LABEL_METRICS:
                assert_rate_row(rows[(kind, name, metric, label)], kind, result.metrics[metric])
                found.add((kind, name, metric, label))
            row = rows[(kind, name, "f1", label)]
            hidden = result.f1 is None and not f1_counts_shown(result)
            assert row["rate"] == _cell(result.f1)
            assert row["success_count"] == row["total_count"] == row["lower"] == ""
            assert row["suppressed"] == ("rate lower upper" if hidden else "")
            found.add((kind, name, "f1", label))
        macro = part.scores["macro_f1"]
        row = rows[(kind, name, "macro_f1", "")]
        hidden = macro is None and not all(map(f1_counts_shown, part.labels.values()))
        assert row["rate"] == _cell(macro) and row["total_count"] == ""
        assert row["suppressed"] == ("rate lower upper" if hidden else "")
        found.add((kind, name, "macro_f1", ""))
    for metric, coefficient in part.coefficients.items():
        row = rows[(kind, name, metric, "")]
        assert row["success_count"] == ""
        assert row["total_count"] == _count(coefficient.pairs)
        if coefficient_withheld(part, metric):
            assert row["rate"] == row["lower"] == row["upper"] == ""
            pairs = "total_count " if coefficient.pairs is None else ""
            assert row["suppressed"] == pairs + "rate lower upper"
        else:
            assert row["rate"] == _cell(coefficient.value) and row["suppressed"] == ""
            interval = coefficient.interval
            assert row["lower"] == ("" if interval is None else format_number(interval[0]))
        found.add((kind, name, metric, ""))
    return found


def assert_csv_matches(shared: SharedReport, text: str) -> None:
    rows = csv_rows(text)
    assert text.startswith(
        "slice,name,metric,label,success_count,total_count,rate,lower,upper,"
        "design_effect,clustered_lower,clustered_upper,suppressed\r\n"
    )
    expected: set[CsvKey] = set()
    for kind, name, part in shared.slices():
        for metric, number in part.metrics.items():
            assert_rate_row(rows[(kind, name, metric, "")], kind, number)
            expected.add((kind, name, metric, ""))
        if part.kappa is not None:
            row = rows[(kind, name, "kappa", "")]
            expected.add((kind, name, "kappa", ""))
            pairs = part.kappa.pairs
            assert row["success_count"] == ""
            assert row["total_count"] == _count(pairs)
            if part.kappa.value is None and pairs != 0:
                assert row["rate"] == row["lower"] == row["upper"] == ""
                assert row["suppressed"].endswith("rate lower upper")
        expected |= assert_csv_labels(rows, kind, name, part)
        expected |= assert_csv_figures(rows, kind, name, part)
    assert set(rows) == expected


def assert_csv_figures(
    rows: dict[CsvKey, dict[str, str]], kind: str, name: str, part: SharedSlice
) -> set[CsvKey]:
    """The validation figures' rows: a withheld figure has empty cells, named as withheld."""
    found: set[CsvKey] = set()
    magnitude = part.magnitude
    if magnitude is not None:
        figures = {
            "mean_absolute_error": (magnitude.mean_absolute_error, magnitude.pairs),
            "mean_signed_error": (magnitude.bias, magnitude.pairs),
            "chance_level": (magnitude.chance_level, magnitude.gold_rows),
        }
        for metric, (value, count) in figures.items():
            row = rows[(kind, name, metric, "")]
            assert row["rate"] == ("" if value is None else format_number(value))
            assert row["total_count"] == ("" if count is None else str(count))
            assert ("rate" in row["suppressed"].split()) == (
                value is None and row["suppressed"] != ""
            )
            found.add((kind, name, metric, ""))
        limits = rows[(kind, name, "limits_of_agreement", "")]
        shown = magnitude.limits_of_agreement
        assert limits["lower"] == ("" if shown is None else format_number(shown[0]))
        found.add((kind, name, "limits_of_agreement", ""))
    uncertainty = part.uncertainty
    if uncertainty is not None:
        auroc = rows[(kind, name, "uncertainty_auroc", "")]
        assert auroc["rate"] == (
            "" if uncertainty.auroc is None else format_number(uncertainty.auroc)
        )
        withheld = "auroc" in uncertainty.withheld or uncertainty.rows is None
        assert auroc["suppressed"].endswith("rate lower upper") == withheld
        without = rows[(kind, name, "without_uncertainty", "")]
        count = uncertainty.without
        assert without["total_count"] == ("" if count is None else str(count))
        found |= {
            (kind, name, m, "") for m in ("uncertainty_auroc", "brier_score", "without_uncertainty")
        }
        for tenths, step in enumerate(uncertainty.risk_coverage, start=1):
            row = rows[(kind, name, "risk_coverage", f"{10 * tenths}%")]
            if step is None:  # withheld: empty, never 0
                assert row["success_count"] == row["total_count"] == row["rate"] == ""
                assert row["suppressed"] == "success_count total_count rate lower upper"
            else:
                assert (row["success_count"], row["total_count"]) == (
                    str(step.success_count),
                    str(step.total_count),
                )
                assert row["suppressed"] == ""
            found.add((kind, name, "risk_coverage", f"{10 * tenths}%"))
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
    assert kappas and all(k.value is None for k in kappas)  # each field has a hidden number
    assert shared_with_kappa().by_field["triage.acuity"].kappa.value is not None  # type: ignore[union-attr]


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
            if where.startswith("summary"):  # a line per field: the rule, not the format
                assert "min_cell 11, unit cases" in flat and rule in flat, where
                continue
            assert f"chartscore.shared_report, format version {SHARED_FORMAT_VERSION}" in flat, (
                where
            )
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
    # An empty total is a withheld one, but for F1 figures, which have no count.
    counted = ~frame["metric"].isin(["f1", "macro_f1", "micro_f1"])
    withheld = frame[frame["total_count"].isna() & counted]
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
        # The shared documents and their parts live in documents/ (their old disclosure/ paths
        # are aliases, named here by the module's own name): of the engine, only the package,
        # its rule's names and the solver check are loaded.
        "light = {'chartscore.disclosure', 'chartscore.disclosure.rule',\n"
        "    'chartscore.disclosure.solver'}\n"
        "loaded = sorted(m for m, module in sys.modules.items() if m.split('.')[0] == 'scipy'\n"
        "    or (module.__name__.startswith('chartscore.disclosure')\n"
        "        and module.__name__ not in light))\n"
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
    # A withheld count of a rate with no trials reads "no trials", not suppressed.
    assert len(suppressed) == sum(1 for e in plotted if e.suppressed and e.total_count != 0)


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
    csv_row = csv_rows(render(shared, "csv"))[("field", "note.text", metric, "")]
    assert (csv_row["success_count"], csv_row["total_count"]) == ("", "0")


# --- labels, F1 figures and coefficients ------------------------------------------------------

LABEL_TABLE = "Per-label confusion metrics (higher is better)"
COEFFICIENT_TABLE = "Prevalence-robust agreement (higher is better)"


def markdown_rows(text: str, title: str) -> list[list[str]]:
    """A Markdown table's body rows as plain cells (code spans and backslash escapes undone)."""
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")][2:]
    rows = []
    for line in lines:
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        rows.append([re.sub(r"\\(.)", r"\1", cell.strip("`")) for cell in cells])
    return rows


def html_rows(text: str, key: str) -> list[list[str]]:
    """An HTML table's body rows as plain cells (tags dropped, entities read)."""
    import html

    table = re.search(rf'<table id="table-{key}">(.*?)</table>', text, re.S)
    assert table is not None, key
    rows = []
    for row in re.findall(r'<tr><th scope="row".*?</tr>', table.group(1), re.S):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        rows.append([" ".join(html.unescape(re.sub(r"<[^>]+>", "", c)).split()) for c in cells])
    return rows


def _word(count: int | None) -> str:
    return "suppressed" if count is None else str(count)


def assert_bound_text(text: str, lower: float, upper: float) -> None:
    """A field row's Wilson bound, written to a tenth of a percent, rounded outwards."""
    low, high = 100 * lower, 100 * upper

    def outward(found: str, exact: float, up: bool) -> None:
        number = float(found)
        assert abs(number - exact) < 0.1 + 1e-9, (text, exact)
        assert (number >= exact - 1e-9) if up else (number <= exact + 1e-9), (text, exact)

    if lower == 0 and upper < 1:
        match = re.fullmatch(r"<= ([0-9.]+)% \(95% upper bound\)", text)
        assert match is not None, text
        outward(match[1], high, up=True)
    elif upper == 1 and lower > 0:
        match = re.fullmatch(r">= ([0-9.]+)% \(95% lower bound\)", text)
        assert match is not None, text
        outward(match[1], low, up=False)
    else:
        match = re.fullmatch(r"([0-9.]+)-([0-9.]+)% \(95% bounds\)", text)
        assert match is not None, text
        outward(match[1], low, up=False)
        outward(match[2], high, up=True)


def assert_rate_cell(cell: str, number: SharedMetric) -> None:
    """A label rate's cell: ``k/n rate [interval]`` where published; else its counts with
    ``suppressed`` for the withheld ones and its bound, where it has one, never a rate."""
    k, n = number.success_count, number.total_count
    if n == 0:
        assert cell in ("0/0 no trials", "no trials"), cell
        return
    if k is not None and n is not None:
        assert number.interval is not None
        low, high = number.interval
        assert cell == f"{k}/{n} {percent(k / n)}% [{percent(low)}-{percent(high)}]", cell
        return
    fraction = "suppressed" if k is None and n is None else f"{_word(k)}/{_word(n)}"
    assert cell.startswith(fraction) and "[" not in cell, cell
    rest = cell[len(fraction) :].strip()
    if number.rate_bound is None:
        assert rest == "", cell
    else:
        assert_bound_text(rest, number.rate_bound.lower, number.rate_bound.upper)


def f1_text(value: float | None, *, hidden: bool) -> str:
    """An F1 figure's cell: its value, else suppressed where a count is hidden, else undefined."""
    if value is not None:
        return kappa_number(value)
    return "suppressed" if hidden else "undefined"


def coefficient_text(part: SharedSlice, metric: str) -> str:
    coefficient = part.coefficients[metric]
    if coefficient_withheld(part, metric):
        return "suppressed"
    if coefficient.value is None:
        return "no trials" if coefficient.pairs == 0 else "undefined"
    text = kappa_number(coefficient.value)
    if coefficient.interval is not None:
        low, high = coefficient.interval
        text += f" [{kappa_number(low)}, {kappa_number(high)}]"
        if coefficient.pairs is not None and coefficient.pairs < 100:
            text += " too few pairs"  # docs/metrics.md, "Coefficients from few pairs"
    return text


def expected_label_rows(shared: SharedReport) -> list[tuple[str, str, SharedLabel | None]]:
    """(field, label cell, label) per label table row; the macro average's label is None."""
    out: list[tuple[str, str, SharedLabel | None]] = []
    for name, part in shared.by_field.items():
        if part.labels is not None:
            out += [(name, label, result) for label, result in part.labels.items()]
            out.append((name, "macro average", None))
    return out


def assert_label_table(rows: list[list[str]], shared: SharedReport) -> None:
    """Every label's four rates and F1, and each field's macro F1: nothing else, in order."""
    expected = expected_label_rows(shared)
    assert [(row[0], row[1]) for row in rows] == [(name, cell) for name, cell, _ in expected]
    for row, (name, _, result) in zip(rows, expected, strict=True):
        part = shared.by_field[name]
        if result is None:  # the macro F1, in the F1 column only
            assert part.labels is not None
            hidden = not all(map(f1_counts_shown, part.labels.values()))
            assert row[2:] == ["", "", "", "", f1_text(part.scores["macro_f1"], hidden=hidden)]
            continue
        for cell, metric in zip(row[2:6], LABEL_METRICS, strict=True):
            assert_rate_cell(cell, result.metrics[metric])
        assert row[6] == f1_text(result.f1, hidden=not f1_counts_shown(result)), row


def assert_coefficient_table(rows: list[list[str]], shared: SharedReport) -> None:
    fields = [name for name, part in shared.by_field.items() if part.coefficients]
    assert [row[0] for row in rows] == fields
    for row in rows:
        part = shared.by_field[row[0]]
        gwet = [m for m in ("ac1", "ac2") if m in part.coefficients]
        assert row[1] == (coefficient_text(part, gwet[0]) if gwet else "not applicable")
        assert row[2] == coefficient_text(part, "alpha")
        assert row[3] == _word(part.coefficients["alpha"].pairs)


def assert_labels_and_coefficients_shown(shared: SharedReport) -> None:
    """Markdown and HTML tables hold every label, F1 figure and coefficient as the rules say."""
    labelled = any(part.labels for part in shared.by_field.values())
    markdown, page = render(shared, "markdown"), render(shared, "html")
    if labelled:
        assert_label_table(markdown_rows(markdown, LABEL_TABLE), shared)
        assert_label_table(html_rows(page, "labels"), shared)
    else:
        assert LABEL_TABLE not in markdown
    if any(part.coefficients for part in shared.by_field.values()):
        assert_coefficient_table(markdown_rows(markdown, COEFFICIENT_TABLE), shared)
        assert_coefficient_table(html_rows(page, "coefficients"), shared)
    for text in (markdown, page):
        assert "all labels" not in text  # a shared report has no pooled label rows


def test_the_cohort_has_labels_and_coefficients_of_every_kind(
    cohort: tuple[Report, SharedReport],
) -> None:
    _, shared = cohort
    labels = [r for part in shared.by_field.values() for r in (part.labels or {}).values()]
    rates = [r.metrics[m] for r in labels for m in LABEL_METRICS]
    assert any(m.rate_bound is not None and m.total_count is not None for m in rates)
    assert any(m.rate_bound is not None and m.total_count is None for m in rates)
    assert any(r.f1 is None and not f1_counts_shown(r) for r in labels)
    coefficients = [
        (part, metric) for part in shared.by_field.values() for metric in part.coefficients
    ]
    assert any(coefficient_withheld(part, metric) for part, metric in coefficients)
    # Shown only where every number of the field is: the cohort's fields each hide one.
    assert all(part.coefficients[m].value is None for part, m in coefficients)
    shown = shared_with_kappa().by_field["triage.acuity"].coefficients
    assert set(shown) == {"ac2", "alpha"} and all(c.value is not None for c in shown.values())
    assert_labels_and_coefficients_shown(shared_with_kappa())


def test_shared_labels_and_coefficients_appear_in_every_format(
    cohort: tuple[Report, SharedReport],
) -> None:
    _, shared = cohort
    assert_labels_and_coefficients_shown(shared)
    assert_csv_matches(shared, render(shared, "csv"))
    # The terminal splits the label table into panels; each row there reads as in Markdown.
    markdown = {
        (row[0], row[1]): row for row in markdown_rows(render(shared, "markdown"), LABEL_TABLE)
    }
    table = (
        render(shared, "table").split(LABEL_TABLE, 1)[1].split("\nKappa (higher is better)", 1)[0]
    )
    panels = re.split(r"\n(?=slice  )", table)[1:]
    columns = ["sensitivity", "specificity", "PPV", "NPV", "F1"]
    seen = []
    for panel in panels:
        heading, _, *lines = panel.splitlines()
        shown = [c for c in columns if re.search(rf"  {c}\b", heading)]
        for line in filter(None, lines):
            name, label = re.split(r"\s{2,}", line.strip())[:2]
            flat = " ".join(line.split())
            for column in shown:
                cell = markdown[(name, label)][2 + columns.index(column)]
                assert flat.endswith(cell) or f" {cell} " in f"{flat} ", (line, cell)
            seen += [(name, label, column) for column in shown]
    assert sorted(seen) == sorted((n, lab, c) for n, lab in markdown for c in columns)


def test_suppressed_label_rates_show_their_bound_and_empty_marks(
    cohort: tuple[Report, SharedReport],
) -> None:
    _, shared = cohort
    page = render(shared, "html")
    labels_table = page.split('<table id="table-labels">', 1)[1].split("</table>", 1)[0]
    bounded = [
        result.metrics[metric]
        for part in shared.by_field.values()
        for result in (part.labels or {}).values()
        for metric in LABEL_METRICS
        if result.metrics[metric].rate_bound is not None
    ]
    assert bounded and labels_table.count('class="bound"') == len(bounded)
    marks = {
        (m["data-name"], m["data-metric"], m["data-label"]): m
        for m in Page(page).find("g")
        if m.get("data-label") and m["data-metric"] in LABEL_METRICS
    }
    for name, part in shared.by_field.items():
        for label, result in (part.labels or {}).items():
            for metric in LABEL_METRICS:
                mark, number = marks[(name, metric, label)], result.metrics[metric]
                hidden = number.success_count is None or number.total_count is None
                classes = mark["class"].split()
                assert ("suppressed" in classes) == (hidden and number.total_count != 0)
                assert ("data-value" in mark) == (not hidden and bool(number.total_count))
    coefficient_marks = {
        (m["data-name"], m["data-metric"]): m
        for m in Page(page).find("g")
        if m.get("data-metric") in COEFFICIENTS
    }
    for name, part in shared.by_field.items():
        for metric in part.coefficients:
            mark = coefficient_marks[(name, metric)]
            withheld = coefficient_withheld(part, metric)
            assert ("suppressed" in mark["class"].split()) == withheld
            if withheld:
                assert "data-value" not in mark


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_reports())
def test_withheld_f1_and_coefficients_read_suppressed_never_a_number(
    pair: tuple[Report, SharedReport],
) -> None:
    _, shared = pair
    assert_labels_and_coefficients_shown(shared)


def _uncertain_cohort() -> tuple[list[object], list[object]]:
    # One number field, 200 charts, uncertainty rising with the chart number: the answer is
    # wrong on chart 30 and on the 60 least certain charts. share shows the most certain
    # tenth, withholds the next six steps (chart 30's one disagreement) and shows the last three.
    from decimal import Decimal

    from chartscore import EvidenceChain, GoldField, Prediction, SourceLocation

    digest = "sha256:" + "ab" * 32
    gold, predictions = [], []
    for index in range(200):
        value = Decimal(100 + index)
        wrong = index == 30 or index >= 140
        chain = EvidenceChain(
            field_id="lab.value",
            source_locations=[SourceLocation(digest, 0, 5)],
            normalized_fact_digest=digest,
            transformation_kind="model",
            transformation_digest=digest,
            uncertainty=Decimal(index) / 200,
            reviewer_state="pending",
        )
        case = f"c{index:03d}"
        gold.append(GoldField(case, "lab.value", "number", value))
        answer = value + (7 if wrong else 0)
        predictions.append(Prediction(case, "lab.value", answer, digest, chain))
    return gold, predictions


def test_withheld_risk_coverage_steps_are_drawn_suppressed() -> None:
    from chartscore.workflows.share import share

    gold, predictions = _uncertain_cohort()
    schema = {"fields": {"lab.value": {"type": "number"}}}
    shared = share(gold, predictions, schema=schema, min_cell=11)  # type: ignore[arg-type]
    steps = shared.by_field["lab.value"].uncertainty.risk_coverage  # type: ignore[union-attr]
    assert None in steps and any(step is not None for step in steps)
    page = render(shared, "html")
    assert 'id="plot-risk_coverage"' in page
    svg = page.split('id="plot-risk_coverage"', 1)[1].split("</svg>", 1)[0]
    marks = [m for m in Page(svg).find("g") if m.get("data-metric") == "risk_coverage"]
    assert [m["data-label"] for m in marks] == [f"{10 * k}%" for k in range(1, 11)]
    labels = re.findall(r'<text class="label"[^>]*>([^<]*)</text>', svg)
    assert labels == [f"lab.value: {10 * k}%" for k in range(1, 11)]
    for mark, step in zip(marks, steps, strict=True):
        classes = mark["class"].split()
        if step is None:
            assert "suppressed" in classes and "empty" in classes and "data-value" not in mark
        else:
            assert "suppressed" not in classes
            assert float(mark["data-value"]) == step.success_count / step.total_count
    assert svg.count("suppressed") >= 2 * sum(step is None for step in steps)  # mark and text
    # The table's 10% and 50% columns, and the CSV's ten rows, say the same.
    title = "Declared uncertainty (does it separate right answers from wrong ones?)"
    (row,) = markdown_rows(render(shared, "markdown"), title)
    for cell, step in zip(row[5:7], (steps[0], steps[4]), strict=True):
        if step is None:
            assert cell == "suppressed"
        else:
            assert cell.startswith(f"{step.success_count}/{step.total_count} ")
    assert_csv_matches(shared, render(shared, "csv"))


def test_a_suppressed_rate_names_the_reports_own_level_in_every_table() -> None:
    # The agreement and error tables wrote each suppressed rate's bound as "(95% bounds)"
    # whatever the report's level; the HTML and the other tables named it.
    gold, predictions = shared_cohort()
    shared = share_records(gold, predictions, schema=SCHEMA, confidence=0.90)
    bound = re.compile(r"\((9[05])% (?:bounds|lower bound|upper bound)\)")
    for fmt in ("table", "markdown"):
        levels = bound.findall(render(shared, fmt))
        assert levels and set(levels) == {"90"}, fmt
