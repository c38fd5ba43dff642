"""The attack on one shared document: a shared report (:func:`audit`) or a shared comparison
(:func:`audit_comparison`), and the judgement of a hidden number that every audit shares.

:func:`audit` reads only the shared report (the object or its JSON), exactly
what an outsider holds. From its field types and metric names it builds the
integer model of docs/disclosure.md, adds every published number as an
equality and what the published rule implies of them (an item count's cases
are at least ``min_cell`` rows with items: :meth:`ReportModel.knowledge`),
and for every protected quantity that is not published computes
the exact integer range [lo, hi] an outsider can prove, by integer
programming (:mod:`chartscore.disclosure.ranges`). The report fails when:

- a protected number is published, or follows from two published numbers
  (a metric's failures), with a value from 1 to ``min_cell - 1``;
- a hidden protected quantity is proven to lie from 1 to ``min_cell - 1``;
- an interval is published while its metric has a hidden part;
- a kappa value is published while its ``pairs`` or its field's
  ``normalized_agreement`` numerator is hidden;
- the published numbers are inconsistent (no integer table fits them: a
  damaged or edited report), or the solver cannot settle a range exactly;
- a published range of a suppressed number is not the range the attack
  proves (narrower: it claims more than the numbers prove, a leak when true;
  wider: stale or edited), or a published rate bound is not the one those
  ranges give.

The old path ``chartscore.disclosure.attack`` is this module (the same module object).
Value-free: the result holds field ids, closed names and integers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Final, Protocol

import attrs
import numpy as np

from chartscore.disclosure import split
from chartscore.disclosure.comparison_model import (
    ComparisonModel,
    comparison_values,
    derived_terms,
)
from chartscore.disclosure.error_counts import error_count_failures
from chartscore.disclosure.forms import Form
from chartscore.disclosure.limits import check_audit_size
from chartscore.disclosure.model import Quantity, ReportModel, model_of
from chartscore.disclosure.progress import step
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.disclosure.rule import (
    KAPPA_PUBLISHED,
    RANGE_SUFFIX,
    SLICE_KINDS,
    STRATUM,
    STRATUM_FIELD_TYPE,
    SUCCESS,
    TOTAL,
    metric_quantity,
)
from chartscore.documents.shared_comparison import SharedComparison, difference_bound
from chartscore.documents.shared_figures import (
    FIGURE_PUBLISHED,
    figure_failures,
)
from chartscore.documents.shared_labels import label_failures
from chartscore.documents.shared_metric import Range, RateBound, rate_bound
from chartscore.documents.shared_quantities import DERIVED_PARTS, binomials, published_values
from chartscore.documents.shared_report import Key, SharedReport
from chartscore.stats.binomial import wilson_interval
from chartscore.stats.clustered import z_for

PROTECTED: Final = "protected"
"""A hidden number whose range does not prove it small (it may be 0 or large)."""
DERIVABLE: Final = "derivable"
"""A hidden number an outsider can compute exactly; allowed when it is 0 or >= min_cell."""
DISCLOSED: Final = "disclosed"
"""A hidden number proven to lie from 1 to min_cell - 1: the audit fails."""
SMALL_PUBLISHED: Final = "small_published"
"""A published number (or failures from two published numbers) from 1 to min_cell - 1."""
INTERVAL_PUBLISHED: Final = "interval_published"
"""An interval shown while its metric has a hidden part (it would reveal the counts)."""
INCONSISTENT: Final = "inconsistent"
"""The published numbers contradict each other: no integer table fits them."""
UNRESOLVED: Final = "unresolved"
"""The solver could not settle a range exactly; treated as a failure."""
RANGE_NARROW: Final = "range_narrow"
"""A published range leaves out a value the published numbers allow: it claims too much."""
RANGE_WIDE: Final = "range_wide"
"""A published range holds the provable one and more: stale or edited."""
BOUND_NARROW: Final = "bound_narrow"
"""A published rate bound is narrower than the one the provable ranges give (or has none)."""
BOUND_WIDE: Final = "bound_wide"
"""A published rate bound is wider than (or of another kind than) the provable ranges give."""

STATUSES: Final = (
    PROTECTED,
    DERIVABLE,
    DISCLOSED,
    SMALL_PUBLISHED,
    INTERVAL_PUBLISHED,
    KAPPA_PUBLISHED,
    INCONSISTENT,
    UNRESOLVED,
    RANGE_NARROW,
    RANGE_WIDE,
    BOUND_NARROW,
    BOUND_WIDE,
    FIGURE_PUBLISHED,
)
PASSING: Final = frozenset({PROTECTED, DERIVABLE})
AUDITING: Final = "auditing"
"""The progress stage of the attack (done: hidden numbers whose range is proven)."""
_RANGED: Final = frozenset({PROTECTED, DERIVABLE, DISCLOSED})
WHOLE: Final = "published_numbers"
"""The row name of a failure of a document (or a publication) as a whole: inconsistent or
unresolved."""
_INTERVAL_TOLERANCE: Final = 1e-9
_WIDE: Final = 1000
"""The widest component (columns) from which the ranges are split over two processes."""
_WORDS: Final = {"field": "field", STRATUM: "stratum", STRATUM_FIELD_TYPE: "stratum"}


@attrs.frozen
class AuditRow:
    """One line of the audit: a hidden number's proven range, or a failure.

    Attributes:
        slice_kind: ``overall``, ``field``, ``field_type``, ``stratum`` or
            ``stratum_field_type``.
        slice_name: The field id, type name, ``site=A`` or ``site=A/date``
            (``""`` for overall).
        name: The quantity, e.g. ``missing_count``,
            ``exact_agreement.failures``, ``kappa.pairs``, ``kappa.value``.
        lo: The smallest value an outsider can prove, or None when not a range.
        hi: The largest (None: unbounded, or not a range).
        status: One of :data:`STATUSES`.
    """

    slice_kind: str
    slice_name: str
    name: str
    lo: int | None
    hi: int | None
    status: str

    @property
    def slice(self) -> str:
        """The slice as people read it: ``overall``, ``field dx.onset``, ``type number``."""
        if self.slice_kind == "overall":
            return "overall"
        word = _WORDS.get(self.slice_kind, "type")
        return f"{word} {self.slice_name}"

    @property
    def passed(self) -> bool:
        """Whether this row is compatible with the rule."""
        return self.status in PASSING


_DERIVED_PARTS: Final = (*DERIVED_PARTS, "both", "neither")
"""Hidden quantities no document lists: a metric's failures, a field's disagreed rows, and a
shared comparison's rows both or neither system got right (docs/disclosure.md)."""


