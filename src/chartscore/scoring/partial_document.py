"""A site's partial tally as a file: value-free counts that merge exactly across sites.

Multi-site registries score at each hospital and cannot move charts. Each site
writes its :class:`~chartscore.scoring.partial.PartialTally` as a *partial*
document (``chartscore score --partial-out``); ``chartscore merge`` adds the
partials of every site and gives the report that one process scoring the pooled
data would give, byte for byte, when case ids do not collide across sites
(docs/partials.md). A partial holds, per field, its outcome counts (outcome bit
masks and how many rows had each), item counts, kappa's pair counters and the
per-label counts over the schema's **declared** labels only (by position), the
systems' declared uncertainties with the rows that gave each, the pooled
slices' exact per-case sums, and the distinct-case bookkeeping of disclosure
control as counts of per-case outcome patterns. Never a case id, a value or a
digest: so not the distances behind a number or date field's error magnitude,
which a merged report leaves out.

Every bit set (an outcome mask, a row class, a case's pattern of row classes) is
written as hexadecimal text: a pattern has a bit per (field group, row class)
that some case earned, so it grows with the schema, and JSON holds integers
exactly only below 2**53. Format 1 wrote them as JSON integers (the strata's row
classes as decimal text); it is still read.

Format 3 adds an identity: a random id made when the partial is written (for a
partial merged from others, the ids of its constituents) and the site's case
count. ``merge`` and ``share --partials`` refuse two partials whose ids overlap,
so no site is counted twice, whatever the files are called. An older partial has
no id: it is known by its bytes, so only a byte-identical copy is refused. The
id is inside-only: it stays in the partial and reaches no report or message.

A partial is not suppressed: it travels only between the sites of a consortium,
under their agreement (docs/privacy.md). Reading one back is strict (the same
JSON rules as every saved document), and every identity its counts satisfy is
checked (:mod:`chartscore.scoring.partial_identities`).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections import Counter
from collections.abc import Collection, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final, NoReturn

from chartscore._format import PARTIAL_FORMAT
from chartscore._version import __version__
from chartscore.documents import _strict_json
from chartscore.documents._shell import FIELD_TYPE_NAMES, read_opening
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.plugin_layout import PluginLayout, stamps_from_dict, stamps_to_dict
from chartscore.documents.run import partial_member, read_partial_member
from chartscore.documents.tally import CORE_METRICS, LABEL_METRICS, TYPE_METRICS
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, valid_field_id
from chartscore.metrics import EVIDENCED, SUPPORTED, FieldType
from chartscore.records.schema import FieldSpec, Schema
from chartscore.records.strata import stratum_name
from chartscore.scoring.case_classes import CaseClasses
from chartscore.scoring.clusters import OVERALL
from chartscore.scoring.partial import LABEL_ROW_KINDS, FieldCounts, PartialTally
from chartscore.scoring.partial_identities import check_identities
from chartscore.scoring.scorer import EXTRA_PREDICTIONS
from chartscore.scoring.strata import StrataParts
from chartscore.stats.clustered import ClusterSums
from chartscore.stats.magnitude import exact_decimal, parse_exact_decimal

PARTIAL_FORMAT_VERSION: Final = 4
"""Format 3 adds the partial's identity; format 2 wrote every bit set as hexadecimal text
(format 1: JSON integers)."""
PARTIAL_READABLE_VERSIONS: Final = (1, 2, 3, 4)

_TOP_KEYS: Final = (
    "format",
    "format_version",
    "scorer",
    "schema",
    "extra_predictions",
    "fields",
    "clusters",
    "cases",
)
_OPTIONAL_TOP_KEYS: Final = (
    "identity",
    "ignored_prediction_count",
    "plugins",
    "strata",
    "run",
    "evidence_unknown",
)
_OLD_PLUGIN_BIT: Final = 18  # formats 1 to 3: plugin labels (and item counts) from bit 18 up
_OLD_LOW: Final = (1 << _OLD_PLUGIN_BIT) - 1
_IDENTITY_KEYS: Final = ("ids", "cases")
_ID: Final = re.compile(r"[0-9a-f]{32}")  # a partial's random id: 128 bits as hexadecimal text
_BITS: Final = re.compile(r"0|[1-9a-f][0-9a-f]*")  # a bit set, as hexadecimal text
_DECIMAL_BITS: Final = re.compile(r"0|[1-9][0-9]{0,299}")  # format 1: a stratum's row class
_FIELD_KEYS: Final = (
    "field_type",
    "answerable",
    "unanswerable",
    "outcomes",
    "items",
    "uncertainty",
)
_KAPPA_KEYS: Final = ("gold_labels", "kappa_pairs")
_LABEL_KEYS: Final = ("label_gold", "label_rows")
_CASE_KEYS: Final = ("groups", "patterns", "by_field", "ignored")
_LIMIT: Final = 2**63 - 1


def _refuse(field_id: str | None = None) -> NoReturn:
    raise ChartscoreError(ErrorCode.INVALID_PARTIAL, input=InputKind.PARTIAL, field_id=field_id)


# --------------------------------------------------------------------------- labels


def _label_index(counts: FieldCounts, field_id: str) -> dict[object, int] | None:
    """Kappa's categories as positions among the declared labels, or None without kappa.

    Booleans: false 0, true 1; ordinal levels: their positions; categorical:
    the declared choices in sorted order, and every answer outside them one
    position more (an undeclared answer is never on kappa's diagonal and has
    no gold margin, so merging them changes neither kappa nor its interval).

    Raises:
        ChartscoreError: ``partial_needs_declared_labels`` for a categorical
            field without declared choices: its categories may be free text.
    """
    if counts.gold_keys is None:
        return None
    if counts.field_type is FieldType.BOOLEAN:
        return {False: 0, True: 1}
    if counts.field_type is FieldType.ORDINAL:
        assert counts.spec is not None
        return {level: level for level in range(len(counts.spec.levels))}
    choices = None if counts.spec is None else counts.spec.choices
    if choices is None:
        raise ChartscoreError(
            ErrorCode.PARTIAL_NEEDS_DECLARED_LABELS, input=InputKind.SCHEMA, field_id=field_id
        )
    return {choice: index for index, choice in enumerate(sorted(choices))}


def _flat(pairs: Mapping[int, int]) -> list[int]:
    return [number for key in sorted(pairs) for number in (key, pairs[key])]


def _bits_text(bits: int) -> str:
    """A bit set as lowercase hexadecimal digits without leading zeros (JSON-safe at any size)."""
    return format(bits, "x")


def _counted_bits(counted: Mapping[int, int]) -> list[list[object]]:
    """``[[bits, count], ...]`` in increasing order of the bit sets; zero counts left out."""
    return [[_bits_text(bits), counted[bits]] for bits in sorted(counted) if counted[bits]]


def _uncertainty(uncertain: Mapping[tuple[object, bool], int]) -> list[list[object]]:
    """Each declared uncertainty (exact decimal text) with its agreement and rows, sorted.

    An uncertainty is the system's own number about its answer, not a chart
    value; equal numbers (``0.5`` and ``0.50``) are one entry.
    """
    merged: dict[tuple[Fraction, int], int] = {}
    for (uncertainty, agreed), rows in uncertain.items():
        exact = Fraction(repr(uncertainty) if type(uncertainty) is float else uncertainty)  # type: ignore[call-overload]
        key = (exact, int(agreed))
        merged[key] = merged.get(key, 0) + rows
    return [[exact_decimal(u), agreed, merged[u, agreed]] for u, agreed in sorted(merged)]


def _multi_labels(counts: FieldCounts) -> dict[str, object]:
    """A multi-select field's per-label counts, by the position of each declared choice."""
    assert counts.spec is not None and counts.spec.choices is not None
    assert counts.label_gold is not None and counts.label_rows is not None
    position: dict[Any, int] = {c: i for i, c in enumerate(sorted(counts.spec.choices))}
    table: dict[str, object] = {}
    for name, kind in LABEL_ROW_KINDS.items():
        found = {label: n for (k, label), n in counts.label_rows.items() if k == kind and n}
        if name == "rows":
            table[name] = found.get(None, 0)
        else:
            table[name] = _flat({position[label]: n for label, n in found.items()})
    gold = {position[label]: n for label, n in counts.label_gold.items() if n}
    return {"label_gold": _flat(gold), "label_rows": table}


