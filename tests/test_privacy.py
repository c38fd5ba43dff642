"""Privacy canaries: no value, case id, digest, offset, key name or path ever leaks.

Each test plants hypothesis-generated canary markers in the private slots of the
inputs (case ids, text, categorical, numeric and multi-select values, digests,
offsets, unknown key names, file paths, values that make a record invalid) and
searches every channel that can leave the process or reach a log: record reprs,
exception messages, reprs and rendered tracebacks, the cause/context chain,
pickles, the command line's stdout and stderr, reports and files written with
``--out``, and every rendered format (terminal table, Markdown, CSV, HTML), where
a field id is the only input string that may appear. The report loader's errors
are searched too. docs/formats.md and docs/errors.md state the rules.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import json
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import (
    ChartscoreError,
    ErrorCode,
    EvidenceChain,
    GoldField,
    InputKind,
    Prediction,
    Schema,
    SourceLocation,
    load_schema,
    score,
    score_files,
)
from chartscore.cli import main as cli_main
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ErrorHint, describe
from chartscore.io import MAX_LINE_BYTES
from chartscore.records.match_engines import MAX_REGEX_ANSWER, fuzzy_text_limit
from chartscore.records.normalize import normalize_text
from chartscore.records.schema import FieldSpec
from chartscore.stats.magnitude import parse_exact_decimal

from helpers import CORE_METRIC_NAMES, LABEL_METRIC_NAMES, TYPE_METRIC_NAMES, examples

E = ErrorCode

# The slow tests skip shrinking: any canary exposes a leak equally well, and a
# failing example is reported as generated.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)

# --- canaries -------------------------------------------------------------------

_MARKER_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ"
_FULLWIDTH_SHIFT = 0xFEE0  # "A" + shift is FULLWIDTH LATIN CAPITAL LETTER A; NFKC undoes it
_REPR_OFFSET = 987654321  # a fixed, distinctive offset canary for the repr tests


@dataclass(frozen=True)
class Canary:
    """Markers that cannot collide with normal output.

    ``marker`` is uppercase ASCII starting with "ZQ"; ``wide`` is the same text in
    fullwidth letters, whose NFKC/casefolded form is ``marker`` lowercased.
    ``hexmark`` (16 lowercase hex digits starting with "fd", so never part of a
    number) is embedded in every canary digest. ``number`` is a numeric string
    with at least five integer digits and a decimal point, so it cannot be part
    of a report number (rates and intervals are at most 1, counts are small).
    ``offset`` has at least 16 digits.
    """

    marker: str
    hexmark: str
    number: str
    offset: int

    @property
    def wide(self) -> str:
        return "".join(chr(ord(char) + _FULLWIDTH_SHIFT) for char in self.marker)

    def case_id(self, index: int) -> str:
        # Alternate ASCII and fullwidth case ids so normalized forms are searched too.
        return f"case-{self.marker}-{index}" if index % 2 == 0 else f"{self.wide}:{index}"

    @property
    def long_case_id(self) -> str:
        # Invalid: longer than 128 characters.
        return "x" * 120 + self.marker

    @property
    def bad_field_id(self) -> str:
        # Invalid: field ids are lowercase.
        return "dx." + self.marker

    def digest(self, slot: int) -> str:
        return "sha256:" + self.hexmark + format(slot, "048x")

    @property
    def needles(self) -> tuple[str, ...]:
        forms: set[str] = set()
        for text in (self.marker, self.wide):
            nfkc = unicodedata.normalize("NFKC", text)
            forms |= {text, text.casefold(), text.lower(), nfkc, nfkc.casefold()}
        forms |= {self.hexmark, self.hexmark.upper(), self.number, str(Decimal(self.number))}
        forms |= {str(self.offset + step) for step in range(8)}
        return tuple(sorted(forms))

    @property
    def byte_needles(self) -> tuple[bytes, ...]:
        return tuple(needle.encode("utf-8") for needle in self.needles)


markers = st.text(alphabet=_MARKER_LETTERS, min_size=10, max_size=16).map(lambda s: "ZQ" + s)
hexmarks = st.text(alphabet="0123456789abcdef", min_size=14, max_size=14).map(lambda s: "fd" + s)
numbers = st.builds(
    "{}.{}".format,
    st.integers(min_value=10_000, max_value=99_999),
    st.integers(min_value=100_000, max_value=999_999).filter(lambda n: n % 10 != 0),
)
offsets = st.integers(min_value=10**15, max_value=2**62)
canaries = st.builds(Canary, markers, hexmarks, numbers, offsets)


def assert_clean_text(text: str, canary: Canary, where: str, declared: Iterable[str] = ()) -> None:
    """No canary in ``text``, except inside a ``declared`` label's name (a schema choice).

    docs/privacy.md: a report names only the labels a schema declares; a
    canary planted in a choice may appear as exactly that label, nowhere else.
    """
    for label in sorted(declared, key=len, reverse=True):
        text = text.replace(label, "<declared label>")
    for needle in canary.needles:
        assert needle not in text, f"{where} leaks the canary {needle!r}: {text[:500]!r}"


def assert_clean_bytes(
    data: bytes, canary: Canary, where: str, declared: Iterable[str] = ()
) -> None:
    for label in sorted(declared, key=len, reverse=True):
        data = data.replace(label.encode("utf-8"), b"<declared label>")
    for needle in canary.byte_needles:
        assert needle not in data, f"{where} leaks the canary {needle!r}"


def assert_clean_error(
    error: BaseException, canary: Canary, code: ErrorCode, message: str | None = None
) -> None:
    """A controlled, value-free ChartscoreError with no cause or context."""
    assert type(error) is ChartscoreError, (
        f"{type(error).__name__} escaped instead of a ChartscoreError: "
        f"{''.join(traceback.format_exception_only(error))[:300]!r}"
    )
    assert error.code is code, (error.code, code)
    if message is not None:
        assert str(error) == message
    assert error.__cause__ is None
    assert error.__context__ is None
    channels = {
        "str(error)": str(error),
        "repr(error)": repr(error),
        "error.args": repr(error.args),
        "vars(error)": repr(vars(error)),
        "traceback": "".join(traceback.format_exception(error)),
    }
    for where, text in channels.items():
        assert_clean_text(text, canary, where)
    assert "Traceback" not in str(error)
    pickled = pickle.dumps(error)
    assert_clean_bytes(pickled, canary, "pickle")
    clone = pickle.loads(pickled)
    assert type(clone) is ChartscoreError
    assert (clone.code, clone.input, clone.line, clone.field_id, clone.key, clone.item) == (
        error.code,
        error.input,
        error.line,
        error.field_id,
        error.key,
        error.item,
    )
    assert str(clone) == str(error)
    assert clone.__cause__ is None and clone.__context__ is None


def raised(call: Callable[[], object]) -> BaseException:
    """The exception ``call`` raises (any Exception, so an escaping one is reported)."""
    try:
        call()
    except Exception as error:
        return error
    pytest.fail("expected an error, but the call succeeded")


# --- the closed report vocabulary ---------------------------------------------

TOP_KEYS = frozenset(
    {"format", "format_version", "scorer", "confidence", "overall", "by_field", "by_field_type"}
)
COUNT_KEYS = frozenset(
    {
        "field_count",
        "answerable_count",
        "unanswerable_count",
        "missing_count",
        "answered_count",
        "abstained_count",
    }
)
METRIC_NAMES = frozenset(CORE_METRIC_NAMES + TYPE_METRIC_NAMES)
LABEL_METRICS = frozenset(LABEL_METRIC_NAMES)
METRIC_KEYS = frozenset({"success_count", "total_count", "interval"})
POOLED_METRIC_KEYS = METRIC_KEYS | {"design_effect", "clustered_interval", "case_count"}
KAPPA_KEYS = frozenset({"value", "interval", "pairs"})
COEFFICIENT_KEYS = frozenset({"ac1", "ac2", "alpha"})
ALPHA_KEYS = KAPPA_KEYS | {"metric"}
ALPHA_METRICS = frozenset({"nominal", "ordinal", "interval"})
EXACT_SUMS = frozenset({"sum_absolute", "sum_signed", "sum_squares", "brier_sum"})
MAGNITUDE_KEYS = frozenset(
    {
        "error_magnitude",
        "unit",
        "field",
        "days",
        "pairs",
        "mean_absolute_error",
        "mean_signed_error",
        "estimate",
        "limits_of_agreement",
        "chance",
        "gold_rows",
        "sum_deviation",
        "mean_absolute_deviation",
        "declared_uncertainty",
        "rows",
        "agreed",
        "without_uncertainty",
        "ranked_twice",
        "auroc",
        "auroc_interval",
        "auroc_standard_error",
        "brier_score",
        "risk_coverage",
    }
)
TYPE_NAMES = frozenset({"text", "categorical", "number", "boolean", "date", "ordinal", "multi"})


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def _check_interval(interval: object) -> None:
    assert interval is None or (
        type(interval) is list and len(interval) == 2 and all(map(_is_number, interval))
    ), interval


def _check_slice(part: object, *, pooled: bool = False) -> None:
    assert type(part) is dict
    assert set(part) >= COUNT_KEYS
    for key, value in part.items():
        if key in COUNT_KEYS:
            assert type(value) is int and value >= 0
        elif key in METRIC_NAMES or key in LABEL_METRICS:
            assert type(value) is dict
            assert set(value) == (POOLED_METRIC_KEYS if pooled else METRIC_KEYS)
            assert type(value["success_count"]) is int
            assert type(value["total_count"]) is int
            _check_interval(value["interval"])
            if pooled:
                assert value["design_effect"] is None or _is_number(value["design_effect"])
                _check_interval(value["clustered_interval"])
        elif key == "kappa" or key in COEFFICIENT_KEYS:
            assert type(value) is dict and set(value) == (
                ALPHA_KEYS if key == "alpha" else KAPPA_KEYS
            )
            assert value["value"] is None or _is_number(value["value"])
            assert type(value["pairs"]) is int
            _check_interval(value["interval"])
            assert key != "alpha" or value["metric"] in ALPHA_METRICS
        elif key in ("micro_f1", "macro_f1", "pooled_kappa"):
            assert value is None or _is_number(value)
        elif key in ("error_magnitude", "declared_uncertainty") and not pooled:
            assert type(value) is dict
            for name in EXACT_SUMS & set(value) | (
                {"sum_deviation"} & set(value.get("chance", {}))
            ):
                found = value[name] if name in value else value["chance"][name]
                assert parse_exact_decimal(found) is not None, (name, found)
        elif key == "labels" and not pooled:
            assert type(value) is dict
            for table in value.values():
                assert type(table) is dict and set(table) == LABEL_METRICS | {"f1"}
                for name in LABEL_METRICS:
                    _check_slice({**dict.fromkeys(COUNT_KEYS, 0), name: table[name]})
                assert table["f1"] is None or _is_number(table["f1"])
        else:
            pytest.fail(f"unexpected slice key {key!r}")


def _walk_strings(value: object) -> Iterator[str]:
    if type(value) is str:
        yield value
    elif type(value) is dict:
        for key, item in value.items():
            yield key
            yield from _walk_strings(item)
    elif type(value) is list:
        for item in value:
            yield from _walk_strings(item)
    else:
        assert value is None or _is_number(value), value


def _no_constants(name: str) -> object:
    pytest.fail(f"report holds the non-JSON constant {name}")


def assert_report_vocabulary(
    text: str, gold_field_ids: set[str], declared: Iterable[str] = ()
) -> None:
    """Only closed keys, gold field ids, type names, numbers and null; nothing else."""
    document = json.loads(text, parse_constant=_no_constants)
    assert type(document) is dict and set(document) == TOP_KEYS
    assert document["format"] == "chartscore.report"
    assert document["format_version"] == 3
    assert document["confidence"] == 0.95
    assert document["scorer"] == {"name": "chartscore", "version": chartscore.__version__}
    _check_slice(document["overall"], pooled=True)
    assert "kappa" not in document["overall"]
    assert type(document["by_field"]) is dict
    assert set(document["by_field"]) == gold_field_ids
    for part in document["by_field"].values():
        _check_slice(part)
    assert type(document["by_field_type"]) is dict
    assert set(document["by_field_type"]) <= TYPE_NAMES
    for part in document["by_field_type"].values():
        _check_slice(part, pooled=True)
    allowed = (
        TOP_KEYS
        | COUNT_KEYS
        | METRIC_NAMES
        | POOLED_METRIC_KEYS
        | KAPPA_KEYS
        | TYPE_NAMES
        | {"kappa", "name", "version", "chartscore.report", "chartscore", chartscore.__version__}
        | gold_field_ids
        | LABEL_METRICS
        | COEFFICIENT_KEYS
        | ALPHA_METRICS
        | {"micro_f1", "macro_f1", "pooled_kappa", "labels", "f1", "metric", "false", "true"}
        | MAGNITUDE_KEYS
        | EXACT_SUMS
        | set(declared)
    )
    sums = set(_exact_sums(document))  # exact decimal sums: checked by _check_slice
    for string in _walk_strings(document):
        assert string in allowed or string in sums, (
            f"report holds a string outside the vocabulary: {string!r}"
        )


def _exact_sums(value: object) -> Iterator[str]:
    # The exact decimal strings of error magnitudes and declared uncertainty (and nothing else).
    if type(value) is dict:
        for key, item in value.items():
            if key in EXACT_SUMS | {"sum_deviation"} and type(item) is str:
                yield item
            else:
                yield from _exact_sums(item)
    elif type(value) is list:
        for item in value:
            yield from _exact_sums(item)


# --- the canary data set -----------------------------------------------------------

TEXT = "hx.note"
CAT = "hx.smoking"
NUM = "vitals.weight"
BOOL = "hx.flag"
DATE = "dx.onset"
ORD = "triage.acuity"
MULTI = "hx.symptoms"
FUZZY = "dx.summary"  # a text field with a fuzzy match mode
REGEX = "dx.code"  # a text field whose gold values are patterns
FIELD_TYPES = {
    TEXT: "text",
    CAT: "categorical",
    NUM: "number",
    BOOL: "boolean",
    DATE: "date",
    ORD: "ordinal",
    MULTI: "multi",
    FUZZY: "text",
    REGEX: "text",
}
MISSING = object()  # no prediction for this gold row


def schema_document(c: Canary) -> dict[str, object]:
    m, w = c.marker, c.wide
    return {
        "fields": {
            CAT: {"type": "categorical", "choices": [f"{m} former", f"{m} never", f"{w} current"]},
            NUM: {"type": "number", "tolerance": "0.5"},
            DATE: {"type": "date", "tolerance_days": 3},
            ORD: {"type": "ordinal", "levels": [f"{m} low", f"{m} mid", f"{w} high"]},
            MULTI: {"type": "multi", "choices": [f"{m} cough", f"{w} fever", f"{m} rash"]},
            FUZZY: {"type": "text", "match": {"fuzzy": "0.8"}},
            REGEX: {"type": "text", "match": "regex"},
        }
    }


def declared_labels(c: Canary) -> frozenset[str]:
    """The labels a report may name: the schema's choices, normalized (docs/metrics.md)."""
    fields = schema_document(c)["fields"]
    return frozenset(
        normalize_text(choice)
        for spec in fields.values()  # type: ignore[union-attr]
        for choice in spec.get("choices", ())
    )


