"""Run cost beside accuracy: usage objects, the run header, the run section, merging.

docs/formats.md ("Run cost"), docs/metrics.md ("Run cost and latency"),
docs/disclosure.md ("Run cost").
"""

from __future__ import annotations

import io
import json
import random
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore.cli import main
from chartscore.documents.comparison import Comparison
from chartscore.documents.report import Report
from chartscore.documents.run import RunSection, partial_member, read_partial_member
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.fastpath import check_batch, fast_prediction
from chartscore.records.model import Prediction
from chartscore.records.rows import prediction_row
from chartscore.records.usage import usage_of
from chartscore.scoring.run_usage import UsageCounter
from chartscore.stats.run_cost import (
    RunCost,
    RunHeader,
    latency_bucket,
    merge_optional,
    nearest_rank,
)
from chartscore.workflows.partials import merge_partials, score_with_partial
from chartscore.workflows.score import score_files
from chartscore.workflows.share import share_partials
from test_privacy import Canary, assert_clean_error, assert_clean_text, canaries

from helpers import dumps, examples, write_jsonl

E = ErrorCode
HEADER = {"model": "acme-llm", "model_version": "2026-01", "price": {"currency": "USD"}}


def read_lines(*lines: str) -> tuple[list[object], ChartscoreError | None]:
    """The rows the predictions reader makes of ``lines`` (line 1 first), and its error."""
    _, rows, failure = check_batch(
        1, list(lines), InputKind.PREDICTIONS, fast_prediction, prediction_row
    )
    return rows, failure


def line(usage: object = None, case: str = "c1", field: str = "f.a", value: object = 1) -> str:
    row: dict[str, object] = {"case_id": case, "field_id": field, "value": value}
    if usage is not None:
        row["usage"] = usage
    return dumps(row)


# --- reading usage -----------------------------------------------------------------------------


def test_usage_is_read_exactly_in_its_smallest_units() -> None:
    rows, failure = read_lines(
        line({"input_tokens": 12, "output_tokens": 0, "latency_ms": Decimal("1.5"), "cost": 2})
    )
    assert failure is None
    assert rows[0].usage == (12, 0, 1_500_000, 2_000_000_000)  # type: ignore[attr-defined]
    rows, _ = read_lines(line({"latency_ms": Decimal("0.000001"), "cost": Decimal("1E-9")}))
    assert rows[0].usage == (None, None, 1, 1)  # type: ignore[attr-defined]
    rows, _ = read_lines(line({"latency_ms": Decimal("2.50000000000")}))  # trailing zeros: exact
    assert rows[0].usage == (None, None, 2_500_000, None)  # type: ignore[attr-defined]


def test_the_fast_route_reads_usage_as_the_strict_one_does() -> None:
    # The scanner reads a line with usage (the layout pattern never matches one); a usage
    # the strict route refuses sends the line there (test_fastpath's property covers more).
    good = line({"input_tokens": 12, "latency_ms": Decimal("1.5"), "cost": Decimal("1E-9")})
    fast = fast_prediction(good)
    assert fast is not None and fast.usage == (12, None, 1_500_000, 1)
    assert fast == prediction_row(json.loads(good, parse_float=Decimal))
    for bad in ({"input_tokens": True}, {"cost": None}, {}, {"latency_ms": Decimal("1E-7")}):
        assert fast_prediction(line(bad)) is None
    assert fast_prediction(line()) is not None and fast_prediction(line()).usage is None  # type: ignore[union-attr]
    assert fast_prediction(dumps({"chartscore_run": HEADER})) is None


