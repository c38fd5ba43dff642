"""chartscore.render: the view, the terminal table and Markdown (CSV and HTML have their own files).

Numbers in the expected texts are derived by hand from the counts (Wilson
bounds from docs/metrics.md's examples or statsmodels), not copied from output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, Report, score
from chartscore.documents.tally import CORE_METRICS, ERROR_METRICS
from chartscore.render import FORMATS, SORTS, render, render_view, report_view
from chartscore.render._numbers import estimate_text, kappa_number, percent
from chartscore.render.markdown import escape
from chartscore.render.table import WIDTH, wrap_label
from chartscore.render.view import Column, Estimate, Kind, Row, Table, View
from chartscore.workflows.demo import run_demo
from report_data import scored_reports

from helpers import examples

DEMO = run_demo()
ROOT = Path(__file__).resolve().parent.parent


def rate(k: int, n: int, metric: str = "exact_agreement", name: str = "a.b") -> Estimate:
    """An estimate built from counts, with statsmodels' Wilson interval (an independent oracle)."""
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson") if n else (None, None)
    if k == 0 and n:
        low = 0.0
    if k == n and n:
        high = 1.0
    return Estimate(
        "field",
        name,
        metric,
        Kind.RATE,
        k,
        n,
        k / n if n else None,
        low,
        high,
        error=metric in ERROR_METRICS,
    )


# --- numbers ----------------------------------------------------------------------------

PERCENTS = [
    (0.0, "0"),
    (1.0, "100"),
    (0.5, "50"),
    (0.65, "65"),
    (0.004, "0.4"),
    (0.0003, "0.03"),
    (1e-7, "<0.01"),
    (0.996, "99.6"),
    (0.9999, "99.99"),
    (0.999999, ">99.99"),
    (-0.05, "-5"),
    (-0.0004, "-0.04"),
]


@pytest.mark.parametrize(("fraction", "text"), PERCENTS)
def test_percent_is_never_a_false_zero_or_hundred(fraction: float, text: str) -> None:
    assert percent(fraction) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.43037, "0.43"),
        (1.0, "1.00"),
        (-1.0, "-1.00"),
        (0.996, "0.996"),
        (0.9996, ">0.999"),
        (-0.9996, "<-0.999"),
        (-0.001, "0.00"),
        (-0.25, "-0.25"),
    ],
)
def test_kappa_numbers(value: float, text: str) -> None:
    assert kappa_number(value) == text


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(0, 5000), st.integers(1, 5000))
def test_a_rounded_rate_is_zero_or_hundred_only_when_exact(k: int, extra: int) -> None:
    n = k + extra if k % 3 else max(k, 1)
    k = min(k, n)
    text = percent(k / n)
    assert (text == "0") == (k == 0)
    assert (text == "100") == (k == n)
    if not text.startswith(("<", ">")):
        assert abs(float(text) - 100 * k / n) <= 0.5


def test_estimate_texts_from_hand_computed_intervals() -> None:
    # 13/20: Wilson [0.4329, 0.8188]; 3/4: [0.3006, 0.9544] (docs/metrics.md); 0/8: [0, 0.3244].
    assert estimate_text(rate(13, 20)) == "13/20 65% [43-82]"
    assert estimate_text(rate(3, 4)) == "3/4 75% [30-95]"
    assert estimate_text(rate(0, 8)) == "0/8 0% [0-32]"
    assert estimate_text(rate(8, 8)) == "8/8 100% [68-100]"
    assert estimate_text(rate(0, 0)) == "0/0 no trials"
    kappa = Estimate("field", "a", "kappa", Kind.KAPPA, None, 150, 0.4, 0.15109, 0.64891)
    assert estimate_text(kappa) == "0.40 [0.15, 0.65]"
    # From fewer than 100 pairs its interval is marked (docs/metrics.md); the AUROC's is not.
    few = Estimate("field", "a", "kappa", Kind.KAPPA, None, 99, 0.4, 0.15109, 0.64891)
    assert estimate_text(few) == "0.40 [0.15, 0.65] too few pairs"
    for metric in ("ac1", "ac2", "alpha"):
        assert estimate_text(attrs.evolve(few, metric=metric)).endswith(" too few pairs")
    auroc = attrs.evolve(few, metric="uncertainty_auroc")
    assert estimate_text(auroc) == "0.40 [0.15, 0.65]"
    undefined = Estimate("field", "a", "kappa", Kind.KAPPA, None, 7, None, None, None)
    assert estimate_text(undefined) == "undefined"
    empty = Estimate("field", "a", "kappa", Kind.KAPPA, None, 0, None, None, None)
    assert estimate_text(empty) == "no trials"
    difference = Estimate(
        "field", "a", "exact_agreement", Kind.DIFFERENCE, None, None, 0.052, -0.01, 0.113
    )
    assert estimate_text(difference) == "+5 pp [-1, +11]"


