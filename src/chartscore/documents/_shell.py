"""The one reader of a document's shell: format, version, scorer, confidence, plugins, strata.

Every document chartscore writes and reads back (a report, a comparison, their shared
forms, a site's partial) opens the same way: ``format`` and ``format_version``, then
``scorer`` (``{"name": "chartscore", "version": ...}``); a scored document adds its
``confidence`` level and, optionally, the ``plugins`` it was scored with and its stratum
slices. :func:`read_opening` reads the first three by one set of rules (one
``scorer.version`` rule among them), :func:`read_shell` a scored document's whole opening,
and :func:`shell_members` writes it; :func:`read_strata` and
:func:`check_strata` read the stratum slices and check that each key's strata add up.
What a slice holds, each document's own reader reads; the identities every slice's
counts obey are checked here (:func:`check_sums`, :func:`check_trials`,
:func:`check_slices`).

Failures are ``unknown_report_format`` (another format or version) or ``invalid_report``,
value-free, with no chained exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Final, Protocol, TypeVar

import attrs

from chartscore.documents import _strict_json
from chartscore.documents._strict_json import Quantities
from chartscore.documents.plugin_layout import PluginStamp, stamps_from_dict
from chartscore.errors import valid_field_id
from chartscore.stats.clustered import CONFIDENCE_LEVELS, z_for

SCORER_NAME: Final = "chartscore"
SCORER_VERSION: Final = re.compile(
    r"(?=.{1,64}$)[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?"
    r"(\+[a-z0-9]+(\.[a-z0-9]+)*)?"
)
"""A PEP 440 version as chartscore writes it (lowercase local label), at most 64 characters."""

STRATUM_NAME: Final = re.compile(r"([a-z][a-z0-9_]{0,31})=([A-Za-z0-9][A-Za-z0-9_.-]{0,63})")
"""A stratum slice's name in a report: ``key=label`` (declared names, docs/formats.md)."""

FIELD_TYPE_NAMES: Final = ("text", "categorical", "number", "boolean", "date", "ordinal", "multi")
"""The field types a ``by_field_type`` slice may be named after (``chartscore.FieldType``)."""

TOP_KEYS: Final = (
    "format",
    "format_version",
    "scorer",
    "confidence",
    "overall",
    "by_field",
    "by_field_type",
)
"""The members every scored document has (a shared one adds its ``disclosure``)."""

STRATA_KEYS: Final = ("by_stratum", "by_stratum_field_type")
"""The members that hold a document's stratum slices (a comparison has only the first)."""

COUNT_SUMS: Final = (
    ("field_count", ("answerable_count", "unanswerable_count")),
    ("field_count", ("missing_count", "answered_count", "abstained_count")),
)
"""The identities among a slice's six counts (docs/metrics.md): a total and its terms."""


def read_scorer(value: object) -> str:
    """The version from a document's ``{"name": "chartscore", "version": ...}``.

    Raises:
        ChartscoreError: ``invalid_report`` for another name, or a version that
            is not a version string as chartscore writes it.
    """
    scorer = _strict_json.members(value, ("name", "version"))
    version = scorer["version"]
    if scorer["name"] != SCORER_NAME or type(version) is not str:
        _strict_json.invalid()
    if SCORER_VERSION.fullmatch(version) is None:
        _strict_json.invalid()
    return version


def read_confidence(value: object) -> float:
    """A document's confidence level: exactly one of 0.9, 0.95 and 0.99.

    Raises:
        ChartscoreError: ``invalid_report`` otherwise.
    """
    if type(value) is not float or value not in CONFIDENCE_LEVELS:
        _strict_json.invalid()
    return value


@attrs.frozen
class Shell:
    """A scored document's opening, read.

    Attributes:
        members: The document's top-level members (their keys checked, their values not).
        format_version: The format version it was written in, which it writes back.
        scorer_version: The chartscore version that wrote it.
        confidence: Its confidence level (0.9, 0.95 or 0.99).
        plugins: Its plugin stamps, sorted by name; empty without plugins.
    """

    members: Mapping[str, object]
    format_version: int
    scorer_version: str
    confidence: float
    plugins: tuple[PluginStamp, ...] = ()

    @property
    def z(self) -> float:
        """The normal quantile of the document's confidence level."""
        return z_for(self.confidence)

    @property
    def plugin_metrics(self) -> tuple[str, ...]:
        """The metrics the plugin stamps declare, in report order."""
        return tuple(name for stamp in self.plugins for name in stamp.metric_names())