# --------------------------------------------------------------------------- writing


def new_partial_id() -> str:
    """A fresh random id for a partial: 128 bits, so two partials never share one by chance."""
    return secrets.token_hex(16)


def partial_document(
    partial: PartialTally,
    schema: Schema | None,
    *,
    extra_predictions: str,
    ids: Collection[str] | None = None,
) -> dict[str, object]:
    """The value-free document of a site's partial tally (see the module docstring).

    ``ids`` is the partial's identity: None for a new partial (a fresh random
    id); a merged partial passes the ids of every partial it adds up, so that
    merging it again with one of them is refused.

    Raises:
        ChartscoreError: ``partial_needs_declared_labels`` (a categorical
            field with kappa but no declared choices); ``usage`` when the
            partial does not track cases (a partial of
            :class:`~chartscore.scoring.cases.CaseTrackingScorer` is needed, so
            that the merged partials can be shared), or ``ids`` that are not
            distinct ids of :func:`new_partial_id`'s form;
            ``not_applicable_unsupported`` when a field has not-applicable gold rows (a
            partial does not carry their counts yet: docs/partials.md).
    """
    if partial.cases is None:
        raise ChartscoreError(ErrorCode.USAGE)
    if any(counts.not_applicable for counts in partial.fields.values()):
        raise ChartscoreError(ErrorCode.NOT_APPLICABLE_UNSUPPORTED, input=InputKind.GOLD)
    written_ids = [new_partial_id()] if ids is None else sorted(ids)
    if not written_ids or len(set(written_ids)) != len(written_ids):
        raise ChartscoreError(ErrorCode.USAGE)
    if not all(type(i) is str and _ID.fullmatch(i) for i in written_ids):
        raise ChartscoreError(ErrorCode.USAGE)
    fields: dict[str, object] = {}
    for field_id in sorted(partial.fields):
        counts = partial.fields[field_id]
        entry: dict[str, object] = {
            "field_type": counts.field_type.value,
            "answerable": counts.answerable,
            "unanswerable": counts.unanswerable,
            "outcomes": _counted_bits(counts.outcomes),
            "items": [counts.gold_items, counts.answered_items, counts.matched_items],
            "uncertainty": _uncertainty(counts.uncertain),
        }
        if counts.label_gold is not None and counts.label_rows is not None:
            entry.update(_multi_labels(counts))
        labels = _label_index(counts, field_id)
        if labels is not None:
            assert counts.gold_keys is not None and counts.kappa_pairs is not None
            outside = len(labels)  # every undeclared answer, together
            gold = Counter({labels[key]: n for key, n in counts.gold_keys.items()})
            pairs: Counter[tuple[int, int]] = Counter()
            for (gold_key, answer), n in counts.kappa_pairs.items():
                pairs[labels[gold_key], labels.get(answer, outside)] += n
            entry["gold_labels"] = _flat(gold)
            entry["kappa_pairs"] = [
                number for cell in sorted(pairs) for number in (*cell, pairs[cell])
            ]
        fields[field_id] = entry
    clusters = {name: _sums_document(sums) for name, sums in sorted(partial.clusters.items())}
    cases = partial.cases
    document: dict[str, object] = {
        "format": PARTIAL_FORMAT,
        "format_version": PARTIAL_FORMAT_VERSION,
        "identity": {"ids": written_ids, "cases": sum(cases.patterns().values())},
        "scorer": {"name": "chartscore", "version": __version__},
        "schema": None if schema is None else schema.to_dict(),
        "extra_predictions": extra_predictions,
        "fields": fields,
        "clusters": clusters,
        "cases": {
            "groups": [
                [group[0], list(group[1]), _bits_text(row)] for group, row in cases.groups()
            ],
            "patterns": _counted_bits(cases.patterns()),
            "by_field": {
                name: _counted_bits(rows) for name, rows in sorted(cases.by_field.items())
            },
            "ignored": cases.ignored_count,
        },
    }
    if not partial.evidence:  # merged with a partial written before evidence_provided
        document["evidence_unknown"] = True
    if partial.ignored_predictions is not None:
        document["ignored_prediction_count"] = partial.ignored_predictions
    if partial.strata is not None:
        document["strata"] = _strata_document(partial.strata)
    if partial.run is not None:
        document["run"] = partial_member(partial.run)
    if partial.plugins is not None:
        document["plugins"] = {
            "stamps": stamps_to_dict(partial.plugins.stamps),
            "references": [list(pair) for pair in partial.plugins.references],
        }
    return document


