"""Successive releases: the attacker holds every release of a growing cohort at once.

Two shared reports of nested cohorts can be subtracted: their difference is a
report of the cases added in between, and a single release's audit cannot see
it. :class:`JointModel` is the attacker's model of all releases together
(docs/disclosure.md, "Successive releases"):

- the cases of all releases fall into *atoms* by membership pattern (which
  releases hold a case); atoms without cases are not modelled;
- every atom has its own copy of the report model's variables (outcome
  classes, item counts, rows with items), and every number of release ``j`` is
  the sum of the same number over the atoms inside cohort ``j``;
- the attacker holds every release's published numbers and their rule
  knowledge, and the cohort's composition: how many gold rows of each field
  every atom has (treated as public, and not protected).

:class:`ReleaseStep` is the extra suppression step that ``share`` runs with
the ledger (:func:`chartscore.disclosure.suppress.share`'s ``joint``): it hides
further numbers of the new release until no atom's number is provably from 1
to ``min_cell - 1`` (the single-release criterion, atom by atom). The earlier
releases are fixed: they are published already. Its complementary choice is the
one loop, :func:`chartscore.disclosure.complement.complement`, over the release's
view (:class:`_ReleaseView`), whose hides wait for the next attack.

Value-free: atoms arrive as their own reports and distinct-case counts; no
case id reaches this module.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Final

import attrs
import numpy as np

from chartscore.disclosure.complement import complement
from chartscore.disclosure.forms import Form, add
from chartscore.disclosure.model import (
    FieldLayout,
    Key,
    Quantity,
    ReportModel,
    model_of,
)
from chartscore.disclosure.old_paths import moved_to
from chartscore.disclosure.ranges import Inconsistent, RangeSolver, Unresolved
from chartscore.disclosure.rule import IGNORED_COUNT
from chartscore.documents.report import Report
from chartscore.documents.shared_report import SharedReport, shared_from_report
from chartscore.errors import ChartscoreError, ErrorCode

if TYPE_CHECKING:
    from chartscore.disclosure.sensitivity import Sensitivity
    from chartscore.disclosure.suppress import SuppressionState

FIELD_COUNT: Final = "field_count"
_MAJORITY: Final = "majority_baseline.success_count"
_ITEM_PAIRS: Final = (("matched_items", "answered_items"), ("matched_items", "gold_items"))


@attrs.frozen(repr=False)
class Atom:
    """The cases of one membership pattern, as their own report: computed inside, never shared.

    Attributes:
        earlier: The positions (in the ledger's order) of the earlier releases
            holding these cases; ``()`` for cases new in this release.
        cases: How many cases the atom has.
        report: The full report of the atom's cases alone.
        sensitivity: Its distinct-case counts (as ``share`` computes them).
        majority: Per field with a majority baseline, the atom's answerable
            rows in the *new release's* majority gold category (the atom's own
            report counts its own majority instead).
    """

    earlier: tuple[int, ...]
    cases: int
    report: Report
    sensitivity: Sensitivity
    majority: Mapping[str, int] = attrs.field(factory=dict)

    def __repr__(self) -> str:
        return f"Atom(in {len(self.earlier)} earlier releases)"


def release_key(release: int, key: Key) -> Key:
    """A release's quantity in the joint model."""
    return (f"release{release}:{key[0]}", key[1], key[2])


def atom_key(atom: int, key: Key) -> Key:
    """An atom's quantity in the joint model."""
    return (f"atom{atom}:{key[0]}", key[1], key[2])


def _mismatch() -> ChartscoreError:
    return ChartscoreError(ErrorCode.RELEASE_MISMATCH)


