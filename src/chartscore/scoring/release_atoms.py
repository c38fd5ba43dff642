"""Scoring the cases of each release atom apart, for the joint audit of successive releases.

``share --releases`` audits a new release together with the earlier ones
(docs/disclosure.md#successive-releases). That needs, inside the boundary,
the numbers of every *atom*: the cases that exactly the same releases hold.
:class:`AtomScorer` scores the whole cohort as :class:`CaseTrackingScorer`
does and, row by row, every atom's cases apart as well.

It holds case ids: private, in memory only. Only the atoms' reports and
distinct-case counts leave it, and, for the inside-only ledger folder, a
digest of each case's rows (so that an old case whose rows changed is
refused, not silently published anew).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Final, Generic, Protocol, TypeVar

from chartscore.metrics import FieldType, GoldValue
from chartscore.records.prediction_row import PredictionRow
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import CaseTrackingScorer
from chartscore.scoring.paired_scorer import PairedScorer
from chartscore.scoring.scorer import ExtraPredictions

_MODULUS: Final = 1 << 256


class _GoldTaker(Protocol):
    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None: ...

    def close_gold(self) -> None: ...


_S = TypeVar("_S", bound=_GoldTaker)


class _Atoms(Generic[_S]):
    """Each membership pattern's own scorer and cases: what both atom scorers keep apart."""

    def __init__(self, membership: Mapping[str, tuple[int, ...]], make: Callable[[], _S]) -> None:
        self._membership = membership
        self._make = make
        self._scorers: dict[tuple[int, ...], _S] = {}
        self._cases: dict[tuple[int, ...], set[str]] = {}

    def __len__(self) -> int:
        return len(self._scorers)

    def of(self, case_id: str) -> _S:
        """The scorer of the case's atom (the case has a gold row)."""
        return self._scorers[self._membership.get(case_id, ())]

    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None:
        """Add one gold row to its case's atom (made on its first case)."""
        pattern = self._membership.get(case_id, ())
        scorer = self._scorers.get(pattern)
        if scorer is None:
            scorer = self._scorers[pattern] = self._make()
            self._cases[pattern] = set()
        scorer.add_gold(case_id, field_id, field_type, value)
        self._cases[pattern].add(case_id)

    def close_gold(self) -> None:
        """Close every atom's gold set."""
        for scorer in self._scorers.values():
            scorer.close_gold()

    def by_pattern(self) -> dict[tuple[int, ...], tuple[_S, int]]:
        """Each atom's scorer and case count, by pattern (sorted): only atoms with cases."""
        return {
            pattern: (self._scorers[pattern], len(self._cases[pattern]))
            for pattern in sorted(self._scorers)
        }

    def case_ids(self) -> set[str]:
        """Every gold case id of every atom (private)."""
        return set().union(*self._cases.values())


