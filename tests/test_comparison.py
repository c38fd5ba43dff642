"""The comparison report: paired tallies in, canonical JSON out, and back.

The paired tallies here are built by an independent route: each gold row is
scored alone (a one-row gold set) for each system, which gives that row's
outcome for every metric, and the joint outcomes are counted per slice. Each
system's own tally comes from scoring the whole gold set. ``PairedSliceTally``
checks that the two routes agree (the paired margins are each system's own
counts), and the comparison's per-system figures must equal each system's own
report.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, Schema, score
from chartscore.documents.comparison import (
    COMPARISON_FORMAT,
    FIELD_TYPE_NAMES,
    GOLD_ONLY_METRICS,
    PAIRED_METRICS,
    UNPAIRED_METRICS,
    Comparison,
    ComparisonSlice,
    PairedBinomial,
    PairedMetricResult,
    PairedSliceTally,
    PairedTally,
    comparison_warnings,
    missing_counts_differ,
)
from chartscore.documents.tally import CORE_METRICS, TYPE_METRICS, Binomial, SliceTally, Tally
from chartscore.metrics import FieldType
from chartscore.scoring.scorer import Scorer
from chartscore.stats.clustered import PairedClusterSums
from chartscore.stats.paired import mcnemar, newcombe_difference

from helpers import chain, digest, examples, thorough_only

SCHEMA = Schema.from_dict(
    {
        "fields": {
            "hx.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
            "vitals.weight": {"type": "number", "tolerance": "0.5"},
            "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
            "hx.symptoms": {"type": "multi"},
            "dx.flag": {"type": "boolean"},
            "dx.onset": {"type": "date", "tolerance_days": 3},
            "note.text": {"type": "text"},
            "lab.count": {"type": "number"},
        }
    }
)

# Gold values and answer pools per field: answers include gold itself, near misses,
# wrong values and values of the wrong type.
FIELDS: dict[str, tuple[str, list[object], list[object]]] = {
    "hx.smoking": ("categorical", ["never", "former", "current"], ["Never", "former ", "x", 3]),
    "vitals.weight": ("number", [70, Decimal("80.5")], [70, "70.4", 71, Decimal("80.9"), "kg"]),
    "triage.acuity": ("ordinal", ["1", "3", "5"], ["1", "2", "3", "4", "5", "9", True]),
    "hx.symptoms": ("multi", [["cough"], ["cough", "fever"]], [["Cough"], ["fever"], [], "x"]),
    "dx.flag": ("boolean", [True, False], [True, False, "yes"]),
    "dx.onset": ("date", ["2023-04-05", "2023-04"], ["2023-04-07", "2023-04", "2024", 5]),
    "note.text": ("text", ["left arm", "none"], ["Left  arm", "right arm", ""]),
    "lab.count": ("number", [0, 12], [0, "12", Decimal("12.0"), 13]),
}

Row = tuple[GoldField, Prediction | None, Prediction | None]


def prediction(field_id: str, case_id: str, choice: int, pool: list[object]) -> Prediction | None:
    """Choice 0: missing; 1: abstain; 2: gold (caller's); others: the pool, some supported."""
    if choice == 0:
        return None
    if choice == 1:
        return Prediction(case_id, field_id, None)
    value = pool[choice % len(pool)]
    fact = digest(f"{case_id}{field_id}{choice}")
    if choice % 3 == 0:
        return Prediction(case_id, field_id, value, fact, chain(field_id, fact))
    return Prediction(case_id, field_id, value)


@st.composite
def datasets(draw: st.DrawFn, max_cases: int = 12) -> list[Row]:
    """Gold rows with each system's prediction (or None for a missing one)."""
    cases = draw(st.integers(1, max_cases))
    fields = draw(st.lists(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=5, unique=True))
    rows: list[Row] = []
    for index in range(cases):
        case_id = f"case-{index}"
        for field_id in fields:
            field_type, golds, pool = FIELDS[field_id]
            gold = draw(st.one_of(st.none(), st.sampled_from(golds)))
            answers = []
            for _ in range(2):
                choice = draw(st.integers(0, 2 + len(pool)))
                if choice == 2:  # the gold value itself (or an abstention when unanswerable)
                    answers.append(Prediction(case_id, field_id, gold))
                else:
                    answers.append(prediction(field_id, case_id, choice, pool))
            rows.append((GoldField(case_id, field_id, field_type, gold), answers[0], answers[1]))
    return rows


def tally_of(rows: Iterable[Row], side: int) -> Tally:
    scorer = Scorer(SCHEMA)
    rows = list(rows)
    for gold, *_ in rows:
        scorer.add_gold(gold.case_id, gold.field_id, gold.field_type, gold.value)
    scorer.close_gold()
    for row in rows:
        answer = row[1 + side]
        if answer is not None:
            scorer.add_prediction(
                answer.case_id, answer.field_id, answer.value, answer.is_supported
            )
    return scorer.tally()


def row_outcomes(row: Row, side: int) -> dict[str, tuple[int, int]]:
    """Each metric's (success, total) on this one row, from a one-row scoring run."""
    part = tally_of([row], side).by_field[row[0].field_id]
    return {name: (b.success_count, b.total_count) for name, b in part.metrics.items()}


def paired_cells(rows: Sequence[Row], names: Iterable[str]) -> dict[str, PairedBinomial]:
    cells: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in names}
    for row in rows:
        first, second = row_outcomes(row, 0), row_outcomes(row, 1)
        for name, counts in cells.items():
            if name not in first or first[name][1] == 0:
                continue
            assert second[name][1] == 1  # the same trials for both systems
            base, cand = first[name][0], second[name][0]
            counts[(1 - base) * 2 + (1 - cand)] += 1  # both, base only, cand only, neither
    return {
        name: PairedBinomial(both=c[0], baseline_only=c[1], candidate_only=c[2], neither=c[3])
        for name, c in cells.items()
    }


