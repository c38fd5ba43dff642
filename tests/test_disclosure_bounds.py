"""Provable bounds in a shared report: ranges beside suppressed numbers, rate bounds, their audit.

The rate bound is checked against brute force: every count pair the ranges allow, each
through statsmodels' Wilson interval. The published ranges are checked against the audit's
own, and hand edits (a range narrower or wider, a bound narrower or wider) must fail.
"""

from __future__ import annotations

import html
import json
from fractions import Fraction
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from chartscore import ChartscoreError, ErrorCode
from chartscore.disclosure import SharedReport, audit
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.shared_metric import rate_bound
from chartscore.render import render
from chartscore.stats.binomial import rate_range, widest_wilson
from chartscore.stats.clustered import z_for
from shared_data import full_and_shared

from helpers import examples, without_ranges

LEVELS = (0.90, 0.95, 0.99)


@st.composite
def boxes(draw: st.DrawFn) -> tuple[tuple[int, int], tuple[int, int]]:
    """Success and trial ranges that allow at least one pair with successes <= trials."""
    n_lo = draw(st.integers(0, 25))
    n_hi = draw(st.integers(max(1, n_lo), 30))
    k_lo = draw(st.integers(0, n_hi))
    k_hi = draw(st.integers(k_lo, 35))
    return (k_lo, k_hi), (n_lo, n_hi)


def pairs(success: tuple[int, int], total: tuple[int, int]) -> list[tuple[int, int]]:
    return [
        (k, n)
        for n in range(max(1, total[0]), total[1] + 1)
        for k in range(success[0], min(success[1], n) + 1)
    ]


@settings(max_examples=examples(200), deadline=None)
@given(boxes(), st.sampled_from(LEVELS))
def test_the_bound_is_the_widest_wilson_interval_over_the_box(
    box: tuple[tuple[int, int], tuple[int, int]], level: float
) -> None:
    success, total = box
    found = widest_wilson(success, total, z_for(level))
    every = [proportion_confint(k, n, alpha=1 - level, method="wilson") for k, n in pairs(*box)]
    assert found is not None and every
    assert found[0] == pytest.approx(min(low for low, _ in every), abs=1e-12)
    assert found[1] == pytest.approx(max(high for _, high in every), abs=1e-12)


@settings(max_examples=examples(100), deadline=None)
@given(boxes())
def test_the_pooled_bound_is_the_range_of_the_rate(
    box: tuple[tuple[int, int], tuple[int, int]],
) -> None:
    rates = [Fraction(k, n) for k, n in pairs(*box)]
    found = rate_range(*box)
    assert found == (float(min(rates)), float(max(rates)))


def test_unbounded_and_empty_ranges() -> None:
    # No upper end: the rate may be as low as 0 and, when successes are unbounded, as high as 1.
    assert widest_wilson((3, None), (5, None)) == (0.0, 1.0)
    low, high = widest_wilson((3, 4), (10, None))  # type: ignore[misc]
    assert low == 0.0 and high == widest_wilson((4, 4), (10, 10))[1]  # type: ignore[index]
    assert widest_wilson((0, 0), (0, 0)) is None and rate_range((0, 0), (0, 0)) is None
    with pytest.raises(ValueError):
        widest_wilson((5, 6), (0, 4))  # no pair has successes <= trials
    with pytest.raises(ValueError):
        widest_wilson((2, 1), (3, 4))


# --- the shared report -----------------------------------------------------------------------


def shared_document() -> dict[str, Any]:
    _, shared = full_and_shared()
    return json.loads(shared.to_json())  # type: ignore[no-any-return]


def test_every_suppressed_number_carries_the_audits_range() -> None:
    _, shared = full_and_shared()
    result = audit(shared.to_json())
    assert result.passed, result.table()
    rows = {(r.slice_kind, r.slice_name, r.name): (r.lo, r.hi) for r in result.rows}
    hidden = [key for key, value in shared.numbers() if value is None]
    ranges = dict(shared.ranges())
    assert hidden and set(ranges) == set(hidden)
    for key in hidden:
        assert ranges[key] == rows[key]