def _sums_document(metrics: Mapping[str, ClusterSums]) -> dict[str, list[int | None]]:
    # One slice's per-case sums by metric (read by _sums): [cases, sum_yy, sum_ym, sum_mm,
    # the cases with a success, the cases with a failure]; successes unknown: null.
    return {
        metric: [
            sums.cases,
            sums.sum_yy,
            sums.sum_ym,
            sums.sum_mm,
            sums.success_cases,
            sums.failure_cases,
        ]
        for metric, sums in sorted(metrics.items())
    }


def _strata_document(strata: StrataParts) -> dict[str, object]:
    # Per stratum: each field's row classes with their rows, and the per-case sums of its
    # pooled slices. Declared names and counts only.
    return {
        "classes": {
            name: {
                field_id: _counted_bits(counted)
                for field_id, counted in sorted(strata.classes[name].items())
            }
            for name in sorted(strata.classes)
        },
        "clusters": {
            name: {key: _sums_document(sums) for key, sums in sorted(part.items())}
            for name, part in sorted(strata.clusters.items())
        },
    }


def partial_json(
    partial: PartialTally,
    schema: Schema | None,
    *,
    extra_predictions: str,
    ids: Collection[str] | None = None,
) -> str:
    """:func:`partial_document` as RFC 8785 canonical JSON (the bytes ``--partial-out`` writes)."""
    document = partial_document(partial, schema, extra_predictions=extra_predictions, ids=ids)
    return canonical_json(document)