class AtomScorer(CaseTrackingScorer):
    """A :class:`CaseTrackingScorer` that also scores each membership pattern's cases apart.

    Args:
        schema: As for the scorer.
        membership: Case id -> the positions of the earlier releases holding
            it; a case not in it is new (pattern ``()``).
        extra_predictions: As for the scorer.
        strata: As for the scorer.
    """

    def __init__(
        self,
        schema: Schema | None,
        membership: Mapping[str, tuple[int, ...]],
        *,
        extra_predictions: ExtraPredictions = "error",
        strata: CaseStrata | None = None,
    ) -> None:
        super().__init__(schema, extra_predictions=extra_predictions, strata=strata)
        self._digests: dict[str, int] = {}
        self._legacy: dict[str, int] = {}  # per case: what a pre-evidence_provided digest adds
        make = functools.partial(CaseTrackingScorer, schema, extra_predictions=extra_predictions)
        self._atoms = _Atoms(membership, make)

    def __repr__(self) -> str:
        return f"AtomScorer({len(self._atoms)} atoms)"

    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None:
        """Add one gold row to the cohort and to its case's atom."""
        super().add_gold(case_id, field_id, field_type, value)
        self._atoms.add_gold(case_id, field_id, field_type, value)
        self._digest(case_id, field_id, "gold", field_type, value)

    def close_gold(self) -> None:
        """Close the cohort's gold set and every atom's."""
        super().close_gold()
        self._atoms.close_gold()

    def add_row(self, row: PredictionRow) -> int:
        """Join one prediction in the cohort and, when it has a gold row, in its atom."""
        mask = super().add_row(row)
        if mask >= 0:
            case_id, field_id, value, evidence, uncertainty, _ = row
            self._atoms.of(case_id).add_row(row)
            # Evidence states 0 and 1 digest as the bool they were before the third state.
            if evidence == 2:
                row_digest = self._digest(case_id, field_id, "prediction", value, 2, uncertainty)
                legacy = _row_digest(field_id, "prediction", value, False, uncertainty)
                delta = self._legacy.get(case_id, 0) + legacy - row_digest
                self._legacy[case_id] = delta % _MODULUS
            else:
                self._digest(case_id, field_id, "prediction", value, evidence == 1, uncertainty)
        return mask

    def _digest(self, case_id: str, field_id: str, *row: object) -> int:
        # Rows arrive in any order: a case's digest is the sum of its rows' (mod 2**256).
        digest = _row_digest(field_id, *row)
        self._digests[case_id] = (self._digests.get(case_id, 0) + digest) % _MODULUS
        return digest

    def case_digests(self, *, legacy: bool = False) -> dict[str, str]:
        """Per gold case, a digest of its gold rows and joined predictions (private).

        ``legacy``: as a release recorded before ``evidence_provided`` holds it, where an
        answer whose chain provides evidence that does not support it was digested as one
        without evidence (the rows are the same; only the digest's text of them differs).
        """
        return {
            case_id: _final((total + self._legacy.get(case_id, 0) if legacy else total) % _MODULUS)
            for case_id, total in self._digests.items()
        }

    def atoms(self) -> dict[tuple[int, ...], tuple[CaseTrackingScorer, int]]:
        """Each atom's scorer and case count, by pattern (sorted): only atoms with cases."""
        return self._atoms.by_pattern()

    def case_ids(self) -> set[str]:
        """Every gold case id of the cohort (for the ledger; private)."""
        return self._atoms.case_ids()


def _row_digest(field_id: str, *row: object) -> int:
    # One row's digest, as an integer: its parts' texts joined (see _text).
    text = "\x1f".join(_text(part) for part in (field_id, *row))
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest(), "big")


def _text(value: object) -> str:
    # A part's type and exact text, ASCII: the same row gives the same text anywhere.
    if isinstance(value, frozenset):
        return "set:" + json.dumps(sorted(value))
    if isinstance(value, str):
        return "str:" + json.dumps(str(value))
    return f"{type(value).__name__}:{value!r}"


def _final(total: int) -> str:
    return "sha256:" + hashlib.sha256(total.to_bytes(32, "big")).hexdigest()


class AtomPairedScorer(PairedScorer):
    """A :class:`PairedScorer` that also pairs each membership pattern's cases apart.

    For a shared comparison in a publication of the ledger: the whole cohort's
    comparison, and each atom's. Args as for :class:`AtomScorer`.
    """

    def __init__(
        self,
        schema: Schema | None,
        membership: Mapping[str, tuple[int, ...]],
        *,
        extra_predictions: ExtraPredictions = "error",
    ) -> None:
        super().__init__(schema, extra_predictions=extra_predictions)
        make = functools.partial(PairedScorer, schema, extra_predictions=extra_predictions)
        self._atoms = _Atoms(membership, make)

    def __repr__(self) -> str:
        return f"AtomPairedScorer({len(self._atoms)} atoms)"

    def add_gold(
        self, case_id: str, field_id: str, field_type: FieldType, value: GoldValue
    ) -> None:
        """Add one gold row to the cohort and to its case's atom."""
        super().add_gold(case_id, field_id, field_type, value)
        self._atoms.add_gold(case_id, field_id, field_type, value)

    def close_gold(self) -> None:
        """Close the cohort's gold set and every atom's."""
        super().close_gold()
        self._atoms.close_gold()

    def add_baseline(self, row: PredictionRow) -> int:
        """Count one baseline row in the cohort and, when it has a gold row, in its atom."""
        mask = super().add_baseline(row)
        if mask >= 0:
            self._atoms.of(row[0]).add_baseline(row)
        return mask

    def add_candidate(self, row: PredictionRow) -> int:
        """Count one candidate row in the cohort and, when it has a gold row, in its atom."""
        mask = super().add_candidate(row)
        if mask >= 0:
            self._atoms.of(row[0]).add_candidate(row)
        return mask

    def atoms(self) -> dict[tuple[int, ...], tuple[PairedScorer, int]]:
        """Each atom's paired scorer and case count, by pattern (sorted)."""
        return self._atoms.by_pattern()
