"""A field's per-label metrics, its F1 figures and its agreement coefficients, shared.

- **Label metrics.** Each declared label's sensitivity, specificity, PPV and
  NPV are binomial metrics like any other (:class:`SharedMetric`), numbers of
  the audit's model (``labels.<label>.<metric>``): suppressed, ranged and
  bounded like the rest (docs/disclosure.md, "Per-label metrics").
- **F1 figures** (a label's ``f1``, a field's ``macro_f1``) are functions of
  published counts only: each is shown exactly where its counts are (a label's
  true positives, gold and answered positives; for the macro average, every
  label's), and is then the value they give. Anyone can recompute it, so it
  publishes nothing the counts do not.
- The labels' counts pooled over the labels (micro-averaged, and so
  ``micro_f1``) are not shared: in a single-label field they are the
  agreement numerator, the answerable rows and kappa's pairs in another form.
- **Coefficients** (AC1 or AC2 and alpha) are functions of kappa's table:
  shown exactly where kappa's value is, under kappa's rule. A number or date
  field's interval alpha is a magnitude of the values themselves: shown only
  where the error magnitude's limits are, and when the pooled values' spread
  passes the dominance rule (:class:`~chartscore.documents.shared_figures.FieldFigures`).

Value-free: the declared labels are schema knowledge; no case, no value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

import attrs

from chartscore.documents.report import MAX_LABEL_NAME
from chartscore.documents.shared_figures import FIGURE_PUBLISHED
from chartscore.documents.shared_metric import (
    Interval,
    Range,
    SharedMetric,
    exact_keys,
    invalid,
    read_count,
    read_interval,
    read_metric,
    read_number,
)
from chartscore.documents.shared_rule import KAPPA_PUBLISHED, SUCCESS, TOTAL, metric_quantity
from chartscore.documents.tally import LABEL_METRICS
from chartscore.stats.binomial import Z95
from chartscore.stats.confusion import f1_score, macro_f1
from chartscore.stats.reliability import ALPHA_METRICS, LOWEST

LABEL_PREFIX: Final = "labels."


def label_metric(label: str, metric: str) -> str:
    """A label's metric as the model and the audit name it: ``labels.current.sensitivity``.

    Read from the right (the metric is one of four fixed names), so any label text works.
    """
    return f"{LABEL_PREFIX}{label}.{metric}"


def split_label_metric(name: str) -> tuple[str, str] | None:
    """(label, metric) of :func:`label_metric`'s name; None for any other name."""
    if not name.startswith(LABEL_PREFIX):
        return None
    label, dot, metric = name[len(LABEL_PREFIX) :].rpartition(".")
    if not dot or metric not in LABEL_METRICS:
        return None
    return label, metric


SCORES: Final = ("macro_f1",)
"""A field slice's F1 figure beside its labels (the labels' pooled counts are not shared)."""
GWET: Final = ("ac1", "ac2")
COEFFICIENTS: Final = (*GWET, "alpha")
"""The coefficients a field slice may hold, in report order."""
LABELLED_TYPES: Final = frozenset({"categorical", "boolean", "multi"})
"""Field types whose declared labels get confusion metrics."""
BOOLEAN_LABELS: Final = ("false", "true")
MAX_LABELS: Final = 10_000
"""At most this many labels in one field of a shared document."""


def f1_of(metrics: Mapping[str, SharedMetric]) -> float | None:
    """F1 from published counts: ``2 TP / (gold + answered positives)``; None if one is hidden."""
    positives = metrics["sensitivity"].success_count
    gold, answered = metrics["sensitivity"].total_count, metrics["ppv"].total_count
    if positives is None or gold is None or answered is None:
        return None
    return f1_score(positives, gold, answered)


@attrs.frozen
class SharedLabel:
    """One declared label's four metrics in a shared field slice, and its F1.

    Attributes:
        metrics: ``sensitivity``, ``specificity``, ``ppv`` and ``npv``.
        f1: Shown where its three counts are (:func:`f1_of`); None otherwise
            or when undefined.
    """

    metrics: Mapping[str, SharedMetric]
    f1: float | None

    def to_dict(self) -> dict[str, object]:
        """``{"sensitivity", "specificity", "ppv", "npv", "f1"}``."""
        out: dict[str, object] = {name: self.metrics[name].to_dict() for name in LABEL_METRICS}
        out["f1"] = self.f1
        return out