def test_every_metric_with_a_hidden_part_carries_the_bound_of_its_ranges() -> None:
    _, shared = full_and_shared()
    z = z_for(shared.confidence)
    bounded = 0
    for _, _, part in shared.slices():
        for metric in part.metrics.values():
            both = metric.ranges()
            hidden = metric.success_count is None or metric.total_count is None
            assert both is not None
            if not hidden:
                assert metric.rate_bound is None
                continue
            expected = rate_bound(*both, pooled=metric.pooled, z=z)
            assert metric.rate_bound == expected
            if expected is not None:
                bounded += 1
                assert expected.kind == ("rate_range" if metric.pooled else "wilson")
    assert bounded > 0


def edited(document: dict[str, Any], *path: str) -> dict[str, Any]:
    target = document
    for key in path:
        target = target[key]
    return target


def first_hidden_count(document: dict[str, Any]) -> tuple[str, str]:
    for field_id, part in sorted(document["by_field"].items()):
        for name, _value in sorted(part.items()):
            if name.endswith("_count_range"):
                return field_id, name
    raise AssertionError("no suppressed count")


@pytest.mark.parametrize(
    ("change", "status"),
    [
        (lambda lo, hi: [lo + 1, hi] if lo + 1 <= hi else [lo, hi - 1], "range_narrow"),
        (lambda lo, hi: [lo, hi + 1], "range_wide"),
        (lambda lo, hi: [lo, None], "range_wide"),
    ],
)
def test_a_hand_edited_range_fails_the_audit(change: Any, status: str) -> None:
    # The first bounded range of more than one value: a metric's part (every suppressed count
    # of this report is unbounded, its field_count being suppressed).
    document = shared_document()
    field_id, metric, part_name = next(
        (f, name, key)
        for f, part in sorted(document["by_field"].items())
        for name, value in sorted(part.items())
        if type(value) is dict
        for key, proven in sorted(value.items())
        if key.endswith("_range") and proven[1] is not None and proven[0] < proven[1]
    )
    target = document["by_field"][field_id][metric]
    low, high = target[part_name]
    target[part_name] = change(low, high)
    # The bound from the edited ranges (the reader refuses one its own ranges do not give).
    ranges = {
        part: target.get(f"{part}_range") or [target[part]] * 2
        for part in ("success_count", "total_count")
    }
    found = rate_bound(*(tuple(ranges[p]) for p in ("success_count", "total_count")), pooled=False)
    target["rate_bound"] = None if found is None else found.to_dict()
    result = audit(json.dumps(document))
    assert not result.passed
    failing = {(r.slice_name, r.name, r.status, r.lo, r.hi) for r in result.failures}
    assert (field_id, f"{metric}.{part_name}", status, low, high) in failing


def test_a_metric_range_edited_with_its_bound_fails_the_audit() -> None:
    # The reader checks a bound against its ranges; the audit checks the ranges themselves.
    document = shared_document()
    for field_id, part in sorted(document["by_field"].items()):  # noqa: B007 (used below)
        metric = next(
            (m for m in part.values() if type(m) is dict and "success_count_range" in m), None
        )
        proven = None if metric is None else metric["success_count_range"]
        if proven is not None and proven[1] is not None and proven[0] < proven[1]:
            break
    low, high = metric["success_count_range"]
    metric["success_count_range"] = [low, high - 1]
    total = metric.get("total_count_range") or [metric["total_count"]] * 2
    found = rate_bound((low, high - 1), tuple(total), pooled=False)  # type: ignore[arg-type]
    metric["rate_bound"] = None if found is None else found.to_dict()
    result = audit(json.dumps(document))
    # The narrower range, and (when it narrows the bound) the bound it gives.
    assert "range_narrow" in {r.status for r in result.failures}
    assert {r.status for r in result.failures} <= {"range_narrow", "bound_narrow"}
    assert {r.slice_name for r in result.failures} == {field_id}


