"""Gold fields and predictions: frozen, validated records with value-free reprs.

A record is checked when it is built, so a record that exists is well formed.
Its repr shows only the field id and type; case ids, values, digests and
evidence never appear in a repr, a str() or an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

import attrs

from chartscore._format import (
    GOLD_KEY_ORDER,
    MAX_CASE_ID_LENGTH,
    PREDICTION_KEY_ORDER,
    RUN_HEADER_KEY,
    USAGE_KEY,
)
from chartscore.errors import ErrorCode, fail

# Scalar, Value and to_field_type stay importable here, where they lived before metrics.
from chartscore.metrics import (  # noqa: F401
    NOT_APPLICABLE,
    FieldType,
    GoldValue,
    Scalar,
    Value,
    to_field_type,
)
from chartscore.records import _rules, bulk
from chartscore.records._frozen import slot_setters
from chartscore.records.evidence import EvidenceChain, SourceKind, SourceLocation
from chartscore.records.normalize import (
    NUMBER_MAX_DIGITS,
    boolean_key,
    date_key,
    multi_key,
    number_key,
    text_key,
)
from chartscore.records.rows import gold_row, plain_row, prediction_row
from chartscore.stats.run_cost import RunHeader

_GOLD_KEY = {
    FieldType.TEXT: text_key,
    FieldType.CATEGORICAL: text_key,
    FieldType.NUMBER: number_key,
    FieldType.BOOLEAN: boolean_key,
    FieldType.DATE: date_key,
    # An ordinal gold value must name a schema level; without the schema we can
    # only require a level-shaped value (an int or a string).
    FieldType.ORDINAL: lambda v: v if (type(v) is int or type(v) is str) else None,
    FieldType.MULTI: multi_key,
}


def is_valid_gold_value(field_type: FieldType, value: object) -> bool:
    """Whether ``value`` is a valid answerable gold value for ``field_type``."""
    return _GOLD_KEY[field_type](value) is not None


_FIELD_TYPE_OF: Final = {member.value: member for member in FieldType}
# Gold values of these types are valid for any string: no normalizer needs to run.
_ANY_STRING_GOLD: Final = frozenset({FieldType.TEXT, FieldType.CATEGORICAL, FieldType.ORDINAL})
_KNOWN_FIELD_IDS: Final = _rules.known_field_ids
_canonical_field_id: Final = _rules.canonical_field_id
_is_value: Final = _rules.is_value
_is_unique_digest: Final = _rules.is_unique_digest


# Sufficient (not necessary) shapes of valid number and date strings: ASCII
# digits, no spaces, few enough digits to be in range. Anything else is asked
# of the normalizer itself, so these only skip work, never change a verdict.
_PLAIN_NUMBER: Final = re.compile(r"[+-]?(?:[0-9]{1,50}(?:\.[0-9]{0,49})?|\.[0-9]{1,49})").fullmatch
_PLAIN_DATE: Final = re.compile(
    r"[0-9]{4}(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|1[0-9]|2[0-8]))?)?"
).fullmatch
_INT_LIMIT: Final = 10**NUMBER_MAX_DIGITS
_NUMBER: Final = FieldType.NUMBER
_DATE: Final = FieldType.DATE
_BOOLEAN: Final = FieldType.BOOLEAN
_ORDINAL: Final = FieldType.ORDINAL
_MULTI: Final = FieldType.MULTI


def _valid_gold_string(field_type: FieldType, value: str) -> bool:
    # A string gold value of a type whose normalizer does not take every string.
    if field_type is _NUMBER:
        return _PLAIN_NUMBER(value) is not None or number_key(value) is not None
    if field_type is _DATE:
        plain = _PLAIN_DATE(value) is not None and not value.startswith("0000")
        return plain or date_key(value) is not None
    return field_type in _ANY_STRING_GOLD


def _gold_value_code(field_type: FieldType, value: object, kind: type) -> ErrorCode | None:
    """The code of the first value rule a gold value (not None) breaks, or None.

    ``kind`` is ``type(value)``. The same verdicts as :func:`chartscore.records._rules.is_value`
    followed by :func:`is_valid_gold_value`, with the common exact types
    decided without running a normalizer.
    """
    if kind is str:
        valid = _valid_gold_string(field_type, value)  # type: ignore[arg-type]
    elif kind is bool:
        valid = field_type is _BOOLEAN
    elif kind is int:
        valid = field_type is _ORDINAL or (
            field_type is _NUMBER and -_INT_LIMIT < value < _INT_LIMIT
        )
    else:
        if not _is_value(value):
            return ErrorCode.INVALID_VALUE
        valid = is_valid_gold_value(field_type, value)
    return None if valid else ErrorCode.INVALID_GOLD_VALUE


@attrs.frozen(repr=False, init=False)
class GoldField:
    """One gold abstraction: the answer a field should have, or None if unanswerable.

    Args:
        case_id: Private join key; 1..128 characters. Never reported.
        field_id: Developer-authored field name such as ``dx.onset``; reported.
        field_type: :class:`FieldType` (or its string value).
        value: The gold answer, or None when the chart cannot answer the field, or
            :data:`~chartscore.metrics.NOT_APPLICABLE` when the field does not apply to
            the chart (the gold line's ``"not_applicable": true``; :attr:`not_applicable`).
            Must be valid for ``field_type``. A list, tuple or set of strings
            (multi-select) is stored as a frozenset.

    Raises:
        ChartscoreError: ``invalid_case_id``, ``invalid_field_id``,
            ``invalid_field_type``, ``invalid_value`` or ``invalid_gold_value``
            (the first rule broken, in that order).
    """

    # repr=False on every private field: tools that walk attrs fields (rich's
    # pretty printer, tracebacks with locals) must not show them either.
    case_id: str = attrs.field(repr=False)
    field_id: str
    field_type: FieldType
    value: GoldValue = attrs.field(repr=False)

    def __init__(self, case_id: str, field_id: str, field_type: object, value: object) -> None:
        # Validate first, then fill the slots (see chartscore.records._frozen). Written
        # out flat: notebooks build millions of these. Every check asks the
        # exact type first, so a caller's object never runs code here.
        kind = type(value)
        strings = False  # a list, tuple or set of strings, now a frozenset
        if kind is list or kind is tuple or kind is set:
            for item in value:  # type: ignore[attr-defined]
                if type(item) is not str:
                    break
            else:
                value, kind, strings = frozenset(value), frozenset, True  # type: ignore[call-overload]
        if (
            type(case_id) is not str
            or not 0 < len(case_id) <= MAX_CASE_ID_LENGTH
            or (not case_id.isascii() and not _rules.is_text(case_id))
        ):
            fail(ErrorCode.INVALID_CASE_ID)
        # The shared copy of a field id: one string for all the rows that name it.
        shared = _KNOWN_FIELD_IDS.get(field_id) if type(field_id) is str else None
        if shared is None:
            shared = _canonical_field_id(field_id)
            if shared is None:
                fail(ErrorCode.INVALID_FIELD_ID)
        if type(field_type) is not FieldType:
            field_type = _FIELD_TYPE_OF.get(field_type) if type(field_type) is str else None
            if field_type is None:
                fail(ErrorCode.INVALID_FIELD_TYPE)
        # The value rules (invalid_value, then invalid_gold_value); the common
        # exact types are decided here, the rest by _gold_value_code.
        if value is not None and value is not NOT_APPLICABLE:
            if kind is str:
                valid = field_type in _ANY_STRING_GOLD or _valid_gold_string(field_type, value)  # type: ignore[arg-type]
            elif kind is bool:
                valid = field_type is _BOOLEAN
            elif strings:
                valid = field_type is _MULTI
            else:
                code = _gold_value_code(field_type, value, kind)
                if code is not None:
                    fail(code)
                valid = True
            if not valid:
                fail(ErrorCode.INVALID_GOLD_VALUE)
        _set_gold_case_id(self, case_id)
        _set_gold_field_id(self, shared)
        _set_gold_field_type(self, field_type)
        _set_gold_value(self, value)

    @property
    def not_applicable(self) -> bool:
        """Whether the field does not apply to the chart (the value is ``NOT_APPLICABLE``)."""
        return self.value is NOT_APPLICABLE

    def __reduce__(self) -> tuple[type[GoldField], tuple[str, str, FieldType, GoldValue]]:
        # Pickled and copied by calling the class again: a loaded record is validated too.
        return type(self), (self.case_id, self.field_id, self.field_type, self.value)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> GoldField:
        """A gold record from a mapping shaped like a gold file line.

        The file reader's rules and codes, in its order: exactly the keys
        ``case_id``, ``field_id``, ``field_type`` and ``value`` (a missing key
        is named, as in a file), and optionally ``not_applicable``; JSON-like
        values, so a list (or tuple) of strings is a multi-select value and a
        dict is an invalid value.

        Raises:
            ChartscoreError: ``not_an_object``, ``missing_key``,
                ``unknown_key``, or a record code (see the class).
        """

        case_id, field_id, field_type, value = gold_row(plain_row(row))
        return cls(case_id, field_id, field_type, value)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> list[GoldField]:
        """``[GoldField.from_dict(row) for row in rows]``, with the garbage collector paused.

        For notebooks that hold their decoded rows while they build records:
        the cyclic collector would walk those rows again and again (see
        docs/performance.md). It is paused while the list is built and
        restored afterwards. The same rules and codes as :meth:`from_dict`;
        rows shaped as ``json.loads`` gives them take a quicker route.

        Raises:
            ChartscoreError: :meth:`from_dict`'s code for the first row it
                refuses, with ``item``, that row's 0-based position;
                ``invalid_collection`` when ``rows`` is not iterable or
                iterating it failed.
        """
        return bulk.build_all(rows, cls, bulk.quick_gold, cls.from_dict)

    def __repr__(self) -> str:
        return (
            f"GoldField(field_id={self.field_id!r}, field_type={self.field_type.value!r}, "
            "<case id and value hidden>)"
        )


@attrs.frozen(repr=False, init=False)
class Prediction:
    """One system output for a (case, field).

    Args:
        case_id: Private join key matching a gold record.
        field_id: The field answered.
        value: The answer, or None for an explicit abstention. A list, tuple or
            set of strings (multi-select) is stored as a frozenset.
        normalized_fact_digest: The producer's digest of the submitted fact, if any.
        evidence_chain: The producer's :class:`EvidenceChain`, if any.

    Raises:
        ChartscoreError: ``invalid_case_id``, ``invalid_field_id``,
            ``invalid_value``, ``invalid_digest`` or ``invalid_evidence_chain``
            (the first rule broken, in that order).
    """

    case_id: str = attrs.field(repr=False)
    field_id: str
    value: Value = attrs.field(repr=False)
    normalized_fact_digest: str | None = attrs.field(default=None, repr=False)
    evidence_chain: EvidenceChain | None = attrs.field(default=None, repr=False)

    def __init__(
        self,
        case_id: str,
        field_id: str,
        value: object,
        normalized_fact_digest: str | None = None,
        evidence_chain: EvidenceChain | None = None,
    ) -> None:
        # Validate first, then fill the slots; see GoldField.__init__.
        kind = type(value)
        strings = False  # a list, tuple or set of strings, now a frozenset
        if kind is list or kind is tuple or kind is set:
            for item in value:  # type: ignore[attr-defined]
                if type(item) is not str:
                    break
            else:
                value, strings = frozenset(value), True  # type: ignore[call-overload]
        if (
            type(case_id) is not str
            or not 0 < len(case_id) <= MAX_CASE_ID_LENGTH
            or (not case_id.isascii() and not _rules.is_text(case_id))
        ):
            fail(ErrorCode.INVALID_CASE_ID)
        # The shared copy of a field id: one string for all the rows that name it.
        shared = _KNOWN_FIELD_IDS.get(field_id) if type(field_id) is str else None
        if shared is None:
            shared = _canonical_field_id(field_id)
            if shared is None:
                fail(ErrorCode.INVALID_FIELD_ID)
        if not (
            strings or value is None or kind is str or kind is int or kind is bool
        ) and not _is_value(value):
            fail(ErrorCode.INVALID_VALUE)
        digest = normalized_fact_digest
        if digest is not None:
            if (
                type(digest) is str
                and type(evidence_chain) is EvidenceChain
                and digest == evidence_chain.normalized_fact_digest
            ):
                # Checked when the chain was built; keep one copy of the string.
                digest = evidence_chain.normalized_fact_digest
            elif not _is_unique_digest(digest):
                fail(ErrorCode.INVALID_DIGEST)
        if evidence_chain is not None and type(evidence_chain) is not EvidenceChain:
            fail(ErrorCode.INVALID_EVIDENCE_CHAIN)
        _set_prediction_case_id(self, case_id)
        _set_prediction_field_id(self, shared)
        _set_prediction_value(self, value)
        _set_prediction_digest(self, digest)
        _set_prediction_chain(self, evidence_chain)

    def __reduce__(self) -> tuple[type[Prediction], tuple[object, ...]]:
        # Pickled and copied by calling the class again: a loaded record is validated too.
        return type(self), tuple(getattr(self, name) for name in _PREDICTION_FIELDS)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Prediction:
        """A prediction from a mapping shaped like a predictions file line.

        The file reader's rules and codes, in its order: keys ``case_id``,
        ``field_id`` and ``value``, optionally ``normalized_fact_digest`` and
        ``evidence_chain`` (a mapping with the chain's seven keys, its
        ``source_locations`` a list of mappings); a missing key is named, as
        in a file. JSON-like values: a list (or tuple) of strings is a
        multi-select value.

        Raises:
            ChartscoreError: ``not_an_object``, ``missing_key``,
                ``unknown_key``, or a record or evidence code.
        """

        plain = plain_row(row)
        found = prediction_row(plain)
        if found.usage is not None:  # run cost is read from files only (docs/formats.md)
            header = type(found.usage) is RunHeader
            fail(ErrorCode.UNKNOWN_KEY, key=RUN_HEADER_KEY if header else USAGE_KEY)
        case_id, field_id, value, *_ = found
        chain: Any = plain.get("evidence_chain")
        evidence = None
        if chain is not None:  # validated by prediction_row: a dict with all its keys
            evidence = EvidenceChain(
                field_id=chain["field_id"],
                source_locations=[
                    SourceLocation(
                        source["source_digest"],
                        source["start_offset"],
                        source["end_offset"],
                        source.get("kind", SourceKind.CLINICAL_RECORD),
                    )
                    for source in chain["source_locations"]
                ],
                normalized_fact_digest=chain["normalized_fact_digest"],
                transformation_kind=chain["transformation_kind"],
                transformation_digest=chain["transformation_digest"],
                uncertainty=chain["uncertainty"],
                reviewer_state=chain["reviewer_state"],
            )
        digest: Any = plain.get("normalized_fact_digest")
        return cls(case_id, field_id, value, digest, evidence)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> list[Prediction]:
        """``[Prediction.from_dict(row) for row in rows]``, with the garbage collector paused.

        See :meth:`GoldField.from_rows`; evidence chains and their source
        locations are built too.

        Raises:
            ChartscoreError: as :meth:`GoldField.from_rows`.
        """
        return bulk.build_all(rows, cls, bulk.quick_prediction, cls.from_dict)

    @property
    def is_supported(self) -> bool:
        """Whether the evidence chain supports this answer (see docs/metrics.md)."""
        chain = self.evidence_chain
        return chain is not None and chain.supports(self.field_id, self.normalized_fact_digest)

    @property
    def evidence_state(self) -> int:
        """0 without evidence, 1 supported, 2 evidence that does not support it.

        See :class:`~chartscore.records.prediction_row.PredictionRow` and docs/metrics.md,
        "Evidence provided".
        """
        chain = self.evidence_chain
        if chain is None:
            return 0
        return chain.evidence_state(self.field_id, self.normalized_fact_digest)

    def __repr__(self) -> str:
        return f"Prediction(field_id={self.field_id!r}, <case id, value and evidence hidden>)"


# A record's slots are its format's keys, in the documented order.
_GOLD_FIELDS: Final = GOLD_KEY_ORDER
_PREDICTION_FIELDS: Final = PREDICTION_KEY_ORDER
(
    _set_gold_case_id,
    _set_gold_field_id,
    _set_gold_field_type,
    _set_gold_value,
) = slot_setters(GoldField, _GOLD_FIELDS)
(
    _set_prediction_case_id,
    _set_prediction_field_id,
    _set_prediction_value,
    _set_prediction_digest,
    _set_prediction_chain,
) = slot_setters(Prediction, _PREDICTION_FIELDS)
