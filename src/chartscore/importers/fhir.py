"""FHIR to chartscore: a Questionnaire becomes a schema, its QuestionnaireResponses gold or
predictions.

The Questionnaire is read by :mod:`chartscore.importers.fhir_questionnaire`. The responses
are a Bundle (JSON), NDJSON (one resource per line, as FHIR bulk export writes them), or
one QuestionnaireResponse (JSON); a Bundle on an NDJSON line is read as its entries.
Resources other than QuestionnaireResponses are skipped, and counted; so are responses
to another Questionnaire (their ``questionnaire`` is neither the Questionnaire's ``url``
nor ``Questionnaire/<id>``) and responses whose ``status`` is not ``completed`` or
``amended``.

Each response is one case. Its case id is its ``subject.reference`` (or, by option, its
``encounter.reference``), which is written into gold and predictions only.

For each field and response:

- **enableWhen false** (the item, or an item above it, is disabled by the response's own
  answers): the field does not apply to the chart. Gold gets a not-applicable row
  (``value: null``, ``not_applicable: true``; docs/metrics.md, "Not applicable"), counted
  (``not_applicable``), so that an answer there is counted apart and never charged as an
  answer to an unanswerable question; predictions get no row, counted
  (``not_applicable_left_out``).
- **enableWhen not evaluable** (an ``enableWhenExpression`` extension, a condition on an
  item that is not a field, such as one inside a repeating group, or a comparison of
  kinds that do not compare): no row, counted (``enable_when_unevaluated``), never guessed.
- **enabled and answered**: the answer's value. A gold answer must be a value of its
  item (``invalid_answer`` otherwise); a prediction that is not one is kept as its text.
- **enabled, unanswered**: ``value: null`` (unanswerable in gold, an abstention in
  predictions), counted (``unanswered``).

Answers to linkIds the Questionnaire does not have are left out, and counted.
Errors name the responses' line (NDJSON) or entry (``item``), never their content.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Final, Literal

import attrs

from chartscore._format import MAX_CASE_ID_LENGTH
from chartscore.errors import ChartscoreError, ErrorCode, InputKind, word_option
from chartscore.importers.fhir_questionnaire import (
    ANSWER_KINDS,
    Condition,
    Form,
    Gate,
    Question,
    option_text,
    read_questionnaire,
)
from chartscore.importers.fields import INVALID
from chartscore.importers.imported import ROLES, Imported, Role, sorted_predictions, sorted_records
from chartscore.io.inputs import InputPath, input_path, open_input
from chartscore.io.jsonl import decode_document, iter_lines, parse_object
from chartscore.metrics import NOT_APPLICABLE, FieldType
from chartscore.records._rules import is_text
from chartscore.records.model import GoldField, Prediction
from chartscore.records.normalize import date_key

CaseId = Literal["subject", "encounter"]
CASE_IDS: Final = ("subject", "encounter")

MAX_RESPONSES_BYTES = 1 << 30
"""The most a responses file is read, 1 GiB after decompression (NDJSON streams)."""

MAX_BUNDLE_BYTES: Final = 16 << 20
"""The largest Bundle (or one resource) written over several lines, 16 MiB."""

SOURCE: Final = InputKind.RESPONSES
_STATUSES: Final = ("completed", "amended")
_VALUE_KINDS: Final = (*ANSWER_KINDS, "Uri", "Attachment")
"""The kinds of a response answer's ``value[x]`` (R4): an enableWhen's, and two more."""
_NUMBERS: Final = ("Integer", "Decimal")
_DATES: Final = ("Date", "DateTime")

Answer = tuple[str, object]
"""An answer's kind (``Coding``, ``String``, ...) and its value."""

Location = tuple[int | None, int | None]
"""Where a resource is: its line (NDJSON) and its entry in a Bundle."""


