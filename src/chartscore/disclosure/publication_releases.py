"""Successive publications: a release of the ledger may be a whole publication.

A registry that publishes several systems' shared reports of one cohort every
quarter releases a *publication* each time (docs/disclosure.md, "Successive
releases"). The attacker holds every quarter's products at once: the joint
model is :class:`~chartscore.disclosure.releases.JointModel` over the
publications' models (:class:`~chartscore.disclosure.publication.PublicationModel`):

- every atom (the cases that exactly the same releases hold) has its own copy
  of the publication's model: every system's outcome classes and every
  comparison's paired block, tied as in one publication;
- each release's number of product ``p`` is the sum over its atoms of product
  ``p``'s number;
- the composition (each atom's gold rows per field) is public, as for one
  report's releases.

:class:`PublicationRelease` is the joint check that
:func:`chartscore.workflows.publication.share_publication_files` runs after
each round whose publication passes its own joint audit: it names the further
numbers to hide until no atom number of any product is provably from 1 to
``min_cell - 1``. :func:`audit_publication_releases` is the outsider's re-audit
(``audit --releases``). Products are matched by their place: system ``p`` of
one release is system ``p`` of every other (the ledger's digests make sure), and
every release has the same comparisons (pairs of places).

An earlier release that published one system's report alone (``share
--predictions ... --releases``, before the ledger's first publication) is the
same publication with every other product unpublished (``None`` in its place):
its model keeps every product's variables (the new release's own products'
shapes, :class:`EarlierPublication`), and only its one report's numbers are
published. The outsider learns nothing of the other systems from it.

Value-free: atoms arrive as their own reports and distinct-case counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

import attrs

from chartscore.disclosure.comparison_model import ComparisonModel
from chartscore.disclosure.forms import Form
from chartscore.disclosure.model import Key, ReportModel
from chartscore.disclosure.old_paths import moved_to
from chartscore.disclosure.publication import (
    JointPublication,
    Product,
    PublicationModel,
    System,
    own_numbers,
    product_key,
)
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.disclosure.releases import (
    FIELD_COUNT,
    Atom,
    JointModel,
    ReleaseStep,
    atom_key,
    outsider_solver,
    release_key,
)
from chartscore.disclosure.rule import IGNORED_COUNT
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode

if TYPE_CHECKING:
    from chartscore.disclosure.suppress import SuppressionState


def _mismatch() -> ChartscoreError:
    return ChartscoreError(ErrorCode.RELEASE_MISMATCH)


def default_systems(count: int) -> list[str]:
    """One system label per product, by place (``"0"``, ``"1"``, ...), as a ledger reads them."""
    return [str(index) for index in range(count)]


class ProductStep:
    """One product's own step in a ledger (the :class:`~chartscore.disclosure.suppress.JointStep`).

    It hides the product's ignored-prediction count (as every release of a ledger
    does: two releases' counts differ by the added cases' predictions) and
    withholds the kappa of the fields :class:`PublicationRelease` names.
    """

    def __init__(self, earlier_releases: int, kappa: set[str]) -> None:
        self._earlier = earlier_releases
        self._kappa = set(kappa)

    def __repr__(self) -> str:
        return f"ProductStep({self._earlier} earlier releases)"

    @property
    def earlier_releases(self) -> int:
        """How many earlier releases the product is audited with."""
        return self._earlier

    def __call__(self, state: SuppressionState) -> set[str]:
        """Hide the ignored count; the kappa to withhold."""
        state.hide(sorted(key for key in state.numbers if key[2] == IGNORED_COUNT))
        return set(self._kappa)


@attrs.frozen(repr=False)
class ComparisonAtom:
    """One atom's shared comparison of two systems, as its values: computed inside, never shared.

    Attributes:
        earlier: The positions of the earlier releases holding these cases.
        cases: How many cases the atom has.
        values: Every quantity of the comparison's model over the atom's cases.
        counts: Its distinct-case counts (as ``share`` computes them).
    """

    earlier: tuple[int, ...]
    cases: int
    values: Mapping[Key, int]
    counts: Mapping[Key, int]

    def __repr__(self) -> str:
        return f"ComparisonAtom(in {len(self.earlier)} earlier releases)"


class EarlierPublication:
    """An earlier release as a publication: its model and its published numbers.

    For a release of every product, exactly :class:`JointPublication`'s; for one
    whose products are not all published (``None``: one system's report shared
    alone), each unpublished product's model is the template's product of that
    place (the new release's, of the same shapes), and none of its numbers is
    published.

    Attributes:
        model: The publication's model (:class:`PublicationModel`).
        published: Every shown number, in joint keys (:func:`product_key`).

    Raises:
        ChartscoreError: ``release_mismatch`` when a release publishes none of its
            products, or a comparison without its systems' publication.
    """

    def __init__(
        self,
        products: Sequence[Product | None],
        systems: Sequence[System],
        template: Sequence[Product] = (),
    ) -> None:
        shown = [p for p in products if p is not None]
        if len(shown) == len(products):
            whole = JointPublication(shown, systems)
            self.model: PublicationModel = whole.model
            self.published: dict[Key, int] = whole.published
            return
        if not shown or len(template) != len(products):
            raise _mismatch()
        models: list[ReportModel] = []
        self.published = {}
        for index, product in enumerate(products):
            if product is None:
                models.append(_unpublished(template[index], systems[index]))
                continue
            if not isinstance(product, SharedReport) or not isinstance(systems[index], str):
                raise _mismatch()
            alone = JointPublication([product], [systems[index]])
            models.append(alone.model.products[0])
            for key, value in own_numbers(alone.published, 0).items():
                self.published[product_key(index, key)] = value
        rules = [p.disclosure.min_cell for p in shown]
        self.model = PublicationModel(models, systems, [rules[0]] * len(products))

    def __repr__(self) -> str:
        return f"EarlierPublication({len(self.model.products)} products)"


def _unpublished(template: Product, system: System) -> ReportModel:
    # An unpublished product's own model: its template's (a comparison's, by its field
    # types: the publication splits its block as it splits the new release's).
    if isinstance(template, SharedReport):
        if not isinstance(system, str):
            raise _mismatch()
        return JointPublication([template], [system]).model.products[0]
    return ComparisonModel(template.disclosure.field_types)


def blank_fields(
    earlier: Sequence[Sequence[Product | None]], moved: AbstractSet[str], count: int
) -> frozenset[str]:
    """The layouts whose majority facts an unpublished report leaves out (``"p/field"``).

    A report unpublished in an earlier release says nothing of its majority, but
    its layout's facts in that release would count the new release's majority
    category; its gold is its systems' gold, so a field whose majority category
    moved for one report (``moved``) moved for every unpublished one too.
    """
    if all(p is not None for products in earlier for p in products):
        return frozenset()
    fields = {name.split("/", 1)[1] for name in moved}
    places = {
        place
        for products in earlier
        for place, product in enumerate(products[:count])
        if product is None
    }
    return frozenset(f"{place}/{field_id}" for place in places for field_id in fields)


class PublicationRelease:
    """The joint check of a new publication against the earlier ones in the ledger.

    Args:
        earlier: Each earlier release's products (one shared report per system,
            in the systems' order, then its comparisons), in the ledger's order;
            ``None`` for a product that release did not publish (one system's
            report shared alone).
        atoms: Per system, the new cohort's atoms (their patterns in one order
            for every system).
        min_cell: The rule's min cell (every release's).
        pairs: Each comparison's (baseline, candidate) systems' places, in
            every release the same.
        compared: Per comparison, its atoms (in the systems' atoms' order).

    Raises:
        ChartscoreError: ``release_mismatch`` when an earlier release has another
            number of systems or comparisons, another min cell, or fields of
            another shape.
    """

    def __init__(
        self,
        earlier: Sequence[Sequence[Product | None]],
        atoms: Sequence[Sequence[Atom]],
        min_cell: int,
        pairs: Sequence[tuple[int, int]] = (),
        compared: Sequence[Sequence[ComparisonAtom]] = (),
    ) -> None:
        count = len(atoms)
        total = count + len(pairs)
        if not count or len(compared) != len(pairs):
            raise _mismatch()
        if any(len(products) != total for products in earlier):
            raise _mismatch()
        patterns = {tuple(atom.earlier for atom in own) for own in atoms}
        patterns |= {tuple(atom.earlier for atom in own) for own in compared}
        if len(patterns) != 1:
            raise _mismatch()
        if any(
            not isinstance(p, SharedReport | None) for products in earlier for p in products[:count]
        ):
            raise _mismatch()
        if any(all(p is None for p in products) for products in earlier):
            raise _mismatch()
        if any(
            p.disclosure.min_cell != min_cell
            for products in earlier
            for p in products
            if p is not None
        ):
            raise _mismatch()
        self.earlier = [list(products) for products in earlier]
        self.atoms = [list(own) for own in atoms]
        self.pairs = [(int(b), int(c)) for b, c in pairs]
        self.compared = [list(own) for own in compared]
        self.systems: list[System] = [
            *default_systems(count),
            *((str(b), str(c)) for b, c in pairs),
        ]
        self.min_cell = min_cell
        self.shown: list[list[int]] = [
            [j for j, products in enumerate(earlier) if products[p] is not None]
            for p in range(count)
        ]
        """Per system, the earlier releases that published its report (by position)."""
        self.steps = [self._step(p, min_cell) for p in range(count)]
        self.pinned = 0
        """Atom numbers the last check found pinned (0: the joint audit passed)."""
        self.pinned_keys: tuple[tuple[int, Key], ...] = ()
        """The last check's pinned numbers, as (product, key), once each."""
        self._level: dict[tuple[int, Key], int] = {}
        self._baseline: frozenset[tuple[int, Key, int]] | None = None

    def _step(self, system: int, min_cell: int) -> ReleaseStep:
        # System ``system``'s release step over the earlier releases that published its
        # report: an atom's positions among those (its other releases published nothing
        # of the system, whose old rows are whatever they are).
        shown = self.shown[system]
        reports = [self.earlier[j][system] for j in shown]
        atoms = self.atoms[system]
        if len(shown) != len(self.earlier):
            atoms = [
                attrs.evolve(
                    atom, earlier=tuple(shown.index(j) for j in atom.earlier if j in shown)
                )
                for atom in atoms
            ]
        return ReleaseStep([r for r in reports if isinstance(r, SharedReport)], atoms, min_cell)

    def _unlinked(self, system: int, position: int) -> set[Key]:
        # The step's unlinked majority numbers of an earlier release, by its position.
        shown = self.shown[system]
        if position not in shown:
            return set()
        return self.steps[system].unlinked.get(shown.index(position), set())

    def begin(self) -> None:
        """Forget what earlier checks asked to hide (a new order of the publication starts)."""
        self._level = {}

    def __repr__(self) -> str:
        return f"PublicationRelease({len(self.earlier)} earlier releases)"

    @property
    def earlier_releases(self) -> int:
        """How many earlier releases the new one is audited with."""
        return len(self.earlier)

    def product_step(self, system: int) -> ProductStep:
        """The step of system ``system``'s report (its kappa withheld as a release's)."""
        return ProductStep(len(self.earlier), self._kappa(system))

    def _kappa(self, system: int) -> set[str]:
        # Kappa is not modelled: withheld where an earlier release showed it and the cases
        # added since hold 1 to min_cell - 1 of the field's rows.
        out: set[str] = set()
        atoms = self.atoms[system]
        for position, products in enumerate(self.earlier):
            report = products[system]
            if report is None:
                continue  # that release did not publish the system's report
            assert isinstance(report, SharedReport)
            for field_id, part in report.by_field.items():
                if part.kappa is None or part.kappa.value is None:
                    continue
                added = sum(
                    _field_rows(atom, field_id) for atom in atoms if position not in atom.earlier
                )
                if 1 <= added < self.min_cell:
                    out.add(field_id)
        return out

    def extra(self, products: Sequence[Product]) -> list[set[Key]]:
        """Per product, the further numbers to hide (all empty: the joint audit passes).

        Raises:
            ChartscoreError: ``release_mismatch`` when the earlier releases'
                numbers are not sums of the atoms' (a case scores otherwise), or
                no cohort gives them all; ``disclosure_audit_failed`` when the
                attack cannot finish.
        """
        count = len(self.atoms)
        if len(products) != len(self.systems):
            raise _mismatch()
        self.pinned = 0
        if not self.earlier:
            return [set() for _ in products]
        new = JointPublication(products, self.systems)
        earlier = [EarlierPublication(p, self.systems, products) for p in self.earlier]
        values: list[list[dict[Key, int]]] = []  # per product, per atom
        extra: list[set[Key]] = [set() for _ in products]
        moved: set[str] = set()
        for p, step in enumerate(self.steps):
            model = new.model.products[p]
            own = [step.atom_values(model, atom) for atom in self.atoms[p]]
            totals = {key: sum(v[key] for v in own) for key in model.quantities}
            step.check_fits(model, totals, own)
            values.append(own)
            moved |= {f"{p}/{field_id}" for field_id in step.moved_fields}
            extra[p] |= _majority_numbers(products[p], step, model, step.moved_fields)
        for k, own_atoms in enumerate(self.compared):
            values.append(self._compared_values(new, count + k, own_atoms))
        blank = blank_fields(self.earlier, moved, count)
        if blank:
            # A report unpublished earlier: a field whose majority category moved for the
            # published one moved for every system (one gold), so every report hides its
            # majority numbers there (a gold-only number: another's showing would give it).
            fields = {name.split("/", 1)[1] for name in moved}
            for p, step in enumerate(self.steps):
                extra[p] |= _majority_numbers(products[p], step, new.model.products[p], fields)
        moved |= blank
        memberships = [(*atom.earlier, len(self.earlier)) for atom in self.atoms[0]]
        models: list[ReportModel] = [*(j.model for j in earlier), new.model]
        joint = JointModel(models, memberships, frozenset(moved))
        solvers = [(joint, self._solver(joint, [*earlier, new]))]
        # And the outsider's attack (audit --releases): without the composition, but with
        # the earlier majority facts where they fit (a model share's never holds).
        every: list[EarlierPublication | JointPublication] = [*earlier, new]
        numbers = [list(j.published.items()) for j in every]
        outsider, found, _ = outsider_solver(numbers, models, memberships, self.min_cell)
        if outsider is not None and found is not None:
            solvers.append((outsider, found))
        if self._baseline is None:
            # What the earlier releases (and the composition) pin with the new release
            # publishing nothing: not the new release's to protect, no hiding of it could.
            nothing = [(joint, self._solver(joint, [*earlier, new], nothing_new=True))]
            bare = [*numbers[:-1], []]
            outsider, found, _ = outsider_solver(bare, models, memberships, self.min_cell)
            if outsider is not None and found is not None:
                nothing.append((outsider, found))
            self._baseline = frozenset(self._pinned(nothing, new, values))
        pinned = self._pinned(solvers, new, values, self._baseline)
        self.pinned = len(pinned)
        self.pinned_keys = tuple(sorted({(p, key) for p, key, _ in pinned}))
        for p, key in self.pinned_keys:
            # A number pinned again (in any atom): hide more widely each time (see _to_hide).
            parts = new.model.products[p].quantities[key].parts
            more: list[set[Key]] = []
            while not any(more):  # the next level that has something left to hide
                level = self._level.get((p, key), 0)
                if level > _LEVELS:
                    raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
                self._level[p, key] = level + 1
                more = _to_hide(products, p, key, parts, level)
            for index, keys in enumerate(more):
                extra[index] |= keys
        return extra

    def _compared_values(
        self, new: JointPublication, index: int, atoms: Sequence[ComparisonAtom]
    ) -> list[dict[Key, int]]:
        # A comparison's atom values, checked: every earlier release's number of it is the
        # sum over the atoms it holds.
        model = new.model.products[index]
        own = [{key: atom.values.get(key, 0) for key in model.quantities} for atom in atoms]
        for position, products in enumerate(self.earlier):
            holders = [v for atom, v in zip(atoms, own, strict=True) if position in atom.earlier]
            product = products[index]
            if product is None:
                continue  # that release did not publish the comparison
            for key, value in product.numbers():
                if value is None or key[2] == IGNORED_COUNT or key not in model.quantities:
                    continue
                if sum(v[key] for v in holders) != value:
                    raise _mismatch()
        return own

    def _solver(
        self,
        joint: JointModel,
        publications: Sequence[JointPublication | EarlierPublication],
        *,
        nothing_new: bool = False,
    ) -> RangeSolver:
        # ``nothing_new``: as if the new release hid every number.
        by_release: list[dict[Key, int]] = []
        for position, publication in enumerate(publications):
            unlinked = (
                {
                    product_key(p, key)
                    for p in range(len(self.steps))
                    for key in self._unlinked(p, position)
                }
                if position < len(self.earlier)
                else set()
            )
            shown = {} if nothing_new and position == len(self.earlier) else publication.published
            by_release.append({k: v for k, v in shown.items() if k not in unlinked})
        published = {
            release_key(position, key): value
            for position, numbers in enumerate(by_release)
            for key, value in numbers.items()
        }
        for p in range(len(self.atoms)):
            for a, atom in enumerate(self.atoms[p]):
                for field_id in atom.report.by_field:
                    key = product_key(p, ("field", field_id, FIELD_COUNT))
                    if atom_key(a, key) in joint.quantities:
                        published[atom_key(a, key)] = _field_rows(atom, field_id)
        knowledge = joint.joint_knowledge(by_release, self.min_cell)
        failed = False
        solver: RangeSolver | None = None
        try:
            solver = RangeSolver(joint, published, eager=False, knowledge=knowledge)
            solver.point()
        except (Inconsistent, Unresolved):
            failed = True
        if failed or solver is None:
            raise _mismatch()
        return solver

    def _pinned(
        self,
        solvers: Sequence[tuple[JointModel, RangeSolver]],
        new: JointPublication,
        values: Sequence[Sequence[dict[Key, int]]],
        skip: AbstractSet[tuple[int, Key, int]] = frozenset(),
    ) -> list[tuple[int, Key, int]]:
        # Every atom number behind 1 to min_cell - 1 cases (but the composition's) that
        # the joint solver pins there: (system, key).
        out: list[tuple[int, Key, int]] = []
        count = len(self.steps)
        for k, atoms in enumerate(self.compared):
            model = new.model.products[count + k]
            composition = {
                key[:2]: quantity.form
                for key, quantity in model.quantities.items()
                if key[2] == FIELD_COUNT
            }
            for a, paired in enumerate(atoms):
                for key, quantity in sorted(model.quantities.items()):
                    value = values[count + k][a][key]
                    if not 1 <= paired.counts.get(key, value) < self.min_cell:
                        continue
                    if quantity.form == composition.get(key[:2]):
                        continue
                    joint_key = atom_key(a, product_key(count + k, key))
                    if (count + k, key, a) in skip:
                        continue
                    small = paired.cases < self.min_cell
                    if _pinned_by_any(solvers, joint_key, value, small, self.min_cell):
                        out.append((count + k, key, a))
        for p, step in enumerate(self.steps):
            model = new.model.products[p]
            composition = {
                key[:2]: quantity.form
                for key, quantity in model.quantities.items()
                if key[2] == FIELD_COUNT
            }
            for a, atom in enumerate(self.atoms[p]):
                counts = step.atom_cases(model, atom, values[p][a])
                for key, quantity in sorted(model.quantities.items()):
                    joint_key = atom_key(a, product_key(p, key))
                    if not 1 <= counts.get(key, 0) < self.min_cell or (p, key, a) in skip:
                        continue
                    if quantity.form == composition.get(key[:2]):
                        continue
                    value = values[p][a][key]
                    small = atom.cases < self.min_cell
                    if _pinned_by_any(solvers, joint_key, value, small, self.min_cell):
                        out.append((p, key, a))
        return out


