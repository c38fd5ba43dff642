"""Usage errors: each names the option and the problem, from a closed set, never a value.

docs/cli.md lists the messages. An unknown option is echoed only when it looks
like an option name (``--[a-z][a-z0-9-]{0,40}``, no ``=``); a value, a path or
an unknown command never is.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import __version__
from chartscore.cli import COMMANDS, UsageError, build_parser, main, parse_arguments
from chartscore.cli._parser import LEAVES, ShowText

from helpers import examples

FILES = ["--gold", "g.jsonl", "--predictions", "p.jsonl"]


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def usage_line(problem: str, command: str | None = "score") -> str:
    where = f"chartscore {command} --help" if command else "chartscore --help"
    return f"chartscore: error: usage: {problem}; see {where}\n"


@pytest.mark.parametrize(
    ("argv", "problem", "command"),
    [
        (
            [],
            "a command is required (score, compare, share, audit, gate, merge, render, demo, "
            "import, worklist, ledger, batch, agree, schema)",
            None,
        ),
        (["--quiet"], "--quiet goes after the command", None),
        (["--gold", "g.jsonl"], "--gold goes after the command", None),
        (["--shcema"], "unknown option --shcema", None),
        (["--versoin"], "unknown option --versoin (did you mean --version?)", None),
        (["frobnicate"], "unknown command", None),
        (["scor"], "unknown command (did you mean score?)", None),
        (["Score"], "unknown command", None),  # not a command word: no hint, no echo
        (["gold.jsonl"], "unknown command", None),
        (["score"], "--gold is required", "score"),
        (["score", "--gold", "g"], "--predictions is required", "score"),
        (["score", "--predictions", "p"], "--gold is required", "score"),
        (["score", *FILES, "surplus-argument"], "unexpected argument", "score"),
        (["score", *FILES, "-"], "unexpected argument", "score"),
        (["score", "--", *FILES], "unexpected argument", "score"),
        (["score", "--gold"], "--gold needs a value", "score"),
        (["score", *FILES, "--out"], "--out needs a value", "score"),
        (
            ["score", "--gold", "-secret.jsonl", "--predictions", "p"],
            "--gold needs a value",
            "score",
        ),
        (["score", *FILES, "--jobs"], "--jobs needs a value", "score"),
        (["score", *FILES, "--jobs", "3"], "--jobs must be 1 or 2", "score"),
        (
            ["score", *FILES, "--confidence", "0.9"],
            "--confidence must be one of 0.90, 0.95, 0.99",
            "score",
        ),
        (["score", *FILES, "--jobs", "two"], "--jobs must be 1 or 2", "score"),
        (["score", *FILES, "--jobs=0"], "--jobs must be 1 or 2", "score"),
        (["score", *FILES, "--quiet=yes"], "--quiet takes no value", "score"),
        (["score", *FILES, "--help=me"], "--help takes no value", "score"),
        (["score", *FILES, "--gold", "h"], "--gold is given twice", "score"),
        (["score", *FILES, "--jobs", "1", "--jobs=2"], "--jobs is given twice", "score"),
        (
            ["score", "--gold", "-", "--predictions", "-"],
            "standard input (-) can feed one input only",
            "score",
        ),
        (["score", *FILES, "--schema", "-", "--gold=-"], "--gold is given twice", "score"),
        (
            ["score", "--gold=-", "--predictions", "p", "--schema", "-"],
            "standard input (-) can feed one input only",
            "score",
        ),
        (
            ["score", *FILES, "--schmea", "s.json"],
            "unknown option --schmea (did you mean --schema?)",
            "score",
        ),
        (
            ["score", *FILES, "--predicitons", "p"],
            "unknown option --predicitons (did you mean --predictions?)",
            "score",
        ),
        (
            ["score", *FILES, "--pred", "p"],
            "unknown option --pred (did you mean --predictions?)",  # no abbreviations
            "score",
        ),
        (["score", *FILES, "--zzz"], "unknown option --zzz", "score"),
        (["score", *FILES, "--foo=bar"], "unknown option", "score"),
        (["score", *FILES, "--Foo"], "unknown option", "score"),
        (["score", *FILES, "--foo_bar"], "unknown option", "score"),
        (["score", *FILES, "--" + "a" * 42], "unknown option", "score"),
        (["score", *FILES, "--" + "a" * 41], "unknown option --" + "a" * 41, "score"),
        (["score", *FILES, "-x"], "unknown option", "score"),
        (["score", *FILES, "-5"], "unknown option", "score"),
        (["score", *FILES, "--version"], "unknown option --version", "score"),
        (["demo", "--jsn"], "unknown option --jsn (did you mean --json?)", "demo"),
        (["demo", "extra"], "unexpected argument", "demo"),
        (["demo", "--json", "--json"], "--json is given twice", "demo"),
        (["demo", "--gold", "g"], "unknown option --gold", "demo"),
        # A group's commands: chartscore import redcap|labelstudio|csv|fhir|adjudication.
        (
            ["import"],
            "a kind of import is required (redcap, labelstudio, csv, fhir, adjudication)",
            "import",
        ),
        (["import", "redcp"], "unknown kind (did you mean redcap?)", "import"),
        (["import", "ZQsecret"], "unknown kind", "import"),  # never echoed
        (["import", "redcap"], "--dictionary is required", "import redcap"),
        (
            ["import", "redcap", "--dictionary", "d", "--dictionary=e"],
            "--dictionary is given twice",
            "import redcap",
        ),
        (
            ["import", "redcap", "--dictionry", "d"],
            "unknown option --dictionry (did you mean --dictionary?)",
            "import redcap",
        ),
        (["import", "csv", "--table"], "--table needs a value", "import csv"),
        (
            ["import", "redcap", "--dictionary", "d", "--repeating", "all"],
            "--repeating must be refuse or rows",
            "import redcap",
        ),
        (["--dictionary", "d", "import"], "--dictionary goes after the command", None),
        (["worklist", *FILES], "--out is required", "worklist"),
        # The ledger and batch.
        (["ledger"], "a kind of ledger is required (show)", "ledger"),
        (["ledger", "shwo"], "unknown kind (did you mean show?)", "ledger"),
        (["ledger", "show"], "--ledger is required", "ledger show"),
        (["batch", *FILES], "--ledger is required", "batch"),
    ],
)
def test_each_usage_problem_has_its_message(
    argv: list[str], problem: str, command: str | None
) -> None:
    status, out, err = run(argv)
    assert (status, out, err) == (2, "", usage_line(problem, command))
    with pytest.raises(UsageError) as caught:
        parse_arguments(argv)
    assert caught.value.problem == problem
    assert caught.value.__context__ is None or not str(caught.value.__context__)


@pytest.mark.parametrize(
    ("argv", "problem", "command"),
    [
        (["score", *FILES, "--ledger-key", "k"], "--ledger-key needs --ledger", "score"),
        (["score", *FILES, "--run-id", "r"], "--run-id needs --ledger", "score"),
        (["score", *FILES, "--ledger", "-"], "--ledger must name a file", "score"),
        (
            ["score", *FILES, "--ledger", "l", "--system", "a/b"],
            "--system must be a plain name such as model-v2",
            "score",
        ),
        (
            [
                "compare",
                "--gold",
                "g",
                "--baseline",
                "b",
                "--candidate",
                "c",
                "--baseline-system",
                "x",
            ],
            "--baseline-system needs --ledger",
            "compare",
        ),
        (
            ["score", *FILES, "--ledger", "l", "--engine", "dask"],
            "--ledger applies to --engine local only",
            "score",
        ),
        (
            ["score", "--gold", "-", "--predictions", "p", "--ledger", "l"],
            "--ledger needs --gold from a file: it is read again",
            "score",
        ),
        (
            ["score", *FILES, "--schema", "-", "--ledger", "l"],
            "--ledger needs --schema from a file: it is read again",
            "score",
        ),
        (
            ["score", "--gold", "g", "--predictions", "-", "--ledger", "l"],
            "--system is required with --ledger and standard input",
            "score",
        ),
        (
            ["batch", *FILES, "--ledger", "l", "--jobs", "0"],
            "--jobs must be a whole number from 1 to 64",
            "batch",
        ),
        (
            ["batch", *FILES, "--ledger", "l", "--jobs", "65"],
            "--jobs must be a whole number from 1 to 64",
            "batch",
        ),
        (
            ["batch", "--gold", "g", "--predictions", "-", "--ledger", "l"],
            "--predictions is a pattern of files, not standard input",
            "batch",
        ),
        (
            ["batch", "--gold", "-", "--predictions", "p", "--ledger", "l"],
            "batch reads every input from a file, not standard input",
            "batch",
        ),
        (["batch", *FILES, "--ledger", "-"], "--ledger must name a file", "batch"),
    ],
)
def test_each_ledger_and_batch_usage_problem_has_its_message(
    argv: list[str], problem: str, command: str
) -> None:
    # Checked by the command before any file is opened (no file here exists).
    status, out, err = run(argv)
    assert (status, out, err) == (2, "", usage_line(problem, command))
    assert _CLOSED.fullmatch(problem)


def test_valid_arguments_parse() -> None:
    args = parse_arguments(["score", "--gold=-", "--predictions", "p", "--jobs", "1", "--quiet"])
    assert (args.command, args.gold, args.predictions, args.jobs, args.quiet) == (
        "score",
        "-",
        "p",
        "1",
        True,
    )
    assert (args.schema, args.out) == (None, None)
    assert parse_arguments(["demo"]).json is False
    # "-" may also be a value of --out (stdout) next to one standard-input input.
    assert parse_arguments(["score", "--gold", "-", "--predictions", "p", "--out", "-"]).out == "-"
    # A value that merely starts with "-" can be given with "=".
    assert parse_arguments(["score", "--gold=-x.jsonl", "--predictions", "p"]).gold == "-x.jsonl"


def test_help_and_version_go_to_stdout() -> None:
    status, out, err = run(["--help"])
    assert status == 0 and err == "" and "score" in out and "demo" in out
    status, out, err = run(["score", "--help"])
    assert status == 0 and err == ""
    assert out.startswith(
        "usage: chartscore score --gold FILE --predictions FILE [--schema FILE] [--out FILE]"
    )
    status, out, err = run(["demo", "-h"])
    assert status == 0 and "--json" in out
    assert run(["--version"]) == (0, f"chartscore {__version__}\n", "")
    # Help wins over problems that come after it, as argparse does.
    assert run(["score", "--help", "--bogus"])[0] == 0


def test_every_option_is_declared_once_and_looks_like_an_option() -> None:
    name = re.compile(r"--[a-z][a-z0-9-]{0,40}")
    assert {command.name for command in COMMANDS} <= {leaf.name.split()[0] for leaf in LEAVES}
    for command in LEAVES:
        flags = [option.flag for option in command.options]
        assert len(flags) == len(set(flags)), command.name
        for option in command.options:
            if option.positional:
                assert option.required and option.metavar, option.flag
                continue
            assert name.fullmatch(option.flag), option.flag
            assert not (option.required and option.metavar is None), option.flag
            assert all(choice == choice.strip() for choice in option.choices)
    assert build_parser().prog == "chartscore"


# --- the closed set, as a property ------------------------------------------------------

_FLAGS = sorted({option.flag for command in LEAVES for option in command.options})
_CLOSED = re.compile(
    "|".join(
        [
            r"a command is required \(score, compare, share, audit, gate, merge, render, demo,"
            r" import, worklist, ledger, batch, agree, schema\)",
            r"unknown command( \(did you mean (score|compare|share|audit|gate|merge|render|demo"
            r"|import|worklist|ledger|batch|agree|schema)\?\))?",
            r"a kind of import is required \(redcap, labelstudio, csv, fhir, adjudication\)",
            r"a kind of ledger is required \(show\)",
            r"unknown kind( \(did you mean (redcap|labelstudio|csv|show)\?\))?",
            r"--(ledger-key|system|run-id|baseline-system) needs --ledger",
            r"--ledger must name a file",
            r"--ledger and --(out|partial-out) must name different files",
            r"--(system|run-id|baseline-system) must be a plain name such as model-v2",
            r"--ledger applies to --engine local only",
            r"--ledger needs --(gold|schema) from a file: it is read again",
            r"--(system|baseline-system) is required with --ledger and standard input",
            r"--jobs must be a whole number from 1 to 64",
            r"--predictions is a pattern of files, not standard input",
            r"batch reads every input from a file, not standard input",
            r"--repeating must be refuse or rows",
            r"unknown option( (?P<echo>--[a-z][a-z0-9-]{0,40})( \(did you mean --[a-z-]+\?\))?)?",
            r"unexpected argument",
            r"--[a-z0-9-]+ (is required|needs a value|takes no value|is given twice"
            r"|goes after the command)",
            r"(REPORT|SHARED) is required",
            r"--jobs must be 1 or 2",
            r"--confidence must be one of 0\.90, 0\.95, 0\.99",
            r"--extra-predictions must be error or ignore",
            r"--engine must be local or dask",
            r"--engine dask reads part files, not standard input",
            r"--jobs applies to --engine local only",
            r"--partitions must be a whole number from 1",
            r"--scheduler and --partitions need --engine dask",
            r"--sort must be name or rate",
            r"--format must be one of (json, )?table, markdown, csv, html",
            r"standard input \(-\) can feed one input only",
            r"the arguments are not valid",
        ]
    )
)
_LINE = re.compile(
    r"chartscore: error: usage: (?P<problem>.*); "
    r"see chartscore( (score|share|audit|demo|import|worklist|ledger|batch|ledger show"
    r"|import (redcap|labelstudio|csv|fhir)))?"
    r" --help\n"
)

tokens = st.one_of(
    st.sampled_from(["score", "share", "audit", "demo", "import", "redcap", "labelstudio"]),
    st.sampled_from(["ledger", "show", "batch"]),
    st.sampled_from(["csv", "fhir", "worklist", "-", "--", "-h", "1", "2", "3", *_FLAGS]),
    st.sampled_from(_FLAGS).map(lambda flag: flag + "="),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_=./ZQ0123456789", max_size=12).map(
        lambda text: "--" + text
    ),
    st.text(max_size=12),
)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(tokens, max_size=8))
def test_any_arguments_give_a_closed_message_or_parse(argv: list[str]) -> None:
    if "-h" in argv or any(token.startswith("--help") for token in argv):
        return  # help is printed, whatever else is there
    try:
        parse_arguments(argv)
    except UsageError as error:
        problem = error.problem
    except ShowText as shown:  # --version: the one request besides help
        assert "--version" in argv and shown.text == f"chartscore {__version__}\n"
        return
    else:
        return
    match = _CLOSED.fullmatch(problem)
    assert match is not None, problem
    echoed = match.groupdict().get("echo")
    if echoed is not None:  # only an option-like argument the user typed, exactly
        assert echoed in argv
    status, out, err = run(argv)
    assert (status, out) == (2, "")
    line = _LINE.fullmatch(err)
    assert line is not None and line.group("problem") == problem


@settings(max_examples=examples(100), deadline=None)
@given(st.text(min_size=1, max_size=30), st.sampled_from(["gold", "predictions", "schema", "out"]))
def test_values_are_never_echoed(value: str, option: str) -> None:
    marker = "ZQ" + value  # uppercase: never option-like, so never part of a message
    cases = [
        ["score", *FILES, marker],
        ["score", *FILES, f"--{option}={marker}", f"--{option}", marker],
        ["score", f"--{option}", "-" + marker],
        [marker],
        ["score", *FILES, "--jobs", marker],
        ["score", *FILES, f"--x-{option}={marker}"],
    ]
    for argv in cases:
        status, out, err = run(argv)
        assert status == 2 and out == ""
        assert marker not in err and marker.casefold() not in err.casefold()
        assert err.count("\n") == 1


_PUBLICATION = ["share", "--gold", "g.jsonl", "--publication", "p*.jsonl", "--out-dir", "d"]


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["share", *FILES, "--out-dir", "d"], "--out-dir needs --publication"),
        (["share", *FILES, "--out-dir", "d", "--compare"], "--out-dir needs --publication"),
        (["share", *FILES, "--also-min-cell", "13"], "--also-min-cell needs --publication"),
        (["share", *FILES, "--compare"], "--compare needs --publication"),
        (["share", "--publication", "p*.jsonl"], "a publication needs --gold, --publication and"),
        ([*_PUBLICATION, "--out", "x.json"], "--publication cannot be combined with --out"),
        ([*_PUBLICATION, "--also-min-cell", "11"], "--also-min-cell must differ from --min-cell"),
        (
            ["share", "--gold", "-", "--publication", "p*.jsonl", "--out-dir", "d"],
            "--publication needs --gold from a file: it is read again",
        ),
        (["share", "--partials", "p*", "--gold", "g"], "--partials cannot be combined with --gold"),
        (
            ["share", "--partials", "p*", "--out-dir", "d"],
            "--partials cannot be combined with --out-dir",
        ),
        (
            ["share", "--partials", "p*", "--compare"],
            "--partials cannot be combined with --compare",
        ),
        (
            ["share", *FILES, "--strata", "s.jsonl", "--releases", "r"],
            "--releases cannot be combined with --strata",
        ),
        (["audit", "--releases", "r", "--min-cell", "11"], "--min-cell checks one shared document"),
        (["audit", "s.json", "--others", "o*", "--min-cell", "11"], "--others, --system,"),
        (["audit", "s.json", "--others", "no-such-file*"], "--others or --variants names no file"),
    ],
)
def test_share_and_audit_usage_messages_are_in_the_closed_list(
    argv: list[str], problem: str
) -> None:
    # cli.md's usage table is the closed list of what a usage error may say; share given
    # --out-dir without --publication said "--publication cannot be combined with ...".
    status, out, err = run(argv)
    assert (status, out) == (2, "") and problem in err, err
    with open("docs/cli.md", encoding="utf-8") as page:
        table = page.read().split("### Usage messages", 1)[1]
    # "X cannot be combined with --Y" is listed once per X, with "(and the other ...)"
    listed = problem if "cannot be combined" not in problem else problem.split(" with ", 1)[0]
    assert f"`{listed}" in table


def test_a_publication_names_a_gzip_system_by_its_stem(tmp_path: Path) -> None:
    # a.jsonl.gz is system "a" (its shared report a.shared.json), so with a.jsonl beside
    # it two files have one name; it was named "a.jsonl.gz" (a.jsonl.gz.shared.json).
    for name in ("a.jsonl", "a.jsonl.gz"):
        (tmp_path / name).write_bytes(b"")
    argv = ["share", "--gold", str(tmp_path / "g.jsonl"), "--out-dir", str(tmp_path)]
    status, out, err = run([*argv, "--publication", str(tmp_path / "a.*")])
    assert (status, out) == (2, "") and "--publication names two files with one name" in err


def test_a_publication_pattern_that_names_the_gold_file_is_refused(tmp_path: Path) -> None:
    # 'study/*.jsonl' where the gold lies beside the systems: gold was read as a system and
    # refused as "unknown_key (predictions line 1, key field_type)", naming no file.
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"case_id": "c1", "field_id": "a.b", "field_type": "text", "value": "x"}\n')
    (tmp_path / "pred_a.jsonl").write_text("")
    argv = ["share", "--gold", str(gold), "--out-dir", str(tmp_path)]
    status, out, err = run([*argv, "--publication", str(tmp_path / "*.jsonl")])
    assert (status, out) == (2, "") and "--publication names the gold file" in err
    assert str(tmp_path) not in err


def test_audit_of_a_publication_sends_a_shared_comparison_to_comparisons(tmp_path: Path) -> None:
    # A shared comparison given as SHARED or with --others was refused as
    # "unknown_report_format (audit needs a shared report, made by chartscore share)": it
    # is one, and audit reads it, with --comparisons.
    from chartscore.documents.shared_comparison import SharedComparison
    from chartscore.workflows.share_comparison import share_comparison_files
    from test_shared_comparison import write_cohort

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    shared = share_comparison_files(gold, baseline, candidate)
    assert isinstance(shared, SharedComparison)
    path = tmp_path / "a_vs_b.json"
    path.write_text(shared.to_json())
    for argv in (
        ["audit", str(path), "--others", str(path)],
        ["audit", str(path), "--variants", str(path)],
    ):
        status, out, err = run(argv)
        assert (status, out) == (2, "") and "a shared comparison goes to --comparisons" in err


def test_a_publication_of_one_system_refuses_compare(tmp_path: Path) -> None:
    # --compare with one system wrote its report and no comparison, saying nothing of it.
    (tmp_path / "pred_a.jsonl").write_text("")
    argv = ["share", "--gold", str(tmp_path / "g.jsonl"), "--out-dir", str(tmp_path)]
    status, out, err = run([*argv, "--publication", str(tmp_path / "pred_*.jsonl"), "--compare"])
    assert (status, out) == (2, "") and "--compare needs two systems or more" in err
