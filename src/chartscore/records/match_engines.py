"""The engines of the match modes, loaded only when a schema declares one: ``chartscore[match]``.

A ``regex`` field runs its gold patterns on google-re2 (linear time, a memory
budget per pattern); a ``fuzzy`` field computes the Levenshtein distance with
rapidfuzz. Neither is a runtime dependency: a scorer whose schema declares a
match mode loads that mode's engine before reading anything, and without the
extra fails with ``missing_dependency``, which says how to install it. Nothing
else imports them.

Both engines are linear in the longer text at best and quadratic (rapidfuzz) or
linear times the pattern's size (RE2) at worst, so the texts they see are
bounded (:data:`MAX_REGEX_ANSWER`, :func:`fuzzy_text_limit`), so that no row can take
more than a second or 64 MB.
"""

from __future__ import annotations

import importlib
from decimal import Decimal
from types import ModuleType
from typing import TYPE_CHECKING, Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind

if TYPE_CHECKING:
    from chartscore.records.schema import Schema

MAX_REGEX_ANSWER: Final = 5_000
"""The longest normalized answer (in code points) a ``regex`` field matches.

RE2's time is linear in the answer, times up to the size of the pattern's
program: the slowest patterns found (docs/performance.md, "Match modes") take
about 75 microseconds a character, so under 0.4 s at this length.
"""

MAX_FUZZY_TEXT: Final = 50_000
"""The longest normalized text (in code points) a ``fuzzy`` field compares at any threshold.

rapidfuzz's time grows with the longer length times the largest distance the
threshold allows: two unrelated texts of this length, of an alphabet beyond
Latin-1, with a threshold near 0, take about 0.5 s (docs/performance.md).
"""

LONGEST_FUZZY_TEXT: Final = 200_000
"""The longest normalized text a ``fuzzy`` field compares at a high enough threshold."""

FUZZY_WORK: Final = MAX_FUZZY_TEXT * MAX_FUZZY_TEXT
"""The most work one fuzzy row may take: its length times the distance its threshold allows.

That is the work of two 50,000-character texts at a threshold near 0; a longer
text is compared when its threshold allows proportionally less (see
:func:`fuzzy_text_limit`).
"""


def fuzzy_text_limit(threshold: Decimal) -> int:
    """The longest normalized text a ``fuzzy`` field with this threshold compares.

    At least :data:`MAX_FUZZY_TEXT`; above it, the largest ``n`` up to
    :data:`LONGEST_FUZZY_TEXT` with ``n * d(n) <= FUZZY_WORK``, where ``d(n)`` is the
    largest distance that still agrees at length ``n``: ``(q - p) * n // q`` for the
    threshold ``p / q``. rapidfuzz works in a band of that width, so its time is
    bounded by the same product whatever the length (docs/metrics.md, "Length
    limit"). Exact in integers: 200,000 characters from a threshold of 0.9375.
    """
    p, q = threshold.as_integer_ratio()
    low, high = MAX_FUZZY_TEXT, LONGEST_FUZZY_TEXT  # low always allowed; find the last allowed
    while low < high:
        middle = (low + high + 1) // 2
        if middle * ((q - p) * middle // q) <= FUZZY_WORK:
            low = middle
        else:
            high = middle - 1
    return low


_ENGINES: Final = {"regex": "re2._re2", "fuzzy": "rapidfuzz.distance.Levenshtein"}


def match_engine(mode: str, field_id: str | None = None) -> ModuleType:
    """The engine of a match mode (``"regex"`` or ``"fuzzy"``), imported on first use.

    Raises:
        ChartscoreError: ``missing_dependency`` (naming the schema field, if
            given) when ``chartscore[match]`` is not installed.
    """
    module: ModuleType | None = None
    try:
        module = importlib.import_module(_ENGINES[mode])
    except ImportError:
        module = None
    if module is None:  # raised outside the handler: no chained ImportError
        raise ChartscoreError(
            ErrorCode.MISSING_DEPENDENCY, input=InputKind.SCHEMA, field_id=field_id
        )
    return module


def require_match_engines(schema: Schema | None) -> None:
    """Load the engine of every match mode ``schema`` declares, before anything is read.

    Raises:
        ChartscoreError: ``missing_dependency`` naming the first such field (in
            sorted order) whose engine is not installed.
    """
    if schema is None:
        return
    for field_id in sorted(schema.fields):
        mode = schema.fields[field_id].match
        if mode is not None:
            match_engine(mode, field_id)