def _majority_numbers(
    product: Product, step: ReleaseStep, model: ReportModel, fields: AbstractSet[str]
) -> set[Key]:
    # A report's shown majority-baseline numbers over any of ``fields`` (their majority
    # category moved since an earlier release): hidden, as one report's ledger hides them.
    return {
        key
        for key, value in product.numbers()
        if value is not None
        and key[2] == "majority_baseline.success_count"
        and set(step.members(model, key)) & fields
    }


def _pinned_by_any(
    solvers: Sequence[tuple[JointModel, RangeSolver]],
    key: Key,
    value: int,
    small: bool,
    min_cell: int,
) -> bool:
    # Whether either attack (with the composition, or the outsider's) pins the atom number.
    return any(
        key in joint.quantities
        and not _safe(solver, joint.quantities[key].form, value, small, min_cell)
        for joint, solver in solvers
    )


def _safe(solver: RangeSolver, form: Form, value: int, small: bool, min_cell: int) -> bool:
    failed = False
    safe = False
    try:
        if small and value >= min_cell:
            safe = solver.range_of(form)[0] == 0
        else:
            safe = solver.protected(form, value, min_cell)
    except (Unresolved, Inconsistent):
        failed = True
    if failed:
        raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
    return safe


def _field_rows(atom: Atom, field_id: str) -> int:
    part = atom.report.by_field.get(field_id)
    return 0 if part is None else int(part.counts.get(FIELD_COUNT, 0))