def paired_clusters(rows: Sequence[Row], names: Iterable[str]) -> dict[str, PairedClusterSums]:
    """Each paired metric's per-case sums, case by case from one-row runs (independent route)."""
    names = list(names)
    per_case: dict[str, dict[str, list[int]]] = {}
    for row in rows:
        first, second = row_outcomes(row, 0), row_outcomes(row, 1)
        case = per_case.setdefault(row[0].case_id, {name: [0, 0, 0] for name in names})
        for name in names:
            if name not in first or first[name][1] == 0:
                continue
            base, cand = first[name][0], second[name][0]
            case[name][0] += 1
            case[name][1] += base * (1 - cand)
            case[name][2] += cand * (1 - base)
    return {
        name: PairedClusterSums.of(
            (m, 1, c - b, (c - b) ** 2)
            for m, b, c in (case[name] for case in per_case.values())
            if m
        )
        for name in names
    }


def paired_slice(baseline: SliceTally, candidate: SliceTally, rows: Sequence[Row]) -> Any:
    names = [name for name in baseline.metrics if name in PAIRED_METRICS]
    clusters = None if baseline.clusters is None else paired_clusters(rows, names)
    return PairedSliceTally(baseline, candidate, paired_cells(rows, names), clusters)


def build_paired_tally(rows: Sequence[Row]) -> PairedTally:
    """The paired tally by the independent one-row route (see the module docstring)."""
    base, cand = tally_of(rows, 0), tally_of(rows, 1)
    by_field = {
        field_id: paired_slice(
            base.by_field[field_id],
            cand.by_field[field_id],
            [row for row in rows if row[0].field_id == field_id],
        )
        for field_id in base.by_field
    }
    by_type = {
        name: paired_slice(
            base.by_field_type[name],
            cand.by_field_type[name],
            [row for row in rows if row[0].field_type.value == name],
        )
        for name in base.by_field_type
    }
    return PairedTally(
        overall=paired_slice(base.overall, cand.overall, rows),
        by_field=by_field,
        by_field_type=by_type,
    )


def compare(rows: Sequence[Row]) -> Comparison:
    return Comparison.from_tally(build_paired_tally(rows))


def own_report(rows: Sequence[Row], side: int) -> dict[str, Any]:
    gold = [row[0] for row in rows]
    answers = [row[1 + side] for row in rows if row[1 + side] is not None]
    result: dict[str, Any] = json.loads(score(gold, answers, schema=SCHEMA).to_json())
    return result


