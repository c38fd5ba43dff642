"""Each case's sampling strata (site, abstractor): private, keyed by case id.

A strata file (docs/formats.md, "Strata") gives, for every case, one label per
stratum key the schema declares. :class:`CaseStrata` holds that mapping in
memory only, as label positions: its repr shows the number of cases and
nothing else. Only the declared keys and labels ever reach a report, as the
names of its ``by_stratum`` slices.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.records._rules import is_case_id
from chartscore.records.schema import Schema, Strata

_SOURCE: Final = InputKind.STRATA


def stratum_name(key: str, label: str) -> str:
    """A stratum slice's name, ``key=label`` (``site=A``); both are declared names."""
    return f"{key}={label}"


class CaseStrata:
    """Case id -> the position of its label under each declared key (keys sorted).

    Build one with :meth:`build` (or :func:`chartscore.io.load_strata`). Private:
    its keys are case ids.
    """

    __slots__ = ("_cases", "declared", "fractions")

    def __init__(
        self,
        declared: Strata,
        cases: Mapping[str, tuple[int, ...]],
        fractions: Mapping[str, Decimal] | None = None,
    ) -> None:
        self.declared = declared
        self._cases = dict(cases)
        self.fractions = dict(fractions or {})  # stratum name -> declared sampling fraction

    def __repr__(self) -> str:
        return f"CaseStrata(<{len(self._cases)} cases; ids and labels hidden>)"

    def __getstate__(self) -> tuple[Strata, dict[str, tuple[int, ...]], dict[str, Decimal]]:
        return self.declared, self._cases, self.fractions

    def __setstate__(
        self, state: tuple[Strata, dict[str, tuple[int, ...]], dict[str, Decimal]]
    ) -> None:
        self.declared, self._cases, self.fractions = state

    def __len__(self) -> int:
        return len(self._cases)

    def positions(self, case_id: str) -> tuple[int, ...]:
        """The case's label positions, one per declared key.

        Raises:
            ChartscoreError: ``strata_case_missing`` when the strata file has no
                line for the case (the case id is never shown).
        """
        found = self._cases.get(case_id)
        if found is None:
            raise ChartscoreError(ErrorCode.STRATA_CASE_MISSING, input=_SOURCE)
        return found

    def slice_names(self) -> Iterator[tuple[int, int, str]]:
        """(key position, label position, ``key=label``) of every declared stratum."""
        for index, (key, labels) in enumerate(self.declared):
            for position, label in enumerate(labels):
                yield index, position, stratum_name(key, label)

    @classmethod
    def from_mapping(cls, schema: Schema | None, cases: object) -> CaseStrata:
        """From a ``{case id: {key: label}}`` dict (exactly dicts: no caller code runs).

        Raises:
            ChartscoreError: ``usage`` for anything but dicts; otherwise as :meth:`build`.
        """
        if type(cases) is not dict or not all(type(v) is dict for v in cases.values()):
            raise ChartscoreError(ErrorCode.USAGE)
        return cls.build(schema, ((None, case, dict(v)) for case, v in cases.items()))

    @classmethod
    def build(
        cls, schema: Schema | None, lines: Iterable[tuple[int | None, object, object]]
    ) -> CaseStrata:
        """Check each ``(line, case id, {key: label})`` against the schema's declared strata.

        Raises:
            ChartscoreError: ``strata_not_declared`` (no schema, or one that declares
                no strata); located at the line: ``invalid_case_id``,
                ``duplicate_case``, ``stratum_undeclared`` (a key or label the schema
                does not declare; neither is shown) or ``stratum_missing``.
        """
        if schema is None or not schema.strata:
            raise ChartscoreError(ErrorCode.STRATA_NOT_DECLARED, input=InputKind.SCHEMA)
        declared = schema.strata
        index = {key: {label: i for i, label in enumerate(labels)} for key, labels in declared}
        interned: dict[tuple[int, ...], tuple[int, ...]] = {}
        cases: dict[str, tuple[int, ...]] = {}
        for line, case_id, labels in lines:
            if not is_case_id(case_id):
                raise ChartscoreError(ErrorCode.INVALID_CASE_ID, input=_SOURCE, line=line)
            if type(labels) is not dict:
                raise ChartscoreError(ErrorCode.STRATUM_UNDECLARED, input=_SOURCE, line=line)
            for key, label in labels.items():
                known = index.get(key) if type(key) is str else None
                if known is None or type(label) is not str or label not in known:
                    raise ChartscoreError(ErrorCode.STRATUM_UNDECLARED, input=_SOURCE, line=line)
            if len(labels) != len(declared):
                raise ChartscoreError(ErrorCode.STRATUM_MISSING, input=_SOURCE, line=line)
            found = tuple(index[key][labels[key]] for key, _ in declared)
            if case_id in cases:
                raise ChartscoreError(ErrorCode.DUPLICATE_CASE, input=_SOURCE, line=line)
            cases[case_id] = interned.setdefault(found, found)  # type: ignore[index]
        return cls(declared, cases, schema.sampling_fractions())