def label_numbers(labels: Mapping[str, SharedLabel]) -> Iterator[tuple[str, int | None]]:
    """Every label's protected numbers, as (quantity, value), in report order."""
    for label, result in labels.items():
        for metric in LABEL_METRICS:
            name = label_metric(label, metric)
            yield metric_quantity(name, SUCCESS), result.metrics[metric].success_count
            yield metric_quantity(name, TOTAL), result.metrics[metric].total_count


def label_ranges(labels: Mapping[str, SharedLabel]) -> Iterator[tuple[str, Range]]:
    """Every published range beside a suppressed label count, as (quantity, range)."""
    for label, result in labels.items():
        for metric in LABEL_METRICS:
            name = label_metric(label, metric)
            shown = result.metrics[metric]
            if shown.success_range is not None:
                yield metric_quantity(name, SUCCESS), shown.success_range
            if shown.total_range is not None:
                yield metric_quantity(name, TOTAL), shown.total_range


def shown_macro(labels: Mapping[str, SharedLabel]) -> float | None:
    """The macro F1 where every label's counts are published; None otherwise."""
    triples: list[tuple[int, int, int]] = []
    for label in labels.values():
        sensitivity, ppv = label.metrics["sensitivity"], label.metrics["ppv"]
        parts = (sensitivity.success_count, sensitivity.total_count, ppv.total_count)
        if None in parts:
            return None
        triples.append(parts)  # type: ignore[arg-type]
    return macro_f1(triples)


@attrs.frozen
class SharedCoefficient:
    """AC1, AC2 or alpha of a shared field slice: value and interval None when withheld.

    ``pairs`` is kappa's (or, for interval alpha, the error magnitude's), None
    where that count is suppressed: the same number, published once in the model.
    """

    name: str
    value: float | None
    interval: Interval | None
    pairs: int | None
    metric: str = ""

    def to_dict(self) -> dict[str, object]:
        """``{"value", "interval", "pairs"}`` (alpha: and ``"metric"``)."""
        out: dict[str, object] = {
            "value": self.value,
            "interval": None if self.interval is None else [self.interval[0], self.interval[1]],
            "pairs": self.pairs,
        }
        if self.name == "alpha":
            out["metric"] = self.metric
        return out


def shared_coefficient(
    name: str, raw: Mapping[str, object], pairs: int | None, shown: bool
) -> SharedCoefficient:
    """A full report's coefficient, with its value and interval only where ``shown``."""
    value, interval = raw["value"], raw["interval"]
    withheld = not shown or value is None
    pair = None
    if not withheld and isinstance(interval, list | tuple):
        pair = (float(interval[0]), float(interval[1]))
    return SharedCoefficient(
        name,
        None if withheld else float(value),  # type: ignore[arg-type]
        pair,
        pairs,
        str(raw.get("metric", "")),
    )


# --- reading ---------------------------------------------------------------------------


def read_labels(value: object, field_type: str, z: float = Z95) -> dict[str, SharedLabel]:
    """A shared field slice's ``labels`` object, checked (docs/formats.md, "Shared report").

    Raises:
        ChartscoreError: ``invalid_report`` for a label a field of this type
            cannot have, a missing metric, a malformed number, or an ``f1``
            that is not the one its published counts give.
    """
    if type(value) is not dict or not value or len(value) > MAX_LABELS:
        invalid()
    if field_type not in LABELLED_TYPES:
        invalid()
    if field_type == "boolean" and tuple(value) != BOOLEAN_LABELS:
        invalid()
    if list(value) != sorted(value):
        invalid()  # report order: the labels sorted by their normalized names
    out: dict[str, SharedLabel] = {}
    for label, raw in value.items():
        if type(raw) is not dict or not (
            type(label) is str and 0 < len(label) <= MAX_LABEL_NAME and label.isprintable()
        ):
            invalid()  # a declared choice, normalized: printable text, as a report's
        exact_keys(raw, (*LABEL_METRICS, "f1"))
        metrics = {name: read_metric(raw[name], z) for name in LABEL_METRICS}
        if _differ(metrics["sensitivity"].success_count, metrics["ppv"].success_count):
            invalid()  # both are the label's true positives
        if _differ(metrics["specificity"].success_count, metrics["npv"].success_count):
            invalid()  # both are its true negatives
        shown = raw["f1"]
        expected = f1_of(metrics)
        if expected is not None and (shown is None or read_number(shown, 0.0, 1.0) != expected):
            invalid()
        f1 = None if shown is None else read_number(shown, 0.0, 1.0)
        out[label] = SharedLabel(metrics, f1)
    return out


