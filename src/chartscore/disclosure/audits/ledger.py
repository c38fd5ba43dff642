"""The audit of a ledger: every release held with all the earlier ones (``audit --releases``).

A release is one system's shared report, or a publication (its systems' reports and
comparisons). The outsider attacks each release with every earlier one in the joint model
of their atoms (:class:`~chartscore.disclosure.releases.JointModel`, built by the same
:func:`~chartscore.disclosure.releases.outsider_solver` that ``share`` attacks with) and
judges every atom number as the package judges a hidden number. docs/disclosure.md,
"Re-running the joint audit".

Value-free: counts and closed words only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import attrs

from chartscore.disclosure.audits.document import DISCLOSED, UNRESOLVED, audit, judge, ranges_of
from chartscore.disclosure.audits.publication import audit_publication
from chartscore.disclosure.model import Key, ReportModel, model_of
from chartscore.disclosure.publication import JointPublication, Product, System
from chartscore.disclosure.publication_releases import EarlierPublication, default_systems
from chartscore.disclosure.releases import FIELD_COUNT, atom_key, outsider_solver
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError


@attrs.frozen
class ReleaseAudit:
    """The re-audit of one release of a ledger (``chartscore audit --releases``).

    Attributes:
        number: The release's number, from 1.
        own: Whether its own audit (:func:`chartscore.disclosure.audit`) passed.
        atoms: The membership patterns of the cases of it and every earlier release.
        checked: The atom quantities the joint attack bounded.
        pinned: Of those, the ones proven from 1 to ``min_cell - 1``.
        problem: ``inconsistent``, ``unresolved`` or ``mismatch`` (the releases
            cannot be one growing cohort under one rule) when the joint attack
            could not run to the end; None otherwise.

    Value-free: counts and closed words only.
    """

    number: int
    own: bool
    atoms: int
    checked: int
    pinned: int
    problem: str | None = None

    @property
    def passed(self) -> bool:
        """Its own audit passed and the joint attack pinned nothing."""
        return self.own and self.pinned == 0 and self.problem is None

    def line(self) -> str:
        """One line for the table: the verdict and its counts."""
        verdict = "PASS" if self.passed else "FAIL"
        own = "passed" if self.own else "failed"
        text = f"release {self.number}: {verdict}: own audit {own}"
        if self.number == 1:
            return text + "\n"
        earlier = self.number - 1
        text += (
            f"; jointly with {earlier} earlier release{'' if earlier == 1 else 's'}: "
            f"{self.atoms} atom{'' if self.atoms == 1 else 's'}, "
            f"{self.checked} atom numbers checked, {self.pinned} pinned"
        )
        if self.problem is not None:
            text += f", {self.problem}"
        return text + "\n"


def audit_releases(
    releases: Sequence[SharedReport], memberships: Sequence[tuple[int, ...]]
) -> list[ReleaseAudit]:
    """Re-run the audit of every release against all earlier ones, as an outsider holding them.

    Release ``j`` is attacked with releases ``1..j`` published: its own audit,
    then the joint model of their atoms (:class:`JointModel`), every number of
    every release an equality with the rule's knowledge, and every atom
    quantity bounded (but the composition's, ``field_count`` and numbers of its
    definition, which are public). Weaker than the audit ``share`` runs:
    without the data, the atoms' composition is not given (only what the
    releases' own numbers say of it), and when an earlier release's majority
    category moved its majority numbers are left out.

    Args:
        releases: Every release's shared report, in the ledger's order.
        memberships: Per case (in any order, repeats allowed), the positions
            of the releases holding it.
    """
    patterns = set(memberships)
    models = [model_of(shared) for shared in releases]
    out: list[ReleaseAudit] = []
    for last, shared in enumerate(releases):
        own = audit(shared).passed
        atoms = sorted({tuple(p for p in m if p <= last) for m in patterns} - {()})
        if last == 0:
            out.append(ReleaseAudit(1, own, len(atoms), 0, 0))
            continue
        checked, pinned, problem = joint_attack(
            [list(shared.numbers()) for shared in releases[: last + 1]],
            models[: last + 1],
            atoms,
            [shared.disclosure.min_cell for shared in releases[: last + 1]],
        )
        out.append(ReleaseAudit(last + 1, own, len(atoms), checked, pinned, problem))
    return out


def joint_attack(
    numbers: Sequence[Sequence[tuple[Key, int | None]]],
    models: Sequence[ReportModel],
    atoms: list[tuple[int, ...]],
    rules: Sequence[int],
) -> tuple[int, int, str | None]:
    """The outsider's joint attack on releases: (atom numbers bounded, pinned, the problem).

    ``numbers``: each release's published numbers in its model's keys (None: hidden);
    ``models``: each release's model (a report's or a publication's); ``rules``: each
    release's min cell. The problem (``mismatch``, ``inconsistent``, ``unresolved``)
    is None when the attack ran to the end.
    """
    last = len(numbers) - 1
    min_cell = rules[-1]
    if any(rule != min_cell for rule in rules) or any(last not in atom for atom in atoms):
        return 0, 0, "mismatch"
    joint, solver, problem = outsider_solver(numbers, models, atoms, min_cell)
    if problem is not None or joint is None or solver is None:
        return 0, 0, problem
    composition = {
        (key[0], key[1]): quantity.form
        for key, quantity in models[-1].quantities.items()
        if key[2] == FIELD_COUNT
    }
    forms = (
        joint.quantities[atom_key(index, key)].form
        for index in range(len(atoms))
        for key, quantity in models[-1].quantities.items()
        if atom_key(index, key) in joint.quantities and quantity.form != composition.get(key[:2])
    )
    checked = pinned = 0
    for answer in ranges_of(solver, forms):  # judged as every audit judges a hidden number
        status = judge(answer, min_cell)[2]
        if status == UNRESOLVED:
            return checked, pinned, "unresolved"
        checked += 1
        pinned += status == DISCLOSED
    return checked, pinned, None


def audit_publication_releases(
    releases: Sequence[Sequence[Product | None]],
    memberships: Sequence[tuple[int, ...]],
    systems: Sequence[System] | None = None,
) -> list[ReleaseAudit]:
    """Re-run the audit of every publication release against all earlier ones (outsider).

    As :func:`audit_releases`, with each release a
    publication: its own audit is the publication's joint audit (every product
    alone and all together); the joint attack models every atom's copy of the
    publication.

    A release that published one system's report alone (``None`` for every other
    product: the ledger's first releases, before its first publication) is
    audited as :func:`audit_releases` audits it, with the earlier such releases;
    a publication after it holds it as the same publication with nothing of the
    other products published
    (:class:`~chartscore.disclosure.publication_releases.EarlierPublication`).

    Args:
        releases: Every release's products (one shared report per system, then
            its comparisons; ``None`` where a release did not publish it).
        memberships: Per case, the positions of the releases holding it.
        systems: Each product's system (:class:`~chartscore.disclosure.publication.System`,
            as the ledger records them); default: one system per product.
    """
    patterns = set(memberships)
    count = len(releases[0]) if releases else 0
    if systems is None:
        systems = default_systems(count)
    whole = [all(p is not None for p in products) for products in releases]
    singles = len(list(itertools.takewhile(lambda full: not full, whole)))
    out: list[ReleaseAudit] = []
    if singles:  # one system's reports alone, first: as a ledger of reports audits them
        reports = [_alone(products) for products in releases[:singles]]
        if any(report is None for report in reports) or not all(whole[singles:]):
            return [ReleaseAudit(n + 1, False, 0, 0, 0, "mismatch") for n in range(len(releases))]
        alone = [report for report in reports if report is not None]
        out += audit_releases(alone, [tuple(p for p in m if p < singles) for m in memberships])
    publications: list[JointPublication | None] = []
    for entry in releases:
        full = [p for p in entry if p is not None]
        publications.append(
            JointPublication(full, systems) if len(full) == len(entry) == count else None
        )
    for last in range(singles, len(releases)):
        products = [p for p in releases[last] if p is not None]
        atoms = sorted({tuple(p for p in m if p <= last) for m in patterns} - {()})
        current = publications[last]
        shown: list[EarlierPublication | JointPublication | None] = [*publications[: last + 1]]
        if current is not None and singles:
            shown[:singles] = [_blank_or_none(r, systems, products) for r in releases[:singles]]
        if any(j is None for j in shown):
            out.append(ReleaseAudit(last + 1, False, len(atoms), 0, 0, "mismatch"))
            continue
        own = audit_publication(products, systems).passed  # each product's own audit too
        if last == 0:
            out.append(ReleaseAudit(1, own, len(atoms), 0, 0))
            continue
        numbers = [list(j.published.items()) for j in shown if j is not None]
        models: list[ReportModel] = [j.model for j in shown if j is not None]
        rules = [
            max(p.disclosure.min_cell for p in r if p is not None) for r in releases[: last + 1]
        ]
        checked, pinned, problem = joint_attack(numbers, models, atoms, rules)
        out.append(ReleaseAudit(last + 1, own, len(atoms), checked, pinned, problem))
    return out


def _alone(products: Sequence[Product | None]) -> SharedReport | None:
    # The one report a release of one system's report published (None: not such a release).
    shown = [p for p in products if p is not None]
    if len(shown) != 1 or not isinstance(shown[0], SharedReport):
        return None
    return shown[0]


def _blank_or_none(
    products: Sequence[Product | None], systems: Sequence[System], template: Sequence[Product]
) -> EarlierPublication | None:
    # An earlier report's release as the publication it is a part of (None: it cannot be).
    found: EarlierPublication | None = None
    try:
        found = EarlierPublication(products, systems, template)
    except ChartscoreError:
        found = None
    return found


__all__ = ["ReleaseAudit", "audit_publication_releases", "audit_releases", "joint_attack"]