def declared_fragments(c: Canary, field_ids: Iterable[str]) -> frozenset[str]:
    """The declared labels, and the lines a forest plot wraps "field: label" rows into."""
    from chartscore.render.forest import LABEL_CHARS
    from chartscore.render.table import wrap_label

    labels = declared_labels(c)
    lines = {
        line
        for field_id in field_ids
        for label in labels
        for line in wrap_label(f"{field_id}: {label}", LABEL_CHARS)
    }
    return labels | frozenset(line for line in lines if any(n in line for n in c.needles))


def schema_toml(c: Canary) -> str:
    """The same schema as TOML (JSON strings with ASCII escapes are TOML basic strings)."""
    lines = []
    for field_id, spec in schema_document(c)["fields"].items():
        lines.append(f'[fields."{field_id}"]')
        for key, value in spec.items():
            if type(value) is dict:  # an inline table, such as match = {fuzzy = "0.8"}
                inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
                lines.append(f"{key} = {{{inner}}}")
            else:
                lines.append(f"{key} = {json.dumps(value)}")
        lines.append("")
    return "\n".join(lines)


def gold_values(c: Canary) -> dict[str, list[object]]:
    m, w, n = c.marker, c.wide, c.number
    return {
        TEXT: [f"{m} note {w}", None, f"{w} other", m],
        CAT: [f"{m} former", f"{m} never", f"{w} current", None],
        NUM: [n, None, Decimal(n), 7],
        BOOL: [True, False, None, True],
        DATE: ["2023-04-05", None, "2021-02", "1999"],
        ORD: [f"{m} mid", f"{w} high", None, f"{m} low"],
        MULTI: [[f"{m} cough", f"{w} fever"], [f"{m} rash"], None, []],
        FUZZY: [f"{m} heart failure", None, f"{w} sepsis", m],
        REGEX: [f"{m}\\.[0-9]+", f"{w}-[a-z]", None, f"(?:{m})+"],
    }


def answer_values(c: Canary) -> dict[str, list[object]]:
    m, w, n = c.marker, c.wide, c.number
    return {
        TEXT: [f" {m.lower()}  NOTE {m} ", None, f"{w} other", f"wrong {m}"],
        CAT: [f"{m} FORMER", f"wrong {m}", MISSING, f"{w} never"],
        NUM: [f" {n} ", "1", Decimal(n), n],
        BOOL: [True, None, MISSING, False],
        DATE: ["2023-04-07", MISSING, "2021-02", m],
        ORD: [f"{m} HIGH", f"{m} high", f"{m} low", f"{w} LOW"],
        MULTI: [[f"{m} cough", f"wrong {w}"], MISSING, [f"{m} rash"], [m]],
        FUZZY: [f"{m} heart failur", f"{w}", MISSING, f"{m} x"],
        REGEX: [f"{w}.12", f"{m}-q", f"{m}.1", f"{m}{m}"],
    }


def source_row(c: Canary, slot: int, step: int, kind: str | None = None) -> dict[str, object]:
    row: dict[str, object] = {
        "source_digest": c.digest(slot),
        "start_offset": c.offset + step,
        "end_offset": c.offset + step + 1,
    }
    if kind is not None:
        row["kind"] = kind
    return row


def chain_row(c: Canary, field_id: str, index: int) -> dict[str, object]:
    return {
        "field_id": field_id,
        "source_locations": [
            source_row(c, 100 + index, 0),
            source_row(c, 200 + index, 2, "generated_text"),
            source_row(c, 300 + index, 4, "clinical_record"),
        ],
        "normalized_fact_digest": c.digest(1),
        "transformation_kind": ("rule", "model")[index % 2],
        "transformation_digest": c.digest(2),
        "uncertainty": Decimal("0.25"),
        "reviewer_state": ("pending", "approved", "rejected")[index % 3],
    }


def prediction_dict(c: Canary, field_id: str, index: int, value: object) -> dict[str, object]:
    row: dict[str, object] = {"case_id": c.case_id(index), "field_id": field_id, "value": value}
    if index != 1:
        row["normalized_fact_digest"] = c.digest(1 if index != 3 else 3)
    if index != 2:
        row["evidence_chain"] = chain_row(c, field_id, index)
    return row


def dataset(c: Canary) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Gold and prediction rows covering every field type, outcome and private slot."""
    gold = [
        {"case_id": c.case_id(index), "field_id": field_id, "field_type": kind, "value": value}
        for field_id, kind in FIELD_TYPES.items()
        for index, value in enumerate(gold_values(c)[field_id])
    ]
    predictions = [
        prediction_dict(c, field_id, index, value)
        for field_id, answers in answer_values(c).items()
        for index, value in enumerate(answers)
        if value is not MISSING
    ]
    return gold, predictions


def dumps(value: object) -> str:
    """JSON text, writing Decimals as exact literals and non-ASCII text unescaped."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{dumps(k)}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(dumps(item) for item in value) + "]"
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def jsonl(rows: Sequence[Mapping[str, object]]) -> str:
    return "".join(dumps(row) + "\n" for row in rows)


def source_record(row: Mapping[str, object]) -> SourceLocation:
    return SourceLocation(
        row["source_digest"],
        row["start_offset"],
        row["end_offset"],
        row.get("kind", "clinical_record"),
    )


def chain_record(row: Mapping[str, object]) -> EvidenceChain:
    return EvidenceChain(
        field_id=row["field_id"],
        source_locations=[source_record(s) for s in row["source_locations"]],
        normalized_fact_digest=row["normalized_fact_digest"],
        transformation_kind=row["transformation_kind"],
        transformation_digest=row["transformation_digest"],
        uncertainty=row["uncertainty"],
        reviewer_state=row["reviewer_state"],
    )


def gold_record(row: Mapping[str, object]) -> GoldField:
    return GoldField(row["case_id"], row["field_id"], row["field_type"], row["value"])


def prediction_record(row: Mapping[str, object]) -> Prediction:
    chain = row.get("evidence_chain")
    return Prediction(
        row["case_id"],
        row["field_id"],
        row["value"],
        normalized_fact_digest=row.get("normalized_fact_digest"),
        evidence_chain=None if chain is None else chain_record(chain),
    )


@contextlib.contextmanager
def marker_directory(c: Canary) -> Iterator[Path]:
    """A temporary directory whose path contains the marker."""
    with tempfile.TemporaryDirectory(prefix=f"chartscore-{c.marker}-") as name:
        yield Path(name)


def run_in_process(argv: Sequence[str]) -> tuple[int, str, str]:
    """chartscore.cli.main with explicit streams; the real sys streams must stay silent."""
    out, err = io.StringIO(), io.StringIO()
    real_out, real_err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(real_out), contextlib.redirect_stderr(real_err):
        status = cli_main(list(argv), stdout=out, stderr=err)
    assert real_out.getvalue() == "" and real_err.getvalue() == ""
    return status, out.getvalue(), err.getvalue()


_SUBPROCESS_BATCH = 8