class JointModel(ReportModel):
    """The attacker's model of several releases of overlapping cohorts (see the module).

    Generic over a release's model: a shared report's :class:`ReportModel`, or a
    publication's :class:`~chartscore.disclosure.publication.PublicationModel`,
    whose layouts are its products' (``"product/field"``) and whose ties hold in
    every release and in every atom.

    Args:
        releases: Each release's own model, the new release last; every field
            of an earlier release must be a field of the new one, of the same
            shape.
        memberships: Per atom, the positions of the releases holding its cases
            (always including the last).
        moved: Fields whose majority category an earlier release does not share
            with the new one: that release's facts about its majority are left
            out (its classes count the new release's category).

    Raises:
        ChartscoreError: ``release_mismatch`` when a field's shape differs.
    """

    def __init__(
        self,
        releases: Sequence[ReportModel],
        memberships: Sequence[tuple[int, ...]],
        moved: frozenset[str] = frozenset(),
    ):
        new = releases[-1]
        self.knows_rule = True
        self.releases = list(releases)
        self.memberships = [tuple(m) for m in memberships]
        offset = 0
        self.layouts: dict[str, FieldLayout] = {}
        self.atom_layouts: list[dict[str, FieldLayout]] = []
        for atom in range(len(self.memberships)):
            own: dict[str, FieldLayout] = {}
            for field_id, layout in new.layouts.items():
                own[field_id] = _placed(layout, offset)
                self.layouts[f"{atom}/{field_id}"] = own[field_id]
                offset += layout.size
            self.atom_layouts.append(own)
        self._maps: list[dict[int, tuple[int, ...]]] = []
        for position, model in enumerate(self.releases):
            holders = [a for a, m in enumerate(self.memberships) if position in m]
            mapping: dict[int, tuple[int, ...]] = {}
            for field_id, layout in model.layouts.items():
                target = new.layouts.get(field_id)
                if target is None or not _same_field(target, layout):
                    raise _mismatch()
                for i in range(layout.size):
                    mapping[layout.offset + i] = tuple(
                        self.atom_layouts[a][field_id].offset + i for a in holders
                    )
            for variable in range(model.size):
                if variable not in mapping:  # a release's own variable (ignored predictions)
                    mapping[variable] = (offset,)
                    offset += 1
            self._maps.append(mapping)
        self._atom_maps = [
            {
                layout.offset + i: (own[field_id].offset + i,)
                for field_id, layout in new.layouts.items()
                for i in range(layout.size)
            }
            for own in self.atom_layouts
        ]
        self.size = offset
        self.quantities: dict[Key, Quantity] = {}
        for position, model in enumerate(self.releases):
            for key, quantity in model.quantities.items():
                joint = release_key(position, key)
                form = self.release_form(position, quantity.form)
                self.quantities[joint] = Quantity(joint, form, quantity.derived)
        for atom in range(len(self.memberships)):
            for key, quantity in new.quantities.items():
                if not all(v in self._atom_maps[atom] for v, _ in quantity.form):
                    continue  # tied to no case (ignored predictions)
                joint = atom_key(atom, key)
                form = self.atom_form(atom, quantity.form)
                self.quantities[joint] = Quantity(joint, form, quantity.derived)
        self.inequalities: list[Form] = []
        last = len(self.releases) - 1
        for position, model in enumerate(self.releases):
            # An earlier release's majority category may have moved: its classes count the
            # new release's, so its facts about its own majority are left out.
            rows = [
                row
                for field_id, layout in model.layouts.items()
                if isinstance(layout, FieldLayout)  # a comparison's block has no facts
                for row in layout.inequalities(majority=position == last or field_id not in moved)
            ]
            self.inequalities += [self.release_form(position, row) for row in rows]
        for own in self.atom_layouts:
            for layout in own.values():
                if isinstance(layout, FieldLayout):
                    self.inequalities += _atom_facts(layout)
        # A publication's products are tied (one cohort's rows): in every release, and in
        # every atom, since each tie counts the same rows in both products.
        for position, model in enumerate(self.releases):
            for row in _ties(model):
                self.inequalities += _both(self.release_form(position, row))
        for atom in range(len(self.memberships)):
            for row in _ties(new):
                self.inequalities += _both(self.atom_form(atom, row))
        self.error_counts = {}
        self.threshold = False
        self.composition = {}
        self.cases = {}
        self.carriers = {}
        self._behind = {}
        self._field_keys = {}

    def release_form(self, release: int, form: Form) -> Form:
        """A release model's form in the joint variables (the sum over its atoms)."""
        mapping = self._maps[release]
        return add(*((((u, c),), 1) for v, c in form for u in mapping[v]))

    def atom_form(self, atom: int, form: Form) -> Form:
        """A form of the new release's model, over one atom's variables only."""
        mapping = self._atom_maps[atom]
        return add(*((((mapping[v][0], c),), 1) for v, c in form))

    def joint_knowledge(
        self, published: Sequence[Mapping[Key, int]], min_cell: int
    ) -> list[tuple[Form, int]]:
        """Every release's rule knowledge (its own keys' published values), in joint variables."""
        rows: dict[tuple[Form, int], None] = {}
        for position, model in enumerate(self.releases):
            for form, bound in model.knowledge(published[position], min_cell):
                rows[self.release_form(position, form), bound] = None
        return list(rows)


