"""Evidence chains: where in the chart an answer came from, as digests and spans.

An :class:`EvidenceChain` binds one field's answer (through the producer's
``normalized_fact_digest``) to spans of source documents named only by digest.
chartscore checks the chain's shape and uses it for two metrics,
``evidence_support`` and ``evidence_provided``; it never sees source text and never
re-derives a digest.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

import attrs

from chartscore._format import CHAIN_KEY_ORDER, MAX_OFFSET, SOURCE_KEY_ORDER
from chartscore.errors import ErrorCode, fail
from chartscore.records import _rules
from chartscore.records._frozen import slot_setters


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


# Interned lookups: a member from its exact string value, one dict lookup (no enum call).
_SOURCE_KIND_OF: Final = {member.value: member for member in SourceKind}
_TRANSFORMATION_KIND_OF: Final = {member.value: member for member in TransformationKind}
_REVIEWER_STATE_OF: Final = {member.value: member for member in ReviewerState}
_CLINICAL: Final = SourceKind.CLINICAL_RECORD
_ZERO: Final = Decimal(0)
_ONE: Final = Decimal(1)
_KNOWN_FIELD_IDS: Final = _rules.known_field_ids
_KNOWN_DIGESTS: Final = _rules.known_digests
_canonical_digest: Final = _rules.canonical_digest
_canonical_field_id: Final = _rules.canonical_field_id
_is_unique_digest: Final = _rules.is_unique_digest


@attrs.frozen(repr=False, init=False)
class SourceLocation:
    """A span ``[start_offset, end_offset)`` of one source document.

    Args:
        source_digest: ``sha256:`` digest naming the source document.
        start_offset: Inclusive character offset, 0..2**63-1.
        end_offset: Exclusive character offset, greater than ``start_offset``.
        kind: :class:`SourceKind` (or its string value); clinical_record by default.

    Raises:
        ChartscoreError: ``invalid_source_kind``, ``invalid_digest``,
            ``invalid_offset`` or ``invalid_span`` (the first rule broken, in
            that order).
    """

    # repr=False on every field: a span says where in one patient's chart a fact is.
    source_digest: str = attrs.field(repr=False)
    start_offset: int = attrs.field(repr=False)
    end_offset: int = attrs.field(repr=False)
    kind: SourceKind = attrs.field(default=SourceKind.CLINICAL_RECORD, repr=False)

    def __init__(
        self,
        source_digest: str,
        start_offset: int,
        end_offset: int,
        kind: object = SourceKind.CLINICAL_RECORD,
    ) -> None:
        # Validate first, then fill the slots (see chartscore.records._frozen). Written
        # out flat: notebooks build millions of these. Every check asks the
        # exact type first, so a caller's object never runs code here.
        if type(kind) is not SourceKind:
            kind = _SOURCE_KIND_OF.get(kind) if type(kind) is str else None
            if kind is None:
                fail(ErrorCode.INVALID_SOURCE_KIND)
        # Source documents recur across a case's rows: keep one shared copy of each digest.
        shared = _KNOWN_DIGESTS.get(source_digest) if type(source_digest) is str else None
        if shared is None:
            shared = _canonical_digest(source_digest)
            if shared is None:
                fail(ErrorCode.INVALID_DIGEST)
        if not (
            type(start_offset) is int
            and type(end_offset) is int
            and 0 <= start_offset <= MAX_OFFSET
            and 0 <= end_offset <= MAX_OFFSET
        ):
            fail(ErrorCode.INVALID_OFFSET)
        if end_offset <= start_offset:
            fail(ErrorCode.INVALID_SPAN)
        _set_source_digest(self, shared)
        _set_start_offset(self, start_offset)
        _set_end_offset(self, end_offset)
        _set_source_kind(self, kind)

    def __reduce__(self) -> tuple[type[SourceLocation], tuple[str, int, int, SourceKind]]:
        # Pickled and copied by calling the class again: a loaded record is validated too.
        return type(self), (self.source_digest, self.start_offset, self.end_offset, self.kind)

    def __repr__(self) -> str:
        return "SourceLocation(<kind, digest and offsets hidden>)"


_SOURCE_FIELDS: Final = SOURCE_KEY_ORDER  # a record's slots are its format's keys
(
    _set_source_digest,
    _set_start_offset,
    _set_end_offset,
    _set_source_kind,
) = slot_setters(SourceLocation, _SOURCE_FIELDS)


def _read_sources(value: object) -> tuple[object, ...]:
    # Consume a caller's iterable (not a list or tuple) without keeping any
    # exception it raises: even isinstance() may run a proxy's code, so it is
    # asked inside the guard.
    items: tuple[object, ...] | None = None
    try:
        if not isinstance(value, str | bytes | Mapping):
            items = tuple(value)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - any failure of the caller's iterable is one code
        items = None
    if items is None:
        fail(ErrorCode.INVALID_EVIDENCE_CHAIN)
    return items


@attrs.frozen(repr=False, init=False)
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
        ChartscoreError: with the code of the first rule the chain breaks, in
            this order: the source locations (``invalid_evidence_chain``,
            ``invalid_source_location``, ``duplicate_source``),
            ``invalid_transformation_kind``, ``invalid_reviewer_state``,
            ``invalid_field_id``, ``invalid_digest``, ``invalid_uncertainty``.
    """

    # repr=False on every private field (all but the developer-authored field id).
    field_id: str
    source_locations: tuple[SourceLocation, ...] = attrs.field(repr=False)
    normalized_fact_digest: str = attrs.field(repr=False)
    transformation_kind: TransformationKind = attrs.field(repr=False)
    transformation_digest: str = attrs.field(repr=False)
    uncertainty: int | float | Decimal = attrs.field(repr=False)
    reviewer_state: ReviewerState = attrs.field(repr=False)

    def __init__(  # noqa: PLR0917 - the signature attrs generated before, kept
        self,
        field_id: str,
        source_locations: object,
        normalized_fact_digest: str,
        transformation_kind: object,
        transformation_digest: str,
        uncertainty: int | float | Decimal,
        reviewer_state: object,
    ) -> None:
        # Validate first, in the documented order, then fill the slots. A list
        # or tuple (the exact types) is read directly: that runs no caller code.
        sources: tuple[object, ...]
        if type(source_locations) is list:
            sources = tuple(source_locations)
        elif type(source_locations) is tuple:
            sources = source_locations
        else:
            sources = _read_sources(source_locations)
        for source in sources:
            if type(source) is not SourceLocation:
                fail(ErrorCode.INVALID_SOURCE_LOCATION)
        count = len(sources)
        # Two records are equal exactly when a set would merge them; two spans
        # (the common case) need one comparison, not two hashes.
        if count > 1 and (sources[0] == sources[1] if count == 2 else len(set(sources)) != count):
            fail(ErrorCode.DUPLICATE_SOURCE)
        transformation = transformation_kind
        if type(transformation) is not TransformationKind:
            transformation = (
                _TRANSFORMATION_KIND_OF.get(transformation) if type(transformation) is str else None
            )
            if transformation is None:
                fail(ErrorCode.INVALID_TRANSFORMATION_KIND)
        state = reviewer_state
        if type(state) is not ReviewerState:
            state = _REVIEWER_STATE_OF.get(state) if type(state) is str else None
            if state is None:
                fail(ErrorCode.INVALID_REVIEWER_STATE)
        shared_field_id = _KNOWN_FIELD_IDS.get(field_id) if type(field_id) is str else None
        if shared_field_id is None:
            shared_field_id = _canonical_field_id(field_id)
            if shared_field_id is None:
                fail(ErrorCode.INVALID_FIELD_ID)
        # A fact digest names one answer: checked without filling the digest memory.
        # A transformation (a rule or a model) recurs: one shared copy.
        shared_transformation = (
            _KNOWN_DIGESTS.get(transformation_digest)
            if type(transformation_digest) is str
            else None
        )
        if shared_transformation is None:
            shared_transformation = _canonical_digest(transformation_digest)
        if shared_transformation is None or not _is_unique_digest(normalized_fact_digest):
            fail(ErrorCode.INVALID_DIGEST)
        if type(uncertainty) is Decimal:
            if not (uncertainty.is_finite() and _ZERO <= uncertainty <= _ONE):
                fail(ErrorCode.INVALID_UNCERTAINTY)
        elif not _rules.is_uncertainty(uncertainty):
            fail(ErrorCode.INVALID_UNCERTAINTY)
        _set_chain_field_id(self, shared_field_id)
        _set_chain_sources(self, sources)
        _set_chain_fact_digest(self, normalized_fact_digest)
        _set_chain_transformation_kind(self, transformation)
        _set_chain_transformation_digest(self, shared_transformation)
        _set_chain_uncertainty(self, uncertainty)
        _set_chain_reviewer_state(self, state)

    def __reduce__(self) -> tuple[type[EvidenceChain], tuple[object, ...]]:
        # Pickled and copied by calling the class again: a loaded record is validated too.
        return type(self), tuple(getattr(self, name) for name in _CHAIN_FIELDS)

    @property
    def has_clinical_source(self) -> bool:
        """True when at least one span comes from a clinical record."""
        for source in self.source_locations:  # noqa: SIM110 - no generator: runs per prediction
            if source.kind is _CLINICAL:
                return True
        return False

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

    def evidence_state(self, field_id: str, normalized_fact_digest: str | None) -> int:
        """This chain's evidence state for an answer to ``field_id`` with that digest.

        1 when it :meth:`supports` the answer; else 2 when it has a source location of any
        kind (evidence provided, not supporting); else 0 (an empty chain provides none).
        See :mod:`chartscore.records.prediction_row`.
        """
        # supports() and has_clinical_source, written out: once per prediction with a chain.
        sources = self.source_locations
        if (
            self.field_id == field_id
            and normalized_fact_digest is not None
            and self.normalized_fact_digest == normalized_fact_digest
        ):
            for source in sources:
                if source.kind is _CLINICAL:
                    return 1
        return 2 if sources else 0

    def __repr__(self) -> str:
        return f"EvidenceChain(field_id={self.field_id!r}, <sources and digests hidden>)"


_CHAIN_FIELDS: Final = CHAIN_KEY_ORDER  # a record's slots are its format's keys
(
    _set_chain_field_id,
    _set_chain_sources,
    _set_chain_fact_digest,
    _set_chain_transformation_kind,
    _set_chain_transformation_digest,
    _set_chain_uncertainty,
    _set_chain_reviewer_state,
) = slot_setters(EvidenceChain, _CHAIN_FIELDS)