# --- the suppressed path (a shared report's cells), on a hand-made view ---------------------


def _suppressed_view() -> View:
    def hidden(k: int | None, n: int | None, metric: str) -> Estimate:
        return Estimate(
            "field",
            "dx.hiv",
            metric,
            Kind.RATE,
            k,
            n,
            None,
            None,
            None,
            error=metric in ERROR_METRICS,
            suppressed=True,
        )

    cells = (
        hidden(None, 24, "exact_agreement"),
        hidden(None, None, "normalized_agreement"),
        rate(0, 24, "answerable_abstention", "dx.hiv"),
    )
    kappa = Estimate(
        "field", "dx.hiv", "kappa", Kind.KAPPA, None, None, None, None, None, suppressed=True
    )
    table = Table(
        "agreement",
        "Agreement",
        "note",
        "slice",
        (Column("exact"), Column("normalized"), Column("abstention"), Column("pairs")),
        (
            Row("field", "dx.hiv", (*cells, None)),
            Row("overall", "", (rate(0, 0), rate(5, 9), 3, 0)),
        ),
    )
    return View("shared report", (("rows", "suppressed"),), (), (table,), (*cells, kappa), ())


def test_suppressed_counts_read_suppressed_never_zero() -> None:
    view = _suppressed_view()
    text = render_view(view, "table")
    row = next(line for line in text.splitlines() if line.startswith("dx.hiv"))
    assert re.search(r"suppressed/24 +suppressed +0/24 +0% \[0-14\] +suppressed$", row), row
    markdown = render_view(view, "markdown")
    assert "| `dx.hiv` | suppressed/24 | suppressed | 0/24 0% [0-14] | suppressed |" in markdown
    csv_text = render_view(view, "csv")
    # CSV: a withheld cell is empty (the count columns stay integers); the last column
    # names the withheld cells (a field row has no clustered cells to withhold).
    assert csv_text.startswith(
        "slice,name,metric,label,success_count,total_count,rate,lower,upper,"
        "design_effect,clustered_lower,clustered_upper,suppressed\r\n"
    )
    assert "field,dx.hiv,exact_agreement,,,24,,,,,,,success_count rate lower upper\r\n" in csv_text
    assert (
        "field,dx.hiv,normalized_agreement,,,,,,,,,,success_count total_count rate lower upper\r\n"
        in csv_text
    )
    assert "field,dx.hiv,answerable_abstention,,0,24,0,0,0.13797620467498026,,,,\r\n" in csv_text
    assert "field,dx.hiv,kappa,,,,,,,,,,total_count rate lower upper\r\n" in csv_text
    html_text = render_view(view, "html")
    assert html_text.count('class="kn">suppressed/24<') == 1
    assert '<td class="count suppressed">suppressed</td>' in html_text
    for output in (text, markdown):
        assert "0/24 0%" in output  # the one published zero is still shown as zero
    assert 'class="kn">0/24</span> <span class="rate">0%</span>' in html_text
    for output in (text, markdown, csv_text, html_text):
        assert "None" not in output


def test_the_suppressed_view_can_fail() -> None:
    # The same view with a count of 0 where one is suppressed must read differently.
    view = _suppressed_view()
    assert "suppressed/24" in render_view(view, "table")
    assert "0/24 0% [0-14]" in render_view(view, "table")


