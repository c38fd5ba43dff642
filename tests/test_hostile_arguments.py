"""Hostile arguments stay inside the vocabulary.

Every public entry point is called with a hostile object planted in each
argument (and in each item of a list argument and each value of a mapping
argument, one level down): an object whose ``__bool__``, ``__eq__``,
``__hash__``, ``__str__``, ``__iter__`` (and more) raise a private exception,
a ``str`` subclass doing the same, an object whose metaclass ``__eq__`` and
``__hash__`` raise, and a generator that raises. Only a ChartscoreError may
escape, and it must carry no ``__cause__`` or ``__context__``: the caller's
exception is never run outside a guard, and never chained.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from chartscore import (
    ChartscoreError,
    EvidenceChain,
    FieldSpec,
    GoldField,
    MetricResult,
    Prediction,
    Report,
    Schema,
    SliceReport,
    SourceLocation,
    batch_files,
    compare,
    compare_files,
    load_ledger_key,
    load_schema,
    read_ledger,
    record_run,
    score,
    score_dask,
    score_files,
    share,
    share_files,
    worklist,
    worklist_files,
    write_worklist,
)
from chartscore.disclosure import SharedReport, audit
from chartscore.documents import load_document
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import evaluate, parse_gates, parse_gates_bytes
from chartscore.importers import import_csv, import_labelstudio, import_redcap, write_imported
from chartscore.io import check_output, load_document_file, load_gates, write_atomic, write_output
from chartscore.io.ledger_file import append_line
from chartscore.ledger import LedgerEntry, ledger_table
from chartscore.records.gold_identity import LedgerKey, gold_identity
from chartscore.records.schema_digest import schema_digest
from chartscore.render import render, render_view, report_view
from chartscore.render.comparison_view import comparison_view
from chartscore.workflows.ledger import gold_state
from ledger_data import KEY, write_key

from helpers import chain_dict, digest, write_jsonl


class _PrivateError(Exception):
    """Only the caller knows this class; it must never reach chartscore's caller."""


def _raise(*_args: object, **_kwargs: object) -> Any:
    raise _PrivateError


_RAISING = (
    "__bool__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__str__",
    "__repr__",
    "__format__",
    "__iter__",
    "__len__",
    "__contains__",
    "__getitem__",
    "__fspath__",
    "__index__",
    "__int__",
    "__float__",
    "__add__",
    "__radd__",
)


class _Hostile:
    """An object whose every protocol method raises the caller's private exception."""

    def __getattr__(self, name: str) -> Any:
        raise _PrivateError


class _HostileStr(str):
    """A str subclass whose methods raise (and which claims to be a path)."""

    def __getattribute__(self, name: str) -> Any:
        if name in {"__class__", "__dict__"}:
            return object.__getattribute__(self, name)
        raise _PrivateError


for _name in _RAISING:
    setattr(_Hostile, _name, _raise)
    setattr(_HostileStr, _name, _raise)


class _Meta(type):
    """A metaclass whose comparisons and hash raise: ``type(x) == int`` runs it."""

    __eq__ = _raise
    __ne__ = _raise
    __hash__ = _raise  # type: ignore[assignment]


class _MetaHostile(metaclass=_Meta):
    """An instance whose own methods are harmless, but whose type's are not."""


def _raising_generator() -> Iterator[object]:
    raise _PrivateError
    yield  # pragma: no cover - makes this a generator


def _hostiles(valid: object) -> list[object]:
    text = valid if type(valid) is str else "x"
    return [_Hostile(), _HostileStr(text), _MetaHostile(), _raising_generator()]


def _planted(valid: object, depth: int = 0) -> Iterator[object]:
    """``valid`` with a hostile object in its place, or in one item or value of it."""
    yield from _hostiles(valid)
    if depth >= 3:
        return
    if type(valid) is list:
        for index, item in enumerate(valid):
            for planted in _planted(item, depth + 1):
                yield [*valid[:index], planted, *valid[index + 1 :]]
    elif type(valid) is dict:
        for key, item in valid.items():
            for planted in _planted(item, depth + 1):
                yield {**valid, key: planted}


def _is_clean(error: BaseException) -> bool:
    return error.__cause__ is None and error.__context__ is None


D1, D2, D3 = digest("one"), digest("two"), digest("three")
IMPORTS = Path(__file__).resolve().parent / "data" / "importers"