@attrs.frozen
class AuditResult:
    """The audit's verdict and its rows.

    Attributes:
        passed: True when no row fails.
        min_cell: The rule's minimum cell size, from the report.
        rows: One row per hidden protected quantity and per failure.
        solves: How many integer programs were solved (for benchmarks).
    """

    passed: bool
    min_cell: int
    rows: tuple[AuditRow, ...]
    solves: int = attrs.field(default=0, eq=False)

    @property
    def failures(self) -> tuple[AuditRow, ...]:
        """The failing rows."""
        return tuple(row for row in self.rows if not row.passed)

    @property
    def exit_status(self) -> int:
        """0 when the audit passes, 4 when it fails (the CLI's exit status)."""
        return 0 if self.passed else 4

    def table(self) -> str:
        """A fixed-width, value-free table: slice, number, lo, hi, status; then a verdict."""
        header = ("slice", "number", "lo", "hi", "status")
        lines = [
            (
                row.slice,
                row.name,
                "-" if row.lo is None else str(row.lo),
                ("inf" if row.status in PASSING else "-") if row.hi is None else str(row.hi),
                row.status,
            )
            for row in self.rows
        ]
        widths = [max([len(h), *(len(line[i]) for line in lines)]) for i, h in enumerate(header)]

        def render(cells: tuple[str, ...]) -> str:
            left = [cells[i].ljust(widths[i]) for i in (0, 1)]
            right = [cells[i].rjust(widths[i]) for i in (2, 3)]
            return "  ".join([*left, *right, cells[4]]).rstrip()

        out = [render(header), render(tuple("-" * w for w in widths))]
        out += [render(line) for line in lines]
        failed = len(self.failures)
        hidden = [
            row.name
            for row in self.rows
            if row.status in _RANGED or (row.status == UNRESOLVED and row.name != WHOLE)
        ]
        derived = sum(1 for name in hidden if name.rpartition(".")[2] in _DERIVED_PARTS)
        verdict = "PASS" if self.passed else "FAIL"
        out.append(
            f"audit {verdict}: min_cell {self.min_cell}, {len(hidden)} hidden numbers checked "
            f"({len(hidden) - derived} suppressed in the document, {derived} derived from them), "
            f"{failed} failing"
        )
        return "\n".join(out) + "\n"


