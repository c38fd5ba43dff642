"""A FHIR R4 Questionnaire read as chartscore fields, with each item's enableWhen conditions.

The Questionnaire (JSON) is a developer-authored form, not patient data, but it is read as
strictly as any input: a document that is not one is ``invalid_questionnaire`` with the
0-based position of the item (in document order), never its text.

- Item types map to field types: ``boolean`` to boolean; ``decimal`` and ``integer`` to
  number; ``date`` and ``dateTime`` to date (a dateTime answer's date part);
  ``string`` and ``text`` to text; ``choice`` to categorical, or multi when it ``repeats``,
  its choices the codes of its ``answerOption`` or of its ``answerValueSet`` when that is a
  value set contained in the Questionnaire (``#id``); ``open-choice`` likewise, but with
  no choices in the schema, so a free-text answer is a value.
- ``group`` items are walked (a question's own child items too); ``display`` items are
  skipped, and counted; so are ``time``, ``url``, ``attachment``, ``reference`` and
  ``quantity`` items (``unsupported``), and every item inside a repeating group (one case
  has one answer per field: ``repeating``).
- A field id is the item's ``linkId``, lower-cased, every run of characters other than
  a-z and 0-9 made ``_``, ``q_`` in front of one that does not start with a letter
  (``1.1`` is ``q_1_1``, ``vitaminKgiven`` is ``vitaminkgiven``). A linkId that gives no
  field id (empty, over 64 characters), or the same one as another, is ``invalid_link_id``.
- Each field keeps the enableWhen conditions of itself and of every item above it: a
  field applies to a response only when all of them hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode, InputKind, valid_field_id
from chartscore.importers.fields import ImportedField
from chartscore.io.inputs import InputPath, input_path, open_input
from chartscore.io.jsonl import decode_document
from chartscore.metrics import FieldType
from chartscore.records.normalize import normalize_text

MAX_QUESTIONNAIRE_BYTES: Final = 16 << 20
"""The largest Questionnaire read, 16 MiB (after decompression), as a schema file."""

SOURCE: Final = InputKind.QUESTIONNAIRE
OPERATORS: Final = frozenset({"exists", "=", "!=", ">", "<", ">=", "<="})
ANSWER_KINDS: Final = (
    "Boolean",
    "Decimal",
    "Integer",
    "Date",
    "DateTime",
    "Time",
    "String",
    "Coding",
    "Quantity",
    "Reference",
)
"""The kinds of an enableWhen's ``answer[x]`` (R4)."""

_FIELD_TYPES: Final[Mapping[str, FieldType]] = {
    "boolean": FieldType.BOOLEAN,
    "decimal": FieldType.NUMBER,
    "integer": FieldType.NUMBER,
    "date": FieldType.DATE,
    "dateTime": FieldType.DATE,
    "string": FieldType.TEXT,
    "text": FieldType.TEXT,
    "choice": FieldType.CATEGORICAL,
    "open-choice": FieldType.CATEGORICAL,
}
_UNSUPPORTED: Final = frozenset({"time", "url", "attachment", "reference", "quantity"})
_OPTION_KINDS: Final = ("valueCoding", "valueString", "valueInteger", "valueDate", "valueTime")
_NOT_ALPHANUMERIC: Final = re.compile(r"[^a-z0-9]+")
_EXPRESSION: Final = "enableWhenExpression"  # the SDC extension: FHIRPath, not evaluated


@attrs.frozen(repr=False)
class Condition:
    """One enableWhen: the question's linkId, the operator, and the answer's kind and value."""

    question: str
    operator: str
    kind: str
    value: object


@attrs.frozen(repr=False)
class Gate:
    """The enableWhen of one item: its conditions and ``all`` or ``any``; or one that
    cannot be evaluated (an enableWhenExpression)."""

    conditions: tuple[Condition, ...]
    any_of: bool = False
    evaluable: bool = True


