"""The validation figures in a shared report: the count rule, the (2, 85%) dominance rule,
the AUROC rule and the risk-coverage steps (docs/disclosure.md, "Validation figures")."""

from __future__ import annotations

import io
import itertools
import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from chartscore import EvidenceChain, GoldField, Prediction, SourceLocation, share
from chartscore.cli import main
from chartscore.disclosure import audit
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.shared_figures import (
    COUNT_RULE,
    COUNT_SUPPRESSED,
    DOMINANCE,
    FIGURE_PUBLISHED,
    Contributions,
    FieldFigures,
    shared_magnitude,
    shared_steps,
    shared_uncertainty,
)
from chartscore.stats.binomial import Z95

DIGEST = "sha256:" + "ab" * 32
FIELD = "lab.value"


def _chain(uncertainty: object) -> EvidenceChain:
    return EvidenceChain(
        field_id=FIELD,
        source_locations=[SourceLocation(DIGEST, 0, 5)],
        normalized_fact_digest=DIGEST,
        transformation_kind="model",
        transformation_digest=DIGEST,
        uncertainty=uncertainty,  # type: ignore[arg-type]
        reviewer_state="pending",
    )


def _records(
    errors: list[Decimal], uncertainty: list[Decimal | None] | None = None
) -> tuple[list[GoldField], list[Prediction]]:
    # One number field; case i has gold 100 + i and answer gold + errors[i].
    gold, predictions = [], []
    for i, error in enumerate(errors):
        value = Decimal(100 + i)
        gold.append(GoldField(f"c{i:03d}", FIELD, "number", value))
        u = None if uncertainty is None else uncertainty[i]
        chain = None if u is None else _chain(u)
        predictions.append(Prediction(f"c{i:03d}", FIELD, value + error, DIGEST, chain))
    return gold, predictions


SCHEMA = {"fields": {FIELD: {"type": "number"}}}


# --- the dominance rule, by hand ---------------------------------------------------------------


def test_one_case_dominating_is_withheld_and_an_even_spread_is_not() -> None:
    # 1 large error and 19 small ones: the largest two are 50 + 1 of 69, 74% -> allowed;
    # 1 huge error: 500 + 1 of 519, 96.5% > 85% -> withheld.
    spread = Contributions.of([(Fraction(50), 1), (Fraction(1), 19)])
    assert spread.largest == (50, 1) and spread.total == 69
    assert not spread.dominated()
    huge = Contributions.of([(Fraction(500), 1), (Fraction(1), 19)])
    assert huge.dominated()
    # Two cases tied at the top count twice; exactly 85% is allowed, just above it is not.
    assert Contributions.of([(Fraction(5), 2), (Fraction(1), 3)]).largest == (5, 5)
    assert not Contributions.of(
        [(Fraction(50), 1), (Fraction(35), 1), (Fraction(15), 1)]
    ).dominated()
    assert Contributions.of([(Fraction(50), 1), (Fraction(36), 1), (Fraction(14), 1)]).dominated()
    # A zero total is withheld (publishing it would say every case has 0), and so is
    # a magnitude held by two cases alone.
    assert Contributions.of([(Fraction(0), 30)]).dominated()
    assert Contributions.of([(Fraction(3), 2), (Fraction(0), 20)]).dominated()
    assert repr(huge) == "Contributions(<hidden>)"
    assert "500" not in repr(FieldFigures(absolute=huge))


def _raw_magnitude() -> dict[str, Any]:
    return {
        "unit": "field",
        "pairs": 20,
        "mean_absolute_error": 2.0,
        "mean_signed_error": {"estimate": 1.0, "interval": [0.0, 2.0]},
        "limits_of_agreement": [-3.0, 5.0],
        "chance": {"gold_rows": 20, "mean_absolute_deviation": 4.0},
    }


def _counts(pairs: int | None, gold: int | None) -> dict[str, int | None]:
    return {"error_magnitude.pairs": pairs, "error_magnitude.gold_rows": gold}


EVEN = Contributions.of([(Fraction(2), 20)])
ONE = Contributions.of([(Fraction(200), 1), (Fraction(1), 19)])  # 201 of 219: 92%


