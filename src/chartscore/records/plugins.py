"""Counts-only plugin metrics: a callable that labels one normalized (gold, answer) pair.

A plugin is a :class:`MetricPlugin`: a name, a version, a closed set of
outcome labels and a ``judge(gold, answer) -> label`` callable. chartscore
calls it on the normalized gold and answer of each answerable row answered
with a value of the field's type, and counts the labels: the intervals,
slices, merges and disclosure control are chartscore's (docs/plugins.md). A
plugin never sees a case id, a field id or a row it does not judge, and
what it returns is checked against its declared labels, so nothing else of
it reaches a report.

Plugins are named in the schema (``"plugins": ["abbreviation"]``) by the name
of an entry point in the ``chartscore.metrics`` group, or by a
``module:attribute`` path. :func:`load_plugin` resolves a reference; any
failure while importing is dropped (its message could say anything) and
becomes ``plugin_not_found`` or ``invalid_plugin``.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
from collections.abc import Callable
from importlib import metadata
from typing import Final

import attrs

from chartscore.documents.plugin_layout import PluginStamp, valid_name
from chartscore.errors import ChartscoreError, ErrorCode, InputKind

ENTRY_POINT_GROUP: Final = "chartscore.metrics"
"""The entry point group plugins register in."""

_PATH: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_FAILED: Final = object()

Judge = Callable[[object, object], str]
"""``judge(gold, answer)``: the label of one normalized pair."""


def valid_reference(reference: object) -> bool:
    """Whether ``reference`` is an entry point name or a ``module:attribute`` path."""
    if type(reference) is not str:
        return False
    module, colon, attribute = reference.partition(":")
    if not colon:
        return valid_name(reference)
    return (
        len(reference) <= 200 and bool(_PATH.fullmatch(module)) and bool(_PATH.fullmatch(attribute))
    )


@attrs.frozen(init=False)
class MetricPlugin:
    """A counts-only metric of the plugin's own: one label for each judged pair.

    Args:
        name: Its name, a lowercase identifier (``[a-z][a-z0-9_]``, 1 to 40
            characters); the report's metrics are ``<name>:<label>``.
        version: Its version (1 to 40 characters of ``[0-9A-Za-z.+!_-]``, such
            as ``"1.0"``): reports record it, and ``compare`` and merges
            refuse to put two versions together. Raise it whenever the
            judgement changes.
        outcomes: Its labels: 2 to 16 distinct lowercase identifiers, such as
            ``("success", "failure")`` or ``("same", "broader", "narrower",
            "unrelated")``.
        judge: ``judge(gold, answer) -> label``, called with the normalized gold
            and answer of one row (docs/plugins.md says what each field type
            gives) and returning one of ``outcomes`` as a ``str``. It must be a
            pure function of its two arguments: chartscore may call it once
            per distinct pair. What it raises is replaced by ``plugin_failed``.

    Raises:
        ChartscoreError: ``invalid_plugin`` for anything else, checked by exact type.
    """

    name: str
    version: str
    outcomes: tuple[str, ...]
    judge: Judge = attrs.field(repr=False)

    def __init__(self, name: str, version: str, outcomes: tuple[str, ...], judge: Judge) -> None:
        kind: object = type(outcomes)
        labels = tuple(outcomes) if kind is list or kind is tuple else None
        # A stamp with a placeholder digest validates the name, version and labels.
        if labels is None or not _valid_stamp(name, version, labels) or not callable(judge):
            raise ChartscoreError(ErrorCode.INVALID_PLUGIN)
        self.__attrs_init__(name=name, version=version, outcomes=labels, judge=judge)


def _valid_stamp(name: object, version: object, labels: tuple[object, ...]) -> bool:
    valid = True
    try:
        PluginStamp(name, version, "sha256:" + "0" * 64, labels)  # type: ignore[arg-type]
    except ChartscoreError:
        valid = False
    return valid


def _plugin_error(code: ErrorCode, field_id: str | None) -> ChartscoreError:
    return ChartscoreError(code, input=InputKind.SCHEMA, field_id=field_id)


def load_plugin(reference: str, field_id: str | None = None) -> MetricPlugin:
    """The plugin a schema reference names.

    Args:
        reference: An entry point name in the ``chartscore.metrics`` group (the
            entry point must load a :class:`MetricPlugin` of that name), or
            ``module:attribute``.
        field_id: The schema field that names it (errors name the field).

    Raises:
        ChartscoreError: ``plugin_not_found`` (no such entry point, or the import
            failed) or ``invalid_plugin`` (not a :class:`MetricPlugin`, or an
            entry point whose plugin has another name). The import's own
            exception is dropped, never chained.
    """
    loaded: object = _FAILED
    try:
        loaded = _load(reference)
    except KeyboardInterrupt:
        raise  # Ctrl-C while importing: the caller's to stop on
    except BaseException:  # noqa: BLE001 - an import may raise anything (SystemExit too)
        loaded = _FAILED
    if loaded is _FAILED:
        raise _plugin_error(ErrorCode.PLUGIN_NOT_FOUND, field_id)
    if type(loaded) is not MetricPlugin:
        raise _plugin_error(ErrorCode.INVALID_PLUGIN, field_id)
    if ":" not in reference and loaded.name != reference:
        raise _plugin_error(ErrorCode.INVALID_PLUGIN, field_id)
    return loaded


def _load(reference: str) -> object:
    module_name, colon, attribute = reference.partition(":")
    if colon:
        return getattr(importlib.import_module(module_name), attribute)
    found = [
        entry for entry in metadata.entry_points(group=ENTRY_POINT_GROUP) if entry.name == reference
    ]
    if len({entry.value for entry in found}) != 1:
        return _FAILED  # none, or two installed distributions disagree
    return found[0].load()


def code_digest(plugin: MetricPlugin) -> str:
    """``sha256:`` and the digest of the source file that defines the plugin's judge.

    The file of the judge function (or of its class, for a callable object) is
    hashed as bytes, so any edit to it changes the digest. Code it imports
    from other modules is not covered: raise the version when that changes.

    Raises:
        ChartscoreError: ``invalid_plugin`` when the judge has no readable
            source file (a built-in, or code typed into a console).
    """
    judge = plugin.judge
    digest: str | None = None
    try:
        target = judge if inspect.isfunction(judge) or inspect.ismethod(judge) else type(judge)
        path = inspect.getsourcefile(target)
        if path is not None:
            with open(path, "rb") as source:
                digest = "sha256:" + hashlib.sha256(source.read()).hexdigest()
    except Exception:  # noqa: BLE001 - inspecting a caller's object may raise anything
        digest = None
    if digest is None:
        raise ChartscoreError(ErrorCode.INVALID_PLUGIN)
    return digest


def stamp_of(plugin: MetricPlugin) -> PluginStamp:
    """The value-free stamp a report records for ``plugin``."""
    return PluginStamp(plugin.name, plugin.version, code_digest(plugin), plugin.outcomes)
