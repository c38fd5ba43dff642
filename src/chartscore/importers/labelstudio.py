"""Label Studio to chartscore: one annotator's labels per note as gold, another's as predictions.

Read as chart-review (smart-on-fhir/chart-review) reads a Label Studio JSON export:

- The export is a JSON array of tasks; a task's integer ``id`` is the note, and the
  case id (``"17"``). Its ``annotations`` each have a ``completed_by`` (the Label
  Studio user id, an integer, or an object with an integer ``id``) and a
  ``result`` list.
- An annotation's labels are the union of ``value.labels`` over its results whose
  ``origin`` is absent or ``manual`` (results made from model predictions are not
  a person's annotation); other result kinds (choices, text areas) are ignored.
  Annotations without ``completed_by`` are skipped.
- A note counts for an annotator when the annotator has an annotation of it, even
  one with no labels (that annotator found nothing). Notes are compared where both
  the gold annotator and the annotator have one (chart-review's intersection of
  note ranges), optionally restricted to given note ids (chart-review's
  ``ranges``); notes only one of them annotated are left out, and counted.
- Only the declared labels count (chart-review's ``labels``); by default every
  label found in the export. Other labels are dropped, and counted.

Each note becomes, for each of the two annotators, either one multi-select field
(default ``labels``: the set of labels, choices the declared labels) or, with
``per_label``, one boolean field per declared label (``<field>.<label>``, the label
lower-cased with every run of other characters than a-z and 0-9 made ``_``). With
booleans, each (note, label) row is chart-review's TP, FN, FP or TN.

An annotator who has two annotations of one note is refused
(``duplicate_annotation``): which would be theirs? Annotators with no note in
common give no gold row: ``empty_export``. Errors name the task by its 0-based
position in the export (``item``), never its content.

The export is read one task at a time (:mod:`chartscore.importers.json_array`):
at most :data:`MAX_EXPORT_BYTES` after decompression, a task at most 8 MiB and
500,000 values; only each annotator's labels per note are kept.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind, flag_option, valid_field_id
from chartscore.importers.fields import ImportedField, exact_collection, exact_items
from chartscore.importers.imported import Imported, sorted_predictions, sorted_records
from chartscore.importers.json_array import iter_elements
from chartscore.io.inputs import InputPath
from chartscore.metrics import FieldType
from chartscore.records.model import GoldField, Prediction
from chartscore.records.normalize import normalize_text

MAX_EXPORT_BYTES = 1 << 30
"""The largest export read, 1 GiB after decompression (read when an export is imported)."""

DEFAULT_FIELD: Final = "labels"
_SOURCE: Final = InputKind.EXPORT
_MANUAL: Final = (None, "manual")
_NOT_ALPHANUMERIC: Final = re.compile(r"[^a-z0-9]+")

Annotations = dict[int, dict[int, frozenset[str]]]
"""Per annotator (Label Studio user id), per note id, the labels of their annotation."""


def import_labelstudio(
    export: InputPath,
    *,
    gold_annotator: int,
    annotator: int | None = None,
    labels: Iterable[str] | None = None,
    field: str = DEFAULT_FIELD,
    per_label: bool = False,
    notes: Collection[int | range] | range | None = None,
) -> Imported:
    """Read a Label Studio JSON export: gold from one annotator, predictions from another.

    Args:
        export: The JSON export (``[{"id": ..., "annotations": [...]}, ...]``).
        gold_annotator: The Label Studio user id whose labels are gold.
        annotator: The user id whose labels are the predictions, or None for gold only.
        labels: The labels to score (chart-review's ``labels``); None: every label
            found in the export.
        field: The field id of the multi-select field, or the prefix of the
            per-label boolean fields.
        per_label: One boolean field per label instead of one multi-select field.
        notes: Only these note (task) ids: a list, tuple or set of ids and
            ``range`` objects (``[1, range(3, 5)]``, kept as ranges), or one
            ``range``; None: every note.

    Returns:
        Gold, predictions (when ``annotator`` is given) and the schema.

    Raises:
        ChartscoreError: a reading code (``invalid_json (export line 3)``, ...),
            ``invalid_export`` and ``duplicate_annotation`` (the task's 0-based
            item), ``duplicate_case`` (two tasks with one id), ``task_too_large``,
            ``annotator_not_found``, ``empty_export`` (no note both annotated),
            ``label_collision``, ``invalid_field_id``; ``usage`` for an option of the
            wrong type or the same annotator twice.
    """
    people = _annotators(gold_annotator, annotator)
    wanted = None if notes is None else _note_ids(notes)
    chosen_labels = None if labels is None else _labels(labels)
    if not valid_field_id(field):
        raise ChartscoreError(ErrorCode.INVALID_FIELD_ID)
    per_label = flag_option(per_label)
    tasks = iter_elements(export, _SOURCE, MAX_EXPORT_BYTES)
    annotations, found_labels = _annotations(tasks, wanted)
    declared = chosen_labels if chosen_labels is not None else tuple(sorted(found_labels))
    fields = _fields(field, declared, per_label)
    compared = set(annotations.get(gold_annotator, {}))
    for person in people:
        if not annotations.get(person):
            raise ChartscoreError(ErrorCode.ANNOTATOR_NOT_FOUND, input=_SOURCE)
        compared &= set(annotations[person])
    if not compared:
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=_SOURCE)
    counts = {
        "cases": len(compared),
        "notes_left_out": len(set().union(*(annotations[p] for p in people)) - compared),
        "labels_dropped": _dropped(annotations, people, compared, set(declared)),
    }
    gold = [
        GoldField(str(note), field_id, field_type, value)
        for note in compared
        for field_id, field_type, value in _values(annotations[gold_annotator][note], fields)
    ]
    predictions = []
    if annotator is not None:
        predictions = [
            Prediction(str(note), field_id, value)
            for note in compared
            for field_id, _, value in _values(annotations[annotator][note], fields)
        ]
    schema = {"fields": {item.field_id: item.schema_entry() for item in fields.values()}}
    counts["rows"] = len(gold)
    return Imported(sorted_records(gold), sorted_predictions(predictions), schema, counts)


def _annotators(gold_annotator: object, annotator: object) -> tuple[int, ...]:
    if type(gold_annotator) is not int or (annotator is not None and type(annotator) is not int):
        raise ChartscoreError(ErrorCode.USAGE)
    if annotator == gold_annotator:
        raise ChartscoreError(ErrorCode.USAGE)
    return (gold_annotator,) if annotator is None else (gold_annotator, annotator)


class NoteIds:
    """Note ids as ids and ranges (a range is never expanded): ``3 in NoteIds(...)``."""

    __slots__ = ("_ids", "_starts", "_stops")

    def __init__(self, ids: Iterable[int], ranges: Iterable[range]) -> None:
        self._ids = frozenset(ids)
        merged: list[list[int]] = []
        for span in sorted((span.start, span.stop) for span in ranges if span):
            if merged and span[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(list(span))
        self._starts = [start for start, _ in merged]
        self._stops = [stop for _, stop in merged]

    def __contains__(self, note: object) -> bool:
        if type(note) is not int:
            return False
        if note in self._ids:
            return True
        index = bisect.bisect_right(self._starts, note) - 1
        return index >= 0 and note < self._stops[index]


def _note_ids(notes: object) -> NoteIds:
    """The caller's notes: ids and ranges of step 1, read by exact type (``usage`` otherwise)."""
    items = exact_collection([notes] if type(notes) is range else notes)
    ids = [item for item in items if type(item) is int]
    ranges = [item for item in items if type(item) is range]
    if len(ids) + len(ranges) != len(items) or any(span.step != 1 for span in ranges):
        raise ChartscoreError(ErrorCode.USAGE)
    return NoteIds(ids, ranges)


def _labels(labels: object) -> tuple[str, ...]:
    if type(labels) is not list and type(labels) is not tuple:
        raise ChartscoreError(ErrorCode.USAGE)
    found = exact_items(labels, str)
    if not found or not all(found):
        raise ChartscoreError(ErrorCode.USAGE)
    return tuple(dict.fromkeys(found))


def _annotations(
    tasks: Iterator[tuple[int, object]], wanted: NoteIds | None
) -> tuple[Annotations, set[str]]:
    """Every annotator's labels per note, and every label seen (chart-review's reading)."""
    annotations: Annotations = {}
    found: set[str] = set()
    notes: set[int] = set()
    for item, task in tasks:
        note = _member(task, "id", item)
        entries = task.get("annotations", [])  # type: ignore[attr-defined]
        if type(note) is not int or type(entries) is not list:
            raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
        if note in notes:
            raise ChartscoreError(ErrorCode.DUPLICATE_CASE, input=_SOURCE, item=item)
        notes.add(note)
        if wanted is not None and note not in wanted:
            continue
        for entry in entries:
            person, labels = _annotation(entry, item)
            if person is None:
                continue
            found |= labels
            mine = annotations.setdefault(person, {})
            if note in mine:
                raise ChartscoreError(ErrorCode.DUPLICATE_ANNOTATION, input=_SOURCE, item=item)
            mine[note] = labels
    return annotations, found


def _member(value: object, key: str, item: int) -> object:
    if type(value) is not dict:
        raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
    return value.get(key)


def _annotation(entry: object, item: int) -> tuple[int | None, frozenset[str]]:
    """(annotator or None, labels) of one annotation."""
    person = _member(entry, "completed_by", item)
    if type(person) is dict:
        person = person.get("id")
    results = entry.get("result", [])  # type: ignore[attr-defined]
    if (person is not None and type(person) is not int) or type(results) is not list:
        raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
    labels: set[str] = set()
    for result in results:
        origin = _member(result, "origin", item)
        value = result.get("value", {})  # a dict: _member checked it
        if origin not in _MANUAL:
            continue
        found = _member(value, "labels", item)
        if found is None:
            continue
        if type(found) is not list or not all(type(label) is str for label in found):
            raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
        labels.update(found)
    return person, frozenset(labels)


def _fields(field: str, labels: tuple[str, ...], per_label: bool) -> dict[str, ImportedField]:
    """The fields written, by label (per-label booleans) or under the one key ``""``."""
    if len({normalize_text(label) for label in labels}) != len(labels):
        raise ChartscoreError(ErrorCode.LABEL_COLLISION)  # one choice after normalization
    if not per_label:
        return {"": ImportedField(field, FieldType.MULTI, labels)}
    fields: dict[str, ImportedField] = {}
    taken: set[str] = set()
    for label in labels:
        field_id = f"{field}.{label_segment(label)}"
        if field_id in taken or not valid_field_id(field_id):
            raise ChartscoreError(ErrorCode.LABEL_COLLISION)
        taken.add(field_id)
        fields[label] = ImportedField(field_id, FieldType.BOOLEAN)
    return fields


def label_segment(label: str) -> str:
    """A label as a field-id segment: ``Heart failure`` is ``heart_failure``, ``2nd`` ``l_2nd``."""
    segment = _NOT_ALPHANUMERIC.sub("_", label.lower()).strip("_")[:62]
    return segment if segment[:1].isalpha() else f"l_{segment}".rstrip("_")


def _values(
    labels: frozenset[str], fields: Mapping[str, ImportedField]
) -> Iterable[tuple[str, FieldType, object]]:
    if "" in fields:
        multi = fields[""]
        yield multi.field_id, multi.field_type, sorted(labels & set(multi.choices))
        return
    for label, item in fields.items():
        yield item.field_id, item.field_type, label in labels


def _dropped(
    annotations: Annotations, people: tuple[int, ...], notes: set[int], declared: set[str]
) -> int:
    """Labels (one per note and annotator) outside the declared labels, on compared notes."""
    return sum(len(annotations[person][note] - declared) for person in people for note in notes)