def slices(document: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    yield "overall", document["overall"]
    for kind in ("by_field", "by_field_type"):
        for name, part in document[kind].items():
            yield f"{kind}:{name}", part


# --------------------------------------------------------------------------- vocabulary


def test_every_metric_is_paired_unpaired_or_gold_only() -> None:
    groups = [set(PAIRED_METRICS), set(UNPAIRED_METRICS), set(GOLD_ONLY_METRICS)]
    assert set().union(*groups) == set(CORE_METRICS) | set(TYPE_METRICS)
    assert sum(len(group) for group in groups) == len(CORE_METRICS) + len(TYPE_METRICS)


def test_field_type_names_are_the_field_types() -> None:
    assert tuple(kind.value for kind in FieldType) == FIELD_TYPE_NAMES


# --------------------------------------------------------------------------- worked example


def categorical_rows(
    base_right: set[int], cand_right: set[int], size: int = 10, prefix: str = "c"
) -> list[Row]:
    rows: list[Row] = []
    for index in range(size):
        case_id = f"{prefix}{index}"
        gold = GoldField(case_id, "hx.smoking", "categorical", "former")
        base = Prediction(case_id, "hx.smoking", "former" if index in base_right else "never")
        cand = Prediction(case_id, "hx.smoking", "former" if index in cand_right else "never")
        rows.append((gold, base, cand))
    return rows


def test_worked_example_matches_hand_counts() -> None:
    # Ten answerable rows; the baseline agrees on rows 0-6, the candidate on 2-8:
    # both 2-6 (5), baseline only 0, 1 (2), candidate only 7, 8 (2), neither 9 (1).
    rows = categorical_rows(set(range(7)), set(range(2, 9)))
    document = json.loads(compare(rows).to_json())
    metric = document["by_field"]["hx.smoking"]["normalized_agreement"]
    assert metric["baseline"]["success_count"] == 7
    assert metric["candidate"]["success_count"] == 7
    assert metric["baseline"]["total_count"] == metric["candidate"]["total_count"] == 10
    assert (metric["baseline_only"], metric["candidate_only"]) == (2, 2)
    estimate, interval = newcombe_difference(5, 2, 2, 1) or (None, None)
    assert metric["difference"] == {"estimate": 0, "interval": list(interval or ())}
    assert estimate == 0.0
    # b = c = 2: exact 1; mid-p 1 - P(X = 2) / 2 with X ~ Bin(4, 1/2) = 1 - 6/32.
    assert metric["mcnemar"] == {"exact_p": 1, "mid_p": 1 - 6 / 32}
    assert "majority_baseline" not in document["by_field"]["hx.smoking"]
    assert set(document["by_field"]["hx.smoking"]["kappa"]) == {"baseline", "candidate"}


def test_worked_example_candidate_better() -> None:
    # Baseline right on rows 0-4, candidate on 0-8: both 5, candidate only 4, neither 1.
    rows = categorical_rows(set(range(5)), set(range(9)))
    metric = json.loads(compare(rows).to_json())["overall"]["exact_agreement"]
    assert (metric["baseline_only"], metric["candidate_only"]) == (0, 4)
    assert metric["difference"]["estimate"] == 0.4  # (4 - 0) / 10
    low, high = metric["difference"]["interval"]
    assert low < 0.4 < high
    # n = 4 discordant, all favouring the candidate: exact 2 / 16, mid-p 1 / 16.
    assert metric["mcnemar"] == {"exact_p": 0.125, "mid_p": 0.0625}


def test_a_slice_with_no_trials_has_null_figures() -> None:
    rows = categorical_rows(set(range(3)), set(range(5)), size=6)  # no unanswerable rows
    metric = json.loads(compare(rows).to_json())["overall"]["unanswerable_answer"]
    empty = {
        "success_count": 0,
        "total_count": 0,
        "interval": None,
        "design_effect": None,
        "clustered_interval": None,
        "case_count": 0,
    }
    assert metric == {
        "baseline": empty,
        "candidate": empty,
        "baseline_only": 0,
        "candidate_only": 0,
        "difference": {
            "estimate": None,
            "interval": None,
            "design_effect": None,
            "clustered_interval": None,
            "case_count": 0,
        },
        "mcnemar": {"exact_p": None, "mid_p": None},
        "clustered_mcnemar": {"design_effect": None, "p": None},
    }


def test_document_shape() -> None:
    rows = categorical_rows({1, 2}, {2, 3})
    document = json.loads(compare(rows).to_json())
    assert document["format"] == COMPARISON_FORMAT
    assert document["format_version"] == 3
    assert document["scorer"]["name"] == "chartscore"
    overall = document["overall"]
    assert set(overall) == {
        "field_count",
        "answerable_count",
        "unanswerable_count",
        "baseline_counts",
        "candidate_counts",
        *CORE_METRICS,
    }
    assert set(overall["baseline_counts"]) == {"missing_count", "answered_count", "abstained_count"}
    assert set(overall["evidence_support"]) == {"baseline", "candidate"}
    assert set(overall["exact_agreement"]) == {
        "baseline",
        "candidate",
        "baseline_only",
        "candidate_only",
        "difference",
        "mcnemar",
        "clustered_mcnemar",  # a pooled slice; a field slice has no clustered figures
    }
    assert "clustered_mcnemar" not in document["by_field"]["hx.smoking"]["exact_agreement"]


# --------------------------------------------------------------------------- properties

DATASET_SETTINGS = settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@DATASET_SETTINGS
@given(datasets())
def test_comparison_agrees_with_each_systems_own_report(rows: list[Row]) -> None:
    document = json.loads(compare(rows).to_json())
    reports = own_report(rows, 0), own_report(rows, 1)
    for where, part in slices(document):
        kind, _, name = where.partition(":")
        own = [r["overall"] if kind == "overall" else r[kind][name] for r in reports]
        for count in ("field_count", "answerable_count", "unanswerable_count"):
            assert part[count] == own[0][count] == own[1][count]
        for side, report in zip(("baseline", "candidate"), own, strict=True):
            for count in ("missing_count", "answered_count", "abstained_count"):
                assert part[f"{side}_counts"][count] == report[count]
            for name in (*PAIRED_METRICS, *UNPAIRED_METRICS):
                assert (name in part) == (name in report), (where, name)
                if name in part:
                    assert part[name][side] == report[name], (where, name, side)
            if "kappa" in report:
                assert part["kappa"][side] == report["kappa"]
        assert "majority_baseline" not in part


@DATASET_SETTINGS
@given(datasets())
def test_paired_figures_follow_from_the_cells(rows: list[Row]) -> None:
    tally = build_paired_tally(rows)
    document = json.loads(Comparison.from_tally(tally).to_json())
    parts = [("overall", tally.overall, document["overall"])]
    parts += [(k, v, document["by_field"][k]) for k, v in tally.by_field.items()]
    parts += [(k, v, document["by_field_type"][k]) for k, v in tally.by_field_type.items()]
    for where, part, figures in parts:
        for name, cells in part.paired.items():
            metric = figures[name]
            assert (metric["baseline_only"], metric["candidate_only"]) == (
                cells.baseline_only,
                cells.candidate_only,
            )
            difference = newcombe_difference(
                cells.both, cells.candidate_only, cells.baseline_only, cells.neither
            )
            plain = {key: metric["difference"][key] for key in ("estimate", "interval")}
            pooled = part.clusters is not None
            assert ("clustered_mcnemar" in metric) == pooled, (where, name)
            if difference is None:
                assert plain == {"estimate": None, "interval": None}
                assert metric["mcnemar"] == {"exact_p": None, "mid_p": None}
                continue
            assert plain["estimate"] == difference[0], (where, name)
            assert plain["interval"] == list(difference[1])
            exact_p, mid_p = mcnemar(cells.baseline_only, cells.candidate_only)
            assert metric["mcnemar"] == {"exact_p": exact_p, "mid_p": mid_p}
            if pooled:
                low, high = metric["difference"]["clustered_interval"]
                assert low <= difference[1][0] and difference[1][1] <= high  # never narrower
                assert metric["difference"]["design_effect"] >= 1
                assert mid_p <= metric["clustered_mcnemar"]["p"] <= 1


@DATASET_SETTINGS
@given(datasets())
def test_swapping_the_systems_mirrors_every_paired_metric(rows: list[Row]) -> None:
    forward = json.loads(compare(rows).to_json())
    backward = json.loads(compare([(g, c, b) for g, b, c in rows]).to_json())
    for (where, part), (_, other) in zip(slices(forward), slices(backward), strict=True):
        for name in PAIRED_METRICS:
            if name not in part:
                continue
            one, two = part[name], other[name]
            assert one["baseline"] == two["candidate"] and one["candidate"] == two["baseline"]
            assert one["baseline_only"] == two["candidate_only"]
            assert one["mcnemar"] == two["mcnemar"]
            if one["difference"]["estimate"] is None:
                assert two["difference"]["estimate"] is None
                continue
            assert one["difference"]["estimate"] == -two["difference"]["estimate"], where
            low, high = one["difference"]["interval"]
            assert two["difference"]["interval"] == [-high, -low]
            if "clustered_mcnemar" in one:  # pooled: the clustered figures mirror too
                assert one["clustered_mcnemar"] == two["clustered_mcnemar"], where
                assert one["difference"]["design_effect"] == two["difference"]["design_effect"]
                low, high = one["difference"]["clustered_interval"]
                assert two["difference"]["clustered_interval"] == [-high, -low]


@DATASET_SETTINGS
@given(datasets())
def test_identical_systems(rows: list[Row]) -> None:
    document = json.loads(compare([(g, b, b) for g, b, _ in rows]).to_json())
    for _, part in slices(document):
        for name in PAIRED_METRICS:
            if name not in part:
                continue
            metric = part[name]
            assert metric["baseline_only"] == metric["candidate_only"] == 0
            if metric["baseline"]["total_count"]:
                assert metric["difference"]["estimate"] == 0
                assert metric["mcnemar"] == {"exact_p": 1, "mid_p": 0.5}


@DATASET_SETTINGS
@given(datasets())
def test_round_trip_gives_the_same_bytes(rows: list[Row]) -> None:
    text = compare(rows).to_json()
    again = Comparison.from_json(text)
    assert again.to_json() == text
    assert again == Comparison.from_json(again.to_json())
    assert Comparison.from_json(text.encode("utf-8")).to_json() == text


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datasets(), st.randoms(use_true_random=False))
def test_row_order_does_not_change_the_bytes(rows: list[Row], shuffle: random.Random) -> None:
    shuffled = list(rows)
    shuffle.shuffle(shuffled)
    assert compare(shuffled).to_json() == compare(rows).to_json()


