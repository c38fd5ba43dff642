"""Many records from decoded rows in one call, with the cyclic garbage collector paused.

A notebook holds its decoded rows (a million dicts, say) while it builds
records from them. Every record built allocates, allocations trigger the
cyclic collector, and each of its full collections walks every live container,
the caller's rows included: with 10^6 rows alive that walking took more time
than building the records. Records make no reference cycles, so pausing the
collector while the list is built changes nothing but the time; its previous
state is restored afterwards, even on error. The caller's objects are not
frozen or otherwise touched.

Each row takes one of two routes, and the record's ``from_dict`` decides:

- a row in the plain shape of a decoded JSON line (exact ``dict`` objects
  with exact ``str`` keys, its lists exact lists, its type and state names
  exact ``str``) is built by the record constructors directly;
- any other row, and any row a constructor refuses, is handed to
  ``from_dict``, whose answer (a record, or its error) is the answer.

The constructors accept a plain-shaped row only when ``from_dict`` does, and
build an equal record (tests/test_bulk_records.py checks it with hypothesis),
so the bulk path keeps every rule and every code. An error also names the
row's 0-based position in ``rows`` (``item``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, TypeVar

from chartscore._format import (
    CHAIN_KEY_ORDER,
    GOLD_KEY_ORDER,
    PREDICTION_KEY_ORDER,
    SOURCE_KEY_ORDER,
)
from chartscore.errors import ChartscoreError, ErrorCode, caller_iterator
from chartscore.records.evidence import EvidenceChain, SourceLocation

_GOLD_KEYS: Final = frozenset(GOLD_KEY_ORDER)
_PREDICTION_KEYS: Final = frozenset(PREDICTION_KEY_ORDER)
_PREDICTION_REQUIRED: Final = frozenset({"case_id", "field_id", "value"})
_CHAIN_KEYS: Final = frozenset(CHAIN_KEY_ORDER)
_SOURCE_KEYS: Final = frozenset(SOURCE_KEY_ORDER)
_SOURCE_REQUIRED: Final = frozenset({"source_digest", "start_offset", "end_offset"})

_R = TypeVar("_R")


def build_all(
    rows: Iterable[object],
    record: Callable[..., _R],
    quick: Callable[[Callable[..., _R], object], _R | None],
    slow: Callable[[Any], _R],
) -> list[_R]:
    """``[slow(row) for row in rows]``, taking ``quick(record, row)`` where it answers.

    With the collector paused. ``quick`` builds with the class ``record`` and
    returns the record, or None (or raises anything) to leave the row to
    ``slow`` (the record's ``from_dict``), whose error is re-raised with the
    row's position and no chained exception.

    Raises:
        ChartscoreError: ``invalid_collection`` when ``rows`` is not iterable or
            iterating it failed; ``slow``'s code for the first row it refuses,
            with ``item`` set to that row's position.
    """
    records: list[_R] = []
    append = records.append
    # A list or tuple is read directly (that runs no caller code); any other
    # iterable through a guard.
    items = rows if type(rows) is list or type(rows) is tuple else _guarded(rows)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for index, row in enumerate(items):
            built: _R | None = None
            try:
                built = quick(record, row)
            except Exception:  # noqa: BLE001 - the row is then read by from_dict, the judge
                built = None
            if built is None:
                built = _judged(slow, row, index)
            append(built)
    finally:
        if was_enabled:
            gc.enable()
    return records


def _judged(slow: Callable[[Any], _R], row: object, index: int) -> _R:
    # from_dict's verdict; its error is raised again, here, naming the row's position.
    code = ErrorCode.INVALID_RECORD
    key: str | None = None
    try:
        return slow(row)
    except ChartscoreError as error:
        code, key = error.code, error.key
    raise ChartscoreError(code, key=key, item=index)


def _guarded(rows: object) -> Iterator[object]:
    # A caller's iterable, read inside a guard whose exception is dropped, never chained.
    iterator = caller_iterator(rows)
    if iterator is None:
        raise ChartscoreError(ErrorCode.INVALID_COLLECTION)
    while True:
        failed = False
        try:
            row = next(iterator)
        except StopIteration:
            return
        except Exception:  # noqa: BLE001
            failed = True
        if failed:
            raise ChartscoreError(ErrorCode.INVALID_COLLECTION)
        yield row


def _plain(mapping: object) -> bool:
    # An exact dict whose keys are exact strs: comparing its keys runs no caller code.
    if type(mapping) is not dict:
        return False
    for key in mapping:  # noqa: SIM110 - no generator: runs for every row
        if type(key) is not str:
            return False
    return True


def quick_gold(build: Callable[..., _R], row: object) -> _R | None:
    """The gold record of a plain-shaped row, built by ``build`` (the class); None otherwise."""
    if not _plain(row) or row.keys() != _GOLD_KEYS:  # type: ignore[attr-defined]
        return None
    field_type = row["field_type"]  # type: ignore[index]
    if type(field_type) is not str:  # from_dict takes the type's name only
        return None
    return build(row["case_id"], row["field_id"], field_type, row["value"])  # type: ignore[index]


def quick_prediction(build: Callable[..., _R], row: object) -> _R | None:
    """The prediction of a plain-shaped row, built by ``build`` (the class); None otherwise."""
    if not _plain(row):
        return None
    keys = row.keys()  # type: ignore[attr-defined]
    if not (keys >= _PREDICTION_REQUIRED and keys <= _PREDICTION_KEYS):
        return None
    chain = row.get("evidence_chain")  # type: ignore[attr-defined]
    evidence = None
    if chain is not None:
        evidence = _quick_chain(chain)
        if evidence is None:
            return None
    return build(
        row["case_id"],  # type: ignore[index]
        row["field_id"],  # type: ignore[index]
        row["value"],  # type: ignore[index]
        row.get("normalized_fact_digest"),  # type: ignore[attr-defined]
        evidence,
    )


def _quick_chain(chain: object) -> EvidenceChain | None:
    if not _plain(chain) or chain.keys() != _CHAIN_KEYS:  # type: ignore[attr-defined]
        return None
    raw = chain["source_locations"]  # type: ignore[index]
    if type(raw) is not list and type(raw) is not tuple:
        return None
    sources = []
    for source in raw:
        if not _plain(source):
            return None
        keys = source.keys()
        if not (keys >= _SOURCE_REQUIRED and keys <= _SOURCE_KEYS):
            return None
        kind = source.get("kind", "clinical_record")
        if type(kind) is not str:  # from_dict takes the kind's name only
            return None
        sources.append(
            SourceLocation(
                source["source_digest"], source["start_offset"], source["end_offset"], kind
            )
        )
    transformation = chain["transformation_kind"]  # type: ignore[index]
    state = chain["reviewer_state"]  # type: ignore[index]
    if type(transformation) is not str or type(state) is not str:
        return None
    return EvidenceChain(
        chain["field_id"],  # type: ignore[index]
        sources,
        chain["normalized_fact_digest"],  # type: ignore[index]
        transformation,
        chain["transformation_digest"],  # type: ignore[index]
        chain["uncertainty"],  # type: ignore[index]
        state,
    )
