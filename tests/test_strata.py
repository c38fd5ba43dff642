"""Stratum slices (site, abstractor): the schema's declaration, the strata file, the report's
``by_stratum`` slices, their merge (partials, Dask) and ``share`` of them (the disclosure
side: tests/test_disclosure_strata.py)."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import t as student

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, Schema, score
from chartscore.cli import main
from chartscore.documents.report import Report
from chartscore.io import load_strata
from chartscore.records.strata import CaseStrata
from chartscore.scoring.cases import CaseTrackingScorer
from chartscore.scoring.partial import merge_all
from chartscore.workflows.partials import merge_partials, score_with_partial
from chartscore.workflows.score import score_files

from helpers import SCHEMA, datasets, examples, write_jsonl

DATA = Path(__file__).resolve().parents[1] / "src" / "chartscore" / "data"
CANARY = "Zq9canaryLabel"


def with_strata(strata: dict[str, list[str]], base: Schema = SCHEMA) -> Schema:
    return Schema.from_dict({**base.to_dict(), "strata": strata})


def assign(
    gold: Sequence[GoldField], schema: Schema, seed: int
) -> tuple[CaseStrata, dict[str, dict[str, str]]]:
    rng = random.Random(seed)
    cases = sorted({row.case_id for row in gold})
    given_labels = {
        case: {key: rng.choice(labels) for key, labels in schema.strata} for case in cases
    }
    return CaseStrata.from_mapping(schema, given_labels), given_labels


# --- the schema's declaration ------------------------------------------------------------------


def test_the_schema_declares_strata_sorted_by_key_and_reads_back_equal() -> None:
    schema = with_strata({"site": ["B", "A"], "abstractor": ["r1", "r2"]})
    assert schema.strata == (("abstractor", ("r1", "r2")), ("site", ("B", "A")))
    assert Schema.from_dict(schema.to_dict()) == schema
    assert "strata" not in SCHEMA.to_dict()  # undeclared: the document is as before


@pytest.mark.parametrize(
    "strata",
    [
        {},
        [],
        {"site": []},
        {"site": "A"},
        {"Site": ["A"]},
        {"site": ["A", "A"]},
        {"site": ["A=B"]},
        {"site": ["A/B"]},
        {"site": [f"{CANARY} x"]},
        {"site": [1]},
        {f"{CANARY}key!": ["A"]},
        {f"k{i}": ["A"] for i in range(9)},
        {"site": [f"L{i}" for i in range(257)]},
    ],
)
def test_a_bad_declaration_is_refused_without_echoing_it(strata: object) -> None:
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict({"fields": {}, "strata": strata})
    error = caught.value
    assert error.code is ErrorCode.SCHEMA_INVALID_STRATA
    assert CANARY.lower() not in str(error).lower() and error.__context__ is None


# --- the strata file ---------------------------------------------------------------------------


def strata_file(tmp_path: Path, lines: Sequence[object]) -> Path:
    path = tmp_path / "strata.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


SITES = with_strata({"site": ["A", "B"], "abstractor": ["r1", "r2"]})
GOOD = {"case_id": "c1", "strata": {"site": "A", "abstractor": "r1"}}


@pytest.mark.parametrize(
    ("second", "code", "shown"),
    [
        (
            {"case_id": "c2", "strata": {"site": CANARY, "abstractor": "r1"}},
            "stratum_undeclared",
            "",
        ),
        ({"case_id": "c2", "strata": {CANARY: "A", "abstractor": "r1"}}, "stratum_undeclared", ""),
        ({"case_id": "c2", "strata": {"site": "A"}}, "stratum_missing", ""),
        ({"case_id": "c2", "strata": {"site": 1, "abstractor": "r1"}}, "stratum_undeclared", ""),
        ({"case_id": "c2", "strata": [CANARY]}, "stratum_undeclared", ""),
        ({"case_id": "c1", "strata": {"site": "B", "abstractor": "r2"}}, "duplicate_case", ""),
        ({"case_id": "", "strata": {"site": "A", "abstractor": "r1"}}, "invalid_case_id", ""),
        ({"case_id": "c2"}, "missing_key", ", key strata"),
        ({"case_id": "c2", "strata": {}, CANARY: 1}, "unknown_key", ""),
    ],
)
def test_a_bad_strata_line_names_its_code_and_line_only(
    tmp_path: Path, second: object, code: str, shown: str
) -> None:
    path = strata_file(tmp_path, [GOOD, second])
    with pytest.raises(ChartscoreError) as caught:
        load_strata(path, SITES)
    assert str(caught.value) == f"{code} (strata line 2{shown})"
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_strata_need_a_schema_that_declares_them(tmp_path: Path) -> None:
    path = strata_file(tmp_path, [GOOD])
    for schema in (None, SCHEMA):
        with pytest.raises(ChartscoreError) as caught:
            load_strata(path, schema)
        assert str(caught.value) == "strata_not_declared (schema)"


def test_a_gold_case_missing_from_the_strata_file_is_refused(tmp_path: Path) -> None:
    gold = [GoldField("c1", "t.note", "text", "a"), GoldField(CANARY, "t.note", "text", "b")]
    strata = CaseStrata.from_mapping(SITES, {"c1": {"site": "A", "abstractor": "r1"}})
    with pytest.raises(ChartscoreError) as caught:
        score(gold, [], schema=SITES, strata=strata)
    assert str(caught.value) == "strata_case_missing (strata)"
    assert CANARY.lower() not in repr(strata).lower()


# --- the report's stratum slices ---------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(datasets())
def test_one_stratum_holding_every_case_is_the_overall_slice(
    dataset: tuple[list[GoldField], list[Prediction]],
) -> None:
    gold, predictions = dataset
    schema = with_strata({"site": ["A"]})
    strata, _ = assign(gold, schema, 0)
    report = score(gold, predictions, schema=schema, strata=strata)
    assert report.by_stratum["site=A"] == report.overall
    assert set(report.by_stratum_field_type["site=A"]) == set(report.by_field_type)
    for name, part in report.by_field_type.items():
        metrics = {k: v for k, v in part.metrics.items() if k != "majority_baseline"}
        assert report.by_stratum_field_type["site=A"][name].metrics == metrics
        assert report.by_stratum_field_type["site=A"][name].counts == part.counts


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(0, 2**32))
def test_a_stratum_slice_is_the_overall_slice_of_its_cases_alone(
    dataset: tuple[list[GoldField], list[Prediction]], seed: int
) -> None:
    gold, predictions = dataset
    schema = with_strata({"site": ["A", "B", "C"], "abstractor": ["r1", "r2"]})
    strata, labels = assign(gold, schema, seed)
    report = score(gold, predictions, schema=schema, strata=strata)
    # Checked on reading: each key's strata add up to the overall and type slices.
    assert Report.from_json(report.to_json()).to_json() == report.to_json()
    for key, names in schema.strata:
        for label in names:
            mine = {case for case, given_labels in labels.items() if given_labels[key] == label}
            part = report.by_stratum[f"{key}={label}"]
            own_gold = [row for row in gold if row.case_id in mine]
            if not own_gold:
                assert part.count("field_count") == 0
                continue
            alone = score(
                own_gold, [p for p in predictions if p.case_id in mine], schema=schema
            ).overall
            assert part.counts == alone.counts
            for name, metric in part.metrics.items():
                if name in alone.metrics:
                    assert metric == alone.metrics[name]  # clustered figures included
                else:  # a labelled field with no row in this stratum
                    assert metric.total_count == 0


def test_without_strata_the_report_is_byte_identical(tmp_path: Path) -> None:
    schema = json.loads((DATA / "demo_schema.json").read_text(encoding="utf-8"))
    plain = score_files(
        DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl", schema=DATA / "demo_schema.json"
    )
    stratified_schema = Schema.from_dict({**schema, "strata": {"site": ["A", "B"]}})
    cases = sorted({json.loads(line)["case_id"] for line in (DATA / "demo_gold.jsonl").open()})
    path = strata_file(
        tmp_path,
        [{"case_id": c, "strata": {"site": "AB"[int(c[-3:]) % 2]}} for c in cases],
    )
    stratified = score_files(
        DATA / "demo_gold.jsonl",
        DATA / "demo_predictions.jsonl",
        schema=stratified_schema,
        strata=path,
    )
    document = json.loads(stratified.to_json())
    assert set(document) - set(json.loads(plain.to_json())) == {
        "by_stratum",
        "by_stratum_field_type",
    }
    del document["by_stratum"], document["by_stratum_field_type"]
    without = Report.from_json(json.dumps(document))
    assert without.to_json() == plain.to_json()
    assert "by_stratum" not in plain.to_json()


def test_an_edited_stratum_slice_is_refused() -> None:
    gold = [GoldField(f"c{i}", "t.note", "text", "a") for i in range(4)]
    answers = [Prediction(f"c{i}", "t.note", "a" if i % 2 else "b") for i in range(4)]
    schema = with_strata({"site": ["A", "B"]})
    strata = CaseStrata.from_mapping(schema, {f"c{i}": {"site": "AB"[i // 2]} for i in range(4)})
    document = json.loads(score(gold, answers, schema=schema, strata=strata).to_json())
    assert document["by_stratum"]["site=A"]["field_count"] == 2
    assert document["by_stratum"]["site=A"]["exact_agreement"]["success_count"] == 1
    document["by_stratum"]["site=A"]["field_count"] = 3
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT


# --- merging: partial tallies, partial files, Dask ---------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(1, 5), st.integers(0, 2**32))
def test_partitions_by_case_merge_to_the_one_run_report(
    dataset: tuple[list[GoldField], list[Prediction]], parts: int, seed: int
) -> None:
    gold, predictions = dataset
    schema = with_strata({"site": ["A", "B", "C"]})
    strata, _ = assign(gold, schema, seed)
    whole = score(gold, predictions, schema=schema, strata=strata).to_json()
    rng = random.Random(seed)
    where = {case: rng.randrange(parts) for case in sorted({g.case_id for g in gold})}
    scorers = [CaseTrackingScorer(schema, strata=strata) for _ in range(parts)]
    for row in gold:
        scorers[where[row.case_id]].add_gold(row.case_id, row.field_id, row.field_type, row.value)
    for answer in predictions:
        scorers[where[answer.case_id]].add_prediction(
            answer.case_id, answer.field_id, answer.value, answer.is_supported
        )
    pieces = [scorer.partial() for scorer in scorers]
    rng.shuffle(pieces)
    assert Report.from_tally(merge_all(pieces).tally()).to_json() == whole


def demo_strata(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the demo schema declaring site and abstractor, and a strata file by case number."""
    schema = json.loads((DATA / "demo_schema.json").read_text(encoding="utf-8"))
    schema["strata"] = {"site": ["A", "B", "C"], "abstractor": ["r1", "r2"]}
    schema["sampling"] = {"site": {"A": "0.5", "B": "0.25", "C": "1"}}
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    cases = sorted({json.loads(line)["case_id"] for line in (DATA / "demo_gold.jsonl").open()})
    lines = [
        {
            "case_id": c,
            "strata": {"site": "ABC"[int(c[-3:]) % 3], "abstractor": f"r{1 + int(c[-3:]) % 2}"},
        }
        for c in cases
    ]
    return schema_path, strata_file(tmp_path, lines)