# --------------------------------------------------------------------------- reading


class SitePartial:
    """A partial read back: its tally, schema, scoring option and identity. Private.

    ``ids`` are the random ids the partial carries (None for a partial older than
    format 3); ``keys`` is what tells it from another partial: its ids, or for an
    older partial a key made from its bytes, held in memory only.
    """

    __slots__ = ("extra_predictions", "ids", "keys", "partial", "schema", "scorer_version")

    def __init__(
        self,
        partial: PartialTally,
        schema: Schema | None,
        extra_predictions: str,
        scorer_version: str,
        ids: frozenset[str] | None = None,
    ) -> None:
        self.partial = partial
        self.schema = schema
        self.extra_predictions = extra_predictions
        self.scorer_version = scorer_version
        self.ids = ids
        self.keys: frozenset[str] = frozenset() if ids is None else ids

    def __repr__(self) -> str:
        return f"SitePartial(<{len(self.partial.fields)} fields; counts hidden>)"


def read_partial(text: str | bytes) -> SitePartial:
    """Read a partial document strictly (see the module docstring).

    Raises:
        ChartscoreError: ``unknown_report_format`` for another format or
            version; ``invalid_partial`` for anything malformed (not strict
            JSON, an unknown or missing key, a count that is not a
            non-negative integer, counts that break an identity of
            :func:`~chartscore.scoring.partial_identities.check_identities`,
            a schema that is not valid). The message never quotes the file.
    """
    failure: ChartscoreError | None = None
    try:
        document = _strict_json.check_format(
            _strict_json.parse(text), PARTIAL_FORMAT, PARTIAL_READABLE_VERSIONS
        )
    except ChartscoreError as error:
        failure = error
    if failure is not None:
        # The strict parser names a report: text that is not strict JSON is a bad partial.
        code = (
            ErrorCode.INVALID_PARTIAL if failure.code is ErrorCode.INVALID_REPORT else failure.code
        )
        raise ChartscoreError(code, input=InputKind.PARTIAL)
    site = _read(document)
    if site.ids is None:  # older than format 3: known by its bytes, so a copy is refused
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        site.keys = frozenset({"bytes:" + hashlib.sha256(data).hexdigest()})
    return site


