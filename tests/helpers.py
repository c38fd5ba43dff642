"""Small shared builders for tests: digests, evidence chains, JSON Lines files."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path

from chartscore import EvidenceChain, SourceLocation


def digest(seed: str) -> str:
    """A valid sha256: digest derived from ``seed``."""
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def chain(
    field_id: str,
    fact: str,
    kinds: Iterable[str] = ("clinical_record",),
    reviewer_state: str = "pending",
) -> EvidenceChain:
    """An evidence chain with one span per kind."""
    return EvidenceChain(
        field_id=field_id,
        source_locations=[
            SourceLocation(digest(f"source-{i}"), 10 * i, 10 * i + 5, kind)
            for i, kind in enumerate(kinds)
        ],
        normalized_fact_digest=fact,
        transformation_kind="model",
        transformation_digest=digest("model"),
        uncertainty=Decimal("0.2"),
        reviewer_state=reviewer_state,
    )


def chain_dict(
    field_id: str, fact: str, kinds: Iterable[str] = ("clinical_record",)
) -> dict[str, object]:
    """The JSON form of :func:`chain`."""
    return {
        "field_id": field_id,
        "source_locations": [
            {
                "source_digest": digest(f"source-{i}"),
                "start_offset": 10 * i,
                "end_offset": 10 * i + 5,
                "kind": kind,
            }
            for i, kind in enumerate(kinds)
        ],
        "normalized_fact_digest": fact,
        "transformation_kind": "model",
        "transformation_digest": digest("model"),
        "uncertainty": Decimal("0.2"),
        "reviewer_state": "pending",
    }


def dumps(value: object) -> str:
    """JSON text for plain data, writing Decimals as their exact number literals."""
    if isinstance(value, Mapping):
        items = (f"{json.dumps(key)}: {dumps(item)}" for key, item in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    if isinstance(value, frozenset | set):
        return dumps(sorted(value))
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def write_jsonl(path: Path, rows: Iterable[Mapping[str, object]]) -> Path:
    """Write rows as JSON Lines, Decimals as exact literals."""
    path.write_text("".join(dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