def read_opening(
    document: object,
    format_name: str,
    versions: tuple[int, ...],
    required: Collection[str],
    optional: Collection[str] = (),
) -> tuple[dict[str, object], int, str]:
    """What every document opens with: its format, version, top-level keys and scorer.

    Args:
        document: The parsed document.
        format_name: The ``format`` it must have.
        versions: The format versions its reader reads.
        required: Its top-level members (``format``, ``format_version`` and
            ``scorer`` among them).
        optional: The top-level members it may have.

    Returns:
        ``(members, format_version, scorer_version)``: the document as a dict,
        its format version and the version of chartscore that wrote it.

    Raises:
        ChartscoreError: ``invalid_report`` when the document is not an object, has
            a member outside the two lists or lacks a required one, or its scorer
            is malformed; ``unknown_report_format`` for another format or a version
            outside ``versions``.
    """
    members = _strict_json.members(
        _strict_json.check_format(document, format_name, versions), required, optional
    )
    format_version = members["format_version"]
    assert type(format_version) is int
    return members, format_version, read_scorer(members["scorer"])


def read_shell(
    document: object,
    format_name: str,
    versions: tuple[int, ...],
    required: Collection[str] = TOP_KEYS,
    optional: Collection[str] = (),
) -> Shell:
    """A scored document's opening: :func:`read_opening`, its confidence and its plugins.

    Raises:
        ChartscoreError: as :func:`read_opening`; ``invalid_report`` also for a
            confidence level or plugin stamps that are malformed.
    """
    members, format_version, scorer_version = read_opening(
        document, format_name, versions, required, optional
    )
    confidence = read_confidence(members["confidence"])
    plugins = stamps_from_dict(members["plugins"]) if "plugins" in members else ()
    return Shell(members, format_version, scorer_version, confidence, plugins)


class _Part(Protocol):
    def to_dict(self) -> dict[str, object]: ...