def test_the_count_rule_and_the_dominance_rule_choose_what_a_magnitude_shows() -> None:
    figures = FieldFigures(absolute=EVEN, squares=EVEN, deviation=EVEN)
    shown = shared_magnitude(_raw_magnitude(), figures, _counts(20, 20), 11)
    assert shown.withheld == {}
    assert (shown.mean_absolute_error, shown.limits_of_agreement) == (2.0, (-3.0, 5.0))
    # The count rule: a suppressed count, or fewer than min_cell pairs, withholds its figures.
    hidden = shared_magnitude(_raw_magnitude(), figures, _counts(None, 20), 11)
    assert hidden.withheld == {
        "mean_absolute_error": COUNT_SUPPRESSED,
        "limits_of_agreement": COUNT_SUPPRESSED,
    }
    assert hidden.mean_absolute_error is hidden.bias is hidden.limits_of_agreement is None
    assert hidden.chance_level == 4.0
    assert shared_magnitude(_raw_magnitude(), figures, _counts(20, 20), 21).withheld == {
        "mean_absolute_error": COUNT_SUPPRESSED,
        "limits_of_agreement": COUNT_SUPPRESSED,
        "chance": COUNT_SUPPRESSED,
    }
    # Dominated squares withhold only the limits (and the bias interval); dominated
    # absolute errors withhold the limits too (their midpoint is the bias).
    squares = shared_magnitude(_raw_magnitude(), FieldFigures(EVEN, ONE, EVEN), _counts(20, 20), 11)
    assert squares.withheld == {"limits_of_agreement": DOMINANCE}
    assert squares.bias == 1.0 and squares.bias_interval is None
    absolute = shared_magnitude(_raw_magnitude(), FieldFigures(ONE, EVEN, ONE), _counts(20, 20), 11)
    assert set(absolute.withheld.values()) == {DOMINANCE} and len(absolute.withheld) == 3
    # No inside contributions: every figure is withheld.
    assert set(shared_magnitude(_raw_magnitude(), None, _counts(20, 20), 11).withheld) == {
        "mean_absolute_error",
        "limits_of_agreement",
        "chance",
    }


def test_risk_coverage_steps_keep_every_difference_at_zero_or_min_cell() -> None:
    # (agreed, rows) from the most certain tenth to all rows.
    steps = [(11, 11), (15, 17), (22, 22), (22, 33), (33, 44)]
    steps += [(40, 55), (44, 66), (55, 77), (60, 88), (66, 99)]
    kept = shared_steps(steps, 11)
    # 100% is kept; 90% (60, 88): 28 disagree vs 33 at 100% -> a difference of 5: dropped;
    # 80% (55, 77): 22 disagree, differences (11, 11) from 100%: kept; 70% (44, 66): kept;
    # 60% (40, 55): 4 agreeing less than 70%: dropped; 50% (33, 44): kept; 40% (22, 33):
    # kept; 30% (22, 22): disagreeing 0 and 11 less than 40%: kept; 20% (15, 17): dropped;
    # 10% (11, 11): 11 less agreeing than 30%, 0 disagreeing: kept.
    assert [step is not None for step in kept] == [
        True, False, True, True, True, False, True, True, False, True,
    ]  # fmt: skip
    kept_steps = [step for step in kept if step is not None]
    for first, second in itertools.pairwise(kept_steps):
        for difference in (second[0] - first[0], (second[1] - second[0]) - (first[1] - first[0])):
            assert difference == 0 or difference >= 11


def _raw_uncertainty(agreed: int, rows: int) -> dict[str, Any]:
    steps = [{"success_count": agreed, "total_count": rows, "interval": None}] * 10
    return {
        "agreed": agreed,
        "rows": rows,
        "without_uncertainty": 0,
        "auroc": 0.75,
        "auroc_interval": [0.5, 1.0],
        "auroc_standard_error": 0.1,
        "brier_score": 0.2,
        "risk_coverage": steps,
    }


