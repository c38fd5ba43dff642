"""Report.from_json: byte-for-byte round trips, and strict refusal of anything else."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings

from chartscore import ChartscoreError, ErrorCode, Report
from chartscore.documents.report import FIELD_TYPE_NAMES, KappaResult, MetricResult
from chartscore.documents.tally import CORE_METRICS, COUNT_NAMES, LABEL_METRICS, TYPE_METRICS
from chartscore.stats.binomial import wilson_interval
from chartscore.workflows.demo import run_demo
from report_data import scored_reports

from helpers import examples

DEMO = run_demo()
DEMO_JSON = DEMO.to_json()


def refused(text: str | bytes | object) -> ChartscoreError:
    try:
        Report.from_json(text)  # type: ignore[arg-type]
    except ChartscoreError as error:
        assert error.__cause__ is None and error.__context__ is None
        assert error.__suppress_context__ is False
        return error
    raise AssertionError("from_json accepted the document")


# --- round trips ---------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(scored_reports())
def test_round_trip_is_byte_identical(report: Report) -> None:
    text = report.to_json()
    loaded = Report.from_json(text)
    assert loaded.to_json() == text
    assert loaded == report  # the same objects, not only the same bytes


def test_demo_round_trips_with_everything_in_it() -> None:
    loaded = Report.from_json(DEMO_JSON)
    assert loaded.to_json() == DEMO_JSON and loaded == DEMO
    document = json.loads(DEMO_JSON)
    # The demo exercises every type metric and kappa, so the loader saw them all.
    seen = {name for part in document["by_field"].values() for name in part}
    assert set(TYPE_METRICS) | {"kappa"} <= seen
    assert set(document["by_field_type"]) == set(FIELD_TYPE_NAMES)


def test_accepts_bytes_and_the_command_lines_line_end() -> None:
    assert Report.from_json(DEMO_JSON + "\n") == DEMO
    assert Report.from_json((DEMO_JSON + "\r\n").encode()) == DEMO
    assert Report.from_json(json.dumps(json.loads(DEMO_JSON), indent=2)) == DEMO


def test_integer_zero_and_one_in_intervals_load_as_floats() -> None:
    # Canonical JSON writes 0.0 as 0 and 1.0 as 1; the rebuilt objects hold floats.
    # Wilson's interval has lower bound exactly 0 at k = 0 and upper bound 1 at k = n.
    none = wilson_interval(0, 3)
    every = wilson_interval(3, 3)
    assert none is not None and every is not None and none[0] == 0 and every[1] == 1
    metric = MetricResult.from_dict(
        {"success_count": 0, "total_count": 3, "interval": [0, none[1]]}
    )
    assert metric == MetricResult(0, 3, none)
    assert all(type(bound) is float for bound in metric.interval or ())
    assert metric.rate == 0.0
    metric = MetricResult.from_dict(
        {"success_count": 3, "total_count": 3, "interval": [every[0], 1]}
    )
    assert metric == MetricResult(3, 3, every) and metric.interval is not None
    assert type(metric.interval[1]) is float
    assert MetricResult.from_dict({"success_count": 0, "total_count": 0, "interval": None}) == (
        MetricResult(0, 0, None)
    )
    kappa = KappaResult.from_dict({"value": -1, "interval": [-1, 1], "pairs": 4})
    assert kappa == KappaResult(-1.0, (-1.0, 1.0), 4) and type(kappa.value) is float
    assert KappaResult.from_dict({"value": None, "interval": None, "pairs": 3}).pairs == 3


@pytest.mark.parametrize(
    "version", ["0.1.0", "1", "2.0.1rc2", "1.4.0.post1.dev3", "0.2.dev7+g1a2b3c.d20260101"]
)
def test_pep_440_scorer_versions_load(version: str) -> None:
    document = json.loads(DEMO_JSON)
    document["scorer"]["version"] = version
    assert Report.from_json(json.dumps(document)).scorer_version == version


def test_field_type_names_are_the_field_types() -> None:
    from chartscore import FieldType

    assert set(FIELD_TYPE_NAMES) == {member.value for member in FieldType}


# --- refusals ------------------------------------------------------------------------

Edit = Callable[[dict[str, object]], object]


def _demo_document() -> dict[str, object]:
    return copy.deepcopy(json.loads(DEMO_JSON))


def _set(path: str, value: object) -> Edit:
    def edit(document: dict[str, object]) -> object:
        *parents, last = path.split("/")
        node: object = document
        for key in parents:
            node = node[key]  # type: ignore[index]
        node[last] = value  # type: ignore[index]
        return document

    return edit


def _drop(path: str) -> Edit:
    def edit(document: dict[str, object]) -> object:
        *parents, last = path.split("/")
        node: object = document
        for key in parents:
            node = node[key]  # type: ignore[index]
        del node[last]  # type: ignore[attr-defined]
        return document

    return edit


FORMAT_REFUSALS: dict[str, Edit] = {
    "format missing": _drop("format"),
    "format_version missing": _drop("format_version"),
    "other format": _set("format", "chartscore.shared_report"),
    "comparison": _set("format", "chartscore.comparison"),
    "format not a string": _set("format", ["chartscore.report"]),
    "version 1 (before clustered figures)": _set("format_version", 1),
    "version 4": _set("format_version", 4),
    "version 0": _set("format_version", 0),
    "version string": _set("format_version", "3"),
    "version float": _set("format_version", 3.0),
    "version true": _set("format_version", True),
    "version null": _set("format_version", None),
}


@pytest.mark.parametrize("name", sorted(FORMAT_REFUSALS))
def test_unknown_format_or_version_is_refused(name: str) -> None:
    text = json.dumps(FORMAT_REFUSALS[name](_demo_document()))
    error = refused(text)
    assert error.code is ErrorCode.UNKNOWN_REPORT_FORMAT
    assert str(error) == "unknown_report_format"


F = "by_field/dx.diabetes"  # a boolean field: it has kappa and majority_baseline
T = "by_field_type/ordinal"
M = f"{F}/exact_agreement"

SHAPE_REFUSALS: dict[str, Edit] = {
    "extra top-level key": _set("extra", 1),
    "missing overall": _drop("overall"),
    "missing by_field": _drop("by_field"),
    "missing scorer": _drop("scorer"),
    "scorer not an object": _set("scorer", "chartscore"),
    "scorer extra key": _set("scorer/extra", "x"),
    "scorer missing version": _drop("scorer/version"),
    "scorer other name": _set("scorer/name", "other"),
    "scorer version number": _set("scorer/version", 1),
    "scorer version empty": _set("scorer/version", ""),
    "scorer version markup": _set("scorer/version", "1<script>"),
    "scorer version spaces": _set("scorer/version", "1 0"),
    "scorer version too long": _set("scorer/version", "1" * 65),
    "scorer version words": _set("scorer/version", "1.0+Patient"),
    "scorer version letters": _set("scorer/version", "1.0abc"),
    "by_field a list": _set("by_field", []),
    "field id uppercase": _set("by_field/Dx", {}),
    "field id with space": _set("by_field/dx onset", {}),
    "field id markup": _set("by_field/<b>", {}),
    "unknown field type": _set("by_field_type/decimal", {}),
    "slice a list": _set(F, []),
    "missing count": _drop(f"{F}/missing_count"),
    "missing core metric": _drop(f"{F}/wrong_type_answer"),
    "unknown slice key": _set(f"{F}/accuracy", {}),
    "kappa in overall": _set("overall/kappa", {"value": None, "interval": None, "pairs": 0}),
    "type metric in overall": _set(
        "overall/tolerance_agreement", {"success_count": 0, "total_count": 0, "interval": None}
    ),
    "kappa in a type slice": _set(f"{T}/kappa", {"value": None, "interval": None, "pairs": 0}),
    "count negative": _set(f"{F}/field_count", -1),
    "count float": _set(f"{F}/field_count", 24.0),
    "count bool": _set(f"{F}/missing_count", True),
    "count string": _set(f"{F}/missing_count", "2"),
    "count null": _set(f"{F}/missing_count", None),
    "count too big": _set(f"{F}/field_count", 2**53),
    "metric not an object": _set(M, [13, 20]),
    "metric extra key": _set(f"{M}/rate", 0.65),
    "metric missing interval": _drop(f"{M}/interval"),
    "success over total": _set(f"{M}/success_count", 21),
    "success float": _set(f"{M}/success_count", 13.0),
    "interval null with trials": _set(f"{M}/interval", None),
    "interval with no trials": _set(
        f"{F}/exact_agreement", {"success_count": 0, "total_count": 0, "interval": [0, 1]}
    ),
    "interval one number": _set(f"{M}/interval", [0.4]),
    "interval three numbers": _set(f"{M}/interval", [0.1, 0.2, 0.3]),
    "interval reversed": _set(f"{M}/interval", [0.8, 0.4]),
    "interval above 1": _set(f"{M}/interval", [0.4, 1.5]),
    "interval below 0": _set(f"{M}/interval", [-0.1, 0.5]),
    "interval strings": _set(f"{M}/interval", ["0.4", "0.8"]),
    "interval bools": _set(f"{M}/interval", [False, True]),
    "interval an object": _set(f"{M}/interval", {"lower": 0.4, "upper": 0.8}),
    "kappa extra key": _set(f"{F}/kappa/se", 0.1),
    "kappa missing pairs": _drop(f"{F}/kappa/pairs"),
    "kappa value without interval": _set(f"{F}/kappa/interval", None),
    "kappa interval without value": _set(f"{F}/kappa/value", None),
    "kappa value above 1": _set(f"{F}/kappa/value", 1.5),
    "kappa interval below -1": _set(f"{F}/kappa/interval", [-1.5, 0.2]),
    "kappa interval reversed": _set(f"{F}/kappa/interval", [0.9, 0.1]),
    "kappa with no pairs": _set(f"{F}/kappa/pairs", 0),
    "kappa value string": _set(f"{F}/kappa/value", "0.4"),
}


@pytest.mark.parametrize("name", sorted(SHAPE_REFUSALS))
def test_malformed_report_is_refused(name: str) -> None:
    text = json.dumps(SHAPE_REFUSALS[name](_demo_document()))
    error = refused(text)
    assert error.code is ErrorCode.INVALID_REPORT, name
    assert str(error) == "invalid_report"


def test_each_refusal_edit_applies_to_a_loadable_document() -> None:
    # The refusal tables edit the demo report; without the edit it loads, so each
    # refusal above is caused by its edit and nothing else.
    document = _demo_document()
    assert "kappa" in document["by_field"]["dx.diabetes"]  # type: ignore[index]
    assert Report.from_json(json.dumps(document)) == DEMO
    assert len(SHAPE_REFUSALS) > 50


SYNTAX_REFUSALS: dict[str, str | bytes] = {
    "empty": "",
    "truncated": DEMO_JSON[:-1],
    "two documents": DEMO_JSON + DEMO_JSON,
    "not utf-8": b"\xff" + DEMO_JSON.encode(),
    "utf-8 bom": "\ufeff" + DEMO_JSON,
    "nan": DEMO_JSON.replace('"missing_count":2', '"missing_count":NaN', 1),
    "infinity": DEMO_JSON.replace('"missing_count":2', '"missing_count":Infinity', 1),
    "minus infinity": DEMO_JSON.replace('"missing_count":2', '"missing_count":-Infinity', 1),
    "beyond double range": DEMO_JSON.replace('"missing_count":2', '"missing_count":1e400', 1),
    "huge integer": DEMO_JSON.replace('"missing_count":2', '"missing_count":' + "9" * 5000, 1),
    "duplicate top-level key": DEMO_JSON[:-1] + ',"format":"chartscore.report"}',
    "duplicate nested key": DEMO_JSON.replace(
        '"missing_count":2', '"missing_count":2,"missing_count":2', 1
    ),
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "a list": "[]",
    "a string": '"chartscore.report"',
    "a number": "1",
    "null": "null",
}


@pytest.mark.parametrize("name", sorted(SYNTAX_REFUSALS))
def test_text_that_is_not_strict_json_is_refused(name: str) -> None:
    text = SYNTAX_REFUSALS[name]
    if name in {"nan", "infinity", "minus infinity", "beyond double range", "huge integer"}:
        assert text != DEMO_JSON  # the replacement found its target
    error = refused(text)
    assert error.code is ErrorCode.INVALID_REPORT


def test_duplicate_key_detection_can_see_the_duplicate() -> None:
    text = SYNTAX_REFUSALS["duplicate nested key"]
    assert text != DEMO_JSON
    assert json.loads(text) == json.loads(DEMO_JSON)  # plain json would accept it silently


@pytest.mark.parametrize("value", [None, 42, ["{}"], bytearray(b"{}")])
def test_non_text_argument_is_refused(value: object) -> None:
    assert refused(value).code is ErrorCode.INVALID_REPORT


def test_slice_vocabulary_matches_the_tally() -> None:
    # The loader's closed vocabulary is the tally's: every count and core metric is required;
    # the demo's labelled fields add the pooled label metrics, their F1 and pooled kappa.
    document = _demo_document()
    part = document["overall"]
    assert isinstance(part, dict)
    pooled = {"micro_f1", "pooled_kappa"}
    assert set(part) == set(COUNT_NAMES) | set(CORE_METRICS) | set(LABEL_METRICS) | pooled
    for name in (*COUNT_NAMES, *CORE_METRICS):
        broken = _demo_document()
        del broken["overall"][name]  # type: ignore[attr-defined]
        assert refused(json.dumps(broken)).code is ErrorCode.INVALID_REPORT, name


@pytest.mark.parametrize("extra", [0, 3])
def test_ignored_prediction_count_round_trips(extra: int) -> None:
    from chartscore import GoldField, Prediction, score

    gold = [GoldField("c1", "a", "text", "x"), GoldField("c2", "a", "text", None)]
    predictions = [Prediction("c1", "a", "x")] + [
        Prediction(f"other-{i}", "a", "y") for i in range(extra)
    ]
    report = score(gold, predictions, extra_predictions="ignore")
    assert report.ignored_prediction_count == extra
    text = report.to_json()
    assert '"ignored_prediction_count"' in text
    loaded = Report.from_json(text)
    assert loaded == report and loaded.to_json() == text
    document = json.loads(text)
    for bad in (-1, 1.5, "3", None, True):
        document["ignored_prediction_count"] = bad
        assert refused(json.dumps(document)).code is ErrorCode.INVALID_REPORT, bad
