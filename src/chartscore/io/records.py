"""Gold and prediction rows from parsed JSON objects, validated without building records.

The CLI streams millions of rows, so it checks each parsed object directly
with the same rules (:mod:`chartscore._rules`) the attrs records use, instead
of constructing a record per row. A property test keeps the two paths in
agreement: they accept the same rows and refuse the same rows with the same code.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

from chartscore import _rules
from chartscore.errors import ErrorCode, fail
from chartscore.evidence import ReviewerState, SourceKind, TransformationKind
from chartscore.model import FieldType, Value

GOLD_KEYS: Final = frozenset({"case_id", "field_id", "field_type", "value"})
PREDICTION_REQUIRED: Final = frozenset({"case_id", "field_id", "value"})
PREDICTION_KEYS: Final = PREDICTION_REQUIRED | {"normalized_fact_digest", "evidence_chain"}
CHAIN_KEYS: Final = frozenset(
    {
        "field_id",
        "source_locations",
        "normalized_fact_digest",
        "transformation_kind",
        "transformation_digest",
        "uncertainty",
        "reviewer_state",
    }
)
SOURCE_REQUIRED: Final = frozenset({"source_digest", "start_offset", "end_offset"})
SOURCE_KEYS: Final = SOURCE_REQUIRED | {"kind"}

_FIELD_TYPES: Final = {member.value: member for member in FieldType}
_SOURCE_KINDS: Final = {member.value: member for member in SourceKind}
_TRANSFORMATION_KINDS: Final = frozenset(member.value for member in TransformationKind)
_REVIEWER_STATES: Final = frozenset(member.value for member in ReviewerState)
_CLINICAL: Final = SourceKind.CLINICAL_RECORD


def _check_keys(keys: object, required: frozenset[str], allowed: frozenset[str]) -> None:
    present = set(keys)  # type: ignore[call-overload]
    if not present <= allowed:
        fail(ErrorCode.UNKNOWN_KEY)
    if not required <= present:
        fail(ErrorCode.MISSING_KEY)


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


def _checked_gold_row(row: dict[str, object]) -> tuple[str, str, FieldType, Value]:
    """``(case_id, field_id, field_type, value)`` from a gold object, check by check.

    Raises:
        ChartscoreError: ``unknown_key``, ``missing_key``, ``invalid_case_id``,
            ``invalid_field_id``, ``invalid_field_type`` or ``invalid_value``.
            (Whether the value suits the type is checked by the scorer.)
    """
    if row.keys() != GOLD_KEYS:
        _check_keys(row.keys(), GOLD_KEYS, GOLD_KEYS)
    case_id, field_id = _identity(row)
    field_type = row["field_type"]
    if type(field_type) is not str or field_type not in _FIELD_TYPES:
        fail(ErrorCode.INVALID_FIELD_TYPE)
    return case_id, field_id, _FIELD_TYPES[field_type], _value(row["value"])


def _checked_prediction_row(row: dict[str, object]) -> tuple[str, str, Value, bool]:
    """``(case_id, field_id, value, supported)`` from a prediction object, check by check.

    ``supported`` applies the evidence rule of
    :meth:`chartscore.Prediction.is_supported` after validating the chain fully.
    Checks run in the order a caller building records would meet them: the
    chain first, then the prediction's own fields.

    Raises:
        ChartscoreError: a key, identity, value, digest or evidence-chain code.
    """
    keys = row.keys()
    if keys != PREDICTION_REQUIRED:
        _check_keys(keys, PREDICTION_REQUIRED, PREDICTION_KEYS)
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
        return case_id, field_id, value, False
    chain_field, fact_digest, clinical = facts
    supported = (
        clinical and chain_field == field_id and digest is not None and fact_digest == digest
    )
    return case_id, field_id, value, supported


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
            _check_keys(source.keys(), SOURCE_REQUIRED, SOURCE_KEYS)
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


def _chain_facts(chain: dict[str, object]) -> tuple[str, str, bool]:
    # Validates a chain as EvidenceChain does, check by check in record order;
    # returns (field id, fact digest, whether any span is from a clinical record).
    if chain.keys() != CHAIN_KEYS:
        _check_keys(chain.keys(), CHAIN_KEYS, CHAIN_KEYS)
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
    return chain_field, fact_digest, _CLINICAL in kinds  # type: ignore[return-value]


# --- The fast path ------------------------------------------------------------------------
# Millions of rows go through here. Each function applies the same rules as the
# checked functions above with as few Python operations as possible, and answers
# None when anything is unusual; the checked function then finds the precise code.

_SCALAR_TYPES: Final = frozenset({str, int, bool, Decimal, type(None)})
_DIGESTS = re.compile(f"(?:{_rules.DIGEST_PATTERN})+").fullmatch
_DIGEST_LENGTH: Final = len("sha256:") + 64
_ZERO: Final = Decimal(0)
_ONE: Final = Decimal(1)


def _fast_value(raw: object) -> tuple[Value] | None:
    if type(raw) in _SCALAR_TYPES:
        return (raw,)  # type: ignore[return-value]
    if type(raw) is list and all(type(item) is str for item in raw):
        return (frozenset(raw),)
    return None


def gold_row(row: dict[str, object]) -> tuple[str, str, FieldType, Value]:
    """``(case_id, field_id, field_type, value)`` from a gold object.

    Raises:
        ChartscoreError: ``unknown_key``, ``missing_key``, ``invalid_case_id``,
            ``invalid_field_id``, ``invalid_field_type`` or ``invalid_value``.
            (Whether the value suits the type is checked by the scorer.)
    """
    if len(row) == 4:
        try:
            case_id = row["case_id"]
            field_id = row["field_id"]
            type_name = row["field_type"]
            value = _fast_value(row["value"])
        except KeyError:
            return _checked_gold_row(row)
        field_type = _FIELD_TYPES.get(type_name) if type(type_name) is str else None
        if (
            value is not None
            and field_type is not None
            and type(case_id) is str
            and 0 < len(case_id) <= _rules.MAX_CASE_ID_LENGTH
            and _rules.is_field_id(field_id)
        ):
            return case_id, field_id, field_type, value[0]  # type: ignore[return-value]
    return _checked_gold_row(row)


def prediction_row(row: dict[str, object]) -> tuple[str, str, Value, bool]:
    """``(case_id, field_id, value, supported)`` from a prediction object.

    ``supported`` applies the evidence rule of
    :meth:`chartscore.Prediction.is_supported` after validating the chain fully.
    Checks run in the order a caller building records would meet them: the
    chain first, then the prediction's own fields.

    Raises:
        ChartscoreError: a key, identity, value, digest or evidence-chain code.
    """
    size = len(row)
    if 3 <= size <= 5:
        try:
            case_id = row["case_id"]
            field_id = row["field_id"]
            value = _fast_value(row["value"])
        except KeyError:
            return _checked_prediction_row(row)
        digest = row.get("normalized_fact_digest")
        chain = row.get("evidence_chain")
        if (
            value is not None
            and size == 3 + ("normalized_fact_digest" in row) + ("evidence_chain" in row)
            and type(case_id) is str
            and 0 < len(case_id) <= _rules.MAX_CASE_ID_LENGTH
            and _rules.is_field_id(field_id)
            and (digest is None or _rules.is_digest(digest))
        ):
            if chain is None:
                return case_id, field_id, value[0], False  # type: ignore[return-value]
            facts = _fast_chain_facts(chain) if type(chain) is dict else None
            if facts is not None:
                chain_field, fact, clinical = facts
                supported = clinical and chain_field == field_id and fact == digest
                return case_id, field_id, value[0], supported  # type: ignore[return-value]
    return _checked_prediction_row(row)


def _fast_chain_facts(chain: dict[str, object]) -> tuple[str, str, bool] | None:
    if len(chain) != len(CHAIN_KEYS):
        return None
    try:
        field_id = chain["field_id"]
        sources = chain["source_locations"]
        fact = chain["normalized_fact_digest"]
        transformation_kind = chain["transformation_kind"]
        transformation = chain["transformation_digest"]
        uncertainty = chain["uncertainty"]
        state = chain["reviewer_state"]
    except KeyError:
        return None
    if not (
        type(sources) is list
        and type(fact) is str
        and type(transformation) is str
        and type(transformation_kind) is str
        and transformation_kind in _TRANSFORMATION_KINDS
        and type(state) is str
        and state in _REVIEWER_STATES
        and _rules.is_field_id(field_id)
    ):
        return None
    if type(uncertainty) is Decimal:
        if not (uncertainty.is_finite() and _ZERO <= uncertainty <= _ONE):
            return None
    elif not _rules.is_uncertainty(uncertainty):
        return None
    pieces = [fact, transformation]
    clinical = False
    seen = set()
    for source in sources:
        if type(source) is not dict:
            return None
        size = len(source)
        try:
            digest = source["source_digest"]
            start = source["start_offset"]
            end = source["end_offset"]
            kind = source["kind"] if size == 4 else "clinical_record"
        except KeyError:
            return None
        if not (
            size in {3, 4}
            and type(kind) is str
            and kind in _SOURCE_KINDS
            and type(start) is int
            and type(end) is int
            and 0 <= start < end <= _rules.MAX_OFFSET
            and type(digest) is str
        ):
            return None
        identity = (digest, start, end, kind)
        if identity in seen:
            return None
        seen.add(identity)
        clinical = clinical or kind == "clinical_record"
        pieces.append(digest)
    # One regex for all digests; the length check keeps them aligned.
    if any(len(piece) != _DIGEST_LENGTH for piece in pieces) or _DIGESTS("".join(pieces)) is None:
        return None
    return field_id, fact, clinical  # type: ignore[return-value]
