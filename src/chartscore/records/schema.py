"""The optional field schema: per-field type and options, authored by developers.

A schema maps field ids to a type and its options (ordinal levels, categorical
and multi-select choices, numeric and date tolerances). It is developer-written
configuration, not patient data, so level and choice names may appear in docs;
errors still name only the code and, when valid, the field id.

Format (JSON, or TOML for a ``.toml`` file)::

    {"fields": {"triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3"]},
                "vitals.weight_kg": {"type": "number", "tolerance": "0.5"}},
     "strata": {"site": ["A", "B"]}}

``strata`` (optional) declares the case-level sampling strata a strata file may
name (:mod:`chartscore.records.strata`): only declared keys and labels ever
reach a report, since an undeclared label might identify someone.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Final

import attrs

from chartscore._format import MAX_LABEL_NAME
from chartscore.documents.canonical_json import MAX_SAFE_INTEGER
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.metrics import FieldType, field_type_or_none
from chartscore.records import _rules
from chartscore.records.normalize import normalize_text, number_key
from chartscore.records.plugins import valid_reference

MAX_PLUGINS: Final = 16
"""The most plugins one field may name."""

MAX_LEVELS: Final = 10_000
"""The most levels an ordinal field may declare (kappa and the level index stay cheap)."""

_OPTIONS: Final[Mapping[FieldType, frozenset[str]]] = {
    kind: options | {"plugins"}
    for kind, options in {
        FieldType.TEXT: frozenset({"match", "threshold"}),
        FieldType.CATEGORICAL: frozenset({"choices", "choice_labels"}),
        FieldType.NUMBER: frozenset({"tolerance"}),
        FieldType.BOOLEAN: frozenset[str](),
        FieldType.DATE: frozenset({"tolerance_days"}),
        FieldType.ORDINAL: frozenset({"levels", "choice_labels"}),
        FieldType.MULTI: frozenset({"choices", "choice_labels"}),
    }.items()
}

MAX_LABEL_LENGTH: Final = 200
"""The longest display label of a choice or level (one line, for a table cell)."""

Level = str | int

MAX_STRATUM_KEYS: Final = 8
"""The most stratum keys a schema may declare."""

MAX_STRATUM_LABELS: Final = 256
"""The most labels one stratum key may declare."""

STRATUM_KEY_PATTERN: Final = re.compile(r"[a-z][a-z0-9_]{0,31}")
"""A stratum key: a lowercase name such as ``site`` or ``abstractor``."""

STRATUM_LABEL_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A stratum label: letters, digits, ``_ . -`` (never ``=``, ``/`` or ``:``, the slice id's)."""

Strata = tuple[tuple[str, tuple[str, ...]], ...]
"""Declared strata: (key, its labels in declared order), keys sorted."""

Sampling = tuple[str, tuple[Decimal, ...]]
"""A declared sampling design: the stratum key, and each of its labels' sampling fraction."""

MATCH_MODES: Final = ("regex", "fuzzy")
"""The declared match modes of a ``text`` field (docs/metrics.md)."""


def _schema_error(code: ErrorCode, field_id: object = None) -> ChartscoreError:
    # Name the field only when its id is a valid schema name (never free text).
    shown = field_id if _rules.is_field_id(field_id) else None
    return ChartscoreError(code, input=InputKind.SCHEMA, field_id=shown)  # type: ignore[arg-type]


def _spec_type(value: object) -> FieldType:
    found = field_type_or_none(value)
    if found is None:
        raise _schema_error(ErrorCode.SCHEMA_UNKNOWN_TYPE)
    return found


def _levels(raw: object) -> tuple[Level, ...]:
    if (type(raw) is not list and type(raw) is not tuple) or not 2 <= len(raw) <= MAX_LEVELS:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS)
    seen: set[tuple[str, object]] = set()
    for level in raw:
        if type(level) is int and -MAX_SAFE_INTEGER <= level <= MAX_SAFE_INTEGER:
            marker: tuple[str, object] = ("int", level)
        elif (
            type(level) is str
            and _rules.is_text(level)
            and _label_name(name := normalize_text(level))
        ):
            marker = ("str", name)
        else:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS)
        if marker in seen:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS)
        seen.add(marker)
    return tuple(raw)