@pytest.mark.parametrize(
    ("usage", "code"),
    [
        ({}, E.INVALID_USAGE),
        ([], E.INVALID_USAGE),
        (3, E.INVALID_USAGE),
        ({"input_tokens": -1}, E.INVALID_USAGE),
        ({"input_tokens": Decimal("1.5")}, E.INVALID_USAGE),
        ({"input_tokens": Decimal("2.0")}, E.INVALID_USAGE),  # a count is an integer literal
        ({"input_tokens": True}, E.INVALID_USAGE),
        ({"output_tokens": "3"}, E.INVALID_USAGE),
        ({"input_tokens": 10**12 + 1}, E.INVALID_USAGE),
        ({"latency_ms": -1}, E.INVALID_USAGE),
        ({"latency_ms": Decimal("-0.5")}, E.INVALID_USAGE),
        ({"latency_ms": Decimal("0.0000001")}, E.INVALID_USAGE),  # finer than a nanosecond
        ({"cost": Decimal("0.0000000001")}, E.INVALID_USAGE),  # finer than 1e-9
        ({"cost": Decimal("1E+13")}, E.INVALID_USAGE),
        ({"cost": None}, E.INVALID_USAGE),  # a key says something, or is left out
        ({"latency_ms": False}, E.INVALID_USAGE),
        ({"tokens": 3}, E.UNKNOWN_KEY),
        ({"input_tokens": 1, "case_id": "x"}, E.UNKNOWN_KEY),
    ],
)
def test_an_invalid_usage_is_refused_with_its_code(usage: object, code: ErrorCode) -> None:
    _, failure = read_lines(line(usage))
    assert failure is not None and failure.code is code and failure.line == 1


def test_an_unknown_usage_key_is_named_only_when_it_is_a_format_key() -> None:
    _, failure = read_lines(line({"input_tokens": 1, "case_id": "x"}))
    assert failure is not None and failure.key == "case_id"
    _, failure = read_lines(line({"tokens": 1}))
    assert failure is not None and failure.key is None


def test_a_bad_prediction_is_named_before_its_usage() -> None:
    _, failure = read_lines(line({"input_tokens": -1}, case=""))
    assert failure is not None and failure.code is E.INVALID_CASE_ID


def test_usage_of_refuses_a_nonfinite_decimal() -> None:
    for number in (Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")):
        with pytest.raises(ChartscoreError) as caught:
            usage_of({"latency_ms": number})
        assert caught.value.code is E.INVALID_USAGE


def test_the_record_api_refuses_usage_and_a_header() -> None:
    row = {"case_id": "c1", "field_id": "f.a", "value": 1, "usage": {"input_tokens": 1}}
    with pytest.raises(ChartscoreError) as caught:
        Prediction.from_dict(row)
    assert (caught.value.code, caught.value.key) == (E.UNKNOWN_KEY, "usage")
    with pytest.raises(ChartscoreError) as caught:
        Prediction.from_dict({"chartscore_run": HEADER})
    assert (caught.value.code, caught.value.key) == (E.UNKNOWN_KEY, "chartscore_run")


# --- the run header ----------------------------------------------------------------------------


def test_the_header_is_read_on_line_1_only() -> None:
    header = dumps({"chartscore_run": HEADER})
    rows, failure = read_lines(header, line())
    assert failure is None
    assert rows[0].usage == RunHeader("acme-llm", "2026-01", "USD")  # type: ignore[attr-defined]
    for lines in ([line(), header], [header, header], ["", header]):
        rows, failure = read_lines(*lines)
        assert failure is not None and failure.code is E.MISPLACED_RUN_HEADER
        assert failure.line == 2


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ({"chartscore_run": {"model": "a model"}}, E.INVALID_RUN_HEADER),  # a space
        ({"chartscore_run": {"model": "-llm"}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"model": "x" * 65}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"model_version": 3}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"price": {"input_per_million_tokens": 1}}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"price": {"currency": "usd"}}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"price": {"currency": "USD", "output_per_million_tokens": -1}}},
         E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"price": "USD"}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": []}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {}, "case_id": "c1"}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"model": None}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"price": None}}, E.INVALID_RUN_HEADER),
        ({"chartscore_run": {"seed": 1}}, E.UNKNOWN_KEY),
        ({"chartscore_run": {"price": {"currency": "USD", "per_token": 1}}}, E.UNKNOWN_KEY),
    ],
)  # fmt: skip
def test_an_invalid_header_is_refused_with_its_code(header: object, code: ErrorCode) -> None:
    _, failure = read_lines(dumps(header))  # type: ignore[arg-type]
    assert failure is not None and failure.code is code and failure.line == 1