def import_fhir(
    questionnaire: InputPath,
    responses: InputPath | None = None,
    *,
    role: Role = "gold",
    case_id: CaseId = "subject",
) -> Imported:
    """Read a FHIR R4 Questionnaire, and optionally its QuestionnaireResponses.

    Args:
        questionnaire: The Questionnaire (JSON).
        responses: A Bundle (JSON), NDJSON or one QuestionnaireResponse; None for the
            schema only.
        role: Whether the responses are ``"gold"`` or ``"predictions"``.
        case_id: The reference that is the case id: ``"subject"`` or ``"encounter"``.

    Returns:
        The schema and the records (see the module docstring), with ``counts``.

    Raises:
        ChartscoreError: any code of
            :func:`~chartscore.importers.fhir_questionnaire.read_questionnaire`; a
            reading code of the responses (``invalid_json (responses line 3)``,
            ``file_too_large``); ``invalid_response``, ``case_reference_missing``,
            ``invalid_case_id``, ``duplicate_case`` and ``invalid_answer`` (the
            response's line or entry); ``empty_export`` (gold with no row); ``usage``
            for an option of the wrong type.
    """
    gold = word_option(role, ROLES) == "gold"
    reference = word_option(case_id, CASE_IDS)
    form = read_questionnaire(questionnaire)
    counts: dict[str, int] = dict(form.counts)
    schema = form.schema()
    if responses is None:
        return Imported(schema=schema, counts=counts)
    cases: set[str] = set()
    gold_rows: list[GoldField] = []
    predictions: list[Prediction] = []
    for where, resource in _resources(responses):
        if not _wanted(resource, form, counts, where):
            continue
        case = _case_id(resource, reference, where)
        if case in cases:
            raise _error(ErrorCode.DUPLICATE_CASE, where)
        cases.add(case)
        answers = _answers(resource, form, counts, where)
        for question, value in _Response(form, answers, counts, gold, where).values():
            field = question.field
            if gold:
                gold_rows.append(GoldField(case, field.field_id, field.field_type, value))
            else:
                predictions.append(Prediction(case, field.field_id, value))
    if gold and not gold_rows:
        raise ChartscoreError(ErrorCode.EMPTY_EXPORT, input=SOURCE)
    counts["cases"] = len(cases)
    return Imported(sorted_records(gold_rows), sorted_predictions(predictions), schema, counts)


def _error(code: ErrorCode, where: Location, field_id: str | None = None) -> ChartscoreError:
    """An error located by the response's line or entry (and the field, a schema name)."""
    return ChartscoreError(code, input=SOURCE, line=where[0], item=where[1], field_id=field_id)


def _add(counts: dict[str, int], name: str) -> None:
    counts[name] = counts.get(name, 0) + 1


# --- reading the responses file ---


def _resources(path: InputPath) -> Iterator[tuple[Location, dict[str, object]]]:
    """Each resource of the file with its location; a Bundle's entries in its place."""
    for line, resource in _documents(path):
        if resource.get("resourceType") != "Bundle":
            yield (line, None), resource
            continue
        entries = resource.get("entry", [])
        if type(entries) is not list:
            raise _error(ErrorCode.INVALID_RESPONSE, (line, None))
        for index, entry in enumerate(entries):
            inner = entry.get("resource") if type(entry) is dict else None
            if type(inner) is not dict:
                raise _error(ErrorCode.INVALID_RESPONSE, (line, index))
            yield (line, index), inner


def _documents(path: InputPath) -> Iterator[tuple[int | None, dict[str, object]]]:
    """NDJSON's objects with their lines, or the one JSON document (line None).

    The first non-blank line decides: a whole JSON object is NDJSON; anything else
    begins one document written over several lines (read whole, up to 16 MiB).
    """
    where = input_path(path, SOURCE)
    with open_input(where, SOURCE, limit=MAX_RESPONSES_BYTES) as stream:
        lines = iter_lines(stream, SOURCE)
        first: tuple[int, str] | None = None
        for line, text in lines:
            if text.strip():
                first = (line, text)
                break
        if first is None:
            return
        one_line = _one_line_object(*first)
        if one_line is not None:
            yield first[0], one_line
            for line, text in lines:
                value = parse_object(text, SOURCE, line)
                if value is not None:
                    yield line, value
            return
        parts, size = [first[1]], len(first[1])
        for _, text in lines:
            size += len(text) + 1
            if size > MAX_BUNDLE_BYTES:
                raise ChartscoreError(ErrorCode.FILE_TOO_LARGE, input=SOURCE)
            parts.append(text)
    document = decode_document("\n".join(parts), SOURCE, first_line=first[0])
    if type(document) is not dict:
        raise ChartscoreError(ErrorCode.INVALID_RESPONSE, input=SOURCE)
    yield None, document


