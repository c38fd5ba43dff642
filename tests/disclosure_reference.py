"""An independent reference for disclosure tests: raw rows -> per-quantity rows and cases.

Written from docs/metrics.md and the brief's outcome-class definitions, not from chartscore's
scoring code. It judges every gold row of a small, generated cohort (a restricted value
vocabulary per field type, so that normalization is simple to state), and for every protected
quantity of every slice returns both its value (rows, or items for item metrics) and the set of
distinct cases behind it. Tests use the values to check the reference against chartscore's
report, and the case counts as the :class:`~chartscore.disclosure.Sensitivity` that the
scorer would compute inside the boundary.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

from rapidfuzz.distance import Levenshtein

from chartscore.disclosure import Sensitivity

from helpers import CORE_METRIC_NAMES, COUNT_NAMES

Key = tuple[str, str, str]
Answer = tuple[object, bool | str]
"""A prediction: its answer, and True (supported), False (no evidence) or ``GENERATED``."""

CORE = CORE_METRIC_NAMES
COUNTS = COUNT_NAMES
KAPPA_TYPES = {"categorical", "boolean", "ordinal"}


def _text(value: object) -> str | None:
    return " ".join(value.casefold().split()) if isinstance(value, str) else None


def _number(value: object) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, Decimal):
        return value
    if isinstance(value, str):
        text = value.strip()
        if not text or any(ch not in "0123456789.-+" for ch in text):
            return None
        try:
            return Decimal(text)
        except InvalidOperation:
            return None
    return None


def _date(value: object) -> tuple[int, datetime.date] | None:
    # (precision, first day): precision 3 = day, 2 = month, 1 = year.
    if not isinstance(value, str):
        return None
    text = value.strip()
    for precision, pattern in ((3, "%Y-%m-%d"), (2, "%Y-%m"), (1, "%Y")):
        try:
            return precision, datetime.datetime.strptime(text, pattern).date()
        except ValueError:
            continue
    return None


def normalize(field_type: str, spec: Mapping[str, Any], value: object) -> object | None:
    """The normalized form of ``value`` for the field, or None when it is not of the type."""
    if field_type in ("text", "categorical"):
        return _text(value)
    if field_type == "number":
        return _number(value)
    if field_type == "boolean":
        return value if isinstance(value, bool) else None
    if field_type == "date":
        return _date(value)
    if field_type == "ordinal":
        levels = [_text(level) for level in spec["levels"]]
        text = _text(value)
        return levels.index(text) if text in levels else None
    if isinstance(value, list | frozenset) and all(isinstance(item, str) for item in value):
        return frozenset(_text(item) for item in value)
    return None


GENERATED = "generated"
"""A prediction's evidence beside True (supported) and False (none): a chain of generated text
only, which provides evidence and supports nothing (``evidence_provided``, not support)."""


class Row:
    """One gold row's outcome, judged from the definitions."""

    def __init__(
        self,
        case: str,
        field_type: str,
        spec: Mapping[str, Any],
        gold: object,
        answered: bool,
        answer: object,
        supported: bool | str,
    ) -> None:
        self.case = case
        self.answerable = gold is not None
        self.missing = not answered
        self.abstained = answered and answer is None
        self.answered = answered and answer is not None
        key = normalize(field_type, spec, answer) if self.answered else None
        gold_key = normalize(field_type, spec, gold) if self.answerable else None
        self.gold_key = gold_key
        self.answer_key = key
        self.wrong_type = self.answered and key is None
        # ``supported`` is True, False (no evidence) or GENERATED (a generated-text-only chain:
        # evidence that supports nothing). Support needs a span, so it is evidence too.
        self.supported = self.answered and supported is True
        self.evidenced = self.answered and (supported is True or supported == GENERATED)
        right = self.answerable and self.answered and not self.wrong_type
        self.pair = right
        self.exact = right and type(answer) is type(gold) and answer == gold
        self.normalized = right and key == gold_key
        self.tolerance = False
        if right and "tolerance" in spec:
            distance = abs(key - gold_key)  # type: ignore[operator]
            self.tolerance = bool(distance <= Decimal(spec["tolerance"]))
        if right and "tolerance_days" in spec:
            (p1, d1), (p2, d2) = key, gold_key  # type: ignore[misc]
            days = abs((d1 - d2).days) if p1 == p2 == 3 else None
            self.tolerance = self.normalized or (
                days is not None and days <= spec["tolerance_days"]
            )
        self.later = right and field_type == "ordinal" and key > gold_key  # type: ignore[operator]
        self.earlier = right and field_type == "ordinal" and key < gold_key  # type: ignore[operator]
        self.within_one = right and field_type == "ordinal" and abs(key - gold_key) <= 1  # type: ignore[operator]
        match = spec.get("match")
        self.fuzzy = self.pattern = False
        if right and isinstance(match, dict):
            # docs/metrics.md: 1 - lev / max length >= t, exactly (rapidfuzz as the oracle).
            longest = max(len(key), len(gold_key))  # type: ignore[arg-type]
            distance = Levenshtein.distance(key, gold_key)
            self.fuzzy = longest == 0 or Fraction(longest - distance, longest) >= Fraction(
                match["fuzzy"]
            )
        if right and match == "regex":
            # Python's re, case-insensitive (the patterns here are ASCII).
            self.pattern = re.fullmatch(gold, key, re.IGNORECASE) is not None  # type: ignore[arg-type]
        # Plugin labels, from the reference's own statement of each plugin's rule.
        self.labels = {
            plugin: PLUGIN_RULES[plugin][1](gold_key, key) if right else None
            for plugin in spec.get("plugins", ())
        }
        gold_items = gold_key if field_type == "multi" and self.answerable else frozenset()
        answer_items = (
            key if field_type == "multi" and self.answered and key is not None else frozenset()
        )
        self.gold_items = len(gold_items)  # type: ignore[arg-type]
        self.answered_items = len(answer_items)  # type: ignore[arg-type]
        self.matched_items = len(answer_items & gold_items) if self.answerable else 0  # type: ignore[operator]
        self.majority = False  # set per field once its majority category is known
        # Declared labels (docs/metrics.md, per-label confusion metrics): gold's, and the
        # answer's when it is of the type (an answer outside the choices names none).
        declared = declared_labels(field_type, spec)
        self.gold_labels = _labels_of(field_type, gold_key) if self.answerable else frozenset()
        named = _labels_of(field_type, key) if right else frozenset()
        self.answer_labels = named & frozenset(declared)