# --- the worked example of docs/metrics.md ------------------------------------------------------


def _cohort(
    root: Path, usage: dict[tuple[str, str], dict[str, object]], header: bool
) -> tuple[Path, Path]:
    gold = write_jsonl(
        root / "gold.jsonl",
        [
            {"case_id": c, "field_id": f, "field_type": "number", "value": 1}
            for c in ("c1", "c2", "c3")
            for f in ("f.a", "f.b")
        ],
    )
    rows: list[dict[str, object]] = [{"chartscore_run": HEADER}] if header else []
    for c in ("c1", "c2", "c3"):
        for f in ("f.a", "f.b"):
            row: dict[str, object] = {"case_id": c, "field_id": f, "value": 1}
            if (c, f) in usage:
                row["usage"] = usage[c, f]
            rows.append(row)
    return gold, write_jsonl(root / "predictions.jsonl", rows)


WORKED = {
    ("c1", "f.a"): {
        "input_tokens": 100,
        "output_tokens": 10,
        "latency_ms": Decimal("1.5"),
        "cost": Decimal("0.001"),
    },
    ("c1", "f.b"): {"input_tokens": 50, "latency_ms": Decimal("2.25")},
    ("c2", "f.a"): {
        "input_tokens": 200,
        "output_tokens": 20,
        "latency_ms": 10,
        "cost": Decimal("0.003"),
    },
    ("c2", "f.b"): {"latency_ms": Decimal("1234.5678")},
}


def test_the_worked_example_of_the_metrics_page(tmp_path: Path) -> None:
    gold, predictions = _cohort(tmp_path, WORKED, header=True)
    run = json.loads(score_files(gold, predictions).to_json())["run"]
    assert run == {
        "rows_with_usage": 4,
        "charts_with_usage": 2,
        "input_tokens": {"rows": 3, "charts": 2, "total": 350, "per_chart_mean": 175},
        "output_tokens": {"rows": 2, "charts": 2, "total": 30, "per_chart_mean": 15},
        "latency_ms": {
            "rows": 4,
            "charts": 2,
            "total": 1248.3178,
            "per_chart_mean": 624.1589,
            "p50": 2.25,
            "p95": 1230,
        },
        "cost": {"rows": 2, "charts": 2, "total": 0.004, "per_chart_mean": 0.002},
        "header": {"model": "acme-llm", "model_version": "2026-01", "currency": "USD"},
    }


def test_a_report_without_usage_has_no_run_section(tmp_path: Path) -> None:
    gold, predictions = _cohort(tmp_path, {}, header=True)  # a header alone adds nothing
    with_header = score_files(gold, predictions).to_json()
    gold, predictions = _cohort(tmp_path, {}, header=False)
    assert with_header == score_files(gold, predictions).to_json()
    assert '"run"' not in with_header


def test_the_same_lines_in_any_order_and_either_reader_give_the_same_bytes(
    tmp_path: Path,
) -> None:
    gold, predictions = _cohort(tmp_path, WORKED, header=True)
    first = score_files(gold, predictions).to_json()
    lines = predictions.read_text().splitlines(True)
    shuffled = [lines[0], *random.Random(3).sample(lines[1:], len(lines) - 1)]
    predictions.write_text("".join(shuffled))
    assert score_files(gold, predictions, parallel=True).to_json() == first
    assert score_files(gold, predictions).to_json() == first