def test_the_auroc_needs_min_cell_cases_in_both_classes() -> None:
    figures = FieldFigures(brier=EVEN)
    counts = {
        "declared_uncertainty.agreed": 15,
        "declared_uncertainty.rows": 26,
        "declared_uncertainty.without_uncertainty": 0,
    }
    shown = shared_uncertainty(_raw_uncertainty(15, 26), figures, counts, 11, Z95)
    assert shown.withheld == {} and shown.auroc == 0.75  # 15 agree, 11 do not
    assert shown.auroc_standard_error == 0.1  # published beside the AUROC
    counts["declared_uncertainty.rows"] = 25  # 10 disagreeing rows
    few = shared_uncertainty(_raw_uncertainty(15, 25), figures, counts, 11, Z95)
    # 10 disagreeing rows at every step: no step but the last (all rows) may show.
    assert few.withheld == {"auroc": COUNT_SUPPRESSED, "risk_coverage": COUNT_RULE}
    assert few.auroc is None and few.auroc_standard_error is None
    assert few.risk_coverage[:9] == (None,) * 9
    assert few.brier_score == 0.2  # the Brier score needs only min_cell rows
    counts["declared_uncertainty.agreed"] = None
    hidden = shared_uncertainty(_raw_uncertainty(15, 25), figures, counts, 11, Z95)
    assert hidden.withheld == dict.fromkeys(
        ("auroc", "brier_score", "risk_coverage"), COUNT_SUPPRESSED
    )
    assert hidden.risk_coverage == (None,) * 10
    assert COUNT_RULE not in hidden.withheld.values()


def test_contributions_count_their_contributors_and_find_their_common_step() -> None:
    # 3 cases of 1/2 and 2 of 3/4 contribute (5 cases); zeros do not. Common step: 1/4.
    found = Contributions.of([(Fraction(0), 5), (Fraction(1, 2), 3), (Fraction(3, 4), 2)])
    assert (found.contributors, found.unit) == (5, Fraction(1, 4))
    assert found.total == Fraction(3)
    days = Contributions.of([(Fraction(6), 1), (Fraction(4), 2), (Fraction(0), 9)])
    assert (days.contributors, days.unit) == (3, Fraction(2))
    assert Contributions.of([(Fraction(0), 4)]).contributors == 0


def test_the_threshold_rule_needs_min_cell_contributors() -> None:
    # Ten equal contributions pass the (2, 85%) rule (20%) but are fewer than 11 cases.
    ten = Contributions.of([(Fraction(1), 10), (Fraction(0), 20)])
    assert not ten.dominated() and ten.sensitive(11) and not ten.sensitive(10)
    eleven = Contributions.of([(Fraction(1), 11), (Fraction(0), 20)])
    assert not eleven.sensitive(11)


# --- end to end: share, audit, edits ----------------------------------------------------------


def _even(n: int = 30) -> list[Decimal]:
    return [Decimal(i % 3 - 1) * Decimal("0.5") for i in range(n)]


def _document(errors: list[Decimal], uncertainty: list[Decimal | None] | None = None) -> Any:
    gold, predictions = _records(errors, uncertainty)
    shared = share(gold, predictions, schema=SCHEMA)
    assert audit(shared.to_json()).passed
    return json.loads(shared.to_json())


def test_an_even_spread_of_errors_is_published_and_one_dominating_error_is_not() -> None:
    even = _document(_even())["by_field"][FIELD]["error_magnitude"]
    # 20 of 30 errors are +-0.5: MAE 10 / 30, bias 0, both over 30 pairs.
    assert even["pairs"] == 30 and even["withheld"] == {}
    assert even["mean_absolute_error"] == pytest.approx(1 / 3)
    assert even["mean_signed_error"]["estimate"] == pytest.approx(0.0, abs=1e-12)
    assert even["limits_of_agreement"] is not None
    assert even["chance"]["gold_rows"] == 30 and even["chance"]["mean_absolute_deviation"] == 7.5
    # One answer 987654.25 off and two of 0.5: the largest two hold nearly all of it.
    errors = [Decimal(0)] * 27 + [Decimal("987654.25"), Decimal("0.5"), Decimal("0.5")]
    dominated = _document(errors)["by_field"][FIELD]["error_magnitude"]
    assert dominated["pairs"] == 30
    assert dominated["withheld"] == {
        "mean_absolute_error": DOMINANCE,
        "limits_of_agreement": DOMINANCE,
    }
    assert dominated["mean_absolute_error"] is None and dominated["limits_of_agreement"] is None
    assert dominated["chance"]["mean_absolute_deviation"] == 7.5  # gold spreads evenly