def declared_labels(field_type: str, spec: Mapping[str, Any]) -> list[str]:
    """A field's declared labels in report order (their normalized names), or none."""
    if field_type == "boolean":
        return ["false", "true"]
    if field_type in ("categorical", "multi") and "choices" in spec:
        return sorted({_text(choice) for choice in spec["choices"]})  # type: ignore[type-var]
    return []


def _labels_of(field_type: str, key: object) -> frozenset[str]:
    # The labels a normalized value names (a boolean's as text; a set's items; one text).
    if field_type == "boolean":
        return frozenset({"true" if key else "false"})
    if field_type == "multi":
        return frozenset(key)  # type: ignore[arg-type]
    return frozenset({key})  # type: ignore[arg-type]


def label_parts(label: str, row: Row) -> dict[str, tuple[bool, bool]]:
    """Each label metric's (success, in total) for one row: the definitions, restated."""
    if not row.answerable:
        return dict.fromkeys(("sensitivity", "specificity", "ppv", "npv"), (False, False))
    in_gold, in_answer, pair = label in row.gold_labels, label in row.answer_labels, row.pair
    return {
        "sensitivity": (in_gold and in_answer, in_gold),
        "specificity": (not in_gold and pair and not in_answer, not in_gold),
        "ppv": (in_answer and in_gold, in_answer),
        "npv": (pair and not in_answer and not in_gold, pair and not in_answer),
    }


