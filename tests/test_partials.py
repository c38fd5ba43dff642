"""Partial tallies of several sites (docs/partials.md): value-free, strict, and they merge into
exactly the report of the pooled data."""

from __future__ import annotations

import io
import json
import random
import stat
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, FieldType, GoldField, Prediction, Schema, score
from chartscore.cli import main
from chartscore.scoring.cases import CaseTrackingScorer, case_counts, kappa_smallest_margins
from chartscore.scoring.partial_document import read_partial
from chartscore.workflows.partials import merge_partials, merged_partial, score_with_partial

from helpers import SCHEMA, chain_dict, datasets, digest, examples, write_jsonl


def gold_rows(gold: list[GoldField]) -> list[dict[str, object]]:
    return [
        {
            "case_id": g.case_id,
            "field_id": g.field_id,
            "field_type": g.field_type.value,
            "value": g.value,
        }
        for g in gold
    ]


def prediction_rows(predictions: list[Prediction]) -> list[dict[str, object]]:
    return [{"case_id": p.case_id, "field_id": p.field_id, "value": p.value} for p in predictions]


def site_partials(
    tmp: Path, gold: list[GoldField], predictions: list[Prediction], where: dict[str, int]
) -> list[str]:
    texts = []
    for site in sorted(set(where.values())):
        site_gold = [g for g in gold if where[g.case_id] == site]
        site_predictions = [p for p in predictions if where[p.case_id] == site]
        g = write_jsonl(tmp / f"gold-{site}.jsonl", gold_rows(site_gold))
        p = write_jsonl(tmp / f"pred-{site}.jsonl", prediction_rows(site_predictions))
        report, text = score_with_partial(g, p, schema=SCHEMA)
        # A site's own report is the site's data scored alone.
        assert report.to_json() == score(site_gold, site_predictions, schema=SCHEMA).to_json()
        texts.append(text)
    return texts


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(1, 4), st.integers(0, 2**32))
def test_merged_site_partials_equal_pooled_scoring(
    tmp_path_factory: pytest.TempPathFactory, dataset: Any, sites: int, seed: int
) -> None:
    gold, predictions = dataset
    rng = random.Random(seed)
    where = {case: rng.randrange(sites) for case in sorted({g.case_id for g in gold})}
    texts = site_partials(tmp_path_factory.mktemp("sites"), gold, predictions, where)
    rng.shuffle(texts)
    pooled = score(gold, predictions, schema=SCHEMA)
    # A partial holds no values: the merge has every figure but error magnitudes (a chance
    # level needs gold's median) and the interval alpha of numbers and dates.
    assert merge_partials(texts).to_json() == pooled.without_magnitudes().to_json()


CHOICES = {"fields": {"hx.smoking": {"type": "categorical", "choices": ["never", "former"]}}}


def cohort(marker: str = "c") -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """One site's smoking status: its own free-text answers, and declared uncertainties."""
    gold = [
        {"case_id": f"{marker}-{i}", "field_id": "hx.smoking", "field_type": "categorical",
         "value": "never" if i % 3 else "former"}
        for i in range(12)
    ]  # fmt: skip
    answers: list[dict[str, object]] = [
        {"case_id": f"{marker}-{i}", "field_id": "hx.smoking",
         "value": "former" if i % 4 == 0 else ("never" if i % 5 else f"{marker} smoked")}
        for i in range(12)
    ]  # fmt: skip
    for i, answer in enumerate(answers):
        if i % 3:  # two thirds declare an uncertainty; equal numbers are written differently
            chain = chain_dict("hx.smoking", digest(f"fact-{i}"))
            chain["uncertainty"] = [0.5, Decimal("0.50"), Decimal(i) / 20][i % 3]
            answer["evidence_chain"] = chain
    return gold, answers


def test_a_partial_holds_no_value_or_case_id_and_is_mode_0600(tmp_path: Path) -> None:
    marker = "ZQMARKERXX"
    gold, answers = cohort(marker)
    g, p = write_jsonl(tmp_path / "g.jsonl", gold), write_jsonl(tmp_path / "p.jsonl", answers)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(CHOICES), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    partial = tmp_path / "site.partial"
    status = main(
        ["score", "--gold", str(g), "--predictions", str(p), "--schema", str(schema),
         "--partial-out", str(partial)],
        stdout=out, stderr=err,
    )  # fmt: skip
    assert status == 0 and err.getvalue() == ""
    text = partial.read_text(encoding="utf-8")
    assert marker.lower() not in text.lower() and "smoked" not in text
    assert "never" in text  # the schema's declared labels travel with it, as in the schema file
    assert stat.S_IMODE(partial.stat().st_mode) == 0o600
    document = json.loads(text)
    assert document["format"] == "chartscore.partial" and document["format_version"] == 4
    # The free-text answer is counted with every undeclared answer, at position 2.
    pairs = document["fields"]["hx.smoking"]["kappa_pairs"]
    assert any(pairs[i + 1] == 2 for i in range(0, len(pairs), 3))
    # And the report printed beside it is the report of the site's data.
    assert json.loads(out.getvalue())["format"] == "chartscore.report"