def _read(document: Mapping[str, object]) -> SitePartial:
    bad = False
    result: SitePartial | None = None
    try:
        result = _read_document(document)
    except ChartscoreError as error:
        if error.code is not ErrorCode.INVALID_REPORT:
            raise  # already one of ours: a partial's own code
        bad = True
    except (ValueError, TypeError, KeyError):  # a constructor's check on a malformed count
        bad = True
    if bad or result is None:
        _refuse()
    return result


def _count(value: object) -> int:
    if type(value) is not int or not 0 <= value <= _LIMIT:
        _refuse()
    return value


def _pairs(value: object, *, key_limit: int | None = None) -> dict[int, int]:
    # A flat list [key, count, key, count, ...], keys strictly increasing, counts positive.
    if type(value) is not list or len(value) % 2:
        _refuse()
    out: dict[int, int] = {}
    previous = -1
    for index in range(0, len(value), 2):
        key, count = _count(value[index]), _count(value[index + 1])
        if key <= previous or count == 0 or (key_limit is not None and key >= key_limit):
            _refuse()
        previous = key
        out[key] = count
    return out


def _bits(value: object, version: int) -> int:
    # A bit set: hexadecimal text (format 1: a JSON integer).
    if version == 1:
        return _count(value)
    if type(value) is not str or _BITS.fullmatch(value) is None:
        _refuse()
    return int(value, 16)


def _mask(bits: int, version: int) -> int:
    # A row class in this format's layout. Formats 1 to 3 had no EVIDENCED bit: their plugin
    # labels and item counts sit one bit lower, and a supported answer (whose chain had a
    # clinical span) is evidenced; whether an unsupported one was is not known.
    if version >= 4:
        return bits
    low = bits & _OLD_LOW
    found = low | (bits >> _OLD_PLUGIN_BIT) << (_OLD_PLUGIN_BIT + 1)
    return found | EVIDENCED if low & SUPPORTED else found


def _masks(counted: dict[int, int], version: int) -> dict[int, int]:
    # Row classes with their counts, in this format's layout (see _mask).
    if version >= 4:
        return counted
    return {_mask(bits, version): n for bits, n in counted.items()}


def _counted(value: object, version: int, *, row_classes: bool = False) -> dict[int, int]:
    # Bit sets with their counts: [[bits, count], ...], bit sets strictly increasing, counts
    # positive. Format 1: a flat [bits, count, ...] of integers, or for a stratum's row
    # classes, pairs with the bits as decimal text.
    if version == 1 and not row_classes:
        return _pairs(value)
    if type(value) is not list:
        _refuse()
    out: dict[int, int] = {}
    previous = -1
    for entry in value:
        if type(entry) is not list or len(entry) != 2:
            _refuse()
        if version == 1:
            text = entry[0]
            if type(text) is not str or _DECIMAL_BITS.fullmatch(text) is None:
                _refuse()
            bits = int(text)
        else:
            bits = _bits(entry[0], version)
        count = _count(entry[1])
        if bits <= previous or count == 0:
            _refuse()
        previous = bits
        out[bits] = count
    return out


