"""chart-review's project ``config.yaml``, the subset ``import labelstudio --config`` reads.

chart-review (smart-on-fhir/chart-review, docs/config.md) describes a Label Studio project
with a small configuration file. chartscore reads these keys of it, with their meaning there:

- ``annotators``: name -> Label Studio user id (an integer). An annotator may then be
  named by it. (chart-review's external annotators, a name -> ``{filename: ...}``, are
  refused: ``invalid_config``.)
- ``labels``: the labels to score; ``A|B|C`` names a sublabel (label ``A``, sublabel
  ``B``, value ``C``) and ``*`` in the second or third part matches any found one.
- ``implied-labels``: label matcher -> a label or a list of labels it implies (expanded
  first, recursively).
- ``grouped-labels``: group label -> a label matcher or a list of them, whose labels on a
  note become the group (after the implied labels are expanded; not recursive).
- ``ignore``: notes left out entirely: a note (task) id, or an encounter id
  (``Encounter/ID`` or a bare ``ID``) or a document id (``DocumentReference/ID``) that
  the task's ``data`` holds (``encounter_id``, ``anon_encounter_id`` and their old names
  ``enc_id``, ``anon_id``; ``docref_mappings``).
- ``ranges``: annotator name -> their notes: ids, ``"3-7"`` ranges (inclusive) and the
  names of other ranges.

The file is JSON, TOML (by name, as for schemas) or, for ``*.yaml`` and ``*.yml``, the
YAML subset these keys need, read by a strict reader of its own (PyYAML is not a
dependency): a top-level mapping of keys to a scalar, a flow list ``[a, b]``, a block
list of ``- item`` lines, or a mapping of such; ``#`` comments; plain, ``'single'`` and
``"double"`` quoted scalars (no escapes but ``''``). Anything else (anchors, multi-line
scalars, tabs for indentation, flow mappings) is ``invalid_config`` with its line.

Holds values: ignore lists name encounters. Nothing here is ever printed; the repr of
:class:`ProjectConfig` is counts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io.inputs import InputPath, StandardInput, input_path, read_whole
from chartscore.io.schema_file import read_document

MAX_CONFIG_BYTES: Final = 1 << 20
"""The largest configuration file read, 1 MiB."""

MAX_RANGE_NOTES: Final = 10_000_000
"""The most note ids one annotator's ``ranges`` may name."""

_SOURCE: Final = InputKind.CONFIG
_KEYS: Final = frozenset(
    {"annotators", "labels", "implied-labels", "grouped-labels", "ignore", "ranges"}
)
_YAML_SUFFIXES: Final = (".yaml", ".yml")
_NUMBER: Final = re.compile(r"[0-9]{1,15}")
_RANGE: Final = re.compile(r"([0-9]{1,15})-([0-9]{1,15})")
_KEY_LINE: Final = re.compile(
    r"([^\s#'\"\[\]{}:,&*!|>%@`-][^:#]*?|'[^']*'|\"[^\"\\]*\")\s*:(?:\s+(.*))?"
)

Label = str
"""A label: ``Cough``, or with a sublabel ``Deceased|Deceased Datetime|11/12/25``."""


def label_parts(label: str) -> tuple[str, str, str]:
    """``A|B|C`` as (label, sublabel name, sublabel value), each stripped; missing parts ``""``."""
    pieces = [*(piece.strip() for piece in label.split("|", 2)), "", ""]
    return pieces[0], pieces[1], pieces[2]


def make_label(label: str, sublabel: str = "", value: str = "") -> Label:
    """The one spelling of a label: ``A`` or ``A|B|C`` (chart-review's pipe syntax)."""
    return f"{label}|{sublabel}|{value}" if sublabel else label


