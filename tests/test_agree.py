"""``chartscore agree``: end to end, privacy, determinism, the document read back strictly."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore.cli import main
from chartscore.documents.agreement import Agreement
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.errors import ChartscoreError
from chartscore.records.schema import Schema

from helpers import examples, write_jsonl

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
SCHEMA_OBJECT = Schema.from_dict(SCHEMA)


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
    for one in (["--raters", "a.jsonl"], ["--rater", "a=a.jsonl"]):
        status, _, err = run(["agree", *one, "--schema", "s.json"])
        assert status == 2 and "agree needs two to 64 raters" in err, err
    status, _, err = run(["agree", "--raters", "-", "b.jsonl", "--schema", "s.json"])
    assert status == 2 and "standard input as a rater needs a name: --rater NAME=-" in err, err
    for argv, problem in (
        (["--rater", "a=-", "--rater", "b=-"], "standard input can feed one rater"),
        (["--rater", "a=-", "--rater", "b=b.jsonl", "--gold", "g.jsonl"], "and none with --gold"),
        (["--rater", "a=-", "--rater", "b=b.jsonl", "--gold", "-"], "can feed one input only"),
    ):
        status, _, err = run(["agree", *argv, "--schema", "s.json"])
        assert status == 2 and problem in err, err
    status, _, err = run(["agree", "--rater", "a=-", "--rater", "b=b.jsonl", "--schema", "-"])
    assert status == 2 and "can feed one input only" in err, err


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


# --------------------------------------------------------------------------- rater labels
# A rater's label is a file's stem or a name given with --rater: it may name a person. A
# label outside the plain charset is refused by position, never echoed; a plain one is in the
# (inside) document, and every rendering names raters by position unless asked.

_MARKS = st.text(alphabet="QXZJKVW", min_size=8, max_size=12).map(lambda s: "ZQ" + s)
_BAD_CHARACTERS = st.sampled_from([" ", "/", "'", '"', "é", "\n", ":", "~", "@", "\x00", "<"])


@st.composite
def refused_labels(draw: st.DrawFn) -> tuple[str, str]:
    """(marker, label): a label with the marker that is not a plain label."""
    mark = draw(_MARKS)
    kind = draw(st.sampled_from(["character", "long", "leading"]))
    if kind == "long":
        return mark, mark + "x" * (65 - len(mark))
    if kind == "leading":
        return mark, draw(st.sampled_from(["-", ".", "_", "+"])) + mark
    head, tail = (
        draw(st.text(alphabet="abc", max_size=3)),
        draw(st.text(alphabet="xyz", max_size=3)),
    )
    return mark, f"{head}{mark}{draw(_BAD_CHARACTERS)}{tail}"


@settings(max_examples=examples(200), deadline=None)
@given(refused_labels())
def test_a_refused_rater_label_is_never_echoed(found: tuple[str, str]) -> None:
    from chartscore.workflows.agree import agree_files

    mark, label = found
    with pytest.raises(ChartscoreError) as caught:
        agree_files([("abstractor-1", "one.jsonl"), (label, "two.jsonl")], schema=SCHEMA_OBJECT)
    error = caught.value
    assert str(error) == "invalid_run_label (raters part 2)"
    assert error.__cause__ is None and error.__context__ is None
    shown = str(error) + repr(error) + repr(error.__dict__)
    assert mark not in shown and mark.lower() not in shown.lower()
    # --rater=VALUE: a label that starts with "-" is the option's value, not an option.
    status, out, err = run(
        ["agree", "--rater=a=x.jsonl", f"--rater={label}=y.jsonl", "--schema", "s"]
    )
    assert (status, out) == (1, "") and "invalid_run_label (raters part 2)" in err
    assert mark not in err and err.count("\n") == 1


def test_a_stem_that_is_not_a_plain_label_is_refused_by_position(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "abstractor-1.jsonl", [])
    for stem in (f"{CANARY} Smith", f"{CANARY}'s", "-" + CANARY, CANARY + "x" * 60):
        odd = write_jsonl(tmp_path / f"{stem}.jsonl", [])
        status, out, err = run(["agree", "--raters", str(first), str(odd), "--schema", "s.json"])
        assert (status, out) == (1, "") and "invalid_run_label (raters part 2)" in err
        assert CANARY not in err and "Smith" not in err


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(_MARKS, min_size=2, max_size=2, unique=True))
def test_renderings_name_raters_by_position_by_default(marks: list[str]) -> None:
    from chartscore.render import FORMATS, render
    from test_agree_gates import document as hand_built

    labels = sorted(f"{mark}-Smith" for mark in marks)
    saved = hand_built().to_dict()  # two raters "a" and "b", renamed to the markers
    text = json.dumps(saved).replace('"a"', f'"{labels[0]}"').replace('"b"', f'"{labels[1]}"')
    text = text.replace('"a~b"', f'"{labels[0]}~{labels[1]}"')
    document = Agreement.from_json(text)
    assert document.raters == (labels[0], labels[1])
    for fmt in FORMATS:
        out = render(document, fmt)
        assert not any(mark in out or mark.lower() in out.lower() for mark in marks), fmt
        assert "Smith" not in out and "rater-2" in out
        named = render(document, fmt, rater_labels=True)
        assert labels[0] in named or fmt == "summary"
    frame = document.to_pandas()
    assert not frame.astype(str).apply(lambda column: column.str.contains("Smith")).any().any()
    gates = parse_gates(
        f'[[gate]]\nslice = "field:smoking"\nmetric = "pair_kappa"\n'
        f'label = "{labels[0]}~{labels[1]}"\nmin_lower = 0.5\n'
        f'[[gate]]\nslice = "overall"\nmetric = "gold_exact_agreement"\n'
        f'label = "{labels[1]}"\nmin_lower = 0.5\n'
    )
    table = evaluate(document, gates).table()
    assert "Smith" not in table and not any(mark in table for mark in marks)


def test_by_position_keeps_every_figure_and_the_ceiling() -> None:
    from test_agree_gates import document as hand_built

    document = hand_built()
    positional = document.by_position()
    assert positional.raters == ("rater-1", "rater-2")
    assert positional.gold is not None and document.gold is not None
    assert positional.gold.ceiling()["best"] == {
        **document.gold.ceiling()["best"],
        "rater": "rater-1",
    }  # type: ignore[dict-item]
    renamed = document.to_json().replace('"a"', '"rater-1"').replace('"b"', '"rater-2"')
    assert positional.to_json() == renamed.replace('"a~b"', '"rater-1~rater-2"')
    # Ten raters or more: zero-padded, so that sorted order (and the ceiling's ties) holds.
    many = Agreement(tuple(f"r{i:02d}" for i in range(12)), 0.95, {}, ())
    assert many.by_position().raters == tuple(f"rater-{i:02d}" for i in range(1, 13))


def test_an_agreement_document_is_never_shared(
    study: tuple[list[Path], Path, Path], tmp_path: Path
) -> None:
    # agree's document (raters named with a canary) given to every route that shares, scores
    # or audits: refused with agreement_not_shareable, naming the input, never the raters.
    files, gold, schema = study
    named = [f"{CANARY}-{i}={path}" for i, path in enumerate(files)]
    document = tmp_path / "agreement.json"
    status, _, err = run(
        ["agree", "--rater", *named, "--schema", str(schema), "--gold", str(gold),
         "--out", str(document)]
    )  # fmt: skip
    assert (status, err) == (0, "")
    shared = tmp_path / "shared"
    shared.mkdir()
    routes = {
        "predictions line 1": ["share", "--gold", str(gold), "--predictions", str(document)],
        "gold line 1": ["share", "--gold", str(document), "--predictions", str(files[0])],
        "baseline line 1": [
            "share", "--gold", str(gold), "--baseline", str(document), "--candidate",
            str(files[0]),
        ],
        "predictions part 1 line 1": [
            "share", "--gold", str(gold), "--publication", str(document), "--out-dir",
            str(shared),
        ],
        "predictions line 1  ": ["score", "--gold", str(gold), "--predictions", str(document)],
        "report": ["audit", str(document)],
    }  # fmt: skip
    for where, argv in routes.items():
        status, out, err = run(argv if argv[0] == "audit" else [*argv, "--schema", str(schema)])
        assert (status, out) == (1, ""), where
        assert err.startswith(f"chartscore: error: agreement_not_shareable ({where.strip()})")
        assert CANARY not in err and err.count("\n") == 1
    assert list(shared.iterdir()) == []
    # render and gate take it inside; the rendering names no rater.
    status, out, err = run(["render", str(document), "--format", "csv"])
    assert (status, err) == (0, "") and CANARY not in out


def test_reprs_of_the_agreement_document_hold_no_rater_label() -> None:
    from test_agree_gates import document as hand_built

    labels = ("ZQcanary-Smith-1", "ZQcanary-Smith-2")
    text = hand_built().to_json().replace('"a"', f'"{labels[0]}"').replace('"b"', f'"{labels[1]}"')
    document = Agreement.from_json(text.replace('"a~b"', f'"{labels[0]}~{labels[1]}"'))
    assert document.raters == labels  # the labels are in the document, not in its reprs
    shown = repr(document) + repr(document.gold)
    for part in document.by_field.values():
        shown += repr(part) + "".join(repr(pair) for pair in part.pairs)
    assert "ZQcanary" not in shown and "Smith" not in shown
    assert repr(document) == "<Agreement: 2 raters, 2 fields, with gold>"


def test_an_undefined_kappa_keeps_its_pairs(tmp_path: Path) -> None:
    # Both raters answer true on every chart: chance agreement 1, kappa undefined. The
    # pair's kappa is null figures over its 12 pairs (as Fleiss' kappa is), not null; a
    # number field has no kappa at all (null).
    schema = tmp_path / "schema.json"
    schema.write_text(
        '{"fields": {"f.b": {"type": "boolean"}, "f.n": {"type": "number"}}}', encoding="utf-8"
    )
    files = []
    for name in ("a", "b"):
        rows = [{"case_id": f"c{i}", "field_id": "f.b", "value": True} for i in range(12)]
        rows += [{"case_id": f"c{i}", "field_id": "f.n", "value": i} for i in range(12)]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        files.append(str(path))
    status, out, err = run(["agree", "--raters", *files, "--schema", str(schema)])
    assert (status, err) == (0, "")
    saved = json.loads(out)
    boolean = saved["by_field"]["f.b"]
    assert boolean["pairs"][0]["kappa"] == {"value": None, "interval": None, "pairs": 12}
    assert boolean["fleiss_kappa"] == {"value": None, "interval": None, "units": 12, "pairs": 24}
    assert saved["by_field"]["f.n"]["pairs"][0]["kappa"] is None
    assert saved["pooled"]["pairs"][0]["kappa"] == {"value": None, "pairs": 12}
    assert Agreement.from_json(out).to_json() == out.rstrip("\n")  # read back, same bytes