def _metric_rows(name: str, row: Row) -> tuple[bool, bool]:
    """(in success, in total) of a row metric."""
    a = row.answerable
    if ":" in name:  # a plugin label: answerable rows; successes carry the label
        plugin, label = name.split(":")
        return a and row.labels[plugin] == label, a
    return {
        "exact_agreement": (a and row.exact, a),
        "normalized_agreement": (a and row.normalized, a),
        "abstention_correctness": ((a and row.answered) or (not a and row.abstained), True),
        "answerable_abstention": (a and row.abstained, a),
        "unanswerable_answer": (not a and row.answered, not a),
        "wrong_type_answer": (row.wrong_type, row.answered),
        "evidence_support": (row.supported, row.answered),
        "evidence_provided": (row.evidenced, row.answered),
        "tolerance_agreement": (a and row.tolerance, a),
        "fuzzy_agreement": (a and row.fuzzy, a),
        "pattern_agreement": (a and row.pattern, a),
        "ordinal_later": (a and row.later, a),
        "ordinal_earlier": (a and row.earlier, a),
        "ordinal_within_one": (a and row.within_one, a),
        "majority_baseline": (a and row.majority, a),
    }[name]


_COUNT_RULES = {
    "field_count": lambda r: True,
    "answerable_count": lambda r: r.answerable,
    "unanswerable_count": lambda r: not r.answerable,
    "missing_count": lambda r: r.missing,
    "answered_count": lambda r: r.answered,
    "abstained_count": lambda r: r.abstained,
}


def field_metrics(field_type: str, spec: Mapping[str, Any]) -> list[str]:
    """The metrics a field of this type and schema entry reports."""
    names = list(CORE)
    if ("tolerance" in spec and field_type == "number") or (
        "tolerance_days" in spec and field_type == "date"
    ):
        names.append("tolerance_agreement")
    if isinstance(spec.get("match"), dict):
        names.append("fuzzy_agreement")
    if spec.get("match") == "regex":
        names.append("pattern_agreement")
    if field_type == "ordinal":
        names += ["ordinal_later", "ordinal_earlier", "ordinal_within_one"]
    if field_type == "multi":
        names += ["item_precision", "item_recall"]
    if field_type in KAPPA_TYPES:
        names.append("majority_baseline")
    for plugin in sorted(spec.get("plugins", ())):
        names += [f"{plugin}:{label}" for label in PLUGIN_RULES[plugin][0]]
    return names


class Tally:
    """Per quantity: its value and its set of cases."""

    def __init__(self) -> None:
        self.values: dict[Key, int] = {}
        self.cases: dict[Key, set[str]] = {}

    def add(self, key: Key, amount: int, case: str) -> None:
        self.values[key] = self.values.get(key, 0) + amount
        cases = self.cases.setdefault(key, set())
        if amount:
            cases.add(case)