@attrs.frozen(repr=False)
class Question:
    """An answerable item read as a field.

    Attributes:
        link_id: The item's linkId.
        field: The chartscore field.
        open_choice: An ``open-choice`` item (a free-text answer is a value).
        item_type: The FHIR item type.
        gates: The enableWhen of the item and of every item above it, outermost first.
        options: A choice item's codes (an open-choice's too, which its field does not
            declare); empty when the Questionnaire does not hold them.
    """

    link_id: str
    field: ImportedField
    open_choice: bool
    item_type: str
    gates: tuple[Gate, ...]
    options: tuple[str, ...] = ()
    _normalized: frozenset[str] = attrs.field(
        init=False,
        default=attrs.Factory(
            lambda self: frozenset(normalize_text(code) for code in self.options),
            takes_self=True,
        ),
    )

    def accepts(self, kind: str, text: str) -> bool:
        """Whether a choice answer is one of the item's codes, compared as scoring compares
        them (any code when the Questionnaire holds none; an open-choice's free text too)."""
        if self.open_choice and kind == "String":
            return True
        return not self.options or normalize_text(text) in self._normalized

    def __repr__(self) -> str:
        return f"Question({self.field.field_id!r})"


@attrs.frozen(repr=False)
class Form:
    """A Questionnaire read: its questions in document order, what was skipped, and its names.

    Attributes:
        questions: The answerable items, by linkId, in document order.
        ignored: The linkIds of items that are known but not fields (display, unsupported,
            inside repeating groups, groups).
        counts: ``skipped_display``, ``skipped_unsupported``, ``skipped_repeating`` and
            ``choices_unresolved``.
        names: The canonical references a response may give for this Questionnaire
            (its ``url``, ``Questionnaire/<id>``); empty when it has neither.
    """

    questions: Mapping[str, Question]
    ignored: frozenset[str]
    counts: Mapping[str, int]
    names: frozenset[str]

    def __repr__(self) -> str:
        return f"Form(<{len(self.questions)} questions>)"

    def schema(self) -> dict[str, object]:
        """The schema document of the fields."""
        fields = {q.field.field_id: q.field.schema_entry() for q in self.questions.values()}
        return {"fields": dict(sorted(fields.items()))}


def field_id_of(link_id: str) -> str | None:
    """The field id of a linkId (see the module docstring), or None when there is none."""
    segment = _NOT_ALPHANUMERIC.sub("_", link_id.lower()).strip("_")
    if not segment:
        return None
    if not segment[:1].isalpha():
        segment = f"q_{segment}"
    return segment if valid_field_id(segment) else None


def read_questionnaire(path: InputPath) -> Form:
    """Read a FHIR R4 Questionnaire (JSON) as fields.

    Raises:
        ChartscoreError: a reading code (``invalid_json (questionnaire line 3)``, ...),
            ``file_too_large`` (over 16 MiB), ``invalid_questionnaire`` or
            ``invalid_link_id`` (with the item's 0-based position in document order).
    """
    where = input_path(path, SOURCE)
    with open_input(where, SOURCE, limit=MAX_QUESTIONNAIRE_BYTES) as stream:
        data = stream.read()
    text = ""
    bad = False
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        bad = True
    if bad:
        raise ChartscoreError(ErrorCode.NOT_UTF8, input=SOURCE)
    document = decode_document(text, SOURCE)
    if type(document) is not dict or document.get("resourceType") != "Questionnaire":
        raise ChartscoreError(ErrorCode.INVALID_QUESTIONNAIRE, input=SOURCE)
    return _Reader(document).form()


