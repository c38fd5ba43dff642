"""Plugin metrics without their code: names, versions, code digests and outcome bits.

A plugin metric (docs/plugins.md) maps one normalized (gold, answer) pair of a
field to one label of a closed set it declares. chartscore counts the labels:
the report holds one binomial metric per label, named ``<plugin>:<label>``
(``abbreviation:success``), whose trials are the answerable rows, as for the
other agreement metrics. What a report, a shared report or a merge needs to
know about a plugin is value-free and lives here: its :class:`PluginStamp`
(name, version, a digest of its code, its labels) and, while scoring, where
its label sits in a row's outcome bit mask (:class:`PluginLayout`).

The plugin's callable lives in :mod:`chartscore.records.plugins`, above the
privacy boundary; nothing here imports it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import attrs

from chartscore._format import PLUGIN_NAME_PATTERN
from chartscore.documents import _strict_json
from chartscore.errors import ChartscoreError, ErrorCode

NAME_PATTERN: Final = PLUGIN_NAME_PATTERN
"""A plugin's name and each of its labels: a lowercase identifier of 1 to 40 characters."""

VERSION_PATTERN: Final = r"[0-9A-Za-z][0-9A-Za-z.+!_-]{0,39}"
"""A plugin's declared version: 1 to 40 characters, such as ``1.0`` or ``2024.06+site``."""

DIGEST_PATTERN: Final = r"sha256:[0-9a-f]{64}"
MAX_OUTCOMES: Final = 16
"""A plugin declares 2 to 16 labels."""

FIRST_BIT: Final = 19
"""The lowest outcome-mask bit that plugin labels use (bits below are chartscore's own)."""

_NAME: Final = re.compile(NAME_PATTERN).fullmatch
_VERSION: Final = re.compile(VERSION_PATTERN).fullmatch
_DIGEST: Final = re.compile(DIGEST_PATTERN).fullmatch
_STAMP_KEYS: Final = ("version", "code_digest", "outcomes")


def valid_name(name: object) -> bool:
    """Whether ``name`` is exactly a ``str`` that may name a plugin or a label."""
    return type(name) is str and _NAME(name) is not None


def metric_name(plugin: str, label: str) -> str:
    """The report's name of one label's metric: ``<plugin>:<label>``."""
    return f"{plugin}:{label}"


def split_metric(name: object) -> tuple[str, str] | None:
    """(plugin, label) of a plugin metric's name, or None for any other name."""
    if type(name) is not str:
        return None
    plugin, colon, label = name.partition(":")
    if not colon or not valid_name(plugin) or not valid_name(label):
        return None
    return plugin, label


def is_plugin_metric(name: object) -> bool:
    """Whether ``name`` has the shape of a plugin metric (``<plugin>:<label>``)."""
    return split_metric(name) is not None


@attrs.frozen
class PluginStamp:
    """What a report records of one plugin: enough to refuse mixing two versions.

    Attributes:
        name: The plugin's declared name (its metrics are ``<name>:<label>``).
        version: The version the plugin declares.
        code_digest: ``sha256:`` and the hex digest of the plugin's source file.
        outcomes: Its labels, in declared order.
    """

    name: str
    version: str
    code_digest: str
    outcomes: tuple[str, ...]

    def __attrs_post_init__(self) -> None:
        labels = self.outcomes
        if not (
            valid_name(self.name)
            and type(self.version) is str
            and _VERSION(self.version)
            and type(self.code_digest) is str
            and _DIGEST(self.code_digest)
            and type(labels) is tuple
            and 2 <= len(labels) <= MAX_OUTCOMES
            and all(valid_name(label) for label in labels)
            and len(set(labels)) == len(labels)
        ):
            raise ChartscoreError(ErrorCode.INVALID_PLUGIN)

    def metric_names(self) -> tuple[str, ...]:
        """The metrics of this plugin, one per label, in declared order."""
        return tuple(metric_name(self.name, label) for label in self.outcomes)

    def to_dict(self) -> dict[str, object]:
        """``{"version", "code_digest", "outcomes"}`` (the name is the key above it)."""
        return {
            "version": self.version,
            "code_digest": self.code_digest,
            "outcomes": list(self.outcomes),
        }

    @classmethod
    def from_dict(cls, name: str, value: object) -> PluginStamp:
        """Read one stamp of a document's ``plugins`` object, strictly.

        Raises:
            ChartscoreError: ``invalid_report`` for anything but the shape
                :meth:`to_dict` writes with valid names, version and digest.
        """
        members = _strict_json.members(value, _STAMP_KEYS)
        outcomes = members["outcomes"]
        if type(outcomes) is not list:
            _strict_json.invalid()
        stamp: PluginStamp | None = None
        try:
            stamp = cls(name, members["version"], members["code_digest"], tuple(outcomes))  # type: ignore[arg-type]
        except ChartscoreError:
            stamp = None
        if stamp is None:
            _strict_json.invalid()
        return stamp


