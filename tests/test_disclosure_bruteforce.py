"""The audit's integer ranges equal brute force over every table consistent with the report.

An independent enumeration, written from the outcome-class model of docs/disclosure.md: for
one or two small fields, every table of outcome-class counts with the published number of rows
is listed; the numbers of every slice (field, field type, overall) are computed from each table
with this file's own definitions; a random set of numbers is hidden. The tables that reproduce
every published number are the ones an outsider cannot tell apart, so the smallest and largest
value of each hidden quantity over them is the exact range. The audit (integer programming)
must report exactly that range for every hidden quantity, through every path of the solver
(whole components, and the relaxation/restriction sandwich forced on small problems).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore.disclosure.ranges as ranges_module
from chartscore.disclosure import SharedReport, audit
from chartscore.documents.canonical_json import canonical_json
from chartscore.stats.binomial import wilson_interval

from helpers import CORE_METRIC_NAMES, COUNT_NAMES, examples, with_clustered_figures

CORE = CORE_METRIC_NAMES
COUNTS = COUNT_NAMES

# --- the outcome classes, enumerated from the brief's definitions -------------------------


def outcome_classes(field_type: str, tolerance: bool) -> list[dict[str, Any]]:
    """Every class a row can fall in, as a dict of attributes."""
    ordinal = field_type == "ordinal"
    majority = field_type in ("categorical", "boolean", "ordinal")
    out: list[dict[str, Any]] = []
    for answerable, status in itertools.product((True, False), ("M", "B", "N")):
        base = {"A": answerable, "status": status}
        if status != "N":
            variants = [{"W": False, "S": False, "V": False, "agree": None}]
        else:
            variants = []
            # Evidence: none, provided but not supporting (V), or supporting (S implies V).
            evidence = ((False, False), (True, False), (True, True))
            for wrong, (provided, supported) in itertools.product((False, True), evidence):
                if wrong or not answerable:
                    variants.append({"W": wrong, "S": supported, "V": provided, "agree": None})
                    continue
                # A boolean answer of the right type is a boolean: exact iff normalized.
                agreements = ("E", "D") if field_type == "boolean" else ("E", "Q", "D")
                for agree in agreements:
                    extras: list[dict[str, Any]] = [{}]
                    if tolerance:
                        extras = (
                            [{"T": agree != "D"}] if agree != "D" else [{"T": True}, {"T": False}]
                        )
                    if ordinal:
                        if agree == "D":
                            extras = [
                                {"later": later, "within": within}
                                for later, within in itertools.product((True, False), repeat=2)
                            ]
                        else:
                            extras = [{"later": None, "within": True}]
                    for extra in extras:
                        variants.append(
                            {"W": False, "S": supported, "V": provided, "agree": agree, **extra}
                        )
        for variant in variants:
            for in_majority in (True, False) if majority and answerable else (False,):
                out.append({**base, **variant, "G": in_majority})
    return out


def metric_names(field_type: str, tolerance: bool) -> list[str]:
    names = list(CORE)
    if tolerance:
        names.append("tolerance_agreement")
    if field_type == "ordinal":
        names += ["ordinal_later", "ordinal_earlier", "ordinal_within_one"]
    if field_type == "multi":
        names += ["item_precision", "item_recall"]
    if field_type in ("categorical", "boolean", "ordinal"):
        names.append("majority_baseline")
    return names


def row_metric(name: str, c: Mapping[str, Any]) -> tuple[bool, bool]:
    """(counts in success, counts in total) for one class, per the brief's table."""
    a, n = c["A"], c["status"] == "N"
    agrees = c["agree"] in ("E", "Q")
    return {
        "exact_agreement": (a and c["agree"] == "E", a),
        "normalized_agreement": (a and agrees, a),
        "abstention_correctness": ((a and n) or (not a and c["status"] == "B"), True),
        "answerable_abstention": (a and c["status"] == "B", a),
        "unanswerable_answer": (not a and n, not a),
        "wrong_type_answer": (n and c["W"], n),
        "evidence_support": (n and c["S"], n),
        "evidence_provided": (n and c["V"], n),
        "tolerance_agreement": (a and (agrees or (c["agree"] == "D" and c.get("T", False))), a),
        "ordinal_later": (a and c["agree"] == "D" and c.get("later") is True, a),
        "ordinal_earlier": (a and c["agree"] == "D" and c.get("later") is False, a),
        "ordinal_within_one": (a and (agrees or (c["agree"] == "D" and c.get("within"))), a),
        "majority_baseline": (a and c["G"], a),
    }[name]