# --- render() -----------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "sort"), [("json", "name"), ("TABLE", "name"), ("table", "x")])
def test_unknown_format_or_sort_is_a_usage_error(fmt: str, sort: str) -> None:
    with pytest.raises(ChartscoreError) as caught:
        render(DEMO, fmt, sort=sort)
    assert caught.value.code is ErrorCode.USAGE and caught.value.__context__ is None


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sort", SORTS)
def test_every_format_ends_with_a_line_end_and_is_ascii_or_utf8(fmt: str, sort: str) -> None:
    text = render(DEMO, fmt, sort=sort)
    assert text.endswith("\n")
    if fmt in ("table", "csv", "markdown"):
        assert text.isascii()


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_does_not_depend_on_mapping_order(fmt: str) -> None:
    reordered = Report(
        overall=DEMO.overall,
        by_field=dict(reversed(list(DEMO.by_field.items()))),
        by_field_type=dict(reversed(list(DEMO.by_field_type.items()))),
        scorer_version=DEMO.scorer_version,
    )
    assert render(reordered, fmt) == render(DEMO, fmt)
    loaded = Report.from_json(DEMO.to_json())
    assert render(loaded, fmt, sort="rate") == render(DEMO, fmt, sort="rate")


def test_output_is_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    script = (
        "import sys, hashlib\n"
        "from chartscore.workflows.demo import run_demo\n"
        "from chartscore.render import render\n"
        "r = run_demo()\n"
        "print(hashlib.sha256(''.join(render(r, f, sort=s) for f in "
        "('table', 'markdown', 'csv', 'html') for s in ('name', 'rate')).encode()).hexdigest())\n"
    )
    digests = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        digests.add(done.stdout)
    assert len(digests) == 1


# --- order -------------------------------------------------------------------------------


def _expected_order(document: dict[str, dict[str, dict[str, object]]], sort: str) -> list[str]:
    names = sorted(document)
    if sort == "name":
        return names

    def key(name: str) -> tuple[bool, float, str]:
        metric = document[name]["normalized_agreement"]
        assert isinstance(metric, dict)
        k, n = metric["success_count"], metric["total_count"]
        assert isinstance(k, int) and isinstance(n, int)
        return (n == 0, k / n if n else 0.0, name)

    return sorted(names, key=key)


@settings(max_examples=examples(60), deadline=None)
@given(scored_reports(), st.sampled_from(SORTS))
def test_rows_follow_the_requested_order(report: Report, sort: str) -> None:
    document = json.loads(report.to_json())
    view = report_view(report, sort=sort)
    fields = [row.name for row in view.tables[0].rows if row.slice == "field"]
    assert fields == _expected_order(document["by_field"], sort)
    types = [row.name for row in view.tables[0].rows if row.slice == "field_type"]
    if types:
        assert types == _expected_order(document["by_field_type"], sort)
    assert view.tables[0].rows[-1].slice == "overall"
    for plot in view.plots:
        plotted = [row.estimate.name for row in plot.rows if row.estimate.slice == "field"]
        first_seen = list(dict.fromkeys(plotted))
        assert first_seen == [name for name in fields if name in plotted]


def test_demo_sorted_by_rate_puts_the_weakest_field_first() -> None:
    # Demo normalized agreement: dx.icd10 1/21 (its gold values are patterns, so only "I10"
    # equals its gold as text) is the lowest, then dx.summary 7/21, then hx.symptoms 14/22.
    view = report_view(DEMO, sort="rate")
    names = [row.name for row in view.tables[0].rows if row.slice == "field"]
    assert names[:3] == ["dx.icd10", "dx.summary", "hx.symptoms"]


# --- the terminal table --------------------------------------------------------------------


def test_demo_table_fits_100_columns_and_shows_every_error_metric() -> None:
    text = render(DEMO, "table")
    assert max(map(len, text.splitlines())) <= WIDTH
    for heading in ("unanswerable", "wrong-type", "answerable", "ordinal later", "kappa"):
        assert heading in text
    # All fields: 9/30 unanswerable rows answered (Wilson [16.7, 47.9]), in 19 charts. Fewer
    # than 10 charts hold an answer, so the design effect is at least the worst case (2.0),
    # and t with 18 degrees of freedom: the case-clustered [12.2, 56.9] the table shows.
    metric = DEMO.overall.metric("unanswerable_answer")
    assert (metric.clustered_cases, metric.design_effect) == (19, 2.0)
    assert re.search(r"^all fields .* 9/30 +30% \[12-57\] ", text, re.M)