def _presentation_failures(
    report: SharedReport, values: Mapping[Key, int | None]
) -> Iterator[AuditRow]:
    # Intervals and kappa values that would reveal hidden counts; intervals that do not
    # match their counts (an edited report), at the report's own confidence level.
    z = z_for(report.confidence)
    # Kappa and the coefficients over its table are shown only where every number of the
    # field is (they would pin a hidden one: docs/disclosure.md, "What is protected").
    partly_hidden = {key[1] for key, value in values.items() if key[0] == "field" and value is None}
    for kind, name, part in report.slices():
        if kind == "field" and name in partly_hidden and part.kappa is not None:
            # (a number field's interval alpha, of its values, has the magnitudes' rule)
            shown = [("kappa", part.kappa.value)]
            shown += [(figure, found.value) for figure, found in part.coefficients.items()]
            for figure, value in shown:
                if value is not None:
                    yield AuditRow(kind, name, f"{figure}.value", None, None, KAPPA_PUBLISHED)
        for metric, result in binomials(part):
            if result.interval is None:
                if result.success_count is not None and result.total_count:
                    yield AuditRow(kind, name, f"{metric}.interval", None, None, INCONSISTENT)
                continue
            if result.success_count is None or result.total_count is None:
                yield AuditRow(kind, name, f"{metric}.interval", None, None, INTERVAL_PUBLISHED)
                continue
            expected = wilson_interval(result.success_count, result.total_count, z)
            if expected is None or any(
                abs(a - b) > _INTERVAL_TOLERANCE
                for a, b in zip(expected, result.interval, strict=True)
            ):
                yield AuditRow(kind, name, f"{metric}.interval", None, None, INCONSISTENT)
        kappa = part.kappa
        if kappa is None or kappa.value is None:
            continue
        agreement = part.metrics["normalized_agreement"].success_count
        if kappa.pairs is None or agreement is None:
            yield AuditRow(kind, name, "kappa.value", None, None, KAPPA_PUBLISHED)
        elif kappa.pairs == 0:
            yield AuditRow(kind, name, "kappa.value", None, None, INCONSISTENT)
    # The validation figures: shown only under their rules, and consistent with their counts.
    min_cell = report.disclosure.min_cell
    for kind, name, part in report.slices():
        for label, status in figure_failures(part.magnitude, part.uncertainty, min_cell, z):
            yield AuditRow(kind, name, label, None, None, status)
        for label, status in error_count_failures(part.magnitude, min_cell, z):
            yield AuditRow(kind, name, label, None, None, status)
        kappa_shown = None
        if part.kappa is not None:
            agreement = part.metrics["normalized_agreement"].success_count
            kappa_shown = part.kappa.pairs is not None and agreement is not None
        limits = part.magnitude is not None and part.magnitude.limits_of_agreement is not None
        for label, status in label_failures(
            part.labels or {},
            part.scores,
            part.coefficients,
            kappa_shown=kappa_shown,
            limits_shown=limits,
        ):
            yield AuditRow(kind, name, label, None, None, status)


