"""The partial file's format (docs/partials.md): any schema's partial can be written, read back
and merged. Every bit set (an outcome mask, a row class, a case's pattern of row classes) is
hexadecimal text, so no number of fields or plugin labels can pass what JSON holds exactly."""

from __future__ import annotations

import io
import json
import random
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, Schema, score_files
from chartscore.cli import main
from chartscore.scoring.cases import CaseTrackingScorer
from chartscore.scoring.partial_document import partial_json, read_partial
from chartscore.workflows.partials import merge_partials, score_with_partial
from chartscore.workflows.score import feed_files
from test_strata import demo_strata

from helpers import assert_never_narrower, examples, pop_clustered, write_jsonl

DATA = Path(__file__).resolve().parents[1] / "src" / "chartscore" / "data"
SAVED = Path(__file__).resolve().parent / "data" / "partials"
JSON_EXACT = 2**53  # the canonical JSON writer refuses integers from here on


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def split_by_case(
    tmp: Path, gold: list[dict[str, Any]], answers: list[dict[str, Any]], sites: int, seed: int
) -> list[tuple[Path, Path]]:
    """Each site's gold and prediction files: every case at one site, chosen at random."""
    rng = random.Random(seed)
    where = {case: rng.randrange(sites) for case in sorted({row["case_id"] for row in gold})}
    files = []
    for site in sorted(set(where.values())):
        g = write_jsonl(tmp / f"g{site}.jsonl", [r for r in gold if where[r["case_id"]] == site])
        mine = [r for r in answers if where[r["case_id"]] == site]
        files.append((g, write_jsonl(tmp / f"p{site}.jsonl", mine)))
    return files


def widest_pattern(schema: Schema, gold: Path, answers: Path) -> int:
    """The largest per-case pattern of row classes (a bit set) of the data in two files."""
    scorer = CaseTrackingScorer(schema)
    feed_files(scorer, gold, answers)
    cases = scorer.partial().cases
    assert cases is not None
    return max(cases.patterns())


def assert_round_trip(text: str) -> None:
    """A partial read back and written again, with its ids, is the same bytes (a file ends in a
    newline)."""
    site = read_partial(text)
    again = partial_json(
        site.partial, site.schema, extra_predictions=site.extra_predictions, ids=site.ids
    )
    assert again == text.removesuffix("\n")


# --- the bundled demo -----------------------------------------------------------------------


def test_the_demo_partial_is_written_and_merges_to_the_pooled_report(tmp_path: Path) -> None:
    gold, answers = DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl"
    schema = DATA / "demo_schema.json"
    partial = tmp_path / "demo.partial"
    err = io.StringIO()
    args = ["score", "--gold", str(gold), "--predictions", str(answers), "--schema", str(schema)]
    assert main([*args, "--partial-out", str(partial)], stdout=io.StringIO(), stderr=err) == 0
    assert err.getvalue() == ""
    text = partial.read_text(encoding="utf-8")
    assert json.loads(text)["format_version"] == 4  # 4: the EVIDENCED bit (evidence_provided)
    assert_round_trip(text)
    merged = io.StringIO()
    assert main(["merge", "--partials", str(partial)], stdout=merged, stderr=err) == 0
    pooled = score_files(gold, answers, schema=Schema.from_dict(json.loads(schema.read_text())))
    assert merged.getvalue() == pooled.without_magnitudes().to_json() + "\n"


