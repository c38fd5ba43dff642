"""The distinct cases behind every number of a report, for disclosure control.

A report counts gold rows; the disclosure rule counts patients (cases). In a
field slice each gold row is one case, but in the overall and type slices one
chart contributes a row per field: twelve unanswerable answers may all come
from one patient. So, while scoring, :class:`CaseTrackingScorer` records for
each case id the *row classes* it contributed (the outcome bit mask of each of
its rows, with flags for missing rows and multi-select items), and
:func:`case_counts` turns them into the number of distinct cases behind each
protected quantity: every count, every metric's success and total counts and
its failures (total minus successes), kappa's pairs and the ignored
predictions.

Everything here holds case ids: it is private and stays in memory. Only the
resulting counts leave this module, and only to decide what to suppress; they
are never published.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Final

from chartscore.documents.plugin_layout import PluginLayout
from chartscore.documents.tally import (
    CORE_METRICS,
    COUNT_NAMES,
    SHARE_WITHHELD_METRICS,
    SliceTally,
    Tally,
)
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.metrics import (
    ANSWERABLE,
    ANSWERED,
    MISSING,
    NOT_APPLICABLE,
    WRONG_TYPE,
    FieldType,
    GoldValue,
)
from chartscore.records.prediction_row import PredictionRow
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.agreement import item_flags
from chartscore.scoring.case_classes import CaseClasses, Group
from chartscore.scoring.outcomes import COUNT_ROWS, ITEM_FAILURES, METRIC_ROWS, RowTest, row_tests
from chartscore.scoring.partial import PartialTally
from chartscore.scoring.scorer import RUN_HEADER_ROW, ExtraPredictions, Scorer

Quantity = tuple[str, str, str]
"""(slice kind, slice name, quantity): slice kind ``overall`` (name ``""``), ``field``,
``field_type``, ``stratum`` (``site=A``) or ``stratum_field_type`` (``site=A/date``);
quantity a count name, ``<metric>.success_count``, ``<metric>.total_count``,
``<metric>.failures``, ``kappa.pairs`` or ``ignored_prediction_count``."""


class CaseTrackingScorer(Scorer):
    """A :class:`~chartscore.scoring.scorer.Scorer` that also records each case's row classes.

    Its :meth:`partial` carries the :class:`CaseClasses` (``partial.cases``).
    Used only by disclosure control: it costs memory per case.
    """

    def __init__(
        self,
        schema: Schema | None = None,
        *,
        extra_predictions: ExtraPredictions = "error",
        strata: CaseStrata | None = None,
    ) -> None:
        super().__init__(schema, extra_predictions=extra_predictions, strata=strata)
        self._cases = CaseClasses()
        self._group_of: dict[str, Group] = {}

    def _group(self, field_id: str) -> Group:
        group = self._group_of.get(field_id)
        if group is None:
            field_type = self.field_type(field_id)
            rule = self.field_rule(field_id)
            layout = self.plugin_layout
            spec = rule.spec
            plugins = () if layout is None or spec is None else layout.metric_names_of(spec.plugins)
            group = self._group_of[field_id] = (field_type.value, rule.extra_metrics + plugins)
        return group

    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None:
        """Add one validated gold row (see :meth:`Scorer.add_gold`).

        Raises:
            ChartscoreError: ``not_applicable_unsupported`` for a not-applicable gold row:
                disclosure control does not model its counts yet (docs/disclosure.md), so
                ``share`` and a site's partial refuse it rather than publish it unprotected.
        """
        if value is NOT_APPLICABLE:
            raise ChartscoreError(ErrorCode.NOT_APPLICABLE_UNSUPPORTED, input=InputKind.GOLD)
        super().add_gold(case_id, field_id, field_type, value)

    def add_row(self, row: PredictionRow) -> int:
        """Join and count one prediction (see :class:`Scorer`) and record its row class."""
        mask = super().add_row(row)
        if mask == RUN_HEADER_ROW:
            return mask
        if mask < 0:
            self._cases.ignored.add(row.case_id)
        else:
            self._cases.record(row.case_id, row.field_id, self._group(row.field_id), mask)
        return mask

    def partial(self) -> PartialTally:
        """The partial tally, with every case's row classes (missing rows included)."""
        partial = super().partial()
        cases = self._cases.copy()
        for case_id, field_id, gold_key in self.missing_rows():
            row = MISSING
            if gold_key is not None:
                row |= ANSWERABLE
                if self.field_type(field_id) is FieldType.MULTI:
                    row |= item_flags(len(gold_key), 0, 0)  # type: ignore[arg-type]
            cases.record(case_id, field_id, self._group(field_id), row)
        partial.cases = cases
        return partial