def _ties(model: ReportModel) -> list[Form]:
    # A publication's rows ``form == 0`` between its products; none for one report.
    return list(getattr(model, "ties", ()))


def _both(row: Form) -> list[Form]:
    return [row, tuple((v, -c) for v, c in row)] if row else []


def _placed(layout: FieldLayout, offset: int) -> FieldLayout:
    # A layout at another offset: a report's field, or a comparison's block (offset, size).
    if isinstance(layout, FieldLayout):
        return FieldLayout(layout.shape, layout.classes, offset, layout.cells)
    return attrs.evolve(layout, offset=offset)


def _same_field(new: FieldLayout, earlier: FieldLayout) -> bool:
    # An earlier release's field: of the new one's shape, or (shared before labels were) of
    # it without labels. Labels' unknowns come last in a layout, so the earlier release's
    # variables are the new one's first. No release carries evidence_provided
    # (disclosure/evidence_rule.py), so old and new releases split evidence alike.
    # A comparison's block: of the same size (its classes are fixed by its field's type).
    if not isinstance(new, FieldLayout) or not isinstance(earlier, FieldLayout):
        return type(new) is type(earlier) and new.size == earlier.size
    if new.cells != earlier.cells:
        return False
    return earlier.shape in (new.shape, attrs.evolve(new.shape, labels=()))


def _atom_facts(layout: FieldLayout) -> list[Form]:
    # What holds within every atom: matched items at most answered and gold items, and
    # rows with items at most the classes that can hold them and at most their items; the
    # labels' facts (but the majority's: an atom's most common label may be another).
    labels = layout.label_layout()
    out: list[Form] = [] if labels is None else labels.rows(majority=False)
    if not layout.shape.items:
        return out
    for matched, other in _ITEM_PAIRS:
        first = ((layout.item_variable(other), 1),)
        second = ((layout.item_variable(matched), 1),)
        out.append(add((first, 1), (second, -1)))
    cases, carriers, forms = layout.cases(), layout.carriers(), layout.forms()
    for name, rows in cases.items():
        out.append(add((carriers[name], 1), (rows, -1)))
        out.append(add((forms[name], 1), (rows, -1)))
    return out


@attrs.frozen
class _Target:
    """One atom's sensitive quantity: its joint form, its true value and how it is judged."""

    key: Key
    atom: int
    form: Form
    value: int
    small_atom: bool