def test_site_partial_files_merge_to_the_pooled_report(tmp_path: Path) -> None:
    schema, strata = demo_strata(tmp_path)
    gold = [json.loads(line) for line in (DATA / "demo_gold.jsonl").open()]
    answers = [json.loads(line) for line in (DATA / "demo_predictions.jsonl").open()]
    pooled = score_files(
        DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl", schema=schema, strata=strata
    ).without_magnitudes()
    texts = []
    for site in range(3):
        mine = {row["case_id"] for row in gold if int(row["case_id"][-3:]) % 3 == site}
        g = write_jsonl(tmp_path / f"g{site}.jsonl", [r for r in gold if r["case_id"] in mine])
        p = write_jsonl(tmp_path / f"p{site}.jsonl", [r for r in answers if r["case_id"] in mine])
        _, text = score_with_partial(g, p, schema=schema, strata=strata)
        assert '"strata"' in text and "demo-case" not in text
        texts.append(text)
    merged = merge_partials(texts[::-1])
    assert merged.by_stratum and merged.overall_weighted is not None
    assert merged.to_json() == pooled.to_json()


def test_the_dask_engine_is_byte_identical_with_strata(tmp_path: Path) -> None:
    pytest.importorskip("dask")
    from chartscore import score_dask

    schema, strata = demo_strata(tmp_path)
    lines = (DATA / "demo_gold.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    for part in range(3):
        (tmp_path / f"gold-{part}.jsonl").write_text("".join(lines[part::3]), encoding="utf-8")
    whole = score_files(
        DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl", schema=schema, strata=strata
    )
    for partitions in (1, 4):
        report = score_dask(
            str(tmp_path / "gold-*.jsonl"),
            [str(DATA / "demo_predictions.jsonl")],
            schema=schema,
            strata=strata,
            scheduler="synchronous",
            partitions=partitions,
        )
        assert report.by_stratum and report.overall_weighted is not None
        assert report.to_json() == whole.to_json()
    short = strata_file(
        tmp_path, [{"case_id": "demo-case-001", "strata": {"site": "A", "abstractor": "r1"}}]
    )
    with pytest.raises(ChartscoreError) as caught:
        score_dask(
            str(tmp_path / "gold-*.jsonl"),
            [str(DATA / "demo_predictions.jsonl")],
            schema=schema,
            strata=short,
            scheduler="synchronous",
            partitions=2,
        )
    assert str(caught.value) == "strata_case_missing (strata)"


# --- the command line: score, share ------------------------------------------------------------


def test_score_with_strata_on_the_command_line(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    schema, strata = demo_strata(tmp_path)
    inputs = [
        "--gold",
        str(DATA / "demo_gold.jsonl"),
        "--predictions",
        str(DATA / "demo_predictions.jsonl"),
    ]
    inputs += ["--schema", str(schema), "--strata", str(strata)]
    out, err = io.StringIO(), io.StringIO()
    assert main(["score", *inputs], stdout=out, stderr=err) == 0
    report = json.loads(out.getvalue())
    assert sorted(report["by_stratum"]) == [
        "abstractor=r1", "abstractor=r2", "site=A", "site=B", "site=C"
    ]  # fmt: skip
    assert "demo-case" not in out.getvalue() + err.getvalue()
    # share with strata: tests/test_disclosure_strata.py (the demo's strata, on the command line)


# --- gates and renderers -----------------------------------------------------------------------


def demo_report(tmp_path: Path) -> Report:
    schema, strata = demo_strata(tmp_path)
    return score_files(
        DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl", schema=schema, strata=strata
    )


def test_gates_read_a_stratum_slice_s_clustered_interval(tmp_path: Path) -> None:
    from chartscore.documents.gates import evaluate, parse_gates

    report = demo_report(tmp_path)
    part = report.by_stratum["site=C"].metric("normalized_agreement")
    typed = report.by_stratum_field_type["site=A"]["date"].metric("exact_agreement")
    assert part.clustered_interval is not None and typed.clustered_interval is not None
    gates = parse_gates(
        f"""
[[gate]]
slice = "stratum:site=C"
metric = "normalized_agreement"
min_lower = {part.clustered_interval[0]}

[[gate]]
slice = "stratum:site=A/type:date"
metric = "exact_agreement"
min_lower = {typed.clustered_interval[0] + 1e-9}
"""
    )
    results = evaluate(report, gates)
    assert [result.passed for result in results.results] == [True, False]
    assert [result.observed for result in results.results] == [
        part.clustered_interval[0],
        typed.clustered_interval[0],
    ]
    missing = parse_gates(
        '[[gate]]\nslice = "stratum:site=Z"\nmetric = "exact_agreement"\nmin_lower = 0.1\n'
    )
    with pytest.raises(ChartscoreError) as caught:
        evaluate(report, missing)
    assert caught.value.code is ErrorCode.GATE_SLICE_MISSING


@pytest.mark.parametrize(
    "where",
    ["stratum:site", "stratum:=A", "stratum:site=A/date", "stratum:site=A/type:x", "stratum:"],
)
def test_a_malformed_stratum_slice_is_an_invalid_gate(where: str) -> None:
    from chartscore.documents.gates import parse_gates

    with pytest.raises(ChartscoreError) as caught:
        parse_gates(f'[[gate]]\nslice = "{where}"\nmetric = "exact_agreement"\nmin_lower = 0.1\n')
    assert caught.value.code is ErrorCode.INVALID_GATE


def test_renderers_show_the_stratum_slices(tmp_path: Path) -> None:
    from chartscore.render import render

    report = demo_report(tmp_path)
    table = render(report, "table")
    rows = [line for line in table.splitlines() if line.startswith("site=A ")]
    counts = report.by_stratum["site=A"].metric("exact_agreement")
    assert rows and f"{counts.success_count}/{counts.total_count}" in rows[0]
    csv_text = render(report, "csv")
    assert "\nstratum,site=A/type:date,exact_agreement," in csv_text
    assert "site\\=B" in render(report, "markdown")  # punctuation escaped
    assert "site=B" in render(report, "html")
    assert "demo-case" not in table + csv_text


# --- comparisons -------------------------------------------------------------------------------


@settings(max_examples=examples(30), deadline=None)
@given(datasets(), st.integers(0, 2**32))
def test_a_paired_stratum_slice_is_the_comparison_of_its_cases_alone(
    dataset: tuple[list[GoldField], list[Prediction]], seed: int
) -> None:
    from chartscore import compare
    from chartscore.documents.comparison import Comparison

    gold, baseline = dataset
    rng = random.Random(seed)
    candidate = [p for p in baseline if rng.random() < 0.7]
    schema = with_strata({"site": ["A", "B"]})
    strata, labels = assign(gold, schema, seed)
    comparison = compare(gold, baseline, candidate, schema=schema, strata=strata)
    assert Comparison.from_json(comparison.to_json()).to_json() == comparison.to_json()
    for label in ("A", "B"):
        mine = {case for case, given_labels in labels.items() if given_labels["site"] == label}
        part = comparison.by_stratum[f"site={label}"]
        own_gold = [row for row in gold if row.case_id in mine]
        if not own_gold:
            assert part.counts["field_count"] == 0
            continue
        alone = compare(
            own_gold,
            [p for p in baseline if p.case_id in mine],
            [p for p in candidate if p.case_id in mine],
            schema=schema,
        ).overall
        assert part.to_dict() == alone.to_dict()


def test_compare_with_strata_on_the_command_line_and_its_gates(tmp_path: Path) -> None:
    schema, strata = demo_strata(tmp_path)
    lines = (DATA / "demo_predictions.jsonl").read_text(encoding="utf-8").splitlines(True)
    candidate = tmp_path / "candidate.jsonl"
    candidate.write_text("".join(line for i, line in enumerate(lines) if i % 3), encoding="utf-8")
    gates = tmp_path / "gates.toml"
    gates.write_text(
        '[[gate]]\nslice = "stratum:site=A"\nmetric = "normalized_agreement"\n'
        "min_difference_lower = -0.5\n",
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    args = ["compare", "--gold", str(DATA / "demo_gold.jsonl")]
    args += ["--baseline", str(DATA / "demo_predictions.jsonl"), "--candidate", str(candidate)]
    args += ["--schema", str(schema), "--strata", str(strata), "--gates", str(gates)]
    assert main(args, stdout=out, stderr=err) == 0
    document = json.loads(out.getvalue())
    assert sorted(document["by_stratum"]) == [
        "abstractor=r1", "abstractor=r2", "site=A", "site=B", "site=C"
    ]  # fmt: skip
    assert "stratum:site=A" in err.getvalue() and "demo-case" not in out.getvalue() + err.getvalue()


# --- the weighted overall estimate (a declared sampling design) -------------------------------


def sampled(fractions: dict[str, str]) -> Schema:
    return Schema.from_dict(
        {**SCHEMA.to_dict(), "strata": {"site": list(fractions)}, "sampling": {"site": fractions}}
    )


@pytest.mark.parametrize(
    "sampling",
    [
        {"site": {"A": "0.5"}},  # a label without its fraction
        {"site": {"A": "0.5", "B": "0"}},
        {"site": {"A": "0.5", "B": "1.5"}},
        {"site": {"A": "0.5", "B": CANARY}},
        {"ward": {"A": "0.5", "B": "1"}},  # not a declared key
        {"site": {"A": "0.5", "B": "1"}, "abstractor": {"r1": "1"}},
        [],
    ],
)
def test_a_bad_sampling_design_is_refused(sampling: object) -> None:
    strata = {"site": ["A", "B"], "abstractor": ["r1"]}
    with pytest.raises(ChartscoreError) as caught:
        Schema.from_dict({"fields": {}, "strata": strata, "sampling": sampling})
    assert caught.value.code is ErrorCode.SCHEMA_INVALID_SAMPLING
    assert CANARY.lower() not in str(caught.value).lower()


def test_the_weighted_estimate_by_hand() -> None:
    # Site A (fraction 1/2): c1 2 of 2, c2 0 of 2; site B (fraction 1, a census): c3 1 of 2.
    gold = [GoldField(c, f, "text", "a") for c in ("c1", "c2", "c3") for f in ("t.a", "t.b")]
    answers = [Prediction("c1", "t.a", "a"), Prediction("c1", "t.b", "a")]
    answers += [Prediction("c2", "t.a", "x"), Prediction("c2", "t.b", "x")]
    answers += [Prediction("c3", "t.a", "a"), Prediction("c3", "t.b", "x")]
    schema = Schema.from_dict(
        {"fields": {}, "strata": {"site": ["A", "B"]}, "sampling": {"site": {"A": "0.5", "B": 1}}}
    )
    strata = CaseStrata.from_mapping(
        schema, {"c1": {"site": "A"}, "c2": {"site": "A"}, "c3": {"site": "B"}}
    )
    report = score(gold, answers, schema=schema, strata=strata)
    figure = report.overall_weighted.metrics["exact_agreement"]  # type: ignore[union-attr]
    # p = (2 * 2 + 1 * 1) / (2 * 4 + 1 * 2) = 1/2. Site A: z = (1, -1), spread 2, times
    # w^2 (1 - f) n/(n-1) = 4 * 0.5 * 2 = 4: V = 8 / 10**2; site B is a census (adds 0).
    # Row-wise: p (1 - p) / M = 0.25 / 6; design effect 0.08 / (0.25 / 6) = 1.92 -> 2.0.
    # The failures sit in 2 charts (fewer than 10): at least the worst case, 6 * (4 * 0.5 * 8)
    # / 10**2 = 0.96 (site B, a census, adds nothing): the estimate, 1.92, stays.
    assert figure.estimate == 0.5 and figure.design_effect == 2.0
    # Student's t over sum n_h - H = 3 - 2 = 1 degree of freedom: three charts in two strata.
    z = float(student.ppf(0.975, 1))
    n = 6 / 2.0
    centre = (0.5 + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (0.25 / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    assert figure.interval == pytest.approx((centre - half, centre + half), abs=1e-15)
    assert Report.from_json(report.to_json()).to_json() == report.to_json()
    document = json.loads(report.to_json())
    document["overall_weighted"]["metrics"]["exact_agreement"]["estimate"] = 0.51
    with pytest.raises(ChartscoreError):
        Report.from_json(json.dumps(document))


@settings(max_examples=examples(30), deadline=None)
@given(datasets(), st.sampled_from(["1", "0.5", "0.01"]), st.integers(0, 2**32))
def test_equal_fractions_weigh_nothing(
    dataset: tuple[list[GoldField], list[Prediction]], fraction: str, seed: int
) -> None:
    gold, predictions = dataset
    schema = sampled({"A": fraction, "B": fraction})
    strata, _ = assign(gold, schema, seed)
    report = score(gold, predictions, schema=schema, strata=strata)
    assert report.overall_weighted is not None
    for name, figure in report.overall_weighted.metrics.items():
        plain = report.overall.metric(name)
        assert figure.estimate == plain.rate
        if fraction == "1":  # a census: no sampling variance, so the plain Wilson interval
            assert figure.design_effect in (None, 1.0)
            if plain.interval is not None:
                assert figure.interval == pytest.approx(plain.interval, abs=1e-12)
    assert Report.from_json(report.to_json()).to_json() == report.to_json()


def test_the_schema_digest_covers_declared_strata_only_when_declared() -> None:
    from chartscore.records.gold_identity import LedgerKey
    from chartscore.records.schema_digest import schema_digest

    key = LedgerKey(bytes(range(32)))
    plain = schema_digest(SCHEMA, key)
    assert plain == schema_digest(Schema.from_dict(SCHEMA.to_dict()), key)
    one = schema_digest(with_strata({"site": ["A", "B"]}), key)
    other = schema_digest(with_strata({"site": ["A", "C"]}), key)
    assert len({plain, one, other, schema_digest(sampled({"A": "0.5", "B": "1"}), key)}) == 4