@thorough_only("comparisons in processes under several hash seeds (about 3 s)")
def test_hash_seed_does_not_change_the_bytes(tmp_path: Path) -> None:
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import test_comparison as t; "
        "rows = t.categorical_rows({0, 2, 4, 6}, {1, 2, 3, 4, 5}) + "
        "t.categorical_rows({1}, {1, 3}, size=4, prefix='d'); "
        "print(t.compare(rows).to_json())"
    )
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, str(Path(__file__).parent)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


# --------------------------------------------------------------------------- the tally checks


def simple_slice(success: int, total: int, answered: int) -> SliceTally:
    counts = {
        "field_count": total,
        "answerable_count": total,
        "unanswerable_count": 0,
        "missing_count": total - answered,
        "answered_count": answered,
        "abstained_count": 0,
    }
    metrics = {name: Binomial(0, 0) for name in CORE_METRICS}
    metrics["exact_agreement"] = Binomial(success, total)
    return SliceTally(counts=counts, metrics=metrics)


def cells_for(exact: PairedBinomial) -> dict[str, PairedBinomial]:
    paired = {name: PairedBinomial(0, 0, 0, 0) for name in CORE_METRICS if name in PAIRED_METRICS}
    paired["exact_agreement"] = exact
    return paired


def test_paired_slice_tally_accepts_consistent_parts() -> None:
    part = PairedSliceTally(
        simple_slice(3, 5, 5), simple_slice(4, 5, 5), cells_for(PairedBinomial(2, 1, 2, 0))
    )
    assert part.paired["exact_agreement"].total_count == 5


