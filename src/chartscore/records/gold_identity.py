"""The gold set's identity for the ledger: a keyed digest of its rows, in any order.

A ledger line must say which gold set a run was scored on, so that runs on the same
gold can be put side by side. A plain digest of the gold would also let anyone who
holds the ledger and a guess of the gold (or all of it but one patient's value)
confirm the guess. So the identity is **keyed**: HMAC-SHA256 with a secret
:class:`LedgerKey` that stays in the protected environment. Without the key it is
a random-looking string that says nothing about the data.

The identity is of the gold set, not of the file: the same rows in any order, with
any spacing or key order in their JSON, split over part files or built in Python,
give the same identity. The definition (docs/ledger.md#the-gold-identity):

- a row's text is the JSON array ``[case_id, field_id, field_type, value]``
  written as ``json.dumps(..., separators=(",", ":"))`` writes it (ASCII, with
  ``\\uXXXX`` escapes), a non-integer number as ``str(Decimal)`` (a float built in
  Python: ``repr``), a multi-select value as its items sorted;
- each row's tag is ``HMAC-SHA256(key, b"chartscore gold row 1\\n" + text)``, read
  as a 256-bit big-endian integer;
- the identity is ``HMAC-SHA256(key, b"chartscore gold set 1\\n" + rows + b"\\n" +
  sum)``, where ``rows`` is the number of rows in decimal and ``sum`` the row tags'
  sum modulo 2**256 as 32 big-endian bytes; written ``hmac-sha256:<64 hex digits>``.

The sum of keyed tags is the incremental multiset hash "MSet-Add-Hash" (Clarke,
Devadas, van Dijk, Gassend and Suh, ASIACRYPT 2003): order-independent, computed in
one pass with constant memory, and mergeable across partitions; without the key
nobody can compute a tag, so nobody can make two gold sets collide on purpose.

The key's own identity (:attr:`LedgerKey.key_id`, a tag of a fixed string) is
written beside the gold identity, so that lines written under another key are
told apart rather than taken for another gold set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from decimal import Decimal
from json.encoder import encode_basestring_ascii
from typing import Final

from chartscore.documents.canonical_json import json_constant
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, caller_iterator
from chartscore.metrics import NOT_APPLICABLE, GoldValue
from chartscore.records.model import GoldField

MIN_KEY_BYTES: Final = 32
"""The shortest ledger key accepted (256 bits of a random key; a hex key is 64 bytes)."""
MAX_KEY_BYTES: Final = 4096
"""The longest ledger key accepted."""
IDENTITY_PREFIX: Final = "hmac-sha256:"
"""How a gold identity is written: this prefix and 64 lowercase hex digits."""

_ROW_LABEL: Final = b"chartscore gold row 1\n"
_SET_LABEL: Final = b"chartscore gold set 1\n"
_KEY_ID_LABEL: Final = b"chartscore ledger key id 1\n"
_KEY_ID_HEX_DIGITS: Final = 16
_BLOCK: Final = 64  # SHA-256's block size, HMAC's pad length (RFC 2104)
_MODULUS_MASK: Final = (1 << 256) - 1


class LedgerKey:
    """The secret key of a ledger's keyed digests. Holds no readable copy of the key.

    Only SHA-256 states after the two HMAC pads are kept (RFC 2104's precomputation);
    they are not printable, picklable or comparable. ``repr`` shows nothing.

    Args:
        secret: The key, 32 to 4096 bytes (exactly ``bytes``).

    Raises:
        ChartscoreError: ``ledger_key_invalid`` for anything else.
    """

    __slots__ = ("_inner", "_key_id", "_outer")

    def __init__(self, secret: bytes) -> None:
        if type(secret) is not bytes or not MIN_KEY_BYTES <= len(secret) <= MAX_KEY_BYTES:
            raise ChartscoreError(ErrorCode.LEDGER_KEY_INVALID, input=InputKind.LEDGER_KEY)
        block = hashlib.sha256(secret).digest() if len(secret) > _BLOCK else secret
        block = block.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in block))
        self._outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in block))
        self._key_id = self.mac(_KEY_ID_LABEL).hex()[:_KEY_ID_HEX_DIGITS]

    def __repr__(self) -> str:
        return "LedgerKey(<hidden>)"

    def __reduce__(self) -> tuple[object, ...]:
        raise ChartscoreError(ErrorCode.USAGE)  # a key is never pickled (nor sent anywhere)

    @property
    def key_id(self) -> str:
        """16 hex digits naming the key (a keyed tag of a fixed string; reveals nothing)."""
        return self._key_id

    def mac(self, message: bytes) -> bytes:
        """``HMAC-SHA256(key, message)``: 32 bytes."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()


def row_text(case_id: str, field_id: str, field_type: str, value: GoldValue) -> bytes:
    """A gold row's text for its tag (see the module docstring); ASCII bytes.

    Raises:
        ChartscoreError: ``invalid_value`` for a value of no gold type.
    """
    return (
        f"[{encode_basestring_ascii(case_id)},{encode_basestring_ascii(field_id)},"
        f'"{field_type}",{_value_text(value)}]'
    ).encode("ascii")


def _value_text(value: GoldValue) -> str:
    if value is NOT_APPLICABLE:  # an object: never a value's text
        return '{"not_applicable":true}'
    constant = json_constant(value)
    if constant is not None:
        return constant
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)  # type: ignore[arg-type]
    if kind is int or kind is Decimal:
        return str(value)
    if kind is float:
        return repr(value)
    if kind is frozenset:
        return "[" + ",".join(encode_basestring_ascii(item) for item in sorted(value)) + "]"  # type: ignore[arg-type]
    raise ChartscoreError(ErrorCode.INVALID_VALUE, input=InputKind.GOLD)