def _entries(tmp: Path) -> dict[str, tuple[Callable[..., object], dict[str, Any]]]:
    """Every public entry point, with valid arguments by name."""
    gold = [GoldField("c1", "f.x", "categorical", "a"), GoldField("c2", "f.x", "categorical", "b")]
    predictions = [Prediction("c1", "f.x", "a"), Prediction("c2", "f.x", "a")]
    gold_row = {"case_id": "c1", "field_id": "f.x", "field_type": "categorical", "value": "a"}
    prediction_row = {
        "case_id": "c1",
        "field_id": "f.x",
        "value": "a",
        "normalized_fact_digest": D2,
        "evidence_chain": chain_dict("f.x", D2),
    }
    gold_path = str(write_jsonl(tmp / "gold.jsonl", [gold_row]))
    predictions_path = str(write_jsonl(tmp / "predictions.jsonl", [prediction_row]))
    schema_document = {"fields": {"f.x": {"type": "categorical", "choices": ["a", "b"]}}}
    schema_path = tmp / "schema.json"
    schema_path.write_text(json.dumps(schema_document), encoding="utf-8")
    gates_text = '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.1\n'
    gates_path = tmp / "gates.toml"
    gates_path.write_text(gates_text, encoding="utf-8")
    report = score(gold, predictions)
    report_text = report.to_json()
    report_path = tmp / "report.json"
    report_path.write_text(report_text, encoding="utf-8")
    comparison_text = compare(gold, predictions, predictions).to_json()
    shared_text = share(gold * 1, predictions, min_cell=2).to_json()
    files = {"gold": gold_path, "predictions": predictions_path}
    options = {"extra_predictions": "error", "strict_schema": False}
    key = LedgerKey(KEY)
    key_path = str(write_key(tmp / "ledger.key"))
    moment = datetime.datetime(2026, 5, 9, tzinfo=datetime.UTC)
    ledger_path = str(tmp / "ledger.jsonl")
    recorded = record_run(
        ledger_path, report, key=key, gold=gold_path, gold_before=gold_state(gold_path),
        system="sys-a", time=moment,
    )  # fmt: skip
    line = recorded.to_line()
    return {
        "record_run": (
            record_run,
            {
                "ledger": ledger_path,
                "document": Report.from_json(score_files(gold_path, predictions_path).to_json()),
                "key": key,
                "gold": gold_path,
                "gold_before": gold_state(gold_path),
                "system": "sys-a",
                "schema": None,
                "run_id": "run-1",
                "versus": None,
                "inputs": [predictions_path],
                "time": moment,
            },
        ),
        "read_ledger": (read_ledger, {"ledger": ledger_path}),
        "load_ledger_key": (load_ledger_key, {"path": key_path, "environ": None}),
        "load_ledger_key environ": (
            load_ledger_key,
            {"path": None, "environ": {"CHARTSCORE_LEDGER_KEY_FILE": key_path}},
        ),
        "gold_identity": (gold_identity, {"gold": gold, "key": key}),
        "schema_digest": (schema_digest, {"schema": Schema.from_dict(schema_document), "key": key}),
        "LedgerEntry.from_line": (LedgerEntry.from_line, {"data": line}),
        "ledger_table": (
            ledger_table,
            {"ledger": read_ledger(ledger_path), "mixed": False, "every_line": True},
        ),
        "append_line": (append_line, {"ledger": ledger_path, "line": line, "inputs": [gold_path]}),
        "batch_files": (
            batch_files,
            {
                "gold": gold_path,
                "predictions": [predictions_path],
                "ledger": str(tmp / "batch.jsonl"),
                "key": key,
                "baseline": "predictions",
                "gates": [],
                "schema": None,
                "jobs": 1,
                "extra_predictions": "error",
                "inputs": [],
                "time": moment,
            },
        ),
        "score": (
            score,
            {"gold": gold, "predictions": predictions, "schema": schema_document, **options},
        ),
        "compare": (
            compare,
            {"gold": gold, "baseline": predictions, "candidate": predictions, "schema": None},
        ),
        "share": (share, {"gold": gold, "predictions": predictions, "min_cell": 2, **options}),
        "score_files": (
            score_files,
            {**files, "schema": str(schema_path), "progress": None, "parallel": False, **options},
        ),
        "compare_files": (
            compare_files,
            {
                "gold": gold_path,
                "baseline": predictions_path,
                "candidate": predictions_path,
                "schema": None,
                "progress": None,
            },
        ),
        "share_files": (
            share_files,
            {**files, "min_cell": 2, "parallel": False, "suppressing": None, **options},
        ),
        "score_dask": (
            score_dask,
            {**files, "schema": None, "scheduler": "synchronous", "partitions": 1, **options},
        ),
        "load_schema": (load_schema, {"path": str(schema_path)}),
        "load_gates": (load_gates, {"path": str(gates_path)}),
        "load_document_file": (load_document_file, {"path": str(report_path)}),
        "GoldField": (
            GoldField,
            {"case_id": "c1", "field_id": "f.x", "field_type": "multi", "value": ["a", "b"]},
        ),
        "GoldField.from_dict": (GoldField.from_dict, {"row": gold_row}),
        "Prediction": (
            Prediction,
            {
                "case_id": "c1",
                "field_id": "f.x",
                "value": ["a"],
                "normalized_fact_digest": D2,
                "evidence_chain": None,
            },
        ),
        "Prediction.from_dict": (Prediction.from_dict, {"row": prediction_row}),
        "GoldField.from_rows": (GoldField.from_rows, {"rows": [gold_row, gold_row]}),
        "Prediction.from_rows": (Prediction.from_rows, {"rows": [prediction_row]}),
        "EvidenceChain": (
            EvidenceChain,
            {
                "field_id": "f.x",
                "source_locations": [SourceLocation(D1, 0, 1), SourceLocation(D1, 1, 2)],
                "normalized_fact_digest": D2,
                "transformation_kind": "rule",
                "transformation_digest": D3,
                "uncertainty": Decimal("0.5"),
                "reviewer_state": "pending",
            },
        ),
        "SourceLocation": (
            SourceLocation,
            {"source_digest": D1, "start_offset": 0, "end_offset": 1, "kind": "generated_text"},
        ),
        "FieldSpec ordinal": (FieldSpec, {"field_type": "ordinal", "levels": ["a", 2]}),
        "FieldSpec multi": (FieldSpec, {"field_type": "multi", "choices": ["a", "b"]}),
        "FieldSpec number": (FieldSpec, {"field_type": "number", "tolerance": 1}),
        "FieldSpec date": (FieldSpec, {"field_type": "date", "tolerance_days": 1}),
        "Schema": (Schema, {"fields": {"f.x": FieldSpec("text")}}),
        "Schema.from_dict": (Schema.from_dict, {"document": schema_document}),
        "Report.from_json": (Report.from_json, {"text": report_text}),
        "Comparison.from_json": (Comparison.from_json, {"text": comparison_text}),
        "SharedReport.from_json": (SharedReport.from_json, {"text": shared_text}),
        "load_document": (load_document, {"text": report_text}),
        "render": (render, {"report": report, "fmt": "table", "sort": "name"}),
        "evaluate": (evaluate, {"document": report, "gates": list(parse_gates(gates_text))}),
        "parse_gates": (parse_gates, {"text": gates_text}),
        "parse_gates_bytes": (parse_gates_bytes, {"data": gates_text.encode()}),
        "render_view": (render_view, {"view": report_view(report), "fmt": "markdown"}),
        "report_view": (report_view, {"report": report, "sort": "rate"}),
        "comparison_view": (comparison_view, {"comparison": Comparison.from_json(comparison_text)}),
        "SliceReport.metric": (report.overall.metric, {"name": "exact_agreement"}),
        "SliceReport.count": (report.overall.count, {"name": "missing_count"}),
        "SliceReport.from_dict": (
            SliceReport.from_dict,
            {
                "value": json.loads(report_text)["overall"],
                "kind": "overall",
                "z": 1.9599639845400536,
            },
        ),
        "MetricResult.from_dict": (
            MetricResult.from_dict,
            {
                "value": json.loads(report_text)["by_field"]["f.x"]["exact_agreement"],
                "z": 1.9599639845400536,
                "pooled": False,
            },
        ),
        "Schema.get": (Schema.from_dict(schema_document).get, {"field_id": "f.x"}),
        "Comparison.from_dict": (Comparison.from_dict, {"document": json.loads(comparison_text)}),
        "SharedReport.from_dict": (SharedReport.from_dict, {"document": json.loads(shared_text)}),
        "audit": (audit, {"document": shared_text}),
        "write_atomic": (write_atomic, {"path": str(tmp / "out.json"), "data": b"{}"}),
        "check_output": (check_output, {"out": str(tmp / "out.json"), "inputs": [gold_path]}),
        "write_output": (
            write_output,
            {"data": b"{}", "out": str(tmp / "out.json"), "inputs": [gold_path]},
        ),
        "import_redcap": (
            import_redcap,
            {
                "dictionary": str(IMPORTS / "redcap_dictionary_ui.csv"),
                "records": str(IMPORTS / "redcap_records_gold.csv"),
                "role": "gold",
                "missing_codes": ["UNK", "NA"],
                "tolerances": {"nihss": "1"},
                "ordinal": ["mrs"],
                "repeating": "refuse",
            },
        ),
        "import_labelstudio": (
            import_labelstudio,
            {
                "export": str(IMPORTS / "labelstudio_cold.json"),
                "gold_annotator": 6,
                "annotator": 3,
                "labels": ["Cough", "Fatigue"],
                "field": "symptom",
                "per_label": True,
                "notes": [1, 3, 4],
                "raters": [5],
                "config": None,
            },
        ),
        "import_csv": (
            import_csv,
            {
                "table": str(IMPORTS / "csv_table.csv"),
                "columns": {
                    "case_id": "chart",
                    "fields": {"hx.smoking": "smoking"},
                    "missing": ["NA"],
                },
                "role": "predictions",
                "schema": None,
            },
        ),
        "write_imported": (
            write_imported,
            {
                "imported": import_csv(
                    IMPORTS / "csv_table.csv",
                    {"case_id": "chart", "fields": {"hx.smoking": "smoking"}},
                    role="predictions",
                ),
                "predictions": str(tmp / "imported.jsonl"),
                "inputs": [gold_path],
            },
        ),
        "worklist": (
            worklist,
            {
                "gold": gold,
                "predictions": predictions,
                "schema": schema_document,
                "extra_predictions": "error",
            },
        ),
        "worklist_files": (
            worklist_files,
            {**files, "schema": str(schema_path), "extra_predictions": "error", "parallel": False},
        ),
        "write_worklist": (
            write_worklist,
            {
                "found": worklist(gold, predictions),
                "out": str(tmp / "w.csv"),
                "inputs": [gold_path],
            },
        ),
    }