@pytest.mark.parametrize(
    ("baseline", "candidate", "paired"),
    [
        # margins disagree with the baseline's own count
        (simple_slice(3, 5, 5), simple_slice(4, 5, 5), cells_for(PairedBinomial(2, 2, 2, 0))),
        # different gold rows
        (simple_slice(3, 5, 5), simple_slice(3, 6, 6), cells_for(PairedBinomial(3, 0, 0, 2))),
        # a paired metric missing
        (
            simple_slice(3, 5, 5),
            simple_slice(3, 5, 5),
            {"exact_agreement": PairedBinomial(3, 0, 0, 2)},
        ),
    ],
)
def test_paired_slice_tally_refuses_inconsistent_parts(
    baseline: SliceTally, candidate: SliceTally, paired: dict[str, PairedBinomial]
) -> None:
    with pytest.raises(ValueError):
        PairedSliceTally(baseline, candidate, paired)


@pytest.mark.parametrize("bad", [-1, 1.0, True])
def test_paired_binomial_refuses_non_counts(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        PairedBinomial(bad, 0, 0, 0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- from_json refusals


@pytest.fixture(scope="module")
def sample_text() -> str:
    unanswerable = (
        GoldField("u1", "hx.smoking", "categorical", None),
        Prediction("u1", "hx.smoking", "never"),
        None,
    )
    rows = [*categorical_rows({0, 1, 2, 3}, {2, 3, 4}), unanswerable]
    return compare(rows).to_json()


def refused(text: str | bytes) -> ErrorCode:
    with pytest.raises(ChartscoreError) as caught:
        Comparison.from_json(text)
    error = caught.value
    assert error.__cause__ is None and error.__context__ is None
    return error.code


def mutated(text: str, change: Any) -> str:
    document = json.loads(text)
    change(document)
    return json.dumps(document)


def test_format_checks(sample_text: str) -> None:
    assert Comparison.from_json(sample_text).to_json() == sample_text  # the unmutated sample
    report_text = score(
        [GoldField("c", "a.b", "text", "x")], [Prediction("c", "a.b", "x")]
    ).to_json()
    assert refused(report_text) == ErrorCode.UNKNOWN_REPORT_FORMAT
    for change in (
        lambda d: d.update(format_version=1),
        lambda d: d.update(format_version=4),
        lambda d: d.update(format_version=True),
        lambda d: d.update(format_version="3"),
        lambda d: d.pop("format"),
        lambda d: d.pop("format_version"),
        lambda d: d.update(format="chartscore.shared_report"),
    ):
        assert refused(mutated(sample_text, change)) == ErrorCode.UNKNOWN_REPORT_FORMAT


def in_field(change: Any) -> Any:
    return lambda d: change(d["by_field"]["hx.smoking"])


BAD_CHANGES = {
    "extra top key": lambda d: d.update(extra=1),
    "missing by_field": lambda d: d.pop("by_field"),
    "scorer name": lambda d: d["scorer"].update(name="other"),
    "scorer version text": lambda d: d["scorer"].update(version="1.0 with spaces"),
    "bad field id": lambda d: d["by_field"].update({"Not A Field": d["by_field"]["hx.smoking"]}),
    "bad type name": lambda d: d["by_field_type"].update(colour=d["overall"]),
    "kappa in overall": lambda d: d["overall"].update(kappa=d["by_field"]["hx.smoking"]["kappa"]),
    "unknown metric": in_field(lambda s: s.update(made_up=s["exact_agreement"])),
    "majority baseline": in_field(lambda s: s.update(majority_baseline=s["evidence_support"])),
    "missing core metric": in_field(lambda s: s.pop("evidence_support")),
    "negative count": in_field(lambda s: s.update(field_count=-1)),
    "float count": in_field(lambda s: s.update(field_count=11.0)),
    "bool count": in_field(lambda s: s["baseline_counts"].update(missing_count=True)),
    "counts do not add up": in_field(lambda s: s.update(unanswerable_count=2)),
    "system counts": in_field(lambda s: s["candidate_counts"].update(missing_count=5)),
    "success above total": in_field(
        lambda s: s["exact_agreement"]["baseline"].update(success_count=99)
    ),
    "interval out of range": in_field(
        lambda s: s["exact_agreement"]["baseline"].update(interval=[0.1, 1.5])
    ),
    "interval reversed": in_field(
        lambda s: s["exact_agreement"]["baseline"].update(interval=[0.9, 0.1])
    ),
    "interval of three": in_field(
        lambda s: s["exact_agreement"]["baseline"].update(interval=[0.1, 0.2, 0.3])
    ),
    "interval missing with trials": in_field(
        lambda s: s["exact_agreement"]["baseline"].update(interval=None)
    ),
    "estimate inconsistent": in_field(
        lambda s: s["exact_agreement"]["difference"].update(estimate=0.25)
    ),
    "estimate outside interval": in_field(
        lambda s: s["exact_agreement"]["difference"].update(interval=[0.5, 0.6])
    ),
    "mid above exact": in_field(lambda s: s["exact_agreement"]["mcnemar"].update(exact_p=0.5)),
    "p above one": in_field(lambda s: s["exact_agreement"]["mcnemar"].update(exact_p=1.5)),
    "p missing with trials": in_field(
        lambda s: s["exact_agreement"]["mcnemar"].update(exact_p=None)
    ),
    "only counts too big": in_field(lambda s: s["exact_agreement"].update(baseline_only=9)),
    "different trials": in_field(lambda s: s["exact_agreement"]["candidate"].update(total_count=9)),
    "core total not its count": in_field(
        lambda s: [
            s["exact_agreement"][side].update(total_count=11, interval=[0, 1])
            for side in ("baseline", "candidate")
        ]
    ),
    "unpaired total not its count": in_field(
        lambda s: s["evidence_support"]["baseline"].update(total_count=3)
    ),
    "kappa one side": in_field(lambda s: s["kappa"].pop("candidate")),
    "kappa value without interval": in_field(
        lambda s: s["kappa"]["baseline"].update(interval=None)
    ),
    "string where object": in_field(lambda s: s.update(exact_agreement="high")),
    "extra paired key": in_field(lambda s: s["exact_agreement"].update(note=1)),
}


@pytest.mark.parametrize("name", sorted(BAD_CHANGES))
def test_malformed_documents_are_refused(sample_text: str, name: str) -> None:
    assert refused(mutated(sample_text, BAD_CHANGES[name])) == ErrorCode.INVALID_REPORT


def test_figures_without_trials_are_refused() -> None:
    text = compare(categorical_rows({1}, {2}, size=3)).to_json()  # no unanswerable rows
    for group, figure, value in (
        ("difference", "estimate", 0),
        ("difference", "interval", [0, 0]),
        ("mcnemar", "mid_p", 1),
    ):
        document = json.loads(text)
        document["overall"]["unanswerable_answer"][group][figure] = value
        assert refused(json.dumps(document)) == ErrorCode.INVALID_REPORT


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "null",
        "{",
        '{"format": "chartscore.comparison", "format": "chartscore.comparison"}',
        '{"format": NaN}',
        b"\xff\xfe{}",
        "[" * 100_000,
    ],
)
def test_broken_json_is_invalid_report(text: str | bytes) -> None:
    assert refused(text) == ErrorCode.INVALID_REPORT


