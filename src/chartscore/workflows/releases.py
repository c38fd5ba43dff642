"""Share a release of a growing cohort, audited jointly with the earlier ones (``--releases``).

The ledger folder (:mod:`chartscore.io.release_ledger`) holds every earlier
release's shared report and its case ids, inside only. This module reads it,
scores the new cohort with every atom (membership pattern) apart
(:class:`~chartscore.scoring.release_atoms.AtomScorer`), hands the atoms'
reports and case counts to the value-free joint step
(:class:`~chartscore.disclosure.releases.ReleaseStep`) and records the new
release in the folder. Case ids never leave this module but into that folder.

The folder is locked (exclusively) from reading the earlier releases to
recording the new one: :class:`Ledger` holds the lock until it is closed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from chartscore.documents.report import Report
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.inputs import InputPath
from chartscore.io.release_ledger import Release, open_releases
from chartscore.records.schema import Schema
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import case_counts, kappa_smallest_margins
from chartscore.scoring.partial import PartialTally
from chartscore.scoring.release_atoms import AtomPairedScorer, AtomScorer
from chartscore.scoring.scorer import ExtraPredictions

if TYPE_CHECKING:
    from chartscore.disclosure.audits import ReleaseAudit
    from chartscore.disclosure.publication_releases import ComparisonAtom, PublicationRelease
    from chartscore.disclosure.releases import Atom
    from chartscore.disclosure.sensitivity import Sensitivity


def audit_ledger(folder: InputPath) -> list[ReleaseAudit]:
    """Re-run the joint audit of every release in the folder against all earlier ones.

    The folder is read under a shared lock and checked as ``share`` checks it
    (names, checks, the chain and the head); then each release is audited on
    its own and jointly with every earlier one
    (:func:`~chartscore.disclosure.audits.audit_releases`). Case ids stay
    here: only the releases' membership patterns go on.

    Raises:
        ChartscoreError: as :func:`~chartscore.io.release_ledger.open_releases`
            (an absent folder: ``not_a_release_ledger``); ``missing_dependency``
            without scipy.
    """
    from chartscore.disclosure.audits import (  # noqa: PLC0415
        audit_publication_releases,
        audit_releases,
    )

    with open_releases(folder, exclusive=False) as opened:
        releases = opened.releases
    if not releases:  # absent or empty: its generic text (a file lost or changed) misled
        raise ChartscoreError(
            ErrorCode.NOT_A_RELEASE_LEDGER, input=InputKind.RELEASES, hint=ErrorHint.NO_RELEASE
        )
    membership: dict[str, tuple[int, ...]] = {}
    for position, release in enumerate(releases):
        for case_id in release.case_ids:
            membership[case_id] = (*membership.get(case_id, ()), position)
    patterns = list(set(membership.values()))
    kinds = {release.publication for release in releases}
    if kinds == {True} or (kinds == {True, False} and _reports_first(releases)):
        # A ledger of publications, perhaps after one system's reports alone: each
        # release is all its products (None where a report's release published none).
        products, systems = _as_publications(releases)
        return audit_publication_releases(products, patterns, systems)
    if kinds != {False}:  # publications before one report's releases: not one model
        raise _other_kind()
    return audit_releases([r.shared for r in releases], patterns)


def _reports_first(releases: Sequence[Release]) -> bool:
    # Whether one report's releases (format 2, with digests) all come before the first
    # publication: the only mixed ledger ``share`` makes.
    first = next((n for n, r in enumerate(releases) if r.publication), len(releases))
    return all(r.publication for r in releases[first:]) and all(
        r.digests is not None for r in releases[:first]
    )


def _as_publications(
    releases: Sequence[Release],
) -> tuple[list[list[SharedReport | SharedComparison | None]], list[str | tuple[str, str]]]:
    # Every release's products in the first publication's places (a report's release: its
    # report at its system's place, found by the digests), and the products' systems.
    first = next(r for r in releases if r.publication)
    if any(
        r.publication and (len(r.products) != len(first.products) or r.pairs != first.pairs)
        for r in releases
    ):
        raise _other_kind()
    systems: list[str | tuple[str, str]] = [str(i) for i in range(len(first.products))]
    systems += [(str(b), str(c)) for b, c in first.pairs]
    products: list[list[SharedReport | SharedComparison | None]] = []
    for release in releases:
        if release.publication:
            products.append([*release.products, *release.comparisons])
            continue
        held = report_as_publication(release, first.system_digests, len(systems))
        if held is None:
            raise _other_kind()
        products.append(held)
    return products, systems


def report_as_publication(
    release: Release, digests: Sequence[Mapping[str, str]], width: int
) -> list[SharedReport | SharedComparison | None] | None:
    """A release of one report as a publication of ``width`` products: its report at its
    system's place, None at every other (unpublished); None when no place is found.

    ``digests``: per system (in the publication's order), each case's digest as a
    later publication recorded (or scored) it. The system is the one whose rows
    of every case of the release digest as the release recorded them; no place when
    no system does, or more than one (their rows of those cases are the same: which
    one was published cannot be told, and is not guessed).
    """
    known = release.digests
    if not known:
        return None
    places = [
        place
        for place, own in enumerate(digests)
        if all(own.get(case_id) == digest for case_id, digest in known.items())
    ]
    if len(places) != 1:
        return None
    return [release.shared if place == places[0] else None for place in range(width)]


class Ledger:
    """An open ledger folder, locked until :meth:`close`: its earlier releases, and a scorer.

    Raises:
        ChartscoreError: as :func:`~chartscore.io.release_ledger.open_releases`.
    """

    def __init__(self, folder: InputPath) -> None:
        self._folder = open_releases(folder, exclusive=True)
        self.earlier: list[Release] = list(self._folder.releases)

    def __repr__(self) -> str:
        return f"Ledger({len(self.earlier)} earlier releases)"

    def close(self) -> None:
        """Release the folder's lock (closing twice is harmless)."""
        self._folder.close()

    def require(self, *, publication: bool) -> None:
        """Refuse a ledger whose releases are of the other kind (a report's, a publication's).

        A publication may follow one report's releases (format 2, with digests): they
        are the same publication with the other products unpublished. A report's
        release never follows a publication.

        Raises:
            ChartscoreError: ``release_mismatch``.
        """
        if not publication:
            if any(release.publication for release in self.earlier):
                raise _other_kind()
            return
        if any(not release.publication for release in self.earlier) and not _reports_first(
            self.earlier
        ):
            raise _other_kind()  # reports of format 1 have no digests to place them

    def scorer(
        self,
        schema: Schema | None,
        *,
        extra_predictions: ExtraPredictions,
        strata: CaseStrata | None = None,
    ) -> AtomScorer:
        """A scorer of the new cohort that also scores each atom apart."""
        membership = self._membership()
        return AtomScorer(schema, membership, extra_predictions=extra_predictions, strata=strata)

    def paired_scorer(
        self, schema: Schema | None, *, extra_predictions: ExtraPredictions
    ) -> AtomPairedScorer:
        """A paired scorer of the new cohort that also pairs each atom's cases apart."""
        return AtomPairedScorer(schema, self._membership(), extra_predictions=extra_predictions)

    def _membership(self) -> dict[str, tuple[int, ...]]:
        membership: dict[str, tuple[int, ...]] = {}
        for position, release in enumerate(self.earlier):
            for case_id in release.case_ids:
                membership[case_id] = (*membership.get(case_id, ()), position)
        return membership

    def share(
        self,
        scorer: AtomScorer,
        min_cell: int,
        confidence: float,
        field_types: Callable[[PartialTally], dict[str, str]],
    ) -> SharedReport:
        """Suppress jointly with the earlier releases; record the new one; return it.

        The release is recorded before it is returned (and so before it is
        written anywhere): a report that then fails to be written stays in the
        ledger, which can only make later releases suppress more.

        Raises:
            ChartscoreError: ``release_mismatch`` when a case of an earlier
                release is not in this gold set (or scores otherwise than it
                did: any of its rows changed), or the earlier release's rule or
                fields differ; as :meth:`~chartscore.io.release_ledger.ReleaseFolder.record`.
        """
        from chartscore.disclosure.releases import ReleaseStep  # noqa: PLC0415
        from chartscore.disclosure.suppress import share as share_report  # noqa: PLC0415

        self.require(publication=False)
        cases = scorer.case_ids()
        if any(not release.case_ids <= cases for release in self.earlier):
            raise ChartscoreError(ErrorCode.RELEASE_MISMATCH)
        digests = scorer.case_digests()
        legacy = scorer.case_digests(legacy=True)
        for release in self.earlier:  # an old case whose rows changed, whatever the sums say
            known = release.digests or {}  # files of format 1 have none
            # A release shared before evidence_provided digested its rows as it was then; no
            # release carries the metric now either, so its absence does not say which: the
            # release's digests are this version's, or (all of them) the old ones.
            fits = all(digests.get(case_id) == digest for case_id, digest in known.items())
            if not fits and "evidence_provided" not in release.shared.overall.metrics:
                fits = all(legacy.get(case_id) == digest for case_id, digest in known.items())
            if not fits:
                raise ChartscoreError(ErrorCode.RELEASE_MISMATCH)
        atoms = _atoms(scorer, confidence, field_types)
        step = ReleaseStep([release.shared for release in self.earlier], atoms, min_cell)
        report, sensitivity = _full(scorer, confidence, field_types)
        shared = share_report(report, sensitivity, min_cell, joint=step)
        self._folder.record(shared, digests)
        return shared

    def publication(
        self,
        scorers: Sequence[AtomScorer],
        min_cell: int,
        confidence: float,
        field_types: Callable[[PartialTally], dict[str, str]],
        paired: Sequence[tuple[tuple[int, int], AtomPairedScorer]] = (),
    ) -> tuple[PublicationRelease, list[tuple[Report, Sensitivity]], list[dict[str, str]]]:
        """A new publication's joint check, each system's full report, and its digests.

        ``scorers``: each system's scorer of the new cohort (:meth:`scorer`), in the
        systems' order, fed with the same gold. ``paired``: each comparison's
        (baseline, candidate) places and its paired scorer (:meth:`paired_scorer`);
        every earlier release must have the same comparisons.

        Raises:
            ChartscoreError: ``release_mismatch`` when an earlier publication is not
                one of as many systems and the same comparisons, a case of an earlier
                release is not in this gold set or scores otherwise than it did for
                any system, or an earlier report's release is not one system's (no
                system's rows of its cases digest as it recorded them, or more than
                one's do).
        """
        from chartscore.disclosure.publication_releases import (  # noqa: PLC0415
            PublicationRelease,
        )

        self.require(publication=True)
        publications = [r for r in self.earlier if r.publication]
        if not scorers or any(len(r.products) != len(scorers) for r in publications):
            raise _other_kind()
        pairs = tuple(pair for pair, _ in paired)
        if any(r.pairs != pairs for r in publications):
            raise _other_kind()
        cases = scorers[0].case_ids()
        if any(s.case_ids() != cases for s in scorers) or any(
            not release.case_ids <= cases for release in self.earlier
        ):
            raise ChartscoreError(ErrorCode.RELEASE_MISMATCH)
        digests = [scorer.case_digests() for scorer in scorers]
        earlier: list[list[SharedReport | SharedComparison | None]] = []
        for release in self.earlier:  # an old case whose rows changed for any system
            if not release.publication:
                # One system's report alone: its system is the one whose rows of its cases
                # digest as it recorded them (the other systems' rows of those cases were
                # published nowhere: they are whatever they are now).
                held = report_as_publication(release, digests, len(scorers) + len(pairs))
                if held is None:
                    raise ChartscoreError(ErrorCode.RELEASE_MISMATCH)
                earlier.append(held)
                continue
            for own, known in zip(digests, release.system_digests, strict=True):
                if any(own.get(case_id) != digest for case_id, digest in known.items()):
                    raise ChartscoreError(ErrorCode.RELEASE_MISMATCH)
            earlier.append([*release.products, *release.comparisons])
        atoms = [_atoms(scorer, confidence, field_types) for scorer in scorers]
        compared = [_comparison_atoms(scorer, confidence, min_cell) for _, scorer in paired]
        step = PublicationRelease(
            earlier,
            atoms,
            min_cell,
            pairs,
            compared,
        )
        fulls = [_full(scorer, confidence, field_types) for scorer in scorers]
        return step, fulls, digests

    def record_publication(
        self,
        products: Sequence[SharedReport],
        digests: Sequence[dict[str, str]],
        comparisons: Sequence[tuple[tuple[int, int], SharedComparison]] = (),
    ) -> None:
        """Record a publication as the next release (its reports, digests and comparisons)."""
        self._folder.record_publication(products, digests, comparisons)


def _comparison_atoms(
    scorer: AtomPairedScorer, confidence: float, min_cell: int
) -> list[ComparisonAtom]:
    # Each atom's comparison, as every quantity's value and its distinct-case counts.
    from chartscore.disclosure.comparison_model import (  # noqa: PLC0415
        ComparisonModel,
        comparison_values,
    )
    from chartscore.disclosure.publication_releases import ComparisonAtom  # noqa: PLC0415
    from chartscore.documents.shared_comparison import build_shared_comparison  # noqa: PLC0415
    from chartscore.workflows.share_comparison import compared_cases  # noqa: PLC0415

    out: list[ComparisonAtom] = []
    for pattern, (atom_scorer, count) in scorer.atoms().items():
        comparison, cases, types = compared_cases(atom_scorer, confidence)
        full = build_shared_comparison(comparison, types, min_cell, set())
        found = comparison_values(full, ComparisonModel(types))
        values = {key: value for key, value in found.items() if value is not None}
        out.append(ComparisonAtom(pattern, count, values, cases))
    return out


def _atoms(
    scorer: AtomScorer, confidence: float, field_types: Callable[[PartialTally], dict[str, str]]
) -> list[Atom]:
    # Each atom's own report and case counts, and its rows in the cohort's majority category.
    from chartscore.disclosure.releases import Atom  # noqa: PLC0415
    from chartscore.disclosure.sensitivity import Sensitivity  # noqa: PLC0415

    atoms = []
    partial = scorer.partial()
    majority = _majority_keys(partial)
    for pattern, (atom_scorer, count) in scorer.atoms().items():
        partial = atom_scorer.partial()
        tally = partial.tally()
        sensitivity = Sensitivity(
            case_counts(partial, tally), kappa_smallest_margins(partial), field_types(partial)
        )
        rows = {field_id: _rows_with(partial, field_id, key) for field_id, key in majority.items()}
        report = Report.from_tally(tally, confidence)
        atoms.append(Atom(pattern, count, report, sensitivity, rows))
    return atoms


def _full(
    scorer: AtomScorer, confidence: float, field_types: Callable[[PartialTally], dict[str, str]]
) -> tuple[Report, Sensitivity]:
    # The whole cohort's report and case counts, as a release shares it (no figures).
    from chartscore.disclosure.sensitivity import Sensitivity  # noqa: PLC0415

    partial = scorer.partial()
    tally = partial.tally()
    sensitivity = Sensitivity(
        case_counts(partial, tally), kappa_smallest_margins(partial), field_types(partial)
    )
    return Report.from_tally(tally, confidence), sensitivity


def _majority_keys(partial: PartialTally) -> dict[str, object]:
    """Each majority field's most common gold answer (the first in a fixed order on a tie)."""
    out: dict[str, object] = {}
    for field_id, counts in sorted(partial.fields.items()):
        keys = counts.gold_keys
        if keys is None or not keys:
            continue
        most = max(keys.values())
        tied = [key for key, rows in keys.items() if rows == most]
        out[field_id] = min(tied, key=lambda key: (type(key).__name__, repr(key)))
    return out


def _rows_with(partial: PartialTally, field_id: str, key: object) -> int:
    counts = partial.fields.get(field_id)
    if counts is None or counts.gold_keys is None:
        return 0
    return int(counts.gold_keys.get(key, 0))


def _other_kind() -> ChartscoreError:
    # release_mismatch's own text speaks of cases dropped or changed: none were.
    return ChartscoreError(
        ErrorCode.RELEASE_MISMATCH,
        input=InputKind.RELEASES,
        hint=ErrorHint.RELEASES_OF_ANOTHER_KIND,
    )