class ReleaseStep:
    """The joint audit of a new release against the earlier ones, as a suppression step.

    Args:
        earlier: The earlier releases' shared reports, in the ledger's order.
        atoms: The new release's cases by membership pattern (every case of
            an earlier release is in the new one: cohorts grow).
        min_cell: The rule's minimum cell size (every release's).

    Raises:
        ChartscoreError: ``release_mismatch`` when an earlier release was made
            under another ``min_cell`` or field shapes.
    """

    def __init__(
        self, earlier: Sequence[SharedReport], atoms: Sequence[Atom], min_cell: int
    ) -> None:
        if any(shared.disclosure.min_cell != min_cell for shared in earlier):
            raise _mismatch()
        self.earlier = list(earlier)
        self.atoms = list(atoms)
        self.min_cell = min_cell
        self.earlier_models = [model_of(shared) for shared in self.earlier]
        self._rows: list[dict[Key, int]] = []
        self.unlinked: dict[int, set[Key]] = {}
        """Per earlier release, its majority numbers that no atom's variables describe."""
        self.moved_fields: set[str] = set()
        """The fields whose majority category an earlier release does not share."""
        self.baseline_pinned = 0
        """Atom quantities that the earlier releases and the composition pin already."""

    @property
    def earlier_releases(self) -> int:
        """How many earlier releases the new one is audited with."""
        return len(self.earlier)

    def __call__(self, state: SuppressionState) -> set[str]:
        """Hide numbers of the new release until the joint audit passes.

        Returns the field ids whose kappa must be withheld as well.
        """
        # Predictions outside the cohort: withheld in every release of a ledger, the first
        # included. Two releases' counts would differ by the predictions of the cases added
        # between them (one predictions file), a number of the new atom the model has not.
        state.hide(sorted(key for key in state.numbers if key[2] == IGNORED_COUNT))
        if not self.earlier:
            return set()  # one atom, the release itself: the single-release step covers it
        model = state.model
        memberships = [(*atom.earlier, len(self.earlier)) for atom in self.atoms]
        values = [self.atom_values(model, atom) for atom in self.atoms]
        self._rows = [
            {key: v[key] for key in model.quantities if key[0] == "field" and key[2] == FIELD_COUNT}
            for v in values
        ]
        self.check_fits(model, state.values, values)
        joint = JointModel([*self.earlier_models, model], memberships, frozenset(self.moved_fields))
        moved = [
            key
            for key in state.numbers
            if key[2] == _MAJORITY and set(self.members(model, key)) & self.moved_fields
        ]
        state.hide(moved)  # not modelled against the earlier release: hidden
        seed = self._seed(joint, model, values)
        if seed is not None:
            self._seed_own(joint, seed, state.values)
        targets = self._targets(joint, model, values)
        # In sorted order: the closure's choices follow the order it is given the keys,
        # and a set's order is PYTHONHASHSEED's (the release's bytes varied run to run).
        state.hide(sorted(self._differences(state, targets)))
        everything = set(state.numbers)
        baseline = self._solver(joint, state, everything, seed)
        kept = [t for t in targets if self._safe(baseline, t)]
        self.baseline_pinned = len(targets) - len(kept)
        complement(_ReleaseView(self, joint, state, seed), kept)
        # The outsider of ``audit --releases`` attacks without the composition but with every
        # release's majority facts where they fit, which can pin what the attack above let
        # through: its exposed targets (but those it pins with nothing new shown) go round again.
        exposed = self.outsider_exposed(state, kept, memberships, state.hidden)
        if exposed:
            anyway = set(self.outsider_exposed(state, exposed, memberships, set(state.numbers)))
            pending = [target for target in exposed if target not in anyway]
            if pending:
                view = _ReleaseView(self, joint, state, seed, memberships=memberships)
                complement(view, pending)
        return self._withheld_kappa(model)

    def outsider_exposed(
        self,
        state: SuppressionState,
        targets: Sequence[_Target],
        memberships: list[tuple[int, ...]],
        hidden: AbstractSet[Key],
    ) -> list[_Target]:
        """The targets that the outsider's joint attack (:func:`outsider_solver`) does not
        find protected when ``hidden`` is hidden (none when its model cannot be solved)."""
        numbers: list[list[tuple[Key, int | None]]] = [
            list(shared.numbers()) for shared in self.earlier
        ]
        numbers.append(list(state.published(hidden).items()))
        models = [*self.earlier_models, state.model]
        joint, solver, problem = outsider_solver(numbers, models, memberships, self.min_cell)
        if problem is not None or joint is None or solver is None:
            return []
        out: list[_Target] = []
        for target in targets:
            quantity = joint.quantities.get(atom_key(target.atom, target.key))
            if quantity is not None and not self._safe(
                solver, attrs.evolve(target, form=quantity.form)
            ):
                out.append(target)
        return out

    # --- inside the step ---------------------------------------------------------------

    def _differences(self, state: SuppressionState, targets: Sequence[_Target]) -> set[Key]:
        """The numbers whose difference with an earlier release is a sensitive atom number.

        When one earlier release holds every case but the new ones, a number it and the
        new release both publish gives the new cases' number exactly: such a number (for
        failures, the cheaper of its two parts) must be hidden whatever else is, so it is
        hidden before the loop, which would otherwise find them one solve at a time.
        """
        others = {a for a, atom in enumerate(self.atoms) if atom.earlier}
        new = [a for a, atom in enumerate(self.atoms) if not atom.earlier]
        latest = [
            position
            for position in range(len(self.earlier))
            if {a for a in others if position in self.atoms[a].earlier} == others
        ]
        if not new or not latest:
            return set()
        before = {k for k, v in self.earlier[latest[-1]].numbers() if v is not None}
        shown = set(state.published())
        out: set[Key] = set()
        for target in targets:
            if target.atom != new[0]:
                continue
            parts = state.model.quantities[target.key].parts
            keys = [target.key] if parts is None else list(parts)
            if all(k in before and k in shown for k in keys) and not out.intersection(keys):
                out.add(min(keys, key=lambda k: (state.price(state.closure([k])), state.cost[k])))
        return out

    def atom_values(self, model: ReportModel, atom: Atom) -> dict[Key, int]:
        """Every quantity of the new release's model over the atom's cases (0 where the atom
        has no row of a field)."""
        types = dict(atom.sensitivity.field_types)
        document = atom.report.without_labels().core().to_dict()
        full = shared_from_report(document, types, self.min_cell, set(), set())
        own: dict[Key, int] = {}
        for key, value in full.numbers():
            assert value is not None
            own[key] = value
        for key in list(own):
            if key[2] == _MAJORITY:
                members = self.members(model, key)
                own[key] = sum(atom.majority.get(f, 0) for f in members)
        out: dict[Key, int] = {}
        for key, quantity in model.quantities.items():
            parts = quantity.parts
            if parts is not None:
                out[key] = own.get(parts[1], 0) - own.get(parts[0], 0)
            else:
                out[key] = own.get(key, 0)
        return out

    @staticmethod
    def members(model: ReportModel, key: Key) -> list[str]:
        """The fields a slice sums: itself, every field, or the fields of one type."""
        kind, name, _ = key
        if kind == "field":
            return [name]
        return [
            f
            for f, layout in model.layouts.items()
            if kind == "overall" or layout.shape.field_type == name
        ]

    def atom_cases(
        self, model: ReportModel, atom: Atom, values: Mapping[Key, int]
    ) -> dict[Key, int]:
        """The atom's distinct cases per quantity; the majority baseline's by the new
        release's category: a field's rows, a pooled slice's largest field (a lower bound)."""
        counts = dict(atom.sensitivity.case_counts)
        for key in model.quantities:
            metric = key[2].split(".", 1)[0]
            if metric != "majority_baseline" or key[2].endswith(".total_count"):
                continue
            suffix = key[2].split(".", 1)[1]
            counts[key] = max(
                (
                    values.get(("field", f, f"majority_baseline.{suffix}"), 0)
                    for f in self.members(model, key)
                ),
                default=0,
            )
        return counts

    def check_fits(
        self,
        model: ReportModel,
        new_values: Mapping[Key, int],
        atom_values: Sequence[Mapping[Key, int]],
    ) -> None:
        """Check that every published number of every release is the sum over its atoms
        (otherwise the cases of an earlier release no longer score as they did then), and
        find the fields whose majority category moved (:attr:`moved_fields`).

        Raises:
            ChartscoreError: ``release_mismatch`` when a number of an earlier release
                does not fit; ``disclosure_audit_failed`` when the atoms do not sum to the
                new release (a bug).
        """
        for key in model.quantities:
            if key[2] == IGNORED_COUNT:
                continue  # the release's own variable: no atom's cases
            if sum(values[key] for values in atom_values) != new_values[key]:
                raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)  # a bug
        moved: dict[int, set[str]] = {}
        pooled: list[tuple[int, Key]] = []
        unseen: dict[int, set[str]] = {}  # per release, the fields whose majority it hid
        for position, shared in enumerate(self.earlier):
            holders = [
                values
                for atom, values in zip(self.atoms, atom_values, strict=True)
                if position in atom.earlier
            ]
            for key, value in shared.numbers():
                if value is None and key[0] == "field" and key[2] == _MAJORITY:
                    unseen.setdefault(position, set()).add(key[1])
                if value is None or key[2] == IGNORED_COUNT:
                    continue  # hidden, or that release's own variable
                if key in model.quantities and sum(v[key] for v in holders) == value:
                    continue
                if key[2] != _MAJORITY:
                    raise _mismatch()
                pooled.append((position, key))
                if key[0] == "field":
                    moved.setdefault(position, set()).add(key[1])
        for position, key in pooled:  # a pooled majority off only through a moved field
            members = set(self.members(model, key))
            if members & moved.get(position, set()):
                continue
            # A field whose own majority number that release hid can have moved unseen: only
            # the pooled number tells, not which field, so each such field counts as moved.
            hid = members & unseen.get(position, set())
            if not hid:
                raise _mismatch()
            moved.setdefault(position, set()).update(hid)
        # A field whose majority category moved: its majority numbers count rows of
        # another category in that release, which no atom's variables describe.
        self.unlinked = {
            position: {
                key
                for key in self.earlier_models[position].quantities
                if key[2].startswith("majority_baseline.")
                and not key[2].endswith(".total_count")
                and set(self.members(model, key)) & fields
            }
            for position, fields in moved.items()
        }
        self.moved_fields = set().union(*moved.values()) if moved else set()

    def _seed(
        self, joint: JointModel, model: ReportModel, atom_values: Sequence[Mapping[Key, int]]
    ) -> np.ndarray | None:
        # A point of the joint model from each atom's own table (None if one is not found).
        seed = np.zeros(joint.size, dtype=np.int64)
        # An atom's own table need not keep the release's facts (a boolean majority of a
        # release can be an atom's minority): only what holds within every atom.
        within = copy.copy(model)
        within.inequalities = [f for layout in model.layouts.values() for f in _atom_facts(layout)]
        for atom, values in enumerate(atom_values):
            published = {k: v for k, v in values.items() if not model.quantities[k].derived}
            published = {k: v for k, v in published.items() if k[2] != IGNORED_COUNT}
            point: np.ndarray | None = None
            try:
                point = RangeSolver(within, published, eager=False).point()
            except (Inconsistent, Unresolved):
                point = None
            if point is None:
                return None
            for variable, value in model.most_item_rows(point.tolist()).items():
                point[variable] = value
            for field_id, layout in model.layouts.items():
                target = joint.atom_layouts[atom][field_id]
                seed[target.offset : target.offset + layout.size] = point[
                    layout.offset : layout.offset + layout.size
                ]
        return seed

    def _seed_own(self, joint: JointModel, seed: np.ndarray, new: Mapping[Key, int]) -> None:
        # Each release's own variables (ignored predictions) at their published values.
        for position, model in enumerate(joint.releases):
            numbers = (
                dict(self.earlier[position].numbers()) if position < len(self.earlier) else new
            )
            for key, quantity in model.quantities.items():
                if key[2] == IGNORED_COUNT and len(quantity.form) == 1:
                    ((variable, _),) = quantity.form
                    value = numbers.get(key)
                    if value is not None:
                        seed[joint.release_form(position, ((variable, 1),))[0][0]] = value

    def _targets(
        self, joint: JointModel, model: ReportModel, atom_values: Sequence[Mapping[Key, int]]
    ) -> list[_Target]:
        # Every atom quantity behind 1 to min_cell - 1 cases, except the composition.
        composition = {
            (key[0], key[1]): quantity.form
            for key, quantity in model.quantities.items()
            if key[2] == FIELD_COUNT
        }
        out: list[_Target] = []
        for index, atom in enumerate(self.atoms):
            counts = self.atom_cases(model, atom, atom_values[index])
            for key, quantity in model.quantities.items():
                joint_key = atom_key(index, key)
                if joint_key not in joint.quantities:
                    continue
                if not 1 <= counts.get(key, 0) < self.min_cell:
                    continue
                if quantity.form == composition.get((key[0], key[1])):
                    continue  # field_count, and numbers of the same definition: public
                out.append(
                    _Target(
                        key,
                        index,
                        joint.quantities[joint_key].form,
                        atom_values[index][key],
                        atom.cases < self.min_cell,
                    )
                )
        return out

    def _published(
        self, joint: JointModel, state: SuppressionState, hidden: set[Key]
    ) -> tuple[dict[Key, int], list[dict[Key, int]]]:
        by_release: list[dict[Key, int]] = []
        for position, shared in enumerate(self.earlier):
            unlinked = self.unlinked.get(position, set())
            by_release.append(
                {k: v for k, v in shared.numbers() if v is not None and k not in unlinked}
            )
        by_release.append(state.published(hidden))
        published: dict[Key, int] = {}
        for position, numbers in enumerate(by_release):
            for key, value in numbers.items():
                published[release_key(position, key)] = value
        for index, values in enumerate(self._composition(state.model)):
            for key, value in values.items():
                published[atom_key(index, key)] = value
        return published, by_release

    def _composition(self, model: ReportModel) -> list[dict[Key, int]]:
        # Each atom's gold rows per field: public (docs/disclosure.md).
        return self._rows

    def _solver(
        self, joint: JointModel, state: SuppressionState, hidden: set[Key], seed: np.ndarray | None
    ) -> RangeSolver:
        published, by_release = self._published(joint, state, hidden)
        knowledge = joint.joint_knowledge(by_release, self.min_cell)
        failed = False
        solver: RangeSolver | None = None
        try:
            solver = RangeSolver(joint, published, eager=False, seed=seed, knowledge=knowledge)
            solver.point()  # a witness in every component (the seed, where it fits)
        except Inconsistent:
            failed = True
        except Unresolved:
            failed = True
        if failed or solver is None:
            raise _mismatch()
        return solver

    def _safe(self, solver: RangeSolver, target: _Target) -> bool:
        failed = False
        safe = False
        try:
            if target.small_atom and target.value >= self.min_cell:
                safe = solver.range_of(target.form)[0] == 0  # rows of fewer cases than min_cell
            else:
                safe = solver.protected(target.form, target.value, self.min_cell)
        except (Unresolved, Inconsistent):
            failed = True
        if failed:
            raise ChartscoreError(ErrorCode.DISCLOSURE_AUDIT_FAILED)
        return safe

    def _withheld_kappa(self, model: ReportModel) -> set[str]:
        # Kappa is not modelled: a field's kappa is withheld when an earlier release showed
        # its kappa and the cases added since hold 1 to min_cell - 1 of its rows.
        withheld: set[str] = set()
        composition = self._composition(model)
        for position, shared in enumerate(self.earlier):
            for field_id, part in shared.by_field.items():
                if part.kappa is None or part.kappa.value is None:
                    continue
                added = sum(
                    rows["field", field_id, FIELD_COUNT]
                    for atom, rows in zip(self.atoms, composition, strict=True)
                    if position not in atom.earlier
                )
                if 1 <= added < self.min_cell:
                    withheld.add(field_id)
        return withheld