def test_nan_inside_a_document_is_refused(sample_text: str) -> None:
    text = sample_text.replace('"mid_p":', '"mid_p":NaN,"x":', 1)
    assert refused(text) == ErrorCode.INVALID_REPORT


def test_errors_never_echo_the_document(sample_text: str) -> None:
    canary = "ZQCANARYZQ"
    for change in (
        lambda d: d.update({canary: 1}),
        lambda d: d["by_field"].update({canary: d["overall"]}),
        lambda d: d["scorer"].update(version=canary + " x"),
        lambda d: d.update(format=canary),
    ):
        with pytest.raises(ChartscoreError) as caught:
            Comparison.from_json(mutated(sample_text, change))
        assert canary not in str(caught.value)
        assert canary not in repr(caught.value)
        assert caught.value.__context__ is None


# --------------------------------------------------------------------------- the docs

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_formats_paired_example_is_true() -> None:
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    found = re.search(r"PAIRED, in a field slice:\n\n```json\n(.*?)```", text, re.S)
    assert found is not None
    expected = json.loads(found.group(1))
    # 50 trials, baseline 41, candidate 46, baseline only 2, candidate only 7.
    result = PairedMetricResult.from_counts(PairedBinomial(39, 2, 7, 2))
    assert json.loads(json.dumps(result.to_dict())) == expected