@pytest.mark.parametrize(("shift", "status"), [(0.01, "bound_narrow"), (-0.01, "bound_wide")])
def test_an_edited_bound_fails_the_audit(shift: float, status: str) -> None:
    _, shared = full_and_shared()
    field_id, name, metric = next(
        (f, n, m)
        for f, part in shared.by_field.items()
        for n, m in part.metrics.items()
        if m.rate_bound is not None and 0.02 < m.rate_bound.upper < 0.98
    )
    bound = attrs.evolve(metric.rate_bound, upper=metric.rate_bound.upper - shift)  # type: ignore[arg-type]
    part = shared.by_field[field_id]
    metrics = {**part.metrics, name: attrs.evolve(metric, rate_bound=bound)}
    tampered = attrs.evolve(
        shared, by_field={**shared.by_field, field_id: attrs.evolve(part, metrics=metrics)}
    )
    result = audit(tampered)
    assert [(r.slice_name, r.name, r.status) for r in result.failures] == [
        (field_id, f"{name}.rate_bound", status)
    ]
    # In a file, the reader refuses a bound that its ranges do not give.
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(tampered.to_json())
    assert caught.value.code is ErrorCode.INVALID_REPORT


@pytest.mark.parametrize(
    "edit",
    [
        # A range beside a published number; a range backwards or malformed.
        lambda d: next(
            p.update({f"{name}_range": [0, 100]})
            for p in d["by_field"].values()
            for name in ("field_count", "answerable_count", "unanswerable_count")
            if p[name] is not None
        ),
        lambda d: edited(d, "by_field", *first_hidden_count(d)).reverse() or None,
        lambda d: edited(d, "by_field", first_hidden_count(d)[0]).update(
            {first_hidden_count(d)[1]: [1.5, 3]}
        ),
        lambda d: edited(d, "by_field", first_hidden_count(d)[0]).update(
            {first_hidden_count(d)[1]: [-1, 3]}
        ),
        # A bound without ranges, or of another kind.
        lambda d: next(
            m.update(rate_bound={"kind": "wilson", "lower": 0.1, "upper": 0.9})
            for p in d["by_field"].values()
            for m in p.values()
            if type(m) is dict and m.get("interval") is not None
        ),
        lambda d: next(
            m
            for p in d["by_field"].values()
            for m in p.values()
            if type(m) is dict and "rate_bound" in m
        )["rate_bound"].update(kind="rate_range"),
    ],
)
def test_malformed_ranges_and_bounds_are_refused(edit: Any) -> None:
    document = shared_document()
    before = json.dumps(document)
    edit(document)
    assert json.dumps(document) != before
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_a_report_without_ranges_is_still_read_and_audited() -> None:
    # Ranges are optional (publishing less leaks nothing); share always writes them all.
    document = shared_document()
    for part in [document["overall"], *document["by_field"].values()]:
        part.update({k: None for k in list(part) if k.endswith("_range")})
    stripped = without_ranges(json.loads(json.dumps(document)))
    result = audit(json.dumps(stripped))
    assert result.passed and not list(SharedReport.from_json(json.dumps(stripped)).ranges())


# --- gates and render ------------------------------------------------------------------------