_SLOTS = [
    (
        "record_run",
        ["ledger", "document", "key", "gold", "gold_before", "system", "schema", "run_id"],
    ),
    ("record_run", ["versus", "inputs", "time"]),
    ("read_ledger", ["ledger"]),
    ("load_ledger_key", ["path"]),
    ("load_ledger_key environ", ["environ"]),
    ("gold_identity", ["gold", "key"]),
    ("schema_digest", ["schema", "key"]),
    ("LedgerEntry.from_line", ["data"]),
    ("ledger_table", ["ledger", "mixed", "every_line"]),
    ("append_line", ["ledger", "line", "inputs"]),
    ("batch_files", ["gold", "predictions", "ledger", "key", "baseline", "gates", "schema"]),
    ("batch_files", ["jobs", "extra_predictions", "inputs", "time"]),
    ("score", ["gold", "predictions", "schema", "extra_predictions", "strict_schema"]),
    ("compare", ["gold", "baseline", "candidate", "schema"]),
    ("share", ["gold", "predictions", "min_cell", "extra_predictions", "strict_schema"]),
    (
        "score_files",
        ["gold", "predictions", "schema", "progress", "parallel", "extra_predictions"],
    ),
    ("score_files", ["strict_schema"]),
    ("compare_files", ["gold", "baseline", "candidate", "schema", "progress"]),
    ("share_files", ["gold", "predictions", "min_cell", "parallel", "suppressing"]),
    ("share_files", ["extra_predictions", "strict_schema"]),
    ("score_dask", ["gold", "predictions", "schema", "scheduler", "partitions"]),
    ("score_dask", ["extra_predictions", "strict_schema"]),
    ("load_schema", ["path"]),
    ("load_gates", ["path"]),
    ("load_document_file", ["path"]),
    ("GoldField", ["case_id", "field_id", "field_type", "value"]),
    ("GoldField.from_dict", ["row"]),
    ("Prediction", ["case_id", "field_id", "value", "normalized_fact_digest", "evidence_chain"]),
    ("Prediction.from_dict", ["row"]),
    ("GoldField.from_rows", ["rows"]),
    ("Prediction.from_rows", ["rows"]),
    (
        "EvidenceChain",
        [
            "field_id",
            "source_locations",
            "normalized_fact_digest",
            "transformation_kind",
            "transformation_digest",
            "uncertainty",
            "reviewer_state",
        ],
    ),
    ("SourceLocation", ["source_digest", "start_offset", "end_offset", "kind"]),
    ("FieldSpec ordinal", ["field_type", "levels"]),
    ("FieldSpec multi", ["field_type", "choices"]),
    ("FieldSpec number", ["tolerance"]),
    ("FieldSpec date", ["tolerance_days"]),
    ("Schema", ["fields"]),
    ("Schema.from_dict", ["document"]),
    ("Report.from_json", ["text"]),
    ("Comparison.from_json", ["text"]),
    ("SharedReport.from_json", ["text"]),
    ("load_document", ["text"]),
    ("render", ["report", "fmt", "sort"]),
    ("evaluate", ["document", "gates"]),
    ("parse_gates", ["text"]),
    ("parse_gates_bytes", ["data"]),
    ("render_view", ["view", "fmt"]),
    ("report_view", ["report", "sort"]),
    ("comparison_view", ["comparison"]),
    ("SliceReport.metric", ["name"]),
    ("SliceReport.count", ["name"]),
    ("SliceReport.from_dict", ["value", "kind", "z"]),
    ("MetricResult.from_dict", ["value", "z", "pooled"]),
    ("Schema.get", ["field_id"]),
    ("Comparison.from_dict", ["document"]),
    ("SharedReport.from_dict", ["document"]),
    ("audit", ["document"]),
    ("write_atomic", ["path", "data"]),
    ("check_output", ["out", "inputs"]),
    ("write_output", ["data", "out", "inputs"]),
    (
        "import_redcap",
        ["dictionary", "records", "role", "missing_codes", "tolerances", "ordinal", "repeating"],
    ),
    (
        "import_labelstudio",
        [
            "export",
            "gold_annotator",
            "annotator",
            "raters",
            "labels",
            "field",
            "per_label",
            "notes",
            "config",
        ],
    ),
    ("import_csv", ["table", "columns", "role", "schema"]),
    ("write_imported", ["imported", "predictions", "inputs"]),
    ("worklist", ["gold", "predictions", "schema", "extra_predictions"]),
    ("worklist_files", ["gold", "predictions", "schema", "extra_predictions", "parallel"]),
    ("write_worklist", ["found", "out", "inputs"]),
]
CASES = [(entry, argument) for entry, arguments in _SLOTS for argument in arguments]


