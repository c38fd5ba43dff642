"""The command line: outputs, exit statuses, one-line errors, atomic writes, progress."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chartscore import ErrorCode, __version__
from chartscore.cli import main
from chartscore.cli.progress import TerminalProgress
from chartscore.errors import describe

from helpers import thorough_only_marks, write_jsonl

GOLD = [
    {"case_id": "c1", "field_id": "hx.smoking", "field_type": "categorical", "value": "former"},
    {"case_id": "c1", "field_id": "echo.lvef", "field_type": "number", "value": 35},
    {"case_id": "c2", "field_id": "hx.smoking", "field_type": "categorical", "value": None},
    {"case_id": "c2", "field_id": "echo.lvef", "field_type": "number", "value": 55},
]
PREDICTIONS = [
    {"case_id": "c1", "field_id": "hx.smoking", "value": " Former "},
    {"case_id": "c1", "field_id": "echo.lvef", "value": "35"},
    {"case_id": "c2", "field_id": "hx.smoking", "value": None},
]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(argv: list[str], stderr: io.StringIO | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), stderr if stderr is not None else io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return write_jsonl(tmp_path / "gold.jsonl", GOLD), write_jsonl(
        tmp_path / "pred.jsonl", PREDICTIONS
    )


def test_score_prints_canonical_report(files: tuple[Path, Path]) -> None:
    gold, pred = files
    status, out, err = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert status == 0 and err == ""
    assert out.endswith("\n") and out.count("\n") == 1
    report = json.loads(out)
    assert report["format"] == "chartscore.report" and report["format_version"] == 3
    assert report["scorer"] == {"name": "chartscore", "version": __version__}
    overall = report["overall"]
    assert overall["normalized_agreement"]["success_count"] == 2
    assert overall["exact_agreement"]["success_count"] == 0
    assert overall["missing_count"] == 1
    # The README's worked example shows these exact numbers.
    assert overall["abstention_correctness"] == {
        "success_count": 3,
        "total_count": 4,
        "interval": [0.30064184258240195, 0.9544127391902995],
        # a pooled slice: the one failure sits in one of the two charts (fewer than 10), so
        # the design effect is at least the worst case, sum m^2 / M = 8 / 4 = 2; two charts
        # leave Student's t one degree of freedom
        "design_effect": 2,
        "case_count": 2,
        "clustered_interval": [0.006888242685801854, 0.9992299246206001],
    }
    assert sorted(report["by_field"]) == ["echo.lvef", "hx.smoking"]


def test_out_writes_the_same_bytes_atomically(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = files
    target = tmp_path / "report.json"
    target.write_text("old report\n")
    status, out, err = run(
        ["score", "--gold", str(gold), "--predictions", str(pred), "--out", str(target)]
    )
    assert (status, out, err) == (0, "", "")
    _, printed, _ = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert target.read_text(encoding="utf-8") == printed
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".chartscore-")] == []


def test_failed_run_leaves_previous_report_untouched(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    gold, _ = files
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "c1", "field_id": "hx.smoking", "value": 1}\n{not json\n')
    target = tmp_path / "report.json"
    target.write_text("previous\n")
    status, _out, err = run(
        ["score", "--gold", str(gold), "--predictions", str(bad), "--out", str(target)]
    )
    assert status == 1
    expected = f"invalid_json (predictions line 2): {describe(ErrorCode.INVALID_JSON)}"
    assert err == f"chartscore: error: {expected}\n"
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bad.jsonl",
        "gold.jsonl",
        "pred.jsonl",
        "report.json",
    ]


def test_unwritable_output(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = files
    status, _, err = run(
        [
            "score",
            "--gold",
            str(gold),
            "--predictions",
            str(pred),
            "--out",
            str(tmp_path / "no" / "r.json"),
        ]
    )
    assert status == 1
    assert err.startswith(
        "chartscore: error: output_unwritable (output; the output folder does not exist): "
    )


@pytest.mark.parametrize(
    ("gold_text", "code", "where"),
    [
        ("", ErrorCode.EMPTY_GOLD, "(gold)"),
        ("\n\n", ErrorCode.EMPTY_GOLD, "(gold)"),
        ('{"case_id": "c"}\n', ErrorCode.MISSING_KEY, "(gold line 1, key field_id)"),
        (
            '\n{"case_id": "c", "field_id": "f", "field_type": "text", "value": NaN}\n',
            ErrorCode.NONFINITE_NUMBER,
            "(gold line 2)",
        ),
    ],
)
def test_gold_errors_are_one_line(
    tmp_path: Path, gold_text: str, code: ErrorCode, where: str
) -> None:
    gold = tmp_path / "g.jsonl"
    gold.write_text(gold_text)
    pred = tmp_path / "p.jsonl"
    pred.write_text("")
    status, out, err = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert (status, out) == (1, "")
    assert err == f"chartscore: error: {code} {where}: {describe(code)}\n"


def test_join_errors_name_the_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, _ = files
    pred = write_jsonl(tmp_path / "dup.jsonl", [PREDICTIONS[0], PREDICTIONS[1], PREDICTIONS[0]])
    status, _, err = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert status == 1
    assert err.startswith("chartscore: error: duplicate_prediction_key (predictions line 3): ")


def test_gold_value_errors_name_the_line(tmp_path: Path) -> None:
    gold = write_jsonl(
        tmp_path / "g.jsonl",
        [
            GOLD[0],
            {"case_id": "c9", "field_id": "echo.lvef", "field_type": "number", "value": "35%"},
        ],
    )
    pred = write_jsonl(tmp_path / "p.jsonl", [])
    status, _, err = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert status == 1
    assert err.startswith("chartscore: error: invalid_gold_value (gold line 2 field echo.lvef): ")


def test_empty_predictions_file_means_everything_missing(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    gold, _ = files
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    status, out, _ = run(["score", "--gold", str(gold), "--predictions", str(empty)])
    assert status == 0
    assert json.loads(out)["overall"]["missing_count"] == 4


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "score" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"chartscore {__version__}"


def test_internal_errors_print_no_traceback(
    monkeypatch: pytest.MonkeyPatch, files: tuple[Path, Path]
) -> None:
    gold, pred = files

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret value in a bug")

    monkeypatch.setattr("chartscore.cli.score.score_files", explode)
    status, _out, err = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert status == 70
    assert err == f"chartscore: error: internal_error: {describe(ErrorCode.INTERNAL_ERROR)}\n"


def test_interrupt(monkeypatch: pytest.MonkeyPatch, files: tuple[Path, Path]) -> None:
    gold, pred = files

    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("chartscore.cli.score.score_files", interrupt)
    status, _, err = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert (status, err) == (
        130,
        "chartscore: error: interrupted: stopped by Ctrl-C or a termination signal\n",
    )


def test_demo_summary_and_json() -> None:
    status, out, err = run(["demo"])
    assert status == 0 and err == ""
    assert "synthetic" in out and "\nall fields " in out
    # The demo prints the summary (chartscore.render, tested in test_render_summary.py): a
    # line per field, at most 40 lines in all.
    assert len(out.splitlines()) <= 40
    assert re.search(
        r"^triage\.acuity +22 +86% \[67-95\] +answerable_abstention 9% <=28% +"
        r"0\.98 \[0\.93, 1\.00\]\* \(weighted\)$",  # an ordinal field's kappa is weighted
        out,
        re.M,
    )
    # Kappa from 20 pairs: marked, as every coefficient from fewer than 100 pairs.
    assert "*: fewer than 100 pairs, no reliable interval" in out
    status, out, _ = run(["demo", "--json"])
    report = json.loads(out)
    assert report["overall"]["field_count"] == 216  # 24 cases x 9 fields
    assert set(report["by_field_type"]) == {
        "text",
        "categorical",
        "number",
        "boolean",
        "date",
        "ordinal",
        "multi",
    }


def test_progress_only_on_a_terminal(files: tuple[Path, Path]) -> None:
    gold, pred = files
    terminal = FakeTerminal()
    status, _, _ = run(["score", "--gold", str(gold), "--predictions", str(pred)], stderr=terminal)
    assert status == 0
    assert terminal.getvalue() == ""  # a small input finishes before the first update
    status, _, _ = run(
        ["score", "--gold", str(gold), "--predictions", str(pred), "--quiet"], stderr=terminal
    )
    assert terminal.getvalue() == ""


def test_progress_line_shows_counts_only() -> None:
    ticks = iter([0.0, 0.5, 1.2, 1.3, 2.0])
    stream = FakeTerminal()
    progress = TerminalProgress(stream, clock=lambda: next(ticks))
    from chartscore.errors import InputKind

    progress(InputKind.GOLD, 16384)  # 0.5 s: too early
    assert stream.getvalue() == ""
    progress(InputKind.GOLD, 32768)  # 1.2 s: first update
    progress(InputKind.GOLD, 49152)  # 1.3 s: too soon after
    progress(InputKind.PREDICTIONS, 16384)  # 2.0 s
    progress.finish()
    assert stream.getvalue() == (
        "\rchartscore: gold 32,768 lines, 1 s elapsed"
        "\rchartscore: gold 49,152 lines, predictions 16,384 lines, 2 s elapsed\n"
    )


def test_progress_appears_for_large_inputs_on_a_terminal(tmp_path: Path) -> None:
    gold_rows = [
        {"case_id": f"c{i}", "field_id": "f.x", "field_type": "text", "value": "v"}
        for i in range(40_000)
    ]
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows)
    pred = write_jsonl(tmp_path / "p.jsonl", [])
    clock = iter(float(i) for i in range(1000))
    stream = FakeTerminal()
    from chartscore.workflows.score import score_files

    progress = TerminalProgress(stream, clock=lambda: next(clock))
    score_files(gold, pred, progress=progress)
    progress.finish()
    assert "gold 32,768 lines" in stream.getvalue()
    assert "c1" not in stream.getvalue()


def test_python_dash_m_and_console_script_agree(files: tuple[Path, Path]) -> None:
    gold, pred = files
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    via_module = subprocess.run(
        [
            sys.executable,
            "-m",
            "chartscore",
            "score",
            "--gold",
            str(gold),
            "--predictions",
            str(pred),
        ],
        capture_output=True,
        check=False,
        env=env,
    )
    assert via_module.returncode == 0 and via_module.stderr == b""
    _, printed, _ = run(["score", "--gold", str(gold), "--predictions", str(pred)])
    assert via_module.stdout.decode() == printed


def test_subprocess_failure_prints_no_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "chartscore",
            "score",
            "--gold",
            str(missing),
            "--predictions",
            str(missing),
        ],
        capture_output=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == (
        b"chartscore: error: file_unreadable (gold): "
        b"the file could not be opened or read, or is not a regular file\n"
    )
    assert result.stdout == b""


def test_every_error_code_has_a_description() -> None:
    for code in ErrorCode:
        text = describe(code)
        assert text and "\n" not in text and len(text) < 90


# --- inputs and outputs (issue 7.1, 7.6, 8.1, 8.3) -------------------------------------------


def test_out_never_overwrites_an_input(files: tuple[Path, Path], tmp_path: Path) -> None:
    gold, pred = files
    schema = tmp_path / "schema.json"
    schema.write_text('{"fields": {}}')
    link = tmp_path / "link.jsonl"
    link.symlink_to(gold)
    hard = tmp_path / "hard.jsonl"
    os.link(pred, hard)
    (tmp_path / "x").mkdir()
    contents = {path: path.read_bytes() for path in (gold, pred, schema)}
    args = ["score", "--gold", str(gold), "--predictions", str(pred), "--schema", str(schema)]
    for target in (gold, pred, schema, link, hard, tmp_path / "x" / ".." / "gold.jsonl"):
        status, out, err = run([*args, "--out", str(target)])
        expected = f"output_is_input (output): {describe(ErrorCode.OUTPUT_IS_INPUT)}"
        assert (status, out, err) == (1, "", f"chartscore: error: {expected}\n"), target
    assert {path: path.read_bytes() for path in contents} == contents


def test_out_is_checked_before_the_work(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    gold, pred = files
    calls: list[object] = []
    monkeypatch.setattr("chartscore.cli.score.score_files", lambda *a, **k: calls.append(a))
    status, _, err = run(
        ["score", "--gold", str(gold), "--predictions", str(pred), "--out", str(gold)]
    )
    assert status == 1 and err.startswith("chartscore: error: output_is_input (output): ")
    assert calls == []


def test_out_dash_is_stdout(files: tuple[Path, Path]) -> None:
    gold, pred = files
    args = ["score", "--gold", str(gold), "--predictions", str(pred)]
    assert run([*args, "--out", "-"]) == run(args)


@pytest.mark.parametrize(
    ("checker", "where"), [("the reader", " (predictions)"), ("the main process", "")]
)
def test_a_crashed_reader_exits_70(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, checker: str, where: str
) -> None:
    # The crash happens where the lines are checked: in the reader, or in the
    # main process when the reader hands it lines. Either way: 70, no data.
    from chartscore.io import parallel

    def explode(text: str) -> None:
        raise RuntimeError("secret value " + text)

    def hand_off(channel: parallel._Channel) -> bool:
        return checker == "the main process" and not channel._pending

    monkeypatch.setattr(parallel, "fast_prediction", explode)
    monkeypatch.setattr(parallel._Channel, "main_is_waiting", hand_off)
    gold, pred = files
    status, out, err = run(
        ["score", "--gold", str(gold), "--predictions", str(pred), "--jobs", "2"]
    )
    expected = f"internal_error{where}: {describe(ErrorCode.INTERNAL_ERROR)}"
    assert (status, out, err) == (70, "", f"chartscore: error: {expected}\n")


class BrokenTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_terminal_never_stops_the_work(tmp_path: Path) -> None:
    gold_rows = [
        {"case_id": f"c{i}", "field_id": "f.x", "field_type": "text", "value": "v"}
        for i in range(40_000)
    ]
    gold = write_jsonl(tmp_path / "g.jsonl", gold_rows)
    pred = write_jsonl(tmp_path / "p.jsonl", [])
    clock = iter(float(i) for i in range(1000))
    progress = TerminalProgress(BrokenTerminal(), clock=lambda: next(clock))
    from chartscore.workflows.score import score_files

    report = score_files(gold, pred, progress=progress)  # progress fails on its first line
    progress.finish()
    assert report.overall.count("field_count") == 40_000
    # And through the command line: the error line is lost, the status is not.
    status, out, _ = run(
        ["score", "--gold", str(gold), "--predictions", str(pred)], BrokenTerminal()
    )
    assert status == 0 and json.loads(out)["overall"]["field_count"] == 40_000
    status, out, _ = run(
        ["score", "--gold", str(pred), "--predictions", str(pred)], BrokenTerminal()
    )
    assert (status, out) == (1, "")


def test_help_to_a_closed_stdout_is_unwritable() -> None:
    closed = io.StringIO()
    closed.close()
    err = io.StringIO()
    assert main(["--help"], stdout=closed, stderr=err) == 1
    assert err.getvalue().startswith("chartscore: error: output_unwritable (output): ")


def _subprocess(args: list[str], stdin: bytes) -> tuple[int, bytes, bytes]:
    result = subprocess.run(
        [sys.executable, "-m", "chartscore", *args],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )
    return result.returncode, result.stdout, result.stderr


_TWO_PROCESSES = thorough_only_marks("every input again, on two processes (about 4 s)")


@pytest.mark.parametrize("jobs", ["1", pytest.param("2", marks=_TWO_PROCESSES)])
def test_standard_input_feeds_any_one_input(
    files: tuple[Path, Path], tmp_path: Path, jobs: str
) -> None:
    import gzip

    gold, pred = files
    schema = tmp_path / "schema.json"
    schema.write_text('{"fields": {"hx.smoking": {"type": "categorical"}}}')
    base = ["score", "--gold", str(gold), "--predictions", str(pred), "--schema", str(schema)]
    _, expected, _ = run([*base, "--jobs", jobs])
    assert expected
    for option, path in (("--gold", gold), ("--predictions", pred), ("--schema", schema)):
        args = [*base, "--jobs", jobs]
        args[args.index(option) + 1] = "-"
        for data in (path.read_bytes(), gzip.compress(path.read_bytes())):
            status, out, err = _subprocess(args, data)
            assert (status, out.decode(), err) == (0, expected, b""), option


# --- hints: the likely cause, from the shape of the failure, never from the data ---------

_JSON_LINES = "JSON Lines expected: one JSON object per line, not CSV or a JSON array"
_SWAPPED = "gold and predictions may be swapped"


def _error_line(message: str) -> str:
    code = ErrorCode(re.match(r"[a-z_]+", message).group(0))  # type: ignore[union-attr]
    return f"chartscore: error: {message}: {describe(code)}\n"


def _not_json_lines(rows: list[dict[str, object]], kind: str) -> bytes:
    if kind == "csv":
        lines = [",".join(rows[0]), *(",".join(map(str, row.values())) for row in rows)]
        return "".join(line + "\n" for line in lines).encode()
    if kind == "array":
        return (json.dumps(rows) + "\n").encode()
    return (json.dumps(rows, indent=2) + "\n").encode()  # a pretty-printed array


@pytest.mark.parametrize(
    ("kind", "code"),
    [("csv", "invalid_json"), ("array", "not_an_object"), ("pretty", "invalid_json")],
)
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_csv_or_a_json_array_says_json_lines_are_expected(
    tmp_path: Path, kind: str, code: str, jobs: str
) -> None:
    gold, predictions = write_jsonl(tmp_path / "g.jsonl", GOLD), tmp_path / "p.jsonl"
    bad_gold = tmp_path / "gold.csv"
    bad_gold.write_bytes(_not_json_lines(GOLD, kind))
    predictions.write_bytes(_not_json_lines(PREDICTIONS, kind))
    status, out, err = run(["score", "--gold", str(bad_gold), "--predictions", str(predictions)])
    assert (status, out, err) == (1, "", _error_line(f"{code} (gold line 1; {_JSON_LINES})"))
    argv = ["score", "--gold", str(gold), "--predictions", str(predictions), "--jobs", jobs]
    status, out, err = run(argv)
    assert (status, out, err) == (1, "", _error_line(f"{code} (predictions line 1; {_JSON_LINES})"))
    argv = ["compare", "--gold", str(gold), "--baseline", str(predictions), "--candidate", "-"]
    status, out, err = run(argv)
    assert err == _error_line(f"{code} (baseline line 1; {_JSON_LINES})")


def test_a_json_error_after_line_1_has_no_json_lines_hint(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(json.dumps(GOLD[0]).encode() + b"\n{not json\n")
    predictions = write_jsonl(tmp_path / "p.jsonl", PREDICTIONS)
    assert run(["score", "--gold", str(gold), "--predictions", str(predictions)]) == (
        1,
        "",
        _error_line("invalid_json (gold line 2)"),
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_swapped_gold_and_predictions_say_they_may_be_swapped(tmp_path: Path, jobs: str) -> None:
    gold, predictions = (
        write_jsonl(tmp_path / "gold.jsonl", GOLD),
        write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS),
    )
    argv = ["score", "--gold", str(predictions), "--predictions", str(gold), "--jobs", jobs]
    status, out, err = run(argv)
    expected = f"missing_key (gold line 1, key field_type; {_SWAPPED})"
    assert (status, out, err) == (1, "", _error_line(expected))
    argv = ["share", "--gold", str(predictions), "--predictions", str(gold), "--jobs", jobs]
    assert run(argv)[2] == _error_line(expected)
    argv = ["compare", "--gold", str(predictions), "--baseline", str(predictions)]
    assert run([*argv, "--candidate", str(gold)])[2] == _error_line(expected)


def test_gold_without_field_type_is_not_called_swapped(tmp_path: Path) -> None:
    # The same gold error, but the predictions look like predictions: no hint.
    gold = write_jsonl(tmp_path / "gold.jsonl", PREDICTIONS)
    predictions = write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS)
    assert run(["score", "--gold", str(gold), "--predictions", str(predictions)]) == (
        1,
        "",
        _error_line("missing_key (gold line 1, key field_type)"),
    )
    # Predictions from standard input are not read twice to guess.
    assert run(["score", "--gold", str(gold), "--predictions", "-"])[2] == _error_line(
        "missing_key (gold line 1, key field_type)"
    )


def test_the_library_gives_the_same_hints(tmp_path: Path) -> None:
    from chartscore import ChartscoreError, score_files

    gold, predictions = (
        write_jsonl(tmp_path / "gold.jsonl", GOLD),
        write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS),
    )
    with pytest.raises(ChartscoreError) as caught:
        score_files(predictions, gold)
    assert caught.value.hint == _SWAPPED
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    csv_gold = tmp_path / "gold.csv"
    csv_gold.write_bytes(_not_json_lines(GOLD, "csv"))
    with pytest.raises(ChartscoreError) as caught:
        score_files(csv_gold, predictions)
    assert str(caught.value) == f"invalid_json (gold line 1; {_JSON_LINES})"
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_out_into_a_missing_folder_says_the_folder_is_missing(tmp_path: Path) -> None:
    gold, predictions = (
        write_jsonl(tmp_path / "gold.jsonl", GOLD),
        write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS),
    )
    files = ["--gold", str(gold), "--predictions", str(predictions)]
    missing = tmp_path / "no-such-folder" / "report.json"
    expected = _error_line("output_unwritable (output; the output folder does not exist)")
    for command in ("score", "share"):
        assert run([command, *files, "--out", str(missing)]) == (1, "", expected)
    not_a_folder = gold / "report.json"  # the "folder" is a file
    assert run(["score", *files, "--out", str(not_a_folder)]) == (1, "", expected)
    # Other unwritable targets keep the plain message.
    assert run(["score", *files, "--out", str(tmp_path)])[2] == _error_line(
        "output_unwritable (output)"
    )


def test_audit_of_a_full_report_says_it_needs_a_shared_report(tmp_path: Path) -> None:
    gold, predictions = (
        write_jsonl(tmp_path / "gold.jsonl", GOLD),
        write_jsonl(tmp_path / "pred.jsonl", PREDICTIONS),
    )
    report, comparison = tmp_path / "report.json", tmp_path / "comparison.json"
    run(["score", "--gold", str(gold), "--predictions", str(predictions), "--out", str(report)])
    files = ["--gold", str(gold), "--baseline", str(predictions), "--candidate", str(predictions)]
    run(["compare", *files, "--out", str(comparison)])
    expected = _error_line(
        "unknown_report_format (audit needs a shared report, made by chartscore share)"
    )
    for document in (report, comparison):
        assert run(["audit", str(document)]) == (1, "", expected)