@pytest.mark.parametrize(
    "name",
    ["baseline_only", "candidate_only", "difference", "estimate", "mcnemar", "exact_p", "mid_p"],
)
def test_comparison_keys_are_defined_in_the_docs(name: str) -> None:
    metrics = (DOCS / "metrics.md").read_text(encoding="utf-8")
    formats = (DOCS / "formats.md").read_text(encoding="utf-8")
    assert f"`{name}`" in metrics or f'"{name}"' in metrics
    assert f'"{name}"' in formats


# --------------------------------------------------------------------------- missing-count warning


def counts_only(field_count: int, baseline_missing: int, candidate_missing: int) -> Any:
    def system(missing: int) -> dict[str, int]:
        return {"missing_count": missing, "answered_count": field_count - missing,
                "abstained_count": 0}  # fmt: skip

    return ComparisonSlice(
        counts={
            "field_count": field_count,
            "answerable_count": field_count,
            "unanswerable_count": 0,
        },
        baseline_counts=system(baseline_missing),
        candidate_counts=system(candidate_missing),
        paired={},
        unpaired={},
    )


# (gold rows, baseline missing, candidate missing, warns): the rule is
# 100 * |candidate - baseline| > 2 * gold rows, i.e. the missing rates differ by more than
# 2 percentage points.
MISSING_EXAMPLES = [
    (2600, 144, 664, True),  # 5.54% against 25.54%: 20 points (a skipped quarter of cases)
    (2600, 19, 144, True),  # 0.73% against 5.54%: 4.81 points
    (2600, 10, 62, False),  # 52 rows of 2600 = exactly 2 points: not more than 2
    (2600, 10, 63, True),  # 53 rows = 2.04 points
    (2600, 664, 144, True),  # the baseline skipping is as material as the candidate
    (100, 0, 2, False),  # 2 points exactly
    (100, 5, 8, True),  # 3 points
    (24, 4, 0, True),  # 16.7 points
    (1000, 0, 0, False),
]