def test_the_run_section_reads_back_and_refuses_an_edit(tmp_path: Path) -> None:
    gold, predictions = _cohort(tmp_path, WORKED, header=True)
    text = score_files(gold, predictions).to_json()
    assert Report.from_json(text).to_json() == text
    document = json.loads(text)
    edits = [
        ("rows_with_usage", 1),  # fewer than a quantity's rows
        ("charts_with_usage", 0),
        ("cost", {"rows": 2, "charts": 0, "total": 1, "per_chart_mean": None}),
        ("latency_ms", {"rows": 4, "charts": 2, "total": 1, "per_chart_mean": 1, "p50": 3,
                        "p95": 2}),
        ("header", {"model": "a model"}),
        ("header", {}),
        ("extra", 1),
    ]  # fmt: skip
    for key, value in edits:
        edited = json.loads(text)
        edited["run"][key] = value
        with pytest.raises(ChartscoreError) as caught:
            Report.from_json(json.dumps(edited))
        assert caught.value.code is E.INVALID_REPORT, key
    assert document["run"]["rows_with_usage"] == 4


# --- percentiles on the bucket grid -----------------------------------------------------------


def truncated(nanoseconds: int) -> int:
    """``nanoseconds`` truncated to three significant digits, computed another way."""
    scale = 1
    while nanoseconds // scale >= 1000:
        scale *= 10
    return nanoseconds // scale * scale


@settings(max_examples=examples(300))
@given(st.lists(st.integers(0, 10**18), min_size=1, max_size=60), st.sampled_from([1, 50, 95, 99]))
def test_percentiles_are_the_nearest_rank_ones_truncated(values: list[int], percent: int) -> None:
    counts: dict[int, int] = {}
    for value in values:
        assert latency_bucket(value) == truncated(value)
        counts[latency_bucket(value)] = counts.get(latency_bucket(value), 0) + 1
    expected = np.percentile(np.array(values, dtype=object), percent, method="inverted_cdf")
    assert nearest_rank(sorted(counts.items()), percent) == truncated(int(expected))


def test_a_percentile_is_below_the_true_one_by_less_than_one_percent() -> None:
    for value in (1_000, 1_009, 99_999, 123_456_789, 10**18 - 1):
        assert value * 0.99 < latency_bucket(value) <= value
    assert nearest_rank([], 50) is None


# --- merging -------------------------------------------------------------------------------------

usages = st.tuples(
    st.none() | st.integers(0, 10**6),
    st.none() | st.integers(0, 10**6),
    st.none() | st.integers(0, 10**13),
    st.none() | st.integers(0, 10**12),
).filter(lambda usage: any(part is not None for part in usage))


@settings(max_examples=examples(200))
@given(
    st.lists(st.tuples(st.integers(0, 30), usages), min_size=1, max_size=80),
    st.integers(1, 4),
    st.randoms(use_true_random=False),
)
def test_merging_partitions_by_case_gives_the_pooled_run(
    rows: list[tuple[int, tuple[int | None, ...]]], parts: int, shuffle: random.Random
) -> None:
    pooled = UsageCounter()
    counters = [UsageCounter() for _ in range(parts)]
    for case, usage in rows:
        pooled.add(f"c{case}", usage, InputKind.PREDICTIONS)
        counters[case % parts].add(f"c{case}", usage, InputKind.PREDICTIONS)  # by case
    costs = [counter.run_cost() for counter in counters]
    shuffle.shuffle(costs)
    merged: RunCost | None = None
    for cost in costs:
        merged = merge_optional(merged, cost)
    expected = pooled.run_cost()
    assert merged == expected
    assert merged is not None and expected is not None
    assert RunSection.of(merged).to_dict() == RunSection.of(expected).to_dict()
    # Additive: each total is the sum of the lines' amounts.
    for index, name in enumerate(("input_tokens", "output_tokens", "latency_ms", "cost")):
        amounts = [usage[index] for _, usage in rows if usage[index] is not None]
        assert merged.total(name).total == sum(amounts)  # type: ignore[arg-type]
        assert merged.total(name).rows == len(amounts)
    # The partial's member gives the counts back exactly.
    assert read_partial_member(json.loads(json.dumps(partial_member(merged)))) == merged