def count_rule(name: str, c: Mapping[str, Any]) -> bool:
    return {
        "field_count": True,
        "answerable_count": c["A"],
        "unanswerable_count": not c["A"],
        "missing_count": c["status"] == "M",
        "answered_count": c["status"] == "N",
        "abstained_count": c["status"] == "B",
    }[name]


class Field:
    def __init__(self, field_id: str, field_type: str, tolerance: bool, rows: int) -> None:
        self.field_id = field_id
        self.field_type = field_type
        self.classes = outcome_classes(field_type, tolerance)
        self.metrics = metric_names(field_type, tolerance)
        self.rows = rows

    def tables(self) -> Iterator[tuple[int, ...]]:
        """Every table of class counts with ``rows`` rows (boolean: majority at least half)."""
        for combo in itertools.combinations_with_replacement(range(len(self.classes)), self.rows):
            counts = Counter(combo)
            table = tuple(counts.get(i, 0) for i in range(len(self.classes)))
            if self.field_type == "boolean":
                majority = sum(
                    n for c, n in zip(self.classes, table, strict=True) if c["A"] and c["G"]
                )
                answerable = sum(n for c, n in zip(self.classes, table, strict=True) if c["A"])
                if 2 * majority < answerable:
                    continue
            yield table

    def numbers(self, table: tuple[int, ...], items: tuple[int, int, int]) -> dict[str, int]:
        """Every protected quantity of the field slice (items: matched, answered, gold)."""
        out: dict[str, int] = {}
        pairs = zip(self.classes, table, strict=True)
        rows = [(c, n) for c, n in pairs if n]
        for name in COUNTS:
            out[name] = sum(n for c, n in rows if count_rule(name, c))
        for name in self.metrics:
            if name in ("item_precision", "item_recall"):
                matched, answered, gold = items
                success, total = matched, answered if name == "item_precision" else gold
            else:
                success = sum(n for c, n in rows if all(row_metric(name, c)))
                total = sum(n for c, n in rows if row_metric(name, c)[1])
            out[f"{name}.success_count"] = success
            out[f"{name}.total_count"] = total
            out[f"{name}.failures"] = total - success
        if self.field_type in ("categorical", "boolean", "ordinal"):
            out["kappa.pairs"] = sum(
                n for c, n in rows if c["A"] and c["status"] == "N" and not c["W"]
            )
        return out


def slices(
    fields: list[Field], tables: tuple[tuple[int, ...], ...], items: list[tuple[int, int, int]]
) -> dict[tuple[str, str, str], int]:
    """Every protected quantity of every slice, from the fields' tables."""
    per_field = [f.numbers(t, i) for f, t, i in zip(fields, tables, items, strict=True)]
    out: dict[tuple[str, str, str], int] = {}
    for field, numbers in zip(fields, per_field, strict=True):
        for name, value in numbers.items():
            out["field", field.field_id, name] = value
    pooled = [("overall", "", fields)] + [
        ("field_type", t, [f for f in fields if f.field_type == t])
        for t in sorted({f.field_type for f in fields})
    ]
    for kind, name, members in pooled:
        names = [*COUNTS] + [
            f"{m}.{part}"
            for m in (
                CORE if kind == "overall" else sorted({m for f in members for m in f.metrics})
            )
            for part in ("success_count", "total_count", "failures")
        ]
        for quantity in names:
            out[kind, name, quantity] = sum(
                numbers[quantity]
                for f, numbers in zip(fields, per_field, strict=True)
                if f in members and quantity in numbers
            )
    return out


