"""Every identity a partial's counts must satisfy is checked on reading (docs/partials.md): an
edited partial is ``invalid_partial``, never accepted and never an internal error."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, GoldField, Prediction, Schema
from chartscore.cli import main
from chartscore.workflows.partials import merge_partials, score_with_partial
from test_partial_format import wide_study
from test_partials import gold_rows, prediction_rows
from test_strata import strata_file

from helpers import SCHEMA, chain_dict, datasets, digest, examples, write_jsonl

Document = dict[str, Any]

# Some fields of wide_study(12, 40, seed=5), which has every type (the multi-select field
# with declared choices).
KINDS = {
    "text": "f004.v",
    "categorical": "f009.v",
    "ordinal": "f005.v",
    "multi": "f003.v",
    "boolean": "f001.v",
}


def rich_partial(tmp: Path) -> str:
    """A partial of every kind of count: all field types, strata, extra predictions ignored
    (some cases have only those) and declared uncertainties."""
    schema_dict, gold, answers = wide_study(12, 40, seed=5)
    kinds = {field_id: entry["type"] for field_id, entry in schema_dict["fields"].items()}
    assert [kinds[field_id] for field_id in KINDS.values()] == list(KINDS)
    assert "choices" in schema_dict["fields"][KINDS["multi"]]
    schema_dict["strata"] = {"site": ["A", "B"], "ward": ["w1", "w2", "w3"]}
    rng = random.Random(5)
    for answer in answers:
        if rng.random() < 0.5:
            chain = chain_dict(answer["field_id"], digest(f"{answer['case_id']}"))
            chain["uncertainty"] = Decimal(rng.choice(["0.1", "0.5", "0.9"]))
            answer["evidence_chain"] = chain
    answers += [{"case_id": f"extra-{i}", "field_id": "f000.v", "value": "x"} for i in range(3)]
    answers += [{"case_id": "case-1", "field_id": "nothing.here", "value": "x"}]
    cases = sorted({row["case_id"] for row in gold})
    labels = [
        {"case_id": case, "strata": {"site": "AB"[i % 2], "ward": f"w{1 + i % 3}"}}
        for i, case in enumerate(cases)
    ]
    g = write_jsonl(tmp / "gold.jsonl", gold)
    p = write_jsonl(tmp / "answers.jsonl", answers)
    schema = Schema.from_dict(schema_dict)
    strata = strata_file(tmp, labels)
    return score_with_partial(g, p, schema=schema, strata=strata, extra_predictions="ignore")[1]


def scaled(listing: list[list[Any]], factor: int) -> list[list[Any]]:
    """``[[bits, count], ...]`` with every count multiplied."""
    return [[bits, count * factor] for bits, count in listing]


def moved(listing: list[list[Any]]) -> list[list[Any]]:
    """One row moved from the first bit set to the second (the total stays)."""
    (first, one), (second, two), *rest = listing
    return [[first, one - 1], [second, two + 1], *rest] if one > 1 else [[second, two + one], *rest]


def add(target: list[Any], index: int, amount: int) -> None:
    target[index] += amount


def times(target: list[Any], index: int, factor: int) -> None:
    target[index] *= factor


def each_sums(slices: dict[str, Any], change: Callable[[list[Any]], None]) -> None:
    """Change every metric's per-case sums ``[cases, sum_yy, sum_ym, sum_mm]`` of the slices."""
    for metrics in slices.values():
        for sums in metrics.values():
            change(sums)


def exact_agreement(document: Document) -> list[Any]:
    sums: list[Any] = document["clusters"]["overall"]["exact_agreement"]
    return sums


def field(document: Document, kind: str) -> Document:
    entry: Document = document["fields"][KINDS[kind]]
    return entry


def first_stratum(document: Document, field_id: str) -> list[list[Any]]:
    classes: list[list[Any]] = document["strata"]["classes"]["site=A"][field_id]
    return classes


ITEM_SHIFT = 18  # the first bit above the outcome mask without plugins (RowCoding.item_shift)
LABELS_AT = ITEM_SHIFT + 3 * 32 + 3 * 32  # a row class's count of labels


def last_class(document: Document, kind: str, added: int) -> None:
    """Add to the largest row class of a field in the first stratum (it stays the largest)."""
    classes = first_stratum(document, KINDS[kind])
    classes[-1][0] = format(int(classes[-1][0], 16) + added, "x")