def _one_line_object(line: int, text: str) -> dict[str, object] | None:
    """The line's object when it is one whole JSON object, else None (no error)."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    value: dict[str, object] | None = None
    try:
        value = parse_object(text, SOURCE, line)
    except ChartscoreError:
        value = None  # the start of a document over several lines: read it whole
    return value


# --- one response ---


def _wanted(
    resource: dict[str, object], form: Form, counts: dict[str, int], where: Location
) -> bool:
    """Whether the resource is a completed response to this Questionnaire (others counted)."""
    if resource.get("resourceType") != "QuestionnaireResponse":
        _add(counts, "other_resources")
        return False
    canonical = resource.get("questionnaire")
    if canonical is not None:
        if type(canonical) is not str:
            raise _error(ErrorCode.INVALID_RESPONSE, where)
        if form.names and canonical.split("|", 1)[0] not in form.names:
            _add(counts, "responses_other_questionnaire")
            return False
    if resource.get("status") not in _STATUSES:
        _add(counts, "responses_not_completed")
        return False
    return True


def _case_id(resource: dict[str, object], reference: str, where: Location) -> str:
    found = resource.get(reference)
    case = found.get("reference") if type(found) is dict else None
    if case is None or case == "":
        raise _error(ErrorCode.CASE_REFERENCE_MISSING, where)
    if type(case) is not str or len(case) > MAX_CASE_ID_LENGTH or not case.strip():
        raise _error(ErrorCode.INVALID_CASE_ID, where)
    if not is_text(case):
        raise _error(ErrorCode.INVALID_CASE_ID, where)
    return case


def _answers(
    resource: dict[str, object], form: Form, counts: dict[str, int], where: Location
) -> dict[str, list[Answer]]:
    """The answers of every field the response answers, by linkId."""
    found: dict[str, list[Answer]] = {}
    pending: list[object] = [resource.get("item", [])]
    while pending:
        items = pending.pop()
        if type(items) is not list:
            raise _error(ErrorCode.INVALID_RESPONSE, where)
        for item in items:
            link_id = item.get("linkId") if type(item) is dict else None
            answers = item.get("answer", []) if type(item) is dict else None
            if type(link_id) is not str or type(answers) is not list:
                raise _error(ErrorCode.INVALID_RESPONSE, where)
            pending.append(item.get("item", []))
            read = (_answer(answer, pending, where) for answer in answers)
            values = [value for value in read if value is not None]
            if link_id in form.questions:
                if link_id in found:
                    raise _error(ErrorCode.INVALID_ANSWER, where)  # one item, twice
                found[link_id] = values
            elif values and link_id not in form.ignored:
                counts["answers_outside"] = counts.get("answers_outside", 0) + len(values)
    return found


def _answer(answer: object, pending: list[object], where: Location) -> Answer | None:
    """An answer's kind and value (None when it has no value); its child items queued."""
    if type(answer) is not dict:
        raise _error(ErrorCode.INVALID_RESPONSE, where)
    pending.append(answer.get("item", []))
    kinds = [kind for kind in _VALUE_KINDS if f"value{kind}" in answer]
    if not kinds:
        return None
    kind = kinds[0]
    value = answer[f"value{kind}"]
    if len(kinds) > 1 or not _shaped(kind, value):
        raise _error(ErrorCode.INVALID_RESPONSE, where)
    return kind, value


def _shaped(kind: str, value: object) -> bool:
    """Whether an answer's value has its kind's JSON type."""
    if kind == "Boolean":
        return type(value) is bool
    if kind == "Integer":
        return type(value) is int
    if kind == "Decimal":
        return type(value) in (int, Decimal)
    if kind in ("Coding", "Attachment", "Quantity", "Reference"):
        return type(value) is dict
    return type(value) is str


@attrs.frozen(repr=False, eq=False)  # it holds values: never in a repr
class _Response:
    """One response's values: enableWhen evaluated on its own answers."""

    _form: Form
    _answers: dict[str, list[Answer]]
    _counts: dict[str, int]
    _gold: bool
    _where: Location

    def values(self) -> Iterator[tuple[Question, object]]:
        for question in self._form.questions.values():
            enabled = _all(self._gate(gate) for gate in question.gates)
            if enabled is False:
                if self._gold:  # the field does not apply: a not-applicable gold row
                    _add(self._counts, "not_applicable")
                    yield question, NOT_APPLICABLE
                else:
                    _add(self._counts, "not_applicable_left_out")
                continue
            if enabled is None:
                _add(self._counts, "enable_when_unevaluated")
                continue
            answers = self._answers.get(question.link_id, [])
            if not answers:
                _add(self._counts, "unanswered")
                yield question, None
                continue
            value = _value(question, answers, gold=self._gold)
            if value is INVALID and self._gold:
                raise _error(ErrorCode.INVALID_ANSWER, self._where, question.field.field_id)
            if value is INVALID:
                _add(self._counts, "answers_unreadable")
                continue
            yield question, value

    def _gate(self, gate: Gate) -> bool | None:
        if not gate.evaluable:
            return None
        results = (self._condition(condition) for condition in gate.conditions)
        return _any(results) if gate.any_of else _all(results)

    def _condition(self, condition: Condition) -> bool | None:
        if condition.question not in self._form.questions:
            return None  # not a field: inside a repeating group, or unknown
        answers = self._answers.get(condition.question, [])
        if condition.operator == "exists":
            return bool(answers) is condition.value
        if not answers:
            return False
        return _any(_compare(answer, condition) for answer in answers)