def document(
    fields: list[Field],
    values: Mapping[tuple[str, str, str], int],
    hidden: set[tuple[str, str, str]],
    min_cell: int,
) -> str:
    """The shared report JSON for these values with ``hidden`` numbers null."""

    def number(key: tuple[str, str, str]) -> int | None:
        return None if key in hidden else values[key]

    def slice_of(kind: str, name: str, metrics: list[str], kappa: bool) -> dict[str, object]:
        part: dict[str, object] = {c: number((kind, name, c)) for c in COUNTS}
        for metric in metrics:
            success = number((kind, name, f"{metric}.success_count"))
            total = number((kind, name, f"{metric}.total_count"))
            interval = None
            if success is not None and total is not None and total:
                interval = list(wilson_interval(success, total))  # type: ignore[arg-type]
            part[metric] = {"success_count": success, "total_count": total, "interval": interval}
        if kappa:
            part["kappa"] = {
                "value": None,
                "interval": None,
                "pairs": number((kind, name, "kappa.pairs")),
            }
        return part

    types = sorted({f.field_type for f in fields})
    doc = {
        "format": "chartscore.shared_report",
        "format_version": 1,
        "scorer": {"name": "chartscore", "version": "0.1.0"},
        "overall": slice_of("overall", "", list(CORE), False),
        "by_field": {
            f.field_id: slice_of(
                "field",
                f.field_id,
                f.metrics,
                f.field_type in ("categorical", "boolean", "ordinal"),
            )
            for f in fields
        },
        "by_field_type": {
            t: slice_of(
                "field_type",
                t,
                sorted(
                    {m for f in fields if f.field_type == t for m in f.metrics},
                    key=lambda m: (m not in CORE, m),
                ),
                False,
            )
            for t in types
        },
        "disclosure": {
            "rule": "cell_size",
            "min_cell": min_cell,
            "unit": "cases",
            "suppressed_count": len([k for k in hidden if not k[2].endswith(".failures")]),
            "field_types": {f.field_id: f.field_type for f in fields},
        },
    }
    return canonical_json(with_clustered_figures(doc))


def brute_ranges(
    fields: list[Field],
    truth: tuple[tuple[int, ...], ...],
    truth_items: list[tuple[int, int, int]],
    hidden: set[tuple[str, str, str]],
) -> dict[tuple[str, str, str], tuple[int, int]]:
    """The range of every hidden quantity over every table consistent with the published numbers."""
    values = slices(fields, truth, truth_items)
    published = {k: v for k, v in values.items() if not _is_hidden(k, hidden)}
    item_options: list[list[tuple[int, int, int]]] = []
    for field, items in zip(fields, truth_items, strict=True):
        if field.field_type != "multi":
            item_options.append([items])
            continue
        # Answered and gold items are published in these tests; matched items vary.
        _, answered, gold = items
        item_options.append([(m, answered, gold) for m in range(min(answered, gold) + 1)])
    # Each field's candidates that reproduce its own slice, then every combination of them.
    survivors: list[list[tuple[tuple[int, ...], tuple[int, int, int]]]] = []
    for field, options in zip(fields, item_options, strict=True):
        own = {k[2]: v for k, v in published.items() if k[:2] == ("field", field.field_id)}
        kept = []
        for table in field.tables():
            for items in options:
                numbers = field.numbers(table, items)
                if all(numbers[q] == v for q, v in own.items()):
                    kept.append((table, items))
        survivors.append(kept)
    ranges: dict[tuple[str, str, str], tuple[int, int]] = {}
    for combination in itertools.product(*survivors):
        tables = tuple(table for table, _ in combination)
        candidate = slices(fields, tables, [items for _, items in combination])
        if any(candidate[k] != v for k, v in published.items()):
            continue
        for key in values:
            if _is_hidden(key, hidden):
                low, high = ranges.get(key, (candidate[key], candidate[key]))
                ranges[key] = (min(low, candidate[key]), max(high, candidate[key]))
    return ranges


def _is_hidden(key: tuple[str, str, str], hidden: set[tuple[str, str, str]]) -> bool:
    kind, name, quantity = key
    if quantity.endswith(".failures"):
        metric = quantity[: -len(".failures")]
        return (kind, name, f"{metric}.success_count") in hidden or (
            kind,
            name,
            f"{metric}.total_count",
        ) in hidden
    return key in hidden


def random_case(
    rng: random.Random, fields: list[Field], hide: float
) -> tuple[tuple[tuple[int, ...], ...], list[tuple[int, int, int]], set[tuple[str, str, str]]]:
    tables = tuple(rng.choice(list(f.tables())) for f in fields)
    items = []
    for _ in fields:
        answered, gold = rng.randint(0, 4), rng.randint(0, 4)
        items.append((rng.randint(0, min(answered, gold)), answered, gold))
    values = slices(fields, tables, items)
    protected_numbers = sorted(k for k in values if not k[2].endswith(".failures"))
    keep = {("overall", "", "field_count")}
    keep |= {("field", f.field_id, "field_count") for f in fields}
    keep |= {
        ("field", f.field_id, f"item_{m}.total_count")
        for f in fields
        if f.field_type == "multi"
        for m in ("precision", "recall")
    }
    hidden = {k for k in protected_numbers if k not in keep and rng.random() < hide}
    return tables, items, hidden