def kappa_off_diagonal(pairs: list[int]) -> list[int]:
    """Kappa's ``[gold, answer, rows, ...]`` with one row of a diagonal cell of two rows or
    more moved to answer position 3 (or 2): the gold labels' rows stay."""
    out = list(pairs)
    for i in range(0, len(out), 3):
        if out[i] == out[i + 1] and out[i + 2] > 1:
            out[i + 2] -= 1
            out += [out[i], 3 if out[i] != 3 else 2, 1]
            merged: dict[tuple[int, int], int] = {}
            for k in range(0, len(out), 3):
                key = (out[k], out[k + 1])
                merged[key] = merged.get(key, 0) + out[k + 2]
            return [n for key in sorted(merged) for n in (*key, merged[key])]
    raise AssertionError("no diagonal cell of two rows")


EDITS: dict[str, Callable[[Document], None]] = {
    # the edit: every case count tripled
    "cases x3": lambda d: d["cases"].update(patterns=scaled(d["cases"]["patterns"], 3)),
    "one pattern's cases +1": lambda d: add(d["cases"]["patterns"][0], 1, 1),
    "cluster cases x3": lambda d: each_sums(d["clusters"], lambda sums: times(sums, 0, 3)),
    "cluster cases of one metric 0": lambda d: times(exact_agreement(d), 0, 0),
    "a cluster metric left out": lambda d: d["clusters"]["overall"].pop("exact_agreement"),
    "a cluster metric added": lambda d: d["clusters"]["text"].update(
        tolerance_agreement=d["clusters"]["text"]["exact_agreement"]
    ),
    "cluster sum_yy above sum_ym": lambda d: add(
        exact_agreement(d), 1, exact_agreement(d)[2] - exact_agreement(d)[1] + 1
    ),
    "cluster sum_mm x3": lambda d: each_sums(d["clusters"], lambda sums: times(sums, 3, 3)),
    "rows by class x3": lambda d: d["cases"]["by_field"].update(
        {k: scaled(v, 3) for k, v in d["cases"]["by_field"].items()}
    ),
    "rows moved between classes": lambda d: d["cases"]["by_field"].update(
        {KINDS["text"]: moved(d["cases"]["by_field"][KINDS["text"]])}
    ),
    "a field's rows left out": lambda d: d["cases"]["by_field"].pop(KINDS["text"]),
    "answerable +1, unanswerable -1": lambda d: field(d, "text").update(
        answerable=field(d, "text")["answerable"] + 1,
        unanswerable=field(d, "text")["unanswerable"] - 1,
    ),
    "outcome rows moved": lambda d: field(d, "text").update(
        outcomes=moved(field(d, "text")["outcomes"])
    ),
    "outcomes x3": lambda d: field(d, "boolean").update(
        outcomes=scaled(field(d, "boolean")["outcomes"], 3),
        answerable=field(d, "boolean")["answerable"] * 3,
        unanswerable=field(d, "boolean")["unanswerable"] * 3,
    ),
    "kappa pair moved off the diagonal": lambda d: field(d, "categorical").update(
        kappa_pairs=kappa_off_diagonal(field(d, "categorical")["kappa_pairs"])
    ),
    "ordinal pair moved off the diagonal": lambda d: field(d, "ordinal").update(
        kappa_pairs=kappa_off_diagonal(field(d, "ordinal")["kappa_pairs"])
    ),
    "kappa pairs x3": lambda d: field(d, "boolean").update(
        kappa_pairs=[
            n * 3 if i % 3 == 2 else n for i, n in enumerate(field(d, "boolean")["kappa_pairs"])
        ]
    ),
    "uncertainty rows x3": lambda d: field(d, "text").update(
        uncertainty=[[u, agreed, rows * 3] for u, agreed, rows in field(d, "text")["uncertainty"]]
    ),
    "item counts x3": lambda d: field(d, "multi").update(
        items=[n * 3 for n in field(d, "multi")["items"]]
    ),
    "matched items above answered": lambda d: field(d, "multi").update(
        items=[*field(d, "multi")["items"][:2], field(d, "multi")["items"][1] + 1]
    ),
    "items on a text field": lambda d: field(d, "text").update(items=[1, 1, 1]),
    "label rows +1": lambda d: field(d, "multi")["label_rows"].update(
        rows=field(d, "multi")["label_rows"]["rows"] + 1
    ),
    "label gold x3": lambda d: field(d, "multi").update(
        label_gold=[n * 3 if i % 2 else n for i, n in enumerate(field(d, "multi")["label_gold"])]
    ),
    "a group's metrics changed": lambda d: d["cases"]["groups"][0][1].clear(),
    "a pattern of no row": lambda d: d["cases"]["patterns"].insert(0, ["0", 1]),
    "ignored cases above ignored predictions": lambda d: d["cases"].update(ignored=5),
    "no ignored case": lambda d: d["cases"].update(ignored=0),
    "the ignored predictions left out": lambda d: d.pop("ignored_prediction_count"),
    "a stratum's rows +1": lambda d: add(first_stratum(d, KINDS["text"])[0], 1, 1),
    "a stratum's rows moved between classes": lambda d: d["strata"]["classes"]["site=A"].update(
        {KINDS["boolean"]: moved(first_stratum(d, KINDS["boolean"]))}
    ),
    "item counts in a stratum's text row": lambda d: last_class(d, "text", 1 << ITEM_SHIFT),
    "a stratum's label count changed": lambda d: last_class(d, "categorical", 1 << LABELS_AT),
    "a stratum's cluster cases x3": lambda d: each_sums(
        d["strata"]["clusters"]["site=A"], lambda sums: times(sums, 0, 3)
    ),
}


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> str:
    return rich_partial(tmp_path_factory.mktemp("rich"))