def test_merging_runs_under_different_headers_is_refused() -> None:
    first, second = UsageCounter(), UsageCounter()
    first.add("", RunHeader("a"), InputKind.PREDICTIONS)
    first.add("c1", (1, None, None, None), InputKind.PREDICTIONS)
    second.add("c2", (1, None, None, None), InputKind.PREDICTIONS)
    with pytest.raises(ChartscoreError) as caught:
        merge_optional(first.run_cost(), second.run_cost())
    assert caught.value.code is E.RUN_HEADERS_DIFFER
    with pytest.raises(ChartscoreError) as caught:
        first.add("", RunHeader("b"), InputKind.PREDICTIONS)
    assert caught.value.code is E.RUN_HEADERS_DIFFER


def test_partials_of_two_sites_merge_into_the_pooled_run(tmp_path: Path) -> None:
    pooled_gold, pooled_predictions = _cohort(tmp_path, WORKED, header=True)
    pooled = json.loads(score_files(pooled_gold, pooled_predictions).to_json())
    texts = []
    for site, cases in (("a", {"c1"}), ("b", {"c2", "c3"})):
        folder = tmp_path / site
        folder.mkdir()
        gold = write_jsonl(
            folder / "gold.jsonl",
            [json.loads(x) for x in pooled_gold.read_text().splitlines()
             if json.loads(x)["case_id"] in cases],
        )  # fmt: skip
        lines = pooled_predictions.read_text().splitlines()
        kept = [lines[0]] + [x for x in lines[1:] if json.loads(x)["case_id"] in cases]
        predictions = folder / "predictions.jsonl"
        predictions.write_text("\n".join(kept) + "\n")
        _, text = score_with_partial(gold, predictions)
        texts.append(text)
    for order in (texts, texts[::-1]):
        merged = json.loads(merge_partials(order).to_json())
        assert merged["run"] == pooled["run"]
    shared = share_partials(texts, min_cell=2)
    assert "run" not in json.loads(shared.to_json())


# --- compare, render, share ----------------------------------------------------------------------


def test_compare_carries_and_renders_both_systems_run_cost(tmp_path: Path) -> None:
    gold, baseline = _cohort(tmp_path, WORKED, header=True)
    candidate = tmp_path / "candidate.jsonl"
    candidate.write_text(
        "".join(line({"cost": 1}, c, f) + "\n" for c in ("c1", "c2", "c3") for f in ("f.a", "f.b"))
    )
    out = io.StringIO()
    argv = ["compare", "--gold", str(gold), "--baseline", str(baseline), "--quiet"]
    assert main([*argv, "--candidate", str(candidate)], stdout=out, stderr=io.StringIO()) == 0
    document = json.loads(out.getvalue())
    assert set(document["run"]) == {"baseline", "candidate"}
    assert document["run"]["candidate"]["cost"]["total"] == 6
    assert "header" not in document["run"]["candidate"]
    assert Comparison.from_json(out.getvalue().strip()).to_json() == out.getvalue().strip()
    summary = io.StringIO()
    argv += ["--candidate", str(candidate), "--format", "summary"]
    assert main(argv, stdout=summary, stderr=io.StringIO()) == 0
    assert "baseline run cost: 0.004 USD in total" in summary.getvalue()
    assert "candidate run cost: 6 in total, 2 per chart" in summary.getvalue()


@pytest.mark.parametrize("form", ["table", "markdown", "html", "summary"])
def test_every_renderer_shows_run_cost_beside_accuracy(tmp_path: Path, form: str) -> None:
    gold, predictions = _cohort(tmp_path, WORKED, header=True)
    out = io.StringIO()
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions), "--format", form]
    assert main(argv, stdout=out, stderr=io.StringIO()) == 0
    text = " ".join(out.getvalue().split())  # as read, whatever the wrapping
    assert "run cost" in text and "p95 1,230 ms" in text
    if form != "summary":
        assert "Run cost and latency" in text and "acme-llm 2026-01" in text