def stamps_to_dict(stamps: Iterable[PluginStamp]) -> dict[str, object]:
    """A document's ``plugins`` object: name -> stamp."""
    return {stamp.name: stamp.to_dict() for stamp in stamps}


def stamps_from_dict(value: object) -> tuple[PluginStamp, ...]:
    """The stamps of a document's non-empty ``plugins`` object, sorted by name.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    plugins = _strict_json.mapping(value)
    if not plugins:
        _strict_json.invalid()
    return tuple(PluginStamp.from_dict(name, plugins[name]) for name in sorted(plugins))


def check_plugin_metrics(
    stamps: Sequence[PluginStamp], slices: Iterable[tuple[str, Iterable[str]]]
) -> None:
    """Refuse plugin metrics that no stamp declares, and stamps that no slice uses.

    Each field slice must hold all of a plugin's labels or none, and every
    stamped plugin must appear in some field slice.

    Args:
        stamps: The document's plugin stamps.
        slices: (slice kind, metric names) of every slice.

    Raises:
        ChartscoreError: ``invalid_report``.
    """
    declared = {stamp.name: frozenset(stamp.metric_names()) for stamp in stamps}
    used: set[str] = set()
    for kind, names in slices:
        present: dict[str, set[str]] = {}
        for name in names:
            parts = split_metric(name)
            if parts is None:
                continue
            if parts[0] not in declared or name not in declared[parts[0]] or kind == "overall":
                _strict_json.invalid()
            present.setdefault(parts[0], set()).add(name)
        for plugin, metrics in present.items():
            if kind == "field" and metrics != declared[plugin]:
                _strict_json.invalid()
            used.add(plugin)
    if used != set(declared):
        _strict_json.invalid()


@attrs.frozen
class PluginLayout:
    """The plugins of one scoring run and where each one's label sits in an outcome mask.

    Plugins are laid out in name order from :data:`FIRST_BIT` up; plugin ``p``
    with ``k`` labels takes ``k.bit_length()`` bits holding ``1 + the label's
    index`` (0: the row got no label). Every partition of a run builds the same
    layout from the same schema, so masks from any partition add up.

    Attributes:
        stamps: The plugins, sorted by name.
        references: Each schema reference (an entry point name or a
            ``module:attribute`` path) and the name of the plugin it loads,
            sorted.
    """

    stamps: tuple[PluginStamp, ...]
    references: tuple[tuple[str, str], ...]
    _places: Mapping[str, tuple[int, int, PluginStamp]] = attrs.field(
        init=False, repr=False, eq=False
    )

    def __attrs_post_init__(self) -> None:
        places: dict[str, tuple[int, int, PluginStamp]] = {}
        shift = FIRST_BIT
        for stamp in self.stamps:
            width = len(stamp.outcomes).bit_length()
            places[stamp.name] = (shift, width, stamp)
            shift += width
        object.__setattr__(self, "_places", places)

    @property
    def end_bit(self) -> int:
        """The lowest mask bit above every plugin's label bits."""
        return FIRST_BIT + sum(width for _, width, _ in self._places.values())

    def plugins_of(self, references: Iterable[str]) -> tuple[str, ...]:
        """The plugin names a field's schema references load, sorted, without repeats."""
        names = dict(self.references)
        return tuple(sorted({names[reference] for reference in references}))

    def metric_names_of(self, references: Iterable[str]) -> tuple[str, ...]:
        """The plugin metrics of a field with these schema references, in report order."""
        return tuple(
            name
            for plugin in self.plugins_of(references)
            for name in self._places[plugin][2].metric_names()
        )

    def bits(self, plugin: str, label_index: int) -> int:
        """The mask bits of a row that ``plugin`` labelled with its ``label_index``-th label."""
        shift, _, _ = self._places[plugin]
        return (label_index + 1) << shift

    def label_test(self, metric: str) -> tuple[int, int, int]:
        """(shift, width mask, value) such that a row has the label when its bits equal value."""
        parts = split_metric(metric)
        if parts is None or parts[0] not in self._places:
            raise KeyError(metric)
        shift, width, stamp = self._places[parts[0]]
        return shift, (1 << width) - 1, stamp.outcomes.index(parts[1]) + 1

    def count(self, outcomes: Mapping[int, int], metric: str) -> int:
        """The rows among ``outcomes`` (mask -> rows) labelled as ``metric`` says."""
        shift, width, value = self.label_test(metric)
        return sum(n for mask, n in outcomes.items() if (mask >> shift) & width == value)

    def used(self, references: Iterable[str]) -> tuple[PluginStamp, ...]:
        """The stamps of the plugins these references load, sorted by name."""
        return tuple(self._places[name][2] for name in self.plugins_of(references))


def check_same_plugins(first: PluginLayout | None, second: PluginLayout | None) -> None:
    """Refuse to add up two scorings whose plugins differ in any version, code or label.

    Raises:
        ChartscoreError: ``plugin_mismatch``.
    """
    if first != second:
        raise ChartscoreError(ErrorCode.PLUGIN_MISMATCH)