def case_counts(
    partial: PartialTally, tally: Tally, strata: CaseStrata | None = None
) -> dict[Quantity, int]:
    """The distinct cases behind every protected quantity of the report of ``tally``.

    ``partial`` must come from a :class:`CaseTrackingScorer` (or a merge of them).
    A pooled ``majority_baseline`` uses a lower bound (the largest member
    field's count), which can only suppress more, never less. With ``strata``
    (the scorer's), the stratum slices' quantities too: each counts the
    distinct cases of its stratum only.
    """
    cases = partial.cases
    if cases is None:
        raise ValueError("the partial tally does not track cases")
    result: dict[Quantity, int] = {}
    for field_id, part in tally.by_field.items():
        rows = cases.by_field.get(field_id, Counter())
        counts = partial.fields[field_id]

        def field_rows(test: RowTest, metric: str | None = None, rows: Counter[int] = rows) -> int:
            return sum(n for row, n in rows.items() if test(row))

        _fill(
            result,
            ("field", field_id),
            part.metrics,
            part.kappa is not None,
            field_rows,
            plugins=partial.plugins,
        )
        if "majority_baseline" in part.metrics:
            majority = counts.majority()
            result["field", field_id, "majority_baseline.success_count"] = majority
            result["field", field_id, "majority_baseline.failures"] = counts.answerable - majority
    pooled = [("overall", "", tally.overall, None)] + [
        ("field_type", name, part, name) for name, part in tally.by_field_type.items()
    ]
    for kind, name, part, field_type in pooled:

        def pooled_rows(
            test: RowTest, metric: str | None = None, field_type: str | None = field_type
        ) -> int:
            def chosen(group: Group, row: int) -> bool:
                in_slice = field_type is None or group[0] == field_type
                reports = metric is None or metric in CORE_METRICS or metric in group[1]
                return in_slice and reports and test(row)

            return cases.cases_matching(chosen)

        _fill(result, (kind, name), part.metrics, False, pooled_rows, plugins=partial.plugins)
        if "majority_baseline" in part.metrics:
            members = [
                partial.fields[field_id]
                for field_id in tally.by_field
                if partial.fields[field_id].field_type.value == field_type
            ]
            result[kind, name, "majority_baseline.success_count"] = max(
                (m.majority() for m in members), default=0
            )
            result[kind, name, "majority_baseline.failures"] = max(
                (m.answerable - m.majority() for m in members), default=0
            )
    _fill_labels(result, tally)
    if tally.ignored_prediction_count is not None:
        result["overall", "", "ignored_prediction_count"] = cases.ignored_count
    if strata is not None:
        _fill_strata(result, cases, tally, strata, partial.plugins)
    return result


