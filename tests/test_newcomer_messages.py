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


# --------------------------------------- 6. a report or a strata file where rows go (analyst)

DOCUMENT_AS_ROWS = (
    "this looks like a chartscore document (a report): gold and predictions are JSON Lines of rows"
)
STRATA_SCHEMA: dict[str, object] = {
    "fields": {"echo.lvef": {"type": "number"}, "hx.smoking": {"type": "categorical"}},
    "strata": {"site": ["a", "b"]},
}


def strata_inputs(folder: Path) -> tuple[Path, Path]:
    schema = folder / f"schema-{CANARY}.json"
    schema.write_text(json.dumps(STRATA_SCHEMA), encoding="utf-8")
    strata = write_jsonl(
        folder / f"strata-{CANARY}.jsonl",
        [{"case_id": f"{CANARY}-{n}", "strata": {"site": "ab"[n - 1]}} for n in (1, 2)],
    )
    return schema, strata


@pytest.mark.parametrize("command", ["score", "share", "worklist"])
def test_a_report_given_as_gold(command: str, folder: Path, report: Path) -> None:
    # Was "missing_key (gold line 1, key case_id)" alone: no word of what the file is.
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    argv = [command, "--gold", str(report), "--predictions", str(predictions)]
    status, out, err = run([*argv, "--out", str(folder / "out.csv")])
    message = f"missing_key (gold line 1, key case_id; {DOCUMENT_AS_ROWS})"
    assert (status, out, err) == (1, "", error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


@pytest.mark.parametrize("where", ["--predictions", "--baseline", "--candidate"])
def test_a_report_given_as_predictions(where: str, folder: Path, gold: Path, report: Path) -> None:
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    files = {"--predictions": predictions, "--baseline": predictions, "--candidate": predictions}
    files[where] = report
    command = "score" if where == "--predictions" else "compare"
    names = ["--predictions"] if command == "score" else ["--baseline", "--candidate"]
    argv = [command, "--gold", str(gold), *[a for n in names for a in (n, str(files[n]))]]
    status, _, err = run(argv)
    message = f"missing_key ({where[2:]} line 1, key case_id; {DOCUMENT_AS_ROWS})"
    assert (status, err) == (1, error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


def test_other_rows_without_case_id_get_no_document_hint(folder: Path) -> None:
    rows = write_jsonl(folder / f"g-{CANARY}.jsonl", [{"field_id": "echo.lvef", CANARY: 1}])
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    status, _, err = run(["score", "--gold", str(rows), "--predictions", str(predictions)])
    message = "missing_key (gold line 1, key case_id)"
    assert (status, err) == (1, error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


def test_the_document_hint_error_has_no_context(folder: Path, report: Path) -> None:
    from chartscore import score_files
    from chartscore.errors import ErrorHint

    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    with pytest.raises(ChartscoreError) as caught:
        score_files(report, predictions)
    assert caught.value.hint is ErrorHint.DOCUMENT_AS_ROWS
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_a_strata_file_given_as_gold(folder: Path) -> None:
    schema, strata = strata_inputs(folder)
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    argv = ["score", "--gold", str(strata), "--predictions", str(predictions)]
    status, _, err = run([*argv, "--schema", str(schema)])
    hint = "this looks like a strata file (case_id to strata), not JSON Lines of rows"
    message = f"missing_key (gold line 1, key field_id; {hint})"
    assert (status, err) == (1, error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


def _scored_with_strata(folder: Path, gold: Path, strata: Path) -> tuple[int, str]:
    # `score` of gold (and canary-named predictions) with ``strata`` given as --strata.
    schema, _ = strata_inputs(folder)
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    status, _, err = run([*argv, "--schema", str(schema), "--strata", str(strata)])
    return status, err


@pytest.mark.parametrize("given", ["gold", "predictions"])
def test_a_gold_or_predictions_file_given_as_strata(given: str, folder: Path, gold: Path) -> None:
    # Was "missing_key (strata line 1, key strata)" alone.
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    status, err = _scored_with_strata(folder, gold, gold if given == "gold" else predictions)
    hint = "this looks like a gold or predictions file: a strata file maps case_id to strata"
    message = f"missing_key (strata line 1, key strata; {hint})"
    assert (status, err) == (1, error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


def test_a_strata_line_lacking_strata_later_gets_no_hint(folder: Path, gold: Path) -> None:
    schema, strata = strata_inputs(folder)
    with strata.open("a", encoding="utf-8") as stream:
        stream.write(json.dumps({"case_id": f"{CANARY}-3", "field_id": "echo.lvef"}) + "\n")
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    status, _, err = run([*argv, "--schema", str(schema), "--strata", str(strata)])
    message = "missing_key (strata line 3, key strata)"
    assert (status, err) == (1, error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


# ------------------------------------- 7. audit names which of its inputs is the wrong kind


@pytest.fixture
def shared(folder: Path, gold: Path) -> Path:
    pytest.importorskip("scipy")
    predictions = write_jsonl(folder / f"pred-{CANARY}.jsonl", PREDICTIONS)
    out = folder / f"shared-{CANARY}.json"
    argv = ["share", "--gold", str(gold), "--predictions", str(predictions), "--out", str(out)]
    assert run([*argv, "--quiet", "--min-cell", "2"])[0] == 0
    return out


EXPECTED_SHARED = "audit needs a shared report, made by chartscore share"


@pytest.mark.parametrize(
    ("options", "place"),
    [
        (["--system", "{report}"], "system part 1"),
        (["--system", "{shared}", "--system", "{report}"], "system part 2"),
        (["--others", "{report}"], "others part 1"),
        (["--variants", "{report}"], "variants part 1"),
        (["--comparisons", "{report}"], "comparisons part 1"),
    ],
)
def test_audit_names_the_option_of_a_wrong_kind_file(
    options: list[str], place: str, folder: Path, shared: Path, report: Path
) -> None:
    # Was "unknown_report_format (audit needs a shared report, ...)": which file?
    named = {"{report}": str(report), "{shared}": str(shared)}
    copy = folder / f"shared-copy-{CANARY}.json"
    copy.write_bytes(shared.read_bytes())  # a second --system file, not SHARED named twice
    named["{shared}"] = str(copy)
    status, out, err = run(["audit", str(shared), *[named.get(a, a) for a in options]])
    message = f"unknown_report_format ({place}; {EXPECTED_SHARED})"
    assert (status, out, err) == (1, "", error_line(message, ErrorCode.UNKNOWN_REPORT_FORMAT))
    no_leak(err)


def test_audit_names_shared_itself_in_a_publication(shared: Path, report: Path) -> None:
    status, _, err = run(["audit", str(report), "--others", str(shared)])
    message = f"unknown_report_format (report; {EXPECTED_SHARED})"
    assert (status, err) == (1, error_line(message, ErrorCode.UNKNOWN_REPORT_FORMAT))
    no_leak(err)


def test_audit_names_the_option_of_a_gold_file(shared: Path, gold: Path) -> None:
    status, _, err = run(["audit", str(shared), "--system", str(gold)])
    message = f"json_lines_document (system part 1; {GOLD_HINT})"
    assert (status, err) == (1, error_line(message, ErrorCode.JSON_LINES_DOCUMENT))
    no_leak(err)


@pytest.mark.parametrize(("options", "place"), [([], ""), (["--system"], "system part 1; ")])
def test_audit_of_a_gates_file_gets_audits_hint_not_gates(
    options: list[str], place: str, folder: Path, shared: Path
) -> None:
    # gate's hint said "the arguments may be swapped (chartscore gate DOCUMENT --gates ...)".
    gates = gates_file(folder, 'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5')
    argv = ["audit", str(gates)] if not options else ["audit", str(shared), *options, str(gates)]
    status, out, err = run(argv)
    hint = "this looks like a gates file (TOML): audit reads shared reports, and gate reads gates"
    assert (status, out) == (1, "")
    assert err == error_line(f"invalid_report ({place}{hint})", ErrorCode.INVALID_REPORT)
    no_leak(err)


# ------------------------------- 8. a publication's system file keeps its hint (analyst)


def test_a_publication_system_file_keeps_its_hint(folder: Path, gold: Path, report: Path) -> None:
    # "predictions part 2 line 1" dropped the hint that "predictions line 1" had.
    pytest.importorskip("scipy")
    systems = folder / "systems"
    systems.mkdir()
    write_jsonl(systems / f"a-{CANARY}.jsonl", PREDICTIONS)
    (systems / f"b-{CANARY}.jsonl").write_bytes(report.read_bytes())
    out = folder / "out"
    out.mkdir()
    argv = ["share", "--gold", str(gold), "--publication", str(systems / "*.jsonl")]
    status, stdout, err = run([*argv, "--out-dir", str(out), "--min-cell", "2"])
    message = f"missing_key (predictions part 2 line 1, key case_id; {DOCUMENT_AS_ROWS})"
    assert (status, stdout, err) == (1, "", error_line(message, ErrorCode.MISSING_KEY))
    assert list(out.iterdir()) == []
    no_leak(err)


# --------------------------- 9. more files of the wrong kind (an analyst's second pass)

PARTIAL_GIVEN = "this looks like a partial tally: chartscore merge --partials makes its report"
DOCUMENT_AS_PARTIAL = (
    "this looks like a chartscore document (a report), not a partial: "
    "chartscore score --partial-out writes one"
)
LEDGER_GIVEN = "this looks like a ledger of scored runs: chartscore ledger show reads it"
UNKNOWN_FORMAT = ErrorCode.UNKNOWN_REPORT_FORMAT
CHOICES_SCHEMA: dict[str, object] = {
    "fields": {
        "echo.lvef": {"type": "number"},
        "hx.smoking": {"type": "categorical", "choices": ["former", "never"]},
    }
}


@pytest.fixture
def partial(folder: Path, gold: Path) -> Path:
    schema = folder / f"schema-{CANARY}.json"
    schema.write_text(json.dumps(CHOICES_SCHEMA), encoding="utf-8")
    predictions = write_jsonl(folder / f"pred-{CANARY}.jsonl", PREDICTIONS)
    out = folder / f"site-{CANARY}.partial"
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    argv += ["--schema", str(schema), "--partial-out", str(out), "--out", str(folder / "r.json")]
    assert run([*argv, "--quiet"])[0] == 0
    return out


@pytest.fixture
def ledger(folder: Path, gold: Path) -> Path:
    key = folder / f"key-{CANARY}"
    key.write_bytes(bytes(range(32)))
    key.chmod(0o600)
    path = folder / f"ledger-{CANARY}.jsonl"
    predictions = write_jsonl(folder / f"pred-{CANARY}.jsonl", PREDICTIONS)
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions), "--quiet"]
    argv += ["--ledger", str(path), "--ledger-key", str(key), "--out", str(folder / "r.json")]
    assert run([*argv, "--run-id", f"{CANARY}-1"])[0] == 0
    return path


@pytest.mark.parametrize("command", ["render", "gate"])
def test_a_partial_given_as_the_document(command: str, folder: Path, partial: Path) -> None:
    # Was "unknown_report_format" alone: not a word of what the file is.
    gates = gates_file(folder, 'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5')
    options = ["--format", "table"] if command == "render" else ["--gates", str(gates)]
    status, out, err = run([command, str(partial), *options])
    message = f"unknown_report_format ({PARTIAL_GIVEN})"
    assert (status, out, err) == (1, "", error_line(message, UNKNOWN_FORMAT))
    no_leak(err)


@pytest.mark.parametrize("command", ["merge", "share"])
def test_a_report_given_as_a_partial(command: str, folder: Path, report: Path) -> None:
    # Was "unknown_report_format (partial)" alone.
    status, out, err = run([command, "--partials", str(report), "--out", str(folder / "o.json")])
    message = f"unknown_report_format (partial; {DOCUMENT_AS_PARTIAL})"
    assert (status, out, err) == (1, "", error_line(message, UNKNOWN_FORMAT))
    no_leak(err)


def test_another_format_gets_no_partial_or_ledger_hint(folder: Path) -> None:
    other = folder / f"other-{CANARY}.json"
    other.write_text(json.dumps({"format": f"chartscore.{CANARY}"}), encoding="utf-8")
    for argv in (["render", str(other), "--format", "table"], ["merge", "--partials", str(other)]):
        status, _, err = run(argv)
        where = " (partial)" if argv[0] == "merge" else ""
        assert (status, err) == (1, error_line(f"unknown_report_format{where}", UNKNOWN_FORMAT))
        no_leak(err)


@pytest.mark.parametrize("given", ["gold", "predictions"])
def test_a_gold_or_predictions_file_given_as_schema(given: str, folder: Path, gold: Path) -> None:
    # Was "invalid_json (schema line 2)" alone.
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    schema = gold if given == "gold" else predictions
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    status, _, err = run([*argv, "--schema", str(schema)])
    hint = "this looks like a gold or predictions file: a schema is one JSON object of fields"
    message = f"invalid_json (schema line 2; {hint})"
    assert (status, err) == (1, error_line(message, ErrorCode.INVALID_JSON))
    no_leak(err)


def test_other_json_lines_given_as_schema_get_no_hint(folder: Path, gold: Path) -> None:
    _, strata = strata_inputs(folder)  # JSON Lines, but no row's field_id
    predictions = write_jsonl(folder / f"p-{CANARY}.jsonl", PREDICTIONS)
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
    status, _, err = run([*argv, "--schema", str(strata)])
    assert (status, err) == (1, error_line("invalid_json (schema line 2)", ErrorCode.INVALID_JSON))
    no_leak(err)


@pytest.mark.parametrize("given", ["report", "partial"])
def test_a_document_given_as_strata(
    given: str, folder: Path, gold: Path, report: Path, partial: Path
) -> None:
    # Was "missing_key (strata line 1, key case_id)" alone.
    status, err = _scored_with_strata(folder, gold, report if given == "report" else partial)
    hint = "this looks like a chartscore document (a report): a strata file maps case_id to strata"
    message = f"missing_key (strata line 1, key case_id; {hint})"
    assert (status, err) == (1, error_line(message, ErrorCode.MISSING_KEY))
    no_leak(err)


@pytest.mark.parametrize("lines", [1, 2])
@pytest.mark.parametrize("command", ["render", "gate"])
def test_a_ledger_given_as_the_document(
    command: str, lines: int, folder: Path, ledger: Path
) -> None:
    # Was "unknown_report_format" (one line) or "json_lines_document (report)" alone.
    first = ledger.read_bytes()
    ledger.write_bytes(first * lines)  # a second line like the first: the shape is the same
    gates = gates_file(folder, 'slice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.5')
    options = ["--format", "table"] if command == "render" else ["--gates", str(gates)]
    status, out, err = run([command, str(ledger), *options])
    if lines == 1:
        expected = error_line(f"unknown_report_format ({LEDGER_GIVEN})", UNKNOWN_FORMAT)
    else:
        message = f"json_lines_document (report; {LEDGER_GIVEN})"
        expected = error_line(message, ErrorCode.JSON_LINES_DOCUMENT)
    assert (status, out, err) == (1, "", expected)
    no_leak(err)


@pytest.mark.parametrize("place", [1, 2])
def test_a_gold_file_given_as_a_rater(place: int, folder: Path, gold: Path) -> None:
    # Was "unknown_key (raters part N line 1, key field_type)" alone.
    schema = folder / f"schema-{CANARY}.json"
    schema.write_text(json.dumps(CHOICES_SCHEMA), encoding="utf-8")
    rater = write_jsonl(folder / f"rater-{CANARY}.jsonl", PREDICTIONS)
    raters = [str(gold), str(rater)] if place == 1 else [str(rater), str(gold)]
    status, out, err = run(["agree", "--raters", *raters, "--schema", str(schema)])
    hint = "this looks like a gold file: predictions have no field_type"
    message = f"unknown_key (raters part {place} line 1, key field_type; {hint})"
    assert (status, out, err) == (1, "", error_line(message, ErrorCode.UNKNOWN_KEY))
    no_leak(err)


def test_the_new_hints_errors_have_no_context(folder: Path, report: Path, partial: Path) -> None:
    from chartscore.io.document_files import load_rendered_file
    from chartscore.workflows.partials import read_partial_file

    for call, path in ((load_rendered_file, partial), (read_partial_file, report)):
        with pytest.raises(ChartscoreError) as caught:
            call(path)
        assert caught.value.hint is not None
        assert caught.value.__context__ is None and caught.value.__cause__ is None
