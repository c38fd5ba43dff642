"""Gold fields and predictions: frozen, validated records with value-free reprs.

A record is checked when it is built, so a record that exists is well formed.
Its repr shows only the field id and type; case ids, values, digests and
evidence never appear in a repr, a str() or an error.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import attrs

from chartscore import _rules
from chartscore.errors import ChartscoreError, ErrorCode, fail
from chartscore.evidence import EvidenceChain, SourceKind, SourceLocation
from chartscore.normalize import (
    boolean_key,
    date_key,
    multi_key,
    number_key,
    text_key,
)

Scalar = str | int | float | Decimal | bool
Value = Scalar | frozenset[str] | None
"""A field value: None (unanswerable gold / explicit abstention), a scalar, or a
set of strings for multi-select fields."""


class FieldType(enum.StrEnum):
    """The closed set of field types; each has its own normalization."""

    TEXT = "text"
    CATEGORICAL = "categorical"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATE = "date"
    ORDINAL = "ordinal"
    MULTI = "multi"


def to_field_type(value: object) -> FieldType:
    """A :class:`FieldType` from a member or its exact string value."""
    if type(value) is FieldType:
        return value
    if type(value) is str and value in FieldType._value2member_map_:
        return FieldType(value)
    raise ChartscoreError(ErrorCode.INVALID_FIELD_TYPE)


def _as_field_type(value: object) -> object:
    # Converter: map a valid string to its member; validation happens later, in
    # the same order as the file reader checks a row.
    if type(value) is str and value in FieldType._value2member_map_:
        return FieldType(value)
    return value


def _as_value(value: object) -> object:
    # Converter: a list, tuple or set of strings becomes a frozenset. Only the
    # exact type is asked (never isinstance, which would run a proxy's code).
    if type(value) in (list, tuple, set) and all(type(item) is str for item in value):  # type: ignore[attr-defined]
        return frozenset(value)  # type: ignore[call-overload]
    return value


_GOLD_KEY = {
    FieldType.TEXT: text_key,
    FieldType.CATEGORICAL: text_key,
    FieldType.NUMBER: number_key,
    FieldType.BOOLEAN: boolean_key,
    FieldType.DATE: date_key,
    # An ordinal gold value must name a schema level; without the schema we can
    # only require a level-shaped value (an int or a string).
    FieldType.ORDINAL: lambda v: v if type(v) in (int, str) else None,
    FieldType.MULTI: multi_key,
}


def is_valid_gold_value(field_type: FieldType, value: object) -> bool:
    """Whether ``value`` is a valid answerable gold value for ``field_type``."""
    return _GOLD_KEY[field_type](value) is not None


def _check_identity(case_id: object, field_id: object) -> None:
    if not _rules.is_case_id(case_id):
        fail(ErrorCode.INVALID_CASE_ID)
    if not _rules.is_field_id(field_id):
        fail(ErrorCode.INVALID_FIELD_ID)


@attrs.frozen(repr=False)
class GoldField:
    """One gold abstraction: the answer a field should have, or None if unanswerable.

    Args:
        case_id: Private join key; 1..128 characters. Never reported.
        field_id: Developer-authored field name such as ``dx.onset``; reported.
        field_type: :class:`FieldType` (or its string value).
        value: The gold answer, or None when the chart cannot answer the field.
            Must be valid for ``field_type``. A list, tuple or set of strings
            (multi-select) is stored as a frozenset.

    Raises:
        ChartscoreError: ``invalid_case_id``, ``invalid_field_id``,
            ``invalid_field_type``, ``invalid_value`` or ``invalid_gold_value``.
    """

    # repr=False on every private field: tools that walk attrs fields (rich's
    # pretty printer, tracebacks with locals) must not show them either.
    case_id: str = attrs.field(repr=False)
    field_id: str
    field_type: FieldType = attrs.field(converter=_as_field_type)
    value: Value = attrs.field(converter=_as_value, repr=False)

    def __attrs_post_init__(self) -> None:
        _check_identity(self.case_id, self.field_id)
        if type(self.field_type) is not FieldType:
            fail(ErrorCode.INVALID_FIELD_TYPE)
        if not _rules.is_value(self.value):
            fail(ErrorCode.INVALID_VALUE)
        if self.value is not None and not is_valid_gold_value(self.field_type, self.value):
            fail(ErrorCode.INVALID_GOLD_VALUE)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> GoldField:
        """A gold record from a mapping shaped like a gold file line.

        The file reader's rules and codes, in its order: exactly the keys
        ``case_id``, ``field_id``, ``field_type`` and ``value`` (a missing key
        is named, as in a file); JSON-like values, so a list (or tuple) of
        strings is a multi-select value and a dict is an invalid value.

        Raises:
            ChartscoreError: ``not_an_object``, ``missing_key``,
                ``unknown_key``, or a record code (see the class).
        """
        from chartscore.io.records import gold_row, plain_row  # noqa: PLC0415 - io imports model

        case_id, field_id, field_type, value = gold_row(plain_row(row))
        return cls(case_id, field_id, field_type, value)

    def __repr__(self) -> str:
        return (
            f"GoldField(field_id={self.field_id!r}, field_type={self.field_type.value!r}, "
            "<case id and value hidden>)"
        )


@attrs.frozen(repr=False)
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
            ``invalid_value``, ``invalid_digest`` or ``invalid_evidence_chain``.
    """

    case_id: str = attrs.field(repr=False)
    field_id: str
    value: Value = attrs.field(converter=_as_value, repr=False)
    normalized_fact_digest: str | None = attrs.field(default=None, repr=False)
    evidence_chain: EvidenceChain | None = attrs.field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        _check_identity(self.case_id, self.field_id)
        if not _rules.is_value(self.value):
            fail(ErrorCode.INVALID_VALUE)
        if self.normalized_fact_digest is not None and not _rules.is_digest(
            self.normalized_fact_digest
        ):
            fail(ErrorCode.INVALID_DIGEST)
        if self.evidence_chain is not None and type(self.evidence_chain) is not EvidenceChain:
            fail(ErrorCode.INVALID_EVIDENCE_CHAIN)

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
        from chartscore.io.records import plain_row, prediction_row  # noqa: PLC0415

        plain = plain_row(row)
        case_id, field_id, value, _ = prediction_row(plain)
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

    @property
    def is_supported(self) -> bool:
        """Whether the evidence chain supports this answer (see docs/metrics.md)."""
        chain = self.evidence_chain
        return chain is not None and chain.supports(self.field_id, self.normalized_fact_digest)

    def __repr__(self) -> str:
        return f"Prediction(field_id={self.field_id!r}, <case id, value and evidence hidden>)"
