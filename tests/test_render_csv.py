"""CSV: one row per slice and metric, and every cell equals the report's number exactly."""

from __future__ import annotations

import csv
import io
import json

import attrs
import pytest
from hypothesis import given, settings

from chartscore import Report
from chartscore.render import render, render_view
from chartscore.render.csv import COLUMNS
from chartscore.render.definitions import MAGNITUDES, UNCERTAINTY
from chartscore.render.view import Estimate, Kind, View
from chartscore.workflows.demo import run_demo
from report_data import scored_reports

from helpers import examples

DEMO = run_demo()
HEADER = (
    "slice,name,metric,label,success_count,total_count,rate,lower,upper,"
    "design_effect,clustered_lower,clustered_upper"
)


def read(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


Key = tuple[str, str, str, str]


def expected_rows(report: Report) -> dict[Key, dict[str, object]]:
    """The report's numbers, read from its JSON (not from the renderer's view).

    F1 figures (numbers, not objects) become ``{"value": ...}``; each declared
    label's metrics are keyed by the label.
    """
    document = json.loads(report.to_json())
    slices = [("overall", "", document["overall"])]
    slices += [("field", name, part) for name, part in document["by_field"].items()]
    slices += [("field_type", name, part) for name, part in document["by_field_type"].items()]
    out: dict[Key, dict[str, object]] = {}
    for kind, name, part in slices:
        for key, value in part.items():
            if key == "labels":
                for label, table in value.items():
                    for metric, number in table.items():
                        found = number if metric != "f1" else {"value": number}
                        out[(kind, name, metric, label)] = found
            elif key in ("micro_f1", "macro_f1", "pooled_kappa"):
                out[(kind, name, key, "")] = {"value": value}
            elif key == "error_magnitude":
                signed = value["mean_signed_error"]
                out[(kind, name, "mean_absolute_error", "")] = {
                    "value": value["mean_absolute_error"],
                    "interval": None,
                    "pairs": value["pairs"],
                }
                out[(kind, name, "mean_signed_error", "")] = {
                    "value": signed["estimate"],
                    "interval": signed["interval"],
                    "pairs": value["pairs"],
                }
                out[(kind, name, "limits_of_agreement", "")] = {
                    "value": signed["estimate"],
                    "interval": value["limits_of_agreement"],
                    "pairs": value["pairs"],
                }
                out[(kind, name, "chance_level", "")] = {
                    "value": value["chance"]["mean_absolute_deviation"],
                    "interval": None,
                    "pairs": value["chance"]["gold_rows"],
                }
            elif key == "declared_uncertainty":
                out[(kind, name, "uncertainty_auroc", "")] = {
                    "value": value["auroc"],
                    "interval": value["auroc_interval"],
                    "pairs": value["rows"],
                }
                out[(kind, name, "brier_score", "")] = {
                    "value": value["brier_score"],
                    "interval": None,
                    "pairs": value["rows"],
                }
                out[(kind, name, "without_uncertainty", "")] = {
                    "value": None,
                    "interval": None,
                    "pairs": value["without_uncertainty"],
                }
                for k, step in enumerate(value["risk_coverage"], start=1):
                    out[(kind, name, "risk_coverage", f"{10 * k}%")] = step
            elif isinstance(value, dict):
                out[(kind, name, key, "")] = value
    return out


def _number(cell: str) -> float | None:
    return None if cell == "" else float(cell)


@settings(max_examples=examples(80), deadline=None)
@given(scored_reports())
def test_csv_rows_equal_the_reports_numbers(report: Report) -> None:
    text = render(report, "csv")
    assert text.splitlines()[0] == HEADER
    rows = read(text)
    expected = expected_rows(report)
    found = {(row["slice"], row["name"], row["metric"], row["label"]): row for row in rows}
    assert len(found) == len(rows)  # one row per slice, metric and label
    assert set(found) == set(expected)
    for key, number in expected.items():
        row = found[key]
        if set(number) == {"value"}:  # F1: a value alone
            assert _number(row["rate"]) == number["value"], key
            assert row["success_count"] == row["total_count"] == row["lower"] == ""
            continue
        interval = number["interval"]
        low, high = (None, None) if interval is None else interval  # type: ignore[misc]
        assert (_number(row["lower"]), _number(row["upper"])) == (low, high), key
        # Pooled slices: the design effect and the clustered interval; field rows: empty.
        clustered = number.get("clustered_interval")
        c_low, c_high = (None, None) if clustered is None else clustered  # type: ignore[misc]
        assert _number(row["design_effect"]) == number.get("design_effect"), key
        assert (_number(row["clustered_lower"]), _number(row["clustered_upper"])) == (
            c_low,
            c_high,
        ), key
        if key[2] in ("kappa", "ac1", "ac2", "alpha", *MAGNITUDES, *UNCERTAINTY[:3]):
            assert row["success_count"] == ""
            assert int(row["total_count"]) == number["pairs"]
            assert _number(row["rate"]) == number["value"]
        else:
            k, n = number["success_count"], number["total_count"]
            assert (int(row["success_count"]), int(row["total_count"])) == (k, n)
            assert _number(row["rate"]) == (k / n if n else None)  # type: ignore[operator]


def test_csv_is_rfc_4180_with_crlf_line_ends() -> None:
    text = render(DEMO, "csv")
    assert text.endswith("\r\n")
    assert text.count("\r\n") == text.count("\n")
    assert text.isascii()
    assert tuple(text.split("\r\n", 1)[0].split(",")) == COLUMNS


def test_a_metric_with_no_trials_has_empty_numbers() -> None:
    empty = Estimate("overall", "", "unanswerable_answer", Kind.RATE, 0, 0, None, None, None)
    text = render_view(View("v", (), (), (), (empty,), ()), "csv")
    assert text.splitlines()[1] == "overall,,unanswerable_answer,,0,0,,,,,,"


def test_text_that_looks_like_a_formula_is_neutralized() -> None:
    hostile = Estimate("field", "=HYPERLINK(1)", "@x", Kind.RATE, 1, 2, 0.5, 0.1, 0.9)
    rows = read(render_view(View("v", (), (), (), (hostile,), ()), "csv"))
    assert rows[0]["name"] == "'=HYPERLINK(1)" and rows[0]["metric"] == "'@x"
    negative = Estimate("field", "a", "kappa", Kind.KAPPA, None, 9, -0.25, -0.5, 0.0)
    rows = read(render_view(View("v", (), (), (), (negative,), ()), "csv"))
    assert rows[0]["rate"] == "-0.25"  # numbers stay numbers


def test_pandas_reads_it_with_the_documented_dtypes() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(
        io.StringIO(render(DEMO, "csv")),
        dtype={"success_count": "Int64", "total_count": "Int64"},
        keep_default_na=False,
        na_values=[""],
    )
    assert list(frame.columns) == list(COLUMNS)
    assert str(frame["rate"].dtype) == "float64" and str(frame["lower"].dtype) == "float64"
    overall = frame[(frame["slice"] == "overall") & (frame["metric"] == "unanswerable_answer")]
    assert overall["success_count"].tolist() == [9] and overall["total_count"].tolist() == [30]
    assert overall["name"].isna().all()  # the overall slice has no name
    kappa = frame[frame["metric"] == "kappa"]
    assert kappa["success_count"].isna().all() and len(kappa) == 3
    document = json.loads(DEMO.to_json())
    assert kappa["rate"].tolist() == [
        document["by_field"][name]["kappa"]["value"] for name in kappa["name"]
    ]


def test_a_withheld_f1_names_its_value_only() -> None:
    # An F1 figure has no count: withheld, it names rate, lower and upper (never total_count,
    # which an F1 row never has), and its value cell is empty, never 0.
    f1 = Estimate("field", "a.b", "f1", Kind.SCORE, None, None, None, None, None, label="x")
    macro = Estimate("field", "a.b", "macro_f1", Kind.SCORE, None, None, None, None, None)
    sensitivity = Estimate(
        "field", "a.b", "sensitivity", Kind.RATE, None, 12, None, None, None, label="x"
    )
    estimates = (
        attrs.evolve(sensitivity, suppressed=True),
        attrs.evolve(f1, suppressed=True),
        attrs.evolve(macro, suppressed=True),
        attrs.evolve(macro, value=0.5),
    )
    view = View("v", (), (), (), estimates, (), shared=True)
    lines = render_view(view, "csv").splitlines()
    assert lines[1:] == [
        "field,a.b,sensitivity,x,,12,,,,,,,success_count rate lower upper",
        "field,a.b,f1,x,,,,,,,,,rate lower upper",
        "field,a.b,macro_f1,,,,,,,,,,rate lower upper",
        "field,a.b,macro_f1,,,,0.5,,,,,,",
    ]
