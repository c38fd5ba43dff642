"""Issue 38, item 6: a newcomer's mistakes get a message that says what happened and what to do.

Each test makes the mistake through the command line and pins the exact one-line message
and the exit status. For a file given in the wrong place, a marker planted in its content
and in its name must not reach stderr.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chartscore.cli import main
from chartscore.errors import ChartscoreError, ErrorCode, closest, describe

from helpers import write_jsonl

CANARY = "zqxcanary7"
GOLD: list[dict[str, object]] = [
    {"case_id": f"{CANARY}-1", "field_id": "echo.lvef", "field_type": "number", "value": 35},
    {"case_id": f"{CANARY}-2", "field_id": "echo.lvef", "field_type": "number", "value": 55},
    {"case_id": f"{CANARY}-1", "field_id": "hx.smoking", "field_type": "categorical",
     "value": "former"},
    {"case_id": f"{CANARY}-2", "field_id": "hx.smoking", "field_type": "categorical",
     "value": "never"},
]  # fmt: skip
PREDICTIONS: list[dict[str, object]] = [
    {"case_id": f"{CANARY}-1", "field_id": "echo.lvef", "value": 35},
    {"case_id": f"{CANARY}-2", "field_id": "echo.lvef", "value": 50},
    {"case_id": f"{CANARY}-1", "field_id": "hx.smoking", "value": "former"},
    {"case_id": f"{CANARY}-2", "field_id": "hx.smoking", "value": None},
]
DICTIONARY = Path(__file__).parent / "data" / "importers" / "redcap_dictionary_ui.csv"
DICTIONARY_API = Path(__file__).parent / "data" / "importers" / "redcap_dictionary_api.csv"
GOLD_HINT = "this looks like a gold or predictions file: make a report with chartscore score first"
SWAPPED = "the arguments may be swapped (chartscore gate DOCUMENT --gates GATES.toml)"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def error_line(message: str, code: ErrorCode) -> str:
    return f"chartscore: error: {message}: {describe(code)}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    place = tmp_path / CANARY
    place.mkdir()
    return place


@pytest.fixture
def gold(folder: Path) -> Path:
    return write_jsonl(folder / f"gold-{CANARY}.jsonl", GOLD)


@pytest.fixture
def report(folder: Path, gold: Path) -> Path:
    predictions = write_jsonl(folder / f"pred-{CANARY}.jsonl", PREDICTIONS)
    out = folder / f"report-{CANARY}.json"
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions), "--out", str(out)]
    assert run([*argv, "--quiet"])[0] == 0
    return out


def gates_file(folder: Path, body: str) -> Path:
    path = folder / f"gates-{CANARY}.toml"
    path.write_text(f"# {CANARY}\n[[gate]]\n{body}\n", encoding="utf-8")
    return path


def no_leak(err: str) -> None:
    assert CANARY not in err and "Traceback" not in err and err.count("\n") == 1


# ----------------------------------------------------- 1. a gold file where a report goes

JSON_LINES = (
    "json_lines_document (report; " + GOLD_HINT + ")",
    ErrorCode.JSON_LINES_DOCUMENT,
)


@pytest.mark.parametrize(
    "argv",
    [
        ["render", "{}", "--format", "table"],
        ["render", "{}", "--format", "html"],
        ["gate", "{}", "--gates", "{gates}"],
        ["audit", "{}"],
    ],
)
def test_a_gold_file_given_as_a_document(argv: list[str], folder: Path, gold: Path) -> None:
    gates = gates_file(folder, 'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5')
    args = [str(gold) if a == "{}" else str(gates) if a == "{gates}" else a for a in argv]
    status, out, err = run(args)
    assert (status, out) == (1, "")
    assert err == error_line(*JSON_LINES)
    no_leak(err)


def test_a_predictions_file_given_as_a_document(folder: Path) -> None:
    predictions = write_jsonl(folder / f"pred-{CANARY}.jsonl", PREDICTIONS)
    status, _, err = run(["render", str(predictions), "--format", "table"])
    assert (status, err) == (1, error_line(*JSON_LINES))
    no_leak(err)


def test_other_json_lines_given_as_a_document_get_no_gold_hint(folder: Path) -> None:
    lines = folder / f"other-{CANARY}.jsonl"
    lines.write_text(f'{{"{CANARY}": 1}}\n{{"{CANARY}": 2}}\n', encoding="utf-8")
    status, _, err = run(["render", str(lines), "--format", "table"])
    expected = ("json_lines_document (report)", ErrorCode.JSON_LINES_DOCUMENT)
    assert (status, err) == (1, error_line(*expected))
    no_leak(err)


def test_the_library_error_has_the_code_and_no_context(gold: Path) -> None:
    from chartscore.io import load_document_file

    with pytest.raises(ChartscoreError) as caught:
        load_document_file(gold)
    assert caught.value.code is ErrorCode.JSON_LINES_DOCUMENT
    assert caught.value.__context__ is None and caught.value.__cause__ is None


# ------------------------------------------- 2. a REDCap dictionary where a schema goes


@pytest.mark.parametrize("dictionary", [DICTIONARY, DICTIONARY_API])
def test_a_redcap_dictionary_given_as_schema(
    dictionary: Path, folder: Path, gold: Path, report: Path
) -> None:
    schema = folder / f"dictionary-{CANARY}.csv"
    schema.write_bytes(dictionary.read_bytes() + f"{CANARY},intake,,text,x\n".encode())
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions), "--quiet"]
    status, out, err = run([*argv, "--schema", str(schema)])
    hint = (
        "this looks like a REDCap data dictionary: make a schema with "
        "chartscore import redcap --dictionary FILE --schema-out schema.json"
    )
    assert (status, out) == (1, "")
    assert err == error_line(f"invalid_json (schema line 1; {hint})", ErrorCode.INVALID_JSON)
    no_leak(err)


def test_another_csv_given_as_schema_gets_no_hint(folder: Path, gold: Path) -> None:
    schema = folder / f"table-{CANARY}.csv"
    schema.write_text(f"case_id,{CANARY}\n1,2\n", encoding="utf-8")
    argv = ["score", "--gold", str(gold), "--predictions", str(gold), "--schema", str(schema)]
    status, _, err = run(argv)
    assert (status, err) == (1, error_line("invalid_json (schema line 1)", ErrorCode.INVALID_JSON))
    no_leak(err)


# ------------------------------------------------------------ 3. swapped gate arguments


def test_gate_arguments_swapped(folder: Path, report: Path) -> None:
    gates = gates_file(folder, 'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5')
    status, out, err = run(["gate", str(gates), "--gates", str(report)])
    hint = f"the gates file looks like a JSON document: {SWAPPED}"
    assert (status, out) == (1, "")
    assert err == error_line(f"invalid_toml (gates line 1; {hint})", ErrorCode.INVALID_TOML)
    no_leak(err)


def test_a_gates_file_given_as_the_document(folder: Path) -> None:
    gates = gates_file(folder, 'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5')
    status, out, err = run(["gate", str(gates), "--gates", str(gates)])
    hint = f"this looks like a gates file (TOML), not a document: {SWAPPED}"
    assert (status, out) == (1, "")
    assert err == error_line(f"invalid_report ({hint})", ErrorCode.INVALID_REPORT)
    no_leak(err)


def test_a_broken_gates_file_gets_no_swap_hint(folder: Path, report: Path) -> None:
    gates = folder / f"gates-{CANARY}.toml"
    gates.write_text(f"[[gate]\n{CANARY} = 1\n", encoding="utf-8")
    status, _, err = run(["gate", str(report), "--gates", str(gates)])
    assert (status, err) == (1, error_line("invalid_toml (gates line 1)", ErrorCode.INVALID_TOML))
    no_leak(err)


# ------------------------------------------------------- 4. the field an option misses

NOT_APPLICABLE = ErrorCode.NOT_APPLICABLE_OPTION


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--ordinal", "NYHA"], "not_applicable_option (did you mean nyha?)"),
        (["--ordinal", "NYHA_CLAS"], "not_applicable_option (did you mean nyha?)"),
        (["--ordinal", "ZZZZ"], "not_applicable_option"),  # no field: the name is not shown
        (["--ordinal", "MRS"], "not_applicable_option (did you mean mrs?)"),
        (["--ordinal", "smokr"], "not_applicable_option (field smokr; did you mean smoker?)"),
        (["--ordinal", "arrival"], "not_applicable_option (field arrival)"),
        (["--tolerance", "nihs=1"], "not_applicable_option (field nihs; did you mean nihss?)"),
        (["--tolerance", "NIHSS=1"], "not_applicable_option (did you mean nihss?)"),
        (["--exclude-fields", "HPI"], "not_applicable_option (did you mean hpi?)"),
    ],
)
def test_an_import_option_names_its_field(option: list[str], message: str, tmp_path: Path) -> None:
    out, dictionary = tmp_path / "schema.json", tmp_path / "dictionary.csv"
    nyha = 'nyha,intake,,radio,"NYHA class","1, I | 2, II | 3, III | 4, IV"' + "," * 12 + "\n"
    dictionary.write_bytes(DICTIONARY.read_bytes() + nyha.encode())
    argv = ["import", "redcap", "--dictionary", str(dictionary), "--schema-out", str(out)]
    status, stdout, err = run([*argv, *option])
    assert (status, stdout, err) == (1, "", error_line(message, NOT_APPLICABLE))
    assert not out.exists()


# --------------------------------------------------- 5. did you mean, in a gates file


@pytest.mark.parametrize(
    ("body", "message", "code"),
    [
        (
            'slice = "overall"\nmetric = "agrement"\nmin_lower = 0.5',
            "invalid_gate (gate 1 on line 2; unknown metric agrement; "
            "did you mean exact_agreement?)",
            ErrorCode.INVALID_GATE,
        ),
        (
            'slice = "overall"\nmetric = "sensitivty"\nmin_lower = 0.5',
            "invalid_gate (gate 1 on line 2; unknown metric sensitivty; did you mean sensitivity?)",
            ErrorCode.INVALID_GATE,
        ),
        (
            'slice = "overal"\nmetric = "exact_agreement"\nmin_lower = 0.5',
            "invalid_gate (gate 1 on line 2; unknown slice overal; did you mean overall?)",
            ErrorCode.INVALID_GATE,
        ),
        (
            'slice = "feild:echo.lvef"\nmetric = "exact_agreement"\nmin_lower = 0.5',
            "invalid_gate (gate 1 on line 2; unknown slice feild:echo.lvef; "
            "did you mean field:echo.lvef?)",
            ErrorCode.INVALID_GATE,
        ),
        (
            'slice = "type:numbr"\nmetric = "exact_agreement"\nmin_lower = 0.5',
            "invalid_gate (gate 1 on line 2; unknown slice type:numbr; did you mean type:number?)",
            ErrorCode.INVALID_GATE,
        ),
        (
            'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5\nlevel = "warn"',
            "invalid_gate (gate 1 on line 2; unknown level warn; did you mean warning?)",
            ErrorCode.INVALID_GATE,
        ),
        (
            'slice = "overall"\nmetric = "exact_agreement"\nmin_lowr = 0.5',
            "unknown_key (gate 1 on line 2, key min_lowr; did you mean min_lower?)",
            ErrorCode.UNKNOWN_KEY,
        ),
        (
            'slice = "field:echo.lvf"\nmetric = "exact_agreement"\nmin_lower = 0.5',
            "gate_slice_missing (gate 1 on line 2 field echo.lvf; did you mean field:echo.lvef?)",
            ErrorCode.GATE_SLICE_MISSING,
        ),
        (
            'slice = "field:echo.lvef"\nmetric = "pattern_agreement"\nmin_lower = 0.5',
            "gate_metric_missing (gate 1 on line 2; did you mean exact_agreement?)",
            ErrorCode.GATE_METRIC_MISSING,
        ),
        (
            'slice = "overall"\nmetric = "zzzz"\nmin_lower = 0.5',
            "invalid_gate (gate 1 on line 2; unknown metric zzzz)",
            ErrorCode.INVALID_GATE,
        ),
    ],
)
def test_a_gates_file_typo_gets_did_you_mean(
    body: str, message: str, code: ErrorCode, folder: Path, report: Path
) -> None:
    gates = gates_file(folder, body)
    status, out, err = run(["gate", str(report), "--gates", str(gates)])
    assert (status, out, err) == (1, "", error_line(message, code))


def test_closest_is_deterministic() -> None:
    # difflib breaks ties by the later name; chartscore by the earlier.
    assert closest("agrement", ["fuzzy_agreement", "exact_agreement"]) == "exact_agreement"
    assert closest("agrement", ["exact_agreement", "fuzzy_agreement"]) == "exact_agreement"
    assert closest("zzzz", ["overall"]) is None
    assert closest(None, ["overall"]) is None


def test_a_suggestion_is_shown_only_when_it_is_safe() -> None:
    # Outside a gates file only a field id may be suggested: anything else could be data.
    assert ChartscoreError(ErrorCode.NOT_APPLICABLE_OPTION, suggestion="Ab C").suggestion is None
    assert ChartscoreError(ErrorCode.INVALID_JSON, suggestion="x y").suggestion is None
    kept = ChartscoreError(ErrorCode.INVALID_GATE, gate=1, suggestion="exact_agreement")
    assert str(kept) == "invalid_gate (gate 1; did you mean exact_agreement?)"
    assert json.dumps(kept.suggestion) == '"exact_agreement"'
