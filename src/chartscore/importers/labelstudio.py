"""Label Studio to chartscore: one annotator's labels per note as gold, another's as predictions.

Read as chart-review (smart-on-fhir/chart-review) reads a Label Studio JSON export:

- The export is a JSON array of tasks; a task's integer ``id`` is the note, and the
  case id (``"17"``). Its ``annotations`` each have a ``completed_by`` (the Label
  Studio user id, an integer, or an object with an integer ``id``) and a
  ``result`` list.
- An annotation's labels are the union of ``value.labels`` over its results, of
  every ``origin`` (``manual``, and ``prediction`` or ``prediction-changed``: a
  pre-annotation the annotator accepted or edited is theirs, as chart-review
  counts it); other result kinds (choices, text areas) are ignored.
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
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, InputKind, flag_option, valid_field_id
from chartscore.importers.fields import ImportedField, exact_collection, exact_items
from chartscore.importers.imported import Imported, sorted_predictions, sorted_records
from chartscore.importers.json_array import iter_elements
from chartscore.importers.labelstudio_config import (
    ProjectConfig,
    label_parts,
    make_label,
    read_config,
)
from chartscore.io.inputs import InputPath
from chartscore.metrics import FieldType
from chartscore.records.model import GoldField, Prediction
from chartscore.records.normalize import normalize_text

MAX_EXPORT_BYTES = 1 << 30
"""The largest export read, 1 GiB after decompression (read when an export is imported)."""

DEFAULT_FIELD: Final = "labels"
_SOURCE: Final = InputKind.EXPORT
_NOT_ALPHANUMERIC: Final = re.compile(r"[^a-z0-9]+")

Annotations = dict[int, dict[int, frozenset[str]]]
"""Per annotator (Label Studio user id), per note id, the labels of their annotation."""


def import_labelstudio(
    export: InputPath | Sequence[InputPath],
    *,
    gold_annotator: int | str | None = None,
    annotator: int | str | None = None,
    raters: Sequence[int | str] = (),
    labels: Iterable[str] | None = None,
    field: str = DEFAULT_FIELD,
    per_label: bool = False,
    notes: Collection[int | range] | range | None = None,
    config: InputPath | ProjectConfig | None = None,
) -> Imported:
    """Read Label Studio JSON exports: gold from one annotator, predictions from another.

    Args:
        export: The JSON export (``[{"id": ..., "annotations": [...]}, ...]``), or a
            list of exports, merged (a note in several is one note: each
            annotator's labels on it are the union of theirs).
        gold_annotator: The Label Studio user id (or ``annotators`` name of the
            config) whose labels are gold; None with ``raters`` only.
        annotator: The user id (or name) whose labels are the predictions, or None.
        raters: User ids (or names) each written as one rater file
            (``Imported.raters``, the predictions format, in this order) over
            the notes they annotated, for ``chartscore agree``.
        labels: The labels to score (chart-review's ``labels``; ``A|B|C`` names
            a sublabel); None: the config's, else every label found.
        field: The field id of the multi-select field, or the prefix of the
            per-label boolean fields.
        per_label: One boolean field per label instead of one multi-select field.
        notes: Only these note (task) ids: a list, tuple or set of ids and
            ``range`` objects (``[1, range(3, 5)]``, kept as ranges), or one
            ``range``; None: every note.
        config: chart-review's project configuration (a file, see
            :mod:`chartscore.importers.labelstudio_config`, or one read).

    Returns:
        Gold, predictions (when ``annotator`` is given), raters and the schema.

    Raises:
        ChartscoreError: a reading code (``invalid_json (export line 3)``, ...),
            ``invalid_export`` and ``duplicate_annotation`` (the task's 0-based
            item), ``duplicate_case`` (two tasks with one id in one export),
            ``task_too_large``, ``annotator_not_found``, ``empty_export`` (no
            note both annotated), ``label_collision``, ``invalid_field_id``,
            ``invalid_config``; ``usage`` for an option of the wrong type or the
            same annotator twice.
    """
    project = _project(config)
    people = _people(project, gold_annotator, annotator, raters)
    wanted = None if notes is None else _note_ids(notes)
    chosen_labels = None if labels is None else _labels(labels)
    if not valid_field_id(field):
        raise ChartscoreError(ErrorCode.INVALID_FIELD_ID)
    per_label = flag_option(per_label)
    exports = _exports(export)
    reading = _Reading(project, wanted)
    for part, path in enumerate(exports, start=1):
        reading.read(iter_elements(path, _SOURCE, MAX_EXPORT_BYTES), part)
    annotations = reading.annotations
    ranges = {
        person: (set(project.ranges[person]) & reading.notes) - reading.ignored
        for person in people
        if person in project.ranges
    }
    for person in people:
        if person in ranges:
            mine = annotations.setdefault(person, {})
            for note in ranges[person]:
                mine.setdefault(note, frozenset())
            for note in set(mine) - ranges[person]:
                del mine[note]
        if not annotations.get(person):
            raise ChartscoreError(ErrorCode.ANNOTATOR_NOT_FOUND, input=_SOURCE)
    declared = _declared(chosen_labels, project, reading.found)
    if len(people) > 1 or raters:  # chart-review: only labels the compared annotators used
        used = set().union(*(labels for p in people for labels in annotations[p].values()))
        scored = tuple(label for label in declared if label in used)
    else:
        scored = declared
    fields = _fields(field, scored, per_label)
    pair = [p for p in (gold_annotator, annotator) if p is not None]
    compared: set[int] = set()
    if pair:
        compared = set(annotations[people[0]])
        for person in people[1 : len(pair)]:
            compared &= set(annotations[person])
    rater_notes = [set(annotations[p]) for p in people[len(pair) :]]
    if (pair and not compared) or (not pair and not any(rater_notes)):
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=_SOURCE)
    written = compared.union(*rater_notes)
    pair_people = people[: len(pair)]
    counts = {
        "cases": len(compared) if pair else len(written),
        "notes_left_out": len(set().union(*(annotations[p] for p in pair_people)) - compared),
        "labels_dropped": _dropped(annotations, pair_people, compared, set(scored))
        + sum(
            _dropped(annotations, (p,), set(annotations[p]), set(scored))
            for p in people[len(pair) :]
        ),
        "notes_ignored": len(reading.ignored),
        "labels_unused": len(declared) - len(scored),
    }
    gold = []
    if gold_annotator is not None:
        gold = [
            GoldField(str(note), field_id, field_type, value)
            for note in compared
            for field_id, field_type, value in _values(annotations[people[0]][note], fields)
        ]
    predictions = []
    if annotator is not None:
        predictions = [
            Prediction(str(note), field_id, value)
            for note in compared
            for field_id, _, value in _values(annotations[people[1]][note], fields)
        ]
    rater_rows = tuple(
        sorted_predictions(
            [
                Prediction(str(note), field_id, value)
                for note, found in annotations[person].items()
                for field_id, _, value in _values(found, fields)
            ]
        )
        for person in people[len(pair) :]
    )
    schema = {"fields": {item.field_id: item.schema_entry() for item in fields.values()}}
    counts["rows"] = len(gold)
    for index, person in enumerate(people[len(pair) :], start=1):
        counts[f"rater_{index}_cases"] = len(annotations[person])
    return Imported(
        sorted_records(gold), sorted_predictions(predictions), schema, counts, rater_rows
    )


def _project(config: object) -> ProjectConfig:
    if config is None:
        return ProjectConfig()
    if type(config) is ProjectConfig:
        return config
    return read_config(config)  # type: ignore[arg-type]


def _people(
    project: ProjectConfig, gold_annotator: object, annotator: object, raters: object
) -> tuple[int, ...]:
    """The user ids read: gold, the annotator, then the raters (names through the config)."""
    if type(raters) is not list and type(raters) is not tuple:
        raise ChartscoreError(ErrorCode.USAGE)
    if gold_annotator is None and (annotator is not None or not raters):
        raise ChartscoreError(ErrorCode.USAGE)
    given = [p for p in (gold_annotator, annotator) if p is not None] + list(raters)
    people = tuple(project.user(person) for person in given)
    pair = people[: 2 if annotator is not None else 1] if gold_annotator is not None else ()
    if len(set(pair)) != len(pair) or len(set(people[len(pair) :])) != len(people) - len(pair):
        raise ChartscoreError(ErrorCode.USAGE)
    return people


def _exports(export: object) -> tuple[InputPath, ...]:
    if type(export) is list or type(export) is tuple:
        exports: tuple[InputPath, ...] = tuple(export)
        if not exports:
            raise ChartscoreError(ErrorCode.USAGE)
        return exports
    return (export,)  # type: ignore[return-value]


def _declared(
    chosen: tuple[str, ...] | None, project: ProjectConfig, found: set[str]
) -> tuple[str, ...]:
    """The labels to score: the caller's; the config's (wildcards against those found, and
    its groups in place of their members); or every label found, with the groups."""
    if chosen is not None:
        return chosen
    if project.labels is not None:
        declared = set(project.label_list) | {
            label for label in found if project.labels.matches(label)
        }
    else:
        declared = set(found)
    for group, members in project.grouped:
        declared = {label for label in declared if not members.matches(label)} | {group}
    return tuple(sorted(declared))


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
    return tuple(
        dict.fromkeys(make_label(*label_parts(label)) if "|" in label else label for label in found)
    )


class _Reading:
    """Every annotator's labels per note, read export by export (chart-review's reading)."""

    def __init__(self, project: ProjectConfig, wanted: NoteIds | None) -> None:
        self.project = project
        self.wanted = wanted
        self.annotations: Annotations = {}
        self.found: set[str] = set()  # labels found, but never free text
        self.notes: set[int] = set()  # every note id of every export
        self.ignored: set[int] = set()
        self._part: dict[tuple[int, int], int] = {}  # (annotator, note): the export read from
        self._known = frozenset(project.annotators.values())

    def read(self, tasks: Iterator[tuple[int, object]], part: int) -> None:
        """Read one export (the ``part``-th): a note of an earlier one is merged into it."""
        here: set[int] = set()
        for item, task in tasks:
            note = _member(task, "id", item)
            entries = _member(task, "annotations", item)
            if type(note) is not int or type(entries) is not list:
                raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
            if note in here:
                raise ChartscoreError(ErrorCode.DUPLICATE_CASE, input=_SOURCE, item=item)
            here.add(note)
            self.notes.add(note)
            if self._ignored(note, task, item):
                self.ignored.add(note)
                for mine in self.annotations.values():
                    mine.pop(note, None)
                continue
            if self.wanted is not None and note not in self.wanted:
                continue
            for entry in entries:
                person, labels, free = _annotation(entry, item)
                if person is None or (self._known and person not in self._known):
                    continue
                self.found |= labels - free
                labels = self._simplified(labels)
                mine = self.annotations.setdefault(person, {})
                if self._part.get((person, note)) == part:
                    raise ChartscoreError(ErrorCode.DUPLICATE_ANNOTATION, input=_SOURCE, item=item)
                self._part[person, note] = part
                mine[note] = labels | mine.get(note, frozenset())

    def _ignored(self, note: int, task: object, item: int) -> bool:
        project = self.project
        if note in project.ignore_notes or note in self.ignored:
            return True
        if not project.ignore_ids:
            return False
        data = _member(task, "data", item)
        if type(data) is not dict:
            return False
        ids: set[str] = set()
        for key in ("encounter_id", "enc_id", "anon_encounter_id", "anon_id"):
            value = data.get(key)
            if type(value) is str and value:
                ids.add(f"Encounter/{value}")
        mappings = data.get("docref_mappings")
        if type(mappings) is dict:
            for key, value in mappings.items():
                for ref in (key, value):
                    if type(ref) is str and ref:
                        ids.add(ref if "/" in ref else f"DocumentReference/{ref}")
        return not ids.isdisjoint(project.ignore_ids)

    def _simplified(self, labels: frozenset[str]) -> frozenset[str]:
        """Implied labels expanded (recursively), then groups in place of their members."""
        project = self.project
        if project.implied:
            expanded = set(labels)
            pending = list(labels)
            while pending:
                label = pending.pop()
                for matcher, implied in project.implied:
                    if matcher.matches(label):
                        new = implied - expanded
                        expanded |= new
                        pending.extend(new)
            labels = frozenset(expanded)
        for group, members in project.grouped:
            matched = {label for label in labels if members.matches(label)}
            if matched:
                labels = (labels - matched) | {group}
        return labels


def _member(value: object, key: str, item: int) -> object:
    if type(value) is not dict:
        raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
    return value.get(key)


_KINDS: Final = {"labels": "labels", "choices": "choices", "textarea": "text"}


def _annotation(entry: object, item: int) -> tuple[int | None, frozenset[str], frozenset[str]]:
    """(annotator or None, labels, the labels that are free text) of one annotation.

    A ``labels``, ``choices`` or ``textarea`` result (``type``, default ``labels``)
    names labels: its ``value.labels``, ``value.choices`` or ``value.text``. A
    choices or text area result that shares its ``id`` with a labels result is a
    sublabel of that region: the region's labels ``A`` become ``A|<from_name>|<value>``
    (chart-review's reading). Other result types are ignored.
    """
    person = _member(entry, "completed_by", item)
    if type(person) is dict:
        person = person.get("id")
    results = _member(entry, "result", item)
    if (person is not None and type(person) is not int) or type(results) is not list:
        raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
    read: list[tuple[str, object, object, list[str]]] = []  # (kind, id, from_name, values)
    for result in results:
        kind = _member(result, "type", item)
        value = result.get("value")  # a dict: _member checked
        kind = "labels" if kind is None else kind
        if type(kind) is not str or kind.casefold() not in _KINDS:
            continue  # a relation, a region without labels: not read
        kind = kind.casefold()
        found = _member(value, _KINDS[kind], item)
        found = [] if found is None else found
        if type(found) is not list or not all(
            type(label) is str and "|" not in label for label in found
        ):
            raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
        read.append((kind, result.get("id"), result.get("from_name"), found))
    regions: dict[object, set[str]] = {}
    for kind, region, _, values in read:
        if kind == "labels" and region is not None:
            regions.setdefault(region, set()).update(values)
    labels: set[str] = set()
    free: set[str] = set()
    sublabelled: dict[object, set[str]] = {}
    for kind, region, name, values in read:
        if kind != "labels" and region is not None and region in regions:
            if type(name) is not str or not name.strip() or "|" in name:
                raise ChartscoreError(ErrorCode.INVALID_EXPORT, input=_SOURCE, item=item)
            mine = sublabelled.setdefault(region, set())
            for base in regions[region]:
                for value in values:
                    label = make_label(base, name.strip(), value.strip())
                    mine.add(label)
                    if kind == "textarea":
                        free.add(label)
        elif kind != "labels" or region is None:
            labels.update(values)
            if kind == "textarea":
                free.update(values)
    for region, bare in regions.items():
        labels.update(sublabelled.get(region, bare))
    return person, frozenset(labels), frozenset(free)


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