def reference(
    gold: Sequence[tuple[str, str, str, object]],
    predictions: Mapping[tuple[str, str], Answer],
    schema: Mapping[str, Mapping[str, Any]],
    strata: Mapping[str, Mapping[str, str]] | None = None,
    declared: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Tally, dict[str, int], dict[str, str]]:
    """Judge every gold row; return the tally, kappa margins and field types.

    Args:
        gold: (case id, field id, field type, gold value) rows.
        predictions: (case id, field id) -> (answer, supported).
        schema: field id -> schema entry (levels, tolerance, tolerance_days).
        strata: case id -> {key: label}: the stratum slices too (``site=A`` pools every
            field over that stratum's cases, ``site=A/date`` the date fields), every
            declared stratum (``declared``: key -> labels) even an empty one.
    """
    types = {field_id: field_type for _, field_id, field_type, _ in gold}
    rows: dict[str, list[Row]] = {}
    for case, field_id, field_type, value in gold:
        spec = schema.get(field_id, {})
        answered = (case, field_id) in predictions
        answer, supported = predictions.get((case, field_id), (None, False))
        rows.setdefault(field_id, []).append(
            Row(case, field_type, spec, value, answered, answer, supported)
        )
    margins: dict[str, int] = {}
    for field_id, field_rows in rows.items():
        if types[field_id] not in KAPPA_TYPES:
            continue
        categories = Counter(r.gold_key for r in field_rows if r.answerable)
        if categories:
            # The most common gold category (ties: the smallest by repr, any tie is valid).
            top = max(categories.values())
            majority = min((k for k, n in categories.items() if n == top), key=repr)
            for r in field_rows:
                r.majority = r.answerable and r.gold_key == majority
        pairs = [r for r in field_rows if r.pair]
        gold_margin = Counter(r.gold_key for r in pairs)
        answer_margin = Counter(r.answer_key for r in pairs)
        margins[field_id] = min([*gold_margin.values(), *answer_margin.values()], default=0)
    tally = Tally()
    slices: list[tuple[str, str, list[str]]] = [("overall", "", sorted(rows))]
    slices += [("field", f, [f]) for f in sorted(rows)]
    slices += [
        ("field_type", t, sorted(f for f in rows if types[f] == t))
        for t in sorted(set(types.values()))
    ]
    chosen: dict[str, set[str] | None] = {}
    for key, labels in sorted((declared or {}).items()) if strata is not None else ():
        type_names = sorted(set(types.values()))
        for label in labels:
            name = f"{key}={label}"
            chosen[name] = {c for c, given in strata.items() if given[key] == label}
            slices.append(("stratum", name, sorted(rows)))
            for t in type_names:
                chosen[f"{name}/{t}"] = chosen[name]
                slices.append(
                    ("stratum_field_type", f"{name}/{t}", sorted(f for f in rows if types[f] == t))
                )
    for kind, name, members in slices:
        cases_in = chosen.get(name)
        if cases_in is not None:  # every number of a stratum slice exists, 0 when empty
            metrics_of = sorted(
                {m for f in members for m in field_metrics(types[f], schema.get(f, {}))}
                - {"majority_baseline"}
            )
            names = [
                *_COUNT_RULES,
                *(
                    f"{m}.{p}"
                    for m in (CORE if kind == "stratum" else metrics_of)
                    for p in ("success_count", "total_count", "failures")
                ),
            ]
            for quantity in names:
                tally.add((kind, name, quantity), 0, "")
        for field_id in members:
            metrics = field_metrics(types[field_id], schema.get(field_id, {}))
            if kind in ("overall", "stratum"):
                metrics = list(CORE)
            elif kind == "stratum_field_type":
                metrics = [m for m in metrics if m != "majority_baseline"]
            for r in rows[field_id]:
                if cases_in is not None and r.case not in cases_in:
                    continue
                for count, rule in _COUNT_RULES.items():
                    tally.add((kind, name, count), int(rule(r)), r.case)
                for metric in metrics:
                    if metric in ("item_precision", "item_recall"):
                        total = r.answered_items if metric == "item_precision" else r.gold_items
                        parts = {
                            "success_count": r.matched_items,
                            "total_count": total,
                            "failures": total - r.matched_items,
                        }
                    else:
                        success, in_total = _metric_rows(metric, r)
                        parts = {
                            "success_count": int(success),
                            "total_count": int(in_total),
                            "failures": int(in_total and not success),
                        }
                    for part, amount in parts.items():
                        tally.add((kind, name, f"{metric}.{part}"), amount, r.case)
                if kind == "field" and types[field_id] in KAPPA_TYPES:
                    tally.add((kind, name, "kappa.pairs"), int(r.pair), r.case)
                if kind != "field":
                    continue
                for label in declared_labels(types[field_id], schema.get(field_id, {})):
                    for metric, (success, in_total) in label_parts(label, r).items():
                        parts = {
                            "success_count": int(success),
                            "total_count": int(in_total),
                            "failures": int(in_total and not success),
                        }
                        for part, amount in parts.items():
                            key = (kind, name, f"labels.{label}.{metric}.{part}")
                            tally.add(key, amount, r.case)
    return tally, margins, types


def sensitivity_of(
    gold: Sequence[tuple[str, str, str, object]],
    predictions: Mapping[tuple[str, str], Answer],
    schema: Mapping[str, Mapping[str, Any]],
    strata: Mapping[str, Mapping[str, str]] | None = None,
    declared: Mapping[str, Sequence[str]] | None = None,
) -> tuple[Sensitivity, Tally]:
    """The reference :class:`Sensitivity` of a cohort, and its tally (values and cases)."""
    tally, margins, types = reference(gold, predictions, schema, strata, declared)
    counts = {key: len(cases) for key, cases in tally.cases.items()}
    return Sensitivity(counts, margins, types), tally


# --- generated cohorts ---------------------------------------------------------------------

