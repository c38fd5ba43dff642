"""Evidence chains: where in the chart an answer came from, as digests and spans.

An :class:`EvidenceChain` binds one field's answer (through the producer's
``normalized_fact_digest``) to spans of source documents named only by digest.
chartscore checks the chain's shape and uses it for one metric,
``evidence_support``; it never sees source text and never re-derives a digest.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from decimal import Decimal
from typing import TypeVar

import attrs

from chartscore import _rules
from chartscore.errors import ChartscoreError, ErrorCode, fail


class SourceKind(enum.StrEnum):
    """Where a span comes from. Only clinical-record spans support an answer."""

    CLINICAL_RECORD = "clinical_record"
    GENERATED_TEXT = "generated_text"


class TransformationKind(enum.StrEnum):
    """What produced the fact from its sources."""

    RULE = "rule"
    MODEL = "model"


class ReviewerState(enum.StrEnum):
    """Human review state. It does not change evidence support."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


_E = TypeVar("_E", bound=enum.StrEnum)


def _enum_member(kind: type[_E], value: object, code: ErrorCode) -> _E:
    # Accept a member or its exact string value; anything else is a closed code.
    # Only the exact type is asked: isinstance() would run a proxy's __class__.
    if type(value) is kind:
        return value
    if type(value) is str and value in kind._value2member_map_:
        return kind(value)
    raise ChartscoreError(code)


def _to_source_kind(value: object) -> SourceKind:
    return _enum_member(SourceKind, value, ErrorCode.INVALID_SOURCE_KIND)


def _to_transformation_kind(value: object) -> TransformationKind:
    return _enum_member(TransformationKind, value, ErrorCode.INVALID_TRANSFORMATION_KIND)


def _to_reviewer_state(value: object) -> ReviewerState:
    return _enum_member(ReviewerState, value, ErrorCode.INVALID_REVIEWER_STATE)


@attrs.frozen(repr=False)
class SourceLocation:
    """A span ``[start_offset, end_offset)`` of one source document.

    Args:
        source_digest: ``sha256:`` digest naming the source document.
        start_offset: Inclusive character offset, 0..2**63-1.
        end_offset: Exclusive character offset, greater than ``start_offset``.
        kind: :class:`SourceKind` (or its string value); clinical_record by default.

    Raises:
        ChartscoreError: ``invalid_digest``, ``invalid_offset``, ``invalid_span``
            or ``invalid_source_kind``.
    """

    # repr=False on every field: a span says where in one patient's chart a fact is.
    source_digest: str = attrs.field(repr=False)
    start_offset: int = attrs.field(repr=False)
    end_offset: int = attrs.field(repr=False)
    kind: SourceKind = attrs.field(
        default=SourceKind.CLINICAL_RECORD, converter=_to_source_kind, repr=False
    )

    def __attrs_post_init__(self) -> None:
        if not _rules.is_digest(self.source_digest):
            fail(ErrorCode.INVALID_DIGEST)
        if not (_rules.is_offset(self.start_offset) and _rules.is_offset(self.end_offset)):
            fail(ErrorCode.INVALID_OFFSET)
        if self.end_offset <= self.start_offset:
            fail(ErrorCode.INVALID_SPAN)

    def __repr__(self) -> str:
        return "SourceLocation(<kind, digest and offsets hidden>)"


def _to_sources(value: object) -> tuple[SourceLocation, ...]:
    # Consume the caller's iterable without keeping any exception it raises:
    # even isinstance() may run a proxy's code, so it is asked inside the guard.
    items: tuple[object, ...] | None = None
    try:
        if not isinstance(value, str | bytes | Mapping):
            items = tuple(value)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - any failure of the caller's iterable is one code
        items = None
    if items is None:
        fail(ErrorCode.INVALID_EVIDENCE_CHAIN)
    if any(type(item) is not SourceLocation for item in items):
        fail(ErrorCode.INVALID_SOURCE_LOCATION)
    if len(set(items)) != len(items):
        fail(ErrorCode.DUPLICATE_SOURCE)
    return items  # type: ignore[return-value]


@attrs.frozen(repr=False)
class EvidenceChain:
    """The producer's evidence for one field's answer.

    Args:
        field_id: The field this chain is about.
        source_locations: The supporting spans; duplicates are rejected. May be empty.
        normalized_fact_digest: The producer's digest of the fact it extracted.
        transformation_kind: :class:`TransformationKind` (or its string value).
        transformation_digest: Digest of the rule or model that produced the fact.
        uncertainty: A number in [0, 1] (int, float or Decimal).
        reviewer_state: :class:`ReviewerState` (or its string value).

    Raises:
        ChartscoreError: with the code of the first rule the chain breaks.
    """

    # repr=False on every private field (all but the developer-authored field id).
    field_id: str
    source_locations: tuple[SourceLocation, ...] = attrs.field(converter=_to_sources, repr=False)
    normalized_fact_digest: str = attrs.field(repr=False)
    transformation_kind: TransformationKind = attrs.field(
        converter=_to_transformation_kind, repr=False
    )
    transformation_digest: str = attrs.field(repr=False)
    uncertainty: int | float | Decimal = attrs.field(repr=False)
    reviewer_state: ReviewerState = attrs.field(converter=_to_reviewer_state, repr=False)

    def __attrs_post_init__(self) -> None:
        if not _rules.is_field_id(self.field_id):
            fail(ErrorCode.INVALID_FIELD_ID)
        if not (
            _rules.is_digest(self.normalized_fact_digest)
            and _rules.is_digest(self.transformation_digest)
        ):
            fail(ErrorCode.INVALID_DIGEST)
        if not _rules.is_uncertainty(self.uncertainty):
            fail(ErrorCode.INVALID_UNCERTAINTY)

    @property
    def has_clinical_source(self) -> bool:
        """True when at least one span comes from a clinical record."""
        return any(s.kind is SourceKind.CLINICAL_RECORD for s in self.source_locations)

    def supports(self, field_id: str, normalized_fact_digest: str | None) -> bool:
        """Whether this chain supports an answer to ``field_id`` with that digest.

        Support needs the same field id, at least one clinical-record span and
        the chain's fact digest equal to the prediction's declared digest.
        """
        return (
            self.field_id == field_id
            and normalized_fact_digest is not None
            and self.normalized_fact_digest == normalized_fact_digest
            and self.has_clinical_source
        )

    def __repr__(self) -> str:
        return f"EvidenceChain(field_id={self.field_id!r}, <sources and digests hidden>)"
