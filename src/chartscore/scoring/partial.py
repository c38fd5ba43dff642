"""The mergeable state of a scoring run: what one partition of the data contributes.

Scoring is a count of outcomes per field, and counts add up. A
:class:`PartialTally` holds, per field id, everything the report needs that
adds across partitions: outcome counts, item counts, and kappa's pair and gold
category counters. :meth:`PartialTally.merge` is associative and commutative,
so one process (one partition), part files on a cluster and pooled batches all
reduce to the same report.

A partial tally is **private**: kappa's counters are keyed by normalized
category values, and a partial built for disclosure control also holds case
ids (:mod:`chartscore.scoring.cases`). It lives in memory only; its repr shows the
number of fields and nothing else. :meth:`PartialTally.tally` is the boundary:
it reduces everything to the value-free :class:`~chartscore.documents.tally.Tally`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Final, TypeVar

from chartscore.documents.plugin_layout import PluginLayout, PluginStamp, check_same_plugins
from chartscore.documents.tally import (
    COUNT_NAMES,
    LABEL_METRICS,
    Binomial,
    KappaTable,
    MagnitudeTally,
    SliceTally,
    Tally,
    pool,
    without_optional,
)
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.metrics import (
    ANSWERABLE,
    ANSWERED,
    CATALOG,
    CORE,
    ITEMS,
    LABELS,
    MAJORITY,
    NOT_APPLICABLE_COUNTS,
    FieldType,
)
from chartscore.records.schema import FieldSpec
from chartscore.scoring.agreement import FieldRule, Key
from chartscore.scoring.case_classes import CaseClasses
from chartscore.scoring.clusters import (
    OVERALL,
    Group,
    RowCoding,
    merge_sums,
    without_optional_sums,
)
from chartscore.scoring.plugin_judges import PluginSet
from chartscore.scoring.strata import StrataParts, stratum_slices
from chartscore.stats.clustered import ClusterSums
from chartscore.stats.magnitude import ErrorSums, median
from chartscore.stats.reliability import interval_alpha
from chartscore.stats.run_cost import RunCost, merge_optional
from chartscore.stats.uncertainty import UncertaintySums


def _add_counts(mine: dict[_K, int], other: Mapping[_K, int]) -> None:
    # A Counter's update, for plain dicts of counts.
    for key, count in other.items():
        mine[key] = mine.get(key, 0) + count


def _scaled_numbers(
    distances: Mapping[tuple[Key, Key], int], gold: Mapping[Key, int]
) -> tuple[dict[Key, int], int]:
    # Exact ints and Decimals as integers times a common 10**places, from their digits (no
    # decimal context, so a 100-digit coefficient is never rounded).
    keys: set[Key] = set(gold)
    for pair in distances:
        keys.update(pair)
    parts: dict[Key, tuple[int, int]] = {}
    places = 0
    for key in keys:
        if type(key) is int:
            parts[key] = (key, 0)
            continue
        sign, digits, exponent = key.as_tuple()  # type: ignore[attr-defined]
        coefficient = int("".join(map(str, digits))) * (-1 if sign else 1)
        parts[key] = (coefficient, exponent)
        places = max(places, -exponent)
    return {key: c * 10 ** (e + places) for key, (c, e) in parts.items()}, 10**places


def _exact(uncertainty: object) -> int | Decimal:
    # A declared uncertainty as an exact int or Decimal (a float by its shortest repr).
    if type(uncertainty) is float:
        return Decimal(repr(uncertainty))
    return uncertainty  # type: ignore[return-value]


def has_distance(field_type: FieldType, key: Key) -> bool:
    """Whether a normalized number or date has a distance (dates: full precision only)."""
    return field_type is FieldType.NUMBER or key[2] is not None  # type: ignore[index]


_K = TypeVar("_K")

# The keys of FieldCounts.label_rows.
_ROWS: Final = 0
_GOLD: Final = 1
_ANSWER: Final = 2
_BOTH: Final = 3
LABEL_ROW_KINDS: Final = {"rows": _ROWS, "gold": _GOLD, "answer": _ANSWER, "both": _BOTH}
"""The kinds of :attr:`FieldCounts.label_rows` keys by name (``rows`` is keyed by None)."""


class RuleBook:
    """One :class:`FieldRule` per (type, schema entry), built on first use.

    Fields that share a type and schema entry share a rule and its caches, so a
    gold set with many field ids costs little per field. A rule book belongs to
    one run (its caches hold normalized values), never to the module.
    """

    __slots__ = ("_plugins", "_rules")

    def __init__(self, plugins: PluginSet | None = None) -> None:
        self._rules: dict[tuple[FieldType, FieldSpec | None], FieldRule] = {}
        self._plugins = plugins

    def rule(self, field_type: FieldType, spec: FieldSpec | None) -> FieldRule:
        """The shared rule for fields of ``field_type`` declared by ``spec``.

        Without a :class:`PluginSet` a rule judges no plugin (enough to reduce
        counts to a tally: the plugin metrics' counts are in the masks).
        """
        key = (field_type, spec)
        found = self._rules.get(key)
        if found is None:
            judges = () if self._plugins is None else self._plugins.judges(spec)
            found = self._rules[key] = FieldRule(field_type, spec, judges)
        return found


class FieldCounts:
    """The additive counts of one field id in one partition.

    Attributes:
        field_type, spec: The field's type and schema entry (None if undeclared).
        answerable, unanswerable: Gold rows with and without a gold answer.
        outcomes: Outcome bit mask -> predictions counted with it (missing rows
            are ``answerable + unanswerable - sum(outcomes)``).
        gold_items, answered_items, matched_items: Multi-select item counts.
        gold_keys: Normalized gold answer -> rows (kappa and majority fields).
        kappa_pairs: (gold key, answer key) -> rows (kappa fields).
        label_gold, label_rows: A multi-select field with declared choices:
            answerable rows whose gold holds each label, and the counts of its
            answered rows of the right type (``_ROWS``), by label, holding it
            in gold (``_GOLD``), in the answer (``_ANSWER``) or in both
            (``_BOTH``). Categorical and boolean fields read their label
            tables off ``gold_keys`` and ``kappa_pairs``.
        distances, distance_gold: A number or date field: (gold key, answer
            key) -> answered answerable rows where both have a distance (a
            number; two full-precision dates), and gold key -> answerable rows
            whose gold has one (error magnitude, docs/metrics.md). None for a
            field read from a site's partial document, which holds no values
            (docs/partials.md): such a field has no error magnitude.
        uncertain: Answered answerable rows that declared an uncertainty, by
            (uncertainty, agreed under normalization); the others are the
            answered answerable rows less these (docs/metrics.md, "Declared
            uncertainty").
    """

    __slots__ = (
        "answerable",
        "answered_items",
        "distance_gold",
        "distances",
        "field_type",
        "gold_items",
        "gold_keys",
        "kappa_pairs",
        "label_gold",
        "label_rows",
        "matched_items",
        "not_applicable",
        "not_applicable_answer",
        "outcomes",
        "spec",
        "unanswerable",
        "uncertain",
    )

    def __init__(self, field_type: FieldType, spec: FieldSpec | None, *, kappa: bool) -> None:
        self.field_type = field_type
        self.spec = spec
        self.answerable = 0
        self.unanswerable = 0
        self.not_applicable = 0
        self.not_applicable_answer = 0
        self.outcomes: dict[int, int] = {}
        self.gold_items = 0
        self.answered_items = 0
        self.matched_items = 0
        self.gold_keys: Counter[Key] | None = Counter() if kappa else None
        self.kappa_pairs: Counter[tuple[Key, Key]] | None = Counter() if kappa else None
        labelled = field_type is FieldType.MULTI and spec is not None and spec.choices is not None
        self.label_gold: Counter[Key] | None = Counter() if labelled else None
        self.label_rows: Counter[tuple[int, Key]] | None = Counter() if labelled else None
        measured = field_type in (FieldType.NUMBER, FieldType.DATE)
        # Plain dicts (counted with .get): a Counter's __missing__ is slow on the hot path,
        # and most (gold, answer) number pairs are new.
        self.distances: dict[tuple[Key, Key], int] | None = {} if measured else None
        self.distance_gold: dict[Key, int] | None = {} if measured else None
        self.uncertain: dict[tuple[object, bool], int] = {}

    def count_labels(self, gold_key: Key, answer: Key) -> None:
        """Count an answered answerable multi-select row of the right type, label by label."""
        rows = self.label_rows
        assert rows is not None and self.spec is not None and self.spec.choices is not None
        rows[_ROWS, None] += 1
        for label in gold_key:  # type: ignore[attr-defined]
            rows[_GOLD, label] += 1
        for label in answer & self.spec.choices:  # type: ignore[operator]
            rows[_ANSWER, label] += 1
        for label in answer & gold_key:  # type: ignore[operator]
            rows[_BOTH, label] += 1

    def copy(self) -> FieldCounts:
        """An independent copy (merging never changes its inputs)."""
        twin = FieldCounts(self.field_type, self.spec, kappa=self.gold_keys is not None)
        twin.add(self)
        return twin

    def add(self, other: FieldCounts) -> None:
        """Add ``other``'s counts to these (same field in another partition)."""
        if other.field_type is not self.field_type or other.spec != self.spec:
            raise ChartscoreError(ErrorCode.INCONSISTENT_FIELD_TYPE, input=InputKind.GOLD)
        self.answerable += other.answerable
        self.unanswerable += other.unanswerable
        self.not_applicable += other.not_applicable
        self.not_applicable_answer += other.not_applicable_answer
        outcomes = self.outcomes
        for mask, count in other.outcomes.items():
            outcomes[mask] = outcomes.get(mask, 0) + count
        self.gold_items += other.gold_items
        self.answered_items += other.answered_items
        self.matched_items += other.matched_items
        if self.gold_keys is not None and other.gold_keys is not None:
            self.gold_keys.update(other.gold_keys)
        if self.kappa_pairs is not None and other.kappa_pairs is not None:
            self.kappa_pairs.update(other.kappa_pairs)
        if self.label_gold is not None and other.label_gold is not None:
            self.label_gold.update(other.label_gold)
        if self.label_rows is not None and other.label_rows is not None:
            self.label_rows.update(other.label_rows)
        if self.distances is not None and other.distances is not None:
            _add_counts(self.distances, other.distances)
        elif other.distances is None:  # a site partial carries no distances: none are known
            self.distances = None
        if self.distance_gold is not None and other.distance_gold is not None:
            _add_counts(self.distance_gold, other.distance_gold)
        elif other.distance_gold is None:
            self.distance_gold = None
        _add_counts(self.uncertain, other.uncertain)

    @property
    def field_count(self) -> int:
        """Gold rows of the field."""
        return self.answerable + self.unanswerable

    def count(self, required: int, absent: int = 0) -> int:
        """Predictions whose mask has every ``required`` bit and none of ``absent``."""
        return sum(
            n
            for mask, n in self.outcomes.items()
            if mask & required == required and not mask & absent
        )

    def slice_tally(self, rule: FieldRule, plugins: PluginLayout | None = None) -> SliceTally:
        """The value-free counts and binomials of this field (docs/metrics.md).

        ``plugins`` is the run's plugin layout: each label of each plugin the
        field names is a binomial of the answerable rows (docs/plugins.md).
        """
        field_count = self.field_count
        present = sum(self.outcomes.values())
        answered = self.count(ANSWERED)
        answerable = self.answerable
        counts = dict(
            zip(
                COUNT_NAMES,
                (
                    field_count,
                    answerable,
                    self.unanswerable,
                    field_count - present,
                    answered,
                    present - answered,
                ),
                strict=True,
            )
        )
        count = self.count
        trials = {**counts, "answered_items": self.answered_items, "gold_items": self.gold_items}
        metrics: dict[str, Binomial] = {}
        for metric in CATALOG:
            if metric.counts == LABELS or not (
                metric.family == CORE or metric.name in rule.extra_metrics
            ):
                continue
            if metric.counts == ITEMS:
                successes = self.matched_items
            elif metric.counts == MAJORITY:
                successes = self.majority()
            else:  # the catalog's alternatives are disjoint: their counts add up
                successes = sum(count(*alternative) for alternative in metric.successes)
            metrics[metric.name] = Binomial(successes, trials[metric.trials])
        labels = self.label_tables(rule)
        if labels is not None:
            for name in LABEL_METRICS:
                metrics[name] = sum(
                    (table[name] for table in labels.values()), start=Binomial(0, 0)
                )
        if plugins is not None and self.spec is not None and self.spec.plugins:
            for name in plugins.metric_names_of(self.spec.plugins):
                metrics[name] = Binomial(plugins.count(self.outcomes, name), answerable)
        kappa = None if rule.kappa_weighting is None else self.kappa_table(rule)
        return SliceTally(
            counts=counts,
            metrics=metrics,
            kappa=kappa,
            labels=labels,
            magnitude=self.magnitude(),
            uncertainty=self.uncertainty_sums(count(ANSWERED | ANSWERABLE)),
            not_applicable=self.not_applicable_counts(),
        )

    def not_applicable_counts(self) -> dict[str, int] | None:
        """``not_applicable_count`` and ``not_applicable_answer``; None without such rows."""
        if not self.not_applicable:
            return None
        return dict(
            zip(
                NOT_APPLICABLE_COUNTS,
                (self.not_applicable, self.not_applicable_answer),
                strict=True,
            )
        )

    def uncertainty_sums(self, answered_answerable: int) -> UncertaintySums:
        """The declared-uncertainty sums of this field (docs/metrics.md), exactly."""
        exact = {key: _exact(key) for key in {u for u, _ in self.uncertain}}
        as_int, scale = _scaled_numbers({}, dict.fromkeys(exact.values(), 0))
        return UncertaintySums.scaled(
            ((as_int[exact[u]], agreed, rows) for (u, agreed), rows in self.uncertain.items()),
            scale,
            answered_answerable - sum(self.uncertain.values()),
        )

    def magnitude(self) -> MagnitudeTally | None:
        """A number or date field's error sums and interval alpha; None for other fields.

        Numbers are exact (ints and Decimals as fractions); dates are day
        numbers. The boundary: only sums and alpha leave.
        """
        found = self._integer_values()
        if found is None:
            return None
        pairs, gold_values, scale = found
        date_field = self.field_type is FieldType.DATE
        sums = ErrorSums.scaled("days" if date_field else "field", scale, pairs, gold_values)
        alpha = interval_alpha(pairs)
        if alpha is None:
            return MagnitudeTally(sums)
        return MagnitudeTally(sums, alpha[0], alpha[1])

    def figure_contributions(
        self,
    ) -> tuple[list[tuple[Fraction, int]], ...]:
        """Each row's contribution to the error magnitude and the Brier score, exactly.

        ``(|d|, rows)``, ``(d**2, rows)``, ``(|gold - median|, rows)`` (empty
        for a field without distances), ``((1 - u - agreed)**2, rows)`` and
        ``((gold - m)**2 + (answer - m)**2, rows)`` with ``m`` the mean of the
        pairs' pooled values (interval alpha's spread; empty without distances).
        Disclosure control's dominance rule reads them inside; they never leave.
        """
        absolute: list[tuple[Fraction, int]] = []
        squares: list[tuple[Fraction, int]] = []
        deviation: list[tuple[Fraction, int]] = []
        spread: list[tuple[Fraction, int]] = []
        found = self._integer_values()
        if found is not None:
            pairs, gold_values, scale = found
            count = sum(pairs.values())
            total = sum((g + a) * rows for (g, a), rows in pairs.items())
            mean = Fraction(total, 2 * count * scale) if count else Fraction(0)
            for (g, a), rows in pairs.items():
                d = Fraction(a - g, scale)
                absolute.append((abs(d), rows))
                squares.append((d * d, rows))
                gold, answer = Fraction(g, scale) - mean, Fraction(a, scale) - mean
                spread.append((gold * gold + answer * answer, rows))
            values = sorted((Fraction(v, scale), rows) for v, rows in gold_values.items())
            centre = median(values)
            deviation = [(abs(v - centre), rows) for v, rows in values]
        brier = []
        for (u, agreed), rows in self.uncertain.items():
            forecast = Fraction(_exact(u))
            brier.append(((1 - forecast - (1 if agreed else 0)) ** 2, rows))
        return absolute, squares, deviation, brier, spread

    def _integer_values(
        self,
    ) -> tuple[dict[tuple[int, int], int], dict[int, int], int] | None:
        # Every (gold, answer) pair and gold value as an integer times 1 / scale.
        if self.distances is None or self.distance_gold is None:
            return None
        date_field = self.field_type is FieldType.DATE
        # Every value as an integer: day numbers, or numbers times 10**places (exact).
        if date_field:
            scale = 1
            keys: set[Key] = set(self.distance_gold)
            for gold, answer in self.distances:
                keys.add(gold)
                keys.add(answer)
            as_int = {key: date(*key).toordinal() for key in keys}  # type: ignore[misc]
        else:
            as_int, scale = _scaled_numbers(self.distances, self.distance_gold)
        pairs: dict[tuple[int, int], int] = {}
        for (gold, answer), rows in self.distances.items():
            pair = (as_int[gold], as_int[answer])
            pairs[pair] = pairs.get(pair, 0) + rows
        gold_values: dict[int, int] = {}
        for gold, rows in self.distance_gold.items():
            number = as_int[gold]
            gold_values[number] = gold_values.get(number, 0) + rows
        return pairs, gold_values, scale

    def label_tables(self, rule: FieldRule) -> dict[str, dict[str, Binomial]] | None:
        """Each declared label's confusion metrics (docs/metrics.md), by name; None if none.

        For label ``L``: gold positives are answerable rows whose gold is (or
        holds) ``L``; the answered rows of the right type are its only
        predicted positives (naming ``L``) and negatives (not naming it).
        """
        if not rule.labels:
            return None
        tables: dict[str, dict[str, Binomial]] = {}
        for label, name in zip(rule.labels, rule.label_names, strict=True):
            if self.label_rows is not None and self.label_gold is not None:
                rows = self.label_rows[_ROWS, None]
                gold = self.label_gold[label]
                gold_answered = self.label_rows[_GOLD, label]
                answer = self.label_rows[_ANSWER, label]
                both = self.label_rows[_BOTH, label]
            else:
                assert self.kappa_pairs is not None and self.gold_keys is not None
                pairs = self.kappa_pairs
                rows = sum(pairs.values())
                gold = self.gold_keys[label]
                gold_answered = sum(n for (g, _), n in pairs.items() if g == label)
                answer = sum(n for (_, a), n in pairs.items() if a == label)
                both = pairs[label, label]
            negatives = rows - gold_answered - answer + both
            tables[name] = {
                "sensitivity": Binomial(both, gold),
                "specificity": Binomial(negatives, self.answerable - gold),
                "ppv": Binomial(both, answer),
                "npv": Binomial(negatives, rows - answer),
            }
        return tables

    def majority(self) -> int:
        """Rows whose normalized gold is the field's most common gold answer."""
        return max(self.gold_keys.values(), default=0) if self.gold_keys is not None else 0

    def kappa_table(self, rule: FieldRule) -> KappaTable:
        """Kappa's sparse table, with category keys replaced by positions.

        Ordinal levels keep their schema order; other categories get a
        deterministic order that carries no label. The table's size is the
        scale: every level; a categorical field's declared choices and, when
        some answer lies outside them, one category for all such answers; both
        booleans; a categorical field without declared choices, every
        category seen.
        """
        assert self.kappa_pairs is not None and self.gold_keys is not None
        choices = None if self.spec is None else self.spec.choices
        outside = -1  # the position of every answer outside the declared choices, if any
        if rule.levels:
            size = rule.levels
            position: dict[Key, int] = {level: level for level in range(size)}
        elif choices is not None and self.field_type is FieldType.CATEGORICAL:
            # The declared choices (the scale of AC1: unused ones count), then one category
            # for every answer outside them: a category the schema does not declare is no
            # category of its own (it may be free text), and so partials merge exactly.
            position = {key: index for index, key in enumerate(sorted(choices))}
            size = len(position)
            if any(answer not in position for _, answer in self.kappa_pairs):
                outside, size = size, size + 1
        else:
            categories = set(self.gold_keys) | {answer for _, answer in self.kappa_pairs}
            if self.field_type is FieldType.BOOLEAN:
                categories |= {False, True}
            ordered = sorted(categories, key=lambda key: (type(key).__name__, key))
            position = {key: index for index, key in enumerate(ordered)}
            size = len(ordered)
        cells: dict[tuple[int, int], int] = {}
        for (gold, answer), count in self.kappa_pairs.items():
            cell = (position[gold], position.get(answer, outside))
            cells[cell] = cells.get(cell, 0) + count
        table = tuple(sorted((*cell, count) for cell, count in cells.items()))
        return KappaTable(cells=table, size=size, weighting=rule.kappa_weighting)  # type: ignore[arg-type]


class PartialTally:
    """The mergeable state of a scorer after one partition. Private; see the module doc.

    Attributes:
        fields: Field id -> :class:`FieldCounts`.
        ignored_predictions: Predictions skipped because their key is not in
            gold (``extra_predictions="ignore"``), or None when such predictions
            are an error.
        cases: Distinct-case bookkeeping for disclosure control, or None.
        clusters: Per pooled slice (``"overall"`` or a type name) and metric,
            the exact per-case sums of its clustered interval. A partition
            holds every row of its cases (the Dask engine partitions by case),
            so the sums of partitions add.
        plugins: The run's plugin layout (value-free), or None without plugins.
        strata: The stratum slices' counts (:class:`~chartscore.scoring.strata.StrataParts`),
            or None without a strata file.
        run: The run cost of the lines that carried ``usage``
            (:class:`~chartscore.stats.run_cost.RunCost`), or None when none did.
        evidence: Whether its rows' ``EVIDENCED`` bits are known: False for a partial read
            from a file written before ``evidence_provided`` (format 3 or older) and for any
            merge with one; its tally then leaves out that metric (and its cluster sums).
    """

    __slots__ = (
        "cases",
        "clusters",
        "evidence",
        "fields",
        "ignored_predictions",
        "plugins",
        "run",
        "strata",
    )

    def __init__(
        self,
        fields: Mapping[str, FieldCounts] | None = None,
        ignored_predictions: int | None = None,
        cases: CaseClasses | None = None,
        *,
        clusters: Mapping[str, Mapping[str, ClusterSums]] | None = None,
        plugins: PluginLayout | None = None,
        strata: StrataParts | None = None,
        run: RunCost | None = None,
        evidence: bool = True,
    ) -> None:
        self.strata = strata
        self.run = run
        self.evidence = evidence
        self.fields: dict[str, FieldCounts] = dict(fields or {})
        self.ignored_predictions = ignored_predictions
        self.cases = cases
        self.clusters: dict[str, dict[str, ClusterSums]] = {
            name: dict(metrics) for name, metrics in (clusters or {}).items()
        }
        self.plugins = plugins

    def __repr__(self) -> str:
        return f"PartialTally(<{len(self.fields)} fields; counts and values hidden>)"

    def merge(self, other: PartialTally) -> PartialTally:
        """The partial of both partitions together; neither input changes.

        Raises:
            ChartscoreError: ``inconsistent_field_type`` when one field id has
                two types (or two schema entries) in the two partitions;
                ``plugin_mismatch`` when their plugins differ in name, version,
                code digest or labels; ``run_headers_differ`` when both have run cost
                under different run headers.
        """
        if self.fields and other.fields:
            check_same_plugins(self.plugins, other.plugins)
        fields = {field_id: counts.copy() for field_id, counts in self.fields.items()}
        for field_id, counts in other.fields.items():
            mine = fields.get(field_id)
            if mine is None:
                fields[field_id] = counts.copy()
            else:
                mine.add(counts)
        ignored = _add_optional(self.ignored_predictions, other.ignored_predictions)
        cases = None
        if self.cases is not None and other.cases is not None:
            cases = self.cases.merge(other.cases)
        elif self.cases is not None or other.cases is not None:
            raise ValueError("cannot merge a case-tracking partial with one that is not")
        plugins = self.plugins if self.fields else other.plugins
        clusters = merge_sums(self.clusters, other.clusters)
        strata = self.strata
        if self.strata is not None and other.strata is not None:
            strata = self.strata.merge(other.strata)
        elif self.strata is not None or other.strata is not None:
            if self.fields and other.fields:
                raise ValueError("cannot merge a stratified partial with one that is not")
            strata = self.strata if self.fields else other.strata
        evidence = (self.evidence or not self.fields) and (other.evidence or not other.fields)
        if not evidence:  # an optional metric's sums are unknown for the union
            clusters = without_optional_sums(clusters)
            if strata is not None:
                strata = strata.without_optional()
        return PartialTally(
            fields,
            ignored,
            cases,
            clusters=clusters,
            plugins=plugins,
            strata=strata,
            run=merge_optional(self.run, other.run),
            evidence=evidence,
        )

    def tally(self, rules: RuleBook | None = None) -> Tally:
        """Reduce everything to value-free counts: the boundary of the private data.

        Raises:
            ChartscoreError: ``empty_gold`` when no partition held a gold row.
        """
        if not self.fields:
            raise ChartscoreError(ErrorCode.EMPTY_GOLD, input=InputKind.GOLD)
        rules = rules or RuleBook()
        by_field = {}
        members: dict[str, list[SliceTally]] = {}
        for field_id in sorted(self.fields):
            counts = self.fields[field_id]
            part = counts.slice_tally(rules.rule(counts.field_type, counts.spec), self.plugins)
            if not self.evidence:  # an old site's partial: evidence_provided is not known
                part = without_optional(part)
            by_field[field_id] = part
            members.setdefault(counts.field_type.value, []).append(part)
        by_type = {
            name: pool(parts, keep_type_metrics=True, clusters=self.clusters.get(name, {}))
            for name, parts in sorted(members.items())
        }
        overall = pool(
            by_field.values(), keep_type_metrics=False, clusters=self.clusters.get(OVERALL, {})
        )
        by_stratum: dict[str, SliceTally] = {}
        by_stratum_type: dict[str, dict[str, SliceTally]] = {}
        if self.strata is not None:
            by_stratum, by_stratum_type = stratum_slices(
                self.strata, self.groups(rules), RowCoding(self.plugins), evidence=self.evidence
            )
        return Tally(
            overall=overall,
            by_field=by_field,
            by_field_type=by_type,
            ignored_prediction_count=self.ignored_predictions,
            plugins=self.plugin_stamps(),
            by_stratum=by_stratum,
            by_stratum_field_type=by_stratum_type,
            sampling={} if self.strata is None else dict(self.strata.fractions),
            run=self.run,
        )

    def groups(self, rules: RuleBook) -> dict[str, Group]:
        """Each field's place in the pooled slices: its type and the extra metrics it reports."""
        found: dict[str, Group] = {}
        for field_id in sorted(self.fields):
            counts = self.fields[field_id]
            extra = rules.rule(counts.field_type, counts.spec).extra_metrics
            if self.plugins is not None and counts.spec is not None and counts.spec.plugins:
                extra = extra + self.plugins.metric_names_of(counts.spec.plugins)
            found[field_id] = (counts.field_type.value, extra)
        return found

    def plugin_stamps(self) -> tuple[PluginStamp, ...]:
        """The stamps of the plugins the fields of this partial name, sorted by name."""
        if self.plugins is None:
            return ()
        references = {
            ref for counts in self.fields.values() if counts.spec for ref in counts.spec.plugins
        }
        return self.plugins.used(references)


def merge_all(partials: Iterable[PartialTally]) -> PartialTally:
    """Merge any number of partials (in any order or grouping: the result is the same)."""
    result: PartialTally | None = None
    for partial in partials:
        result = partial if result is None else result.merge(partial)
    return result if result is not None else PartialTally()


def _add_optional(first: int | None, second: int | None) -> int | None:
    if first is None:
        return second
    if second is None:
        return first
    return first + second
