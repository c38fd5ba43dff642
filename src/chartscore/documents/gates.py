"""Release gates: pass or fail a report or a comparison against written thresholds.

A gates file is TOML, one ``[[gate]]`` table per gate::

    [[gate]]
    slice = "overall"                 # or "field:<field id>", "type:<field type>",
    metric = "normalized_agreement"   # "stratum:site=A", "stratum:site=A/type:date"
    min_lower = 0.80                  # the Wilson lower bound must be >= 0.80

    [[gate]]
    slice = "overall"
    metric = "normalized_agreement"
    min_difference_lower = -0.02      # comparison: candidate no worse than 2 points
    level = "warning"                 # "required" (the default) or "warning"

    [[gate]]
    slice = "field:hx.smoking"
    metric = "sensitivity"
    label = "current"                 # one declared label's figure (field slices only)
    min_lower = 0.80

Rules (exactly one per gate):

- ``min_lower``: the metric's 95% interval lower bound is at least the
  threshold (metrics where higher is better, and kappa);
- ``max_upper``: the upper bound is at most the threshold (error metrics);
- ``min_upper``: the upper bound is at least the threshold (the metrics of
  ``min_lower``): the data do not exclude a rate of the threshold, as CMS's
  Hospital IQR chart-abstraction validation asks of the agreement rate
  (upper 95% bound >= 0.75);
- ``max_lower``: the lower bound is at most the threshold (error metrics);
- ``min_difference_lower``: a comparison's paired difference (candidate -
  baseline) has a lower bound at least the threshold (paired metrics where
  higher is better), e.g. -0.02 for non-inferiority with a 2-point margin;
- ``max_difference_upper``: the difference's upper bound is at most the
  threshold (paired error metrics), e.g. 0.02.

On a comparison, ``min_lower``, ``max_upper``, ``min_upper`` and ``max_lower``
read the candidate's interval.
On a pooled slice (``overall``, ``type:...``, ``stratum:...``) every rule reads the
case-clustered interval, whose rows of one chart are not taken as independent;
on a field slice, the Wilson (or Newcombe) interval. The result table names the
interval each gate read. On a shared report's field slice, a rate with a
suppressed part is read through its published ranges (``wilson bound``): the
gate's worst figure over every count pair they allow, which holds whichever
pair is the true one. For ``min_lower`` and ``max_upper`` that is the widest
Wilson interval's bound; for ``min_upper`` the smallest upper bound, for
``max_lower`` the largest lower bound. A gate whose figure is null (no trials,
an undefined kappa, a suppressed number without ranges, a suppressed rate of a
pooled slice) fails: it cannot be shown to pass. A figure equal to its
threshold passes. Each bound is one side of a two-sided interval at the
document's confidence level (or the one asked for), so at 0.95 a gate is a
one-sided test at 97.5%. :func:`evaluate` returns the results; their exit
status is 0 when every required gate passes and 3 when one fails.

Every figure a gate reads is recomputed from the document's counts and
published design effects (Wilson, clustered and Newcombe intervals); only
kappa, whose table no document holds, is read as loaded.

On a shared comparison, a field slice's difference with a suppressed part is
read through its published ranges (``newcombe bound``: the widest Newcombe
interval over every paired table they allow); a pooled one fails.

Value-free: imports only ``comparison``, ``documents``, ``report``, ``tally``,
``clustered``, ``stats``, ``clopper_pearson``, ``reliability``, ``errors`` and the shared
comparison's reader.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Final, Protocol, TypeVar, cast

import attrs

from chartscore import metrics as catalog
from chartscore.documents import is_document
from chartscore.documents._gate_errors import missing_metric
from chartscore.documents.agreement import Agreement
from chartscore.documents.agreement_gates import (
    AGREEMENT_COEFFICIENTS,
    AGREEMENT_GATE_METRICS,
    COEFFICIENT_KIND,
    GOLD_GATE_METRICS,
    PAIR_GATE_METRICS,
    POOLED_WILSON,
    agreement_figure,
    valid_gate_label,
)
from chartscore.documents.comparison import (
    FIELD_TYPE_NAMES,
    PAIRED_METRICS,
    Comparison,
    ComparisonSlice,
    PairedMetricResult,
)
from chartscore.documents.plugin_layout import is_plugin_metric
from chartscore.documents.report import (
    MAX_LABEL_NAME,
    STRATUM_NAME,
    MetricResult,
    UncertaintyResult,
)
from chartscore.documents.shared_comparison import (
    SharedComparison,
    SharedComparisonSlice,
    SharedPaired,
    difference_bound,
)
from chartscore.documents.tally import (
    ERROR_METRICS,
    LABEL_METRICS,
    Binomial,
)
from chartscore.errors import (
    GATE_KEYS,
    GATE_RULES,
    ChartscoreError,
    ErrorCode,
    InputKind,
    caller_items,
    closest,
    valid_field_id,
)
from chartscore.stats.binomial import innermost_wilson, widest_wilson
from chartscore.stats.clopper_pearson import (
    clopper_pearson,
    innermost_clopper_pearson,
    widest_clopper_pearson,
)
from chartscore.stats.clustered import (
    CONFIDENCE_LEVELS,
    clustered_newcombe,
    clustered_wilson,
    z_for,
)
from chartscore.stats.reliability import MIN_COEFFICIENT_PAIRS, too_few_pairs

EXIT_GATES_PASSED: Final = 0
EXIT_REQUIRED_GATE_FAILED: Final = 3

MAX_GATES_BYTES: Final = 1 << 20
"""A gates file larger than 1 MiB is refused (``invalid_gates``)."""

MAX_GATES: Final = 1000
"""At most this many gates in one file."""

LEVELS: Final = ("required", "warning")
INNER_RULES: Final = ("min_upper", "max_lower")
"""The rules that read an interval's inner side: the upper bound of a rate where higher is
better, the lower bound of an error rate (docs/compare.md, CMS's validation rule)."""
RULES: Final = GATE_RULES
INTERVAL_KINDS: Final = (
    "wilson",
    "wilson bound",
    "clustered",
    "newcombe",
    "newcombe bound",
    "clustered newcombe",
    "kappa",
    "gwet",
    "jackknife",
    "hanley-mcneil",
    "delong",
    "clopper-pearson",
    "clopper-pearson bound",
    POOLED_WILSON,
)
"""The intervals a gate may read: plain on field slices, case-clustered on pooled slices."""
COEFFICIENT_GATES: Final = ("kappa", "ac1", "ac2", "alpha")
"""Chance-corrected coefficients a gate may name (``min_lower``, thresholds from -1)."""
GATEABLE_METRICS: Final = frozenset(
    [
        *catalog.names(lambda m: m.pairing != catalog.GOLD_ONLY),
        *COEFFICIENT_GATES,
        "uncertainty_auroc",
        *AGREEMENT_GATE_METRICS,
    ]
)
"""Metrics a gate may name. ``majority_baseline`` describes the gold set, not a system.
An agreement document's (:mod:`~chartscore.documents.agreement_gates`) are among them."""

WILSON_BOUND: Final = "wilson bound"
NEWCOMBE_BOUND: Final = "newcombe bound"
"""The interval a gate reads for a shared report's suppressed field rate."""
CLOPPER_PEARSON: Final = "clopper-pearson"
CLOPPER_PEARSON_BOUND: Final = "clopper-pearson bound"
GATE_INTERVALS: Final = ("wilson", "exact")
"""``--gate-interval``: field-slice rates read Wilson's interval (the report's) or
Clopper-Pearson's, whose false-pass rate never exceeds the nominal one."""
TOO_FEW_PAIRS: Final = "too few pairs"
"""The reason a gate on a coefficient from fewer than ``MIN_COEFFICIENT_PAIRS`` pairs fails."""
OTHER_LEVEL: Final = "written at another level"
"""The reason a gate on a coefficient fails at a confidence other than the document's: its
interval is written at the document's level, and its table (which may hold patient values)
is not in the document, so it cannot be recomputed."""
_WRITTEN_KINDS: Final = frozenset({"kappa", "gwet", "jackknife"})
"""The intervals read as the document wrote them (kappa, AC1, AC2, alpha, Fleiss' kappa)."""

_S = TypeVar("_S")
_GATE_KEYS: Final = frozenset(GATE_KEYS)
_TOML_LINE: Final = re.compile(r"\(at line (\d+), column \d+\)\Z")
# A [[gate]] header on its own line (the key bare or quoted, a comment allowed after it).
_GATE_HEADER: Final = re.compile(
    r"""^[ \t]*\[\[[ \t]*(?:gate|"gate"|'gate')[ \t]*\]\][ \t]*(?:#.*)?$""", re.MULTILINE
)


# --------------------------------------------------------------------------- gates


@attrs.frozen
class Gate:
    """One gate from a gates file.

    Attributes:
        number: Its 1-based position in the file (errors and the table name it).
        line: The line of the gates file where its ``[[gate]]`` header stands
            (errors name it), or None when that cannot be told (an inline
            array of gates). Not part of a gate's equality.
        slice: ``"overall"``, ``"field:<field id>"`` or ``"type:<field type>"``.
        metric: A metric name, ``"kappa"``, ``"ac1"``, ``"ac2"``, ``"alpha"`` or
            ``"uncertainty_auroc"``.
        rule: One of :data:`RULES`.
        threshold: The rule's threshold.
        level: ``"required"`` or ``"warning"``.
        label: A declared label (``sensitivity``, ``specificity``, ``ppv``,
            ``npv`` on a field slice): that label's figure; ``""`` for the
            slice's own (its labels pooled).
    """

    number: int
    slice: str
    metric: str
    rule: str
    threshold: float
    level: str = "required"
    line: int | None = attrs.field(default=None, eq=False)
    label: str = ""

    @property
    def required(self) -> bool:
        """Whether failing this gate fails the run (exit status 3)."""
        return self.level == "required"

    @property
    def is_difference(self) -> bool:
        """Whether the rule reads a comparison's paired difference."""
        return self.rule in ("min_difference_lower", "max_difference_upper")

    @property
    def reads_lower(self) -> bool:
        """Whether the rule reads an interval's lower bound (else its upper bound)."""
        return self.rule in ("min_lower", "max_lower", "min_difference_lower")

    @property
    def at_least(self) -> bool:
        """Whether the figure must be at least the threshold (the ``min_`` rules), else at most."""
        return self.rule.startswith("min_")

    def passes(self, observed: float | None) -> bool:
        """``observed >= threshold`` for the min rules, ``<=`` for the max rules; null fails."""
        if observed is None:
            return False
        return observed >= self.threshold if self.at_least else observed <= self.threshold


def parse_gates_bytes(data: bytes) -> tuple[Gate, ...]:
    """Check a gates file's bytes (UTF-8, an optional byte order mark) and return its gates.

    ``chartscore.io.load_gates`` reads the file; this checks what it read.

    Raises:
        ChartscoreError: ``invalid_gates`` when ``data`` is not exactly
            ``bytes``; ``not_utf8`` (gates); or any code of :func:`parse_gates`.
    """
    if type(data) is not bytes:
        raise ChartscoreError(ErrorCode.INVALID_GATES, input=InputKind.GATES)
    text = ""
    failed = False
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        failed = True
    if failed:
        raise ChartscoreError(ErrorCode.NOT_UTF8, input=InputKind.GATES)
    return parse_gates(text)


def parse_gates(text: str) -> tuple[Gate, ...]:
    """Check the text of a gates file and return its gates, in file order.

    Raises:
        ChartscoreError: ``invalid_toml`` (with the line when TOML gives it),
            ``number_out_of_range`` (an integer of over 4,300 digits),
            ``nesting_too_deep``, ``invalid_gates``, ``unknown_key`` (a key at
            the top or in a gate), ``missing_key``, ``invalid_gate``,
            ``invalid_gate_rule``, ``invalid_gate_threshold``. Each error in a
            gate names the gate's number; none echoes the file's text.
    """
    if type(text) is not str:
        raise ChartscoreError(ErrorCode.INVALID_GATES, input=InputKind.GATES)
    document: object = None
    code: ErrorCode | None = None
    line: int | None = None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        code = ErrorCode.INVALID_TOML
        found = _TOML_LINE.search(str(error))  # only the digits are kept
        line = int(found.group(1)) if found else None
    except RecursionError:
        code = ErrorCode.NESTING_TOO_DEEP
    except ValueError:  # an integer beyond Python's 4,300-digit conversion limit
        code = ErrorCode.NUMBER_OUT_OF_RANGE
    if code is not None:
        raise ChartscoreError(code, input=InputKind.GATES, line=line)
    assert isinstance(document, dict)
    unknown = [key for key in document if key != "gate"]
    if unknown:
        raise ChartscoreError(ErrorCode.UNKNOWN_KEY, input=InputKind.GATES, key=unknown[0])
    tables = document.get("gate")
    if not isinstance(tables, list) or not 1 <= len(tables) <= MAX_GATES:
        raise ChartscoreError(ErrorCode.INVALID_GATES, input=InputKind.GATES)
    lines = gate_lines(text, len(tables))
    return tuple(
        _gate(number, table, line)
        for number, (table, line) in enumerate(zip(tables, lines, strict=True), start=1)
    )


def has_gate_header(text: str) -> bool:
    """Whether ``text`` has a ``[[gate]]`` header on a line of its own (a gates file's shape)."""
    return _GATE_HEADER.search(text) is not None


def gate_lines(text: str, count: int) -> list[int | None]:
    """The line of each gate's ``[[gate]]`` header, so that errors can point at it.

    TOML parsers give no positions, so the headers are found by a scan of the
    lines. If the scan does not find exactly one header per gate (gates written
    as an inline array, or a header-like line inside a multi-line string), no
    line is given rather than a wrong one.
    """
    starts = [text.count("\n", 0, found.start()) + 1 for found in _GATE_HEADER.finditer(text)]
    return list(starts) if len(starts) == count else [None] * count


def _gate(number: int, table: object, line: int | None = None) -> Gate:
    def fail(
        code: ErrorCode,
        *,
        key: str | None = None,
        setting: str | None = None,
        given: object = None,
        valid_range: tuple[float, float] | None = None,
        suggestion: str | None = None,
    ) -> ChartscoreError:
        # The gates file holds no patient data: its names are shown (plain words only).
        return ChartscoreError(
            code,
            gate=number,
            line=line,
            key=key,
            setting=setting,
            given=given if type(given) is str else None,
            valid_range=valid_range,
            suggestion=suggestion,
        )

    if not isinstance(table, dict):
        raise ChartscoreError(ErrorCode.INVALID_GATES, input=InputKind.GATES)
    unknown = [key for key in table if key not in _GATE_KEYS]
    if unknown:
        raise fail(ErrorCode.UNKNOWN_KEY, key=unknown[0], suggestion=closest(unknown[0], GATE_KEYS))
    for required in ("slice", "metric"):
        if required not in table:
            raise fail(ErrorCode.MISSING_KEY, key=required)
    where, metric, level = table["slice"], table["metric"], table.get("level", "required")
    if not (type(where) is str and _valid_slice(where)):
        raise fail(
            ErrorCode.INVALID_GATE, setting="slice", given=where, suggestion=_slice_guess(where)
        )
    if not (type(metric) is str and (metric in GATEABLE_METRICS or is_plugin_metric(metric))):
        raise fail(
            ErrorCode.INVALID_GATE,
            setting="metric",
            given=metric,
            suggestion=_metric_guess(metric),
        )
    if not (type(level) is str and level in LEVELS):
        raise fail(
            ErrorCode.INVALID_GATE, setting="level", given=level, suggestion=closest(level, LEVELS)
        )
    rules = [rule for rule in RULES if rule in table]
    if len(rules) != 1 or not _rule_fits(rules[0], metric):
        raise fail(ErrorCode.INVALID_GATE_RULE)
    rule = rules[0]
    label = table.get("label", "")
    rater_metric = metric in PAIR_GATE_METRICS or metric in GOLD_GATE_METRICS
    if rater_metric and "label" not in table:  # which pair, which rater
        raise fail(ErrorCode.MISSING_KEY, key="label")
    if rater_metric:
        # A pair (a~b) or a rater: the caller's labels, never echoed.
        fits = valid_gate_label(metric, label) and (
            metric in GOLD_GATE_METRICS or where.startswith("field:")
        )
        if not fits:
            raise fail(ErrorCode.INVALID_GATE, setting="label")
    elif "label" in table and not (
        type(label) is str
        and 0 < len(label) <= MAX_LABEL_NAME
        and metric in LABEL_METRICS
        and where.startswith("field:")
        and rule in ("min_lower", "max_upper", "min_upper", "max_lower")
    ):
        raise fail(ErrorCode.INVALID_GATE, setting="label")  # the caller's words: never echoed
    threshold = table[rule]
    low = (
        -1.0
        if rule in ("min_difference_lower", "max_difference_upper")
        or metric in COEFFICIENT_GATES
        or metric in AGREEMENT_COEFFICIENTS
        else 0.0
    )
    # Compare before converting: an int too large for a float cannot be in range.
    in_range = (type(threshold) is int or type(threshold) is float) and low <= threshold <= 1.0
    if not (in_range and math.isfinite(float(threshold))):
        raise fail(ErrorCode.INVALID_GATE_THRESHOLD, setting=rule, valid_range=(low, 1.0))
    return Gate(number, where, metric, rule, float(threshold), level, line, label)


_REPORT_GATE_METRICS: Final = GATEABLE_METRICS - frozenset(AGREEMENT_GATE_METRICS)
_AGREEMENT_ONLY_METRICS: Final = GATEABLE_METRICS - _REPORT_GATE_METRICS


def _metric_guess(metric: object) -> str | None:
    """A metric close to a mistyped one: a report's, unless an agreement's own is much closer.

    ``agrement`` keeps meaning ``exact_agreement`` (not ``pair_agreement``), while
    ``fleiss_kapa`` means ``fleiss_kappa``: an agreement name is suggested only when its
    similarity is at least 0.8 and above the closest report metric's.
    """
    if type(metric) is not str:
        return None
    report = closest(metric, _REPORT_GATE_METRICS)
    agreement = closest(metric, _AGREEMENT_ONLY_METRICS)
    if agreement is None:
        return report
    ratio = difflib.SequenceMatcher(a=agreement, b=metric).ratio()
    below = report is None or ratio > difflib.SequenceMatcher(a=report, b=metric).ratio()
    return agreement if ratio >= 0.8 and below else report


def _valid_slice(where: str) -> bool:
    if where == "overall":
        return True
    kind, _, name = where.partition(":")
    if kind == "stratum":  # a stratum (site=A), or its slice of one type (site=A/type:date)
        stratum, cut, type_slice = name.partition("/")
        if STRATUM_NAME.fullmatch(stratum) is None:
            return False
        kind, _, type_name = type_slice.partition(":")
        return not cut or (kind == "type" and type_name in FIELD_TYPE_NAMES)
    return (kind == "field" and valid_field_id(name)) or (
        kind == "type" and name in FIELD_TYPE_NAMES
    )


_SLICE_KINDS: Final = ("field", "type", "stratum")


def _slice_guess(where: object) -> str | None:
    """A valid slice close to ``where`` (``overal``, ``feild:x``, ``type:numbr``), or None."""
    if type(where) is not str:
        return None
    kind, colon, name = where.partition(":")
    if not colon:
        return closest(where, ("overall",))
    known_kind = kind if kind in _SLICE_KINDS else closest(kind, _SLICE_KINDS)
    if known_kind == "type":
        type_name = name if name in FIELD_TYPE_NAMES else closest(name, FIELD_TYPE_NAMES)
        return None if type_name is None else f"type:{type_name}"
    guess = None if known_kind is None else f"{known_kind}:{name}"
    return guess if guess is not None and _valid_slice(guess) else None


def _rule_fits(rule: str, metric: str) -> bool:
    if is_plugin_metric(metric):
        return True  # a plugin label has no built-in direction: the gate's rule gives it
    error = metric in ERROR_METRICS
    if rule in ("min_lower", "min_upper"):
        return not error
    if rule in ("max_upper", "max_lower"):
        return error and metric not in COEFFICIENT_GATES
    paired = metric in PAIRED_METRICS
    if rule == "min_difference_lower":
        return paired and not error
    return paired and error  # max_difference_upper


# --------------------------------------------------------------------------- documents


class _Interval(Protocol):
    @property
    def interval(self) -> tuple[float, float] | None: ...


class Counted(Protocol):
    """A binomial figure's counts, in a report, a shared report (None: suppressed) or a
    comparison: what a gate, a table or a note reads of it."""

    @property
    def success_count(self) -> int | None: ...

    @property
    def total_count(self) -> int | None: ...


class ReportSlice(Protocol):
    """What a gate reads in a report slice (a :class:`~chartscore.documents.report.SliceReport`)."""

    @property
    def metrics(self) -> Mapping[str, Counted]: ...

    @property
    def kappa(self) -> _Interval | None: ...


class ReportLike(Protocol):
    """A report-shaped document: :class:`~chartscore.documents.report.Report` or a shared report."""

    @property
    def overall(self) -> ReportSlice: ...

    @property
    def by_field(self) -> Mapping[str, ReportSlice]: ...

    @property
    def by_field_type(self) -> Mapping[str, ReportSlice]: ...


Document = ReportLike | Comparison | SharedComparison | Agreement


@attrs.frozen
class GateResult:
    """One gate checked against one document."""

    gate: Gate
    observed: float | None
    passed: bool
    interval: str = "wilson"
    """Which interval the gate read: one of :data:`INTERVAL_KINDS`."""
    reason: str = ""
    """Why the gate cannot pass whatever its figure (:data:`TOO_FEW_PAIRS`,
    :data:`OTHER_LEVEL`); ``""`` otherwise."""


@attrs.frozen
class GateResults:
    """Every gate's result, in file order."""

    results: tuple[GateResult, ...]
    confidence: float = 0.95
    """The confidence level of the intervals the gates read."""
    gate_interval: str = "wilson"
    """The field-slice rate interval the gates read (:data:`GATE_INTERVALS`)."""

    @property
    def exit_status(self) -> int:
        """0 when every required gate passes (warnings may fail); 3 otherwise."""
        if any(r.gate.required and not r.passed for r in self.results):
            return EXIT_REQUIRED_GATE_FAILED
        return EXIT_GATES_PASSED

    def table(self) -> str:
        """A fixed-width table: one row per gate, then a one-line summary.

        Holds gate numbers, slices (``overall``, field ids, type names), metric
        and rule names, thresholds, observed figures and levels: nothing else.
        """
        header = (
            "gate",
            "slice",
            "metric",
            "rule",
            "threshold",
            "observed",
            "interval",
            "level",
            "result",
        )
        rows = [header]
        for result in self.results:
            gate = result.gate
            sign = ">=" if gate.at_least else "<="
            rows.append(
                (
                    str(gate.number),
                    gate.slice,
                    gate.metric,
                    gate.rule,
                    f"{sign} {_number(gate.threshold)}",
                    _observed(result.observed, gate.threshold),
                    result.reason or result.interval,
                    gate.level,
                    _verdict(result),
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        right = {0, 4, 5}
        lines = [
            "  ".join(
                cell.rjust(width) if i in right else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
            for row in rows
        ]
        lines.append(self._summary())
        percent = f"{100 * self.confidence:g}"
        one_sided = f"{100 - (100 - 100 * self.confidence) / 2:g}"
        lines.append(
            f"bounds: one side of a two-sided {percent}% interval, so each gate is a one-sided"
        )
        lines.append(f"{one_sided}% test; a figure equal to its threshold passes.")
        if any(result.interval == WILSON_BOUND for result in self.results):
            lines.append("wilson bound: a suppressed rate of a shared report, read through its")
            lines.append(
                "published ranges: the widest Wilson interval over every count they allow."
            )
        if any(result.interval == NEWCOMBE_BOUND for result in self.results):
            lines.append("newcombe bound: a suppressed difference of a shared comparison, read")
            lines.append(
                "through its published ranges: the widest Newcombe interval over every table."
            )
        if any(result.interval == CLOPPER_PEARSON_BOUND for result in self.results):
            lines.append("clopper-pearson bound: a suppressed rate of a shared report, read")
            lines.append("through its published ranges: the widest Clopper-Pearson interval.")
        if any(
            result.interval in (WILSON_BOUND, CLOPPER_PEARSON_BOUND)
            and result.gate.rule in INNER_RULES
            for result in self.results
        ):
            lines.append("min_upper and max_lower read such a rate's smallest upper (largest")
            lines.append("lower) bound over every count allowed: it holds whichever is true.")
        if any(result.interval == POOLED_WILSON for result in self.results):
            lines.append("pooled wilson: an agreement document's overall rate, its rows taken as")
            lines.append("independent (no design effect is published): gate a rater's report for")
            lines.append("the case-clustered bound.")
        if any(result.reason == TOO_FEW_PAIRS for result in self.results):
            lines.append(
                f"too few pairs: a coefficient from fewer than {MIN_COEFFICIENT_PAIRS} pairs has"
            )
            lines.append("no reliable interval: it cannot be shown to pass, so it fails.")
        if any(result.reason == OTHER_LEVEL for result in self.results):
            lines.append("written at another level: a coefficient's interval is the one the")
            lines.append("document wrote at its own level (its table is not in it): it cannot")
            lines.append("be shown to pass at this one, so it fails. Write it with --confidence.")
        if any(result.observed is None and not result.reason for result in self.results):
            lines.append("null: the document has no figure for the gate (no trials, an undefined")
            lines.append("kappa or a suppressed number): it cannot be shown to pass, so it fails.")
        return "\n".join(lines) + "\n"

    def _summary(self) -> str:
        failed_required = sum(1 for r in self.results if r.gate.required and not r.passed)
        failed_warning = sum(1 for r in self.results if not r.gate.required and not r.passed)
        passed = len(self.results) - failed_required - failed_warning
        verdict = "FAILED" if failed_required else "passed"
        return (
            f"gates {verdict}: {passed} of {len(self.results)} passed; "
            f"failed: {failed_required} required, {failed_warning} warning"
        )


def format_threshold(value: float) -> str:
    """A threshold as the gates table prints it: ``0.8``, ``-0.02``, ``1``."""
    return _number(value)


def format_observed(observed: float | None, threshold: float) -> str:
    """A gate's figure as the table prints it: four decimals, or enough to tell it from
    the threshold; ``null`` for none."""
    return _observed(observed, threshold)


def _verdict(result: GateResult) -> str:
    if result.passed:
        return "pass"
    return "FAIL" if result.gate.required else "warn"


def _number(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _observed(observed: float | None, threshold: float) -> str:
    """Four decimals, or as many more as it takes to tell the figure from the threshold."""
    if observed is None:
        return "null"
    for digits in range(4, 18):
        text = f"{observed:.{digits}f}"
        if observed == threshold or text != f"{threshold:.{digits}f}":
            return text
    return repr(observed)  # pragma: no cover - 17 decimals always tell two floats in [-1, 1] apart


def evaluate(
    document: Document,
    gates: Sequence[Gate],
    *,
    confidence: float | None = None,
    interval: str = "wilson",
) -> GateResults:
    """Check every gate against a report or a comparison.

    Args:
        document: A :class:`~chartscore.documents.report.Report`, shared report or
            :class:`~chartscore.documents.comparison.Comparison` (exactly: checked by type).
        gates: The :class:`Gate` objects of :func:`parse_gates`, as a list, a
            tuple or any iterable (read once, inside a guard).
        confidence: The level of the intervals the gates read (0.9, 0.95 or
            0.99), recomputed from the counts; by default the document's own. A
            coefficient's interval (kappa, AC1, AC2, alpha) is the document's, not
            recomputable: at another level its gate fails (:data:`OTHER_LEVEL`).
        interval: ``"wilson"`` (the report's interval) or ``"exact"``:
            Clopper-Pearson's for a field slice's rate (docs/compare.md,
            "The exact error of a gate"); pooled slices, differences and
            coefficients read the same intervals either way.

    Raises:
        ChartscoreError: ``gate_slice_missing`` (naming the gate, and the field
            id when it is a valid one), ``gate_metric_missing`` or
            ``gate_needs_comparison``: a gates file that does not fit the
            document, never a failed gate; ``usage`` when ``document`` is not
            a document, ``gates`` is not an iterable of :class:`Gate`
            (or iterating it failed: the caller's exception is dropped),
            ``confidence`` is not exactly one of the three levels, or
            ``interval`` not one of :data:`GATE_INTERVALS`.
    """
    if not (is_document(document) or type(document) is Agreement):
        raise ChartscoreError(ErrorCode.USAGE)
    own = getattr(document, "confidence", 0.95)  # the level the document wrote
    if confidence is None:
        confidence = own
    if type(confidence) is not float or confidence not in CONFIDENCE_LEVELS:
        raise ChartscoreError(ErrorCode.USAGE)
    if type(interval) is not str or interval not in GATE_INTERVALS:
        raise ChartscoreError(ErrorCode.USAGE)
    reading = _Reading(z_for(confidence), interval == "exact")
    written = confidence == own
    results = []
    for gate in _read_gates(gates):
        inner = gate.rule in INNER_RULES
        observed, kind = _figure(document, gate, attrs.evolve(reading, inner=inner))
        if kind == TOO_FEW_PAIRS:
            results.append(GateResult(gate, None, False, _COEFFICIENT_KINDS[gate.metric], kind))
        elif kind in _WRITTEN_KINDS and not written:
            # Read at the document's level, its bound would be another test than the one
            # stated (a 95% bound passed as a 99% one): no figure at this level.
            results.append(GateResult(gate, None, False, kind, OTHER_LEVEL))
        else:
            results.append(GateResult(gate, observed, gate.passes(observed), kind))
    return GateResults(tuple(results), confidence, interval)


@attrs.frozen
class _Reading:
    # How a gate reads its figure: the quantile, Clopper-Pearson for field-slice rates, and
    # whether the rule reads an interval's inner side (min_upper, max_lower): a suppressed
    # rate's bound is then the smallest upper bound (the largest lower) over its ranges.
    z: float
    exact: bool
    inner: bool = False


_COEFFICIENT_KINDS: Final = {
    "kappa": "kappa",
    "ac1": "gwet",
    "ac2": "gwet",
    "alpha": "jackknife",
    **COEFFICIENT_KIND,
}


def _reliable(coefficient: object) -> bool:
    # A coefficient's interval is read only from enough pairs (suppressed pairs: not shown).
    pairs = getattr(coefficient, "pairs", None)
    return type(pairs) is int and not too_few_pairs(pairs)


def _read_gates(gates: object) -> tuple[Gate, ...]:
    # A list or tuple is read directly (that runs no caller code); any other
    # iterable inside a guard, whose exception is dropped, never chained.
    items = caller_items(gates)
    if items is None:
        raise ChartscoreError(ErrorCode.USAGE)
    for gate in items:
        if type(gate) is not Gate:
            raise ChartscoreError(ErrorCode.USAGE)
    return items  # type: ignore[return-value]


def _figure(document: Document, gate: Gate, reading: _Reading) -> tuple[float | None, str]:
    pooled = not gate.slice.startswith("field:")
    if isinstance(document, Agreement):  # exactly one: evaluate checked the type
        if gate.is_difference:
            raise ChartscoreError(ErrorCode.GATE_NEEDS_COMPARISON, gate=gate.number, line=gate.line)
        interval, kind = agreement_figure(document, gate, z=reading.z, exact=reading.exact)
    elif isinstance(document, SharedComparison):
        if gate.slice.startswith("stratum:"):
            raise ChartscoreError(ErrorCode.GATE_SLICE_MISSING, gate=gate.number, line=gate.line)
        shared = _slice(document.overall, document.by_field, document.by_field_type, gate)
        interval, kind = _shared_comparison_interval(shared, gate, reading, pooled)
    elif isinstance(document, Comparison):
        if gate.slice.startswith("stratum:"):  # pooled paired stratum slices (no type slices)
            part = cast("ComparisonSlice", _stratum_slice(document, gate))
        else:
            part = _slice(document.overall, document.by_field, document.by_field_type, gate)
        interval, kind = _comparison_interval(part, gate, reading, pooled)
    else:
        if gate.is_difference:
            raise ChartscoreError(ErrorCode.GATE_NEEDS_COMPARISON, gate=gate.number, line=gate.line)
        if gate.slice.startswith("stratum:"):
            report_part = cast("ReportSlice", _stratum_slice(document, gate))
        else:
            report_part = _slice(document.overall, document.by_field, document.by_field_type, gate)
        interval, kind = _report_interval(report_part, gate, reading, pooled)
    if interval is None:
        return None, kind
    return (interval[0] if gate.reads_lower else interval[1]), kind


def _stratum_slice(document: object, gate: Gate) -> object:
    # A report's stratum slice; a document without stratum slices (a shared report, a
    # comparison) is missing it.
    stratum, _, type_slice = gate.slice.removeprefix("stratum:").partition("/")
    part: object = None
    if type_slice:
        part = getattr(document, "by_stratum_field_type", {}).get(stratum, {}).get(type_slice[5:])
    else:
        part = getattr(document, "by_stratum", {}).get(stratum)
    if part is None:
        raise ChartscoreError(ErrorCode.GATE_SLICE_MISSING, gate=gate.number, line=gate.line)
    return part


def _slice(overall: _S, by_field: Mapping[str, _S], by_type: Mapping[str, _S], gate: Gate) -> _S:
    kind, _, name = gate.slice.partition(":")
    if kind == "overall":
        return overall
    part = (by_field if kind == "field" else by_type).get(name)
    if part is None:
        raise _slice_missing(gate, kind, name, by_field)
    return part


def _slice_missing(gate: Gate, kind: str, name: str, field_ids: Iterable[str]) -> ChartscoreError:
    # ``gate_slice_missing``, naming the field id (a type name is not one) and the closest
    # known field: field ids are schema names, not data, so a close one may be named.
    field_id = name if kind == "field" else None
    guess = closest(name, field_ids) if kind == "field" else None
    return ChartscoreError(
        ErrorCode.GATE_SLICE_MISSING,
        gate=gate.number,
        line=gate.line,
        field_id=field_id,
        suggestion=None if guess is None else f"field:{guess}",
    )


def refuse_unknown_fields(gates: Sequence[Gate], field_ids: Collection[str]) -> None:
    """Refuse, before any scoring, a gate on a field slice no document could have.

    A report's or a comparison's field slices are fields of its schema: a gate naming a
    field outside ``field_ids`` (the schema's) could never be checked.

    Raises:
        ChartscoreError: ``gate_slice_missing`` for the first such gate, as
            :func:`evaluate` would raise it once the document is computed.
    """
    for gate in gates:
        kind, _, name = gate.slice.partition(":")
        if kind == "field" and name not in field_ids:
            raise _slice_missing(gate, kind, name, field_ids)


def _report_interval(
    part: ReportSlice, gate: Gate, reading: _Reading, pooled: bool
) -> tuple[tuple[float, float] | None, str]:
    if gate.metric == "kappa":
        return _reliable_interval(part.kappa, gate, "kappa")
    extra = _validation_interval(part, gate, reading)
    if extra is not None:
        return extra
    metric = part.metrics.get(gate.metric)
    if metric is None:
        raise missing_metric(gate, part.metrics)
    return _rate_interval(metric, reading, pooled)


def _reliable_interval(
    figure: _Interval | None, gate: Gate, kind: str
) -> tuple[tuple[float, float] | None, str]:
    """The interval a kappa, AC1, AC2 or alpha gate reads, and its kind.

    Each reads its figure alike, in a report or (kappa) a comparison's candidate:
    refused when the slice lacks it, no interval where too few pairs make it
    unreliable, else the figure's own interval.
    """
    if figure is None:
        raise missing_metric(gate)
    if not _reliable(figure):
        return None, TOO_FEW_PAIRS
    return figure.interval, kind


def _validation_interval(
    part: ReportSlice, gate: Gate, reading: _Reading
) -> tuple[tuple[float, float] | None, str] | None:
    # A report's label, coefficient and uncertainty figures (docs/metrics.md); None for the rest.
    # A shared report holds its labels' rates and its coefficients, not a gate's AUROC (its
    # published interval is at the document's level only); a comparison holds none of them.
    z = reading.z
    if gate.label:
        labels = getattr(part, "labels", None)
        if not labels or gate.label not in labels:
            raise missing_metric(gate)
        return _rate_interval(labels[gate.label].metrics[gate.metric], reading, False)
    if gate.metric in ("ac1", "ac2", "alpha"):
        coefficient = (getattr(part, "coefficients", None) or {}).get(gate.metric)
        return _reliable_interval(coefficient, gate, _COEFFICIENT_KINDS[gate.metric])
    if gate.metric == "uncertainty_auroc":
        uncertainty = getattr(part, "uncertainty", None)
        if type(uncertainty) is not UncertaintyResult:  # none, or a shared report's
            raise missing_metric(gate)
        kind = "delong" if uncertainty.delong else "hanley-mcneil"
        return attrs.evolve(uncertainty, z=z).auroc_interval, kind
    return None


def _shared_comparison_interval(
    part: SharedComparisonSlice, gate: Gate, reading: _Reading, pooled: bool
) -> tuple[tuple[float, float] | None, str]:
    # Only the core paired metrics are shared: any other metric is missing.
    paired = part.paired.get(gate.metric)
    if paired is None:
        raise missing_metric(gate)
    if not gate.is_difference:
        return _rate_interval(paired.candidate, reading, pooled)
    if paired.result is not None:
        return _difference(paired.result, reading.z, pooled)
    return _difference_bound(paired, reading.z, pooled)


def _difference_bound(
    paired: SharedPaired, z: float, pooled: bool
) -> tuple[tuple[float, float] | None, str]:
    """A suppressed difference's widest Newcombe interval over its published ranges.

    A pooled slice's difference has no interval where a count is hidden (its
    clustered design effect is not published), so its figure is None.
    """
    ranges = paired.all_ranges()
    if pooled or ranges is None:
        return None, "clustered newcombe" if pooled else "newcombe"
    bound = difference_bound(*ranges, pooled=False, z=z)
    return (None if bound is None else (bound.lower, bound.upper)), NEWCOMBE_BOUND


def _comparison_interval(
    part: ComparisonSlice, gate: Gate, reading: _Reading, pooled: bool
) -> tuple[tuple[float, float] | None, str]:
    if gate.metric == "kappa":
        kappa = None if part.kappa is None else part.kappa.candidate
        return _reliable_interval(kappa, gate, "kappa")
    paired = part.paired.get(gate.metric)
    if paired is not None:
        if gate.is_difference:
            return _difference(paired, reading.z, pooled)
        return _rate_interval(paired.candidate, reading, pooled)
    unpaired = part.unpaired.get(gate.metric)
    if unpaired is None:
        raise missing_metric(gate, [*part.paired, *part.unpaired])
    return _rate_interval(unpaired.candidate, reading, pooled)  # no difference rule names these


# A gate reads figures recomputed from the counts (and a pooled metric's published
# design effect), never the intervals a document carries: an object built in memory
# is not checked the way a loaded document is. (Kappa's table is not in any
# document, so its interval is read as loaded.)


def _rate_interval(
    metric: Counted, reading: _Reading, pooled: bool
) -> tuple[tuple[float, float] | None, str]:
    """Wilson or Clopper-Pearson (field slice) or clustered (pooled slice) interval.

    None if it cannot be shown: a pooled metric without a published design
    effect (a suppressed one) has no clustered interval.
    """
    success, total = metric.success_count, metric.total_count
    z = reading.z
    if not pooled:
        if success is None or total is None:
            return _bound(metric, reading)
        if reading.exact:
            return clopper_pearson(success, total, z), CLOPPER_PEARSON
        return MetricResult.from_binomial(Binomial(success, total), z).interval, "wilson"
    shown = getattr(metric, "design_effect", None)
    if success is None or total is None or shown is None:
        return None, "clustered"
    cases = getattr(metric, "clustered_cases", None)
    return clustered_wilson(success, total, shown, z, cases=cases), "clustered"


def _bound(metric: Counted, reading: _Reading) -> tuple[tuple[float, float] | None, str]:
    """A suppressed field rate's widest Wilson (or Clopper-Pearson) interval over its ranges.

    For a rule that reads the inner side (``min_upper``, ``max_lower``), the
    largest lower bound and the smallest upper bound over them instead: each
    gate reads the figure that holds whichever count pair is the true one.

    None (the gate fails) when the document publishes no ranges for it or no
    count pair has a trial.
    """
    ranges = getattr(metric, "ranges", None)
    known = ranges() if callable(ranges) else None
    if not isinstance(known, tuple):
        return None, CLOPPER_PEARSON if reading.exact else "wilson"
    success, total = known
    if reading.exact:
        exact = innermost_clopper_pearson if reading.inner else widest_clopper_pearson
        return exact(success, total, reading.z), CLOPPER_PEARSON_BOUND
    bounds = innermost_wilson if reading.inner else widest_wilson
    return bounds(success, total, reading.z), WILSON_BOUND


def _difference(
    paired: PairedMetricResult, z: float, pooled: bool
) -> tuple[tuple[float, float] | None, str]:
    """Newcombe's interval of the paired difference (clustered when pooled), from the cells."""
    cells = paired.cells
    if not pooled:
        return PairedMetricResult.from_counts(cells, z).interval, "newcombe"
    clustering = paired.clustering
    if clustering is None or clustering.design_effect is None:
        return None, "clustered newcombe"
    interval = clustered_newcombe(
        cells.both,
        cells.candidate_only,
        cells.baseline_only,
        cells.neither,
        design_effect_shown=clustering.design_effect,
        z=z,
        cases=clustering.cases,
    )
    return interval, "clustered newcombe"
