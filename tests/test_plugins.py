"""Counts-only plugin metrics, through a test package installed with real entry points.

The package ``chartscore_test_plugins`` is written to a temporary folder with a
``.dist-info`` holding ``entry_points.txt`` (group ``chartscore.metrics``), and the folder is
put on ``sys.path``: ``importlib.metadata`` then finds it as it finds any installed
distribution. Its plugins are counted (hand-computed examples), merged (any split of the rows
gives the pooled report, byte for byte; mixed versions are refused), compared, gated, shared
(checked against the independent reference in ``disclosure_reference.py``) and rendered; the
one that raises leaks nothing (canary test).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chartscore
from chartscore import (
    ChartscoreError,
    ErrorCode,
    FieldSpec,
    GoldField,
    MetricPlugin,
    Prediction,
    Schema,
    compare,
    score,
)
from chartscore.cli import main as cli_main
from chartscore.disclosure import SharedReport, audit
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.report import Report
from chartscore.errors import describe
from chartscore.render import render
from chartscore.scoring.partial import merge_all
from chartscore.scoring.scorer import Scorer, feed_records
from chartscore.workflows.share import share
from disclosure_reference import build_cohort
from test_disclosure import assert_shared_properties, scored
from test_privacy import Canary, assert_clean_error, assert_clean_text, canaries

from helpers import examples

PACKAGE = "chartscore_test_plugins"

SOURCE = '''
"""Plugins for chartscore's tests (tests/test_plugins.py)."""

from chartscore import MetricPlugin

SEEN = []


def _initials(text):
    return "".join(word[0] for word in text.split())


def _abbreviation(gold, answer):
    # success: the answer is gold, or the initials of gold's words ("hf" for heart failure).
    return "success" if answer in (gold, _initials(gold)) else "failure"


def _length_band(gold, answer):
    if len(answer) < len(gold):
        return "shorter"
    return "same" if len(answer) == len(gold) else "longer"


def _recording(gold, answer):
    SEEN.append((gold, answer))
    return "seen"


def _leaky(gold, answer):
    raise RuntimeError(f"the plugin saw {gold!r} and {answer!r}")


abbreviation = MetricPlugin("abbreviation", "1.0", ("success", "failure"), _abbreviation)
abbreviation_v2 = MetricPlugin("abbreviation", "2.0", ("success", "failure"), _abbreviation)
length_band = MetricPlugin("length_band", "2.1", ("shorter", "same", "longer"), _length_band)
recording = MetricPlugin("recording", "1.0", ("seen", "unseen"), _recording)
leaky = MetricPlugin("leaky", "1.0", ("success", "failure"), _leaky)
liar = MetricPlugin("liar", "1.0", ("success", "failure"), lambda gold, answer: "maybe")
misnamed = MetricPlugin("other_name", "1.0", ("a", "b"), lambda gold, answer: "a")


def not_a_plugin(gold, answer):
    return "success"


def _exits(gold, answer):
    raise SystemExit(f"the plugin saw {gold!r}")


def _interrupts(gold, answer):
    raise KeyboardInterrupt(f"the plugin saw {gold!r}")


class _Own(BaseException):
    pass


def _own(gold, answer):
    raise _Own(f"the plugin saw {gold!r}")


def _generator_exit(gold, answer):
    raise GeneratorExit(f"the plugin saw {gold!r}")


def _chatty(gold, answer):
    import os
    import sys

    print("ZQPRINT", gold, answer)
    sys.stdout.write(f"ZQWRITE {gold}\\n")
    os.write(1, f"ZQFD1 {gold}\\n".encode())
    print("ZQSTDERR", gold, file=sys.stderr)
    os.write(2, f"ZQFD2 {answer}\\n".encode())
    return "success"


def _slow(gold, answer):
    import os
    import pathlib
    import time

    pathlib.Path(os.environ["CHARTSCORE_TEST_JUDGING"]).touch()
    time.sleep(600)
    return "success"