def _label_name(name: str) -> bool:
    # A declared choice (or level) names its per-label metrics in a report: one printable
    # line of at most MAX_LABEL_NAME characters, normalized, or the report's own reader
    # would refuse what score wrote (and a terminal would run its escapes).
    return 0 < len(name) <= MAX_LABEL_NAME and name.isprintable()


def _choices(raw: object) -> frozenset[str]:
    kind = type(raw)
    if not (kind is list or kind is tuple or kind is set or kind is frozenset) or not raw:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES)
    normalized = []
    for choice in raw:  # type: ignore[attr-defined]
        if type(choice) is not str or not _rules.is_text(choice):  # a label names it
            raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES)
        name = normalize_text(choice)
        if not _label_name(name):
            raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES)
        normalized.append(name)
    if len(set(normalized)) != len(normalized):
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES)
    return frozenset(normalized)


def _choice_labels(raw: object, declared: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``{code: label}`` for declared codes (normalized, as scoring names them), sorted by code.

    Labels are display text for people (a REDCap choice's label): one printable line of 1
    to :data:`MAX_LABEL_LENGTH` characters, distinct within the field, never scored.
    """
    known = set(declared)
    if type(raw) is not dict or not raw:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICE_LABELS)
    labels: dict[str, str] = {}
    for code, label in raw.items():
        key = normalize_text(code) if type(code) is str else None
        if key is None or key not in known or key in labels:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICE_LABELS)
        if not (
            type(label) is str
            and 0 < len(label) <= MAX_LABEL_LENGTH
            and label.isprintable()
            and label.strip() == label
        ):
            raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICE_LABELS)
        labels[key] = label
    if len(set(labels.values())) != len(labels):
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICE_LABELS)
    return tuple(sorted(labels.items()))


def _level_codes(levels: Sequence[Level]) -> list[str]:
    # An ordinal level as a choice_labels key names it: 2 and "2" are one level.
    return [normalize_text(str(level)) for level in levels]


def _tolerance(raw: object) -> Decimal:
    # Exact numbers only: an int or a finite Decimal within the number limits.
    number = number_key(raw) if (type(raw) is int or type(raw) is Decimal) else None
    if number is None or number < 0:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_TOLERANCE)
    return Decimal(number)


def _match(mode: object, threshold: object) -> tuple[str, Decimal | None]:
    # "regex" alone, or "fuzzy" with a threshold 0 < t <= 1 (an exact number).
    if type(mode) is not str or mode not in MATCH_MODES or (mode == "regex") != (threshold is None):
        raise _schema_error(ErrorCode.SCHEMA_INVALID_MATCH)
    if mode == "regex":
        return mode, None
    number = (
        number_key(threshold) if (type(threshold) is int or type(threshold) is Decimal) else None
    )
    if number is None or not 0 < number <= 1:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_MATCH)
    return mode, Decimal(number)


def _plugins(raw: object) -> tuple[str, ...]:
    # 1 to 16 distinct references (entry point names or module:attribute paths), sorted.
    if (type(raw) is not list and type(raw) is not tuple) or not 1 <= len(raw) <= MAX_PLUGINS:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_PLUGINS)
    if not all(valid_reference(item) for item in raw) or len(set(raw)) != len(raw):
        raise _schema_error(ErrorCode.SCHEMA_INVALID_PLUGINS)
    return tuple(sorted(raw))


def strata_option(raw: object) -> Strata:
    """Validate a schema's ``strata``: ``{key: [label, ...]}``, as (key, labels) sorted by key.

    1 to 8 keys (:data:`STRATUM_KEY_PATTERN`), each with 1 to 256 distinct labels
    (:data:`STRATUM_LABEL_PATTERN`), kept in declared order.

    Raises:
        ChartscoreError: ``schema_invalid_strata`` (the key and labels are never shown).
    """
    if type(raw) is not dict or not 1 <= len(raw) <= MAX_STRATUM_KEYS:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_STRATA)
    declared = []
    for key, labels in raw.items():
        if type(key) is not str or STRATUM_KEY_PATTERN.fullmatch(key) is None:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_STRATA)
        if (type(labels) is not list and type(labels) is not tuple) or not (
            1 <= len(labels) <= MAX_STRATUM_LABELS
        ):
            raise _schema_error(ErrorCode.SCHEMA_INVALID_STRATA)
        if not all(
            type(label) is str and STRATUM_LABEL_PATTERN.fullmatch(label) for label in labels
        ) or len(set(labels)) != len(labels):
            raise _schema_error(ErrorCode.SCHEMA_INVALID_STRATA)
        declared.append((key, tuple(labels)))
    return tuple(sorted(declared))


def sampling_option(raw: object, strata: Strata) -> Sampling:
    """Validate ``sampling``: ``{key: {label: fraction}}`` for one declared key, every label.

    Each fraction is an exact number (or a number literal string) with ``0 < f <= 1``.

    Raises:
        ChartscoreError: ``schema_invalid_sampling``.
    """
    declared = dict(strata)
    if type(raw) is not dict or len(raw) != 1:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_SAMPLING)
    ((key, fractions),) = raw.items()
    labels = declared.get(key) if type(key) is str else None
    if labels is None or type(fractions) is not dict or set(fractions) != set(labels):
        raise _schema_error(ErrorCode.SCHEMA_INVALID_SAMPLING)
    found = []
    for label in labels:
        given = _document_tolerance(fractions[label])
        number = number_key(given) if (type(given) is int or type(given) is Decimal) else None
        if number is None or not 0 < number <= 1:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_SAMPLING)
        found.append(Decimal(number))
    return key, tuple(found)


def _tolerance_days(raw: object) -> int:
    # At most what canonical JSON writes (the ledger's schema digest), as for ordinal levels.
    if type(raw) is not int or not 0 <= raw <= MAX_SAFE_INTEGER:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_TOLERANCE)
    return raw


@attrs.frozen(init=False)
class FieldSpec:
    """One field's declared type and options, validated when built.

    Args:
        field_type: A :class:`FieldType` (or its string value).
        levels: Ordinal levels in order: 2 to 10,000 distinct strings or
            integers (strings distinct after text normalization). Required for
            ``ordinal`` fields; for no other type.
        choices: Allowed ``categorical`` or ``multi`` items, as a list, tuple
            or set of distinct strings (distinct after text normalization);
            stored normalized. None when undeclared.
        tolerance: Absolute tolerance of a ``number`` field: a non-negative
            ``int`` or ``Decimal`` (a string such as ``"0.5"`` is read by
            :meth:`Schema.from_dict`, not here). Stored as a Decimal.
        tolerance_days: Tolerance of a ``date`` field: a non-negative ``int``.
        match: A ``text`` field's declared match mode: ``"regex"`` (the gold
            value is a pattern the whole normalized answer must match) or
            ``"fuzzy"`` (with ``threshold``); None when undeclared.
        threshold: The similarity a ``fuzzy`` answer needs, ``0 < t <= 1``,
            an ``int`` or ``Decimal``; stored as a Decimal.
        plugins: Plugin metrics for the field (any type): 1 to 16 distinct
            entry point names or ``module:attribute`` paths, as a list or
            tuple; stored sorted. Resolved when scoring starts
            (docs/plugins.md).
        choice_labels: Display labels of ``categorical`` and ``multi`` choices or
            ``ordinal`` levels, ``{code: label}`` (a REDCap choice's label): renderings
            show them, documents keep the codes, scoring ignores them. Keys must be
            declared (compared normalized), labels one printable line of 1 to 200
            characters, distinct. Stored as (normalized code, label) pairs, sorted.

    Raises:
        ChartscoreError: ``schema_unknown_type``, ``schema_unknown_option`` (an
            option the type does not take), ``schema_invalid_levels``,
            ``schema_invalid_choices``, ``schema_invalid_tolerance``,
            ``schema_invalid_match``, ``schema_invalid_plugins`` or
            ``schema_invalid_choice_labels``, checked in that order. Arguments are
            only ever inspected by their exact type first, so a caller's
            object is never asked anything.
    """

    field_type: FieldType
    levels: tuple[Level, ...] = ()
    choices: frozenset[str] | None = None
    tolerance: Decimal | None = None
    tolerance_days: int | None = None
    match: str | None = None
    threshold: Decimal | None = None
    plugins: tuple[str, ...] = ()
    choice_labels: tuple[tuple[str, str], ...] = ()

    def __init__(
        self,
        field_type: FieldType | str,
        levels: Sequence[Level] = (),
        choices: Iterable[str] | None = None,
        tolerance: Decimal | int | None = None,
        tolerance_days: int | None = None,
        *,
        match: str | None = None,
        threshold: Decimal | int | None = None,
        plugins: Sequence[str] | None = None,
        choice_labels: Mapping[str, str] | None = None,
    ) -> None:
        kind = _spec_type(field_type)
        no_levels = (type(levels) is list or type(levels) is tuple) and not levels
        given = {
            name
            for name, absent in (
                ("levels", no_levels),
                ("choices", choices is None),
                ("tolerance", tolerance is None),
                ("tolerance_days", tolerance_days is None),
                ("match", match is None),
                ("threshold", threshold is None),
                ("plugins", plugins is None),
                ("choice_labels", choice_labels is None),
            )
            if not absent
        }
        if not given <= _OPTIONS[kind]:
            raise _schema_error(ErrorCode.SCHEMA_UNKNOWN_OPTION)
        if kind is FieldType.ORDINAL and no_levels:
            raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS)
        mode, number = (None, None)
        if given & {"match", "threshold"}:
            mode, number = _match(match, threshold)
        checked_levels = _levels(levels) if "levels" in given else ()
        checked_choices = _choices(choices) if "choices" in given else None
        checked_plugins = _plugins(plugins) if "plugins" in given else ()
        labels: tuple[tuple[str, str], ...] = ()
        if "choice_labels" in given:
            declared = _level_codes(checked_levels) if checked_levels else checked_choices
            labels = _choice_labels(_snapshot(choice_labels), declared or ())
        self.__attrs_init__(
            field_type=kind,
            levels=checked_levels,
            choices=checked_choices,
            tolerance=_tolerance(tolerance) if "tolerance" in given else None,
            tolerance_days=_tolerance_days(tolerance_days) if "tolerance_days" in given else None,
            match=mode,
            threshold=number,
            plugins=checked_plugins,
            choice_labels=labels,
        )

    def __getstate__(self) -> dict[str, object]:
        """The attributes by name (what pickle stores)."""
        return {field.name: getattr(self, field.name) for field in attrs.fields(FieldSpec)}

    def __setstate__(self, state: dict[str, object]) -> None:
        # A spec pickled before match modes and plugins existed lacks their attributes.
        values: dict[str, object] = {
            "match": None,
            "threshold": None,
            "plugins": (),
            "choice_labels": (),
        }
        values.update(state)
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def to_dict(self) -> dict[str, object]:
        """The spec as a schema document's entry; :meth:`Schema.from_dict` reads it back equal.

        Choices are written sorted (they are a set), numbers as exact literals.
        """
        out: dict[str, object] = {"type": self.field_type.value}
        if self.levels:
            out["levels"] = list(self.levels)
        if self.choices is not None:
            out["choices"] = sorted(self.choices)
        if self.tolerance is not None:
            out["tolerance"] = str(self.tolerance)
        if self.tolerance_days is not None:
            out["tolerance_days"] = self.tolerance_days
        if self.match == "fuzzy":
            out["match"] = {"fuzzy": str(self.threshold)}
        elif self.match is not None:
            out["match"] = self.match
        if self.plugins:
            out["plugins"] = list(self.plugins)
        if self.choice_labels:
            out["choice_labels"] = dict(self.choice_labels)
        return out

    def level_index(self) -> tuple[dict[int, int], dict[str, int]]:
        """Maps from integer levels and from normalized string levels to positions."""
        ints = {level: i for i, level in enumerate(self.levels) if type(level) is int}
        texts = {
            normalize_text(level): i for i, level in enumerate(self.levels) if type(level) is str
        }
        return ints, texts


def _document_match(raw: object) -> tuple[object, object]:
    # The document's "match": "regex", or {"fuzzy": threshold} (a number or number literal).
    # Types first, so a caller's object never runs its own __eq__ or __hash__ here.
    if type(raw) is dict:
        keys = list(raw)
        if len(keys) != 1 or type(keys[0]) is not str or keys[0] != "fuzzy":
            raise _schema_error(ErrorCode.SCHEMA_INVALID_MATCH)
        return "fuzzy", _document_tolerance(raw["fuzzy"])
    if type(raw) is str and raw == "fuzzy":  # a fuzzy mode needs its threshold
        raise _schema_error(ErrorCode.SCHEMA_INVALID_MATCH)
    return raw, None


def _document_tolerance(raw: object) -> object:
    # The schema document may give a tolerance as a string ("0.5", the number
    # literals of docs/metrics.md) or a float read by its shortest repr; the
    # FieldSpec itself takes exact numbers only.
    if type(raw) is str or type(raw) is float:
        number = number_key(raw)
        return raw if number is None else Decimal(number)
    return raw


def _field_spec(field_id: str, raw: object) -> FieldSpec:
    if type(raw) is not dict:
        raise _schema_error(ErrorCode.INVALID_SCHEMA, field_id)
    type_name = raw.get("type")
    if type(type_name) is not str or type_name not in FieldType._value2member_map_:
        raise _schema_error(ErrorCode.SCHEMA_UNKNOWN_TYPE, field_id)
    options = set(raw) - {"type"}
    allowed = _OPTIONS[FieldType(type_name)] - {"threshold"}  # a document nests it in match
    if not options <= allowed:
        raise _schema_error(ErrorCode.SCHEMA_UNKNOWN_OPTION, field_id)
    # The document's shape: levels and choices are lists (given, even when empty).
    if type_name == FieldType.ORDINAL and type(raw.get("levels")) is not list:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_LEVELS, field_id)
    if "choices" in options and type(raw["choices"]) is not list:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_CHOICES, field_id)
    if "plugins" in options and type(raw["plugins"]) is not list:
        raise _schema_error(ErrorCode.SCHEMA_INVALID_PLUGINS, field_id)
    code: ErrorCode | None = None
    spec: FieldSpec | None = None
    try:
        match, threshold = _document_match(raw["match"]) if "match" in raw else (None, None)
        spec = FieldSpec(
            type_name,
            levels=raw.get("levels", ()),
            choices=raw.get("choices"),
            tolerance=_document_tolerance(raw.get("tolerance")),  # type: ignore[arg-type]
            tolerance_days=raw.get("tolerance_days"),
            match=match,  # type: ignore[arg-type]
            threshold=threshold,  # type: ignore[arg-type]
            plugins=raw.get("plugins"),
            choice_labels=raw.get("choice_labels"),
        )
    except ChartscoreError as error:
        code = error.code
    if spec is None:
        # Raised here, outside the handler, now naming the field.
        raise _schema_error(code or ErrorCode.INVALID_SCHEMA, field_id)
    return spec


_MAX_SCHEMA_DEPTH: Final = 8
_FAILED: Final = object()


def _is_mapping(value: object) -> bool:
    # isinstance() runs a proxy's __class__: a value that cannot say is a leaf,
    # which the rules then refuse by its exact type.
    answer = False
    try:
        answer = isinstance(value, Mapping)
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        answer = False
    return answer


def _copy(value: object, depth: int) -> object:
    # Mappings become dicts with str keys and lists/tuples become lists; any
    # other value is kept as it is and later only inspected by its exact type.
    if depth > _MAX_SCHEMA_DEPTH:
        raise RecursionError
    kind = type(value)
    if kind is str or kind is int or kind is bool or kind is float or kind is Decimal:
        return value
    if value is None:
        return value
    if kind is dict or _is_mapping(value):
        copied = {}
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise TypeError
            copied[key] = _copy(item, depth + 1)
        return copied
    if kind is list or kind is tuple:
        return [_copy(item, depth + 1) for item in value]  # type: ignore[attr-defined]
    return value


def _snapshot(document: object) -> object:
    """A plain dict/list copy of a caller's schema document.

    The caller's Mapping may raise anything while it is read (even
    ``isinstance`` may run its code); that exception is dropped here (never
    chained), and the document is refused.
    """
    copied: object = _FAILED
    try:
        copied = _copy(document, 0)
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        copied = _FAILED
    if copied is _FAILED:
        raise _schema_error(ErrorCode.INVALID_SCHEMA)
    return copied


def _field_pairs(fields: object) -> list[tuple[object, object]] | None:
    # The (field id, spec) pairs of a caller's mapping, or None if reading it failed.
    pairs: list[tuple[object, object]] | None = None
    try:
        if type(fields) is dict or isinstance(fields, Mapping):
            pairs = list(fields.items())
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        pairs = None
    return pairs


@attrs.frozen(init=False, hash=False)
class Schema:
    """Declared field types and options, keyed by field id, validated when built.

    Build one from :class:`FieldSpec` objects, with :meth:`from_dict` (the JSON
    shape) or with :func:`chartscore.io.load_schema`.

    Args:
        fields: A mapping from field ids (valid dotted names) to
            :class:`FieldSpec`; it is copied.

    Raises:
        strata: Declared case strata, ``{key: [label, ...]}`` (docs/formats.md,
            "Strata"); stored as (key, labels) pairs sorted by key. Empty when
            undeclared.

    Raises:
        ChartscoreError: ``invalid_schema`` (not a mapping, reading it failed,
            or a value is not a FieldSpec), ``invalid_field_id`` or
            ``schema_invalid_strata``.
    """

    fields: Mapping[str, FieldSpec]
    strata: Strata = ()
    sampling: Sampling | None = None

    def __init__(
        self,
        fields: Mapping[str, FieldSpec],
        strata: Mapping[str, Sequence[str]] | None = None,
        sampling: Mapping[str, Mapping[str, object]] | None = None,
    ) -> None:
        pairs = _field_pairs(fields)
        if pairs is None:
            raise _schema_error(ErrorCode.INVALID_SCHEMA)
        copied: dict[str, FieldSpec] = {}
        for field_id, spec in pairs:
            if not _rules.is_field_id(field_id):
                raise _schema_error(ErrorCode.INVALID_FIELD_ID)
            if type(spec) is not FieldSpec:
                raise _schema_error(ErrorCode.INVALID_SCHEMA, field_id)
            copied[field_id] = spec  # type: ignore[index]
        declared = () if strata is None else strata_option(_snapshot(strata))
        design = None if sampling is None else sampling_option(_snapshot(sampling), declared)
        # Read-only: a schema is validated when built, so its fields cannot change after.
        fields_view = types.MappingProxyType(copied)
        self.__attrs_init__(fields=fields_view, strata=declared, sampling=design)

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.fields.items())), self.strata, self.sampling))

    def __getstate__(self) -> dict[str, object]:
        """The attributes by name (what pickle stores: the fields as a plain dict)."""
        return {"fields": dict(self.fields), "strata": self.strata, "sampling": self.sampling}

    def __setstate__(self, state: dict[str, object]) -> None:
        # A schema pickled before strata existed lacks the attribute.
        values: dict[str, object] = {"strata": (), "sampling": None}
        values.update(state)
        fields = values.get("fields")
        if isinstance(fields, dict):
            values["fields"] = types.MappingProxyType(dict(fields))
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def strata_labels(self) -> dict[str, tuple[str, ...]]:
        """The declared strata as ``{key: labels}`` (empty when undeclared)."""
        return dict(self.strata)

    @classmethod
    def from_dict(cls, document: object) -> Schema:
        """Validate a schema document ``{"fields": {field_id: {"type": ..., ...}}}``.

        The document may also declare ``"strata": {key: [label, ...]}``.

        Raises:
            ChartscoreError: ``invalid_schema``, ``invalid_field_id``,
                ``schema_invalid_strata``,
                ``schema_unknown_type``, ``schema_unknown_option``,
                ``schema_invalid_levels``, ``schema_invalid_choices``,
                ``schema_invalid_tolerance``, ``schema_invalid_match`` or
                ``schema_invalid_plugins``.
        """
        document = _snapshot(document)
        if type(document) is not dict or not (
            {"fields"} <= set(document) <= {"fields", "strata", "sampling"}
        ):
            raise _schema_error(ErrorCode.INVALID_SCHEMA)
        declared = document["fields"]
        if type(declared) is not dict:
            raise _schema_error(ErrorCode.INVALID_SCHEMA)
        fields: dict[str, FieldSpec] = {}
        for field_id, raw in declared.items():
            if not _rules.is_field_id(field_id):
                raise _schema_error(ErrorCode.INVALID_FIELD_ID)
            fields[field_id] = _field_spec(field_id, raw)
        if "strata" not in document:
            if "sampling" in document:  # a sampling design needs its declared strata
                raise _schema_error(ErrorCode.SCHEMA_INVALID_SAMPLING)
            return cls(fields=fields)
        return cls(
            fields=fields,
            strata=dict(strata_option(document["strata"])),
            sampling=document.get("sampling"),
        )

    def to_dict(self) -> dict[str, object]:
        """The schema document ``{"fields": {...}}``; :meth:`from_dict` reads it back equal."""
        out: dict[str, object] = {
            "fields": {name: self.fields[name].to_dict() for name in sorted(self.fields)}
        }
        if self.strata:
            out["strata"] = {key: list(labels) for key, labels in self.strata}
        if self.sampling is not None:
            key = self.sampling[0]
            fractions = self.sampling_fractions()
            out["sampling"] = {key: {name[len(key) + 1 :]: str(f) for name, f in fractions.items()}}
        return out

    def sampling_fractions(self) -> dict[str, Decimal]:
        """Each sampled stratum's fraction by slice name (``"site=A"``); empty without a design."""
        if self.sampling is None:
            return {}
        key, fractions = self.sampling
        labels = dict(self.strata)[key]
        return {f"{key}={name}": f for name, f in zip(labels, fractions, strict=True)}

    def choice_labels(self) -> dict[str, dict[str, str]]:
        """Each field's declared display labels, ``{field_id: {code: label}}`` (codes
        normalized, as reports name them); fields without labels are left out."""
        return {
            name: dict(spec.choice_labels)
            for name, spec in sorted(self.fields.items())
            if spec.choice_labels
        }

    def get(self, field_id: str) -> FieldSpec | None:
        """The spec for ``field_id``, or None when the schema does not declare it.

        Anything but an exact ``str`` is not declared (its ``__hash__`` is never asked).
        """
        if type(field_id) is not str:
            return None
        return self.fields.get(field_id)


def to_schema(value: object) -> Schema:
    """A :class:`Schema` from a Schema or a schema document (the JSON shape).

    A Schema is used as it is; anything that merely claims to be one (a
    subclass or a lazy proxy) is rebuilt from its ``fields``, so scoring never
    touches the caller's object again. Anything else is read by
    :meth:`Schema.from_dict`. A caller's exception is never kept.

    Raises:
        ChartscoreError: a schema code (see :meth:`Schema.from_dict`).
    """
    if type(value) is Schema:
        return value
    fields: object = _FAILED
    try:
        if isinstance(value, Schema):
            fields = value.fields
    except Exception:  # noqa: BLE001 - the caller's exception must not survive
        fields = None
    if fields is None:
        raise _schema_error(ErrorCode.INVALID_SCHEMA)
    if fields is not _FAILED:
        strata: object = None
        sampling: object = None
        try:
            strata = dict(value.strata) or None  # type: ignore[attr-defined]
            sampling = value.to_dict().get("sampling")  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - the caller's exception must not survive
            strata = None
        return Schema(fields=fields, strata=strata, sampling=sampling)  # type: ignore[arg-type]
    return Schema.from_dict(value)