def _read_document(document: Mapping[str, object]) -> SitePartial:
    data, version, scorer_version = read_opening(
        document, PARTIAL_FORMAT, PARTIAL_READABLE_VERSIONS, _TOP_KEYS, _OPTIONAL_TOP_KEYS
    )
    schema = None if data["schema"] is None else _schema(data["schema"])
    extra = data["extra_predictions"]
    if type(extra) is not str or extra not in EXTRA_PREDICTIONS:
        _refuse()
    ignored = None
    if ("ignored_prediction_count" in data) != (extra == "ignore"):
        _refuse()
    if "ignored_prediction_count" in data:
        ignored = _count(data["ignored_prediction_count"])
    plugins = _plugins(data["plugins"]) if "plugins" in data else None
    fields_raw = data["fields"]
    if type(fields_raw) is not dict or not fields_raw:
        _refuse()
    fields = {
        field_id: _field(field_id, raw, schema, version) for field_id, raw in fields_raw.items()
    }
    clusters = _clusters(data["clusters"], version)
    cases = _cases(data["cases"], fields, version)
    strata = None
    if "strata" in data:
        if schema is None or not schema.strata:
            _refuse()
        strata = _read_strata(data["strata"], schema, fields, version)
    run = read_partial_member(data["run"]) if "run" in data else None
    if "evidence_unknown" in data and (version < 4 or data["evidence_unknown"] is not True):
        _refuse()
    evidence = version >= 4 and "evidence_unknown" not in data
    partial = PartialTally(
        fields,
        ignored,
        cases,
        clusters=clusters,
        plugins=plugins,
        strata=strata,
        run=run,
        evidence=evidence,
    )
    check_identities(partial)
    if ("identity" in data) != (version >= 3):
        _refuse()
    ids = _identity(data["identity"], cases) if version >= 3 else None
    return SitePartial(partial, schema, extra, scorer_version, ids)


def _identity(value: object, cases: CaseClasses) -> frozenset[str]:
    # {"ids": [id, ...] strictly increasing, at least one], "cases": the partial's cases}.
    data = _strict_json.members(value, _IDENTITY_KEYS)
    ids = data["ids"]
    if type(ids) is not list or not ids:
        _refuse()
    if not all(type(i) is str and _ID.fullmatch(i) for i in ids):
        _refuse()
    if ids != sorted(set(ids)):
        _refuse()
    if _count(data["cases"]) != sum(cases.patterns().values()):
        _refuse()
    return frozenset(ids)


def _read_strata(
    value: object, schema: Schema, fields: Mapping[str, FieldCounts], version: int
) -> StrataParts:
    # Every declared stratum, fields of the partial only, and for each key its strata's rows
    # adding up to each field's rows.
    data = _strict_json.members(value, ("classes", "clusters"))
    declared = schema.strata
    names = [stratum_name(key, label) for key, labels in declared for label in labels]
    listed = _strict_json.mapping(data["classes"])
    sums = _strict_json.mapping(data["clusters"])
    if set(listed) != set(names) or set(sums) != set(names):
        _refuse()
    classes: dict[str, dict[str, dict[int, int]]] = {}
    for name in names:
        part = _strict_json.mapping(listed[name])
        classes[name] = {}
        for field_id, rows in part.items():
            if field_id not in fields:
                _refuse()
            counted = _masks(_counted(rows, version, row_classes=True), version)
            if not counted:
                _refuse()
            classes[name][field_id] = counted
    clusters = {name: _clusters(sums[name], version) for name in names}
    return StrataParts(declared, classes, clusters, schema.sampling_fractions())


def _schema(value: object) -> Schema:
    failed = False
    schema: Schema | None = None
    try:
        schema = Schema.from_dict(value)
    except ChartscoreError:
        failed = True
    if failed or schema is None:
        _refuse()
    return schema


def _plugins(value: object) -> PluginLayout:
    data = _strict_json.members(value, ("stamps", "references"))
    references = data["references"]
    if type(references) is not list:
        _refuse()
    pairs = []
    for pair in references:
        if type(pair) is not list or len(pair) != 2 or not all(type(p) is str for p in pair):
            _refuse()
        pairs.append((pair[0], pair[1]))
    return PluginLayout(stamps_from_dict(data["stamps"]), tuple(pairs))