class _Reader:
    """The walk over a Questionnaire's items, in document order."""

    def __init__(self, document: dict[str, object]) -> None:
        self._document = document
        self._value_sets = _contained_value_sets(document)
        self._questions: dict[str, Question] = {}
        self._ignored: set[str] = set()
        self._link_ids: set[str] = set()
        self._field_ids: set[str] = set()
        self._position = -1
        self._counts = dict.fromkeys(
            ("skipped_display", "skipped_unsupported", "skipped_repeating", "choices_unresolved"),
            0,
        )

    def form(self) -> Form:
        self._walk(self._document.get("item", []), (), repeating=False)
        names = set()
        url, resource_id = self._document.get("url"), self._document.get("id")
        if type(url) is str and url:
            names.add(url.split("|", 1)[0])
        if type(resource_id) is str and resource_id:
            names.add(f"Questionnaire/{resource_id}")
        counts = {name: count for name, count in self._counts.items() if count}
        return Form(self._questions, frozenset(self._ignored), counts, frozenset(names))

    def _fail(self, code: ErrorCode = ErrorCode.INVALID_QUESTIONNAIRE) -> ChartscoreError:
        item = self._position if self._position >= 0 else None
        return ChartscoreError(code, input=SOURCE, item=item)

    def _walk(self, items: object, gates: tuple[Gate, ...], *, repeating: bool) -> None:
        if type(items) is not list:
            raise self._fail()
        for item in items:
            self._position += 1
            if type(item) is not dict:
                raise self._fail()
            link_id, item_type = item.get("linkId"), item.get("type")
            if type(link_id) is not str or type(item_type) is not str:
                raise self._fail()
            if not link_id or link_id in self._link_ids:
                raise self._fail(ErrorCode.INVALID_LINK_ID)
            self._link_ids.add(link_id)
            own = gates + self._gates(item)
            inside = repeating or (item_type == "group" and item.get("repeats") is True)
            if item_type in ("group", "display") or item_type in _UNSUPPORTED or repeating:
                self._ignored.add(link_id)
                self._skip(item_type, repeating)
            elif item_type in _FIELD_TYPES:
                self._question(item, link_id, item_type, own)
            else:
                raise self._fail()  # not an R4 item type
            self._walk(item.get("item", []), own, repeating=inside)

    def _skip(self, item_type: str, repeating: bool) -> None:
        if item_type == "group":
            return
        if item_type == "display":
            self._counts["skipped_display"] += 1
        elif repeating:
            self._counts["skipped_repeating"] += 1
        else:
            self._counts["skipped_unsupported"] += 1

    def _question(
        self, item: dict[str, object], link_id: str, item_type: str, gates: tuple[Gate, ...]
    ) -> None:
        field_id = field_id_of(link_id)
        if field_id is None or field_id in self._field_ids:
            raise self._fail(ErrorCode.INVALID_LINK_ID)
        self._field_ids.add(field_id)
        field_type = _FIELD_TYPES[item_type]
        repeats = item.get("repeats", False)
        if repeats is not True and repeats is not False:
            raise self._fail()
        options: tuple[str, ...] = ()
        if field_type is FieldType.CATEGORICAL:
            if repeats:
                field_type = FieldType.MULTI
            found = self._choices(item)
            if found is None:
                self._counts["choices_unresolved"] += 1
            options = found or ()
        open_choice = item_type == "open-choice"
        self._questions[link_id] = Question(
            link_id,
            ImportedField(field_id, field_type, () if open_choice else options),
            open_choice,
            item_type,
            gates,
            options,
        )

    def _gates(self, item: dict[str, object]) -> tuple[Gate, ...]:
        """The item's own enableWhen as a gate (none when it has none)."""
        conditions_raw = item.get("enableWhen")
        expression = _has_expression(item)
        if conditions_raw is None:
            return (Gate((), evaluable=False),) if expression else ()
        if type(conditions_raw) is not list or not conditions_raw:
            raise self._fail()
        conditions = tuple(self._condition(raw) for raw in conditions_raw)
        behavior = item.get("enableBehavior")
        if behavior not in (None, "all", "any") or (behavior is None and len(conditions) > 1):
            raise self._fail()  # R4 que-12: enableBehavior is required for several
        return (Gate(conditions, any_of=behavior == "any", evaluable=not expression),)

    def _condition(self, raw: object) -> Condition:
        if type(raw) is not dict:
            raise self._fail()
        question, operator = raw.get("question"), raw.get("operator")
        kinds = [kind for kind in ANSWER_KINDS if f"answer{kind}" in raw]
        if type(question) is not str or type(operator) is not str or len(kinds) != 1:
            raise self._fail()
        kind = kinds[0]
        value = raw[f"answer{kind}"]
        if (
            operator not in OPERATORS
            or not _answer_shape(kind, value)
            or (operator == "exists" and kind != "Boolean")
        ):
            raise self._fail()
        return Condition(question, operator, kind, value)

    def _choices(self, item: dict[str, object]) -> tuple[str, ...] | None:
        """The codes of the item's options, or None when the Questionnaire does not hold them."""
        options = item.get("answerOption")
        value_set = item.get("answerValueSet")
        if options is not None:
            if type(options) is not list or not options:
                raise self._fail()
            codes = [self._option(option) for option in options]
        elif value_set is not None:
            if type(value_set) is not str:
                raise self._fail()
            found = self._value_sets.get(value_set[1:]) if value_set.startswith("#") else None
            if not found:
                return None
            codes = list(found)
        else:
            return None
        if len(set(codes)) != len(codes) or not all(codes):
            raise self._fail()
        return tuple(codes)

    def _option(self, option: object) -> str:
        if type(option) is not dict:
            raise self._fail()
        kinds = [kind for kind in _OPTION_KINDS if kind in option]
        if len(kinds) != 1:
            raise self._fail()
        code = option_text(kinds[0].removeprefix("value"), option[kinds[0]])
        if code is None:
            raise self._fail()
        return code