def check(fields: list[Field], seed: int, hide: float) -> None:
    rng = random.Random(seed)
    tables, items, hidden = random_case(rng, fields, hide)
    values = slices(fields, tables, items)
    expected = brute_ranges(fields, tables, items, hidden)
    result = audit(document(fields, values, hidden, 11))
    got = {
        (r.slice_kind, r.slice_name, r.name): (r.lo, r.hi)
        for r in result.rows
        if r.status in ("protected", "derivable", "disclosed")
    }
    assert got == expected
    # Every hidden quantity has its row; the true value lies in its range.
    for key, (low, high) in got.items():
        assert low is not None and high is not None and low <= values[key] <= high


ONE_FIELD = [
    ("text", False, 3),
    ("categorical", False, 3),
    ("boolean", False, 3),
    ("number", True, 2),
    ("date", False, 3),
    ("ordinal", False, 2),
    ("multi", False, 3),
]


@pytest.mark.parametrize(("field_type", "tolerance", "rows"), ONE_FIELD)
@pytest.mark.parametrize("seed", range(3))
def test_one_field_ranges_match_brute_force(
    field_type: str, tolerance: bool, rows: int, seed: int
) -> None:
    check([Field("f.one", field_type, tolerance, rows)], seed, hide=0.5)


TWO_FIELDS = [
    (("text", False, 2), ("text", False, 2)),
    (("boolean", False, 2), ("categorical", False, 2)),
    (("number", True, 2), ("text", False, 2)),
    (("multi", False, 2), ("boolean", False, 2)),
]


@pytest.mark.parametrize("pair", TWO_FIELDS)
@pytest.mark.parametrize("seed", range(2))
def test_two_field_ranges_match_brute_force(
    pair: tuple[tuple[str, bool, int], ...], seed: int
) -> None:
    fields = [
        Field(f"f.{name}", t, tol, rows) for name, (t, tol, rows) in zip("ab", pair, strict=True)
    ]
    check(fields, seed + 10, hide=0.6)


@pytest.mark.parametrize("seed", range(3))
def test_sandwich_path_matches_brute_force(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    # Force the relaxation/restriction sandwich onto these small components.
    monkeypatch.setattr(ranges_module, "_SANDWICH_WIDTH", 0)
    fields = [Field("f.a", "text", False, 2), Field("f.b", "text", False, 2)]
    check(fields, seed + 20, hide=0.6)
    fields = [Field("f.a", "boolean", False, 2), Field("f.b", "number", True, 2)]
    check(fields, seed + 30, hide=0.6)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([t for t in ONE_FIELD if t[2] <= 3]),
    st.integers(0, 10**6),
    st.sampled_from([0.3, 0.6, 0.9]),
)
def test_random_hidden_sets_match_brute_force(
    spec: tuple[str, bool, int], seed: int, hide: float
) -> None:
    field_type, tolerance, rows = spec
    check([Field("f.one", field_type, tolerance, min(rows, 2))], seed, hide)


def test_brute_force_sees_a_difference() -> None:
    # The comparison can fail: a range widened by one is caught.
    fields = [Field("f.one", "text", False, 2)]
    tables, items, hidden = random_case(random.Random(5), fields, 0.5)
    expected = brute_ranges(fields, tables, items, hidden)
    assert expected, "the case hides something"
    key = next(iter(expected))
    low, high = expected[key]
    assert {**expected, key: (low, high + 1)} != expected


def test_shared_report_from_this_file_is_valid() -> None:
    fields = [Field("f.one", "ordinal", False, 2)]
    tables, items, hidden = random_case(random.Random(1), fields, 0.5)
    text = document(fields, slices(fields, tables, items), hidden, 11)
    assert SharedReport.from_json(text).to_json() == text


def first_table(field: Field, **wanted: int) -> tuple[int, ...]:
    """The first table whose field-slice numbers include ``wanted`` (names use __ for .)."""
    for table in field.tables():
        numbers = field.numbers(table, (0, 0, 0))
        if all(numbers[name.replace("__", ".")] == value for name, value in wanted.items()):
            return table
    raise AssertionError("no such table")