def test_a_small_denominator_withholds_the_figures_and_is_suppressed() -> None:
    document = _document(_even(8))
    magnitude = document["by_field"][FIELD]["error_magnitude"]
    assert magnitude["pairs"] is None and magnitude["chance"]["gold_rows"] is None
    assert magnitude["withheld"] == dict.fromkeys(
        ("mean_absolute_error", "limits_of_agreement", "chance"), COUNT_SUPPRESSED
    )
    assert "pairs_range" in magnitude  # a suppressed count carries its proven range


def _auroc_records() -> tuple[list[GoldField], list[Prediction]]:
    # 24 cases: 12 right answers declaring 0.1, 12 wrong ones declaring 0.9 (AUROC 1).
    errors = [Decimal(0)] * 12 + [Decimal(i + 1) for i in range(12)]
    uncertainty: list[Decimal | None] = [Decimal("0.1")] * 12 + [Decimal("0.9")] * 12
    return _records(errors, uncertainty)


def test_the_auroc_is_published_with_both_classes_of_min_cell_cases() -> None:
    gold, predictions = _auroc_records()
    part = json.loads(share(gold, predictions, schema=SCHEMA).to_json())["by_field"][FIELD]
    block = part["declared_uncertainty"]
    assert (block["agreed"], block["rows"], block["without_uncertainty"]) == (12, 24, 0)
    assert block["auroc"] == 1.0 and block["withheld"].get("auroc") is None
    # One more wrong answer: 11 agree and 13 disagree, both at least min_cell.
    predictions[11] = Prediction("c011", FIELD, Decimal(111) + 5, DIGEST, _chain(Decimal("0.1")))
    shared = share(gold, predictions, schema=SCHEMA)
    assert audit(shared.to_json()).passed
    block = json.loads(shared.to_json())["by_field"][FIELD]["declared_uncertainty"]
    assert block["auroc"] is not None  # 11 agree, 13 disagree: both reach 11
    predictions[10] = Prediction("c010", FIELD, Decimal(110) + 5, DIGEST, _chain(Decimal("0.1")))
    block = json.loads(share(gold, predictions, schema=SCHEMA).to_json())["by_field"][FIELD]
    assert block["declared_uncertainty"]["auroc"] is None  # 10 agree: withheld


def _audit_statuses(document: Any) -> set[str]:
    result = audit(canonical_json(document))
    return {row.status for row in result.failures}


def test_a_hand_edited_figure_is_flagged_by_the_audit() -> None:
    document = _document(_even())
    magnitude = document["by_field"][FIELD]["error_magnitude"]
    # Limits whose width does not match the bias interval's times sqrt(pairs): inconsistent.
    low, high = magnitude["limits_of_agreement"]
    magnitude["limits_of_agreement"] = [low * 2, high * 2]
    assert "inconsistent" in _audit_statuses(document)
    # A bias larger than the mean absolute error: inconsistent.
    document = _document(_even())
    document["by_field"][FIELD]["error_magnitude"]["mean_signed_error"]["estimate"] = 0.5
    assert "inconsistent" in _audit_statuses(document)
    # A mean absolute error beyond what the limits' spread allows (Cauchy-Schwarz).
    document = _document(_even())
    document["by_field"][FIELD]["error_magnitude"]["mean_absolute_error"] = 100.0
    assert "inconsistent" in _audit_statuses(document)
    # A figure beside a small denominator: published against the count rule.
    document = _document(_even(8))
    magnitude = document["by_field"][FIELD]["error_magnitude"]
    magnitude["withheld"] = {}
    magnitude["mean_absolute_error"], magnitude["mean_signed_error"]["estimate"] = 0.4, 0.0
    assert FIGURE_PUBLISHED in _audit_statuses(document)
    # A denominator the model cannot reach: more pairs than answerable rows.
    document = _document(_even())
    document["by_field"][FIELD]["error_magnitude"]["pairs"] = 31
    document["by_field"][FIELD]["alpha"]["pairs"] = 31  # interval alpha's: the same number
    assert "inconsistent" in _audit_statuses(document)
    # An AUROC that its counts cannot give.
    gold, predictions = _auroc_records()
    document = json.loads(share(gold, predictions, schema=SCHEMA).to_json())
    document["by_field"][FIELD]["declared_uncertainty"]["auroc"] = 0.9
    document["by_field"][FIELD]["declared_uncertainty"]["auroc_interval"] = [0.8, 1.0]
    assert "inconsistent" in _audit_statuses(document)