_LEVELS = 2
"""The widest level of :func:`_to_hide`."""


def _to_hide(
    products: Sequence[Product],
    system: int,
    key: Key,
    parts: tuple[Key, Key] | None,
    level: int,
) -> list[set[Key]]:
    # Per product, what to hide for a pinned atom number, wider at each level: the number
    # (or its parts) in its product; its quantities in every slice of every product; every
    # number of its slice and of the pooled slices in every product.
    shown = [{k for k, v in product.numbers() if v is not None} for product in products]
    out: list[set[Key]] = [set() for _ in products]
    names = {key[2], *(part[2] for part in parts or ())}
    if level == 0:
        out[system] = {k for k in (key, *(parts or ())) if k in shown[system]}
    elif level == 1:
        out = [{k for k in own if k[2] in names} for own in shown]
    elif level == 2:
        out = [{k for k in own if k[:2] == key[:2] or k[0] != "field"} for own in shown]
    return [{k for k in own if k[2] != FIELD_COUNT} for own in out]


__getattr__ = moved_to(
    __name__, "chartscore.disclosure.audits.ledger", ("audit_publication_releases",)
)
"""The old path of the audit's names that moved (:mod:`chartscore.disclosure.old_paths`)."""


__all__ = [
    "EarlierPublication",
    "ProductStep",
    "PublicationRelease",
    "blank_fields",
    "default_systems",
]
