"""Per case id, the classes of the rows it contributed: the bookkeeping behind case counts.

A partial tally (:mod:`chartscore.scoring.partial`) carries it and
:mod:`chartscore.scoring.cases` fills and reads it; it holds case ids, so it is private and
stays in memory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

# A row class's group: (field type, the type metrics its field reports).
Group = tuple[str, tuple[str, ...]]


class CaseClasses:
    """Per case id, the row classes it contributed; per field, its rows by class. Private."""

    __slots__ = ("_groups", "_patterns", "by_case", "by_field", "ignored")

    def __init__(self) -> None:
        self._groups: dict[tuple[Group, int], int] = {}  # (group, row class) -> bit position
        self._patterns: Counter[int] | None = None  # distinct per-case bit sets, with counts
        self.by_case: dict[str, int] = {}
        self.by_field: dict[str, Counter[int]] = {}
        self.ignored: set[str] = set()

    def __repr__(self) -> str:
        return f"CaseClasses(<{len(self.by_case)} cases hidden>)"

    def record(self, case_id: str, field_id: str, group: Group, row: int) -> None:
        """One gold row of ``case_id`` in ``field_id`` fell in class ``row``."""
        position = self._position(group, row)
        self._patterns = None
        self.by_case[case_id] = self.by_case.get(case_id, 0) | 1 << position
        self.by_field.setdefault(field_id, Counter())[row] += 1

    def copy(self) -> CaseClasses:
        """An independent copy."""
        return CaseClasses().merge(self)

    def merge(self, other: CaseClasses) -> CaseClasses:
        """Both partitions' cases together (a case may have rows in both)."""
        merged = CaseClasses()
        for source in (self, other):
            remap = {
                position: merged._position(group, row)
                for (group, row), position in source._groups.items()
            }
            for case_id, bits in source.by_case.items():
                moved = 0
                for position, target in remap.items():
                    if bits >> position & 1:
                        moved |= 1 << target
                merged.by_case[case_id] = merged.by_case.get(case_id, 0) | moved
            for field_id, rows in source.by_field.items():
                merged.by_field.setdefault(field_id, Counter()).update(rows)
            merged.ignored |= source.ignored
        return merged

    def _position(self, group: Group, row: int) -> int:
        position = self._groups.get((group, row))
        if position is None:
            position = self._groups[group, row] = len(self._groups)
        return position

    def cases_matching(self, test: Callable[[Group, int], bool]) -> int:
        """Distinct cases with at least one row whose (group, class) passes ``test``."""
        wanted = 0
        for (group, row), position in self._groups.items():
            if test(group, row):
                wanted |= 1 << position
        if not wanted:
            return 0
        if self._patterns is None:
            self._patterns = Counter(self.by_case.values())
        return sum(n for bits, n in self._patterns.items() if bits & wanted)