GOLD_VALUES: dict[str, list[object]] = {
    "text": ["a", "b", "B c"],
    "categorical": ["x", "y", "z"],
    "number": [1, 2, Decimal("2.5"), 7],
    "boolean": [True, False],
    "date": ["2023-01-01", "2023-01-02", "2023-01-05", "2023-01"],
    "ordinal": ["1", "2", "3", "4"],
    "multi": [["x"], ["x", "y"], [], ["z", "y"]],
}
ANSWERS: dict[str, list[object]] = {
    "text": ["a", "A", " a ", "b", "b  C", "q", 5],
    "categorical": ["x", "X ", "y", "w", 3],
    "number": [1, 2, "2", Decimal("2.50"), Decimal("2.6"), 3, "7 ", "n/a", True],
    "boolean": [True, False, "yes", 1],
    "date": ["2023-01-01", " 2023-01-02", "2023-01-03", "2023-01", "2023-02-30", "soon"],
    "ordinal": ["1", "2", "3", "4", " 2 ", "9", 2],
    "multi": [["x"], ["X", "y"], ["y", "x"], [], ["w"], "x"],
}
LEVELS = ["1", "2", "3", "4"]

# Text fields with a declared match mode: generated when ``field_types`` names these.
MATCH_SPECS: dict[str, dict[str, object]] = {
    "text:fuzzy": {"type": "text", "match": {"fuzzy": "0.75"}},
    "text:regex": {"type": "text", "match": "regex"},
}
GOLD_VALUES["text:fuzzy"] = ["abcd", "b c", "heart failure"]
ANSWERS["text:fuzzy"] = ["abcd", "abce", "ABC", "b  c", "heart failur", "heart", "q", 5]
# A text field with the test package's length_band plugin (tests/test_plugins.py), whose rule
# is restated here: the normalized answer is shorter than, as long as or longer than gold's.
MATCH_SPECS["text:plugin"] = {"type": "text", "plugins": ["length_band"]}
GOLD_VALUES["text:plugin"] = ["ab", "b c", "abc"]
ANSWERS["text:plugin"] = ["a", "AB", "abcd", "b  c", "", 5]


def _length_band(gold: str, answer: str) -> str:
    if len(answer) < len(gold):
        return "shorter"
    return "same" if len(answer) == len(gold) else "longer"


PLUGIN_RULES: dict[str, tuple[tuple[str, ...], Any]] = {
    "length_band": (("shorter", "same", "longer"), _length_band),
}
GOLD_VALUES["text:regex"] = ["a+", "B c", "[ab]\\d?", "a|b c"]
ANSWERS["text:regex"] = ["a", "AA", "b1", " b c ", "q", 5, "a+", "B9"]


class Cohort:
    """A generated cohort: chartscore records, the reference's raw rows, and the schema."""

    def __init__(self) -> None:
        self.gold: list[tuple[str, str, str, object]] = []
        self.predictions: dict[tuple[str, str], Answer] = {}
        self.schema: dict[str, dict[str, Any]] = {}
        self.declared: dict[str, list[str]] = {}  # declared strata: key -> labels
        self.strata: dict[str, dict[str, str]] = {}  # case id -> {key: label}

    def records(self) -> tuple[list[Any], list[Any]]:
        """GoldField and Prediction records for chartscore.score."""
        from chartscore import GoldField, Prediction

        from helpers import chain, digest

        gold = [GoldField(c, f, t, v) for c, f, t, v in self.gold]
        predictions = []
        for (case, field_id), (answer, supported) in sorted(
            self.predictions.items(), key=lambda item: item[0]
        ):
            if supported is True:
                fact = digest(f"{case}/{field_id}")
                predictions.append(Prediction(case, field_id, answer, fact, chain(field_id, fact)))
            elif supported == GENERATED:  # evidence that supports nothing
                fact = digest(f"{case}/{field_id}")
                evidence = chain(field_id, fact, ("generated_text",))
                predictions.append(Prediction(case, field_id, answer, fact, evidence))
            else:
                predictions.append(Prediction(case, field_id, answer))
        return gold, predictions

    def schema_document(self) -> dict[str, object]:
        """The schema in chartscore's document shape."""
        fields: dict[str, object] = {}
        for field_id, spec in self.schema.items():
            entry: dict[str, object] = {"type": spec["type"]}
            for option in ("levels", "tolerance", "tolerance_days", "match", "plugins", "choices"):
                if option in spec:
                    entry[option] = spec[option]
            fields[field_id] = entry
        if self.declared:
            return {"fields": fields, "strata": self.declared}
        return {"fields": fields}

    def reference_rows(
        self,
    ) -> tuple[list[tuple[str, str, str, object]], dict[tuple[str, str], Answer]]:
        """Rows with multi-select lists as frozensets (as chartscore stores them)."""

        def canon(value: object) -> object:
            return frozenset(value) if isinstance(value, list) else value

        gold = [(c, f, t, canon(v)) for c, f, t, v in self.gold]
        predictions = {k: (canon(a), s) for k, (a, s) in self.predictions.items()}
        return gold, predictions

    def sensitivity(self) -> tuple[Sensitivity, Tally]:
        gold, predictions = self.reference_rows()
        if self.declared:
            return sensitivity_of(gold, predictions, self.schema, self.strata, self.declared)
        return sensitivity_of(gold, predictions, self.schema)