@pytest.mark.parametrize(("rows", "baseline", "candidate", "warns"), MISSING_EXAMPLES)
def test_missing_counts_differ_by_hand(
    rows: int, baseline: int, candidate: int, warns: bool
) -> None:
    part = counts_only(rows, baseline, candidate)
    assert missing_counts_differ(part) is warns
    assert comparison_warnings(part) == (("missing_counts_differ",) if warns else ())


@DATASET_SETTINGS
@given(datasets())
def test_warnings_are_recorded_exactly_when_missing_rates_differ(rows: list[Row]) -> None:
    gold = [row[0] for row in rows]
    baseline = [row[1] for row in rows if row[1] is not None]
    candidate = [row[2] for row in rows if row[2] is not None]
    comparison = chartscore.compare(gold, baseline, candidate, schema=SCHEMA)
    gap = abs(len(baseline) - len(candidate))
    document = json.loads(comparison.to_json())
    assert ("warnings" in document) == (100 * gap > 2 * len(gold))
    if "warnings" in document:
        assert document["warnings"] == ["missing_counts_differ"]
    again = Comparison.from_json(comparison.to_json())
    assert again == comparison and again.to_json() == comparison.to_json()


def warned_text() -> str:
    rows = [(g, b, c if index % 4 else None) for index, (g, b, c) in enumerate(
        categorical_rows(set(range(6)), set(range(3, 9)), size=12))]  # fmt: skip
    text = compare(rows).to_json()
    assert json.loads(text)["warnings"] == ["missing_counts_differ"]
    return text


def test_warnings_round_trip_and_are_checked_against_the_counts() -> None:
    text = warned_text()
    assert Comparison.from_json(text).to_json() == text
    for change in (
        lambda d: d.update(warnings=[]),
        lambda d: d.update(warnings=["missing_counts_differ", "missing_counts_differ"]),
        lambda d: d.update(warnings=["something_else"]),
        lambda d: d.update(warnings="missing_counts_differ"),
        lambda d: d.update(warnings=None),
    ):
        assert refused(mutated(text, change)) == ErrorCode.INVALID_REPORT
    balanced = compare(categorical_rows({1, 2}, {2, 3})).to_json()
    claimed = mutated(balanced, lambda d: d.update(warnings=["missing_counts_differ"]))
    assert refused(claimed) == ErrorCode.INVALID_REPORT


def test_a_comparison_written_before_warnings_stays_readable() -> None:
    text = warned_text()
    older = mutated(text, lambda d: d.pop("warnings"))
    loaded = Comparison.from_json(older)
    assert loaded.warnings == ()
    assert json.loads(loaded.to_json()) == json.loads(older)


# --------------------------------------------------------------------------- ignored predictions


def test_ignored_prediction_counts_round_trip_and_are_checked() -> None:
    gold = [GoldField(f"c{i}", "hx.smoking", "categorical", "former") for i in range(4)]
    baseline = [Prediction(f"c{i}", "hx.smoking", "former") for i in range(6)]
    candidate = [Prediction(f"c{i}", "hx.smoking", "never") for i in range(9)]
    with pytest.raises(ChartscoreError) as caught:
        chartscore.compare(gold, baseline, candidate)
    assert caught.value.code == ErrorCode.UNKNOWN_PREDICTION_KEY
    comparison = chartscore.compare(gold, baseline, candidate, extra_predictions="ignore")
    document = json.loads(comparison.to_json())
    assert document["ignored_prediction_count"] == {"baseline": 2, "candidate": 5}
    # the same counts as scoring each system alone
    for side, answers in (("baseline", baseline), ("candidate", candidate)):
        alone = score(gold, answers, extra_predictions="ignore")
        assert alone.ignored_prediction_count == document["ignored_prediction_count"][side]
    text = comparison.to_json()
    assert Comparison.from_json(text).to_json() == text
    assert "ignored_prediction_count" not in json.loads(
        chartscore.compare(gold, baseline[:4], candidate[:4]).to_json()
    )
    for change in (
        lambda d: d.update(ignored_prediction_count=3),
        lambda d: d.update(ignored_prediction_count={"baseline": -1, "candidate": 0}),
        lambda d: d.update(ignored_prediction_count={"baseline": 1}),
    ):
        assert refused(mutated(text, change)) == ErrorCode.INVALID_REPORT