_RANK: Final = {kind: i for i, kind in enumerate(SLICE_KINDS)}


def _order(model: ReportModel) -> list[Quantity]:
    # Quantities in report order: overall, fields, field types; counts before metrics.
    position = {key: i for i, key in enumerate(model.quantities)}
    return sorted(
        model.quantities.values(), key=lambda q: (_RANK[q.key[0]], q.key[1], position[q.key])
    )


def _sorted_rows(model: ReportModel, rows: list[AuditRow]) -> tuple[AuditRow, ...]:
    # Report order; rows that are not quantities (intervals, kappa values) follow their slice's.
    position = {key: i for i, key in enumerate(model.quantities)}
    return tuple(
        sorted(
            rows,
            key=lambda r: (
                _RANK[r.slice_kind],
                r.slice_name,
                position.get((r.slice_kind, r.slice_name, r.name), len(position)),
                r.name,
            ),
        )
    )


def _report_shortcut(
    quantity: Quantity, published: Mapping[Key, int], found: Mapping[Key, Range]
) -> Range | None:
    """A metric's failures from its other part when one is shown (None: ask the solver).

    Failures are total minus success on every consistent table, so with the total
    published they range over total minus the success range (and the other way round).
    """
    parts = quantity.parts
    if parts is not None:
        success, total = parts
        if total in published and success in found:
            low, high = found[success]
            if high is not None:
                return published[total] - high, published[total] - low
        if success in published and total in found:
            low, high = found[total]
            return low - published[success], None if high is None else high - published[success]
    return None


def _comparison_shortcut(
    quantity: Quantity, values: Mapping[Key, int | None], found: Mapping[Key, Range]
) -> Range | None:
    """A derived quantity's range from its one hidden term's (None: ask the solver).

    The identity holds on every consistent table, so its extremes are the term's, shifted.
    """
    kind, name, label = quantity.key
    try:
        terms = derived_terms(label)
    except ValueError:
        return None
    constant = 0
    hidden: list[tuple[Key, int]] = []
    for term, sign in terms:
        value = values[kind, name, term]
        if value is None:
            hidden.append(((kind, name, term), sign))
        else:
            constant += sign * value
    if len(hidden) != 1 or hidden[0][0] not in found:
        return None
    sign = hidden[0][1]
    low, high = found[hidden[0][0]]
    if sign > 0:
        return constant + low, None if high is None else constant + high
    if high is None:
        return None  # unbounded term subtracted: the solver knows the floor (0)
    return constant - high, constant - low


def published_solver(build: Callable[[], RangeSolver]) -> RangeSolver | AuditRow:
    """The solver ``build`` makes of the published numbers, or, when they admit none
    (inconsistent or unresolved), the row that fails the audit as a whole."""
    problem = ""
    try:
        return build()
    except Inconsistent:
        problem = INCONSISTENT
    except Unresolved:
        problem = UNRESOLVED
    return AuditRow("overall", "", WHOLE, None, None, problem)


class Published(Protocol):
    """A shared document as the audit reads it: every protected number, keyed (None: hidden)."""

    def numbers(self) -> Iterable[tuple[Key, int | None]]: ...


def proven_ranges(report: Published, rows: tuple[AuditRow, ...]) -> dict[Key, Range]:
    """What the attack proves about every protected JSON number: ``(v, v)`` when published.

    Args:
        report: The audited shared report (or shared comparison).
        rows: Its audit rows (:attr:`AuditResult.rows`).

    Returns:
        Each number's range; a suppressed number the solver could not settle
        is left out (its row already fails the audit).
    """
    found = {
        (row.slice_kind, row.slice_name, row.name): (row.lo, row.hi)
        for row in rows
        if row.status in _RANGED and row.lo is not None
    }
    out: dict[Key, Range] = {}
    for key, value in report.numbers():
        if value is not None:
            out[key] = (value, value)
        elif key in found:
            low, high = found[key]
            assert low is not None
            out[key] = (low, high)
    return out