def test_share_drops_the_run_section(tmp_path: Path) -> None:
    gold, predictions = _cohort(tmp_path, WORKED, header=True)
    plain_folder = tmp_path / "plain"
    plain_folder.mkdir()
    _, plain = _cohort(plain_folder, {}, header=False)
    outputs = []
    for path in (predictions, plain):
        out = io.StringIO()
        argv = ["share", "--gold", str(gold), "--predictions", str(path), "--min-cell", "2"]
        assert main([*argv, "--quiet"], stdout=out, stderr=io.StringIO()) == 0
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    assert "acme-llm" not in outputs[0]


# --- privacy: canaries in every new slot ----------------------------------------------------------


@settings(max_examples=examples(25))
@given(canaries)
def test_errors_about_run_cost_show_nothing_of_the_line(c: Canary) -> None:
    bad = [
        (line({c.marker: 1}), E.UNKNOWN_KEY),
        (line({"input_tokens": c.marker}), E.INVALID_USAGE),
        (line({"latency_ms": Decimal(c.number + "1234567")}), E.INVALID_USAGE),
        (line({"cost": Decimal("-" + c.number)}), E.INVALID_USAGE),
        (line({"input_tokens": 1}, case=c.long_case_id), E.INVALID_CASE_ID),
        (dumps({"chartscore_run": {"model": c.marker + " x"}}), E.INVALID_RUN_HEADER),
        (dumps({"chartscore_run": {"model_version": c.wide}}), E.INVALID_RUN_HEADER),
        (dumps({"chartscore_run": {c.marker: "x"}}), E.UNKNOWN_KEY),
        (dumps({"chartscore_run": {"price": {"currency": c.marker}}}), E.INVALID_RUN_HEADER),
        (dumps({"chartscore_run": {"price": {"currency": "USD", "x": c.number}}}), E.UNKNOWN_KEY),
    ]
    for text, code in bad:
        _, failure = read_lines(text)
        assert failure is not None
        assert_clean_error(failure, c, code)
    _, failure = read_lines(line({"input_tokens": 1}, case=c.case_id(0)), dumps({"chartscore_run": {
        "model": c.marker}}))  # fmt: skip
    assert failure is not None
    assert_clean_error(failure, c, E.MISPLACED_RUN_HEADER)


@settings(max_examples=examples(10), deadline=None)
@given(canaries)
def test_run_cost_reaches_no_output_with_a_case_id_and_share_no_model_name(c: Canary) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        usage = {(k[0], k[1]): v for k, v in WORKED.items()}
        gold, predictions = _cohort(root, usage, header=False)
        # Case ids made of the canary, and a model name that is one (allowed in a report).
        text = predictions.read_text()
        gold_text = gold.read_text()
        for index, case in enumerate(("c1", "c2", "c3")):
            text = text.replace(f'"{case}"', json.dumps(c.case_id(index)))
            gold_text = gold_text.replace(f'"{case}"', json.dumps(c.case_id(index)))
        header = {"chartscore_run": {"model": c.marker, "model_version": c.hexmark}}
        predictions.write_text(dumps(header) + "\n" + text)
        gold.write_text(gold_text)
        for form in ("json", "markdown", "html", "summary", "csv"):
            out, err = io.StringIO(), io.StringIO()
            argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
            assert main([*argv, "--format", form], stdout=out, stderr=err) == 0
            assert_clean_text(err.getvalue(), c, f"score {form} stderr")
            for index in range(3):
                assert c.case_id(index) not in out.getvalue()
        out, err = io.StringIO(), io.StringIO()
        argv = ["share", "--gold", str(gold), "--predictions", str(predictions), "--min-cell", "2"]
        assert main(argv, stdout=out, stderr=err) == 0
        assert_clean_text(out.getvalue(), c, "share stdout")
        assert_clean_text(err.getvalue(), c, "share stderr")
        counter = UsageCounter()
        counter.add(c.case_id(0), (1, 2, 3, 4), InputKind.PREDICTIONS)
        counter.add("", RunHeader(c.marker, c.marker), InputKind.PREDICTIONS)
        for shown in (repr(counter), repr(counter.run_cost()), repr(RunHeader(c.marker))):
            assert_clean_text(shown, c, "repr")