@pytest.fixture(scope="module")
def entries(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[Callable[..., object], dict[str, Any]]]:
    return _entries(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize(("entry", "argument"), CASES, ids=[f"{e}-{a}" for e, a in CASES])
def test_only_chartscore_errors_escape(
    entries: dict[str, tuple[Callable[..., object], dict[str, Any]]], entry: str, argument: str
) -> None:
    function, valid = entries[entry]
    function(**valid)  # the valid call works, so each failure below is the planted object's
    tried = 0
    for planted in _planted(valid[argument]):
        tried += 1
        try:
            function(**{**valid, argument: planted})
        except ChartscoreError as error:
            assert _is_clean(error), (entry, argument, type(planted).__name__)
    assert tried >= 4


def test_the_hostile_objects_are_hostile() -> None:
    # The test above proves something only if these raise where chartscore could touch them.
    for hostile in _hostiles("x"):
        with pytest.raises(_PrivateError):
            if type(hostile).__name__ == "generator":
                next(hostile)  # type: ignore[call-overload]
            elif type(hostile) is _MetaHostile:
                _ = type(hostile) in (int, str)
            else:
                _ = hostile == "x" or hash(hostile)
    with pytest.raises(_PrivateError):
        bool(_Hostile())
    with pytest.raises(_PrivateError):
        str(_HostileStr("x"))