class LabelMatcher:
    """chart-review's label matcher: ``A``, ``A|B|C``, ``A|B|*`` or ``A|*``."""

    __slots__ = ("_patterns",)

    def __init__(self, expressions: Iterable[str]) -> None:
        self._patterns = frozenset(label_parts(text) for text in expressions)

    def matches(self, label: Label) -> bool:
        """Whether ``label`` is one of the matcher's labels."""
        name, sublabel, value = label_parts(label)
        for p_name, p_sublabel, p_value in self._patterns:
            if p_name != name:
                continue
            if p_sublabel == "*" or (p_sublabel == sublabel and p_value in ("*", value)):
                return True
        return False

    def direct(self) -> tuple[Label, ...]:
        """The labels named without a wildcard, in the file's order."""
        return tuple(sorted(make_label(*p) for p in self._patterns if "*" not in p))

    def has_wildcards(self) -> bool:
        """Whether some pattern has a ``*``."""
        return any("*" in pattern for pattern in self._patterns)


@attrs.frozen(repr=False)
class ProjectConfig:
    """The configuration read (every member private: names, labels, ids).

    Attributes:
        annotators: Name -> Label Studio user id.
        labels: The declared labels (a matcher), or None for every label found.
        label_list: The declared labels' own spelling, in the file's order.
        implied: (matcher, implied labels) pairs, in the file's order.
        grouped: (group label, matcher) pairs, in the file's order.
        ignore_notes: Note ids left out.
        ignore_ids: Encounter and document ids left out (``Encounter/ID`` form).
        ranges: User id -> their note ids.
    """

    annotators: Mapping[str, int] = attrs.field(factory=dict, repr=False)
    labels: LabelMatcher | None = attrs.field(default=None, repr=False)
    label_list: tuple[str, ...] = attrs.field(default=(), repr=False)
    implied: tuple[tuple[LabelMatcher, frozenset[Label]], ...] = attrs.field(default=(), repr=False)
    grouped: tuple[tuple[Label, LabelMatcher], ...] = attrs.field(default=(), repr=False)
    ignore_notes: frozenset[int] = attrs.field(factory=frozenset, repr=False)
    ignore_ids: frozenset[str] = attrs.field(factory=frozenset, repr=False)
    ranges: Mapping[int, frozenset[int]] = attrs.field(factory=dict, repr=False)

    def __repr__(self) -> str:
        return f"ProjectConfig(<{len(self.annotators)} annotators>)"

    def user(self, annotator: object) -> int:
        """A user id given as an id or as a name from ``annotators``.

        Raises:
            ChartscoreError: ``annotator_not_found`` for an unknown name; ``usage``
                for anything but an ``int`` or ``str``.
        """
        if type(annotator) is int:
            return annotator
        if type(annotator) is not str:
            raise ChartscoreError(ErrorCode.USAGE)
        if annotator not in self.annotators:
            raise ChartscoreError(ErrorCode.ANNOTATOR_NOT_FOUND, input=_SOURCE)
        return self.annotators[annotator]


def read_config(path: InputPath) -> ProjectConfig:
    """Read a chart-review configuration file (JSON, TOML, or the YAML subset by name).

    Raises:
        ChartscoreError: a reading code (``file_too_large``, ``not_utf8``,
            ``invalid_json`` ... for JSON and TOML) or ``invalid_config`` (with
            the line, for YAML) for a file outside the subset.
    """
    where = input_path(path, _SOURCE)
    if _is_yaml_name(where):
        data = read_whole(where, _SOURCE, MAX_CONFIG_BYTES)
        text: str | None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = None
        if text is None:
            raise ChartscoreError(ErrorCode.NOT_UTF8, input=_SOURCE)
        document: object = yaml_subset(text)
    else:
        document = read_document(where, _SOURCE)
    return config_from_document(document)


def _is_yaml_name(path: str | StandardInput) -> bool:
    if isinstance(path, StandardInput):
        return False
    name = path.lower().removesuffix(".gz")
    return name.endswith(_YAML_SUFFIXES)


