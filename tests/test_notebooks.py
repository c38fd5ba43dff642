"""Notebooks: every document's data frame (its CSV rows, typed) and its rich display.

The frame is checked cell by cell against the CSV renderer's text, for each of the five
documents; a shared document's withheld numbers are missing with their published ranges; the
notebook page (docs/notebook.md) runs in order with the outputs it shows.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import chartscore
from chartscore import ChartscoreError, Comparison, ErrorCode, Report, compare
from chartscore.documents.agreement import Agreement
from chartscore.documents.canonical_json import format_number
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ErrorHint
from chartscore.render import render
from chartscore.render.csv import COLUMNS
from chartscore.render.document_view import document_view
from chartscore.render.frames import DTYPES, FRAME_COLUMNS
from shared_data import SCHEMA, cohort, full_and_shared
from test_agree import CANARY, run, write_study
from test_shared_comparison import CANARY_CASE, CANARY_VALUE, share_cohort

ROOT = Path(__file__).resolve().parent.parent
Document = Report | SharedReport | Comparison | SharedComparison | Agreement


def _comparison() -> Comparison:
    gold, baseline = cohort()
    # The candidate answers every tenth chart's smoking field with gold's answer.
    golden = {(g.case_id, g.field_id): g for g in gold}
    candidate = [
        chartscore.Prediction(p.case_id, p.field_id, golden[(p.case_id, p.field_id)].value)
        if p.field_id == "hx.smoking" and p.case_id.endswith("0")
        else p
        for p in baseline
    ]
    return compare(gold, baseline, candidate, schema=SCHEMA)


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Document]:
    """One document of each kind; the shared comparison and agreement hold canaries inside."""
    report, shared = full_and_shared()
    status, _, err, out = share_cohort(tmp_path_factory.mktemp("cmp"), 40, 3)
    assert status == 0, err
    shared_comparison = SharedComparison.from_json(out.read_text(encoding="utf-8"))
    files, gold, schema = write_study(tmp_path_factory.mktemp(CANARY) / f"{CANARY}-study")
    argv = ["agree", "--raters", *map(str, files), "--schema", str(schema), "--gold", str(gold)]
    status, text, err = run(argv)
    assert (status, err) == (0, "")
    return {
        "report": report,
        "shared_report": shared,
        "comparison": _comparison(),
        "shared_comparison": shared_comparison,
        "agreement": Agreement.from_json(text),
    }


KINDS = ("report", "shared_report", "comparison", "shared_comparison", "agreement")


def _csv_rows(document: Document) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(render(document, "csv"), newline="")))


def _cell(value: object) -> str:
    """A frame cell written as the CSV writes it."""
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return format_number(value)
    return str(value)


@pytest.mark.parametrize("kind", KINDS)
def test_the_frame_is_the_csv_rows_typed(kind: str, documents: dict[str, Document]) -> None:
    document = documents[kind]
    frame = document.to_pandas()
    assert tuple(frame.columns) == FRAME_COLUMNS
    assert {name: str(dtype) for name, dtype in frame.dtypes.items()} == DTYPES
    assert isinstance(frame.index, pd.RangeIndex)
    rows = _csv_rows(document)
    assert len(frame) == len(rows) > 0
    for (_, found), row in zip(frame.iterrows(), rows, strict=True):
        assert [_cell(found[name]) for name in COLUMNS] == [row[name] for name in COLUMNS]
        # The CSV's suppressed column names the withheld cells; the frame flags the row.
        assert bool(found["suppressed"]) == bool(row.get("suppressed", ""))
    # The library function gives the same frame, and so does reading the CSV with pandas.
    pd.testing.assert_frame_equal(chartscore.to_pandas(document), frame)
    read = pd.read_csv(
        io.StringIO(render(document, "csv")),
        dtype={name: DTYPES[name] for name in COLUMNS},
        keep_default_na=False,
        na_values={name: [""] for name in COLUMNS if DTYPES[name] != "string"},
    )
    pd.testing.assert_frame_equal(read[list(COLUMNS)], frame[list(COLUMNS)])


@pytest.mark.parametrize("kind", KINDS)
def test_the_frame_holds_one_row_per_estimate(kind: str, documents: dict[str, Document]) -> None:
    estimates = document_view(documents[kind]).estimates
    frame = documents[kind].to_pandas()
    keys = list(zip(frame["slice"], frame["name"], frame["metric"], frame["label"], strict=True))
    assert keys == [(e.slice, e.name, e.metric, e.label) for e in estimates]


def test_a_withheld_number_is_missing_with_its_published_range(
    documents: dict[str, Document],
) -> None:
    shared = documents["shared_report"]
    assert isinstance(shared, SharedReport)
    frame = shared.to_pandas()
    withheld = 0
    for kind, name, part in shared.slices():
        if kind not in ("field", "field_type", "overall"):
            continue
        for metric, result in part.metrics.items():
            match = frame[
                (frame["slice"] == kind)
                & (frame["name"] == name)
                & (frame["metric"] == metric)
                & (frame["label"] == "")
            ]
            assert len(match) == 1
            row = match.iloc[0]
            if result.success_count is not None and result.total_count is not None:
                assert not row["suppressed"]
                assert row["total_count"] == result.total_count
                continue
            withheld += 1
            assert row["suppressed"]
            assert row["rate"] != row["rate"]  # NaN: no rate, never 0
            for count, found in (
                ("success_count", result.success_count),
                ("total_count", result.total_count),
            ):
                if found is None:
                    assert row[count] is pd.NA
            for count, published in (
                ("success_count", result.success_range),
                ("total_count", result.total_range),
            ):
                low, high = (None, None) if published is None else published
                assert (row[f"{count}_low"], row[f"{count}_high"]) == (
                    pd.NA if low is None else low,
                    pd.NA if high is None else high,
                )
            if result.rate_bound is None:
                assert math.isnan(row["range_low"]) and row["range_kind"] == ""
            else:
                assert (row["range_low"], row["range_high"]) == (
                    result.rate_bound.lower,
                    result.rate_bound.upper,
                )
                assert row["range_kind"] == result.rate_bound.kind
    assert withheld > 3
    # Some withheld counts have ranges (the audit's), and nothing shown is a range.
    assert frame["success_count_low"].notna().any()
    shown = frame[~frame["suppressed"]]
    assert shown[["success_count_low", "total_count_low", "range_low"]].isna().all().all()


def test_a_shared_comparison_frame_has_its_difference_bounds(
    documents: dict[str, Document],
) -> None:
    frame = documents["shared_comparison"].to_pandas()
    bounded = frame[frame["range_kind"].isin(["newcombe", "difference_range"])]
    assert len(bounded) > 0
    assert (bounded["range_low"] <= bounded["range_high"]).all()
    assert bounded["rate"].isna().all()


@pytest.mark.parametrize("kind", KINDS)
def test_the_rich_display_is_the_html_tables(kind: str, documents: dict[str, Document]) -> None:
    document = documents[kind]
    html = document._repr_html_()
    assert html is not None
    assert html.startswith('<div class="chartscore-doc">') and html.endswith("</div>\n")
    view = document_view(document)
    assert html.count("<table") == len(view.tables) > 0
    for table in view.tables:
        assert f'<table id="table-{table.key}">' in html
    lowered = html.lower()
    for forbidden in ("<script", "<html", "<head", "<link", "<img", "<iframe", "src=", "://"):
        assert forbidden not in lowered
    assert all(link.startswith("#def-") for link in re.findall(r'href="([^"]*)"', html))
    assert chartscore.render.html.notebook_html(document) == html


def test_no_input_marker_reaches_a_frame_or_a_display(documents: dict[str, Document]) -> None:
    for kind in ("shared_comparison", "agreement"):
        document = documents[kind]
        shown = document.to_pandas().to_csv() + str(document._repr_html_())
        for marker in (CANARY, CANARY_CASE, CANARY_VALUE, "chart-0"):
            assert marker not in shown
        assert "chart-0" not in documents["report"].to_pandas().to_csv()
        assert "chart-0" not in str(documents["report"]._repr_html_())


def test_to_pandas_takes_only_a_document() -> None:
    for value in ("report", None, {}, object()):
        with pytest.raises(ChartscoreError) as caught:
            chartscore.to_pandas(value)  # type: ignore[arg-type]
        assert caught.value.code is ErrorCode.USAGE


def test_without_pandas_to_pandas_says_how_to_install_it(
    documents: dict[str, Document], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    for kind in KINDS:
        with pytest.raises(ChartscoreError) as caught:
            documents[kind].to_pandas()
        error = caught.value
        assert error.code is ErrorCode.MISSING_DEPENDENCY
        assert error.hint is ErrorHint.PANDAS_MISSING
        assert str(error) == (
            "missing_dependency (data frames need pandas: pip install 'chartscore[pandas]')"
        )
        assert error.__cause__ is None and error.__context__ is None
        # The rich display needs no pandas.
        assert "<table" in str(documents[kind]._repr_html_())


def test_importing_chartscore_does_not_import_pandas() -> None:
    code = (
        "import sys, chartscore; "
        "from chartscore.documents.report import Report; "
        "assert 'pandas' not in sys.modules, 'pandas imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# The notebook page: its Python blocks run in order, each printing what the page shows after it.
_BLOCK = re.compile(r"```(python|text)\n(.*?)```", re.S)


def test_the_notebook_page_runs_and_prints_what_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = _BLOCK.findall((ROOT / "docs" / "notebook.md").read_text(encoding="utf-8"))
    assert [kind for kind, _ in blocks].count("python") >= 4
    namespace: dict[str, object] = {}
    printed: str | None = None
    for kind, text in blocks:
        if kind == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(text, "docs/notebook.md", "exec"), namespace)
            printed = out.getvalue()
        else:
            assert printed == text, f"docs/notebook.md shows {text!r}, the code printed {printed!r}"
            printed = None
    frame = namespace["frame"]
    assert isinstance(frame, pd.DataFrame)
    assert tuple(frame.columns) == FRAME_COLUMNS
    assert len(frame) == len(_csv_rows(namespace["report"]))  # type: ignore[arg-type]
    html = namespace["html"]
    assert isinstance(html, str) and "<table" in html and "<script" not in html
