"""Gold and prediction rows from parsed JSON objects, validated without building records.

The CLI streams millions of rows, so it checks each parsed object directly
with the same rules (:mod:`chartscore.records._rules`) the attrs records use, instead
of constructing a record per row. These are the precise checks, one rule at a
time, that name the error; well-formed lines usually take the quicker route
in :mod:`chartscore.io.fastpath`, which answers "fine" or "ask records.py".
A property test keeps these checks and the records in agreement: they accept
the same rows and refuse the same rows with the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from chartscore import _format
from chartscore.errors import ErrorCode, fail
from chartscore.metrics import NOT_APPLICABLE, FieldType, GoldValue, Value
from chartscore.records import _rules
from chartscore.records.evidence import ReviewerState, SourceKind, TransformationKind
from chartscore.records.prediction_row import (
    NO_EVIDENCE,
    SUPPORTED_EVIDENCE,
    UNSUPPORTED_EVIDENCE,
    PredictionRow,
)
from chartscore.records.usage import is_run_header, run_header_of, usage_of

GOLD_KEYS: Final = frozenset(_format.GOLD_KEY_ORDER)
GOLD_ALLOWED: Final = GOLD_KEYS | frozenset(_format.GOLD_OPTIONAL_KEYS)
PREDICTION_REQUIRED: Final = frozenset({"case_id", "field_id", "value"})
PREDICTION_KEYS: Final = frozenset(_format.PREDICTION_KEY_ORDER)
PREDICTION_LINE_KEYS: Final = PREDICTION_KEYS | {_format.USAGE_KEY}
"""A prediction line's keys: the record's, and the optional ``usage``."""
PREDICTION_LINE_ORDER: Final = (*_format.PREDICTION_KEY_ORDER, _format.USAGE_KEY)
CHAIN_KEYS: Final = frozenset(_format.CHAIN_KEY_ORDER)
SOURCE_REQUIRED: Final = frozenset({"source_digest", "start_offset", "end_offset"})
SOURCE_KEYS: Final = frozenset(_format.SOURCE_KEY_ORDER)

_FIELD_TYPES: Final = {member.value: member for member in FieldType}
_SOURCE_KINDS: Final = {member.value: member for member in SourceKind}
_TRANSFORMATION_KINDS: Final = frozenset(member.value for member in TransformationKind)
_REVIEWER_STATES: Final = frozenset(member.value for member in ReviewerState)
_CLINICAL: Final = SourceKind.CLINICAL_RECORD


_FAILED: Final = object()


def _as_dict(value: object) -> dict[str, object] | object:
    # A caller's mapping as a plain dict; a key that is not a str becomes a
    # placeholder that no format defines (so it is an unknown key, never shown).
    if type(value) is not dict and not isinstance(value, Mapping):
        return value
    pairs = list(value.items())
    plain: dict[str, object] = {}
    strange = 0
    for key, item in pairs:
        name = key
        if type(key) is not str:
            strange += 1
            name = "\x00" * strange  # not a format key (nor a key the caller used)
            while name in plain or any(type(k) is str and k == name for k, _ in pairs):
                name += "\x00"
        plain[name] = item
    return plain


def _as_list(value: object) -> list[object] | object:
    # A tuple reads as a JSON array; the items are kept as they are.
    # By identity: ``type(value) in (list, tuple)`` would run a metaclass's __eq__.
    if type(value) is list or type(value) is tuple:
        return list(value)
    return value


def _read_dict(value: object) -> object:
    # _as_dict behind a guard: a mapping whose reading fails becomes _FAILED,
    # which the row rules then refuse where it stands (a row, a chain, a source).
    plain: object = _FAILED
    try:
        plain = _as_dict(value)
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        plain = _FAILED
    return plain


def plain_row(row: object) -> dict[str, object]:
    """A caller's mapping as the dict a JSON Lines line would have parsed to.

    The row, its evidence chain and that chain's source locations become
    dicts (from any Mapping) and lists (from a list or tuple): JSON-like
    input. Every other value is kept as it is and afterwards only inspected
    by its exact type. Any exception the caller's objects raise while being
    read (even from ``isinstance``) is dropped, never chained: a row that
    cannot be read is ``not_an_object``; a chain or source location that
    cannot be read is refused by the row rules as not an object.

    Raises:
        ChartscoreError: ``not_an_object`` when ``row`` is not a mapping or
            reading it failed.
    """
    plain = _read_dict(row)
    if type(plain) is not dict:
        fail(ErrorCode.NOT_AN_OBJECT)
    if "value" in plain:
        plain["value"] = _as_list(plain["value"])
    chain = plain.get("evidence_chain")
    if chain is not None:
        chain = plain["evidence_chain"] = _read_dict(chain)
        if type(chain) is dict and "source_locations" in chain:
            sources = chain["source_locations"] = _as_list(chain["source_locations"])
            if type(sources) is list:
                chain["source_locations"] = [_read_dict(source) for source in sources]
    return plain


def _check_keys(
    keys: object, order: tuple[str, ...], required: frozenset[str], allowed: frozenset[str]
) -> None:
    # A missing key is reported first and named (the first in the format's
    # documented order): a misspelled key then shows as the format key it
    # should have been. An unknown key is named only when it is itself a
    # format key in the wrong object; any other key name could be data.
    present = set(keys)  # type: ignore[call-overload]
    for name in order:
        if name in required and name not in present:
            fail(ErrorCode.MISSING_KEY, key=name)
    unknown = present - allowed
    if unknown:
        named = sorted(name for name in unknown if _rules.is_format_key(name))
        fail(ErrorCode.UNKNOWN_KEY, key=named[0] if named else None)


def _value(raw: object) -> Value:
    # JSON gives None, str, bool, int, Decimal, list or dict.
    if type(raw) is list:
        if all(type(item) is str for item in raw):
            return frozenset(raw)
        fail(ErrorCode.INVALID_VALUE)
    if type(raw) is dict:
        fail(ErrorCode.INVALID_VALUE)
    return raw  # type: ignore[return-value]


def _identity(row: dict[str, object]) -> tuple[str, str]:
    case_id = row["case_id"]
    if not _rules.is_case_id(case_id):
        fail(ErrorCode.INVALID_CASE_ID)
    field_id = row["field_id"]
    if not _rules.is_field_id(field_id):
        fail(ErrorCode.INVALID_FIELD_ID)
    return case_id, field_id  # type: ignore[return-value]


def gold_row(row: dict[str, object]) -> tuple[str, str, FieldType, GoldValue]:
    """``(case_id, field_id, field_type, value)`` from a gold object, check by check.

    The optional ``not_applicable`` key: ``true`` (with a null value) gives the value
    :data:`~chartscore.metrics.NOT_APPLICABLE`; ``false`` is an ordinary row.

    Raises:
        ChartscoreError: ``unknown_key``, ``missing_key``, ``invalid_case_id``,
            ``invalid_field_id``, ``invalid_field_type``, ``invalid_value`` or
            ``invalid_not_applicable`` (not a boolean, or true beside a value).
            (Whether the value suits the type is checked by the scorer.)
    """
    keys = row.keys()
    if keys != GOLD_KEYS:
        _check_keys(keys, _format.GOLD_KEY_ORDER, GOLD_KEYS, GOLD_ALLOWED)
    case_id, field_id = _identity(row)
    field_type = row["field_type"]
    if type(field_type) is not str or field_type not in _FIELD_TYPES:
        fail(ErrorCode.INVALID_FIELD_TYPE)
    value = _value(row["value"])
    if len(keys) != len(GOLD_KEYS):
        return case_id, field_id, _FIELD_TYPES[field_type], not_applicable(row, value)
    return case_id, field_id, _FIELD_TYPES[field_type], value


def not_applicable(row: Mapping[str, object], value: Value) -> GoldValue:
    """A gold row's value under its ``not_applicable`` key (present): the value, or the marker.

    Raises:
        ChartscoreError: ``invalid_not_applicable`` when the key is not a boolean, or is
            true beside a value that is not null.
    """
    flag = row["not_applicable"]
    if flag is False:
        return value
    if flag is not True or value is not None:
        fail(ErrorCode.INVALID_NOT_APPLICABLE)
    return NOT_APPLICABLE


def prediction_row(row: dict[str, object]) -> PredictionRow:
    """The :class:`PredictionRow` of a prediction object.

    Checked check by check; ``uncertainty`` is the chain's (None without a chain).

    ``evidence`` applies the evidence rule of
    :meth:`chartscore.Prediction.evidence_state` after validating the chain fully.
    Checks run in the order a caller building records would meet them: the
    chain first, then the prediction's own fields.

    A line's ``usage`` object becomes the row's ``usage``; a run header line
    (``{"chartscore_run": ...}``) becomes a header row (see
    :class:`~chartscore.records.prediction_row.PredictionRow`), which only the first
    line of a file may be (the reader checks).

    Raises:
        ChartscoreError: a key, identity, value, digest or evidence-chain code;
            ``invalid_usage`` or ``invalid_run_header``.
    """
    keys = row.keys()
    if keys != PREDICTION_REQUIRED:
        if is_run_header(row):
            return PredictionRow("", "", None, NO_EVIDENCE, None, run_header_of(row))
        _check_keys(keys, PREDICTION_LINE_ORDER, PREDICTION_REQUIRED, PREDICTION_LINE_KEYS)
        if _format.USAGE_KEY in keys:
            return _with_usage(row)
    chain = row.get("evidence_chain")
    facts = _chain_facts(chain) if type(chain) is dict else None
    case_id, field_id = _identity(row)
    value = _value(row["value"])
    digest = row.get("normalized_fact_digest")
    if digest is not None and not _rules.is_digest(digest):
        fail(ErrorCode.INVALID_DIGEST)
    if facts is None:
        if chain is not None:
            fail(ErrorCode.INVALID_EVIDENCE_CHAIN)
        return PredictionRow(case_id, field_id, value)
    chain_field, fact_digest, clinical, sourced = facts
    supported = (
        clinical and chain_field == field_id and digest is not None and fact_digest == digest
    )
    evidence = SUPPORTED_EVIDENCE if supported else UNSUPPORTED_EVIDENCE if sourced else NO_EVIDENCE
    return PredictionRow(case_id, field_id, value, evidence, chain["uncertainty"])  # type: ignore[index]


def _with_usage(row: dict[str, object]) -> PredictionRow:
    # The usage is checked after the prediction, so a bad prediction is named first.
    usage = row.pop(_format.USAGE_KEY)
    found = prediction_row(row)
    return found._replace(usage=usage_of(usage))


def _source_kinds(raw: object) -> list[SourceKind]:
    # Validates every span as SourceLocation does; returns their kinds.
    if type(raw) is not list:
        fail(ErrorCode.INVALID_EVIDENCE_CHAIN)
    kinds = []
    seen = set()
    for source in raw:
        if type(source) is not dict:
            fail(ErrorCode.INVALID_SOURCE_LOCATION)
        if source.keys() != SOURCE_REQUIRED:
            _check_keys(source.keys(), _format.SOURCE_KEY_ORDER, SOURCE_REQUIRED, SOURCE_KEYS)
        kind_name = source.get("kind", "clinical_record")
        if type(kind_name) is not str or kind_name not in _SOURCE_KINDS:
            fail(ErrorCode.INVALID_SOURCE_KIND)
        digest = source["source_digest"]
        if not _rules.is_digest(digest):
            fail(ErrorCode.INVALID_DIGEST)
        start = source["start_offset"]
        end = source["end_offset"]
        if not (_rules.is_offset(start) and _rules.is_offset(end)):
            fail(ErrorCode.INVALID_OFFSET)
        if end <= start:
            fail(ErrorCode.INVALID_SPAN)
        kind = _SOURCE_KINDS[kind_name]
        identity = (digest, start, end, kind)
        if identity in seen:
            fail(ErrorCode.DUPLICATE_SOURCE)
        seen.add(identity)
        kinds.append(kind)
    return kinds


def _chain_facts(chain: dict[str, object]) -> tuple[str, str, bool, bool]:
    # Validates a chain as EvidenceChain does, check by check in record order; returns (field
    # id, fact digest, whether any span is from a clinical record, whether it has any span).
    if chain.keys() != CHAIN_KEYS:
        _check_keys(chain.keys(), _format.CHAIN_KEY_ORDER, CHAIN_KEYS, CHAIN_KEYS)
    kinds = _source_kinds(chain["source_locations"])
    transformation = chain["transformation_kind"]
    if type(transformation) is not str or transformation not in _TRANSFORMATION_KINDS:
        fail(ErrorCode.INVALID_TRANSFORMATION_KIND)
    state = chain["reviewer_state"]
    if type(state) is not str or state not in _REVIEWER_STATES:
        fail(ErrorCode.INVALID_REVIEWER_STATE)
    chain_field = chain["field_id"]
    if not _rules.is_field_id(chain_field):
        fail(ErrorCode.INVALID_FIELD_ID)
    fact_digest = chain["normalized_fact_digest"]
    if not (_rules.is_digest(fact_digest) and _rules.is_digest(chain["transformation_digest"])):
        fail(ErrorCode.INVALID_DIGEST)
    if not _rules.is_uncertainty(chain["uncertainty"]):
        fail(ErrorCode.INVALID_UNCERTAINTY)
    return chain_field, fact_digest, _CLINICAL in kinds, bool(kinds)  # type: ignore[return-value]
