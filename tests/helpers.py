"""Small shared builders for tests: digests, evidence chains, JSON Lines files."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from chartscore import EvidenceChain, GoldField, Prediction, Report, Schema, SourceLocation

# The one oracle of the built-in metric and count names in the tests, written out here rather
# than imported from chartscore.metrics, so that a catalog that loses or renames a metric fails.
COUNT_NAMES = (
    "field_count",
    "answerable_count",
    "unanswerable_count",
    "missing_count",
    "answered_count",
    "abstained_count",
)
CORE_METRIC_NAMES = (
    "exact_agreement",
    "normalized_agreement",
    "abstention_correctness",
    "answerable_abstention",
    "unanswerable_answer",
    "wrong_type_answer",
    "evidence_support",
    "evidence_provided",
)
TYPE_METRIC_NAMES = (
    "tolerance_agreement",
    "fuzzy_agreement",
    "pattern_agreement",
    "ordinal_later",
    "ordinal_earlier",
    "ordinal_within_one",
    "item_precision",
    "item_recall",
    "majority_baseline",
)
LABEL_METRIC_NAMES = ("sensitivity", "specificity", "ppv", "npv")


def digest(seed: str) -> str:
    """A valid sha256: digest derived from ``seed``."""
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def chain(
    field_id: str,
    fact: str,
    kinds: Iterable[str] = ("clinical_record",),
    reviewer_state: str = "pending",
) -> EvidenceChain:
    """An evidence chain with one span per kind."""
    return EvidenceChain(
        field_id=field_id,
        source_locations=[
            SourceLocation(digest(f"source-{i}"), 10 * i, 10 * i + 5, kind)
            for i, kind in enumerate(kinds)
        ],
        normalized_fact_digest=fact,
        transformation_kind="model",
        transformation_digest=digest("model"),
        uncertainty=Decimal("0.2"),
        reviewer_state=reviewer_state,
    )


def chain_dict(
    field_id: str, fact: str, kinds: Iterable[str] = ("clinical_record",)
) -> dict[str, object]:
    """The JSON form of :func:`chain`."""
    return {
        "field_id": field_id,
        "source_locations": [
            {
                "source_digest": digest(f"source-{i}"),
                "start_offset": 10 * i,
                "end_offset": 10 * i + 5,
                "kind": kind,
            }
            for i, kind in enumerate(kinds)
        ],
        "normalized_fact_digest": fact,
        "transformation_kind": "model",
        "transformation_digest": digest("model"),
        "uncertainty": Decimal("0.2"),
        "reviewer_state": "pending",
    }


class NumberLiteral(str):
    """A number literal written into JSON text as it is (long forms ``Decimal`` never prints)."""

    __slots__ = ()


def dumps(value: object) -> str:
    """JSON text for plain data, writing Decimals as their exact number literals."""
    if isinstance(value, NumberLiteral):
        return str(value)
    if isinstance(value, Mapping):
        items = (f"{json.dumps(key)}: {dumps(item)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    if isinstance(value, frozenset | set):
        return dumps(sorted(value))
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def write_jsonl(path: Path, rows: Iterable[Mapping[str, object]]) -> Path:
    """Write rows as JSON Lines, Decimals as exact literals."""
    path.write_text("".join(dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# --- random cohorts over all seven field types (with a schema) ---------------------------------

SCHEMA = Schema.from_dict(
    {
        "fields": {
            "c.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
            "n.lvef": {"type": "number", "tolerance": "5"},
            "d.onset": {"type": "date", "tolerance_days": 3},
            "o.acuity": {"type": "ordinal", "levels": [1, 2, 3, 4, 5]},
            "m.symptoms": {"type": "multi", "choices": ["cough", "fever", "syncope"]},
        }
    }
)
FIELDS: dict[str, tuple[str, Sequence[object], Sequence[object]]] = {
    # field id: (type, gold values, extra answers beyond the gold values)
    "t.note": ("text", ["alpha", "Beta gamma"], [" ALPHA ", "delta", 3]),
    "c.smoking": ("categorical", ["never", "former", "current"], ["Former ", "ex", True]),
    "n.lvef": ("number", [35, Decimal("55.5"), 60], ["35", "57", "60 %", 40]),
    "b.flag": ("boolean", [True, False], ["true", 1]),
    "d.onset": ("date", ["2023-04-05", "2023-04", "2022-12-31"], ["2023-04-07", "2023-02-30"]),
    "o.acuity": ("ordinal", [1, 2, 3, 4, 5], ["3", "9", 0]),
    "m.symptoms": ("multi", [["cough"], ["cough", "fever"], []], [["Fever"], "cough", ["x"]]),
}


@st.composite
def datasets(draw: st.DrawFn) -> tuple[list[GoldField], list[Prediction]]:
    cases = [f"case-{i}" for i in range(draw(st.integers(1, 12)))]
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for field_id, (field_type, values, extras) in FIELDS.items():
        for case_id in cases:
            if not draw(st.booleans()):
                continue
            value = draw(st.sampled_from([None, *values]))
            gold.append(GoldField(case_id, field_id, field_type, value))
            roll = draw(st.integers(0, 9))
            if roll == 0:
                continue  # missing
            answer = None if roll == 1 else draw(st.sampled_from([*values, *extras]))
            predictions.append(Prediction(case_id, field_id, answer))
    if not gold:
        gold.append(GoldField("case-0", "t.note", "text", "alpha"))
    return gold, predictions


_Test = TypeVar("_Test")

THOROUGH = settings.default.max_examples >= 100
"""Whether this run is the thorough profile's (``--hypothesis-profile thorough``)."""