def _weighted(rate: float) -> list[bool]:
    # A list to choose from: True with probability ``rate`` (to the nearest 1/100).
    hits = max(0, min(100, round(100 * rate)))
    return [True] * hits + [False] * (100 - hits)


def build_cohort(
    choose: Any,
    field_types: Sequence[str],
    cases: int,
    *,
    p_unanswerable: float = 0.25,
    p_missing: float = 1 / 6,
    p_abstain: float = 1 / 6,
    p_wrong: float = 1 / 3,
    p_supported: float = 0.5,
) -> Cohort:
    """Generate a cohort with ``choose(sequence)`` as the only source of randomness.

    ``choose`` is ``random.Random.choice`` in benchmarks and a hypothesis draw in tests. A
    wrong answer is drawn from the type's answer list (some of which are of the wrong type).
    """
    cohort = Cohort()
    unanswerable = [True] + [False] * max(1, round(1 / p_unanswerable) - 1)
    if p_unanswerable != 0.25:
        unanswerable = _weighted(p_unanswerable)
    missing, abstain = _weighted(p_missing), _weighted(p_abstain / (1 - p_missing))
    wrong, supported = _weighted(p_wrong), _weighted(p_supported)
    default = (p_missing, p_abstain, p_wrong, p_supported) == (1 / 6, 1 / 6, 1 / 3, 0.5)
    for index, drawn_type in enumerate(field_types):
        field_type = drawn_type.split(":")[0]
        field_id = f"f{index:03d}.{drawn_type.replace(':', '_')}"
        spec: dict[str, Any] = dict(MATCH_SPECS.get(drawn_type, {"type": field_type}))
        if field_type == "ordinal":
            spec["levels"] = LEVELS
        elif field_type == "number" and choose([True, False]):
            spec["tolerance"] = "1"
        elif field_type == "date" and choose([True, False]):
            spec["tolerance_days"] = 1
        elif field_type in ("categorical", "multi") and choose([True, False]):
            spec["choices"] = ["x", "y", "z"]  # every gold value lies within them
        cohort.schema[field_id] = spec
        for case_index in range(cases):
            case = f"case-{case_index:05d}"
            value = None if choose(unanswerable) else choose(GOLD_VALUES[drawn_type])
            cohort.gold.append((case, field_id, field_type, value))
            if default:
                outcome = choose(["answer", "answer", "answer", "answer", "abstain", "missing"])
            else:
                outcome = (
                    "missing" if choose(missing) else "abstain" if choose(abstain) else "answer"
                )
            if outcome == "missing":
                continue
            if outcome == "abstain":
                cohort.predictions[case, field_id] = (None, False)
                continue
            if default:
                right = value is not None and choose([True, True, False])
                is_supported = choose([True, False])
            else:
                right = value is not None and not choose(wrong)
                is_supported = choose(supported)
            answer = value if right else choose(ANSWERS[drawn_type])
            # No draw: an unsupported answer of an odd-numbered case carries generated text.
            evidence: bool | str = is_supported
            if not is_supported and case_index % 2 == 1:
                evidence = GENERATED
            cohort.predictions[case, field_id] = (answer, evidence)
    return cohort