def option_text(kind: str, value: object) -> str | None:
    """An answer or option as the text chartscore compares: a Coding's code, a string,
    a date, an integer's digits, ``true`` or ``false``; None for any other."""
    if kind == "Coding":
        code = value.get("code") if type(value) is dict else None
        return code if type(code) is str and code else None
    if kind in ("String", "Date", "DateTime", "Time", "Uri") and type(value) is str:
        return value
    if kind == "Boolean" and type(value) is bool:
        return "true" if value else "false"
    if kind in ("Integer", "Decimal") and type(value) in (int, Decimal):
        return str(value)
    return None


def _contained_value_sets(document: dict[str, object]) -> dict[str, tuple[str, ...]]:
    """The codes of each contained ValueSet, by id (compose.include.concept, expansion)."""
    found: dict[str, tuple[str, ...]] = {}
    contained = document.get("contained", [])
    if type(contained) is not list:
        raise ChartscoreError(ErrorCode.INVALID_QUESTIONNAIRE, input=SOURCE)
    for resource in contained:
        if type(resource) is not dict or resource.get("resourceType") != "ValueSet":
            continue
        value_set_id = resource.get("id")
        if type(value_set_id) is str:
            found[value_set_id] = tuple(_value_set_codes(resource))
    return found


def _value_set_codes(value_set: dict[str, object]) -> Iterator[str]:
    compose = value_set.get("compose")
    includes = compose.get("include", []) if type(compose) is dict else []
    for include in includes if type(includes) is list else []:
        concepts = include.get("concept", []) if type(include) is dict else []
        for concept in concepts if type(concepts) is list else []:
            code = concept.get("code") if type(concept) is dict else None
            if type(code) is str and code:
                yield code
    expansion = value_set.get("expansion")
    if type(expansion) is dict:
        yield from _contains(expansion.get("contains", []))


def _contains(entries: object) -> Iterator[str]:
    for entry in entries if type(entries) is list else []:
        if type(entry) is not dict:
            continue
        code = entry.get("code")
        if type(code) is str and code and entry.get("abstract") is not True:
            yield code
        yield from _contains(entry.get("contains", []))


def _has_expression(item: dict[str, object]) -> bool:
    extensions = item.get("extension", [])
    if type(extensions) is not list:
        return False
    return any(
        type(extension) is dict
        and type(extension.get("url")) is str
        and extension["url"].endswith(_EXPRESSION)
        for extension in extensions
    )


def _answer_shape(kind: str, value: object) -> bool:
    if kind == "Boolean":
        return type(value) is bool
    if kind in ("Decimal", "Integer"):
        return type(value) in (int, Decimal)
    if kind in ("Coding", "Quantity", "Reference"):
        return type(value) is dict
    return type(value) is str
