"""``min_upper`` and ``max_lower``: gates that read an interval's inner side (issue 38 item 3).

CMS's Hospital IQR chart-abstraction validation passes a hospital when the upper bound of the
95% confidence interval of its agreement rate is at least 75%: a ``min_upper = 0.75`` gate.
``max_lower`` is its mirror for error rates. Both read the interval the other rules read (the
case-clustered one on a pooled slice, Wilson's on a field slice, Clopper-Pearson's with
``--gate-interval exact``), and on a shared report's suppressed rate the bound that holds
whichever count pair its ranges allow is the true one.
"""

from __future__ import annotations

import io
import itertools
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, score
from chartscore.documents import load_document
from chartscore.documents.gates import Gate, evaluate, parse_gates
from chartscore.documents.report import Report
from chartscore.documents.shared_report import SharedReport
from chartscore.stats.binomial import Z95, innermost_wilson, widest_wilson, wilson_interval
from chartscore.stats.clopper_pearson import clopper_pearson, innermost_clopper_pearson
from test_comparison import categorical_rows, compare
from test_gates import doc_example, gate_text

from helpers import examples

E = ErrorCode


def gates(*tables: dict[str, object]) -> tuple[Gate, ...]:
    return parse_gates("".join(gate_text(**table) for table in tables))


def above(value: float) -> float:
    return math.nextafter(value, math.inf)


def below(value: float) -> float:
    return math.nextafter(value, -math.inf)


def agreement_report(agree: int, total: int, abstain: int = 0) -> Report:
    """One categorical field on ``total`` charts: ``agree`` answers right, ``abstain`` abstained."""
    gold = [GoldField(f"c{i}", "chart.element", "categorical", "yes") for i in range(total)]
    answers = []
    for i in range(total):
        if i < agree:
            answers.append(Prediction(f"c{i}", "chart.element", "yes"))
        elif i < agree + abstain:
            answers.append(Prediction(f"c{i}", "chart.element", None))
        else:
            answers.append(Prediction(f"c{i}", "chart.element", "no"))
    return score(gold, answers)


# --------------------------------------------------------------------------- parsing


def test_the_new_rules_parse() -> None:
    text = gate_text(slice="overall", metric="normalized_agreement", min_upper=0.75)
    text += gate_text(
        slice="field:a.b", metric="answerable_abstention", max_lower=0.1, level="warning"
    )
    text += gate_text(slice="field:a.b", metric="kappa", min_upper=-0.5)
    text += gate_text(slice="field:a.b", metric="sensitivity", label="current", min_upper=0.5)
    assert parse_gates(text) == (
        Gate(1, "overall", "normalized_agreement", "min_upper", 0.75),
        Gate(2, "field:a.b", "answerable_abstention", "max_lower", 0.1, "warning"),
        Gate(3, "field:a.b", "kappa", "min_upper", -0.5),
        Gate(4, "field:a.b", "sensitivity", "min_upper", 0.5, label="current"),
    )
    first, second = parse_gates(text)[:2]
    assert (first.reads_lower, first.at_least) == (False, True)
    assert (second.reads_lower, second.at_least) == (True, False)