def test_the_rich_partial_as_written_is_read(rich: str) -> None:
    document = json.loads(rich)
    assert document["cases"]["ignored"] > 0 and document["ignored_prediction_count"] > 0
    assert all(field(document, kind) for kind in KINDS)
    assert merge_partials([rich]).ignored_prediction_count == 4


@pytest.mark.parametrize("edit", EDITS.values(), ids=list(EDITS))
def test_an_edited_partial_is_refused(rich: str, edit: Callable[[Document], None]) -> None:
    document = json.loads(rich)
    edit(document)
    assert document != json.loads(rich)
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([json.dumps(document)])
    assert caught.value.code is ErrorCode.INVALID_PARTIAL
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_merge_says_invalid_partial_for_sums_that_disagree(tmp_path: Path, rich: str) -> None:
    # It was internal_error (exit 70): the merged tally's own check raised.
    document = json.loads(rich)
    document["clusters"]["overall"].pop("exact_agreement")
    (tmp_path / "site.partial").write_text(json.dumps(document), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    status = main(["merge", "--partials", str(tmp_path / "*.partial")], stdout=out, stderr=err)
    assert status == 1 and out.getvalue() == ""
    assert err.getvalue().startswith("chartscore: error: invalid_partial")
    assert len(err.getvalue().splitlines()) == 1


def partial_of(
    tmp: Path, gold: list[GoldField], predictions: list[Prediction], schema: Schema = SCHEMA
) -> str:
    g = write_jsonl(tmp / "g.jsonl", gold_rows(gold))
    p = write_jsonl(tmp / "p.jsonl", prediction_rows(predictions))
    return score_with_partial(g, p, schema=schema)[1]


def refused(document: Document) -> bool:
    try:
        merge_partials([json.dumps(document)])
    except ChartscoreError as error:
        assert error.code is ErrorCode.INVALID_PARTIAL
        return True
    return False


@settings(max_examples=examples(40), deadline=None)
@given(datasets(), st.integers(2, 5), st.data())
def test_case_and_row_counts_scaled_are_refused(
    tmp_path_factory: pytest.TempPathFactory,
    dataset: tuple[list[GoldField], list[Prediction]],
    factor: int,
    data: st.DataObject,
) -> None:
    text = partial_of(tmp_path_factory.mktemp("scaled"), *dataset)
    assert not refused(json.loads(text))
    document = json.loads(text)
    document["cases"]["patterns"] = scaled(document["cases"]["patterns"], factor)
    assert refused(document)
    document = json.loads(text)
    field_id = data.draw(st.sampled_from(sorted(document["fields"])))
    entry = document["fields"][field_id]
    rows = document["cases"]["by_field"][field_id]
    document["cases"]["by_field"][field_id] = scaled(rows, factor)
    assert refused(document)
    entry["answerable"] *= factor
    entry["unanswerable"] *= factor
    entry["outcomes"] = scaled(entry["outcomes"], factor)
    assert refused(document)  # the cases and the clusters' sums still say otherwise