def hidden_status(low: int, high: int | None, min_cell: int) -> str:
    """A hidden number's status from its proven range: small, exact, or protected."""
    if low >= 1 and high is not None and high < min_cell:
        return DISCLOSED
    if low == high:
        return DERIVABLE
    return PROTECTED


def judge(answer: Range | None, min_cell: int) -> tuple[int | None, int | None, str]:
    """A hidden number's row from its proven range: (lo, hi, status); an answer of None
    (the solver could not settle it) is ``unresolved``, which fails every audit.

    Every attack, of one document or of several held together, judges by this one rule.
    """
    if answer is None:
        return None, None, UNRESOLVED
    low, high = answer
    return low, high, hidden_status(low, high, min_cell)


def ranges_of(solver: RangeSolver, forms: Iterable[Form]) -> Iterator[Range | None]:
    """Each form's exact range under ``solver``, or None where it cannot be settled.

    Lazy, so that an attack that stops at the first unresolved number (a ledger's
    releases) asks no more; the joint attacks ask their solver this way, the single
    document's attack through its shortcuts and its split over two cores (:func:`_attacked`).
    """
    for form in forms:
        try:
            yield solver.range_of(form)
        except (Unresolved, Inconsistent):
            yield None


def range_status(shown: Range, proven: Range) -> str | None:
    """A published range against the proven one: None when equal; ``range_narrow`` when it
    leaves out a provable value, else ``range_wide``."""
    if shown == proven:
        return None
    (low, high), (proven_low, proven_high) = shown, proven
    if low > proven_low or (high is not None and (proven_high is None or high < proven_high)):
        return RANGE_NARROW
    return RANGE_WIDE


def bound_status(shown: RateBound, proven: RateBound | None) -> str | None:
    """A published bound against the proven one: None when equal; ``bound_narrow`` when it
    leaves out a provable rate (or none is proven), else ``bound_wide``."""
    if shown == proven:
        return None
    if proven is None or shown.lower > proven.lower or shown.upper < proven.upper:
        return BOUND_NARROW
    return BOUND_WIDE


def range_failures(report: SharedReport, proven: Mapping[Key, Range]) -> list[AuditRow]:
    """Rows for every published range or rate bound that is not what the attack proves.

    Args:
        report: The shared report and its published ranges and bounds.
        proven: :func:`proven_ranges` of the attack on its published numbers.

    Returns:
        One row per range (``<number>_range``) or bound (``<metric>.rate_bound``)
        that differs: ``range_narrow``, ``range_wide``, ``bound_narrow`` or
        ``bound_wide``. A range row shows the provable range.
    """
    rows: list[AuditRow] = []
    for key, shown in report.ranges():
        expected = proven.get(key)
        if expected is None:
            continue  # unresolved: its own row fails the audit
        status = range_status(shown, expected)
        if status is not None:
            kind, name, label = key
            rows.append(AuditRow(kind, name, label + RANGE_SUFFIX, *expected, status))
    z = z_for(report.confidence)
    for kind, name, part in report.slices():
        for metric, result in binomials(part):
            if result.rate_bound is None:
                continue
            success = proven.get((kind, name, metric_quantity(metric, SUCCESS)))
            total = proven.get((kind, name, metric_quantity(metric, TOTAL)))
            if success is None or total is None:
                continue
            expected_bound = rate_bound(success, total, pooled=result.pooled, z=z)
            status = bound_status(result.rate_bound, expected_bound)
            if status is not None:
                label = f"{metric}.rate_bound"
                rows.append(AuditRow(kind, name, label, None, None, status))
    return rows