def three_sites(tmp_path: Path) -> tuple[list[str], str]:
    """Three sites' partials (``score --partial-out``): the pooled files' arguments, the glob."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(CHOICES), encoding="utf-8")
    pooled_gold: list[dict[str, object]] = []
    pooled_answers: list[dict[str, object]] = []
    for site in ("a", "b", "c"):
        gold, answers = cohort(site)
        pooled_gold += gold
        pooled_answers += answers
        g = write_jsonl(tmp_path / f"g-{site}.jsonl", gold)
        p = write_jsonl(tmp_path / f"p-{site}.jsonl", answers)
        args = ["score", "--gold", str(g), "--predictions", str(p), "--schema", str(schema)]
        args += ["--partial-out", str(tmp_path / f"site-{site}.partial")]
        assert main(args, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    g = write_jsonl(tmp_path / "g.jsonl", pooled_gold)
    p = write_jsonl(tmp_path / "p.jsonl", pooled_answers)
    pooled = ["--gold", str(g), "--predictions", str(p), "--schema", str(schema)]
    return pooled, str(tmp_path / "site-*.partial")


def test_merge_on_the_command_line_equals_the_pooled_report(tmp_path: Path) -> None:
    files, pattern = three_sites(tmp_path)
    pooled, merged = io.StringIO(), io.StringIO()
    assert main(["score", *files], stdout=pooled, stderr=io.StringIO()) == 0
    assert main(["merge", "--partials", pattern], stdout=merged, stderr=io.StringIO()) == 0
    assert merged.getvalue() == pooled.getvalue()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--partial-out", "-"], "--partial-out must name a file"),
        (["--engine", "dask", "--partial-out", "x.partial"], "--partial-out applies to"),
    ],
)
def test_partial_out_usage(tmp_path: Path, args: list[str], problem: str) -> None:
    gold, answers = cohort()
    g, p = write_jsonl(tmp_path / "g.jsonl", gold), write_jsonl(tmp_path / "p.jsonl", answers)
    err = io.StringIO()
    status = main(["score", "--gold", str(g), "--predictions", str(p), *args], stderr=err)
    assert status == 2 and problem in err.getvalue()


@pytest.mark.parametrize("command", ["score", "merge"])
@pytest.mark.parametrize("spelling", ["same", "dotted"])
def test_partial_out_on_the_out_file_is_duplicate_output(
    tmp_path: Path, command: str, spelling: str
) -> None:
    # The documented code for one file named by two outputs, as for --junit: not usage.
    gold, answers = cohort()
    g, p = write_jsonl(tmp_path / "g.jsonl", gold), write_jsonl(tmp_path / "p.jsonl", answers)
    (tmp_path / "schema.json").write_text(json.dumps(CHOICES), encoding="utf-8")
    (tmp_path / "site.partial").write_text(one_partial(tmp_path), encoding="utf-8")
    out = tmp_path / "out.json"
    partial_out = str(out) if spelling == "same" else f"{tmp_path}/./out.json"
    if command == "score":
        args = ["score", "--gold", str(g), "--predictions", str(p)]
        args += ["--schema", str(tmp_path / "schema.json")]
    else:
        args = ["merge", "--partials", str(tmp_path / "site.partial")]
    err = io.StringIO()
    status = main([*args, "--out", str(out), "--partial-out", partial_out], stderr=err)
    assert (status, err.getvalue()) == (
        1,
        "chartscore: error: duplicate_output (output): two outputs name the same file; "
        "give each output its own path\n",
    )
    assert not out.exists()


def test_a_categorical_field_without_choices_refuses_a_partial(tmp_path: Path) -> None:
    gold, answers = cohort()
    g, p = write_jsonl(tmp_path / "g.jsonl", gold), write_jsonl(tmp_path / "p.jsonl", answers)
    with pytest.raises(ChartscoreError) as caught:
        score_with_partial(g, p)
    assert caught.value.code is ErrorCode.PARTIAL_NEEDS_DECLARED_LABELS
    assert caught.value.field_id == "hx.smoking"
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def one_partial(tmp_path: Path, schema: dict[str, object] = CHOICES, **options: Any) -> str:
    gold, answers = cohort()
    g, p = write_jsonl(tmp_path / "g.jsonl", gold), write_jsonl(tmp_path / "p.jsonl", answers)
    return score_with_partial(g, p, schema=Schema.from_dict(schema), **options)[1]


def test_partials_of_other_schemas_or_options_are_not_added(tmp_path: Path) -> None:
    first = one_partial(tmp_path)
    other_schema = {
        "fields": {"hx.smoking": {"type": "categorical", "choices": ["never", "former", "x"]}}
    }
    for second in (
        one_partial(tmp_path, other_schema),
        one_partial(tmp_path, extra_predictions="ignore"),
    ):
        with pytest.raises(ChartscoreError) as caught:
            merge_partials([first, second])
        assert caught.value.code is ErrorCode.PARTIALS_DIFFER


def edited(text: str, change: Any) -> str:
    document = json.loads(text)
    change(document)
    return json.dumps(document)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["fields"]["hx.smoking"].update(answerable=-1),
        lambda d: d["fields"]["hx.smoking"].update(answerable="12"),
        lambda d: d["fields"]["hx.smoking"].update(answerable=1),  # labels disagree
        lambda d: d["fields"]["hx.smoking"].update(outcomes=[["3", 1], ["3", 1]]),  # repeated
        lambda d: d["fields"]["hx.smoking"].update(outcomes=[["f", 1], ["3", 1]]),  # decreasing
        lambda d: d["fields"]["hx.smoking"].update(outcomes=[["03", 1]]),  # not canonical
        lambda d: d["fields"]["hx.smoking"].update(outcomes=[["F", 1]]),  # not lowercase
        lambda d: d["fields"]["hx.smoking"].update(outcomes=[[3, 1]]),  # format 1's integer
        lambda d: d["fields"]["hx.smoking"].update(outcomes=[["3", 100]]),  # more than the rows
        lambda d: d["fields"]["hx.smoking"].update(kappa_pairs=[9, 0, 1]),  # no such label
        lambda d: d["fields"]["hx.smoking"].pop("kappa_pairs"),
        lambda d: d["fields"]["hx.smoking"].update(field_type="boolean"),
        lambda d: d.update(fields={"Not An Id": {}}),
        lambda d: d.update(extra="x"),
        lambda d: d.update(extra_predictions="maybe"),
        lambda d: d["clusters"]["overall"].update(exact_agreement=[1, 2]),
        lambda d: d["cases"].update(patterns=[[format(1 << 40, "x"), 1]]),  # past the groups
        lambda d: d.update(schema={"fields": {"hx.smoking": {"type": "nope"}}}),
    ],
)
def test_a_malformed_partial_is_refused(tmp_path: Path, change: Any) -> None:
    text = one_partial(tmp_path)
    assert merge_partials([text]).to_json()  # the file as written reads
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([edited(text, change)])
    assert caught.value.code is ErrorCode.INVALID_PARTIAL
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_another_format_is_not_a_partial(tmp_path: Path) -> None:
    text = one_partial(tmp_path)
    for change in (lambda d: d.update(format_version=5), lambda d: d.update(format="x")):
        with pytest.raises(ChartscoreError) as caught:
            merge_partials([edited(text, change)])
        assert caught.value.code is ErrorCode.UNKNOWN_REPORT_FORMAT


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(1, 4), st.integers(0, 2**32))
def test_merged_partials_give_disclosure_control_the_pooled_inputs(
    tmp_path_factory: pytest.TempPathFactory, dataset: Any, sites: int, seed: int
) -> None:
    # share suppresses from the report, the distinct cases behind every number and kappa's
    # margins: a merge of sites' partials must hand it exactly what pooled scoring does.
    gold, predictions = dataset
    rng = random.Random(seed)
    where = {case: rng.randrange(sites) for case in sorted({g.case_id for g in gold})}
    texts = site_partials(tmp_path_factory.mktemp("sites"), gold, predictions, where)
    merged, _ = merged_partial([read_partial(text) for text in texts])
    scorer = CaseTrackingScorer(SCHEMA)
    for g in gold:
        scorer.add_gold(g.case_id, g.field_id, g.field_type, g.value)
    scorer.close_gold()
    for p in predictions:
        scorer.add_prediction(p.case_id, p.field_id, p.value, p.is_supported)
    pooled = scorer.partial()
    assert case_counts(merged, merged.tally()) == case_counts(pooled, pooled.tally())
    assert kappa_smallest_margins(merged) == kappa_smallest_margins(pooled)


def test_share_partials_on_the_command_line_suppresses_the_pooled_counts(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    files, pattern = three_sites(tmp_path)
    pooled, merged, said = io.StringIO(), io.StringIO(), io.StringIO()
    assert main(["share", *files, "--min-cell", "20"], stdout=pooled, stderr=io.StringIO()) == 0
    args = ["share", "--partials", pattern, "--min-cell", "20"]
    assert main(args, stdout=merged, stderr=said) == 0
    assert merged.getvalue() == pooled.getvalue()
    document = json.loads(merged.getvalue())
    assert document["format"] == "chartscore.shared_report"
    assert document["disclosure"]["suppressed_count"] > 0  # min cell 20 over 36 rows
    first, survival, complement, differencing = said.getvalue().splitlines()
    assert "(min cell 20): " in first and first.endswith("; the audit passed")
    assert "complementary (inside only)" in first
    assert survival.startswith("chartscore: rates shown ")
    assert complement.startswith("chartscore: complementary cells: ")
    assert complement.endswith("(inside only)")
    assert "is not covered" in differencing


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--gold", "g.jsonl"], "--partials cannot be combined with --gold"),
        (["--schema", "s.json"], "--partials cannot be combined with --schema"),
        (["--jobs", "1"], "--partials cannot be combined with --jobs"),
        (["--ledger", "l.jsonl"], "--partials cannot be combined with --ledger"),
        (["--min-cell", "x"], "--min-cell must be a whole number"),
    ],
)
def test_share_partials_usage(extra: list[str], problem: str) -> None:
    err = io.StringIO()
    assert main(["share", "--partials", "*.partial", *extra], stderr=err) == 2
    assert problem in err.getvalue()


def test_share_needs_files_or_partials() -> None:
    err = io.StringIO()
    assert main(["share", "--gold", "g.jsonl"], stderr=err) == 2
    assert "share needs --gold and --predictions, or --partials" in err.getvalue()


def test_kappa_margins_see_undeclared_answers_as_one_category(tmp_path: Path) -> None:
    # Each site has its own free-text answer: pooled, three undeclared categories of one or
    # two rows; kappa (and so its margin rule) sees them as one category either way.
    schema = Schema.from_dict(CHOICES)
    texts, scorer = [], CaseTrackingScorer(schema)
    for site in ("a", "b", "c"):
        gold, answers = cohort(site)
        g = write_jsonl(tmp_path / f"g-{site}.jsonl", gold)
        p = write_jsonl(tmp_path / f"p-{site}.jsonl", answers)
        texts.append(score_with_partial(g, p, schema=schema)[1])
        for row in gold:
            scorer.add_gold(str(row["case_id"]), "hx.smoking", FieldType.CATEGORICAL, row["value"])
    scorer.close_gold()
    for site in ("a", "b", "c"):
        for answer in cohort(site)[1]:
            scorer.add_prediction(str(answer["case_id"]), "hx.smoking", answer["value"], False)
    merged, _ = merged_partial([read_partial(text) for text in texts])
    pooled = scorer.partial()
    # Per site: gold former 4, never 8; answers former 3, never 7, its own free text 2. Pooled:
    # 12, 24; 9, 21 and 6 undeclared (three categories of 2 if each had its own).
    assert kappa_smallest_margins(pooled) == {"hx.smoking": 6}
    assert kappa_smallest_margins(merged) == kappa_smallest_margins(pooled)


@pytest.mark.parametrize("text", ["", "{", "not a partial", b"\xff", "[1]"])
def test_partial_text_that_is_not_json_is_invalid_partial_from_the_library(
    tmp_path: Path, text: str | bytes
) -> None:
    from chartscore.workflows.partials import merged_partial_text
    from chartscore.workflows.share import share_partials

    good = one_partial(tmp_path)
    for merge in (merge_partials, merged_partial_text, share_partials):
        with pytest.raises(ChartscoreError) as caught:
            merge([good, text])  # type: ignore[operator]
        assert caught.value.code is ErrorCode.INVALID_PARTIAL, merge
        assert str(caught.value) == "invalid_partial (partial)"
        assert caught.value.__context__ is None and caught.value.__cause__ is None
