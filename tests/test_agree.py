"""``chartscore agree``: end to end, privacy, determinism, the document read back strictly."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chartscore.cli import main
from chartscore.documents.agreement import Agreement
from chartscore.errors import ChartscoreError

from helpers import write_jsonl

SCHEMA = {
    "fields": {
        "smoking": {"type": "categorical", "choices": ["current", "former", "never"]},
        "acuity": {"type": "ordinal", "levels": [1, 2, 3, 4, 5]},
        "ef": {"type": "number"},
        "note": {"type": "text"},
        "dm": {"type": "boolean"},
    }
}
TYPES = {
    "smoking": "categorical",
    "acuity": "ordinal",
    "ef": "number",
    "note": "text",
    "dm": "boolean",
}
CANARY = "ZZCANARYzz"


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def truth(case: int) -> dict[str, object]:
    return {
        "smoking": ["current", "former", "never"][case % 3],
        "acuity": 1 + case % 5,
        "ef": 35 + 5 * (case % 6),
        "note": f"{CANARY} note {case}",
        "dm": case % 4 == 0,
    }


def answer(rater: int, case: int, field: str) -> object:
    value = truth(case)[field]
    if (case + rater) % 7 == 0:
        return None  # an abstention
    if (case * 3 + rater) % 5 == 0:  # a disagreement
        wrong = {"smoking": "never", "acuity": 3, "ef": 50, "note": f"{CANARY} other", "dm": True}
        return wrong[field]
    return value


def write_study(folder: Path, raters: int = 3, cases: int = 30) -> tuple[list[Path], Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for r in range(raters):
        rows = [
            {"case_id": f"{CANARY}-{c}", "field_id": f, "value": answer(r, c, f)}
            for c in range(cases)
            for f in TYPES
            if (c + 2 * r) % 11 != 0  # some entries missing
        ]
        files.append(write_jsonl(folder / f"abstractor-{r + 1}.jsonl", rows))
    gold = write_jsonl(
        folder / "gold.jsonl",
        [
            {"case_id": f"{CANARY}-{c}", "field_id": f, "field_type": t, "value": truth(c)[f]}
            for c in range(cases)
            for f, t in TYPES.items()
        ],
    )
    schema = folder / "schema.json"
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    return files, gold, schema


@pytest.fixture
def study(tmp_path: Path) -> tuple[list[Path], Path, Path]:
    return write_study(tmp_path / f"{CANARY}-folder")


def test_agree_end_to_end(study: tuple[list[Path], Path, Path]) -> None:
    files, gold, schema = study
    argv = ["agree", "--raters", *map(str, files), "--schema", str(schema), "--gold", str(gold)]
    status, out, err = run(argv)
    assert (status, err) == (0, "")
    document = json.loads(out)
    assert document["format"] == "chartscore.agreement"
    assert document["raters"] == ["abstractor-1", "abstractor-2", "abstractor-3"]
    smoking = document["by_field"]["smoking"]
    assert set(smoking) >= {"fleiss_kappa", "ac1", "alpha", "pairs", "raters"}
    assert smoking["alpha"]["metric"] == "nominal"
    assert document["by_field"]["acuity"]["alpha"]["metric"] == "ordinal"
    assert "ac2" in document["by_field"]["acuity"]
    assert document["by_field"]["ef"]["alpha"]["metric"] == "interval"
    assert (
        "alpha" not in document["by_field"]["note"]
        and "fleiss_kappa" not in document["by_field"]["note"]
    )
    # Abstentions and missing entries are counted apart and add up to the units.
    for part in document["by_field"].values():
        for counts in part["raters"].values():
            total = counts["answered_count"] + counts["abstained_count"] + counts["missing_count"]
            assert total == part["unit_count"]
            assert counts["abstained_count"] > 0 and counts["missing_count"] > 0
    # Observed agreement is over units both raters answered.
    pair = smoking["pairs"][0]
    assert pair["raters"] == ["abstractor-1", "abstractor-2"]
    assert pair["kappa"]["pairs"] == pair["agreement"]["total_count"]
    ceiling = document["gold"]["ceiling"]
    assert ceiling["metric"] == "normalized_agreement"
    assert ceiling["best"]["rater"] in document["raters"]
    assert ceiling["median"]["rater"] in document["raters"]
    rates = sorted(
        (r["normalized_agreement"]["success_count"] / r["normalized_agreement"]["total_count"])
        for r in document["gold"]["raters"].values()
    )
    best = ceiling["best"]["success_count"] / ceiling["best"]["total_count"]
    assert best == rates[-1]
    # Read back strictly, and written back byte for byte.
    assert Agreement.from_json(out).to_json() + "\n" == out
    # The same inputs in another order, named by hand: the same bytes.
    named = [f"{path.stem}={path}" for path in reversed(files)]
    again = run(["agree", "--rater", *named, "--schema", str(schema), "--gold", str(gold)])
    assert again == (0, out, "")


def test_agree_writes_out_and_never_leaks(study: tuple[list[Path], Path, Path]) -> None:
    files, gold, schema = study
    target = files[0].parent / "agreement.json"
    argv = ["agree", "--raters", *map(str, files), "--schema", str(schema), "--gold", str(gold)]
    status, out, err = run([*argv, "--out", str(target)])
    assert (status, out, err) == (0, "", "")
    text = target.read_text(encoding="utf-8")
    assert CANARY not in text and "folder" not in text and ".jsonl" not in text
    # Failures: a duplicate key, a field the schema does not declare, a bad stem, a bad file.
    bad = files[1].parent / "bad.jsonl"
    rows = [{"case_id": f"{CANARY}-1", "field_id": "smoking", "value": f"{CANARY}x"}] * 2
    write_jsonl(bad, rows)
    undeclared = write_jsonl(
        files[1].parent / "undeclared.jsonl",
        [{"case_id": f"{CANARY}-1", "field_id": "zz_canary_field", "value": CANARY}],
    )
    odd = files[1].parent / f"{CANARY} name!.jsonl"
    odd.write_text(files[0].read_text(encoding="utf-8"), encoding="utf-8")
    broken = files[1].parent / "broken.jsonl"
    broken.write_text(f'{{"case_id": "{CANARY}", "field_id": "smoking", "value": \n', "utf-8")
    for extra, code in (
        (bad, "duplicate_prediction_key (raters part 2 line 2)"),
        (undeclared, "undeclared_rater_field (raters part 2 line 1)"),
        (odd, "invalid_run_label (raters part 2)"),
        (broken, "raters part 2 line 1"),
    ):
        status, out, err = run(
            ["agree", "--raters", str(files[0]), str(extra), "--schema", str(schema)]
        )
        assert status == 1 and out == "" and code in err, err
        assert CANARY not in err and "zz_canary_field" not in err and "Traceback" not in err
        assert err.count("\n") == 1


def test_agree_usage() -> None:
    status, _, err = run(["agree", "--schema", "s.json"])
    assert status == 2 and "--raters or --rater is required" in err
    status, _, err = run(["agree", "--rater", "a", "--schema", "s.json"])
    assert status == 2 and "--rater takes NAME=FILE" in err


def test_agree_library_refuses_one_rater(study: tuple[list[Path], Path, Path]) -> None:
    from chartscore.workflows.agree import agree_files

    files, _, schema = study
    with pytest.raises(ChartscoreError) as caught:
        agree_files([("a", str(files[0]))], schema=str(schema))
    assert caught.value.code == "usage"
    with pytest.raises(ChartscoreError) as caught:
        agree_files([("a", str(files[0])), ("a", str(files[1]))], schema=str(schema))
    assert str(caught.value).startswith("duplicate_run_label (raters part 2")


def test_document_read_back_is_strict(study: tuple[list[Path], Path, Path]) -> None:
    files, gold, schema = study
    _, out, _ = run(
        ["agree", "--raters", *map(str, files), "--schema", str(schema), "--gold", str(gold)]
    )
    document = json.loads(out)
    assert Agreement.from_json(out).to_dict() == document

    def refused(change: object) -> None:
        edited = json.loads(out)
        change(edited)  # type: ignore[operator]
        with pytest.raises(ChartscoreError) as caught:
            Agreement.from_json(json.dumps(edited))
        assert caught.value.code in ("invalid_report", "unknown_report_format")

    pair = ("by_field", "smoking", "pairs", 0, "agreement")

    def at(node: object, path: tuple[object, ...]) -> dict:  # type: ignore[type-arg]
        for step in path:
            node = node[step]  # type: ignore[index]
        return node  # type: ignore[return-value]

    refused(lambda d: at(d, pair).update(success_count=at(d, pair)["success_count"] + 1))
    refused(lambda d: at(d, pair).update(interval=[0.0, 1.0]))
    refused(lambda d: d["raters"].reverse())
    refused(lambda d: d.update(format_version=2))
    refused(lambda d: d.update(extra=1))
    refused(lambda d: d["by_field"]["smoking"]["raters"]["abstractor-1"].update(missing_count=0))
    refused(lambda d: d["gold"]["ceiling"].update(best=d["gold"]["ceiling"]["median"]))
    refused(lambda d: d["by_field"]["note"].update(alpha=None))  # text fields have no alpha
    refused(lambda d: d["by_field"]["smoking"]["alpha"].update(metric="interval"))
    refused(lambda d: d["by_field"]["smoking"]["fleiss_kappa"].update(value=1.5))
    refused(lambda d: d["gold"]["raters"]["abstractor-1"]["exact_agreement"].update(total_count=1))