def comparison_range_failures(
    shared: SharedComparison, proven: Mapping[Key, Range]
) -> list[AuditRow]:
    """:func:`range_failures` of a shared comparison: its ranges, each system's rate bounds
    and each paired metric's difference bound, against what the attack proves."""
    rows: list[AuditRow] = []
    for key, shown in shared.ranges():
        expected = proven.get(key)
        if expected is None:
            continue  # unresolved: its own row fails
        status = range_status(shown, expected)
        if status is not None:
            rows.append(AuditRow(key[0], key[1], key[2] + RANGE_SUFFIX, *expected, status))
    z = z_for(shared.confidence)
    for kind, name, part in shared.slices():
        for metric, item in part.paired.items():
            keys = [quantity for quantity, _ in item.numbers(metric)]
            ranges = [proven[kind, name, q] for q in keys if (kind, name, q) in proven]
            if len(ranges) != len(keys):
                continue
            total, baseline, candidate, b, c = ranges
            for system, side, success in (
                ("baseline", item.baseline, baseline),
                ("candidate", item.candidate, candidate),
            ):
                if side.rate_bound is None:
                    continue
                expected_bound = rate_bound(success, total, pooled=side.pooled, z=z)
                status = bound_status(side.rate_bound, expected_bound)
                if status is not None:
                    rows.append(
                        AuditRow(kind, name, f"{metric}.{system}.rate_bound", None, None, status)
                    )
            if item.difference_bound is not None:
                expected_bound = difference_bound(
                    total, baseline, candidate, b, c, pooled=item.pooled, z=z
                )
                status = bound_status(item.difference_bound, expected_bound)
                if status is not None:
                    rows.append(
                        AuditRow(kind, name, f"{metric}.difference.bound", None, None, status)
                    )
    return rows


def audit(document: SharedReport | str | bytes) -> AuditResult:
    """Attack a shared report with everything it publishes; fail if a small cell shows.

    Args:
        document: A :class:`SharedReport`, or its JSON text.

    Returns:
        The :class:`AuditResult`: ``passed``, one row per hidden protected
        quantity (its proven range) and per failure, and ``table()``.

    Raises:
        ChartscoreError: ``unknown_report_format`` or ``invalid_report`` when
            the JSON is not a shared report.
    """
    return audit_with_hints(document, ())


def audit_comparison(document: SharedComparison | str | bytes) -> AuditResult:
    """Attack a shared comparison with everything it publishes, as :func:`audit` a report.

    The model is the paired one
    (:class:`~chartscore.disclosure.comparison_model.ComparisonModel`); the
    protected quantities that are not published are the hidden numbers and the
    derived ones (each system's failures, the paired table's ``both`` and
    ``neither``). It fails exactly as a shared report does.

    Raises:
        ChartscoreError: ``unknown_report_format`` or ``invalid_report`` when
            the JSON is not a shared comparison.
    """
    shared = (
        document if isinstance(document, SharedComparison) else SharedComparison.from_json(document)
    )
    return _attack(_comparison_target(shared), ())


def audit_with_hints(
    document: SharedReport | str | bytes, hints: Sequence[np.ndarray]
) -> AuditResult:
    """:func:`audit`, starting from points believed to be tables of the report.

    ``share``'s self-audit passes the feasible points its suppression found (the
    published numbers only lose members as it hides, so those points still fit).
    Each is checked row by row before use, and every range is exact whichever
    points are known: the result is :func:`audit`'s, row for row (only the
    solve count may differ).
    """
    report = document if isinstance(document, SharedReport) else SharedReport.from_json(document)
    return _attack(_report_target(report), hints)