def _refused(line: int | None = None) -> ChartscoreError:
    return ChartscoreError(ErrorCode.INVALID_CONFIG, input=_SOURCE, line=line)


def config_from_document(document: object) -> ProjectConfig:
    """The configuration from its decoded document (a JSON-like mapping).

    Raises:
        ChartscoreError: ``invalid_config`` for a key outside the subset or a
            member of the wrong shape.
    """
    if type(document) is not dict or not set(document) <= _KEYS:
        raise _refused()
    annotators: dict[str, int] = {}
    for name, user in _mapping(document.get("annotators", {})).items():
        if type(user) is not int or user < 0:
            raise _refused()  # an external annotator (a file of labels) is not read
        annotators[name] = user
    labels_given = _strings(document.get("labels", []))
    implied = tuple(
        (LabelMatcher([source]), frozenset(_label(item) for item in _one_or_list(target)))
        for source, target in _mapping(document.get("implied-labels", {})).items()
    )
    grouped = tuple(
        (_label(group), LabelMatcher(_one_or_list(members)))
        for group, members in _mapping(document.get("grouped-labels", {})).items()
    )
    ignore_notes: set[int] = set()
    ignore_ids: set[str] = set()
    for item in _list(document.get("ignore", [])):
        if type(item) is int:
            ignore_notes.add(item)
        elif type(item) is str and item:
            kind, slash, _ = item.partition("/")
            ignore_ids.add(item if slash else f"Encounter/{kind}")
        else:
            raise _refused()
    ranges = _ranges(_mapping(document.get("ranges", {})), annotators)
    return ProjectConfig(
        annotators=annotators,
        labels=LabelMatcher(labels_given) if labels_given else None,
        label_list=tuple(
            dict.fromkeys(
                label
                for label in (_label(text, wildcard=True) for text in labels_given)
                if "*" not in label
            )
        ),
        implied=implied,
        grouped=grouped,
        ignore_notes=frozenset(ignore_notes),
        ignore_ids=frozenset(ignore_ids),
        ranges=ranges,
    )


def _mapping(value: object) -> dict[str, object]:
    if type(value) is not dict or not all(type(key) is str and key for key in value):
        raise _refused()
    return value


def _list(value: object) -> list[object]:
    if type(value) is not list:
        raise _refused()
    return value


def _strings(value: object) -> list[str]:
    items = _list(value)
    if not all(type(item) is str and item.strip() for item in items):
        raise _refused()
    return items  # type: ignore[return-value]


def _one_or_list(value: object) -> list[str]:
    return _strings(value if type(value) is list else [value])


def _label(text: str, *, wildcard: bool = False) -> Label:
    """A label in its one spelling; ``A|B`` (a sublabel name without value) is refused."""
    name, sublabel, value = label_parts(text)
    partial = sublabel and not value and not (wildcard and sublabel == "*")
    if not name or "*" in name or partial:
        raise _refused()
    if not wildcard and "*" in sublabel + value:
        raise _refused()
    return make_label(name, sublabel, value)


def _ranges(
    given: Mapping[str, object], annotators: Mapping[str, int]
) -> dict[int, frozenset[int]]:
    """Each annotator's notes; a name refers to another range (no cycles)."""

    def notes(value: object, seen: frozenset[str]) -> set[int]:
        if type(value) is list:
            return set().union(*(notes(item, seen) for item in value))
        if type(value) is int and value >= 0:
            return {value}
        if type(value) is not str:
            raise _refused()
        if _NUMBER.fullmatch(value):
            return {int(value)}
        span = _RANGE.fullmatch(value)
        if span:
            first, last = int(span[1]), int(span[2])
            if last < first or last - first >= MAX_RANGE_NOTES:
                raise _refused()
            return set(range(first, last + 1))
        if value in given and value not in seen:
            return notes(given[value], seen | {value})
        raise _refused()  # an unknown range name, or a cycle

    ranges: dict[int, frozenset[int]] = {}
    for name, value in given.items():
        found = notes(value, frozenset({name}))
        if len(found) > MAX_RANGE_NOTES:
            raise _refused()
        if name in annotators:
            ranges[annotators[name]] = frozenset(found)
    return ranges