@pytest.mark.parametrize(
    ("table", "code", "message"),
    [
        (
            {"slice": "overall", "metric": "unanswerable_answer", "min_upper": 0.5},
            E.INVALID_GATE_RULE,
            None,
        ),
        (
            {"slice": "overall", "metric": "exact_agreement", "max_lower": 0.5},
            E.INVALID_GATE_RULE,
            None,
        ),
        ({"slice": "field:a.b", "metric": "kappa", "max_lower": 0.5}, E.INVALID_GATE_RULE, None),
        (
            {"slice": "overall", "metric": "exact_agreement", "min_upper": 0.5, "min_lower": 0.1},
            E.INVALID_GATE_RULE,
            None,
        ),
        (
            {"slice": "overall", "metric": "exact_agreement", "min_upper": 1.5},
            E.INVALID_GATE_THRESHOLD,
            "invalid_gate_threshold (gate 1 on line 1; min_upper must be a number from 0 to 1)",
        ),
        (
            {"slice": "overall", "metric": "ordinal_later", "max_lower": -0.1},
            E.INVALID_GATE_THRESHOLD,
            "invalid_gate_threshold (gate 1 on line 1; max_lower must be a number from 0 to 1)",
        ),
        (
            {"slice": "overall", "metric": "exact_agreement", "min_upr": 0.75},
            E.UNKNOWN_KEY,
            "unknown_key (gate 1 on line 1, key min_upr; did you mean min_upper?)",
        ),
    ],
)
def test_the_new_rules_are_checked_as_the_others(
    table: dict[str, object], code: ErrorCode, message: str | None
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        parse_gates(gate_text(**table))
    assert caught.value.code is code
    if message is not None:
        assert str(caught.value) == message


# --------------------------------------------------------------------------- CMS


@pytest.mark.parametrize(("agree", "passed"), [(60, True), (53, True), (52, False)])
def test_the_cms_validation_rule_by_hand(agree: int, passed: bool) -> None:
    # CMS Hospital IQR: a hospital passes chart-abstraction validation when the upper bound of
    # the 95% confidence interval of its agreement rate is at least 75%. 60 of 80 elements
    # agree (75%): Wilson's upper bound (statsmodels) is 0.8319, so it passes; 53 of 80
    # (66%) still passes (0.7565), and 52 of 80 (65%) fails (0.7455). The gates file is
    # docs/compare.md's.
    from statsmodels.stats.proportion import proportion_confint

    report = agreement_report(agree, 80)
    _, upper = proportion_confint(agree, 80, alpha=0.05, method="wilson")
    assert (upper >= 0.75) is passed
    results = evaluate(report, parse_gates(doc_example("compare.md", "cms gates.toml", "toml")))
    (result,) = results.results
    assert result.observed == pytest.approx(upper, abs=1e-12)
    assert (result.passed, result.interval) == (passed, "wilson")
    assert results.exit_status == (0 if passed else 3)
    row = results.table().splitlines()[1].split()
    assert row[3:5] == ["min_upper", ">="]


def test_the_cms_numbers() -> None:
    from statsmodels.stats.proportion import proportion_confint

    assert proportion_confint(60, 80, alpha=0.05, method="wilson") == pytest.approx(
        (0.6452, 0.8319), abs=1e-4
    )
    assert proportion_confint(53, 80, alpha=0.05, method="wilson")[1] == pytest.approx(
        0.7565, abs=1e-4
    )
    assert proportion_confint(52, 80, alpha=0.05, method="wilson")[1] == pytest.approx(
        0.7455, abs=1e-4
    )


# --------------------------------------------------------------------------- boundaries


def test_min_upper_and_max_lower_on_a_report_at_the_boundary() -> None:
    # 30 charts: 20 agree, 4 abstain, 6 wrong. Field slice: Wilson; overall: clustered.
    report = agreement_report(20, 30, abstain=4)
    field = report.by_field["chart.element"]
    agreement = field.metric("exact_agreement").interval
    abstention = field.metric("answerable_abstention").interval
    assert agreement is not None and abstention is not None
    assert agreement[1] == wilson_interval(20, 30)[1]  # type: ignore[index]
    assert abstention[0] == wilson_interval(4, 30)[0]  # type: ignore[index]
    for where in ("field:chart.element", "overall"):
        part = field if where.startswith("field") else report.overall
        if where == "overall":
            clustered = part.metric("exact_agreement").clustered_interval
            clustered_error = part.metric("answerable_abstention").clustered_interval
            assert clustered is not None and clustered_error is not None
            upper, lower = clustered[1], clustered_error[0]
        else:
            upper, lower = agreement[1], abstention[0]
        for threshold, status in ((upper, 0), (below(upper), 0), (above(upper), 3)):
            checks = gates({"slice": where, "metric": "exact_agreement", "min_upper": threshold})
            results = evaluate(report, checks)
            assert results.results[0].observed == upper
            assert results.exit_status == status, (where, threshold)
        for threshold, status in ((lower, 0), (above(lower), 0), (below(lower), 3)):
            checks = gates(
                {"slice": where, "metric": "answerable_abstention", "max_lower": threshold}
            )
            results = evaluate(report, checks)
            assert results.results[0].observed == lower
            assert results.exit_status == status, (where, threshold)
            kind = "wilson" if where.startswith("field") else "clustered"
            assert results.results[0].interval == kind


def test_a_warning_min_upper_gate_does_not_fail_the_run() -> None:
    report = agreement_report(10, 40)
    results = evaluate(
        report,
        gates(
            {
                "slice": "field:chart.element",
                "metric": "exact_agreement",
                "min_upper": 0.9,
                "level": "warning",
            }
        ),
    )
    assert not results.results[0].passed and results.exit_status == 0


def test_the_exact_interval_is_read_on_request() -> None:
    report = agreement_report(60, 80)
    exact = clopper_pearson(60, 80, Z95)
    assert exact is not None
    checks = gates(
        {"slice": "field:chart.element", "metric": "exact_agreement", "min_upper": exact[1]}
    )
    (result,) = evaluate(report, checks, interval="exact").results
    assert (result.observed, result.interval, result.passed) == (exact[1], "clopper-pearson", True)
    checks = gates(
        {
            "slice": "field:chart.element",
            "metric": "exact_agreement",
            "min_upper": above(exact[1]),
        }
    )
    assert evaluate(report, checks, interval="exact").exit_status == 3


def test_min_upper_on_a_comparison_reads_the_candidate() -> None:
    document = compare(categorical_rows(set(range(7)), set(range(9)), size=20))
    for where, pooled in (("overall", True), ("field:hx.smoking", False)):
        part = document.overall if pooled else document.by_field["hx.smoking"]
        candidate = part.paired["exact_agreement"].candidate
        interval = candidate.clustered_interval if pooled else candidate.interval
        assert interval is not None
        upper = interval[1]
        for threshold, status in ((upper, 0), (above(upper), 3)):
            results = evaluate(
                document,
                gates({"slice": where, "metric": "exact_agreement", "min_upper": threshold}),
            )
            assert results.results[0].observed == upper
            assert results.results[0].interval == ("clustered" if pooled else "wilson")
            assert results.exit_status == status
        error = part.paired["answerable_abstention"].candidate
        error_interval = error.clustered_interval if pooled else error.interval
        if error_interval is not None:
            results = evaluate(
                document,
                gates(
                    {
                        "slice": where,
                        "metric": "answerable_abstention",
                        "max_lower": error_interval[0],
                    }
                ),
            )
            assert results.results[0].observed == error_interval[0]
            assert results.exit_status == 0


# --------------------------------------------------------------------------- shared reports


def brute_inner(
    successes: tuple[int, int], trials: tuple[int, int], bound: object
) -> tuple[float, float]:
    """The largest lower and smallest upper bound over every pair, by enumeration."""
    lowers, uppers = [], []
    for k, n in itertools.product(range(successes[0], successes[1] + 1), range(1, trials[1] + 1)):
        if n >= trials[0] and k <= n:
            interval = bound(k, n)  # type: ignore[operator]
            lowers.append(interval[0])
            uppers.append(interval[1])
    return max(lowers), min(uppers)


RANGES = st.tuples(st.integers(0, 12), st.integers(0, 8), st.integers(0, 12), st.integers(0, 8))


@settings(max_examples=examples(150), deadline=None)
@given(RANGES)
def test_innermost_wilson_is_the_extreme_over_every_pair(ranges: tuple[int, ...]) -> None:
    k_lo, k_width, n_lo, n_width = ranges
    successes, trials = (k_lo, k_lo + k_width), (n_lo, n_lo + n_width)
    if trials[1] == 0 or successes[0] > trials[1]:
        return
    found = innermost_wilson(successes, trials)
    assert found == brute_inner(successes, trials, wilson_interval)


@settings(max_examples=examples(25), deadline=None)
@given(RANGES)
def test_innermost_clopper_pearson_is_the_extreme_over_every_pair(ranges: tuple[int, ...]) -> None:
    k_lo, k_width, n_lo, n_width = ranges
    successes, trials = (k_lo, k_lo + k_width), (n_lo, n_lo + n_width)
    if trials[1] == 0 or successes[0] > trials[1]:
        return
    found = innermost_clopper_pearson(successes, trials, Z95)
    assert found == brute_inner(successes, trials, lambda k, n: clopper_pearson(k, n, Z95))


def test_innermost_bounds_with_open_ranges() -> None:
    # No upper end of the trials: the smallest upper bound tends to 0; no upper end of either:
    # the largest lower bound tends to 1 (k = n, n without end).
    def wilson(k: int, n: int) -> tuple[float, float]:
        interval = wilson_interval(k, n)
        assert interval is not None
        return interval

    assert innermost_wilson((3, 5), (10, None)) == (wilson(5, 10)[0], 0.0)
    assert innermost_wilson((3, None), (10, None)) == (1.0, 0.0)
    assert innermost_wilson((3, None), (2, 7)) == (wilson(7, 7)[0], wilson(3, 7)[1])
    assert innermost_wilson((0, 0), (0, 0)) is None
    assert innermost_clopper_pearson((0, 0), (0, 0), Z95) is None


def _suppressed(shared: SharedReport, error: bool) -> tuple[str, str, tuple[object, object]]:
    from chartscore.documents.tally import ERROR_METRICS

    for field_id, part in sorted(shared.by_field.items()):
        for metric, result in sorted(part.metrics.items()):
            ranges = result.ranges()
            if (
                result.interval is None
                and ranges is not None
                and (metric in ERROR_METRICS) is error
            ):
                (k_lo, k_hi), (_, n_hi) = ranges
                if k_hi is not None and n_hi and k_lo < k_hi:  # bounded, not one pair
                    return field_id, metric, ranges
    raise AssertionError("no suppressed rate with ranges")


@pytest.mark.parametrize("error", [False, True])
def test_a_shared_reports_suppressed_rate_is_read_through_its_inner_bound(error: bool) -> None:
    from shared_data import full_and_shared

    report, shared = full_and_shared()
    loaded = load_document(shared.to_json())
    assert isinstance(loaded, SharedReport)
    field_id, metric, (successes, trials) = _suppressed(loaded, error)
    inner = innermost_wilson(successes, trials)  # type: ignore[arg-type]
    widest = widest_wilson(successes, trials)  # type: ignore[arg-type]
    assert inner is not None and widest is not None
    figure = inner[0] if error else inner[1]
    rule = "max_lower" if error else "min_upper"
    # The true counts' own bound is never on the passing side of the figure: a gate that
    # passes on the figure passes on the truth, whichever count pair the ranges hide.
    truth = report.by_field[field_id].metric(metric).interval
    assert truth is not None
    assert (truth[0] <= figure) if error else (truth[1] >= figure)
    # The widest interval's bound on that side would pass where no count pair is shown to.
    assert (widest[0] < figure) if error else (widest[1] > figure)
    fail = below(figure) if error else above(figure)
    results = evaluate(
        loaded,
        gates(
            {"slice": f"field:{field_id}", "metric": metric, rule: figure},
            {"slice": f"field:{field_id}", "metric": metric, rule: fail},
        ),
    )
    assert [r.observed for r in results.results] == [figure, figure]
    assert [r.passed for r in results.results] == [True, False]
    assert [r.interval for r in results.results] == ["wilson bound"] * 2
    table = results.table()
    assert "min_upper and max_lower read such a rate's smallest upper (largest" in table


def test_a_shared_reports_shown_rate_reads_wilson(tmp_path: Path) -> None:
    from chartscore.cli import main
    from shared_data import full_and_shared

    _, shared = full_and_shared()
    field_id, metric, interval = next(
        (field_id, metric, result.interval)
        for field_id, part in sorted(shared.by_field.items())
        for metric, result in sorted(part.metrics.items())
        if result.interval is not None and metric == "exact_agreement"
    )
    document = tmp_path / "shared.json"
    document.write_text(shared.to_json(), encoding="utf-8")
    gates_file = tmp_path / "gates.toml"
    for threshold, status in ((interval[1], 0), (above(interval[1]), 3)):
        gates_file.write_text(
            gate_text(slice=f"field:{field_id}", metric=metric, min_upper=threshold),
            encoding="utf-8",
        )
        out, err = io.StringIO(), io.StringIO()
        code = main(["gate", str(document), "--gates", str(gates_file)], stdout=out, stderr=err)
        assert (code, err.getvalue()) == (status, "")
        assert "min_upper" in out.getvalue() and " wilson " in out.getvalue()