def gate_file(*gates: dict[str, object]) -> str:
    lines = []
    for gate in gates:
        lines.append("[[gate]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in gate.items()]
    return "\n".join(lines) + "\n"


def bounded_field_metric() -> tuple[str, str, Any]:
    _, shared = full_and_shared()
    return next(
        (f, n, m)
        for f, part in sorted(shared.by_field.items())
        for n, m in part.metrics.items()
        if m.rate_bound is not None and 0 < m.rate_bound.upper < 1
    )


@pytest.mark.parametrize("level", LEVELS)
def test_a_gate_on_a_suppressed_field_rate_reads_its_bound(level: float) -> None:
    _, shared = full_and_shared()
    field_id, name, metric = bounded_field_metric()
    rule = "max_upper" if name in ("answerable_abstention", "unanswerable_answer") else "min_lower"
    if rule == "min_lower":
        name = next(
            n
            for n, m in shared.by_field[field_id].metrics.items()
            if m.rate_bound is not None and n not in ("answerable_abstention", "wrong_type_answer")
        )
        metric = shared.by_field[field_id].metrics[name]
    bound = widest_wilson(*metric.ranges(), z_for(level))
    assert bound is not None
    figure = bound[1] if rule == "max_upper" else bound[0]
    checks = parse_gates(
        gate_file(
            {"slice": f"field:{field_id}", "metric": name, rule: figure},
            {
                "slice": f"field:{field_id}",
                "metric": name,
                rule: figure - 1e-9 if rule == "max_upper" else min(1.0, figure + 1e-9),
            },
        )
    )
    results = evaluate(shared, checks, confidence=level)
    assert [r.passed for r in results.results] == [True, False]
    assert {r.interval for r in results.results} == {"wilson bound"}
    assert results.results[0].observed == figure
    assert "wilson bound: a suppressed rate" in results.table()


def test_a_gate_on_a_suppressed_pooled_rate_still_fails() -> None:
    # A pooled slice's bound is the rate's range, not an interval: no gate can read it.
    _, shared = full_and_shared()
    name = next(n for n, m in shared.overall.metrics.items() if m.rate_bound is not None)
    checks = parse_gates(gate_file({"slice": "overall", "metric": name, "min_lower": 0.0}))
    result = evaluate(shared, checks).results[0]
    assert result.observed is None and not result.passed and result.interval == "clustered"


def test_render_shows_the_bound_at_the_reports_level() -> None:
    _, shared = full_and_shared()
    level = f"{round(100 * shared.confidence)}%"
    texts = {fmt: render(shared, fmt) for fmt in ("table", "markdown", "html")}
    shown = 0
    for _, part in sorted(shared.by_field.items()):
        for metric in part.metrics.values():
            bound = metric.rate_bound
            if bound is None or bound.lower != 0 or bound.upper == 1:
                continue
            # One decimal, rounded up: a bound never tightens by rounding.
            tenths = -(-round(bound.upper * 10**6) // 1000)  # ceil to tenths of a percent
            expected = f"<= {tenths // 10}.{tenths % 10}% ({level} upper bound)"
            assert expected in texts["table"] and expected in texts["markdown"], expected
            assert f'<span class="bound">{html.escape(expected)}</span>' in texts["html"]
            shown += 1
    assert shown
    pooled = [m for _, _, p in shared.slices() for m in p.metrics.values() if m.pooled]
    if any(m.rate_bound is not None for m in pooled):
        assert "(provable range)" in texts["table"]


# --- what survives ---------------------------------------------------------------------------


def test_the_survival_counts_are_the_reports_own() -> None:
    _, shared = full_and_shared()
    survival = shared.disclosure.survival
    assert survival is not None and survival == shared.survival()
    for family, kinds in (("field_rates", {"field"}), ("pooled_rates", {"overall", "field_type"})):
        metrics = [m for kind, _, p in shared.slices() if kind in kinds for m in p.metrics.values()]
        shown = [m for m in metrics if None not in (m.success_count, m.total_count)]
        bounded = [m for m in metrics if m.rate_bound is not None]
        assert survival[family].to_dict() == {
            "rates": len(metrics),
            "shown": len(shown),
            "bounded": len(bounded),
        }
    # Recorded in the file, and checked when it is read: an edited count is refused.
    document = shared_document()
    assert document["disclosure"]["survival"]["field_rates"] == survival["field_rates"].to_dict()
    document["disclosure"]["survival"]["field_rates"]["shown"] += 1
    with pytest.raises(ChartscoreError) as caught:
        SharedReport.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    # The primary split is known inside only: never written, so a file read back has none.
    assert shared.primary_count is not None and shared.primary_count > 0
    assert shared.primary_count <= shared.disclosure.suppressed_count
    assert SharedReport.from_json(shared.to_json()).primary_count is None
    assert "primary" not in shared.to_json()