def test_demo_sites_share_as_one_site_holding_every_case(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    # share --partials equals share on the pooled data less what needs values: the demo's
    # number and date fields have error magnitudes, which a pooled share also publishes
    # (docs/partials.md). So the sites' partials are compared with one partial of all cases.
    gold, answers = rows_of(DATA / "demo_gold.jsonl"), rows_of(DATA / "demo_predictions.jsonl")
    schema = DATA / "demo_schema.json"
    parsed = Schema.from_dict(json.loads(schema.read_text(encoding="utf-8")))
    demo = (DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl")
    assert widest_pattern(parsed, *demo) >= JSON_EXACT  # so do the demo's own cases
    shared = []
    for sites in (1, 2):
        folder = tmp_path / f"{sites}-sites"
        folder.mkdir()
        for number, (g, p) in enumerate(split_by_case(folder, gold, answers, sites, seed=3)):
            args = ["score", "--gold", str(g), "--predictions", str(p), "--schema", str(schema)]
            args += ["--partial-out", str(folder / f"site-{number}.partial")]
            assert main(args, stdout=io.StringIO(), stderr=io.StringIO()) == 0
        out, err = io.StringIO(), io.StringIO()
        args = ["share", "--partials", str(folder / "site-*.partial")]
        assert main(args, stdout=out, stderr=err) == 0
        assert "the audit passed" in err.getvalue()
        shared.append(out.getvalue())
    assert json.loads(shared[0])["format"] == "chartscore.shared_report"
    assert shared[1] == shared[0]


# --- wide schemas ---------------------------------------------------------------------------

_KINDS: list[tuple[dict[str, Any], list[Any], list[Any]]] = [
    # (schema entry, gold values, answers beyond them: wrong types, undeclared choices)
    ({"type": "text"}, ["alpha", "beta gamma"], ["ALPHA", "delta", 3]),
    ({"type": "categorical", "choices": ["a", "b", "c"]}, ["a", "b", "c"], ["A ", "z", True]),
    ({"type": "number"}, [1, 2, 35], ["2", 36, "x"]),
    ({"type": "number", "tolerance": "5"}, [35, 50, 60], [38, 70, "x"]),
    ({"type": "boolean"}, [True, False], ["true", 1]),
    ({"type": "date"}, ["2023-04-05", "2023-04"], ["2023-04-06", "x"]),
    ({"type": "date", "tolerance_days": 3}, ["2023-04-05", "2022-12-31"], ["2023-04-07", "x"]),
    ({"type": "ordinal", "levels": [1, 2, 3, 4, 5]}, [1, 2, 3, 4, 5], ["3", 9]),
    ({"type": "multi", "choices": ["x", "y", "z"]}, [["x"], ["x", "y"], []], [["z"], "x", ["q"]]),
    ({"type": "multi"}, [["x"], ["y", "w"]], [["w"], ["x", "q"], 4]),
]


def wide_study(
    fields: int, cases: int, seed: int
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """A schema of ``fields`` fields of every kind, and random gold and answers for its cases."""
    rng = random.Random(seed)
    kinds = {f"f{i:03d}.v": rng.randrange(len(_KINDS)) for i in range(fields)}
    schema = {"fields": {field_id: _KINDS[kind][0] for field_id, kind in kinds.items()}}
    gold: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    for number in range(cases):
        case_id = f"case-{number}"
        for field_id, kind in kinds.items():
            entry, values, extras = _KINDS[kind]
            if rng.random() < 0.1:
                continue  # the case has no row of this field
            row = {"case_id": case_id, "field_id": field_id, "field_type": entry["type"]}
            gold.append({**row, "value": rng.choice([None, *values])})
            roll = rng.random()
            if roll < 0.1:
                continue  # missing
            answer = None if roll < 0.2 else rng.choice([*values, *extras])
            answers.append({"case_id": case_id, "field_id": field_id, "value": answer})
    if not gold:  # every row left out: one field of one case
        gold.append({"case_id": "case-0", "field_id": "f000.v", "field_type": "text", "value": "a"})
        schema = {"fields": {"f000.v": {"type": "text"}}}
    return schema, gold, answers


def merged_and_pooled(
    tmp: Path, study: tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]],
    sites: int, seed: int,
) -> tuple[str, str]:  # fmt: skip
    schema_dict, gold, answers = study
    schema = Schema.from_dict(schema_dict)
    texts = []
    for g, p in split_by_case(tmp, gold, answers, sites, seed):
        texts.append(score_with_partial(g, p, schema=schema)[1])
        assert_round_trip(texts[-1])
    random.Random(seed).shuffle(texts)
    g, p = write_jsonl(tmp / "gold.jsonl", gold), write_jsonl(tmp / "answers.jsonl", answers)
    pooled = score_files(g, p, schema=schema).without_magnitudes()
    return merge_partials(texts).to_json(), pooled.to_json()


def test_a_200_field_schema_merges_to_the_pooled_report(tmp_path: Path) -> None:
    study = wide_study(200, 40, seed=34)
    g = write_jsonl(tmp_path / "all-gold.jsonl", study[1])
    p = write_jsonl(tmp_path / "all-answers.jsonl", study[2])
    assert widest_pattern(Schema.from_dict(study[0]), g, p) >= JSON_EXACT
    merged, pooled = merged_and_pooled(tmp_path, study, sites=3, seed=34)
    assert merged == pooled


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(1, 200), st.integers(1, 30), st.integers(1, 4), st.integers(0, 2**32))
def test_random_schemas_of_up_to_200_fields_merge_exactly(
    tmp_path_factory: pytest.TempPathFactory, fields: int, cases: int, sites: int, seed: int
) -> None:
    study = wide_study(fields, cases, seed)
    merged, pooled = merged_and_pooled(tmp_path_factory.mktemp("wide"), study, sites, seed)
    assert merged == pooled


# --- plugin labels high in the outcome mask ---------------------------------------------------

PLUGINS = 8  # 16 labels each take 5 bits: masks reach bit 18 + 8 * 5 - 1 = 57

PLUGIN_SOURCE = """
from chartscore import MetricPlugin

LABELS = tuple(f"l{k}" for k in range(16))


def _judge(number):
    def judge(gold, answer):
        return LABELS[(len(gold) * 3 + len(answer) + number) % 16]

    return judge


wide0, wide1, wide2, wide3, wide4, wide5, wide6, wide7 = (
    MetricPlugin(f"wide{n}", "1.0", LABELS, _judge(n)) for n in range(8)
)
"""