@attrs.frozen
class _Target:
    """One shared document as the attack reads it: the same attack for every kind.

    Attributes:
        min_cell: The document's rule.
        model: Its integer model.
        published: The equalities the attack adds (each shown number's value).
        hidden: The protected quantities not shown, in the order their ranges are asked.
        rows: Failures found without a solve (small numbers shown, presentation).
        shortcut: A quantity's range from ranges already found, where an identity
            gives it (None: the solver answers).
        checks: Rows for the published ranges and bounds, against the proven ranges.
    """

    min_cell: int
    model: ReportModel
    published: Mapping[Key, int]
    hidden: tuple[Quantity, ...]
    rows: tuple[AuditRow, ...]
    shortcut: Callable[[Quantity, Mapping[Key, Range]], Range | None]
    checks: Callable[[tuple[AuditRow, ...]], list[AuditRow]]


def _small_published(
    quantities: Iterable[Quantity], values: Mapping[Key, int | None], min_cell: int
) -> list[AuditRow]:
    # A shown number (or one following from two shown) from 1 to min_cell - 1.
    rows: list[AuditRow] = []
    for quantity in quantities:
        value = values.get(quantity.key)
        if value is not None and 1 <= value < min_cell:
            rows.append(AuditRow(*quantity.key, value, value, SMALL_PUBLISHED))
    return rows


def _report_target(report: SharedReport) -> _Target:
    # The shared report: failures derived from shown parts are published too.
    check_audit_size([(len(report.by_field), report.by_stratum)], 0)  # before its model
    min_cell = report.disclosure.min_cell
    model = model_of(report)
    values = published_values(report)
    ordered = _order(model)
    rows = _small_published(ordered, values, min_cell) + list(
        _presentation_failures(report, values)
    )
    published = {key: value for key, value in values.items() if value is not None}
    return _Target(
        min_cell,
        model,
        published,
        tuple(q for q in ordered if q.key not in published),
        tuple(rows),
        lambda quantity, found: _report_shortcut(quantity, published, found),
        lambda found_rows: range_failures(report, proven_ranges(report, found_rows)),
    )


def _comparison_target(shared: SharedComparison) -> _Target:
    # The shared comparison: derived quantities (failures, both, neither) are never
    # equalities of their own; each follows from its terms.
    model = ComparisonModel(shared.disclosure.field_types)
    values = comparison_values(shared, model)
    quantities = list(model.quantities.values())
    published = {
        key: value
        for key, value in values.items()
        if value is not None and not model.quantities[key].derived
    }
    hidden = [q for q in quantities if values.get(q.key) is None]
    return _Target(
        shared.disclosure.min_cell,
        model,
        published,
        # JSON numbers first: a derived quantity with one hidden term follows from its range.
        tuple(sorted(hidden, key=lambda q: q.derived)),
        tuple(_small_published(quantities, values, shared.disclosure.min_cell)),
        lambda quantity, found: _comparison_shortcut(quantity, values, found),
        lambda found_rows: comparison_range_failures(shared, proven_ranges(shared, found_rows)),
    )


def _attack(target: _Target, hints: Sequence[np.ndarray]) -> AuditResult:
    """Every hidden number's exact range under the published numbers, and the verdict."""
    model, published, min_cell = target.model, target.published, target.min_cell
    rows = list(target.rows)
    knowledge = model.knowledge(published, min_cell)
    memory = _MEMORY.get()
    memo = None if memory is None else _attack_key(model, published, knowledge, min_cell)
    remembered = None if memory is None or memo is None else memory.get(memo)
    if remembered is None:
        solver = published_solver(
            lambda: RangeSolver(model, published, hints=hints, knowledge=knowledge)
        )
        if isinstance(solver, AuditRow):
            rows.append(solver)
            return AuditResult(False, min_cell, _sorted_rows(model, rows))
        remembered = (_attacked(solver, target), solver.solves)
        if memory is not None and memo is not None:
            _remember(memory, memo, remembered)
    answers, solves = remembered
    for quantity, answer in zip(target.hidden, answers, strict=True):
        rows.append(AuditRow(*quantity.key, *judge(answer, min_cell)))
    rows += target.checks(tuple(rows))
    passed = all(row.passed for row in rows)
    return AuditResult(passed, min_cell, _sorted_rows(model, rows), solves)