def _field(field_id: object, value: object, schema: Schema | None, version: int) -> FieldCounts:
    if type(field_id) is not str or not valid_field_id(field_id):
        _refuse()
    spec = None if schema is None else schema.get(field_id)
    data = _strict_json.members(value, _FIELD_KEYS, _KAPPA_KEYS + _LABEL_KEYS)
    type_name = data["field_type"]
    if type(type_name) is not str or type_name not in FIELD_TYPE_NAMES:
        _refuse(field_id)
    field_type = FieldType(type_name)
    if (spec is not None and spec.field_type is not field_type) or (
        spec is None and field_type is FieldType.ORDINAL
    ):
        _refuse(field_id)
    kappa = field_type in (FieldType.CATEGORICAL, FieldType.BOOLEAN, FieldType.ORDINAL)
    counts = FieldCounts(field_type, spec, kappa=kappa)
    counts.distances = counts.distance_gold = None  # a partial holds no values
    counts.answerable = _count(data["answerable"])
    counts.unanswerable = _count(data["unanswerable"])
    counts.outcomes = _masks(_counted(data["outcomes"], version), version)
    if sum(counts.outcomes.values()) > counts.field_count:
        _refuse(field_id)
    items = data["items"]
    if type(items) is not list or len(items) != 3:
        _refuse(field_id)
    counts.gold_items, counts.answered_items, counts.matched_items = map(_count, items)
    counts.uncertain = _uncertain(data["uncertainty"], field_id)
    if ("gold_labels" in data) != kappa or ("kappa_pairs" in data) != kappa:
        _refuse(field_id)
    labelled = counts.label_gold is not None
    if ("label_gold" in data) != labelled or ("label_rows" in data) != labelled:
        _refuse(field_id)
    if labelled:
        _read_multi_labels(counts, data["label_gold"], data["label_rows"], field_id)
    if kappa:
        keys = _kappa_keys(field_type, spec, field_id)
        assert counts.gold_keys is not None and counts.kappa_pairs is not None
        for label, n in _pairs(data["gold_labels"], key_limit=len(keys)).items():
            counts.gold_keys[keys[label]] = n
        if sum(counts.gold_keys.values()) != counts.answerable:
            _refuse(field_id)
        for (gold, answer), n in _kappa_pairs(data["kappa_pairs"], len(keys), field_id).items():
            if answer == len(keys) and field_type is not FieldType.CATEGORICAL:
                _refuse(field_id)  # only a categorical answer can be outside the labels
            counts.kappa_pairs[keys[gold], keys[answer] if answer < len(keys) else OUTSIDE] = n
    return counts


OUTSIDE: Final = ("an answer outside the declared choices",)
"""The kappa key standing for every answer outside a categorical field's choices."""


def _kappa_keys(field_type: FieldType, spec: FieldSpec | None, field_id: str) -> list[Any]:
    # The normalized key of each position of kappa's declared labels (see _label_index).
    if field_type is FieldType.BOOLEAN:
        return [False, True]
    if field_type is FieldType.ORDINAL:
        assert spec is not None
        return list(range(len(spec.levels)))
    if spec is None or spec.choices is None:
        _refuse(field_id)
    return sorted(spec.choices)


def _uncertain(value: object, field_id: str) -> dict[tuple[object, bool], int]:
    # [[exact decimal, agreed 0 or 1, rows], ...], strictly increasing, each in [0, 1].
    if type(value) is not list:
        _refuse(field_id)
    out: dict[tuple[object, bool], int] = {}
    previous: tuple[Fraction, int] | None = None
    for entry in value:
        if type(entry) is not list or len(entry) != 3:
            _refuse(field_id)
        exact = parse_exact_decimal(entry[0])
        agreed, rows = _count(entry[1]), _count(entry[2])
        if exact is None or not 0 <= exact <= 1 or agreed > 1 or rows == 0:
            _refuse(field_id)
        if previous is not None and (exact, agreed) <= previous:
            _refuse(field_id)
        previous = (exact, agreed)
        out[Decimal(entry[0]), agreed == 1] = rows
    return out