def test_outcome_masks_past_2_to_the_53_are_written_and_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "chartscore_wide_plugins"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(PLUGIN_SOURCE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins = [f"{module}:wide{n}" for n in range(PLUGINS)]
    schema = Schema.from_dict({"fields": {"dx.text": {"type": "text", "plugins": plugins}}})
    words = ["heart failure", "hf", "dilated cardiomyopathy", "dcm", "x"]
    gold = [
        {"case_id": f"c{i}", "field_id": "dx.text", "field_type": "text", "value": words[i % 4]}
        for i in range(12)
    ]
    answers = [
        {"case_id": f"c{i}", "field_id": "dx.text", "value": words[i % 5]} for i in range(12)
    ]
    texts = []
    for g, p in split_by_case(tmp_path, gold, answers, 2, seed=1):
        text = score_with_partial(g, p, schema=schema)[1]
        masks = json.loads(text)["fields"]["dx.text"]["outcomes"]
        assert max(int(bits, 16) for bits, _ in masks) >= JSON_EXACT
        texts.append(text)
    g = write_jsonl(tmp_path / "gold.jsonl", gold)
    p = write_jsonl(tmp_path / "answers.jsonl", answers)
    pooled = score_files(g, p, schema=schema).without_magnitudes()
    assert merge_partials(texts).to_json() == pooled.to_json()


# --- format versions -----------------------------------------------------------------------


def test_a_format_1_partial_is_still_read(tmp_path: Path) -> None:
    # demo-site-0.v1.partial: the demo's cases numbered 0 mod 3, with the strata of
    # test_strata.demo_strata, written by the format 1 writer. Merged with the other two
    # sites' format 2 partials, it gives the pooled report, but for the clustered figures: a
    # format 1 partial did not record how many of its cases had a success and a failure, so
    # the merged report takes the worst-case design effect where the data would have chosen
    # (docs/partials.md): never a narrower interval.
    schema, strata = demo_strata(tmp_path)
    saved = (SAVED / "demo-site-0.v1.partial").read_text(encoding="utf-8")
    assert json.loads(saved)["format_version"] == 1
    gold, answers = rows_of(DATA / "demo_gold.jsonl"), rows_of(DATA / "demo_predictions.jsonl")
    texts = [saved]
    for site in (1, 2):
        mine = {row["case_id"] for row in gold if int(row["case_id"][-3:]) % 3 == site}
        g = write_jsonl(tmp_path / f"g{site}.jsonl", [r for r in gold if r["case_id"] in mine])
        p = write_jsonl(tmp_path / f"p{site}.jsonl", [r for r in answers if r["case_id"] in mine])
        texts.append(score_with_partial(g, p, schema=schema, strata=strata)[1])
    pooled = score_files(
        DATA / "demo_gold.jsonl", DATA / "demo_predictions.jsonl", schema=schema, strata=strata
    )
    merged = json.loads(merge_partials(texts).to_json())
    # Nor which unsupported answers carried evidence: the merge leaves evidence_provided out.
    whole = json.loads(pooled.without_magnitudes().without_metric("evidence_provided").to_json())
    merged_intervals, whole_intervals = pop_clustered(merged), pop_clustered(whole)
    assert_never_narrower(merged_intervals, whole_intervals)
    for document in (merged, whole):  # the design effects are where the two may differ
        for key in ("overall", "by_field_type", "by_stratum", "by_stratum_field_type"):
            drop_design_effects(document.get(key))
    drop_design_effects(merged.pop("overall_weighted"))
    drop_design_effects(whole.pop("overall_weighted"))
    assert merged == whole
    # Read back, a format 1 partial is written as format 4 (with a new id), its evidence unknown.
    site = read_partial(saved)
    again = partial_json(site.partial, site.schema, extra_predictions=site.extra_predictions)
    assert json.loads(again)["format_version"] == 4
    assert json.loads(again)["evidence_unknown"] is True
    assert merge_partials([again]).to_json() == merge_partials([saved]).to_json()


@pytest.mark.parametrize("version", [0, 5, "4", True])
def test_other_format_versions_are_refused(tmp_path: Path, version: object) -> None:
    study = wide_study(3, 4, seed=1)
    (g, p), *_ = split_by_case(tmp_path, study[1], study[2], 1, seed=1)
    document = json.loads(score_with_partial(g, p, schema=Schema.from_dict(study[0]))[1])
    document["format_version"] = version
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([json.dumps(document)])
    assert caught.value.code is ErrorCode.UNKNOWN_REPORT_FORMAT


def drop_design_effects(node: object) -> None:
    """Remove every ``design_effect`` and weighted ``interval`` below ``node`` (in place)."""
    if type(node) is dict:
        node.pop("design_effect", None)
        if "estimate" in node:
            node.pop("interval", None)  # a weighted estimate's interval follows its effect
        for value in node.values():
            drop_design_effects(value)