def _long_id_report() -> Report:
    ids = [
        "a" * 64,
        "registry." + "b" * 64,
        ".".join(chr(ord("c") + i) * 64 for i in range(8)),  # 519 characters, the longest id
        "x",
    ]
    gold = [GoldField(f"c{i}", f, "text", "v") for f in ids for i in range(3)]
    predictions = [Prediction(f"c{i}", f, "v" if i else None) for f in ids for i in range(3)]
    return score(gold, predictions)


def _labels_of(lines: list[str]) -> list[str]:
    """Read a terminal table's label column back: first lines plus continuation lines."""
    rule = next(i for i, line in enumerate(lines) if line.startswith("-"))
    width = len(lines[rule].split("  ")[0])
    labels: list[str] = []
    for line in lines[rule + 1 :]:
        if not line:
            continue
        label, rest = line[:width].rstrip(), line[width:].strip()
        if rest:
            labels.append(label)
        else:
            labels[-1] += label
    return labels


def test_long_field_ids_wrap_within_100_columns_and_lose_nothing() -> None:
    report = _long_id_report()
    text = render(report, "table")
    assert max(map(len, text.splitlines())) <= WIDTH
    expected = [row.name for row in report_view(report).tables[0].rows if row.slice == "field"]
    agreement = text.split("Agreement (higher is better)\n", 1)[1].split("\nErrors", 1)[0]
    first_panel = agreement.split("\n\n\n", 1)[0].splitlines()
    assert _labels_of(first_panel)[: len(expected)] == expected
    assert _labels_of(first_panel)[-2:] == ["type text", "all fields"]


@settings(max_examples=examples(200), deadline=None)
@given(
    st.from_regex(r"[a-z][a-z0-9_]{0,63}(\.[a-z][a-z0-9_]{0,63}){0,7}", fullmatch=True),
    st.integers(1, 80),
)
def test_wrap_label_keeps_every_character(field_id: str, width: int) -> None:
    lines = wrap_label(field_id, width)
    assert "".join(lines) == field_id
    assert all(0 < len(line) <= width for line in lines)


def test_wrap_label_prefers_dots() -> None:
    assert wrap_label("registry.label.extra", 10) == ["registry.", "label.", "extra"]
    assert wrap_label("type categorical", 8) == ["type", "categori", "cal"]