def _all(results: Iterable[bool | None]) -> bool | None:
    """Three-valued and: False if any is False, else None if any is unknown, else True."""
    found = list(results)
    if False in found:
        return False
    return None if None in found else True


def _any(results: Iterable[bool | None]) -> bool | None:
    """Three-valued or: True if any is True, else None if any is unknown, else False."""
    found = list(results)
    if True in found:
        return True
    return None if None in found else False


def _compare(answer: Answer, condition: Condition) -> bool | None:
    """Whether the answer meets the condition; None when the two do not compare."""
    kind, value = answer
    operator, wanted = condition.operator, condition.value
    if kind == "Coding" and condition.kind == "Coding":
        if operator not in ("=", "!="):
            return None
        same = _same_coding(value, wanted)
        return same if same is None or operator == "=" else not same
    ordered: tuple[object, object] | None = None
    if kind in _NUMBERS and condition.kind in _NUMBERS:
        ordered = (Decimal(value), Decimal(wanted))  # type: ignore[arg-type]
    elif kind == condition.kind and kind in ("String", "Date", "Boolean"):
        if kind == "Date" and len(value) != len(wanted):  # type: ignore[arg-type]
            return None  # two precisions: neither before nor after
        ordered = (value, wanted)
    elif kind == condition.kind == "DateTime" and operator in ("=", "!="):
        ordered = (value, wanted)
    if ordered is None or (kind == "Boolean" and operator not in ("=", "!=")):
        return None
    left, right = ordered
    return bool(_OPERATIONS[operator](left, right))


_OPERATIONS: Final = {
    "=": lambda left, right: left == right,
    "!=": lambda left, right: left != right,
    ">": lambda left, right: left > right,
    "<": lambda left, right: left < right,
    ">=": lambda left, right: left >= right,
    "<=": lambda left, right: left <= right,
}


def _same_coding(value: object, wanted: object) -> bool | None:
    """Codings are the same when their codes are, and their systems where both have one."""
    if type(value) is not dict or type(wanted) is not dict:
        return None
    code, wanted_code = value.get("code"), wanted.get("code")
    if type(code) is not str or type(wanted_code) is not str:
        return None
    system, wanted_system = value.get("system"), wanted.get("system")
    systems_agree = system is None or wanted_system is None or system == wanted_system
    return code == wanted_code and systems_agree


def _value(question: Question, answers: list[Answer], *, gold: bool) -> object:
    """The field's value from its answers; :data:`INVALID` for a gold answer that is not
    one, or an answer with no text (an attachment, several answers to a single item)."""
    field = question.field
    if field.field_type is FieldType.MULTI:
        items: list[str] = []
        for kind, value in answers:
            text = option_text(kind, value)
            if text is None or (gold and not question.accepts(kind, text)):
                return INVALID
            items.append(text)
        return sorted(set(items))
    if len(answers) != 1:
        return INVALID
    kind, value = answers[0]
    found = _typed(question, kind, value)
    if found is INVALID and not gold:
        text = option_text(kind, value)
        return INVALID if text is None else text
    return found


def _typed(question: Question, kind: str, value: object) -> object:
    """A single answer as a value of the field's type, or :data:`INVALID`."""
    field_type = question.field.field_type
    if field_type is FieldType.BOOLEAN and kind == "Boolean":
        return value
    if field_type is FieldType.NUMBER and kind in _NUMBERS:
        return value
    if field_type is FieldType.DATE and kind in _DATES and type(value) is str:
        day = value.split("T", 1)[0]  # a dateTime's date part, as recorded (no time zone shift)
        return day if date_key(day) is not None and day == day.strip() else INVALID
    if field_type is FieldType.TEXT and kind == "String":
        return value
    if field_type is FieldType.CATEGORICAL:
        text = option_text(kind, value)
        if text is not None and question.accepts(kind, text):
            return text
    return INVALID
