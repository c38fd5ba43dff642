"""The schema's digest for the ledger: the same schema, however it was written, one digest.

A schema is developer-authored (field ids, types, levels, choices, tolerances), but it
is an input, and choices imported from a data dictionary can be close to the data; so,
like every digest of an input in the ledger, it is keyed with the ledger key, and the
ledger holds no plain digest of anything it was given. It is taken of the validated
:class:`~chartscore.Schema`, not of the file: JSON or TOML, any key order and spacing,
``"0.50"`` or ``0.5``, give one digest.

Definition (docs/ledger.md#the-schema-digest): ``hmac-sha256:`` and the HMAC-SHA256
(hex), under the ledger key, of ``b"chartscore schema 1\n"`` followed by the canonical
JSON (RFC 8785, UTF-8) of ``{"fields": {field_id: spec}}``, where a spec holds
every attribute of its :class:`~chartscore.FieldSpec` that is not at its default,
named as the attribute: the type's name, ordinal levels in order, choices (as
normalized) sorted, a tolerance as the shortest plain decimal (``0.5``, ``100``); and, only
when the schema declares them, ``strata`` and ``sampling`` as :meth:`Schema.to_dict` writes them.
Every attribute is walked generically, so a setting added to ``FieldSpec`` later is
covered without editing this module.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

import attrs

from chartscore.documents.canonical_json import canonical_json
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.records.gold_identity import IDENTITY_PREFIX, LedgerKey
from chartscore.records.schema import FieldSpec, Schema

_LABEL: Final = b"chartscore schema 1\n"


def schema_digest(schema: Schema | None, key: LedgerKey) -> str | None:
    """The schema's keyed digest, ``hmac-sha256:`` and 64 hex digits; None for no schema.

    Raises:
        ChartscoreError: ``usage`` when ``schema`` is not exactly a :class:`Schema`
            (or None), or ``key`` not a :class:`LedgerKey`.
    """
    if type(key) is not LedgerKey:
        raise ChartscoreError(ErrorCode.USAGE)
    if schema is None:
        return None
    if type(schema) is not Schema:
        raise ChartscoreError(ErrorCode.USAGE)
    fields = {field_id: _spec(spec) for field_id, spec in schema.fields.items()}
    document: dict[str, object] = {"fields": fields}
    if schema.strata:  # declared strata (and sampling) as the schema document writes them
        written = schema.to_dict()
        document.update({key: written[key] for key in ("strata", "sampling") if key in written})
    text = canonical_json(document)
    return IDENTITY_PREFIX + key.mac(_LABEL + text.encode("utf-8")).hex()


def _spec(spec: FieldSpec) -> dict[str, object]:
    out: dict[str, object] = {}
    for attribute in attrs.fields(FieldSpec):
        value = getattr(spec, attribute.name)
        if attribute.default is not attrs.NOTHING and value == attribute.default:
            continue
        out[attribute.name] = _plain(value)
    return out


def _plain(value: object) -> object:
    # The JSON form of a FieldSpec attribute's value; anything unforeseen is a bug.
    if value is None or type(value) in (bool, int, str):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if type(value) is Decimal:
        return format(value.normalize(), "f")
    if type(value) in (frozenset, set):
        return sorted(_plain(item) for item in value)  # type: ignore[type-var, attr-defined]
    if type(value) in (tuple, list):
        return [_plain(item) for item in value]  # type: ignore[attr-defined]
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    raise ChartscoreError(ErrorCode.INTERNAL_ERROR)