def audited_ranges(
    fields: list[Field],
    tables: tuple[tuple[int, ...], ...],
    items: list[tuple[int, int, int]],
    hidden: set[tuple[str, str, str]],
) -> dict[tuple[str, str, str], tuple[int | None, int | None]]:
    values = slices(fields, tables, items)
    result = audit(document(fields, values, hidden, 11))
    ranged = ("protected", "derivable", "disclosed")
    return {
        (r.slice_kind, r.slice_name, r.name): (r.lo, r.hi)
        for r in result.rows
        if r.status in ranged
    }


def everywhere(field_id: str, field_type: str, quantity: str) -> set[tuple[str, str, str]]:
    """A quantity hidden in the field's slice, its type slice, and (if core) the overall slice."""
    keys = {("field", field_id, quantity), ("field_type", field_type, quantity)}
    if quantity.split(".", maxsplit=1)[0] in CORE or quantity in COUNTS:
        keys.add(("overall", "", quantity))
    return keys


def test_boolean_exact_agreement_equals_normalized() -> None:
    # A boolean answer of the right type agrees exactly iff it agrees after normalization,
    # so hiding exact agreement while showing normalized agreement hides nothing.
    field = Field("dx.flag", "boolean", False, 3)
    table = first_table(field, normalized_agreement__success_count=2)
    hidden = everywhere("dx.flag", "boolean", "exact_agreement.success_count")
    got = audited_ranges([field], (table,), [(0, 0, 0)], hidden)
    assert got["field", "dx.flag", "exact_agreement.success_count"] == (2, 2)
    assert got == brute_ranges([field], (table,), [(0, 0, 0)], hidden)


def test_boolean_majority_holds_at_least_half() -> None:
    # Three answerable rows: the majority category has at least two of them.
    field = Field("dx.flag", "boolean", False, 3)
    table = first_table(field, answerable_count=3, majority_baseline__success_count=3)
    hidden = everywhere("dx.flag", "boolean", "majority_baseline.success_count")
    got = audited_ranges([field], (table,), [(0, 0, 0)], hidden)
    assert got["field", "dx.flag", "majority_baseline.success_count"] == (2, 3)
    assert got["field", "dx.flag", "majority_baseline.failures"] == (0, 1)
    assert got == brute_ranges([field], (table,), [(0, 0, 0)], hidden)


def test_matched_items_are_bounded_by_answered_and_gold_items() -> None:
    field = Field("hx.symptoms", "multi", False, 2)
    table = next(iter(field.tables()))
    items = [(1, 3, 2)]
    hidden = everywhere("hx.symptoms", "multi", "item_precision.success_count")
    hidden |= everywhere("hx.symptoms", "multi", "item_recall.success_count")
    got = audited_ranges([field], (table,), items, hidden)
    assert got["field", "hx.symptoms", "item_recall.success_count"] == (0, 2)
    assert got["field", "hx.symptoms", "item_precision.failures"] == (1, 3)
    assert got == brute_ranges([field], (table,), items, hidden)


def test_hidden_answered_items_are_unbounded() -> None:
    field = Field("hx.symptoms", "multi", False, 2)
    table = next(iter(field.tables()))
    hidden = everywhere("hx.symptoms", "multi", "item_precision.total_count")
    got = audited_ranges([field], (table,), [(1, 3, 2)], hidden)
    assert got["field", "hx.symptoms", "item_precision.total_count"] == (1, None)


def test_ordinal_disagreement_is_later_or_earlier() -> None:
    # Published: answered answerable rows of the right type (pairs) and normalized agreement;
    # the disagreements are later or earlier, so hiding both leaves their sum known.
    field = Field("triage.acuity", "ordinal", False, 2)
    table = first_table(
        field, kappa__pairs=2, normalized_agreement__success_count=0, ordinal_later__success_count=1
    )
    hidden = everywhere("triage.acuity", "ordinal", "ordinal_later.success_count")
    hidden |= everywhere("triage.acuity", "ordinal", "ordinal_earlier.success_count")
    got = audited_ranges([field], (table,), [(0, 0, 0)], hidden)
    assert got["field", "triage.acuity", "ordinal_later.success_count"] == (0, 2)
    assert got == brute_ranges([field], (table,), [(0, 0, 0)], hidden)
