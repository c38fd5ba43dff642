"""The plugins of one scoring run: loaded once, laid out, and called on normalized pairs.

:class:`PluginSet` loads every plugin a schema names (entry point or
``module:attribute``, :func:`~chartscore.records.plugins.load_plugin`), stamps
it (name, version, code digest, labels) and lays its label out in the outcome
bit mask (:class:`~chartscore.documents.plugin_layout.PluginLayout`). :meth:`PluginSet.judges`
gives a field's judges: each takes the normalized gold and answer of one row
and returns the mask bits of the label the plugin gave.

A plugin is the caller's code: it is called through
:func:`~chartscore.scoring.plugin_guard.call_judge`, which discards what it
prints; whatever it raises (but Ctrl-C), or a label it did not declare, becomes
``plugin_failed`` naming the plugin, with no message of the plugin's and no
chained exception (the message may hold a value). Holds values while judging;
keeps only a bounded cache of text pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from chartscore.documents.plugin_layout import PluginLayout
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.records.plugins import MetricPlugin, load_plugin, stamp_of
from chartscore.records.schema import FieldSpec, Schema
from chartscore.scoring.plugin_guard import call_judge

Judge = Callable[[object, object], int]
"""A field's judge: (gold key, answer key) -> the mask bits of the plugin's label."""

_CACHE_LIMIT: Final = 1 << 16


class PluginSet:
    """Every plugin a schema names, loaded and laid out once per run.

    Args:
        schema: The run's schema, or None (no plugins).

    Attributes:
        layout: The value-free layout (stamps and mask bits), or None when the
            schema names no plugin.

    Raises:
        ChartscoreError: ``plugin_not_found`` or ``invalid_plugin`` naming the
            first schema field (by id) whose plugin cannot be loaded, and
            ``invalid_plugin`` when two references load different plugins of
            one name, or a plugin's code cannot be read for its digest.
    """

    __slots__ = ("_plugins", "layout")

    def __init__(self, schema: Schema | None) -> None:
        loaded: dict[str, MetricPlugin] = {}
        by_name: dict[str, MetricPlugin] = {}
        fields = {} if schema is None else schema.fields
        for field_id in sorted(fields):
            for reference in fields[field_id].plugins:
                if reference in loaded:
                    continue
                plugin = load_plugin(reference, field_id)
                known = by_name.setdefault(plugin.name, plugin)
                if known is not plugin:
                    raise ChartscoreError(
                        ErrorCode.INVALID_PLUGIN, input=InputKind.SCHEMA, field_id=field_id
                    )
                loaded[reference] = plugin
        self._plugins = by_name
        self.layout: PluginLayout | None = None
        if by_name:
            self.layout = PluginLayout(
                stamps=tuple(stamp_of(by_name[name]) for name in sorted(by_name)),
                references=tuple(sorted((ref, plugin.name) for ref, plugin in loaded.items())),
            )

    def judges(self, spec: FieldSpec | None) -> tuple[Judge, ...]:
        """The judges of a field declared by ``spec``, in plugin name order."""
        if spec is None or not spec.plugins or self.layout is None:
            return ()
        layout = self.layout
        return tuple(
            _judge(self._plugins[name], layout) for name in layout.plugins_of(spec.plugins)
        )


def _judge(plugin: MetricPlugin, layout: PluginLayout) -> Judge:
    bits = {label: layout.bits(plugin.name, index) for index, label in enumerate(plugin.outcomes)}
    call, name = plugin.judge, plugin.name
    cache: dict[tuple[str, str], int] = {}

    def judge(gold: object, answer: object) -> int:
        # Only text pairs are cached: equal numbers of another form (2.5, 2.50) reach
        # the plugin as they are.
        text = type(gold) is str and type(answer) is str
        if text:
            found = cache.get((gold, answer))  # type: ignore[arg-type]
            if found is not None:
                return found
        label = call_judge(call, gold, answer)
        found = bits.get(label) if type(label) is str else None
        if found is None:  # FAILED, or a label it did not declare
            raise ChartscoreError(ErrorCode.PLUGIN_FAILED, plugin=name)  # no context
        if text:
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[gold, answer] = found  # type: ignore[index]
        return found

    return judge