def read_score(value: object, expected: float | None) -> float | None:
    """A shown F1 figure: where its counts are published, exactly the value they give."""
    shown = None if value is None else read_number(value, 0.0, 1.0)
    if expected is not None and shown != expected:
        invalid()
    return shown


def read_coefficient(name: str, value: object) -> SharedCoefficient:
    """One coefficient of a shared field slice (its rule is the audit's to check)."""
    if type(value) is not dict:
        invalid()
    keys = ("value", "interval", "pairs")
    exact_keys(value, (*keys, "metric") if name == "alpha" else keys)
    metric = value.get("metric", "")
    if name == "alpha" and metric not in ALPHA_METRICS:
        invalid()
    pairs = read_count(value["pairs"])
    interval = read_interval(value["interval"], LOWEST, 1.0)
    if value["value"] is None:
        if interval is not None:
            invalid()
        return SharedCoefficient(name, None, None, pairs, str(metric))
    number = read_number(value["value"], LOWEST, 1.0)
    if pairs == 0 or (interval is not None and not interval[0] <= number <= interval[1]):
        invalid()
    if interval is None and name != "alpha":
        invalid()
    return SharedCoefficient(name, number, interval, pairs, str(metric))


def check_label_sums(labels: Mapping[str, SharedLabel], answerable: int | None) -> None:
    """A field's label identities, wherever every number in one is published.

    Each label's gold positives and negatives add up to the answerable rows;
    every label's answered positives and negatives add up to the same answered
    rows of the type.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    answered: set[int] = set()
    for label in labels.values():
        gold = label.metrics["sensitivity"].total_count
        negative = label.metrics["specificity"].total_count
        if None not in (gold, negative, answerable) and gold + negative != answerable:  # type: ignore[operator]
            invalid()
        positive = label.metrics["ppv"].total_count
        rest = label.metrics["npv"].total_count
        if positive is not None and rest is not None:
            answered.add(positive + rest)
    if len(answered) > 1:
        invalid()


def _differ(first: int | None, second: int | None) -> bool:
    return first is not None and second is not None and first != second


def coefficient_names(field_type: str, measured: bool) -> tuple[str, ...]:
    """The coefficients a field slice of this type holds: AC1 (AC2) and alpha, or interval alpha."""
    if field_type == "ordinal":
        return ("ac2", "alpha")
    if field_type in ("categorical", "boolean"):
        return ("ac1", "alpha")
    return ("alpha",) if measured else ()


def alpha_metric(field_type: str) -> str:
    """Alpha's difference function for a field type."""
    if field_type == "ordinal":
        return "ordinal"
    return "nominal" if field_type in ("categorical", "boolean") else "interval"


def label_failures(
    labels: Mapping[str, SharedLabel],
    scores: Mapping[str, float | None],
    coefficients: Mapping[str, SharedCoefficient],
    *,
    kappa_shown: bool | None,
    limits_shown: bool,
) -> Iterator[tuple[str, str]]:
    """What the audit fails in a slice's labels and coefficients: (row name, status).

    ``figure_published``: an F1 shown while one of its counts is hidden (the
    macro F1: while any label's is), or interval alpha shown without its error
    magnitude's limits (``limits_shown``). ``kappa_published``: AC1, AC2 or
    alpha shown where kappa's value could not be (``kappa_shown`` False: its
    pairs or the agreement numerator hidden; None: a field without kappa).
    That a shown F1 is the one its counts give is the reader's check.
    """
    for label, result in labels.items():
        if result.f1 is not None and f1_of(result.metrics) is None:
            yield label_metric(label, "f1"), FIGURE_PUBLISHED
    if scores.get("macro_f1") is not None and shown_macro(labels) is None:
        yield "macro_f1", FIGURE_PUBLISHED
    for name, coefficient in coefficients.items():
        if coefficient.value is None:
            continue
        if kappa_shown is False:
            yield f"{name}.value", KAPPA_PUBLISHED
        elif kappa_shown is None and not limits_shown:
            yield f"{name}.value", FIGURE_PUBLISHED