PROFILE_DEPENDENT = pytest.mark.profile_dependent
"""A test that is not a property test but runs more (or at all) under the thorough profile.

.ci/run's second pass (thorough profile) runs only the tests that the profile changes: the
property tests (hypothesis marks them ``hypothesis``) and these. A test that runs alike under
both profiles runs once, in the first pass.
"""


def thorough_only(reason: str) -> Callable[[_Test], _Test]:
    """Skip a test outside the thorough profile (and mark it ``profile_dependent``)."""

    def mark(test: _Test) -> _Test:
        for each in thorough_only_marks(reason):
            test = each(test)
        return test

    return mark


def thorough_only_marks(reason: str) -> list[pytest.MarkDecorator]:
    """:func:`thorough_only` as marks, for one case of a parametrized test (``pytest.param``)."""
    skip = pytest.mark.skipif(
        not THOROUGH, reason=f"thorough profile only (.ci/run runs it): {reason}"
    )
    return [skip, PROFILE_DEPENDENT]


def examples(thorough: int, least: int = 2) -> int:
    """A property test's example count: as written under ``--hypothesis-profile thorough``.

    The default profile (tests/conftest.py) runs 10 in 100 of them, at least ``least`` (two,
    so that the README's test command stays well under 8 minutes on a two-core machine; a test
    whose every example starts processes asks for fewer), so the suite stays fast enough to
    run before every change; CI runs the thorough profile too, with every example.
    """
    scale = settings.default.max_examples  # 100 when thorough, 10 by default
    if scale >= 100:
        return thorough * scale // 100
    return max(min(thorough, least), thorough * scale // 100)


def with_clustered_figures(document: dict) -> dict:  # type: ignore[type-arg]
    """A hand-built shared report in the current format (4): confidence 0.95, and in its
    pooled slices each metric's clustered figures with design effect 1 (then the clustered
    interval is the Wilson interval), null where a count or the interval is hidden. Changes
    ``document``."""
    document["format_version"] = 4
    document["confidence"] = 0.95
    pooled = [document["overall"], *document["by_field_type"].values()]
    for part in pooled:
        for value in part.values():
            if type(value) is dict and "success_count" in value:
                shown = value["interval"] is not None and value["total_count"]
                value["design_effect"] = 1.0 if shown else None
                value["clustered_interval"] = value["interval"] if shown else None
    return document


def without_ranges(document: dict) -> dict:  # type: ignore[type-arg]
    """A shared report's JSON without its ranges, rate bounds and survival (changed in place).

    At any depth (a label's metrics sit two levels down); a report without them is valid.
    """

    def strip(part: dict) -> None:  # type: ignore[type-arg]
        for key in [k for k in part if k.endswith("_range") or k == "rate_bound"]:
            del part[key]
        for value in part.values():
            if type(value) is dict:
                strip(value)

    strip(document)
    del document["disclosure"]["survival"]  # counts bounds and shown rates: stale too
    return document


def pop_clustered(document: dict) -> dict[tuple[str, ...], list[float] | None]:  # type: ignore[type-arg]
    """Take every pooled metric's ``clustered_interval`` and ``case_count`` out of a report's
    or shared report's JSON (changed in place); the intervals, by (slice, ..., metric).

    A shared report's clustered interval counts the cases its numbers prove, not the
    report's ``case_count`` (docs/disclosure.md, "Clustered intervals"): compare the rest
    exactly and the intervals with :func:`assert_never_narrower`.
    """
    found: dict[tuple[str, ...], list[float] | None] = {}

    def walk(node: object, path: tuple[str, ...]) -> None:
        if type(node) is not dict:
            return
        if "clustered_interval" in node:
            found[path] = node.pop("clustered_interval")
            node.pop("case_count", None)
        for key, value in node.items():
            walk(value, (*path, key))

    for key in ("overall", "by_field_type", "by_stratum", "by_stratum_field_type"):
        walk(document.get(key), (key,))
    return found


def assert_never_narrower(
    shared: dict[tuple[str, ...], list[float] | None],
    full: dict[tuple[str, ...], list[float] | None],
) -> None:
    """Every shown shared clustered interval holds the full report's (fewer cases, wider)."""
    for key, interval in shared.items():
        if interval is None:
            continue
        inner = full[key]
        assert inner is not None, key
        assert interval[0] <= inner[0] and inner[1] <= interval[1], key


def as_shared(report: Report, min_cell: int = 11) -> Report:
    """The report ``share`` starts from: ``evidence_provided`` only where no answer has evidence.

    The rule of src/chartscore/disclosure/evidence_rule.py, restated: kept where it is 0 in
    the overall slice and at least ``min_cell`` rows were answered.
    """
    provided = report.overall.metrics.get("evidence_provided")
    if provided is None:
        return report
    if provided.success_count == 0 and report.overall.count("answered_count") >= min_cell:
        return report
    return report.without_metric("evidence_provided")