# --------------------------------------------------------------------------- the YAML subset


def yaml_subset(text: str) -> dict[str, object]:
    """The documented YAML subset as a dict (see the module docstring).

    Raises:
        ChartscoreError: ``invalid_config`` with the line of the first line outside it.
    """
    lines: list[tuple[int, int, str]] = []  # (line number, indent, content)
    for number, raw in enumerate(text.splitlines(), start=1):
        content = _strip_comment(raw, number).rstrip()
        if not content.strip():
            continue
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise _refused(number)
        if number == 1 and content.strip() in ("---",):
            continue
        indent = len(content) - len(content.lstrip(" "))
        lines.append((number, indent, content.strip()))
    document, end = _block_mapping(lines, 0, 0)
    if end != len(lines):
        raise _refused(lines[end][0])
    return document


def _strip_comment(raw: str, number: int) -> str:
    quote = ""
    for index, char in enumerate(raw):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or raw[index - 1] in " \t"):
            return raw[:index]
    if quote:
        raise _refused(number)
    return raw


def _block_mapping(
    lines: list[tuple[int, int, str]], start: int, indent: int
) -> tuple[dict[str, object], int]:
    out: dict[str, object] = {}
    index = start
    while index < len(lines):
        number, here, content = lines[index]
        if here < indent:
            break
        if here > indent or content.startswith("- "):
            raise _refused(number)
        match = _KEY_LINE.fullmatch(content)
        if match is None:
            raise _refused(number)
        key = _scalar(match[1], number)
        if type(key) is not str or key in out:
            raise _refused(number)
        index += 1
        if match[2]:
            out[key] = _inline(match[2], number)
            continue
        if index < len(lines) and lines[index][1] > indent:
            child = lines[index][1]
            if lines[index][2].startswith("- ") or lines[index][2] == "-":
                out[key], index = _block_list(lines, index, child)
            else:
                out[key], index = _block_mapping(lines, index, child)
        else:
            out[key] = None
    return out, index


def _block_list(
    lines: list[tuple[int, int, str]], start: int, indent: int
) -> tuple[list[object], int]:
    out: list[object] = []
    index = start
    while index < len(lines):
        number, here, content = lines[index]
        if here < indent:
            break
        if here > indent or not content.startswith("- "):
            raise _refused(number)
        out.append(_inline(content[2:].strip(), number))
        index += 1
    return out, index


def _inline(text: str, number: int) -> object:
    if text.startswith("["):
        if not text.endswith("]"):
            raise _refused(number)
        inner = text[1:-1].strip()
        if not inner:
            return []
        return [_scalar(item.strip(), number) for item in _split_flow(inner, number)]
    return _scalar(text, number)


def _split_flow(inner: str, number: int) -> list[str]:
    items: list[str] = []
    quote, current = "", list[str]()
    for char in inner:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ",":
            items.append("".join(current))
            current = []
            continue
        elif char in "[]{}":
            raise _refused(number)
        current.append(char)
    items.append("".join(current))
    if any(not item.strip() for item in items):
        raise _refused(number)
    return items


def _scalar(text: str, number: int) -> object:
    if len(text) >= 2 and text[0] == text[-1] == "'":
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            raise _refused(number)
        return inner.replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        inner = text[1:-1]
        if '"' in inner or "\\" in inner:
            raise _refused(number)
        return inner
    if not text or text[0] in "'\"[]{}&*!|>%@`,?" or ": " in text or text.endswith(":"):
        raise _refused(number)
    if re.fullmatch(r"-?[0-9]{1,15}", text):
        return int(text)
    return text