class _ReleaseView:
    """The release step's :class:`~chartscore.disclosure.complement.View`: atom targets.

    A round's choices are made against the pattern the round began with and hidden
    together when the attack next looks (one closure of their union, which can hide
    fewer numbers than the union of their closures); a target whose candidates meet a
    choice of the round is left to that attack. No certificate: a target is an atom's,
    which only the joint solver sees. A candidate is a number sharing an outcome class
    with the target's quantity, else any published one, priced by its closure.
    """

    trials = 0

    def __init__(
        self,
        release: ReleaseStep,
        joint: JointModel,
        state: SuppressionState,
        seed: np.ndarray | None,
        *,
        memberships: list[tuple[int, ...]] | None = None,
    ) -> None:
        self.release, self.joint, self.state, self.seed = release, joint, state, seed
        self.memberships = memberships
        """With the atoms' memberships, the outsider's attack judges the targets too."""
        self.chosen: set[Key] = set()

    def exposed(self, pending: list[_Target]) -> list[_Target]:
        state = self.state
        if self.chosen:
            # In sorted order: the closure's choices follow the order it is given the keys.
            state.hide(sorted(self.chosen))
            self.chosen = set()
        solver = self.release._solver(self.joint, state, state.hidden, self.seed)
        out = [target for target in pending if not self.release._safe(solver, target)]
        if self.memberships is None:
            return out
        rest = [target for target in pending if target not in out]
        found = self.release.outsider_exposed(state, rest, self.memberships, state.hidden)
        return [target for target in pending if target in out or target in found]

    def certified(self, quantity: _Target, extra: AbstractSet[Key] = frozenset()) -> bool:
        return False

    def candidates(self, quantity: _Target) -> list[Key]:
        state = self.state
        linked = state.candidates(state.model.quantities[quantity.key]) or self.fallback(quantity)
        if self.chosen.intersection(linked):
            return []  # a number chosen for an earlier target may protect it
        return linked

    def fallback(self, quantity: _Target) -> list[Key]:
        state = self.state
        return sorted(
            (k for k in state.numbers if k not in state.hidden), key=state.cost.__getitem__
        )

    def rank(self, quantity: _Target, candidates: Collection[Key]) -> list[Key]:
        state = self.state
        return [min(candidates, key=lambda k: (state.price(state.closure([k])), state.cost[k]))]

    def forces(self, key: Key) -> set[Key]:
        return {key}

    def hide(self, keys: AbstractSet[Key]) -> None:
        self.chosen |= keys