def test_no_per_case_contribution_reaches_the_output_stdout_or_stderr(tmp_path: Any) -> None:
    # The dominating error 987654.25 (its square, and gold's deviation) must appear nowhere.
    errors = [Decimal(0)] * 27 + [Decimal("987654.25"), Decimal("0.5"), Decimal("0.5")]
    gold, predictions = _records(errors)
    needles = ["987654.25", "975461057.5", "987654", "97546"]
    gold_path, pred_path = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold_path.write_text(
        "".join(
            json.dumps(
                {
                    "case_id": g.case_id,
                    "field_id": g.field_id,
                    "field_type": "number",
                    "value": int(g.value),
                }  # type: ignore[arg-type]
            )
            + "\n"
            for g in gold
        ),
        encoding="utf-8",
    )
    pred_path.write_text(
        "".join(
            json.dumps({"case_id": p.case_id, "field_id": p.field_id, "value": float(p.value)})  # type: ignore[arg-type]
            + "\n"
            for p in predictions
        ),
        encoding="utf-8",
    )
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    out_path = tmp_path / "shared.json"
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["share", "--gold", str(gold_path), "--predictions", str(pred_path)]
    argv += ["--schema", str(schema), "--out", str(out_path)]
    assert main(argv, stdout=stdout, stderr=stderr) == 0
    text = out_path.read_text(encoding="utf-8")
    assert json.loads(text)["by_field"][FIELD]["error_magnitude"]["mean_absolute_error"] is None
    for output in (text, stdout.getvalue(), stderr.getvalue()):
        for needle in needles:
            assert needle not in output


# --- properties -------------------------------------------------------------------------------

cohorts = st.lists(
    st.tuples(
        st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(-1), Decimal(3), Decimal(40)]),
        st.sampled_from([None, Decimal("0.1"), Decimal("0.5"), Decimal("0.9")]),
    ),
    min_size=12,
    max_size=40,
)


@settings(max_examples=8)
@given(cohorts)
def test_shared_figures_obey_their_rules_judged_from_the_raw_rows(
    rows: list[tuple[Decimal, Decimal | None]],
) -> None:
    errors = [error for error, _ in rows]
    gold, predictions = _records(errors, [u for _, u in rows])
    shared = share(gold, predictions, schema=SCHEMA)  # refuses a report that fails its audit
    result = audit(shared.to_json())
    assert result.passed
    part = json.loads(shared.to_json())["by_field"][FIELD]
    magnitude = part["error_magnitude"]
    absolute = [abs(Fraction(e)) for e in errors]
    if magnitude["mean_absolute_error"] is not None:
        # Published: min_cell pairs, and the two largest |d| at most 85% of a positive total.
        assert magnitude["pairs"] == len(rows) >= 11
        top = sorted(absolute, reverse=True)[:2]
        assert sum(absolute) > 0 and sum(top) <= Fraction(85, 100) * sum(absolute)
        assert sum(1 for a in absolute if a) >= 11  # the threshold rule
        assert magnitude["mean_absolute_error"] == pytest.approx(float(sum(absolute) / len(rows)))
    block = part["declared_uncertainty"]
    agreed = sum(1 for e, u in rows if u is not None and e == 0)
    disagreed = sum(1 for e, u in rows if u is not None and e != 0)
    if block["auroc"] is not None:
        assert agreed >= 11 and disagreed >= 11
        assert (block["agreed"], block["rows"]) == (agreed, agreed + disagreed)
    for value in (block["agreed"], block["rows"], block["without_uncertainty"]):
        assert value is None or value == 0 or value >= 11


# --- magnitudes that cannot be worked back (docs/disclosure.md) -------------------------------

DATE_FIELD = "dx.onset"
DATE_SCHEMA = {"fields": {DATE_FIELD: {"type": "date"}}}