def run_subprocesses(argvs: Sequence[Sequence[str]], cwd: Path) -> list[tuple[int, str, str]]:
    """``python -X dev -W always -m chartscore ...`` for each argv, a few at a time."""
    # The child imports the same chartscore as this process, whatever the install.
    root = str(Path(chartscore.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    results: list[tuple[int, str, str]] = []
    for start in range(0, len(argvs), _SUBPROCESS_BATCH):
        processes = [
            subprocess.Popen(
                [sys.executable, "-X", "dev", "-W", "always", "-m", "chartscore", *argv],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                env=env,
            )
            for argv in argvs[start : start + _SUBPROCESS_BATCH]
        ]
        for process in processes:
            out, err = process.communicate(timeout=120)
            results.append((process.returncode, out.decode("utf-8"), err.decode("utf-8")))
    return results


def assert_clean_streams(
    out: str, err: str, canary: Canary, where: str, declared: Iterable[str] = ()
) -> None:
    for name, text in (("stdout", out), ("stderr", err)):
        assert "Traceback" not in text, f"{where}: a traceback on {name}"
        assert_clean_text(text, canary, f"{where} {name}", declared if name == "stdout" else ())


# --- records -----------------------------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(canaries, st.sampled_from(["clinical_record", "generated_text"]))
def test_record_reprs_hide_case_ids_values_digests_and_offsets(c: Canary, kind: str) -> None:
    fixed = (str(_REPR_OFFSET), str(_REPR_OFFSET + 1), str(_REPR_OFFSET + 2))
    sources = [
        SourceLocation(c.digest(7), _REPR_OFFSET, _REPR_OFFSET + 1, kind),
        SourceLocation(c.digest(8), c.offset, c.offset + 2),
    ]
    chain = EvidenceChain(
        field_id=CAT,
        source_locations=iter(sources),
        normalized_fact_digest=c.digest(1),
        transformation_kind="model",
        transformation_digest=c.digest(2),
        uncertainty=Decimal("0.5"),
        reviewer_state="approved",
    )
    records: list[object] = [
        *sources,
        chain,
        GoldField(c.case_id(0), TEXT, "text", f"{c.marker} {c.wide}"),
        GoldField(c.case_id(1), CAT, "categorical", c.wide),
        GoldField(c.case_id(2), NUM, "number", c.number),
        GoldField(c.case_id(3), NUM, "number", Decimal(c.number)),
        GoldField(c.case_id(4), MULTI, "multi", [c.marker, c.wide]),
        GoldField(c.case_id(5), DATE, "date", None),
        GoldField(c.long_case_id[-128:], ORD, "ordinal", c.marker),
        Prediction(c.case_id(0), TEXT, c.marker, c.digest(1), chain),
        Prediction(c.case_id(1), NUM, c.number, evidence_chain=chain),
        Prediction(c.case_id(2), MULTI, {c.marker, c.wide}, c.digest(3)),
        Prediction(c.case_id(3), NUM, Decimal(c.number)),
        Prediction(c.case_id(4), BOOL, None),
    ]
    for record in records:
        name = type(record).__name__
        for text in (repr(record), str(record), f"{record}", f"{record!r}", repr([record])):
            assert text.startswith((name + "(", "[" + name + "("))
            assert_clean_text(text, c, f"{name} repr")
            for offset in fixed:
                assert offset not in text, f"{name} repr shows an offset"
    # The repr still says what it is: the developer-authored field id, never data.
    assert repr(records[3]) == (
        "GoldField(field_id='hx.note', field_type='text', <case id and value hidden>)"
    )
    assert repr(chain) == "EvidenceChain(field_id='hx.smoking', <sources and digests hidden>)"


# Fields a repr may show: developer-authored names and closed labels, never data.
_REPR_ALLOWED = frozenset({"field_id", "field_type"})
# Public attrs classes that hold a caller's private data, and those that hold none.
_PRIVATE_RECORDS = (
    "GoldField",
    "Prediction",
    "EvidenceChain",
    "SourceLocation",
    "Worklist",
    "Imported",
    "Table",
    "ProjectConfig",
    "Adjudication",
)
_NOT_PRIVATE = {
    "FieldSpec": "developer-authored schema configuration",
    "Schema": "developer-authored schema configuration",
    "Report": "value-free report",
    "SliceReport": "value-free report",
    "MetricResult": "value-free report",
    "KappaResult": "value-free report",
    "Comparison": "value-free comparison",
    "ImportedField": "developer-authored field: id, type, choices, tolerance",
    "RedcapField": "developer-authored dictionary field and its export columns",
    "Dictionary": "developer-authored data dictionary",
    "MetricPlugin": "developer-authored plugin declaration (its judge is not in the repr)",
    "Batch": "a batch's runs: labels, value-free documents, error codes and ledger entries",
    "BatchRun": "one run of a batch: its label, value-free documents and error codes",
}
_VALUE_MODULES = (
    "records.model",
    "records.evidence",
    "records.schema",
    "scoring.scorer",
    "scoring.agreement",
    "records.normalize",
    "io",
    "scoring.partial",
    "scoring.cases",
    "scoring.paired_scorer",
    "scoring.disagreements",
    "workflows.worklist",
    "workflows.adjudication",
    "workflows.ledger",
    "workflows.batch",
    "records.gold_identity",
    "records.schema_digest",
    "importers.table",
    "importers.fields",
    "importers.imported",
    "importers.redcap_dictionary",
    "importers.redcap",
    "importers.labelstudio",
    "importers.labelstudio_config",
    "importers.csv_table",
    "records.plugins",
    "scoring.plugin_judges",
)


def test_private_attrs_fields_are_excluded_from_reprs() -> None:
    import importlib
    import inspect

    import attrs

    public = {name: getattr(chartscore, name) for name in chartscore.__all__}
    classes = {name: value for name, value in public.items() if attrs.has(value)}
    # Every attrs class in a module that holds values is classified too.
    for module_name in _VALUE_MODULES:
        module = importlib.import_module(f"chartscore.{module_name}")
        for name, value in vars(module).items():
            if inspect.isclass(value) and attrs.has(value) and value.__module__ == module.__name__:
                classes[name] = value
    assert set(classes) == set(_PRIVATE_RECORDS) | set(_NOT_PRIVATE), (
        "classify every public attrs class as private or not"
    )
    for name in _PRIVATE_RECORDS:
        shown = {field.name for field in attrs.fields(classes[name]) if field.repr}
        assert shown <= _REPR_ALLOWED, f"{name} shows private fields: {shown - _REPR_ALLOWED}"


def _attrs_shown(record: object) -> str:
    """What a tool that walks attrs fields shows (rich's pretty printer does exactly this)."""
    import attrs

    parts = []
    for field in attrs.fields(type(record)):
        if field.repr:
            value = getattr(record, field.name)
            shown = _attrs_shown(value) if attrs.has(type(value)) else repr(value)
            parts.append(f"{field.name}={shown}")
    return f"{type(record).__name__}({', '.join(parts)})"


@settings(max_examples=examples(30), deadline=None)
@given(canaries)
def test_field_walking_pretty_printers_show_no_private_data(c: Canary) -> None:
    source = SourceLocation(c.digest(7), c.offset, c.offset + 1, "generated_text")
    chain = EvidenceChain(
        field_id=TEXT,
        source_locations=[source],
        normalized_fact_digest=c.digest(1),
        transformation_kind="model",
        transformation_digest=c.digest(2),
        uncertainty=Decimal("0.5"),
        reviewer_state="rejected",
    )
    records: list[object] = [
        source,
        chain,
        GoldField(c.case_id(0), TEXT, "text", c.marker),
        GoldField(c.case_id(1), NUM, "number", c.number),
        Prediction(c.case_id(2), TEXT, c.wide, c.digest(1), chain),
    ]
    for record in records:
        shown = _attrs_shown(record)
        assert_clean_text(shown, c, f"{type(record).__name__} fields")
        for word in ("generated_text", "rejected", "model", "0.5"):
            assert word not in shown, (word, shown)
    try:
        from rich.pretty import pretty_repr
    except ImportError:  # rich is optional; the field walk above is what it does
        return
    for record in records:
        shown = pretty_repr(record) + pretty_repr([record, {"x": record}])
        assert_clean_text(shown, c, "rich pretty_repr")
        assert "generated_text" not in shown and "rejected" not in shown


# --- successful scoring --------------------------------------------------------------


def _library_report(c: Canary) -> tuple[str, list[object]]:
    gold_rows, prediction_rows = dataset(c)
    gold = [gold_record(row) for row in gold_rows]
    predictions = [prediction_record(row) for row in prediction_rows]
    report = score(gold, predictions, schema=schema_document(c)).to_json()
    # Generators and a Schema object give the same report.
    again = score(
        (row for row in gold),
        (row for row in predictions),
        schema=Schema.from_dict(schema_document(c)),
    ).to_json()
    assert again == report
    records: list[object] = [*gold, *predictions]
    for answer in predictions:
        if answer.evidence_chain is not None:
            records += [answer.evidence_chain, *answer.evidence_chain.source_locations]
    return report, records


@settings(max_examples=examples(12), deadline=None, phases=NO_SHRINK)
@given(canaries)
def test_successful_scoring_leaks_nothing(c: Canary) -> None:
    report, records = _library_report(c)
    assert_clean_text(report, c, "library report", declared_labels(c))
    assert_report_vocabulary(report, set(FIELD_TYPES), declared_labels(c))
    overall = json.loads(report)["overall"]
    assert overall["field_count"] == sum(len(v) for v in gold_values(c).values())
    for record in records:
        assert_clean_text(repr(record), c, "record repr")
        assert_clean_text(str(record), c, "record str")

    gold_rows, prediction_rows = dataset(c)
    with marker_directory(c) as base:
        inputs = base / f"in-{c.marker}"
        inputs.mkdir()
        gold = inputs / f"gold-{c.marker}.jsonl"
        predictions = inputs / f"predictions-{c.marker}.jsonl"
        schema_json = inputs / f"schema-{c.marker}.json"
        schema_toml_path = inputs / f"schema-{c.marker}.toml"
        gold.write_text(jsonl(gold_rows), encoding="utf-8")
        predictions.write_text(jsonl(prediction_rows), encoding="utf-8")
        schema_json.write_text(dumps(schema_document(c)), encoding="utf-8")
        schema_toml_path.write_text(schema_toml(c), encoding="utf-8")

        # The file path and the record path agree, whatever form the schema takes.
        assert score_files(gold, predictions, schema=schema_json).to_json() == report
        assert score_files(str(gold), str(predictions), schema=str(schema_toml_path)).to_json() == (
            report
        )
        assert score_files(gold, predictions, schema=load_schema(schema_json)).to_json() == report

        files = ["--gold", str(gold), "--predictions", str(predictions)]
        status, out, err = run_in_process(["score", *files, "--schema", str(schema_json)])
        assert (status, out, err) == (0, report + "\n", "")

        out_dir = base / f"out-{c.marker}"
        out_dir.mkdir()
        target = out_dir / f"report-{c.marker}.json"
        status, out, err = run_in_process(
            ["score", *files, "--schema", str(schema_toml_path), "--out", str(target), "--quiet"]
        )
        assert (status, out, err) == (0, "", "")
        written = target.read_bytes()
        assert written == (report + "\n").encode("utf-8")
        assert_clean_bytes(written, c, "--out file", declared_labels(c))
        assert sorted(p.name for p in out_dir.iterdir()) == [target.name]  # no temporary left


@settings(
    max_examples=examples(5),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=NO_SHRINK,
)
@given(canaries)
def test_successful_cli_subprocess_leaks_nothing(c: Canary) -> None:
    report, _ = _library_report(c)
    gold_rows, prediction_rows = dataset(c)
    with marker_directory(c) as base:
        gold = base / f"gold-{c.marker}.jsonl"
        predictions = base / f"predictions-{c.marker}.jsonl"
        schema = base / f"schema-{c.marker}.toml"
        gold.write_text(jsonl(gold_rows), encoding="utf-8")
        predictions.write_text(jsonl(prediction_rows), encoding="utf-8")
        schema.write_text(schema_toml(c), encoding="utf-8")
        out_dir = base / f"out-{c.marker}"
        out_dir.mkdir()
        target = out_dir / f"report-{c.marker}.json"
        files = ["--gold", str(gold), "--predictions", str(predictions), "--schema", str(schema)]
        (status, out, err), (out_status, out_out, out_err) = run_subprocesses(
            [["score", *files], ["score", *files, "--out", str(target)]], base
        )
        assert_clean_streams(out, err, c, "subprocess", declared_labels(c))
        assert_clean_streams(out_out, out_err, c, "subprocess --out")
        assert (status, out, err) == (0, report + "\n", "")
        assert (out_status, out_out, out_err) == (0, "", "")
        assert target.read_text(encoding="utf-8") == report + "\n"
        assert sorted(p.name for p in out_dir.iterdir()) == [target.name]


@settings(
    max_examples=examples(2),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=NO_SHRINK,
)
@given(canaries, st.sampled_from([2, 11]))
def test_share_and_audit_leak_nothing(c: Canary, min_cell: int) -> None:
    # Disclosure control reads the same private inputs (and counts cases by their ids):
    # nothing of them may reach the shared report, the audit table or either stream.
    gold_rows, prediction_rows = dataset(c)
    with marker_directory(c) as base:
        gold = base / f"gold-{c.marker}.jsonl"
        predictions = base / f"predictions-{c.marker}.jsonl"
        schema = base / f"schema-{c.marker}.toml"
        gold.write_text(jsonl(gold_rows), encoding="utf-8")
        predictions.write_text(jsonl(prediction_rows), encoding="utf-8")
        schema.write_text(schema_toml(c), encoding="utf-8")
        target = base / f"shared-{c.marker}.json"
        files = ["--gold", str(gold), "--predictions", str(predictions), "--schema", str(schema)]
        share_argv = ["share", *files, "--min-cell", str(min_cell)]
        status, out, err = run_in_process([*share_argv, "--out", str(target), "--quiet"])
        assert status == 0 and out == ""
        assert_clean_streams(out, err, c, "share")
        shared = target.read_text(encoding="utf-8")
        # A shared report names the declared labels (schema choices), as a report does.
        declared = declared_labels(c)
        assert_clean_text(shared, c, "shared report", declared)
        status, table, err = run_in_process(["audit", str(target)])
        assert (status, err) == (0, "")
        assert_clean_text(table, c, "audit table", declared)
        # A bad line among the predictions: one coded line, nothing of the line or path.
        broken = base / f"broken-{c.marker}.jsonl"
        broken.write_text(jsonl(prediction_rows) + f'{{"case_id": "{c.marker}"\n', "utf-8")
        bad = ["share", "--gold", str(gold), "--predictions", str(broken)]
        (s_status, s_out, s_err), (a_status, a_out, a_err), (b_status, b_out, b_err) = (
            run_subprocesses([share_argv, ["audit", str(target)], bad], base)
        )
        for name, (o, e) in {"share": (s_out, s_err), "audit": (a_out, a_err)}.items():
            assert_clean_streams(o, e, c, f"subprocess {name}", declared)
        assert_clean_streams(b_out, b_err, c, "subprocess failing share")
        assert (s_status, s_out) == (0, shared) and (a_status, a_out) == (0, table)
        assert b_status == 1 and b_out == "" and b_err.startswith("chartscore: error: ")
        assert b_err.count("\n") == 1


# --- failing scoring: files and the command line ----------------------------------------


def _usage(problem: str, command: str | None = "score") -> str:
    """The expected stderr of a usage error (docs/cli.md)."""
    where = f"chartscore {command} --help" if command else "chartscore --help"
    return f"chartscore: error: usage: {problem}; see {where}\n"


@dataclass
class Run:
    """One command-line run, and the score_files call it corresponds to (if any)."""

    name: str
    argv: list[str]
    message: str  # the ChartscoreError message; stderr is "chartscore: error: <message>"
    code: ErrorCode | None = None  # for the library call; None for usage errors
    status: int = 1
    library: tuple[Path, Path, Path | None] | None = None  # score_files(gold, predictions, schema)
    expect_report: bool = False  # score_files succeeds (the CLI fails only on --out)
    stderr: str | None = None  # the exact stderr, for usage errors


def _good_gold(c: Canary) -> list[dict[str, object]]:
    return [
        {"case_id": c.case_id(0), "field_id": TEXT, "field_type": "text", "value": f"{c.marker}"},
        {"case_id": c.case_id(1), "field_id": NUM, "field_type": "number", "value": c.number},
    ]


def _good_prediction(c: Canary) -> dict[str, object]:
    return prediction_dict(c, TEXT, 0, f"{c.wide} answer")


def _gold_cases(c: Canary) -> list[tuple[str, bytes, ErrorCode, str, bool]]:
    """(name, bad second gold line, code, where, needs the schema)."""
    m, w, n = c.marker, c.wide, c.number
    cases: list[tuple[str, bytes, ErrorCode, str, bool]] = []

    def row(**changes: object) -> bytes:
        base = {"case_id": c.case_id(2), "field_id": TEXT, "field_type": "text", "value": m}
        base.update(changes)
        return (dumps({k: v for k, v in base.items() if v is not MISSING}) + "\n").encode()

    def case(name: str, line: bytes | str, code: ErrorCode, where: str = "", schema: bool = False):
        data = line.encode() if isinstance(line, str) else line
        cases.append((name, data, code, where or "(gold line 2)", schema))

    head = f'{{"case_id": "{m}", "field_id": "{TEXT}", "field_type": "text", "value": "'
    number = f'{{"case_id": "{m}", "field_id": "{NUM}", "field_type": "number", "value": '
    case("json", f'{{"case_id": "{m}", "field_id": "{w}", "value": \n', E.INVALID_JSON)
    case("two_objects", f'{{"case_id": "{m}"}} {{"{m}": "{w}"}}\n', E.INVALID_JSON)
    case("duplicate_key", f'{head}{n}", "case_id": "{w}"}}\n', E.DUPLICATE_KEY)
    case("unknown_key", row(**{m: w}), E.UNKNOWN_KEY)
    case("unknown_key_wide", row(**{w: n}), E.UNKNOWN_KEY)
    case("missing_key", row(field_type=MISSING), E.MISSING_KEY, "(gold line 2, key field_type)")
    # A misspelled key (here the canary instead of field_type) stays unnamed; the format
    # key it replaced is named as missing.
    misspelled = row(field_type=MISSING, **{m.lower(): "text"})
    case("misspelled_key", misspelled, E.MISSING_KEY, "(gold line 2, key field_type)")
    case("not_an_object", dumps([m, w, n]) + "\n", E.NOT_AN_OBJECT)
    case("string_line", dumps(f"{m} {n}") + "\n", E.NOT_AN_OBJECT)
    case("nan", f"{number}NaN, {dumps(m)}: 1}}\n", E.NONFINITE_NUMBER)
    case("huge_exponent", f"{number}{n}e99999}}\n", E.NUMBER_OUT_OF_RANGE)
    case("many_digits", f"{number}{n.replace('.', '') * 20}}}\n", E.NUMBER_OUT_OF_RANGE)
    deep = b"[" * 200_000 + b"]" * 200_000
    case("deep", head.encode() + m.encode() + b'", "x": ' + deep + b"}\n", E.NESTING_TOO_DEEP)
    bad_utf8 = b"\xff\xfe" + m.encode() + b"\xc3\x28" + w.encode()
    case("not_utf8", head.encode() + bad_utf8 + b'"}\n', E.NOT_UTF8)
    case("latin1", (head + f"{m} caf\u00e9" + '"}\n').encode("latin-1"), E.NOT_UTF8)
    case("too_long", head + m * (MAX_LINE_BYTES // len(m) + 1) + '"}\n', E.LINE_TOO_LONG)
    case("long_case_id", row(case_id=c.long_case_id), E.INVALID_CASE_ID)
    case("object_case_id", row(case_id={m: w}), E.INVALID_CASE_ID)
    case("field_id", row(field_id=c.bad_field_id), E.INVALID_FIELD_ID)
    case("field_type", row(field_type=m), E.INVALID_FIELD_TYPE)
    case("object_value", row(value={m: w}), E.INVALID_VALUE)
    case("mixed_list", row(value=[m, 1, w]), E.INVALID_VALUE)
    dose = {"field_id": "vitals.dose", "field_type": "number"}
    at_dose = "(gold line 2 field vitals.dose)"
    case("number_unit", row(**dose, value=f"{m} mg"), E.INVALID_GOLD_VALUE, at_dose)
    case("number_unit_digits", row(**dose, value=f"{n} mg"), E.INVALID_GOLD_VALUE, at_dose)
    day = {"field_id": "dx.other", "field_type": "date"}
    at_day = "(gold line 2 field dx.other)"
    case("bad_date", row(**day, value=f"2023-02-30 {m}"), E.INVALID_GOLD_VALUE, at_day)
    flag = {"field_id": "hx.other", "field_type": "boolean"}
    case("bad_boolean", row(**flag, value=w), E.INVALID_GOLD_VALUE, "(gold line 2 field hx.other)")
    case("text_list", row(value=[m, w]), E.INVALID_GOLD_VALUE, f"(gold line 2 field {TEXT})")
    case("duplicate_gold", row(case_id=c.case_id(0)), E.DUPLICATE_GOLD_KEY)
    case("inconsistent_type", row(field_type="number", value=n), E.INCONSISTENT_FIELD_TYPE)
    cat = {"field_id": CAT, "field_type": "categorical"}
    where = f"(gold line 2 field {CAT})"
    case("outside_choices", row(**cat, value=f"{m} other"), E.GOLD_OUTSIDE_SCHEMA, where, True)
    ordinal = {"field_id": ORD, "field_type": "ordinal"}
    where = f"(gold line 2 field {ORD})"
    case("outside_levels", row(**ordinal, value=f"{w} top"), E.GOLD_OUTSIDE_SCHEMA, where, True)
    multi = {"field_id": MULTI, "field_type": "multi"}
    where = f"(gold line 2 field {MULTI})"
    case("outside_items", row(**multi, value=[m]), E.GOLD_OUTSIDE_SCHEMA, where, True)
    where = f"(schema field {ORD})"
    case("schema_required", row(**ordinal, value=m), E.SCHEMA_REQUIRED, where)
    where = f"(schema field {CAT})"
    case("type_mismatch", row(field_id=CAT, value=m), E.SCHEMA_TYPE_MISMATCH, where, True)
    # Gold patterns refused by the subset's reader, by RE2's parser and by RE2's compiler
    # (whose own messages, never read, quote the pattern), and fuzzy gold over the limit.
    code = {"field_id": REGEX, "field_type": "text"}
    where = f"(gold line 2 field {REGEX})"
    case("pattern_lookahead", row(**code, value=f"(?={m}){w}"), E.INVALID_GOLD_PATTERN, where, True)
    nested = f"{m}(?:{w}{{10}}){{101}}"
    case("pattern_nested_repeats", row(**code, value=nested), E.INVALID_GOLD_PATTERN, where, True)
    budget = f"{m}\\w{{1000}}{w}"
    case("pattern_over_budget", row(**code, value=budget), E.INVALID_GOLD_PATTERN, where, True)
    longest = fuzzy_text_limit(Decimal("0.8"))  # the FUZZY field's threshold
    long_text = f"{m} {w} " * (longest // (len(m) + len(w) + 2) + 1)
    summary = {"field_id": FUZZY, "field_type": "text", "value": long_text}
    where = f"(gold line 2 field {FUZZY})"
    case("fuzzy_gold_too_long", row(**summary), E.MATCH_TEXT_TOO_LONG, where, True)
    return cases


def _prediction_cases(c: Canary) -> list[tuple[str, bytes, ErrorCode, str]]:
    """(name, bad second predictions line, code, where: "(predictions line 2...)")."""
    m, w, n = c.marker, c.wide, c.number
    cases: list[tuple[str, bytes, ErrorCode, str]] = []

    def line(**changes: object) -> dict[str, object]:
        base = prediction_dict(c, NUM, 1, n)
        base["normalized_fact_digest"] = c.digest(1)
        base["evidence_chain"] = chain_row(c, NUM, 1)
        base.update(changes)
        return {k: v for k, v in base.items() if v is not MISSING}

    def row(**changes: object) -> bytes:
        return (dumps(line(**changes)) + "\n").encode()

    def chain(**changes: object) -> bytes:
        base = chain_row(c, NUM, 1)
        base.update(changes)
        return row(evidence_chain={k: v for k, v in base.items() if v is not MISSING})

    def sources(**changes: object) -> bytes:
        source = {**source_row(c, 9, 0), **changes}
        return chain(source_locations=[{k: v for k, v in source.items() if v is not MISSING}])

    def case(name: str, data: bytes | str, code: ErrorCode, key: str | None = None) -> None:
        where = "(predictions line 2" + (f", key {key})" if key else ")")
        cases.append((name, data.encode() if isinstance(data, str) else data, code, where))

    head = f'{{"case_id": "{c.case_id(1)}", "field_id": "{NUM}", "value": "'
    case("json", f'{{"case_id": "{m}", "value": "{w}",,}}\n', E.INVALID_JSON)
    case("duplicate_key", f'{dumps(line())[:-1]}, "evidence_chain": "{m}"}}\n', E.DUPLICATE_KEY)
    case("nested_duplicate", f'{head}{n}", "x": {{"{m}": 1, "{m}": "{w}"}}}}\n', E.DUPLICATE_KEY)
    case("not_utf8", head.encode() + m.encode() + b"\x80\x81" + w.encode() + b'"}\n', E.NOT_UTF8)
    case("too_long", head + w * (MAX_LINE_BYTES // len(w.encode()) + 1) + '"}\n', E.LINE_TOO_LONG)
    case("unknown_key", row(**{m: w}), E.UNKNOWN_KEY)
    case("chain_unknown_key", chain(**{m: n}), E.UNKNOWN_KEY)
    case("source_unknown_key", sources(**{w: m}), E.UNKNOWN_KEY)
    case("chain_missing_key", chain(uncertainty=MISSING), E.MISSING_KEY, "uncertainty")
    case("missing_value", row(value=MISSING), E.MISSING_KEY, "value")
    case("misspelled_key", row(value=MISSING, **{w: n}), E.MISSING_KEY, "value")
    case("source_misspelled", sources(end_offset=MISSING, **{m: 5}), E.MISSING_KEY, "end_offset")
    case("wrong_object_key", row(field_type=m), E.UNKNOWN_KEY, "field_type")
    case("long_case_id", row(case_id=c.long_case_id), E.INVALID_CASE_ID)
    case("field_id", row(field_id=c.bad_field_id), E.INVALID_FIELD_ID)
    case("chain_field_id", chain(field_id=c.bad_field_id), E.INVALID_FIELD_ID)
    case("object_value", row(value={m: [w, n]}), E.INVALID_VALUE)
    case("short_digest", row(normalized_fact_digest="sha256:" + c.hexmark), E.INVALID_DIGEST)
    case("upper_digest", row(normalized_fact_digest=c.digest(1).upper()), E.INVALID_DIGEST)
    case("marker_digest", row(normalized_fact_digest=f"sha256:{m}"), E.INVALID_DIGEST)
    case("chain_digest", chain(normalized_fact_digest=c.digest(4) + "0"), E.INVALID_DIGEST)
    case("tool_digest", chain(transformation_digest=c.digest(5)[:-1]), E.INVALID_DIGEST)
    case("source_digest", sources(source_digest=c.hexmark * 4), E.INVALID_DIGEST)
    case("chain_string", row(evidence_chain=m), E.INVALID_EVIDENCE_CHAIN)
    case("sources_string", chain(source_locations=w), E.INVALID_EVIDENCE_CHAIN)
    case("source_string", chain(source_locations=[m]), E.INVALID_SOURCE_LOCATION)
    case("offset_string", sources(start_offset=m), E.INVALID_OFFSET)
    case("offset_too_big", sources(end_offset=2**63 + c.offset), E.INVALID_OFFSET)
    case("negative_offset", sources(start_offset=-c.offset), E.INVALID_OFFSET)
    case("span", sources(start_offset=c.offset + 5), E.INVALID_SPAN)
    case("duplicate_source", chain(source_locations=[source_row(c, 9, 0)] * 2), E.DUPLICATE_SOURCE)
    case("source_kind", sources(kind=m), E.INVALID_SOURCE_KIND)
    case("transformation_kind", chain(transformation_kind=w), E.INVALID_TRANSFORMATION_KIND)
    case("reviewer_state", chain(reviewer_state=m), E.INVALID_REVIEWER_STATE)
    case("uncertainty_string", chain(uncertainty=m), E.INVALID_UNCERTAINTY)
    case("uncertainty_number", chain(uncertainty=Decimal(n)), E.INVALID_UNCERTAINTY)
    case("unknown_prediction", row(case_id=f"unknown-{m}"), E.UNKNOWN_PREDICTION_KEY)
    case("unknown_field", row(field_id="hx.unknown"), E.UNKNOWN_PREDICTION_KEY)
    case("duplicate_prediction", dumps(_good_prediction(c)) + "\n", E.DUPLICATE_PREDICTION_KEY)
    return cases


def _schema_cases(c: Canary) -> list[tuple[str, str, bytes, ErrorCode, str]]:
    """(name, file suffix, schema file bytes, code, message)."""
    m, w = c.marker, c.wide
    cases: list[tuple[str, str, bytes, ErrorCode, str]] = []

    def case(
        name: str, content: object, code: ErrorCode, field_id: str = "", line: int = 0
    ) -> None:
        suffix = ".toml" if name.endswith("toml") else ".json"
        if isinstance(content, str):
            data = content.encode()
        elif isinstance(content, bytes):
            data = content
        else:
            data = dumps(content).encode()
        message = f"{code} (schema field {field_id})" if field_id else f"{code} (schema)"
        if line:
            message = f"{code} (schema line {line})"
        cases.append((name, suffix, data, code, message))

    toml_head = f'[fields."{TEXT}"]\ntype = "text"\n'
    text_type = f'{{"fields": {{"{TEXT}": {{"type": "'
    case("json", f'{{"fields": {{"{m}": ', E.INVALID_JSON, line=1)
    case(
        "json_line_3",
        f'{{"fields": {{\n"{TEXT}": {{"type": "text"}},\n"{m}" "{w}"}}}}',
        E.INVALID_JSON,
        line=3,
    )
    case("invalid_toml", f'{toml_head}{m} = = "{w}"\n', E.INVALID_JSON, line=3)
    case("huge_integer_toml", f"{toml_head}x = {'9' * 5000}\n", E.NUMBER_OUT_OF_RANGE)
    case("deep_toml", f"{toml_head}x = {'[' * 5000}{']' * 5000}\n", E.NESTING_TOO_DEEP)
    case("nan_toml", f'[fields."{NUM}"]\ntype = "number"\ntolerance = nan\n', E.NONFINITE_NUMBER)
    case("duplicate_key", f'{text_type}text", "type": "{m}"}}}}}}', E.DUPLICATE_KEY)
    case("not_utf8", text_type.encode() + m.encode() + b'\xff"}}}', E.NOT_UTF8)
    tolerance = f'{{"fields": {{"{NUM}": {{"type": "number", "tolerance": NaN'
    case("nan", f'{tolerance}, "{m}": 1}}}}}}', E.NONFINITE_NUMBER)
    case("unknown_top", {"fields": {}, m: w}, E.INVALID_SCHEMA)
    case("field_id", {"fields": {m: {"type": "text"}}}, E.INVALID_FIELD_ID)
    case("field_id_toml", f'[fields."{c.bad_field_id}"]\ntype = "text"\n', E.INVALID_FIELD_ID)
    case("option", {"fields": {TEXT: {"type": "text", m: w}}}, E.SCHEMA_UNKNOWN_OPTION, TEXT)
    case("option_toml", f'{toml_head}"{w}" = "{m}"\n', E.SCHEMA_UNKNOWN_OPTION, TEXT)
    case("type", {"fields": {TEXT: {"type": m}}}, E.SCHEMA_UNKNOWN_TYPE, TEXT)
    choices = {"type": "categorical", "choices": [m, m.lower()]}
    case("choices", {"fields": {CAT: choices}}, E.SCHEMA_INVALID_CHOICES, CAT)
    levels = {"type": "ordinal", "levels": [w, m]}
    case("levels", {"fields": {ORD: levels}}, E.SCHEMA_INVALID_LEVELS, ORD)
    tolerance_value = {"type": "number", "tolerance": m}
    case("tolerance", {"fields": {NUM: tolerance_value}}, E.SCHEMA_INVALID_TOLERANCE, NUM)
    return cases


def prepare_failing_runs(c: Canary, base: Path) -> list[Run]:
    """Write every failing input under ``base`` (a marker directory); one Run per failure."""
    runs: list[Run] = []
    out_target = base / f"out-{c.marker}" / f"report-{c.marker}.json"
    good_gold = jsonl(_good_gold(c)).encode("utf-8")
    good_predictions = jsonl([_good_prediction(c)]).encode("utf-8")

    def add(
        name: str,
        gold: bytes,
        predictions: bytes,
        code: ErrorCode,
        message: str,
        *,
        schema: tuple[str, bytes] | None = None,
    ) -> None:
        folder = base / f"{name}-{c.marker}"
        folder.mkdir()
        gold_path = folder / f"gold-{c.marker}.jsonl"
        predictions_path = folder / f"predictions-{c.marker}.jsonl"
        gold_path.write_bytes(gold)
        predictions_path.write_bytes(predictions)
        argv = ["score", "--gold", str(gold_path), "--predictions", str(predictions_path)]
        schema_path = None
        if schema is not None:
            schema_path = folder / f"schema-{c.marker}{schema[0]}"
            schema_path.write_bytes(schema[1])
            argv += ["--schema", str(schema_path)]
        argv += ["--out", str(out_target)]
        runs.append(
            Run(name, argv, message, code, library=(gold_path, predictions_path, schema_path))
        )

    schema = (".json", dumps(schema_document(c)).encode("utf-8"))
    for name, line, code, where, needs_schema in _gold_cases(c):
        add(
            f"gold-{name}",
            good_gold[: good_gold.index(b"\n") + 1] + line,
            b"",
            code,
            f"{code} {where}",
            schema=schema if needs_schema else None,
        )
    add("gold-empty", b"\n  \r\n\t\n", b"", ErrorCode.EMPTY_GOLD, "empty_gold (gold)")
    # Hints are decided from the shape of the failure: closed words, never the data.
    csv_gold = f"case_id,field_id,field_type,value\n{c.case_id(0)},{TEXT},text,{c.marker}\n"
    add(
        "gold-csv",
        csv_gold.encode("utf-8"),
        good_predictions,
        ErrorCode.INVALID_JSON,
        f"invalid_json (gold line 1; {ErrorHint.JSON_LINES_EXPECTED})",
    )
    add(
        "gold-swapped",
        good_predictions,
        good_gold,
        ErrorCode.MISSING_KEY,
        f"missing_key (gold line 1, key field_type; {ErrorHint.INPUTS_SWAPPED})",
    )
    add(
        "gold-as-predictions",
        good_gold,
        good_gold,
        ErrorCode.UNKNOWN_KEY,
        f"unknown_key (predictions line 1, key field_type; {ErrorHint.GOLD_AS_PREDICTIONS})",
    )
    for name, line, code, where in _prediction_cases(c):
        add(f"predictions-{name}", good_gold, good_predictions + line, code, f"{code} {where}")
    # A regex field's answer over the match-mode limit.
    pattern_gold = {"case_id": c.case_id(0), "field_id": REGEX, "field_type": "text"}
    long_answer = c.wide * (MAX_REGEX_ANSWER // len(c.wide) + 1)
    add(
        "predictions-regex_answer_too_long",
        jsonl([{**pattern_gold, "value": f"{c.marker}.*"}]).encode("utf-8"),
        jsonl([prediction_dict(c, REGEX, 0, long_answer)]).encode("utf-8"),
        ErrorCode.MATCH_TEXT_TOO_LONG,
        "match_text_too_long (predictions line 1)",
        schema=schema,
    )
    for name, suffix, content, code, message in _schema_cases(c):
        add(f"schema-{name}", good_gold, good_predictions, code, message, schema=(suffix, content))

    # Paths that cannot be read, each containing the marker.
    good = base / f"good-{c.marker}"
    good.mkdir()
    gold_path = good / f"gold-{c.marker}.jsonl"
    predictions_path = good / f"predictions-{c.marker}.jsonl"
    gold_path.write_bytes(good_gold)
    predictions_path.write_bytes(good_predictions)
    absent = base / f"absent-{c.marker}"
    unreadable = ErrorCode.FILE_UNREADABLE
    for name, paths, message in [
        ("missing-gold", (absent / f"{c.marker}.jsonl", predictions_path, None), "(gold)"),
        ("directory-gold", (good, predictions_path, None), "(gold)"),
        ("missing-predictions", (gold_path, absent / f"{c.wide}.jsonl", None), "(predictions)"),
        ("missing-schema", (gold_path, predictions_path, absent / f"{c.marker}.json"), "(schema)"),
        ("missing-toml", (gold_path, predictions_path, absent / f"{c.marker}.toml"), "(schema)"),
        ("nul-in-path", (gold_path, Path(f"{predictions_path}\x00{c.marker}"), None), None),
    ]:
        argv = ["score", "--gold", str(paths[0]), "--predictions", str(paths[1])]
        if paths[2] is not None:
            argv += ["--schema", str(paths[2])]
        if message is None:  # a NUL byte cannot be passed as a process argument: library only
            runs.append(Run(name, [], f"{unreadable} (predictions)", unreadable, library=paths))
            continue
        argv += ["--out", str(out_target)]
        runs.append(Run(name, argv, f"{unreadable} {message}", unreadable, library=paths))

    # Reports that cannot be written, to paths containing the marker.
    files = ["score", "--gold", str(gold_path), "--predictions", str(predictions_path)]
    is_directory = base / f"is-a-directory-{c.marker}"
    is_directory.mkdir()
    link_to_gold = base / f"link-{c.marker}.jsonl"
    link_to_gold.symlink_to(gold_path)
    no_folder = "output_unwritable (output; the output folder does not exist)"
    for name, target, message in [
        ("out-missing-dir", base / f"no-such-dir-{c.marker}" / f"{c.marker}.json", no_folder),
        ("out-is-directory", is_directory, "output_unwritable (output)"),
        ("out-trailing-separator", f"{base / c.marker}{os.sep}", "output_unwritable (output)"),
        ("out-symlink", base / f"symlink-{c.marker}.json", "output_unwritable (output)"),
    ]:
        runs.append(
            Run(
                name,
                [*files, "--out", str(target)],
                message,
                ErrorCode.OUTPUT_UNWRITABLE,
                library=(gold_path, predictions_path, None),
                expect_report=True,
            )
        )
    (base / f"symlink-{c.marker}.json").symlink_to(base / f"elsewhere-{c.marker}.json")
    # Outputs that name an input, by its path or through a link: refused, input intact.
    for name, target in [("out-is-gold", gold_path), ("out-link-to-gold", link_to_gold)]:
        runs.append(
            Run(
                name,
                [*files, "--out", str(target)],
                "output_is_input (output)",
                ErrorCode.OUTPUT_IS_INPUT,
                library=(gold_path, predictions_path, None),
                expect_report=True,
            )
        )

    # Command-line misuse with the marker as an argument: never echoed.
    for name, argv, expected_stderr in [
        ("usage-extra-argument", [*files, c.marker], _usage("unexpected argument")),
        ("usage-extra-wide-argument", [*files, "--quiet", c.wide], _usage("unexpected argument")),
        ("usage-command", [c.marker], _usage("unknown command", None)),
        ("usage-command-lower", [c.marker.lower()], _usage("unknown command", None)),
        (
            "usage-command-with-args",
            [c.marker, "--gold", str(gold_path)],
            _usage("unknown command", None),
        ),
        # Option-like names are echoed by design (test_cli_usage.py); these are not option-like.
        (
            "usage-option",
            [*files, f"--{c.marker.lower()}.{c.number}", c.number],
            _usage("unknown option"),
        ),
        (
            "usage-option-equals",
            [*files, f"--schema-{c.marker.lower()}={c.marker}"],
            _usage("unknown option"),
        ),
        ("usage-top-option", [f"--{c.marker}"], _usage("unknown option", None)),
        (
            "usage-missing-predictions",
            ["score", "--gold", str(gold_path)],
            _usage("--predictions is required"),
        ),
        ("usage-missing-value", [*files, "--out"], _usage("--out needs a value")),
        ("usage-demo", ["demo", c.marker], _usage("unexpected argument", "demo")),
        (
            "usage-dash-value",
            ["score", "--gold", f"-{c.marker}", "--predictions", c.number],
            _usage("--gold needs a value"),
        ),
        ("usage-jobs", [*files, "--jobs", c.number], _usage("--jobs must be 1 or 2")),
        ("usage-twice", [*files, "--gold", str(gold_path)], _usage("--gold is given twice")),
        (
            "usage-stdin-twice",
            ["score", "--gold", "-", "--predictions", "-", "--out", str(out_target)],
            _usage("standard input (-) can feed one input only"),
        ),
    ]:
        runs.append(Run(name, argv, "usage", status=2, stderr=expected_stderr))
    return runs


def _check_library_call(run: Run, c: Canary) -> None:
    assert run.library is not None
    gold, predictions, schema = run.library
    if run.expect_report:
        report = score_files(gold, predictions, schema=schema).to_json()
        assert_clean_text(report, c, f"{run.name}: report")
        assert_report_vocabulary(report, {TEXT, NUM})
        return
    assert run.code is not None
    error = raised(lambda: score_files(gold, predictions, schema=schema))
    assert_clean_error(error, c, run.code, run.message)


def _check_cli_result(run: Run, result: tuple[int, str, str], c: Canary, base: Path) -> None:
    status, out, err = result
    assert_clean_streams(out, err, c, run.name)
    expected = run.stderr
    if expected is None:
        code = run.message.split(" ", 1)[0]
        expected = f"chartscore: error: {run.message}: {describe(ErrorCode(code))}\n"
    assert (status, out, err) == (run.status, "", expected), run.name
    # No report and no temporary file is left behind, anywhere under the directory.
    leftovers = [
        p.name
        for p in base.rglob("*")
        if p.name.startswith(".chartscore-") or p.name == f"report-{c.marker}.json"
    ]
    assert leftovers == [], run.name


@settings(
    max_examples=examples(6, least=2),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=NO_SHRINK,
)
@given(canaries)
def test_failing_scoring_leaks_nothing_in_process(c: Canary) -> None:
    with marker_directory(c) as base:
        (base / f"out-{c.marker}").mkdir()
        runs = prepare_failing_runs(c, base)
        assert len(runs) > 100
        for run in runs:
            if run.library is not None:
                _check_library_call(run, c)
            if run.argv:
                _check_cli_result(run, run_in_process(run.argv), c, base)
        assert list((base / f"out-{c.marker}").iterdir()) == []


@settings(
    max_examples=examples(3, least=1),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=NO_SHRINK,
)
@given(canaries, st.data())
def test_failing_cli_subprocess_leaks_nothing(c: Canary, data: st.DataObject) -> None:
    # Every run goes through chartscore.cli.main in process (above); a real process
    # runs all path, --out and usage failures and a sample of the data failures.
    with marker_directory(c) as base:
        (base / f"out-{c.marker}").mkdir()
        runs = [run for run in prepare_failing_runs(c, base) if run.argv]
        data_runs = [
            run for run in runs if run.name.startswith(("gold-", "predictions-", "schema-"))
        ]
        sample = data.draw(
            st.lists(st.sampled_from(data_runs), min_size=8, max_size=8, unique_by=lambda r: r.name)
        )
        runs = [run for run in runs if run not in data_runs] + sample
        results = run_subprocesses([run.argv for run in runs], base)
        for run, result in zip(runs, results, strict=True):
            _check_cli_result(run, result, c, base)
        assert list((base / f"out-{c.marker}").iterdir()) == []


def _run_with_input(argv: Sequence[str], data: bytes, cwd: Path) -> tuple[int, str, str]:
    root = str(Path(chartscore.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    result = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "always", "-m", "chartscore", *argv],
        input=data,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
    return result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8")


def _failing_input(run: Run) -> tuple[str, Path]:
    """The option and path of the input that makes a data run fail."""
    option = {"gold-": "--gold", "predictions-": "--predictions", "schema-": "--schema"}
    for prefix, flag in option.items():
        if run.name.startswith(prefix):
            return flag, Path(run.argv[run.argv.index(flag) + 1])
    raise AssertionError(run.name)


@settings(
    max_examples=examples(2, least=1),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=NO_SHRINK,
)
@given(canaries, st.data())
def test_failing_inputs_from_stdin_or_gzip_leak_nothing(c: Canary, data: st.DataObject) -> None:
    # The same failures, with the failing input read from standard input or gzip-compressed,
    # give the same one line: never a byte of the input, however it arrives.
    with marker_directory(c) as base:
        (base / f"out-{c.marker}").mkdir()
        runs = [
            run
            for run in prepare_failing_runs(c, base)
            if run.argv and run.name.startswith(("gold-", "predictions-", "schema-"))
        ]
        sample = data.draw(
            st.lists(st.sampled_from(runs), min_size=6, max_size=6, unique_by=lambda r: r.name)
        )
        for run in sample:
            option, path = _failing_input(run)
            content = path.read_bytes()
            if not path.name.endswith(".toml"):  # standard input is read as JSON
                argv = list(run.argv)
                argv[argv.index(option) + 1] = "-"
                _check_cli_result(run, _run_with_input(argv, content, base), c, base)
            path.write_bytes(gzip.compress(content))
            _check_cli_result(run, _run_with_input(run.argv, b"", base), c, base)
            _check_cli_result(run, run_in_process(run.argv), c, base)
            _check_library_call(run, c)


class _ExplodingPath:
    def __init__(self, message: str) -> None:
        self.message = message

    def __fspath__(self) -> str:
        raise RuntimeError(self.message)


@settings(
    max_examples=examples(10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(c=canaries)
def test_a_callers_failing_path_leaks_nothing(c: Canary, capfd: pytest.CaptureFixture[str]) -> None:
    hostile = _ExplodingPath(f"no such chart {c.marker} {c.number}")
    with marker_directory(c) as base:
        gold = base / f"gold-{c.marker}.jsonl"
        gold.write_text(jsonl(_good_gold(c)), encoding="utf-8")
        for parallel in (False, True):
            for call, where in [
                (lambda p=parallel: score_files(hostile, gold, parallel=p), "gold"),
                (lambda p=parallel: score_files(gold, hostile, parallel=p), "predictions"),
                (lambda p=parallel: score_files(gold, gold, schema=hostile, parallel=p), "schema"),
            ]:
                error = raised(call)
                assert_clean_error(error, c, E.INVALID_PATH, f"invalid_path ({where})")
        error = raised(lambda: load_schema(hostile))  # type: ignore[arg-type]
        assert_clean_error(error, c, E.INVALID_PATH, "invalid_path (schema)")
    out, err = capfd.readouterr()  # nothing printed, by this process or a reader
    assert_clean_streams(out, err, c, "failing path")
    assert (out, err) == ("", "")


# --- failing scoring: library records and collections -----------------------------------


def _record_failures(c: Canary) -> list[tuple[str, Callable[[], object], ErrorCode]]:
    m, w, n, o = c.marker, c.wide, c.number, c.offset
    d = c.digest
    case = c.case_id(0)
    source = SourceLocation(d(9), o, o + 1)
    cases: list[tuple[str, Callable[[], object], ErrorCode]] = []

    def add(name: str, code: ErrorCode, build: Callable[..., object], *args: object, **kw: object):
        cases.append((name, functools.partial(build, *args, **kw), code))

    def chain(**changes: object) -> EvidenceChain:
        arguments: dict[str, object] = {
            "field_id": TEXT,
            "source_locations": [source],
            "normalized_fact_digest": d(1),
            "transformation_kind": "rule",
            "transformation_digest": d(2),
            "uncertainty": Decimal("0.5"),
            "reviewer_state": "pending",
        }
        arguments.update(changes)
        return EvidenceChain(**arguments)

    gold = [
        GoldField(case, TEXT, "text", m),
        GoldField(c.case_id(1), TEXT, "text", None),
        GoldField(c.case_id(2), CAT, "categorical", f"{m} former"),
        GoldField(c.case_id(3), ORD, "ordinal", f"{w} HIGH"),
    ]
    schema = schema_document(c)

    add("gold case id", E.INVALID_CASE_ID, GoldField, c.long_case_id, TEXT, "text", m)
    add("gold int case id", E.INVALID_CASE_ID, GoldField, o, TEXT, "text", m)
    add("gold field id", E.INVALID_FIELD_ID, GoldField, case, c.bad_field_id, "text", m)
    add("gold field type", E.INVALID_FIELD_TYPE, GoldField, case, TEXT, m, w)
    add("gold object value", E.INVALID_VALUE, GoldField, case, TEXT, "text", {m: w})
    add("gold mixed list", E.INVALID_VALUE, GoldField, case, MULTI, "multi", [m, o])
    add("gold unit", E.INVALID_GOLD_VALUE, GoldField, case, NUM, "number", f"{m} mg")
    add("gold unit digits", E.INVALID_GOLD_VALUE, GoldField, case, NUM, "number", f"{n} mg")
    huge = Decimal(n).scaleb(20_000)
    add("gold huge number", E.INVALID_GOLD_VALUE, GoldField, case, NUM, "number", huge)
    add("gold date", E.INVALID_GOLD_VALUE, GoldField, case, DATE, "date", f"{m}-02-30")
    add("gold boolean", E.INVALID_GOLD_VALUE, GoldField, case, BOOL, "boolean", w)
    add("gold multi string", E.INVALID_GOLD_VALUE, GoldField, case, MULTI, "multi", m)
    add("answer case id", E.INVALID_CASE_ID, Prediction, c.long_case_id, TEXT, m)
    add("answer field id", E.INVALID_FIELD_ID, Prediction, case, c.bad_field_id, m)
    add("answer value", E.INVALID_VALUE, Prediction, case, TEXT, {m: n})
    add("answer nan", E.INVALID_VALUE, Prediction, case, NUM, Decimal("NaN"))
    add("answer digest", E.INVALID_DIGEST, Prediction, case, TEXT, m, "sha256:" + c.hexmark)
    add("answer digest upper", E.INVALID_DIGEST, Prediction, case, TEXT, m, d(1).upper())
    raw_chain = chain_row(c, TEXT, 0)
    add("answer chain dict", E.INVALID_EVIDENCE_CHAIN, Prediction, case, TEXT, m, d(1), raw_chain)
    add("answer chain string", E.INVALID_EVIDENCE_CHAIN, Prediction, case, TEXT, m, d(1), m)
    add("chain field id", E.INVALID_FIELD_ID, chain, field_id=c.bad_field_id)
    add("chain sources string", E.INVALID_EVIDENCE_CHAIN, chain, source_locations=m)
    add("chain sources dict", E.INVALID_EVIDENCE_CHAIN, chain, source_locations={m: source})
    raw_source = [source_row(c, 9, 0)]
    add("chain source dict", E.INVALID_SOURCE_LOCATION, chain, source_locations=raw_source)
    twice = [source, SourceLocation(d(9), o, o + 1)]
    add("chain duplicate source", E.DUPLICATE_SOURCE, chain, source_locations=twice)
    add("chain fact digest", E.INVALID_DIGEST, chain, normalized_fact_digest=d(1) + "f")
    add("chain tool digest", E.INVALID_DIGEST, chain, transformation_digest=m)
    add("chain tool kind", E.INVALID_TRANSFORMATION_KIND, chain, transformation_kind=m)
    add("chain reviewer state", E.INVALID_REVIEWER_STATE, chain, reviewer_state=w)
    add("chain uncertainty", E.INVALID_UNCERTAINTY, chain, uncertainty=m)
    add("chain uncertainty number", E.INVALID_UNCERTAINTY, chain, uncertainty=Decimal(n))
    add("source digest", E.INVALID_DIGEST, SourceLocation, "sha256:" + c.hexmark * 3, o, o + 1)
    add("source offset", E.INVALID_OFFSET, SourceLocation, d(9), m, o)
    add("source offset too big", E.INVALID_OFFSET, SourceLocation, d(9), o, 2**63 + o)
    add("source span", E.INVALID_SPAN, SourceLocation, d(9), o + 5, o)
    add("source kind", E.INVALID_SOURCE_KIND, SourceLocation, d(9), o, o + 1, m)

    def fails(name: str, code: ErrorCode, gold: object, answers: object, **kw: object) -> None:
        add(name, code, score, gold, answers, **kw)

    def fails_schema(name: str, code: ErrorCode, fields: object) -> None:
        add(name, code, score, gold, [], schema={"fields": fields})

    plain = gold[:3]  # without the ordinal field, which needs the schema
    other = GoldField(case, TEXT, "text", w)
    fails("score duplicate gold", E.DUPLICATE_GOLD_KEY, [*plain, other], [])
    other = GoldField(w, TEXT, "number", n)
    fails("score inconsistent type", E.INCONSISTENT_FIELD_TYPE, [*plain, other], [])
    answers = [Prediction(m, TEXT, w)]
    fails("score unknown answer", E.UNKNOWN_PREDICTION_KEY, gold, answers, schema=schema)
    answers = [Prediction(case, TEXT, m), Prediction(case, TEXT, w)]
    fails("score duplicate answer", E.DUPLICATE_PREDICTION_KEY, gold, answers, schema=schema)
    fails("score empty gold", E.EMPTY_GOLD, [], [Prediction(case, TEXT, m)])
    fails("score gold string", E.INVALID_COLLECTION, m, [])
    fails("score gold mapping", E.INVALID_COLLECTION, {m: gold[0]}, [])
    fails("score gold number", E.INVALID_COLLECTION, o, [])
    fails("score answers bytes", E.INVALID_COLLECTION, gold, m.encode(), schema=schema)
    fails("score gold item", E.INVALID_RECORD, [gold[0], {"case_id": m}], [])
    fails("score answer item", E.INVALID_RECORD, gold, [m], schema=schema)
    fails("score answer as gold", E.INVALID_RECORD, [Prediction(case, TEXT, m)], [])
    other = GoldField(case, CAT, "categorical", w)
    fails("score outside choices", E.GOLD_OUTSIDE_SCHEMA, [other], [], schema=schema)
    other = GoldField(case, ORD, "ordinal", n)
    fails("score outside levels", E.GOLD_OUTSIDE_SCHEMA, [other], [], schema=schema)
    other = GoldField(case, CAT, "text", m)
    fails("score type mismatch", E.SCHEMA_TYPE_MISMATCH, [other], [], schema=schema)
    fails("score schema required", E.SCHEMA_REQUIRED, gold, [])
    fails("score schema top key", E.INVALID_SCHEMA, gold, [], schema={m: {}})
    fails("score schema list", E.INVALID_SCHEMA, gold, [], schema=[m])
    fails_schema("schema option", E.SCHEMA_UNKNOWN_OPTION, {TEXT: {"type": "text", m: w}})
    fails_schema("schema field id", E.INVALID_FIELD_ID, {m: {"type": "text"}})
    fails_schema("schema type", E.SCHEMA_UNKNOWN_TYPE, {TEXT: {"type": w}})
    levels = {"type": "ordinal", "levels": [m]}
    fails_schema("schema levels", E.SCHEMA_INVALID_LEVELS, {ORD: levels})
    tolerance = {"type": "number", "tolerance": n + m}
    fails_schema("schema tolerance", E.SCHEMA_INVALID_TOLERANCE, {NUM: tolerance})
    return cases


@settings(max_examples=examples(25), deadline=None)
@given(canaries)
def test_failing_library_calls_leak_nothing(c: Canary) -> None:
    failures = _record_failures(c)
    assert len({name for name, _, _ in failures}) == len(failures)
    for _name, call, code in failures:
        assert_clean_error(raised(call), c, code)


# --- the caller's iterator raising ------------------------------------------------------


class _ExplodingIterable:
    """An iterable whose __iter__ raises the caller's own exception."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def __iter__(self) -> Iterator[object]:
        raise self._error


class _ExplodingIterator:
    """An iterator that yields some items, then raises from __next__."""

    def __init__(self, items: Sequence[object], error: Exception) -> None:
        self._items = list(items)
        self._error = error

    def __iter__(self) -> _ExplodingIterator:
        return self

    def __next__(self) -> object:
        if self._items:
            return self._items.pop(0)
        raise self._error


def _callers_error(c: Canary, kind: str) -> Exception:
    """The caller's exception, carrying the marker in its message, args and chain."""
    if kind == "chained":

        def lookup() -> object:
            return {}[c.wide]

        def wrap() -> object:
            try:
                return lookup()
            except KeyError as inner:
                raise RuntimeError(f"{c.marker} {c.number}") from inner

        return raised(wrap)  # type: ignore[return-value]
    if kind == "chartscore":
        # A caller's generator that itself failed to build a record.
        return raised(lambda: GoldField(c.long_case_id, TEXT, "text", c.marker))
    types: dict[str, type[Exception]] = {
        "runtime": RuntimeError,
        "value": ValueError,
        "key": KeyError,
        "os": OSError,
        "unicode": UnicodeError,
    }
    return types[kind](f"{c.marker} {c.wide} {c.digest(1)}")


def _sources(
    items: Sequence[object], error: Exception, shape: str
) -> Iterator[object] | _ExplodingIterable | _ExplodingIterator:
    if shape == "generator":

        def generate() -> Iterator[object]:
            yield from items
            raise error

        return generate()
    if shape == "iterator":
        return _ExplodingIterator(items, error)
    return _ExplodingIterable(error)


error_kinds = st.sampled_from(["runtime", "value", "key", "os", "unicode", "chained", "chartscore"])
shapes = st.sampled_from(["generator", "iterator", "iter_raises"])


@settings(max_examples=examples(80), deadline=None)
@given(canaries, st.sampled_from(["gold", "predictions"]), shapes, error_kinds, st.integers(0, 3))
def test_callers_iterator_error_becomes_invalid_collection(
    c: Canary, which: str, shape: str, kind: str, good_items: int
) -> None:
    gold = [GoldField(c.case_id(i), TEXT, "text", f"{c.marker} {i}") for i in range(4)]
    answers = [Prediction(c.case_id(i), TEXT, f"{c.wide} {i}", c.digest(i)) for i in range(4)]
    error = _callers_error(c, kind)
    if which == "gold":
        error_raised = raised(lambda: score(_sources(gold[:good_items], error, shape), answers))
        source = InputKind.GOLD
    else:
        error_raised = raised(lambda: score(gold, _sources(answers[:good_items], error, shape)))
        source = InputKind.PREDICTIONS
    assert_clean_error(
        error_raised, c, ErrorCode.INVALID_COLLECTION, f"invalid_collection ({source})"
    )
    assert error_raised.input is source


@settings(max_examples=examples(40), deadline=None)
@given(canaries, shapes, error_kinds, st.integers(0, 2))
def test_callers_source_iterator_error_in_evidence_chain(
    c: Canary, shape: str, kind: str, good_items: int
) -> None:
    # docs/errors.md: invalid_evidence_chain is "its source_locations is not a list";
    # invalid_collection is reserved for the gold and predictions arguments.
    sources = [SourceLocation(c.digest(10 + i), c.offset + i, c.offset + i + 1) for i in range(3)]
    error = _callers_error(c, kind)
    failure = raised(
        lambda: EvidenceChain(
            field_id=TEXT,
            source_locations=_sources(sources[:good_items], error, shape),
            normalized_fact_digest=c.digest(1),
            transformation_kind="model",
            transformation_digest=c.digest(2),
            uncertainty=0,
            reviewer_state="pending",
        )
    )
    assert_clean_error(failure, c, ErrorCode.INVALID_EVIDENCE_CHAIN, "invalid_evidence_chain")


class _ExplodingMapping(Mapping[str, object]):
    """A schema mapping whose reads raise the caller's own exception."""

    def __init__(self, error: Exception) -> None:
        self._error = error

    def __getitem__(self, key: str) -> object:
        raise self._error

    def __iter__(self) -> Iterator[str]:
        raise self._error

    def __len__(self) -> int:
        return 1


@settings(max_examples=examples(20), deadline=None)
@given(
    canaries,
    st.sampled_from(["document", "fields", "field"]),
    st.sampled_from(["runtime", "value", "key", "os", "unicode", "chained"]),
)
def test_callers_schema_mapping_error_is_dropped(c: Canary, level: str, kind: str) -> None:
    # The schema argument is consumed by chartscore.score like gold and predictions:
    # the caller's exception (and the marker in it) must not escape; chartscore must
    # raise its own value-free error instead.
    exploding = _ExplodingMapping(_callers_error(c, kind))
    schema: object = {
        "document": exploding,
        "fields": {"fields": exploding},
        "field": {"fields": {TEXT: exploding}},
    }[level]
    gold = [GoldField(c.case_id(0), TEXT, "text", c.marker)]
    failure = raised(lambda: score(gold, [], schema=schema))
    assert type(failure) is ChartscoreError, (
        f"the caller's {type(failure).__name__} escaped chartscore.score(schema=...)"
    )
    code = failure.code
    assert code in {ErrorCode.INVALID_SCHEMA, ErrorCode.SCHEMA_UNKNOWN_TYPE}, code
    assert_clean_error(failure, c, code)


# --- hostile caller objects ------------------------------------------------------------


class _LazyProxy:
    """Like Django's SimpleLazyObject whose set-up fails: every touch raises the caller's error.

    ``isinstance`` asks ``__class__``, which raises too; so do ``__eq__``, ``__hash__``,
    ``__len__``, ``__iter__``, ``__bool__``, ``__str__``, ``__repr__`` and any attribute.
    """

    def __init__(self, error: Exception) -> None:
        object.__setattr__(self, "_error", error)

    def _fail(self, *args: object, **kwargs: object) -> NoReturn:
        raise object.__getattribute__(self, "_error")

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise object.__getattribute__(self, "_error")

    def __getattr__(self, name: str) -> object:
        raise object.__getattribute__(self, "_error")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail  # type: ignore[assignment]
    __hash__ = __len__ = __iter__ = __bool__ = __str__ = __repr__ = _fail  # type: ignore[assignment]
    __index__ = __int__ = __float__ = __contains__ = __getitem__ = __fspath__ = _fail


class _HostileText(str):
    """A str subclass whose comparisons and hashing raise (a string-looking proxy)."""

    error: Exception

    def __eq__(self, other: object) -> bool:
        raise self.error

    def __hash__(self) -> int:
        raise self.error

    def __len__(self) -> int:
        raise self.error


class _HostileList(list[object]):
    """A list subclass whose iteration and length raise."""

    error: Exception

    def __iter__(self) -> Iterator[object]:
        raise self.error

    def __len__(self) -> int:
        raise self.error


class _HostileMapping(dict[str, object]):
    """A dict subclass whose reading raises (its class and isinstance are honest)."""

    error: Exception

    def items(self) -> NoReturn:  # type: ignore[override]
        raise self.error

    def keys(self) -> NoReturn:  # type: ignore[override]
        raise self.error

    def __iter__(self) -> NoReturn:
        raise self.error

    def __getitem__(self, key: str) -> NoReturn:
        raise self.error


def _hostile(kind: str, error: Exception) -> object:
    if kind == "proxy":
        return _LazyProxy(error)
    made: _HostileText | _HostileList | _HostileMapping
    if kind == "text":
        made = _HostileText("hx.note")
    elif kind == "list":
        made = _HostileList(["a"])
    else:
        made = _HostileMapping({"case_id": "c"})
    made.error = error
    return made


def _hostile_calls(c: Canary, h: object) -> list[tuple[str, Callable[[], object], ErrorCode]]:
    """Every slot a caller fills, each given the hostile object ``h``."""
    d = c.digest
    case = c.case_id(0)
    source = SourceLocation(d(9), 1, 2)
    gold = [GoldField(case, TEXT, "text", c.marker)]
    calls: list[tuple[str, Callable[[], object], ErrorCode]] = []

    def add(name: str, code: ErrorCode, build: Callable[..., object], *a: object, **k: object):
        calls.append((name, functools.partial(build, *a, **k), code))

    chain_arguments: dict[str, object] = {
        "field_id": TEXT,
        "source_locations": [source],
        "normalized_fact_digest": d(1),
        "transformation_kind": "rule",
        "transformation_digest": d(2),
        "uncertainty": 0,
        "reviewer_state": "pending",
    }
    chain_codes = {
        "field_id": E.INVALID_FIELD_ID,
        "source_locations": E.INVALID_EVIDENCE_CHAIN,
        "normalized_fact_digest": E.INVALID_DIGEST,
        "transformation_kind": E.INVALID_TRANSFORMATION_KIND,
        "transformation_digest": E.INVALID_DIGEST,
        "uncertainty": E.INVALID_UNCERTAINTY,
        "reviewer_state": E.INVALID_REVIEWER_STATE,
    }
    for name, code in chain_codes.items():
        add(f"chain {name}", code, EvidenceChain, **{**chain_arguments, name: h})
    add(
        "chain source",
        E.INVALID_SOURCE_LOCATION,
        EvidenceChain,
        **{**chain_arguments, "source_locations": [source, h]},
    )
    add("source digest", E.INVALID_DIGEST, SourceLocation, h, 1, 2)
    add("source start", E.INVALID_OFFSET, SourceLocation, d(9), h, 2)
    add("source end", E.INVALID_OFFSET, SourceLocation, d(9), 1, h)
    add("source kind", E.INVALID_SOURCE_KIND, SourceLocation, d(9), 1, 2, h)
    add("gold case id", E.INVALID_CASE_ID, GoldField, h, TEXT, "text", c.marker)
    add("gold field id", E.INVALID_FIELD_ID, GoldField, case, h, "text", c.marker)
    add("gold field type", E.INVALID_FIELD_TYPE, GoldField, case, TEXT, h, c.marker)
    add("gold value", E.INVALID_VALUE, GoldField, case, TEXT, "text", h)
    add("answer case id", E.INVALID_CASE_ID, Prediction, h, TEXT, c.marker)
    add("answer field id", E.INVALID_FIELD_ID, Prediction, case, h, c.marker)
    add("answer value", E.INVALID_VALUE, Prediction, case, TEXT, h)
    add("answer digest", E.INVALID_DIGEST, Prediction, case, TEXT, c.marker, h)
    add("answer chain", E.INVALID_EVIDENCE_CHAIN, Prediction, case, TEXT, c.marker, d(1), h)
    add("score gold", E.INVALID_COLLECTION, score, h, [])
    add("score predictions", E.INVALID_COLLECTION, score, gold, h)
    add("score gold item", E.INVALID_RECORD, score, [gold[0], h], [])
    add("score prediction item", E.INVALID_RECORD, score, gold, [h])
    add("score schema", E.INVALID_SCHEMA, score, gold, [], schema=h)
    add("score schema fields", E.INVALID_SCHEMA, score, gold, [], schema={"fields": h})
    add("score schema field", E.INVALID_SCHEMA, score, gold, [], schema={"fields": {TEXT: h}})
    add("schema type", E.SCHEMA_UNKNOWN_TYPE, Schema.from_dict, {"fields": {TEXT: {"type": h}}})
    levels = {"type": "ordinal", "levels": ["1", h]}
    add("schema level", E.SCHEMA_INVALID_LEVELS, Schema.from_dict, {"fields": {ORD: levels}})
    tolerance = {"type": "number", "tolerance": h}
    add(
        "schema tolerance",
        E.SCHEMA_INVALID_TOLERANCE,
        Schema.from_dict,
        {"fields": {NUM: tolerance}},
    )
    add("spec type", E.SCHEMA_UNKNOWN_TYPE, FieldSpec, h)
    add("spec levels", E.SCHEMA_INVALID_LEVELS, FieldSpec, "ordinal", levels=h)
    add("spec level", E.SCHEMA_INVALID_LEVELS, FieldSpec, "ordinal", levels=[1, h])
    add("spec choices", E.SCHEMA_INVALID_CHOICES, FieldSpec, "categorical", choices=h)
    add("spec choice", E.SCHEMA_INVALID_CHOICES, FieldSpec, "multi", choices=["a", h])
    add("spec tolerance", E.SCHEMA_INVALID_TOLERANCE, FieldSpec, "number", tolerance=h)
    add("spec days", E.SCHEMA_INVALID_TOLERANCE, FieldSpec, "date", tolerance_days=h)
    add("schema mapping", E.INVALID_SCHEMA, Schema, h)
    add("schema spec", E.INVALID_SCHEMA, Schema, {TEXT: h})
    add("gold from_dict", E.NOT_AN_OBJECT, GoldField.from_dict, h)
    row = {"case_id": case, "field_id": TEXT, "field_type": "text", "value": c.marker}
    add("gold from_dict case", E.INVALID_CASE_ID, GoldField.from_dict, {**row, "case_id": h})
    add("gold from_dict type", E.INVALID_FIELD_TYPE, GoldField.from_dict, {**row, "field_type": h})
    add("gold from_dict value", E.INVALID_VALUE, GoldField.from_dict, {**row, "value": h})
    answer = prediction_dict(c, TEXT, 0, c.marker)
    add("answer from_dict", E.NOT_AN_OBJECT, Prediction.from_dict, h)
    add("answer from_dict value", E.INVALID_VALUE, Prediction.from_dict, {**answer, "value": h})
    add(
        "answer from_dict chain",
        E.INVALID_EVIDENCE_CHAIN,
        Prediction.from_dict,
        {**answer, "evidence_chain": h},
    )
    raw_chain = chain_row(c, TEXT, 0)
    add(
        "answer from_dict sources",
        E.INVALID_EVIDENCE_CHAIN,
        Prediction.from_dict,
        {**answer, "evidence_chain": {**raw_chain, "source_locations": h}},
    )
    add(
        "answer from_dict source",
        E.INVALID_SOURCE_LOCATION,
        Prediction.from_dict,
        {**answer, "evidence_chain": {**raw_chain, "source_locations": [h]}},
    )
    add(
        "answer from_dict uncertainty",
        E.INVALID_UNCERTAINTY,
        Prediction.from_dict,
        {**answer, "evidence_chain": {**raw_chain, "uncertainty": h}},
    )
    return calls


@settings(max_examples=examples(30), deadline=None)
@given(
    canaries,
    st.sampled_from(["proxy", "text", "list", "mapping"]),
    st.sampled_from(["runtime", "value", "key", "os", "unicode", "chained"]),
)
def test_hostile_caller_objects_never_leak(c: Canary, kind: str, error_kind: str) -> None:
    # Each hostile object raises the caller's own exception, holding the canary, from
    # __class__ (so from isinstance), comparisons, hashing, len, iteration or reading.
    # chartscore must answer with its own coded, value-free error, chaining nothing.
    hostile = _hostile(kind, _callers_error(c, error_kind))
    calls = _hostile_calls(c, hostile)
    assert len({name for name, _, _ in calls}) == len(calls)
    for name, call, code in calls:
        error = raised(call)
        assert type(error) is ChartscoreError, (name, type(error).__name__)
        if kind == "proxy" or error.code is code:
            assert_clean_error(error, c, code if kind == "proxy" else error.code)
        else:
            # A str, list or dict subclass can be refused earlier or later in the same
            # record (its type is honest); whatever the code, it must be clean.
            assert_clean_error(error, c, error.code)


def test_lazy_proxy_schema_is_read_once() -> None:
    # A proxy that answers (a working lazy object) is read into a plain Schema once.
    class Working:
        def __init__(self, target: Schema) -> None:
            self._target = target

        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return Schema

        def __getattr__(self, name: str) -> object:
            return getattr(self._target, name)

    schema = Schema.from_dict({"fields": {TEXT: {"type": "categorical", "choices": ["a"]}}})
    proxy = Working(schema)
    assert isinstance(proxy, Schema)
    gold = [GoldField("c", TEXT, "categorical", "a")]
    assert score(gold, [], schema=proxy).to_json() == score(gold, [], schema=schema).to_json()


# --- pickling -------------------------------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(
    canaries,
    st.sampled_from(list(ErrorCode)),
    st.none() | st.sampled_from(list(InputKind)),
    st.none() | st.integers(min_value=1, max_value=10**9),
    st.none() | st.sampled_from([TEXT, ORD, "a.b_c.d9"]),
    st.none() | st.sampled_from(["field_type", "uncertainty", "kind"]),
    st.none() | st.integers(min_value=0, max_value=10**9),
)
def test_chartscore_error_pickle_round_trip(
    c: Canary,
    code: ErrorCode,
    source: InputKind | None,
    line: int | None,
    field_id: str | None,
    key: str | None,
    item: int | None,
) -> None:
    error = ChartscoreError(code, input=source, line=line, field_id=field_id, key=key, item=item)
    where = " ".join(
        part
        for part in (
            None if source is None else str(source),
            None if line is None else f"line {line}",
            None if item is None else f"item {item}",
            None if field_id is None else f"field {field_id}",
        )
        if part is not None
    )
    if key is not None:
        where = f"{where}, key {key}" if where else f"key {key}"
    assert str(error) == str(code) + (f" ({where})" if where else "")
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        clone = pickle.loads(pickle.dumps(error, protocol=protocol))
        assert type(clone) is ChartscoreError
        assert clone.code is code and str(clone) == str(error)
        assert (clone.input, clone.line, clone.field_id, clone.key, clone.item) == (
            source,
            line,
            field_id,
            key,
            item,
        )
    # A key outside the format (the canary) is never kept.
    assert ChartscoreError(code, key=c.marker.lower()).key is None
    # And errors raised from canary inputs pickle without their data.
    from_canary = raised(lambda: Prediction(c.long_case_id, TEXT, c.marker, c.digest(1)))
    assert_clean_error(from_canary, c, ErrorCode.INVALID_CASE_ID, "invalid_case_id")
    assert_clean_bytes(pickle.dumps(from_canary, protocol=0), c, "pickle protocol 0")


# --- the report vocabulary on arbitrary data -----------------------------------------------

_FIELD_IDS = ["a", "dx.onset", "hx.smoking", "z9_x.y_1", "vitals.weight_kg"]
_GOLD_VALUES = {
    "text": st.text(max_size=12),
    "categorical": st.text(max_size=12),
    "number": st.integers(-(10**30), 10**30)
    | st.decimals(min_value=-(10**12), max_value=10**12, places=4, allow_nan=False),
    "boolean": st.booleans(),
    "date": st.dates().map(lambda day: day.isoformat()),
    "multi": st.lists(st.text(max_size=6), max_size=3),
}
_ANSWERS = st.none() | st.one_of(*_GOLD_VALUES.values())


@st.composite
def arbitrary_data(draw: st.DrawFn) -> tuple[list[GoldField], list[Prediction]]:
    field_ids = draw(st.lists(st.sampled_from(_FIELD_IDS), min_size=1, max_size=3, unique=True))
    types = {f: draw(st.sampled_from(sorted(_GOLD_VALUES))) for f in field_ids}
    cases = draw(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=6, unique=True))
    gold, predictions = [], []
    for field_id in field_ids:
        for case_id in cases:
            value = draw(st.none() | _GOLD_VALUES[types[field_id]])
            gold.append(GoldField(case_id, field_id, types[field_id], value))
            if draw(st.booleans()):
                predictions.append(Prediction(case_id, field_id, draw(_ANSWERS)))
    return gold, draw(st.permutations(predictions))


@settings(max_examples=examples(150), deadline=None)
@given(arbitrary_data())
def test_report_holds_only_the_closed_vocabulary(
    data: tuple[list[GoldField], list[Prediction]],
) -> None:
    gold, predictions = data
    # A categorical or boolean field whose gold rows are all null crashes scoring: that
    # bug has its own test below, so it does not hide other findings here.
    kappa_fields = {g.field_id for g in gold if g.field_type.value in ("boolean", "categorical")}
    answerable = {g.field_id for g in gold if g.value is not None}
    assume(kappa_fields <= answerable)
    report = score(gold, predictions).to_json()
    assert_report_vocabulary(report, {g.field_id for g in gold})
    document = json.loads(report)
    assert document["overall"]["field_count"] == len(gold)
    assert set(document["by_field_type"]) == {g.field_type.value for g in gold}


@settings(max_examples=examples(10), deadline=None)
@given(canaries, st.sampled_from(["boolean", "categorical"]), st.sampled_from(["none", "abstain"]))
def test_kappa_field_with_only_unanswerable_gold_scores(
    c: Canary, field_type: str, answer: str
) -> None:
    # Found by the vocabulary test above. docs/metrics.md: kappa is null when there are
    # no pairs; every failure would be a ChartscoreError, and this input is valid.
    gold = [
        GoldField(c.case_id(0), CAT, field_type, None),
        GoldField(c.case_id(1), TEXT, "text", c.marker),
    ]
    predictions = [] if answer == "none" else [Prediction(c.case_id(0), CAT, None)]
    try:
        report = score(gold, predictions).to_json()
    except Exception as error:
        pytest.fail(
            f"score() raised {type(error).__name__}({error}) for a valid gold set whose "
            f"{field_type} field has only unanswerable rows"
        )
    assert_clean_text(report, c, "report")
    assert_report_vocabulary(report, {CAT, TEXT})
    assert json.loads(report)["by_field"][CAT]["kappa"] == {
        "value": None,
        "interval": None,
        "pairs": 0,
    }


# --- rendered reports and the report loader -------------------------------------------------

_RENDER_FORMATS = ("table", "markdown", "csv", "html", "summary")


def _rendered(report: chartscore.Report | SharedReport) -> dict[str, str]:
    from chartscore.render import render

    return {
        f"{fmt} by {sort}": render(report, fmt, sort=sort)
        for fmt in _RENDER_FORMATS
        for sort in ("name", "rate")
    }


@settings(max_examples=examples(8), deadline=None, phases=NO_SHRINK)
@given(canaries)
def test_rendered_reports_leak_nothing(c: Canary) -> None:
    report_text, _ = _library_report(c)
    report = chartscore.Report.from_json(report_text)
    for where, text in _rendered(report).items():
        assert_clean_text(text, c, where, declared_fragments(c, FIELD_TYPES))
        for field_id in FIELD_TYPES:  # the field ids are the input strings that do appear
            assert field_id in text, (where, field_id)


def _renamed_dataset(ids: Canary, data: Canary) -> tuple[list[GoldField], list[Prediction]]:
    """The canary data set of ``data`` with field ids made from ``ids``' marker."""
    names = {
        field_id: f"f{ids.marker.lower()}.{field_id.split('.')[1]}" for field_id in FIELD_TYPES
    }
    gold_rows, prediction_rows = dataset(data)
    gold = [
        gold_record({**row, "field_id": names[row["field_id"]]})  # type: ignore[index]
        for row in gold_rows
    ]
    predictions = []
    for row in prediction_rows:
        renamed = {**row, "field_id": names[row["field_id"]]}  # type: ignore[index]
        if "evidence_chain" in row:
            renamed["evidence_chain"] = {**row["evidence_chain"], "field_id": renamed["field_id"]}  # type: ignore[dict-item]
        predictions.append(prediction_record(renamed))
    return gold, predictions


@settings(max_examples=examples(6), deadline=None, phases=NO_SHRINK)
@given(canaries, canaries)
def test_only_field_ids_reach_rendered_output(ids: Canary, data: Canary) -> None:
    # Field ids made from one canary, everything else from another: the first shows up in
    # every format, the second nowhere. The renderer sees the report only; this proves the
    # whole chain from records to rendered text.
    assume(ids.marker.lower() not in data.needles and data.marker.lower() not in ids.needles)
    schema = {
        "fields": {
            f"f{ids.marker.lower()}.{key.split('.')[1]}": spec
            for key, spec in schema_document(data)["fields"].items()  # type: ignore[attr-defined]
        }
    }
    gold, predictions = _renamed_dataset(ids, data)
    report = score(gold, predictions, schema=schema)
    for where, text in _rendered(report).items():
        names = [f"f{ids.marker.lower()}.{key.split('.')[1]}" for key in FIELD_TYPES]
        assert_clean_text(text, data, where, declared_fragments(data, names))
        assert f"f{ids.marker.lower()}" in text, where


@settings(max_examples=examples(4), deadline=None, phases=NO_SHRINK)
@given(canaries)
def test_rendered_shared_reports_leak_nothing(c: Canary) -> None:
    # The shared report of the canary data (chartscore.workflows.share.share at the default rule),
    # loaded back and rendered in every format and order: no case id, value, digest or
    # offset appears; the field ids do.
    from chartscore.documents import load_document
    from chartscore.workflows.share import share

    gold_rows, prediction_rows = dataset(c)
    gold = [gold_record(row) for row in gold_rows]
    predictions = [prediction_record(row) for row in prediction_rows]
    shared = share(gold, predictions, schema=schema_document(c), min_cell=11)
    text = shared.to_json()
    declared = declared_labels(c)  # named as in a report: schema choices, nothing else
    assert_clean_text(text, c, "shared report", declared)
    assert_clean_text(repr(shared), c, "shared report repr", declared)
    loaded = load_document(text)
    assert isinstance(loaded, SharedReport)
    for where, rendered in _rendered(loaded).items():
        assert_clean_text(rendered, c, f"shared {where}", declared)
        assert "suppressed" in rendered, where
        for field_id in FIELD_TYPES:
            assert field_id in rendered, (where, field_id)


def _report_document() -> dict[str, object]:
    gold = [GoldField("c1", TEXT, "text", "a"), GoldField("c2", CAT, "categorical", "b")]
    return json.loads(score(gold, [Prediction("c1", TEXT, "a")]).to_json())


def _loader_cases(c: Canary) -> list[tuple[str, str | bytes, ErrorCode]]:
    base = _report_document()
    text = json.dumps(base)

    def edited(path: tuple[str, ...], value: object) -> str:
        document = json.loads(text)
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return json.dumps(document, ensure_ascii=False)

    invalid, unknown = E.INVALID_REPORT, E.UNKNOWN_REPORT_FORMAT
    return [
        ("format", edited(("format",), c.marker), unknown),
        ("format version", edited(("format_version",), c.number), unknown),
        ("top-level key", edited((c.marker,), c.wide), invalid),
        ("scorer version", edited(("scorer", "version"), "1.0+" + c.marker), invalid),
        ("scorer version wide", edited(("scorer", "version"), c.wide), invalid),
        ("field id", edited(("by_field", c.bad_field_id), {}), invalid),
        ("field type", edited(("by_field_type", c.marker), {}), invalid),
        ("slice key", edited(("by_field", TEXT, c.marker), 1), invalid),
        ("count string", edited(("overall", "field_count"), c.marker), invalid),
        ("count decimal", edited(("overall", "field_count"), float(c.number)), invalid),
        ("count offset", edited(("overall", "field_count"), c.offset * 1000), invalid),
        (
            "interval",
            edited(("overall", "exact_agreement", "interval"), [0, float(c.number)]),
            invalid,
        ),
        ("kappa", edited(("by_field", CAT, "kappa", "value"), c.marker), invalid),
        ("duplicate key", text[:-1] + f', "{c.marker}": 1, "{c.marker}": 2}}', invalid),
        ("syntax", text[:-1] + f", {c.marker}}}", invalid),
        (
            "nan",
            text.replace('"field_count": 2', f'"field_count": NaN, "{c.marker}": 1', 1),
            invalid,
        ),
        ("bytes", b"\xff" + c.marker.encode() + text.encode(), invalid),
        ("not an object", json.dumps([c.marker, c.number]), invalid),
    ]


@settings(max_examples=examples(10), deadline=None)
@given(canaries)
def test_report_loader_errors_leak_nothing(c: Canary) -> None:
    cases = _loader_cases(c)
    assert len({name for name, _, _ in cases}) == len(cases)
    for _name, text, code in cases:
        assert_clean_error(
            raised(lambda t=text: chartscore.Report.from_json(t)), c, code, str(code)
        )
    from chartscore.render import render

    report = chartscore.Report.from_json(json.dumps(_report_document()))
    for fmt, sort in ((c.marker, "name"), ("table", c.wide), (c.number, c.marker)):
        assert_clean_error(raised(lambda f=fmt, s=sort: render(report, f, sort=s)), c, E.USAGE)