def _fill_strata(
    result: dict[Quantity, int],
    cases: CaseClasses,
    tally: Tally,
    strata: CaseStrata,
    plugins: PluginLayout | None,
) -> None:
    # Each stratum slice (and stratum-and-type slice) as a pooled slice of its cases only.
    for index, position, stratum in strata.slice_names():

        def inside(case_id: str, index: int = index, position: int = position) -> bool:
            return strata.positions(case_id)[index] == position

        patterns = cases.patterns_where(inside)
        slices: list[tuple[str, str, SliceTally, str | None]] = [
            ("stratum", stratum, tally.by_stratum[stratum], None)
        ]
        slices += [
            ("stratum_field_type", f"{stratum}/{name}", part, name)
            for name, part in tally.by_stratum_field_type[stratum].items()
        ]
        for kind, name, part, field_type in slices:

            def stratum_rows(
                test: RowTest,
                metric: str | None = None,
                field_type: str | None = field_type,
                patterns: Counter[int] = patterns,
            ) -> int:
                def chosen(group: Group, row: int) -> bool:
                    in_slice = field_type is None or group[0] == field_type
                    reports = metric is None or metric in CORE_METRICS or metric in group[1]
                    return in_slice and reports and test(row)

                return cases.cases_matching(chosen, patterns)

            _fill(result, (kind, name), part.metrics, False, stratum_rows, plugins=plugins)


def _fill(
    result: dict[Quantity, int],
    where: tuple[str, str],
    metrics: Iterable[str],
    has_kappa: bool,
    rows: Callable[..., int],
    *,
    plugins: PluginLayout | None,
) -> None:
    kind, name = where
    for count_name in COUNT_NAMES:
        result[kind, name, count_name] = rows(COUNT_ROWS[count_name])
    for metric in metrics:
        if metric in SHARE_WITHHELD_METRICS:  # not shared (docs/disclosure.md)
            continue
        if metric == "majority_baseline":
            total_test = METRIC_ROWS["exact_agreement"][0]  # the answerable rows
            result[kind, name, "majority_baseline.total_count"] = rows(total_test, metric)
            continue
        total, success = row_tests(metric, plugins)
        result[kind, name, f"{metric}.total_count"] = rows(total, metric)
        result[kind, name, f"{metric}.success_count"] = rows(success, metric)
        failures = ITEM_FAILURES.get(metric) or _failures(total, success)
        result[kind, name, f"{metric}.failures"] = rows(failures, metric)
    if has_kappa:
        result[kind, name, "kappa.pairs"] = rows(
            lambda row: row & (ANSWERED | ANSWERABLE | WRONG_TYPE) == ANSWERED | ANSWERABLE
        )


def _fill_labels(result: dict[Quantity, int], tally: Tally) -> None:
    # Each label's counts are field-slice rows, one case each: their cases are their values.
    # (The labels pooled, within a field or over fields, are not shared: docs/disclosure.md.)
    for field_id, part in tally.by_field.items():
        for label, table in (part.labels or {}).items():
            for metric, binomial in table.items():
                name = f"labels.{label}.{metric}"
                result["field", field_id, f"{name}.success_count"] = binomial.success_count
                result["field", field_id, f"{name}.total_count"] = binomial.total_count
                failures = binomial.total_count - binomial.success_count
                result["field", field_id, f"{name}.failures"] = failures


def _failures(total: RowTest, success: RowTest) -> RowTest:
    return lambda row: total(row) and not success(row)


_OUTSIDE: Final = object()  # every answer outside the declared choices, as one category


def kappa_smallest_margins(partial: PartialTally) -> dict[str, int]:
    """Per kappa field, the smallest nonzero gold or answer category count among its pairs."""
    margins: dict[str, int] = {}
    for field_id, counts in partial.fields.items():
        if counts.kappa_pairs is None:
            continue
        gold: Counter[object] = Counter()
        answers: Counter[object] = Counter()
        # Kappa sees every answer outside a categorical field's declared choices as one
        # category (docs/metrics.md): so does its margin.
        choices = None if counts.spec is None else counts.spec.choices
        declared = choices if counts.field_type is FieldType.CATEGORICAL else None
        for (gold_key, answer_key), n in counts.kappa_pairs.items():
            gold[gold_key] += n
            outside = declared is not None and answer_key not in declared
            answers[_OUTSIDE if outside else answer_key] += n
        sizes = [n for n in (*gold.values(), *answers.values()) if n]
        margins[field_id] = min(sizes, default=0)
    return margins