def _date_records(errors: list[int]) -> tuple[list[GoldField], list[Prediction]]:
    # One date field; case i has gold 2020-01-01 + i days and answer gold + errors[i] days.
    import datetime

    start = datetime.date(2020, 1, 1)
    gold, predictions = [], []
    for i, error in enumerate(errors):
        day = start + datetime.timedelta(days=i)
        answer = day + datetime.timedelta(days=error)
        gold.append(GoldField(f"c{i:03d}", DATE_FIELD, "date", day.isoformat()))
        predictions.append(Prediction(f"c{i:03d}", DATE_FIELD, answer.isoformat(), DIGEST))
    return gold, predictions


def _date_magnitude(errors: list[int]) -> dict[str, Any]:
    gold, predictions = _date_records(errors)
    shared = share(gold, predictions, schema=DATE_SCHEMA)
    assert audit(shared.to_json()).passed
    return dict(json.loads(shared.to_json())["by_field"][DATE_FIELD]["error_magnitude"])


def test_the_reviews_three_wrong_dates_are_no_longer_published() -> None:
    # 40 cases, 3 wrong dates {+2, +3, +3}: the two largest are 6 of 8 days (75%), so the
    # dominance rule alone showed them; the sums then allowed only those three errors.
    magnitude = _date_magnitude([0] * 37 + [2, 3, 3])
    assert magnitude["mean_absolute_error"] is None
    assert magnitude["withheld"]["mean_absolute_error"] == DOMINANCE
    # Eleven wrong dates, evenly spread: shown, and their sum (22 days) bounds them above 11.
    shown = _date_magnitude([0] * 29 + [2, -2] * 5 + [2])
    assert shown["mean_absolute_error"] == pytest.approx(22 / 40)


def test_the_audit_refuses_a_magnitude_whose_sum_leaves_too_few_wrong_dates() -> None:
    gold, predictions = _date_records([0] * 29 + [2, -2] * 5 + [2])
    document = json.loads(share(gold, predictions, schema=DATE_SCHEMA).to_json())
    assert not _audit_statuses(document)
    # Hand-edited: 40 pairs, |d| summing to 8 days, so at most 8 wrong dates (1..10).
    magnitude = document["by_field"][DATE_FIELD]["error_magnitude"]
    magnitude["mean_absolute_error"] = 8 / 40
    magnitude["mean_signed_error"]["estimate"] = 8 / 40
    for key in ("interval",):
        magnitude["mean_signed_error"][key] = None
    magnitude["limits_of_agreement"] = None
    magnitude["withheld"] = {"limits_of_agreement": DOMINANCE}
    document["by_field"][DATE_FIELD].pop("alpha", None)  # interval alpha goes with the limits
    rows = {(row.name, row.status) for row in audit(canonical_json(document)).failures}
    # The threshold rule, read from the figures; the model (at least 11 nonzero errors, at
    # most 8) has no solution either.
    assert ("error_magnitude.mean_absolute_error", FIGURE_PUBLISHED) in rows
    assert rows <= {
        ("error_magnitude.mean_absolute_error", FIGURE_PUBLISHED),
        ("published_numbers", "inconsistent"),
    }


small_date_cohorts = st.tuples(
    st.integers(min_value=40, max_value=80),
    st.lists(st.sampled_from([-30, -3, -2, -1, 1, 2, 3, 7, 365]), min_size=0, max_size=30),
)


@settings(max_examples=10, deadline=None)
@given(small_date_cohorts)
def test_no_shown_date_magnitude_pins_the_wrong_dates_below_min_cell(
    cohort: tuple[int, list[int]],
) -> None:
    cases, wrong = cohort
    errors = [0] * (cases - len(wrong)) + wrong
    gold, predictions = _date_records(errors)
    shared = share(gold, predictions, schema=DATE_SCHEMA)
    assert audit(shared.to_json()).passed
    magnitude = json.loads(shared.to_json())["by_field"][DATE_FIELD]["error_magnitude"]
    if magnitude["mean_absolute_error"] is None:
        return
    # Shown: at least min_cell wrong dates, so no bound from the sums can pin them below;
    # and the outsider's own upper bound (sum |d| in days) reaches min_cell.
    assert len(wrong) >= 11
    assert magnitude["mean_absolute_error"] * magnitude["pairs"] >= 11 - 1e-6
