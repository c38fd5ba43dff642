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
    """Per case id, the row classes it contributed; per field, its rows by class. Private.

    Cases read from a site's partial file (:mod:`chartscore.scoring.partial_document`) have no
    id: they are kept as counts of their bit sets (``anonymous``), and the cases with an
    ignored prediction as a count (``anonymous_ignored``).
    """

    __slots__ = (
        "_groups",
        "_patterns",
        "anonymous",
        "anonymous_ignored",
        "by_case",
        "by_field",
        "ignored",
    )

    def __init__(self) -> None:
        self._groups: dict[tuple[Group, int], int] = {}  # (group, row class) -> bit position
        self._patterns: Counter[int] | None = None  # distinct per-case bit sets, with counts
        self.by_case: dict[str, int] = {}
        self.by_field: dict[str, Counter[int]] = {}
        self.ignored: set[str] = set()
        self.anonymous: Counter[int] = Counter()
        self.anonymous_ignored = 0

    @property
    def ignored_count(self) -> int:
        """Distinct cases with a prediction skipped as not in gold."""
        return len(self.ignored) + self.anonymous_ignored

    def groups(self) -> list[tuple[Group, int]]:
        """Every (group, row class) in bit-position order."""
        return [key for key, _ in sorted(self._groups.items(), key=lambda item: item[1])]

    def patterns(self) -> Counter[int]:
        """Every case's bit set (positions of :meth:`groups`), counted: no case id."""
        if self._patterns is None:
            self._patterns = Counter(self.by_case.values()) + self.anonymous
        return self._patterns

    @classmethod
    def from_counts(
        cls,
        groups: list[tuple[Group, int]],
        patterns: Counter[int],
        by_field: dict[str, Counter[int]],
        ignored: int,
    ) -> CaseClasses:
        """Cases known only as counts of their bit sets (a site's partial file)."""
        classes = cls()
        for group, row in groups:
            classes._position(group, row)
        classes.anonymous = Counter(patterns)
        classes.by_field = {field_id: Counter(rows) for field_id, rows in by_field.items()}
        classes.anonymous_ignored = ignored
        return classes

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

            def moved(bits: int, remap: dict[int, int] = remap) -> int:
                out = 0
                for position, target in remap.items():
                    if bits >> position & 1:
                        out |= 1 << target
                return out

            for case_id, bits in source.by_case.items():
                merged.by_case[case_id] = merged.by_case.get(case_id, 0) | moved(bits)
            for bits, count in source.anonymous.items():  # cases of another site: disjoint
                merged.anonymous[moved(bits)] += count
            for field_id, rows in source.by_field.items():
                merged.by_field.setdefault(field_id, Counter()).update(rows)
            merged.ignored |= source.ignored
            merged.anonymous_ignored += source.anonymous_ignored
        return merged

    def _position(self, group: Group, row: int) -> int:
        position = self._groups.get((group, row))
        if position is None:
            position = self._groups[group, row] = len(self._groups)
        return position

    def patterns_where(self, keep: Callable[[str], bool]) -> Counter[int]:
        """The bit sets of the cases whose id passes ``keep`` (a stratum's), counted.

        Raises:
            ValueError: when some cases have no id (read from a site's partial file).
        """
        if self.anonymous or self.anonymous_ignored:
            raise ValueError("cases without an id cannot be placed")
        return Counter(bits for case_id, bits in self.by_case.items() if keep(case_id))

    def cases_matching(
        self, test: Callable[[Group, int], bool], patterns: Counter[int] | None = None
    ) -> int:
        """Distinct cases with at least one row whose (group, class) passes ``test``.

        ``patterns``: among these cases only (:meth:`patterns_where`); default every case.
        """
        wanted = 0
        for (group, row), position in self._groups.items():
            if test(group, row):
                wanted |= 1 << position
        if not wanted:
            return 0
        chosen = self.patterns() if patterns is None else patterns
        return sum(n for bits, n in chosen.items() if bits & wanted)