exits = MetricPlugin("exits", "1.0", ("success", "failure"), _exits)
interrupts = MetricPlugin("interrupts", "1.0", ("success", "failure"), _interrupts)
own = MetricPlugin("own", "1.0", ("success", "failure"), _own)
generator_exit = MetricPlugin("generator_exit", "1.0", ("success", "failure"), _generator_exit)
chatty = MetricPlugin("chatty", "1.0", ("success", "failure"), _chatty)
slow = MetricPlugin("slow", "1.0", ("success", "failure"), _slow)
'''

ENTRY_POINTS = """
[chartscore.metrics]
abbreviation = chartscore_test_plugins:abbreviation
length_band = chartscore_test_plugins:length_band
recording = chartscore_test_plugins:recording
leaky = chartscore_test_plugins:leaky
liar = chartscore_test_plugins:liar
misnamed = chartscore_test_plugins:misnamed
not_a_plugin = chartscore_test_plugins:not_a_plugin
broken = chartscore_test_plugins_broken:plugin
exits = chartscore_test_plugins:exits
interrupts = chartscore_test_plugins:interrupts
own = chartscore_test_plugins:own
generator_exit = chartscore_test_plugins:generator_exit
exiting_import = chartscore_test_plugins_exiting:plugin
chatty = chartscore_test_plugins:chatty
slow = chartscore_test_plugins:slow
"""


@pytest.fixture(scope="module", autouse=True)
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The test package and its dist-info on sys.path, as an installed distribution."""
    root = tmp_path_factory.mktemp("site")
    (root / PACKAGE).mkdir()
    (root / PACKAGE / "__init__.py").write_text(textwrap.dedent(SOURCE), encoding="utf-8")
    (root / f"{PACKAGE}_broken.py").write_text(
        'raise ImportError("ZQIMPORTCANARY while importing")\n', encoding="utf-8"
    )
    (root / f"{PACKAGE}_exiting.py").write_text(
        'raise SystemExit("ZQIMPORTCANARY while importing")\n', encoding="utf-8"
    )
    info = root / f"{PACKAGE}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    yield root
    sys.path.remove(str(root))
    for name in (PACKAGE, f"{PACKAGE}_broken", f"{PACKAGE}_exiting"):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()


def _schema(field_type: str = "text", *plugins: str) -> dict[str, object]:
    return {"fields": {"dx.summary": {"type": field_type, "plugins": list(plugins)}}}


def _digest(root: Path) -> str:
    data = (root / PACKAGE / "__init__.py").read_bytes()
    return "sha256:" + hashlib.sha256(data).hexdigest()


# A hand-computed example (docs/plugins.md): abbreviation on gold "heart failure".
EXAMPLE: list[tuple[object, object]] = [
    ("heart failure", "Heart  Failure"),  # success: the same normalized text
    ("heart failure", "HF"),  # success: the initials (normalized "hf")
    ("heart failure", "h f"),  # failure
    ("heart failure", None),  # abstained: the plugin is not called
    ("heart failure", "-"),  # missing: not called
    ("heart failure", 5),  # wrong type: not called
    (None, "hf"),  # unanswerable: not called
]


def _rows(pairs: list[tuple[object, object]]) -> tuple[list[GoldField], list[Prediction]]:
    gold = [GoldField(f"c{i}", "dx.summary", "text", g) for i, (g, _) in enumerate(pairs)]
    answers = [Prediction(f"c{i}", "dx.summary", a) for i, (_, a) in enumerate(pairs) if a != "-"]
    return gold, answers


# --------------------------------------------------------------------------- counting


def test_a_plugin_registered_by_entry_point_is_counted(installed: Path) -> None:
    report = score(*_rows(EXAMPLE), schema=_schema("text", "abbreviation"))
    field = report.by_field["dx.summary"]
    assert field.metric("abbreviation:success").success_count == 2
    assert field.metric("abbreviation:failure").success_count == 1
    assert field.metric("abbreviation:success").total_count == 6  # the answerable rows
    assert "abbreviation:success" in report.by_field_type["text"].metrics
    assert "abbreviation:success" not in report.overall.metrics
    document = json.loads(report.to_json())
    assert document["plugins"] == {
        "abbreviation": {
            "version": "1.0",
            "code_digest": _digest(installed),
            "outcomes": ["success", "failure"],
        }
    }
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


def test_a_plugin_named_by_module_path_is_counted() -> None:
    by_path = score(*_rows(EXAMPLE), schema=_schema("text", f"{PACKAGE}:abbreviation"))
    by_name = score(*_rows(EXAMPLE), schema=_schema("text", "abbreviation"))
    assert by_path.to_json() == by_name.to_json()


def test_a_plugin_with_its_own_labels() -> None:
    pairs: list[tuple[object, object]] = [("ab", "a"), ("ab", "AB"), ("ab", "abc"), ("b c", "b  c")]
    field = score(*_rows(pairs), schema=_schema("text", "length_band")).by_field["dx.summary"]
    counts = {name: m.success_count for name, m in field.metrics.items() if ":" in name}
    assert counts == {"length_band:shorter": 1, "length_band:same": 2, "length_band:longer": 1}


def test_the_judge_sees_normalized_pairs_and_never_a_case_id() -> None:
    module = importlib.import_module(PACKAGE)
    module.SEEN.clear()
    gold = [
        GoldField("case-secret-1", "dx.summary", "text", " Heart  Failure "),
        GoldField("case-secret-2", "vitals.weight", "number", 70),
        GoldField("case-secret-3", "dx.onset", "date", "2023-04-05"),
    ]
    predictions = [
        Prediction("case-secret-1", "dx.summary", "HF"),
        Prediction("case-secret-2", "vitals.weight", "70.50"),
        Prediction("case-secret-3", "dx.onset", "2023-04"),
    ]
    schema = {
        "fields": {
            "dx.summary": {"type": "text", "plugins": ["recording"]},
            "vitals.weight": {"type": "number", "plugins": ["recording"]},
            "dx.onset": {"type": "date", "plugins": ["recording"]},
        }
    }
    score(gold, predictions, schema=schema)
    seen = set(module.SEEN)
    # The stand-in check judges each gold value against itself; then the answers.
    assert ("heart failure", "hf") in seen
    assert (70, Decimal("70.50")) in seen
    assert ((2023, 4, 5), (2023, 4, None)) in seen
    assert not any("secret" in repr(pair) for pair in seen)


def test_an_edited_plugin_report_is_refused() -> None:
    report = score(*_rows(EXAMPLE), schema=_schema("text", "abbreviation"))
    document = json.loads(report.to_json())

    def refused(edit: Any) -> None:
        copy = json.loads(json.dumps(document))
        edit(copy)
        with pytest.raises(ChartscoreError) as caught:
            Report.from_json(json.dumps(copy))
        assert caught.value.code is ErrorCode.INVALID_REPORT

    refused(lambda d: d.pop("plugins"))
    refused(lambda d: d["plugins"]["abbreviation"].update(outcomes=["success", "other"]))
    refused(lambda d: d["plugins"]["abbreviation"].update(code_digest="sha256:0"))
    refused(lambda d: d["by_field"]["dx.summary"].pop("abbreviation:failure"))
    refused(
        lambda d: d["overall"].update(
            {"abbreviation:success": d["by_field"]["dx.summary"]["abbreviation:success"]}
        )
    )

    def more_labels_than_answers(d: Any) -> None:
        # 6 of 6 answerable rows labelled success, with only 5 answered rows.
        d["by_field"]["dx.summary"]["abbreviation:success"] = {
            "success_count": 6,
            "total_count": 6,
            "interval": list(
                report.by_field["dx.summary"].metric("exact_agreement").interval or ()
            ),
        }

    refused(more_labels_than_answers)


# --------------------------------------------------------------------------- merging


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 4), st.randoms(use_true_random=False))
def test_partials_merge_to_the_pooled_report(parts: int, chooser: random.Random) -> None:
    cohort = build_cohort(chooser.choice, ["text:plugin", "text:fuzzy", "number"], 12)
    gold, predictions = cohort.records()
    schema = Schema.from_dict(cohort.schema_document())
    pooled = score(gold, predictions, schema=schema).to_json()
    split = {case: chooser.randrange(parts) for case in {row.case_id for row in gold}}
    partials = []
    for part in range(parts):
        part_gold = [row for row in gold if split[row.case_id] == part]
        if part_gold:
            scorer = Scorer(schema)
            part_answers = [row for row in predictions if split[row.case_id] == part]
            feed_records(scorer, part_gold, part_answers)
            partials.append(scorer.partial())
    chooser.shuffle(partials)
    assert Report.from_tally(merge_all(partials).tally()).to_json() == pooled


def test_partials_scored_with_two_plugin_versions_are_refused() -> None:
    gold, predictions = _rows(EXAMPLE)
    first, second = (
        Scorer(Schema.from_dict(_schema("text", "abbreviation"))),
        Scorer(Schema.from_dict(_schema("text", f"{PACKAGE}:abbreviation_v2"))),
    )
    feed_records(first, gold[:3], predictions[:3])
    feed_records(second, gold[3:], predictions[3:])
    with pytest.raises(ChartscoreError) as caught:
        first.partial().merge(second.partial())
    assert caught.value.code is ErrorCode.PLUGIN_MISMATCH


# --------------------------------------------------------------------------- comparing


def test_plugin_metrics_are_paired_and_gated() -> None:
    gold = [GoldField(f"c{i}", "dx.summary", "text", "heart failure") for i in range(6)]
    old = [Prediction(f"c{i}", "dx.summary", "cardiac failure") for i in range(6)]
    new = [Prediction(f"c{i}", "dx.summary", "HF" if i % 3 else "x") for i in range(6)]
    comparison = compare(gold, old, new, schema=_schema("text", "abbreviation"))
    paired = comparison.by_field["dx.summary"].paired["abbreviation:success"]
    assert (paired.baseline_only, paired.candidate_only) == (0, 4)
    assert "abbreviation:success" not in comparison.overall.paired
    text = comparison.to_json()
    assert json.loads(text)["plugins"]["abbreviation"]["version"] == "1.0"
    assert Comparison.from_json(text).to_json() == text
    # A plugin label has no built-in direction: every rule fits it.
    gates = parse_gates(
        textwrap.dedent(
            """
            [[gate]]
            slice = "field:dx.summary"
            metric = "abbreviation:success"
            min_difference_lower = 0.1
            [[gate]]
            slice = "field:dx.summary"
            metric = "abbreviation:failure"
            max_upper = 0.9
            """
        )
    )
    results = evaluate(Comparison.from_json(text), gates)
    assert [result.passed for result in results.results] == [True, True]


# --------------------------------------------------------------------------- sharing


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.lists(st.sampled_from(["text:plugin", "text", "categorical"]), min_size=1, max_size=3),
    st.integers(1, 20),
    st.randoms(use_true_random=False),
    st.sampled_from([2, 11]),
)
def test_plugin_metrics_are_shared_under_the_rule(
    types: list[str], cases: int, chooser: random.Random, min_cell: int
) -> None:
    cohort = build_cohort(chooser.choice, types, cases)
    report, sensitivity, tally = scored(cohort)
    for field_id, part in report.by_field.items():
        assert ("length_band:same" in part.metrics) is field_id.endswith("text_plugin")
    # The reference restates the plugin's rule and agrees on every number, case counts
    # included; the shared report holds the rule and passes its audit.
    shared = assert_shared_properties(report, sensitivity, tally, min_cell)
    if any(t == "text:plugin" for t in types):
        assert json.loads(shared.to_json())["plugins"]["length_band"]["version"] == "2.1"


def test_share_suppresses_small_plugin_cells_and_renders_them() -> None:
    gold = [GoldField(f"c{i:02d}", "dx.summary", "text", "heart failure") for i in range(30)]
    answers = [Prediction(f"c{i:02d}", "dx.summary", "hf" if i < 25 else "h") for i in range(30)]
    shared = share(gold, answers, schema=_schema("text", "abbreviation"))
    text = shared.to_json()
    assert audit(text).passed
    field = json.loads(text)["by_field"]["dx.summary"]
    # 5 cases labelled failure: suppressed, and so is what would give it back (30 - 25).
    assert field["abbreviation:failure"]["success_count"] is None
    success = field["abbreviation:success"]
    assert None in (success["success_count"], success["total_count"])
    assert success["interval"] is None
    loaded = SharedReport.from_json(text)
    for fmt in ("table", "markdown", "csv", "html"):
        rendered = render(loaded, fmt)
        assert "abbreviation" in rendered
    assert "abbreviation: failure" in render(loaded, "table")


def test_every_rendering_shows_plugin_metrics_and_their_version() -> None:
    report = score(*_rows(EXAMPLE), schema=_schema("text", "abbreviation"))
    table = render(report, "table")
    assert "plugins: abbreviation 1.0 (code sha256:" in table
    assert "abbreviation: success" in table and "2/6" in table
    assert "abbreviation:success" in render(report, "csv")
    markdown = render(report, "markdown")
    assert "abbreviation: failure" in markdown and "docs/plugins.md" in markdown
    html = render(report, "html")
    assert "abbreviation 1.0" in html and "abbreviation: success" in html


# --------------------------------------------------------------------------- failures


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(canaries)
def test_a_plugins_exception_leaks_nothing(tmp_path: Path, canary: Canary) -> None:
    gold = [GoldField(canary.case_id(0), "dx.summary", "text", f"gold {canary.marker}")]
    answers = [Prediction(canary.case_id(0), "dx.summary", f"answer {canary.wide}")]
    schema = _schema("text", "leaky")
    try:
        score(gold, answers, schema=schema)
    except ChartscoreError as error:
        caught = error
    assert_clean_error(caught, canary, ErrorCode.PLUGIN_FAILED)
    # The command line prints one line, the code and where.
    where = tmp_path / f"run-{canary.marker}"
    where.mkdir(exist_ok=True)
    paths = {name: where / f"{name}.jsonl" for name in ("gold", "predictions")}
    paths["gold"].write_text(
        json.dumps(
            {
                "case_id": canary.case_id(0),
                "field_id": "dx.summary",
                "field_type": "text",
                "value": f"g {canary.marker}",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    paths["predictions"].write_text(
        json.dumps({"case_id": canary.case_id(0), "field_id": "dx.summary", "value": canary.wide})
        + "\n",
        encoding="utf-8",
    )
    schema_path = where / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    status = cli_main(
        [
            "score",
            "--gold",
            str(paths["gold"]),
            "--predictions",
            str(paths["predictions"]),
            "--schema",
            str(schema_path),
        ],
        stdout=out,
        stderr=err,
    )
    assert status != 0 and out.getvalue() == ""
    assert err.getvalue().startswith("chartscore: error: plugin_failed (gold line 1")
    assert err.getvalue().count("\n") == 1
    assert_clean_text(err.getvalue(), canary, "stderr")


def _files(where: Path, plugin: str, gold: str = "heart failure") -> list[str]:
    """A one-row gold file, its answer and a schema naming ``plugin``: ``score``'s arguments."""
    paths = {name: where / f"{name}.jsonl" for name in ("gold", "predictions")}
    row = {"case_id": "c1", "field_id": "dx.summary", "field_type": "text", "value": gold}
    paths["gold"].write_text(json.dumps(row) + "\n", encoding="utf-8")
    answer = {"case_id": "c1", "field_id": "dx.summary", "value": "HF"}
    paths["predictions"].write_text(json.dumps(answer) + "\n", encoding="utf-8")
    schema = where / "schema.json"
    schema.write_text(json.dumps(_schema("text", plugin)), encoding="utf-8")
    return ["score", "--gold", str(paths["gold"]), "--predictions", str(paths["predictions"]),
            "--schema", str(schema)]  # fmt: skip


@pytest.mark.parametrize(
    "plugin", ["exits", "interrupts", "leaky", "liar", "own", "generator_exit"]
)
def test_whatever_a_judge_raises_is_a_plugin_failure_that_names_the_plugin(
    tmp_path: Path, plugin: str
) -> None:
    # SystemExit was internal_error (exit 70); KeyboardInterrupt was Ctrl-C (exit 130); a
    # BaseException of the judge's own (or GeneratorExit) left score() with its message.
    out, err = io.StringIO(), io.StringIO()
    status = cli_main(_files(tmp_path, plugin, "ZQ canary gold"), stdout=out, stderr=err)
    where = f"gold line 1 plugin {plugin}"  # the stand-in check meets it first
    expected = f"chartscore: error: plugin_failed ({where}): {describe(ErrorCode.PLUGIN_FAILED)}\n"
    assert (status, out.getvalue(), err.getvalue()) == (1, "", expected)
    # The library: the same error, nothing chained, the plugin's message nowhere.
    # As in batch's forked processes, where SIGINT is ignored: no Ctrl-C can raise it.
    with signal_ignored(), pytest.raises(ChartscoreError) as raised:
        score(*_rows([("ZQ canary gold", "hf")]), schema=_schema("text", plugin))
    error = raised.value
    assert (error.code, error.plugin) == (ErrorCode.PLUGIN_FAILED, plugin)
    assert f"plugin {plugin}" in str(error) and "ZQ" not in str(error) + repr(vars(error))
    assert error.__cause__ is None and error.__context__ is None


@contextlib.contextmanager
def signal_ignored() -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_keyboard_interrupt_under_python_s_own_handler_is_left_as_ctrl_c() -> None:
    # Under Python's default SIGINT handler (a notebook, a script) a KeyboardInterrupt from
    # a judge cannot be told from Ctrl-C, which must still stop the caller.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        score(*_rows([("heart failure", "hf")]), schema=_schema("text", "interrupts"))


def _plugin_process(
    installed: Path, argv: list[str], env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    source = str(Path(chartscore.__file__).resolve().parents[1])
    return subprocess.Popen(
        [sys.executable, "-m", "chartscore", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join([source, str(installed)])},
        start_new_session=True,
    )


def test_ctrl_c_while_a_judge_runs_is_still_ctrl_c(installed: Path, tmp_path: Path) -> None:
    judging = tmp_path / "judging"
    process = _plugin_process(
        installed, _files(tmp_path, "slow"), {"CHARTSCORE_TEST_JUDGING": str(judging)}
    )
    try:
        deadline = time.monotonic() + 120
        while not judging.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert judging.exists(), process.communicate()
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    interrupted = f"chartscore: error: interrupted: {describe(ErrorCode.INTERRUPTED)}\n"
    assert (process.returncode, out, err.decode()) == (130, b"", interrupted)


def test_what_a_judge_prints_is_discarded(installed: Path, tmp_path: Path) -> None:
    # print, sys.stdout, file descriptor 1 (and stderr): it landed in front of the report, so
    # `chartscore share > shared.json` wrote patient values and exited 0.
    process = _plugin_process(installed, _files(tmp_path, "chatty", "ZQ canary gold"))
    out, err = process.communicate(timeout=120)
    assert (process.returncode, err) == (0, b"")
    assert b"ZQ" not in out
    report = Report.from_json(out.decode())
    assert report.by_field["dx.summary"].metric("chatty:success").success_count == 1


def test_what_a_judge_prints_through_python_is_discarded_by_the_library(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print("before")
    report = score(*_rows([("ZQ gold", "ZQ answer")]), schema=_schema("text", "chatty"))
    print("after")
    assert report.by_field["dx.summary"].metric("chatty:success").success_count == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("before\nafter\n", "")  # print and sys.stdout, sys.stderr: a sink


@pytest.mark.parametrize(
    ("reference", "code"),
    [
        ("liar", ErrorCode.PLUGIN_FAILED),  # a label it did not declare
        ("nothing_installed", ErrorCode.PLUGIN_NOT_FOUND),
        ("broken", ErrorCode.PLUGIN_NOT_FOUND),  # the import raised
        ("exiting_import", ErrorCode.PLUGIN_NOT_FOUND),  # it raised SystemExit, which left
        (f"{PACKAGE}:no_such_attribute", ErrorCode.PLUGIN_NOT_FOUND),
        ("not_a_plugin", ErrorCode.INVALID_PLUGIN),
        ("misnamed", ErrorCode.INVALID_PLUGIN),  # the entry point and the plugin disagree
    ],
)
def test_plugins_that_cannot_be_used_are_refused(reference: str, code: ErrorCode) -> None:
    with pytest.raises(ChartscoreError) as caught:
        score(*_rows(EXAMPLE), schema=_schema("text", reference))
    error = caught.value
    assert error.code is code
    assert error.__cause__ is None and error.__context__ is None
    assert "ZQIMPORTCANARY" not in str(error) and "maybe" not in str(error)


def test_two_references_to_two_plugins_of_one_name_are_refused() -> None:
    with pytest.raises(ChartscoreError) as caught:
        score(
            *_rows(EXAMPLE),
            schema=_schema("text", "abbreviation", f"{PACKAGE}:abbreviation_v2"),
        )
    assert caught.value.code is ErrorCode.INVALID_PLUGIN


@pytest.mark.parametrize(
    "plugins",
    [[], "abbreviation", ["Abbreviation"], ["a b"], ["abbreviation", "abbreviation"], [3]],
)
def test_bad_plugin_lists_are_refused(plugins: object) -> None:
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict({"fields": {"dx.summary": {"type": "text", "plugins": plugins}}})
    assert caught.value.code is ErrorCode.SCHEMA_INVALID_PLUGINS


def test_plugin_lists_read_as_field_specs() -> None:
    schema = Schema.from_dict(_schema("number", "length_band", f"{PACKAGE}:abbreviation"))
    spec = schema.fields["dx.summary"]
    assert spec == FieldSpec("number", plugins=(f"{PACKAGE}:abbreviation", "length_band"))


def _judge(gold: object, answer: object) -> str:
    return "a"


@pytest.mark.parametrize(
    "arguments",
    [
        ("Bad", "1.0", ("a", "b"), _judge),
        ("ok", "", ("a", "b"), _judge),
        ("ok", "1 0", ("a", "b"), _judge),
        ("ok", "1.0", ("a",), _judge),
        ("ok", "1.0", ("a", "a"), _judge),
        ("ok", "1.0", tuple(f"l{i}" for i in range(17)), _judge),
        ("ok", "1.0", ("a", "B"), _judge),
        ("ok", "1.0", "ab", _judge),
        ("ok", "1.0", ("a", "b"), "not callable"),
    ],
)
def test_bad_plugin_declarations_are_refused(arguments: tuple[Any, ...]) -> None:
    with pytest.raises(ChartscoreError) as caught:
        MetricPlugin(*arguments)
    assert caught.value.code is ErrorCode.INVALID_PLUGIN