class GoldIdentity:
    """Accumulates a gold set's keyed identity, one row at a time, in any order.

    Private while it runs (it sees every row); its result, :meth:`digest`, is a
    keyed digest that reveals nothing without the key.
    """

    __slots__ = ("_key", "_rows", "_sum")

    def __init__(self, key: LedgerKey) -> None:
        if type(key) is not LedgerKey:
            raise ChartscoreError(ErrorCode.USAGE)
        self._key = key
        self._rows = 0
        self._sum = 0

    def __repr__(self) -> str:
        return f"GoldIdentity(<{self._rows} rows>)"

    def add(self, case_id: str, field_id: str, field_type: str, value: GoldValue) -> None:
        """Add one checked gold row (the tuple :func:`chartscore.records.rows.gold_row` gives)."""
        tag = self._key.mac(_ROW_LABEL + row_text(case_id, field_id, field_type, value))
        self._sum += int.from_bytes(tag, "big")
        self._rows += 1

    def merge(self, other: GoldIdentity) -> None:
        """Add another accumulator's rows (a partition's), as if they had been added here."""
        if type(other) is not GoldIdentity or other._key is not self._key:
            raise ChartscoreError(ErrorCode.USAGE)
        self._sum += other._sum
        self._rows += other._rows

    @property
    def rows(self) -> int:
        """How many rows were added."""
        return self._rows

    def digest(self) -> str:
        """The identity, ``hmac-sha256:`` and 64 hex digits."""
        total = (self._sum & _MODULUS_MASK).to_bytes(32, "big")
        message = _SET_LABEL + str(self._rows).encode("ascii") + b"\n" + total
        return IDENTITY_PREFIX + self._key.mac(message).hex()


def gold_identity(gold: Iterable[GoldField], key: LedgerKey) -> str:
    """The keyed identity of gold records, as :func:`chartscore.score` would read them.

    The same rows read from a file (``chartscore.workflows.ledger``) give the same
    identity.

    Raises:
        ChartscoreError: ``invalid_collection`` when ``gold`` cannot be iterated
            (the caller's exception is dropped), ``invalid_record (gold item N)``
            for an item that is not a :class:`GoldField`, ``usage`` for a ``key``
            that is not a :class:`LedgerKey`.
    """
    identity = GoldIdentity(key)
    iterator = caller_iterator(gold)
    if iterator is None:
        raise ChartscoreError(ErrorCode.INVALID_COLLECTION, input=InputKind.GOLD)
    index = 0
    while True:
        failed = False
        record: object = None
        try:
            record = next(iterator)
        except StopIteration:
            break
        except Exception:  # noqa: BLE001 - the caller's exception must not survive
            failed = True
        if failed:
            raise ChartscoreError(ErrorCode.INVALID_COLLECTION, input=InputKind.GOLD)
        if type(record) is not GoldField:
            raise ChartscoreError(ErrorCode.INVALID_RECORD, input=InputKind.GOLD, item=index)
        identity.add(record.case_id, record.field_id, record.field_type, record.value)
        index += 1
    return identity.digest()