def _read_multi_labels(counts: FieldCounts, gold: object, rows: object, field_id: str) -> None:
    # A multi-select field's per-label counts back from declared-choice positions.
    assert counts.spec is not None and counts.spec.choices is not None
    assert counts.label_gold is not None and counts.label_rows is not None
    labels = sorted(counts.spec.choices)
    for position, n in _pairs(gold, key_limit=len(labels)).items():
        if n > counts.answerable:
            _refuse(field_id)
        counts.label_gold[labels[position]] = n
    table = _strict_json.members(rows, tuple(LABEL_ROW_KINDS))
    total = _count(table["rows"])
    if total > counts.answerable:
        _refuse(field_id)
    if total:
        counts.label_rows[LABEL_ROW_KINDS["rows"], None] = total
    for name, kind in LABEL_ROW_KINDS.items():
        if name == "rows":
            continue
        for position, n in _pairs(table[name], key_limit=len(labels)).items():
            if n > total:
                _refuse(field_id)
            counts.label_rows[kind, labels[position]] = n
    gold_rows, answer_rows = LABEL_ROW_KINDS["gold"], LABEL_ROW_KINDS["answer"]
    for label in labels:
        both = counts.label_rows[LABEL_ROW_KINDS["both"], label]
        if both > min(counts.label_rows[gold_rows, label], counts.label_rows[answer_rows, label]):
            _refuse(field_id)
        if counts.label_rows[gold_rows, label] > counts.label_gold[label]:
            _refuse(field_id)


def _kappa_pairs(value: object, labels: int, field_id: str) -> dict[tuple[int, int], int]:
    if type(value) is not list or len(value) % 3:
        _refuse(field_id)
    out: dict[tuple[int, int], int] = {}
    for index in range(0, len(value), 3):
        gold, answer, count = (_count(value[index + k]) for k in range(3))
        if gold >= labels or answer > labels or count == 0 or (gold, answer) in out:
            _refuse(field_id)
        out[gold, answer] = count
    return out


def _clusters(value: object, version: int) -> dict[str, dict[str, ClusterSums]]:
    slices = _strict_json.mapping(value)
    out: dict[str, dict[str, ClusterSums]] = {}
    for name, metrics in slices.items():
        if name != OVERALL and name not in FIELD_TYPE_NAMES:
            _refuse()
        entries = _strict_json.mapping(metrics)
        out[name] = {}
        for metric, sums in entries.items():
            known_metric = metric in CORE_METRICS or metric in TYPE_METRICS
            if not known_metric and metric not in LABEL_METRICS and ":" not in metric:
                _refuse()
            out[name][metric] = _sums(sums, version)
    return out


def _sums(value: object, version: int) -> ClusterSums:
    # One metric's per-case sums, as _sums_document writes them. A format 1 partial has no
    # counts of the cases with a success and with a failure: a report merged from it takes the
    # worst-case design effect wherever the per-case sums could not say more.
    width = 6 if version >= 2 else 4
    if type(value) is not list or len(value) != width:
        _refuse()
    known = [None if value[i] is None else _count(value[i]) for i in (1, 2, 4, 5) if i < width]
    found = _cluster_sums(_count(value[0]), known + [None] * (4 - len(known)), _count(value[3]))
    if found is None:
        _refuse()
    return found


def _cluster_sums(cases: int, known: list[int | None], sum_mm: int) -> ClusterSums | None:
    # None for sums no cases could give (the caller refuses them outside this frame).
    try:
        return ClusterSums(cases, known[0], known[1], sum_mm, known[2], known[3])
    except ValueError:
        return None


def _cases(value: object, fields: Mapping[str, FieldCounts], version: int) -> CaseClasses:
    data = _strict_json.members(value, _CASE_KEYS)
    groups_raw = data["groups"]
    if type(groups_raw) is not list:
        _refuse()
    groups = []
    for entry in groups_raw:
        if type(entry) is not list or len(entry) != 3:
            _refuse()
        type_name, extras, row = entry
        if type(type_name) is not str or type_name not in FIELD_TYPE_NAMES:
            _refuse()
        if type(extras) is not list or not all(type(name) is str for name in extras):
            _refuse()
        groups.append(((type_name, tuple(extras)), _mask(_bits(row, version), version)))
    if len(set(groups)) != len(groups):
        _refuse()
    patterns = Counter(_counted(data["patterns"], version))
    if any(bits >> len(groups) for bits in patterns):
        _refuse()
    by_field_raw = _strict_json.mapping(data["by_field"])
    by_field = {}
    for field_id, rows in by_field_raw.items():
        if field_id not in fields:
            _refuse()
        by_field[field_id] = Counter(_masks(_counted(rows, version), version))
    return CaseClasses.from_counts(groups, patterns, by_field, _count(data["ignored"]))