_Answers = tuple[tuple[tuple[int, int | None] | None, ...], int]
"""The attack's answers to one problem (each hidden number's range, or None: unresolved)
and how many optima it solved."""

_MEMORY: Final[ContextVar[dict[tuple[object, ...], _Answers] | None]] = ContextVar(
    "chartscore_disclosure_attacks", default=None
)
_REMEMBERED: Final = 8
"""How many problems' answers :func:`remembering_attacks` keeps (the oldest go first)."""


@contextlib.contextmanager
def remembering_attacks() -> Iterator[None]:
    """Inside the block, an audit of a problem already attacked reuses the answers.

    A problem is the model, the published numbers, the rule's rows and the min cell:
    the answers (each hidden number's exact range) are a function of them alone, so a
    document audited again with the same published numbers (``share``'s final report,
    audited again by ``share --publication``) takes them instead of solving the same
    integer programs again. Every other check of the audit (published small numbers,
    intervals, ranges and bounds against the answers) runs on the document as given.
    Outside any block, every audit solves afresh.
    """
    token = _MEMORY.set({})
    try:
        yield
    finally:
        _MEMORY.reset(token)


def _attack_key(
    model: ReportModel,
    published: Mapping[Key, int],
    knowledge: Sequence[tuple[Form, int]],
    min_cell: int,
) -> tuple[object, ...]:
    # Everything the range solver and the audit's questions read: the model's variables,
    # quantities and facts, the published numbers, the rule's rows and the min cell.
    layouts = tuple(
        (field_id, layout.offset, layout.size) for field_id, layout in model.layouts.items()
    )
    quantities = tuple(
        (key, quantity.form, quantity.derived, quantity.parts)
        for key, quantity in model.quantities.items()
    )
    return (
        model.size,
        layouts,
        quantities,
        tuple(model.inequalities),
        tuple(sorted(published.items())),
        tuple(knowledge),
        min_cell,
    )


def _remember(
    memory: dict[tuple[object, ...], _Answers], memo: tuple[object, ...], answers: _Answers
) -> None:
    while len(memory) >= _REMEMBERED:
        del memory[next(iter(memory))]
    memory[memo] = answers


def _attacked(solver: RangeSolver, target: _Target) -> tuple[Range | None, ...]:
    """Each hidden number's exact range under the solver (None: unresolved)."""
    hidden = target.hidden
    with contextlib.suppress(Unresolved, Inconsistent):
        solver.spread([q.form for q in hidden])  # a speed-up only: ranges are exact without it
    found: dict[Key, Range] = {}
    asked = [0]

    def ranged(quantity: Quantity) -> Range | None:
        # One hidden number's range (None: unresolved); each one exact, so the order and
        # the split over two processes cannot change any.
        step(AUDITING, asked[0], len(hidden))
        asked[0] += 1
        try:
            found[quantity.key] = target.shortcut(quantity, found) or solver.range_of(quantity.form)
        except Unresolved:
            return None
        return found[quantity.key]

    worth = solver.widest >= _WIDE
    return tuple(split.answers(ranged, hidden, worth=worth))


__all__ = [
    "AUDITING",
    "BOUND_NARROW",
    "BOUND_WIDE",
    "DERIVABLE",
    "DISCLOSED",
    "INCONSISTENT",
    "INTERVAL_PUBLISHED",
    "PASSING",
    "PROTECTED",
    "RANGE_NARROW",
    "RANGE_WIDE",
    "SMALL_PUBLISHED",
    "STATUSES",
    "UNRESOLVED",
    "WHOLE",
    "AuditResult",
    "AuditRow",
    "Published",
    "audit",
    "audit_comparison",
    "audit_with_hints",
    "bound_status",
    "comparison_range_failures",
    "hidden_status",
    "judge",
    "proven_ranges",
    "published_solver",
    "range_failures",
    "range_status",
    "ranges_of",
    "remembering_attacks",
]