def outsider_solver(
    numbers: Sequence[Sequence[tuple[Key, int | None]]],
    models: Sequence[ReportModel],
    atoms: list[tuple[int, ...]],
    min_cell: int,
) -> tuple[JointModel | None, RangeSolver | None, str | None]:
    """The outsider's joint model and solver of releases (see :func:`joint_attack`).

    Without the composition; with every release's majority facts, else (when that
    is inconsistent: a majority category may have moved) without the earlier
    releases' majority counts. Returns the problem instead when neither solves.
    """
    last = len(numbers) - 1
    joint: JointModel | None = None
    solver: RangeSolver | None = None
    for moved in (frozenset(), frozenset(models[-1].layouts)):
        by_release = [
            {
                key: value
                for key, value in shown
                if value is not None and not (position < last and _majority_part(key, moved))
            }
            for position, shown in enumerate(numbers)
        ]
        problem: str | None = None
        try:
            joint = JointModel(list(models), atoms, moved)
            published = {
                release_key(position, key): value
                for position, numbers in enumerate(by_release)
                for key, value in numbers.items()
            }
            knowledge = joint.joint_knowledge(by_release, min_cell)
            solver = RangeSolver(joint, published, eager=False, knowledge=knowledge)
            solver.point()
        except ChartscoreError:
            problem = "mismatch"
        except Inconsistent:
            problem = "inconsistent"  # perhaps a majority category that moved: try without
        except Unresolved:
            problem = "unresolved"
        if problem is None:
            break
    return joint, solver, problem


def _majority_part(key: Key, fields: frozenset[str]) -> bool:
    # A majority count (not its total) of a slice holding one of ``fields``.
    if not fields or not key[2].startswith("majority_baseline."):
        return False
    return not key[2].endswith(".total_count") and (key[0] != "field" or key[1] in fields)


__getattr__ = moved_to(
    __name__,
    "chartscore.disclosure.audits.ledger",
    ("ReleaseAudit", "audit_releases", "joint_attack"),
)
"""The old path of the audit's names that moved (:mod:`chartscore.disclosure.old_paths`)."""


__all__ = [
    "Atom",
    "JointModel",
    "ReleaseStep",
    "atom_key",
    "outsider_solver",
    "release_key",
]