class _Scored(Protocol):
    # What every scored document is: a format version, a scorer, a level and three slices.
    @property
    def format_version(self) -> int: ...
    @property
    def scorer_version(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def overall(self) -> _Part: ...
    @property
    def by_field(self) -> Mapping[str, _Part]: ...
    @property
    def by_field_type(self) -> Mapping[str, _Part]: ...


def shell_members(format_name: str, document: _Scored) -> dict[str, object]:
    """The JSON members a scored document opens with: format, scorer, level, slices."""
    return {
        "format": format_name,
        "format_version": document.format_version,
        "scorer": {"name": SCORER_NAME, "version": document.scorer_version},
        "confidence": document.confidence,
        "overall": document.overall.to_dict(),
        "by_field": {k: v.to_dict() for k, v in document.by_field.items()},
        "by_field_type": {k: v.to_dict() for k, v in document.by_field_type.items()},
    }


class Sliced(Protocol):
    """A slice whose integers can be added up: counts and metrics' counts by name."""

    def quantities(self) -> Quantities:
        """The slice's integers by name; None for a suppressed one."""
        ...


_Slice = TypeVar("_Slice")


def read_slices(
    members: Mapping[str, object], read_slice: Callable[[object, str], _Slice]
) -> tuple[_Slice, dict[str, _Slice], dict[str, _Slice]]:
    """The overall, by-field and by-type slices, with field ids and type names checked.

    Args:
        members: The document's top-level members.
        read_slice: Reads one slice: (value, kind), the kind ``"overall"``,
            ``"field"`` or ``"field_type"``.

    Raises:
        ChartscoreError: ``invalid_report``, and what ``read_slice`` raises.
    """
    by_field = _strict_json.mapping(members["by_field"])
    by_type = _strict_json.mapping(members["by_field_type"])
    if not all(valid_field_id(name) for name in by_field):
        _strict_json.invalid()
    if not all(name in FIELD_TYPE_NAMES for name in by_type):
        _strict_json.invalid()
    return (
        read_slice(members["overall"], "overall"),
        {name: read_slice(part, "field") for name, part in by_field.items()},
        {name: read_slice(part, "field_type") for name, part in by_type.items()},
    )


def strata_by_key(names: Iterable[object]) -> dict[str, list[str]]:
    """Stratum slices' names by their key (``site`` of ``site=A``), for the sums per key.

    Raises:
        ChartscoreError: a name that is not ``key=label`` (the document's reader's code).
    """
    by_key: dict[str, list[str]] = {}
    for name in names:
        found = STRATUM_NAME.fullmatch(name) if type(name) is str else None
        if found is None:
            _strict_json.invalid()
        by_key.setdefault(found.group(1), []).append(found.group(0))
    return by_key


def read_strata(
    members: Mapping[str, object],
    read_stratum: Callable[[object], _Slice],
    read_type: Callable[[str, object], _Slice] | None = None,
    type_names: Collection[str] = (),
) -> tuple[dict[str, _Slice], dict[str, dict[str, _Slice]]]:
    """A document's stratum slices, and each stratum's slices per field type.

    Both members or neither (a comparison, ``read_type`` None: ``by_stratum`` only);
    at least one stratum, each named ``key=label``, and each stratum with a slice of
    every field type in ``type_names``. Read in name order; the sums are checked by
    :func:`check_strata`.

    Args:
        members: The document's top-level members.
        read_stratum: Reads one stratum's slice.
        read_type: Reads one stratum's slice of a field type (type name, value).
        type_names: The document's field types.

    Returns:
        ``(by_stratum, by_stratum_field_type)``: both empty without strata.

    Raises:
        ChartscoreError: ``invalid_report``, and what the slice readers raise.
    """
    keys = STRATA_KEYS if read_type is not None else STRATA_KEYS[:1]
    present = [key in members for key in keys]
    if not any(present):
        return {}, {}
    if not all(present):
        _strict_json.invalid()
    listed = _strict_json.mapping(members[STRATA_KEYS[0]])
    if not listed:
        _strict_json.invalid()
    strata_by_key(listed)
    strata = {name: read_stratum(listed[name]) for name in sorted(listed)}
    if read_type is None:
        return strata, {}
    listed_types = _strict_json.mapping(members[STRATA_KEYS[1]])
    if set(listed) != set(listed_types):
        _strict_json.invalid()
    strata_types: dict[str, dict[str, _Slice]] = {}
    for name in sorted(listed):
        parts = _strict_json.mapping(listed_types[name])
        if set(parts) != set(type_names):
            _strict_json.invalid()
        strata_types[name] = {
            type_name: read_type(type_name, parts[type_name]) for type_name in sorted(parts)
        }
    return strata, strata_types


def check_strata(
    overall: Sliced,
    types: Mapping[str, Sliced],
    strata: Mapping[str, Sliced],
    strata_types: Mapping[str, Mapping[str, Sliced]],
) -> None:
    """Refuse stratum slices that do not add up.

    The strata of each key partition the cases: for every key, its stratum slices add
    up to the overall slice and its stratum-and-type slices to each type slice
    (without ``majority_baseline``, which stratum slices do not report); and each
    stratum's type slices add up to the stratum's slice. A sum with a suppressed part
    is not checked.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    for name, part in strata_types.items():
        parts = [piece.quantities() for piece in part.values()]
        _strict_json.check_pooled(strata[name].quantities(), parts, parts)
    for names in strata_by_key(strata).values():
        slices = [strata[name].quantities() for name in names]
        _strict_json.check_pooled(overall.quantities(), slices, slices)
        if not strata_types:
            continue
        for type_name, whole in types.items():
            quantities = {
                k: v for k, v in whole.quantities().items() if not k.startswith("majority_baseline")
            }
            parts = [strata_types[name][type_name].quantities() for name in names]
            _strict_json.check_pooled(quantities, parts, parts)


def check_slices(overall: Sliced, fields: Iterable[Sliced], types: Iterable[Sliced]) -> None:
    """Refuse pooled slices that are not the sums of the field slices.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    _strict_json.check_pooled(
        overall.quantities(),
        [part.quantities() for part in fields],
        [part.quantities() for part in types],
    )


def check_sums(counts: Quantities, sums: Iterable[tuple[str, Sequence[str]]]) -> None:
    """Refuse counts that break an identity ``total = sum(terms)``, where all are shown.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    for total, terms in sums:
        values = [counts[total], *(counts[name] for name in terms)]
        if None in values:
            continue
        if values[0] != sum(value for value in values[1:] if value is not None):
            _strict_json.invalid()


def check_trials(counts: Quantities, totals: Iterable[tuple[str | None, int | None]]) -> None:
    """Refuse a metric whose trials are not the count they equal, where both are shown.

    Args:
        counts: The slice's counts.
        totals: Each metric's (count name its trials equal, or None; its ``total_count``).

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    for count, total in totals:
        if count is None:
            continue
        shown = counts[count]
        if shown is not None and total is not None and shown != total:
            _strict_json.invalid()