def test_a_table_too_wide_splits_into_panels_that_repeat_the_label() -> None:
    big = rate(123456, 987654)
    columns = tuple(Column(f"metric {i}") for i in range(6))
    table = Table("t", "Wide", "note", "slice", columns, (Row("field", "dx.onset", (big,) * 6),))
    view = View("v", (), (), (table,), (), ())
    lines = render_view(view, "table").splitlines()
    assert max(map(len, lines)) <= WIDTH
    rows = [line for line in lines if line.startswith("dx.onset")]
    assert len(rows) >= 2  # the label is repeated in every panel
    assert sum(line.count("123456/987654") for line in rows) == 6


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.from_regex(r"[a-z][a-z0-9_.+-]{0,31}", fullmatch=True), min_size=1, max_size=4),
    st.lists(st.from_regex(r"[A-Za-z0-9_();:,.-]{1,30}", fullmatch=True), max_size=40),
    st.integers(0, 2),
)
def test_a_wide_text_column_wraps_and_the_labels_keep_their_width(
    labels: list[str], words: list[str], short_columns: int
) -> None:
    # A long error message (a code, its place and a hint) is free text: it wraps at its spaces.
    # The label column keeps its width (it was squeezed to one character a line).
    from chartscore.render.table import table_lines

    text = " ".join(words)
    columns = (*(Column(f"c{i}") for i in range(short_columns)), Column("error"))
    rows = tuple(
        Row("field", label, (*(f"s{i}" for i in range(short_columns)), text))
        for label in dict.fromkeys(labels)
    )
    lines = table_lines(Table("t", "", "", "run", columns, rows))
    assert max(map(len, lines)) <= WIDTH
    width = max(len("run"), *map(len, rows and [row.name for row in rows]))
    body = lines[lines.index(next(line for line in lines if line.startswith("-"))) + 1 :]
    starts = [line[:width].rstrip() for line in body if line[:width].strip()]
    assert starts == [row.name for row in rows]  # each label whole, on its row's first line
    first = body[: len(body) // len(rows)]
    tail = "".join(line[width + 2 + 4 * short_columns :] for line in first)
    assert "".join(tail.split()) == "".join(text.split())  # no character of the text is lost


# --- type rows ------------------------------------------------------------------------------


def test_type_rows_hidden_only_when_each_type_has_one_field() -> None:
    one_each = score(
        [GoldField("c1", "a", "text", "x"), GoldField("c1", "n", "number", 1)],
        [Prediction("c1", "a", "x")],
    )
    view = report_view(one_each)
    assert all(row.slice != "field_type" for table in view.tables for row in table.rows)
    assert any("type rows" in note for note in view.notes)
    assert any(e.slice == "field_type" for e in view.estimates)  # the CSV keeps them
    gold = [
        GoldField("c1", "a", "text", "x"),
        GoldField("c1", "b", "text", "y"),
        GoldField("c1", "n", "number", 1),
    ]
    shared = report_view(score(gold, []))
    labels = [row.name for row in shared.tables[0].rows if row.slice == "field_type"]
    assert labels == ["number", "text"]
    assert not any("type rows" in note for note in shared.notes)


# --- Markdown -------------------------------------------------------------------------------


def _markdown_rows(text: str, title: str) -> dict[str, dict[str, str]]:
    """A Markdown table as {row label: {heading: cell}}."""
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in rows[0].strip().strip("|").split(" | ")]
    out = {}
    for line in rows[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        out[cells[0]] = dict(zip(header, cells, strict=True))
    return out


@settings(max_examples=examples(60), deadline=None)
@given(scored_reports())
def test_markdown_names_every_field_with_its_k_over_n(report: Report) -> None:
    text = render(report, "markdown")
    document = json.loads(report.to_json())
    agreement = _markdown_rows(text, "Agreement (higher is better)")
    errors = _markdown_rows(text, "Errors (lower is better)")
    headings = {
        "exact_agreement": "exact agreement",
        "normalized_agreement": "normalized agreement",
        "abstention_correctness": "abstention correctness",
        "evidence_support": "evidence support",
        "evidence_provided": "evidence provided",
        "answerable_abstention": "answerable abstention",
        "unanswerable_answer": "unanswerable answer",
        "wrong_type_answer": "wrong-type answer",
    }
    assert set(headings) == set(CORE_METRICS)
    for field_id, part in document["by_field"].items():
        provided = part["evidence_provided"]
        none_provided = provided["total_count"] > 0 and provided["success_count"] == 0
        for metric, heading in headings.items():
            table = errors if metric in ERROR_METRICS else agreement
            cell = table[f"`{field_id}`"][heading]
            k, n = part[metric]["success_count"], part[metric]["total_count"]
            if metric == "evidence_support" and none_provided:  # not 0%: no evidence at all
                assert cell == "not provided", (field_id, cell)
            else:
                assert cell.startswith(f"{k}/{n} "), (field_id, metric, cell)


def test_markdown_escapes_any_label() -> None:
    hostile = "<script>alert(1)</script>|x*_[a](http://e)`"
    assert escape(hostile) == (r"\<script\>alert\(1\)\<\/script\>\|x\*\_\[a\]\(http\:\/\/e\)\`")
    table = Table("t", "T", "n", "slice", (Column("c"),), (Row("field", hostile, ("x",)),))
    text = render_view(View("v", (), (), (table,), (), ()), "markdown")
    row = next(line for line in text.splitlines() if "alert" in line)
    assert "<script>" not in row and "](" not in row
    assert len(re.findall(r"(?<!\\)\|", row)) == 3  # two cells: nothing opened a third


def test_markdown_demo_matches_the_docs_sample() -> None:
    docs = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    sample = re.search(r"<!-- markdown sample -->\n````markdown\n(.*?)````", docs, re.S)
    assert sample is not None
    assert sample.group(1) == render(DEMO, "markdown")


def test_docs_table_sample_is_the_demos_output() -> None:
    docs = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    sample = re.search(r"<!-- table sample -->\n```text\n(.*?)```", docs, re.S)
    assert sample is not None
    assert render(DEMO, "table").startswith(sample.group(1))
    assert len(sample.group(1).splitlines()) > 15


def test_the_two_core_tables_hold_every_core_metric_once() -> None:
    from chartscore.render.report_view import AGREEMENT_METRICS, ERROR_TABLE_METRICS

    assert sorted(AGREEMENT_METRICS + ERROR_TABLE_METRICS) == sorted(CORE_METRICS)
    assert set(ERROR_TABLE_METRICS) == set(CORE_METRICS) & ERROR_METRICS


def test_an_undefined_kappa_reads_undefined_with_its_pairs() -> None:
    # One pair: gold and answer in one category, so p_e = 1 and kappa has no value.
    gold = [
        GoldField("c1", "s.cat", "categorical", "x"),
        GoldField("c2", "s.cat", "categorical", "x"),
    ]
    text = render(score(gold, [Prediction("c1", "s.cat", "x")]), "table")
    assert re.search(r"^s\.cat  Cohen's kappa  undefined  +1$", text, re.M), text


def test_ignored_predictions_are_named_in_the_header() -> None:
    gold = [GoldField("c1", "a", "text", "x")]
    extra = [Prediction("c1", "a", "x"), Prediction("c9", "a", "y"), Prediction("c8", "a", "y")]
    report = score(gold, extra, extra_predictions="ignore")
    assert "ignored: 2 predictions not in gold, skipped" in render(report, "table")
    assert "**ignored**: 2 predictions not in gold, skipped" in render(report, "markdown")
    assert "ignored" not in render(score(gold, extra[:1]), "table").split("\n\n")[0]


@pytest.mark.parametrize("confidence", [0.9, 0.99])
def test_every_interval_note_names_the_report_level(confidence: float) -> None:
    from importlib import resources

    from chartscore.io.schema_file import load_schema
    from chartscore.workflows.score import score_files

    data = resources.files("chartscore") / "data"
    with (
        resources.as_file(data / "demo_gold.jsonl") as gold,
        resources.as_file(data / "demo_predictions.jsonl") as predictions,
        resources.as_file(data / "demo_schema.json") as schema,
    ):
        report = score_files(gold, predictions, schema=load_schema(schema), confidence=confidence)
    level = f"{round(confidence * 100)}%"
    for fmt in ("markdown", "table", "html"):
        text = render(report, fmt)
        for stale in ("95% interval", "95% Wilson", "95% DeLong", "95% upper", "1.96 SD"):
            assert stale not in text, (fmt, stale)
        assert f"{level} interval" in text and f"{level} DeLong" in text, fmt


def test_a_blank_cell_keeps_an_estimate_column_aligned() -> None:
    # A macro-average row leaves the rate columns blank: the other rows still line up on the
    # slash, and the blank cell stays blank (never "suppressed", never "None").
    cells = (rate(13, 20), "", rate(1, 210), rate(0, 0))
    table = Table(
        "t",
        "T",
        "n",
        "slice",
        (Column("sensitivity"),),
        tuple(Row("field", f"f{i}", (cell,)) for i, cell in enumerate(cells)),
    )
    from chartscore.render.table import table_lines

    lines = table_lines(table)[2:]
    assert lines[1].rstrip() == "f1"
    slashes = {line.index("/") for line in (lines[0], lines[2], lines[3])}
    assert len(slashes) == 1, lines
    assert lines[0].endswith("13/20   65% [43-82]") and lines[3].endswith("0/0        no trials")


def test_each_labelled_field_has_a_macro_average_row_after_its_labels() -> None:
    markdown = render(DEMO, "markdown")
    section = markdown.split("## Per-label confusion metrics", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    table = render(DEMO, "table")
    for name, part in DEMO.by_field.items():
        if part.labels is None:
            assert f"| `{name}` | macro average |" not in markdown
            continue
        assert part.macro_f1 is not None
        macro = f"| `{name}` | macro average |  |  |  |  | {kappa_number(part.macro_f1)} |  |"
        mine = [row for row in rows if row.startswith(f"| `{name}` |")]
        assert mine[-1] == macro  # after the pooled row and every label
        assert [row.split(" | ")[1] for row in mine[1:-1]] == list(part.labels)
        assert re.search(
            rf"^{re.escape(name)} +macro average +{re.escape(kappa_number(part.macro_f1))}$",
            table,
            re.M,
        ), name
