"""The shipped JSON Schemas: valid Draft 2020-12, printed byte for byte, and met by every document.

Every document kind is written here by its real route (the command line: score, compare,
merge, share, agree, the ledger, the importers, the demo), and by hypothesis-generated
reports, and validated with ``jsonschema`` against its shipped schema (docs/formats.md,
"JSON Schemas"). A document with an unknown key or a negative count fails its schema.
"""

from __future__ import annotations

import copy
import io
import json
import re
import tomllib
from collections.abc import Iterator
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from chartscore import Report, score
from chartscore.cli import main
from chartscore.documents.json_schemas import SCHEMA_KINDS, schema_bytes, schema_file_name
from report_data import scored_reports

from helpers import SCHEMA, datasets, dumps, examples, write_jsonl

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

DATA = resources.files("chartscore") / "data"
TESTS = Path(__file__).resolve().parent
DOCS = TESTS.parent / "docs"
IMPORTERS = TESTS / "data" / "importers"
KEY = b"0123456789abcdef-a-test-key-not-a-secret-0123456789"

Document = dict[str, Any]


def schema_of(kind: str) -> Document:
    document: Document = json.loads(schema_bytes(kind))
    return document


def _registry() -> Any:
    resources_ = [
        (schema_file_name(kind), referencing.Resource.from_contents(schema_of(kind)))
        for kind in SCHEMA_KINDS
    ]
    return referencing.Registry().with_resources(resources_)


REGISTRY = _registry()
VALIDATORS = {
    kind: jsonschema.Draft202012Validator(
        schema_of(kind),
        registry=REGISTRY,
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    for kind in SCHEMA_KINDS
}


def errors(kind: str, document: object) -> list[str]:
    found = VALIDATORS[kind].iter_errors(document)
    return [f"{list(error.absolute_path)}: {error.message[:200]}" for error in found]


def assert_valid(kind: str, document: object) -> None:
    problems = errors(kind, document)
    assert not problems, problems[:5]


def run(argv: list[str]) -> str:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    assert status == 0, err.getvalue()
    return out.getvalue()


def lines(path: Path) -> list[Document]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# --- the schemas themselves -----------------------------------------------------------------


def test_every_kind_ships_a_valid_draft_2020_12_schema() -> None:
    folder = resources.files("chartscore") / "schemas"
    shipped = sorted(item.name for item in folder.iterdir() if item.name.endswith(".json"))
    assert shipped == sorted(schema_file_name(kind) for kind in SCHEMA_KINDS)
    for kind in SCHEMA_KINDS:
        schema = schema_of(kind)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)


def test_schema_print_gives_the_file_s_bytes_and_list_names_every_kind() -> None:
    folder = resources.files("chartscore") / "schemas"
    for kind in SCHEMA_KINDS:
        printed = run(["schema", "--print", kind]).encode("utf-8")
        assert printed == (folder / f"{kind}.schema.json").read_bytes()
    assert run(["schema", "--list"]) == "".join(kind + "\n" for kind in SCHEMA_KINDS)


@pytest.mark.parametrize(
    "argv", [["schema"], ["schema", "--list", "--print", "report"], ["schema", "--print", "x"]]
)
def test_schema_needs_one_known_kind_or_list(argv: list[str]) -> None:
    err = io.StringIO()
    assert main(argv, stdout=io.StringIO(), stderr=err) == 2
    assert err.getvalue().startswith("chartscore: error: usage: ")


# --- every document the suite writes, by its real route ----------------------------------------


def _demo(root: Path) -> dict[str, Path]:
    """The demo's files, a worse candidate, strata with a sampling design, an extra prediction."""
    gold = root / "gold.jsonl"
    gold.write_bytes((DATA / "demo_gold.jsonl").read_bytes())
    schema = root / "schema.json"
    schema.write_bytes((DATA / "demo_schema.json").read_bytes())
    predictions = root / "model-v1.jsonl"
    predictions.write_bytes((DATA / "demo_predictions.jsonl").read_bytes())
    rows = lines(predictions)
    candidate = write_jsonl(
        root / "model-v2.jsonl",
        [{**row, "value": None} if index % 7 == 0 else row for index, row in enumerate(rows)],
    )
    extra = write_jsonl(
        root / "extra.jsonl", [*rows, {"case_id": "elsewhere", "field_id": "x", "value": 1}]
    )
    declared = json.loads(schema.read_text(encoding="utf-8"))
    declared["strata"] = {"site": ["A", "B", "C"]}
    declared["sampling"] = {"site": {"A": "0.5", "B": "0.25", "C": "1"}}
    strata_schema = root / "strata_schema.json"
    strata_schema.write_text(json.dumps(declared), encoding="utf-8")
    cases = sorted({row["case_id"] for row in lines(gold)})
    strata = write_jsonl(
        root / "strata.jsonl",
        [{"case_id": c, "strata": {"site": "ABC"[int(c[-3:]) % 3]}} for c in cases],
    )
    key = root / "ledger.key"
    key.write_bytes(KEY)
    key.chmod(0o600)
    broken = root / "broken.jsonl"
    text = predictions.read_text(encoding="utf-8").splitlines()
    broken.write_text("\n".join([*text[:2], text[2][:-5], *text[3:]]) + "\n", encoding="utf-8")
    return {
        "gold": gold,
        "schema": schema,
        "predictions": predictions,
        "candidate": candidate,
        "extra": extra,
        "strata_schema": strata_schema,
        "strata": strata,
        "key": key,
        "broken": broken,
    }


def _agreement_study(root: Path) -> tuple[list[Path], Path, Path]:
    types = {"smoking": "categorical", "acuity": "ordinal", "ef": "number", "note": "text"}
    schema = {
        "fields": {
            "smoking": {"type": "categorical", "choices": ["current", "former", "never"]},
            "acuity": {"type": "ordinal", "levels": [1, 2, 3, 4, 5]},
            "ef": {"type": "number"},
            "note": {"type": "text"},
        }
    }

    def truth(case: int, field: str) -> object:
        values = {"smoking": ["current", "former", "never"][case % 3], "acuity": 1 + case % 5}
        return {**values, "ef": 35 + 5 * (case % 6), "note": f"note {case % 4}"}[field]

    files = [
        write_jsonl(
            root / f"abstractor-{rater}.jsonl",
            [
                {
                    "case_id": f"c{case}",
                    "field_id": field,
                    "value": None if (case + rater) % 7 == 0 else truth(case + rater % 2, field),
                }
                for case in range(24)
                for field in types
            ],
        )
        for rater in (1, 2, 3)
    ]
    gold = write_jsonl(
        root / "agree-gold.jsonl",
        [
            {"case_id": f"c{case}", "field_id": f, "field_type": t, "value": truth(case, f)}
            for case in range(24)
            for f, t in types.items()
        ],
    )
    path = root / "agree-schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    return files, gold, path


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, Any]]]:
    """Every kind of document, by route: ``{kind: [(route, parsed document), ...]}``."""
    root = tmp_path_factory.mktemp("routes")
    f = _demo(root)
    out: dict[str, list[tuple[str, Any]]] = {kind: [] for kind in SCHEMA_KINDS}

    def add(kind: str, route: str, document: object) -> None:
        out[kind].append((route, document))

    def add_file(kind: str, route: str, path: Path) -> None:
        add(kind, route, json.loads(path.read_text(encoding="utf-8")))

    def add_lines(kind: str, route: str, path: Path) -> None:
        for number, row in enumerate(lines(path), start=1):
            add(kind, f"{route} line {number}", row)

    g, s, p, c = str(f["gold"]), str(f["schema"]), str(f["predictions"]), str(f["candidate"])
    strata = ["--schema", str(f["strata_schema"]), "--strata", str(f["strata"])]
    ledger = ["--ledger", str(root / "ledger.jsonl"), "--ledger-key", str(f["key"])]

    add("report", "demo --json", json.loads(run(["demo", "--json"])))
    add(
        "report",
        "score",
        json.loads(run(["score", "--gold", g, "--predictions", p, "--schema", s])),
    )
    site = root / "site.partial"
    args = ["score", "--gold", g, "--predictions", str(f["extra"]), *strata, "--quiet"]
    args += ["--extra-predictions", "ignore", "--partial-out", str(site), *ledger]
    add("report", "score --strata (sampling) --extra-predictions ignore", json.loads(run(args)))
    add_file("partial", "score --partial-out (strata, ignored)", site)
    plain = root / "plain.partial"
    run(["score", "--gold", g, "--predictions", p, "--schema", s, "--partial-out", str(plain)])
    add_file("partial", "score --partial-out", plain)
    merged = root / "merged.partial"
    report = run(["merge", "--partials", str(site), "--partial-out", str(merged)])
    add("report", "merge --partials", json.loads(report))
    add_file("partial", "merge --partial-out", merged)

    compared = ["compare", "--gold", g, "--baseline", p, "--candidate", c, "--quiet"]
    add("comparison", "compare", json.loads(run([*compared, "--schema", s])))
    names = ["--baseline-name", "model-v1", "--candidate-name", "model-v2"]
    add(
        "comparison", "compare --baseline-name", json.loads(run([*compared, "--schema", s, *names]))
    )

    # Run cost: a header line and usage on most lines (docs/formats.md).
    costed = root / "costed.jsonl"
    header = {"model": "acme-llm", "model_version": "2026-01", "price": {"currency": "USD"}}
    usage_rows: list[dict[str, object]] = [{"chartscore_run": header}]
    for number, row in enumerate(lines(f["predictions"])):
        usage = {"input_tokens": 100 + number, "latency_ms": Decimal(number) / 8, "cost": 1}
        usage_rows.append({**row, "usage": usage} if number % 3 else row)
    write_jsonl(costed, usage_rows)
    add_lines("prediction_line", "predictions with usage", costed)
    cost_partial = root / "cost.partial"
    args = ["score", "--gold", g, "--predictions", str(costed), "--schema", s, "--quiet"]
    add("report", "score (usage)", json.loads(run([*args, "--partial-out", str(cost_partial)])))
    add_file("partial", "score --partial-out (usage)", cost_partial)
    add("report", "merge (usage)", json.loads(run(["merge", "--partials", str(cost_partial)])))
    costed_compare = ["compare", "--gold", g, "--baseline", str(costed), "--candidate", c]
    add(
        "comparison",
        "compare (usage)",
        json.loads(run([*costed_compare, "--schema", s, "--quiet"])),
    )
    args = ["compare", "--gold", g, "--baseline", str(f["extra"]), "--candidate", c, *strata]
    args += ["--extra-predictions", "ignore", "--quiet", *ledger, "--system", "model-v2"]
    add("comparison", "compare --strata --extra-predictions ignore", json.loads(run(args)))

    shared = ["share", "--gold", g, "--schema", s, "--min-cell", "3", "--quiet"]
    add("shared_report", "share", json.loads(run([*shared, "--predictions", p, *ledger])))
    add(
        "shared_report",
        "share --partials",
        json.loads(run(["share", "--partials", str(plain), "--min-cell", "3", "--quiet"])),
    )
    add(
        "shared_comparison",
        "share --baseline --candidate",
        json.loads(run([*shared, "--baseline", p, "--candidate", c])),
    )

    # A failed run is a ledger line too (batch records it).
    broken = ["batch", "--gold", g, "--predictions", str(f["broken"]), "--schema", s, *ledger]
    assert main([*broken, "--jobs", "1"], stdout=io.StringIO(), stderr=io.StringIO()) == 1
    add_lines("ledger_line", "--ledger", root / "ledger.jsonl")

    raters, agree_gold, agree_schema = _agreement_study(root)
    agree = ["agree", "--raters", *map(str, raters), "--schema", str(agree_schema), "--quiet"]
    add("agreement", "agree", json.loads(run(agree)))
    add("agreement", "agree --gold", json.loads(run([*agree, "--gold", str(agree_gold)])))

    # Inputs: the demo's, the ones written here, and every importer's outputs.
    add_lines("gold_line", "demo gold", f["gold"])
    add_lines("gold_line", "agree gold", agree_gold)
    add_lines("prediction_line", "demo predictions", f["predictions"])
    for path in raters:
        add_lines("prediction_line", "rater file", path)
    add_file("field_schema", "demo schema", f["schema"])
    add_file("field_schema", "strata and sampling", f["strata_schema"])
    add_file("field_schema", "agree schema", agree_schema)
    add_file("field_schema", "importer fixture", IMPORTERS / "csv_schema.json")
    imports = root / "imports"
    imports.mkdir()
    redcap = ["import", "redcap", "--dictionary", str(IMPORTERS / "redcap_dictionary_ui.csv")]
    redcap += ["--records", str(IMPORTERS / "redcap_records_gold.csv")]
    redcap += ["--missing-codes", "UNK,NA", "--ordinal", "mrs"]
    run(
        [*redcap, "--gold-out", str(imports / "rc.jsonl"), "--schema-out", str(imports / "rc.json")]
    )
    add_lines("gold_line", "import redcap", imports / "rc.jsonl")
    add_file("field_schema", "import redcap --schema-out", imports / "rc.json")
    studio = ["import", "labelstudio", "--export", str(IMPORTERS / "labelstudio_cold.json")]
    studio += ["--gold-annotator", "6", "--annotator", "3"]
    studio += ["--labels", "Cough,Fatigue,Headache", "--notes", "1,3-4"]
    studio += ["--gold-out", str(imports / "ls-gold.jsonl")]
    studio += ["--predictions-out", str(imports / "ls.jsonl")]
    run([*studio, "--schema-out", str(imports / "ls.json")])
    add_lines("gold_line", "import labelstudio", imports / "ls-gold.jsonl")
    add_lines("prediction_line", "import labelstudio", imports / "ls.jsonl")
    add_file("field_schema", "import labelstudio --schema-out", imports / "ls.json")
    table = ["import", "csv", "--table", str(IMPORTERS / "csv_table.csv")]
    table += ["--columns", str(IMPORTERS / "csv_columns.toml")]
    table += ["--schema", str(IMPORTERS / "csv_schema.json")]
    run([*table, "--gold-out", str(imports / "csv.jsonl")])
    add_lines("gold_line", "import csv", imports / "csv.jsonl")

    # Gates files: the documented example, and one of every rule and level.
    example = re.search(
        r"<!-- example: gates.toml -->\n```toml\n(.*?)```",
        (DOCS / "formats.md").read_text(encoding="utf-8"),
        re.DOTALL,
    )
    assert example is not None
    add("gates", "docs/formats.md example", tomllib.loads(example.group(1)))
    add("gates", "every rule", tomllib.loads(GATES))
    # Documents of earlier format versions, still read.
    for path in sorted((TESTS / "data" / "legacy").glob("*.json")):
        kind = json.loads(path.read_text(encoding="utf-8"))["format"].removeprefix("chartscore.")
        add_file(kind, f"legacy {path.name}", path)
    for path in sorted((TESTS / "data" / "partials").glob("*.partial")):
        add_file("partial", f"legacy {path.name}", path)
    return out


GATES = """
[[gate]]
slice = "overall"
metric = "normalized_agreement"
min_lower = 0.8

[[gate]]
slice = "stratum:site=A/type:date"
metric = "unanswerable_answer"
max_upper = 0.05
level = "warning"

[[gate]]
slice = "type:categorical"
metric = "exact_agreement"
min_difference_lower = -0.02

[[gate]]
slice = "field:dx.onset"
metric = "answerable_abstention"
max_difference_upper = 0.01

[[gate]]
slice = "field:hx.smoking"
metric = "kappa"
min_lower = -0.5

[[gate]]
slice = "field:hx.smoking"
metric = "sensitivity"
label = "current"
min_lower = 0.5

[[gate]]
slice = "overall"
metric = "normalized_agreement"
min_upper = 0.75

[[gate]]
slice = "field:dx.onset"
metric = "unanswerable_answer"
max_lower = 0.2
"""


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_every_document_written_on_every_route_meets_its_schema(
    written: dict[str, list[tuple[str, Any]]], kind: str
) -> None:
    assert written[kind], f"no route wrote a {kind}"
    for route, document in written[kind]:
        problems = errors(kind, document)
        assert not problems, (route, problems[:5])


def test_the_routes_reach_the_optional_parts(written: dict[str, list[tuple[str, Any]]]) -> None:
    # The schemas' optional members are exercised, not only the plain shapes.
    reports = [document for _, document in written["report"]]
    assert any("overall_weighted" in d and "ignored_prediction_count" in d for d in reports)
    comparisons = [document for _, document in written["comparison"]]
    assert any("by_stratum" in d and "ignored_prediction_count" in d for d in comparisons)
    assert any("header" in d.get("run", {}) for d in reports)
    assert any("baseline" in d.get("run", {}) for d in comparisons)
    assert any("names" in d for d in comparisons) and any("names" not in d for d in comparisons)
    schemas = [document for _, document in written["field_schema"]]
    assert any("choice_labels" in spec for d in schemas for spec in d["fields"].values())
    partials = [document for _, document in written["partial"]]
    assert any("header" in d.get("run", {}) for d in partials)
    assert any("strata" in d and "identity" in d for d in partials)
    assert any("identity" not in d for d in partials)  # format 1
    ledger = [document for _, document in written["ledger_line"]]
    assert {d["kind"] for d in ledger} == {"score", "compare", "share"}
    assert {d["status"] for d in ledger} == {"scored", "failed"}
    assert {d["gold"] is None for _, d in written["agreement"]} == {True, False}


# --- hypothesis: random cohorts scored ------------------------------------------------------------


@settings(
    max_examples=examples(40, 15),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(report=scored_reports())
def test_random_reports_meet_the_report_schema(report: Report) -> None:
    assert_valid("report", json.loads(report.to_json()))


@settings(
    max_examples=examples(40, 15),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=datasets())
def test_random_cohorts_meet_their_line_and_report_schemas(data: Any) -> None:
    gold, predictions = data
    for record in gold:
        value = record.value
        row = {
            "case_id": record.case_id,
            "field_id": record.field_id,
            "field_type": str(record.field_type),
            "value": sorted(value) if isinstance(value, frozenset) else value,
        }
        assert_valid("gold_line", json.loads(dumps(row)))
    for prediction in predictions:
        value = prediction.value
        row = {
            "case_id": prediction.case_id,
            "field_id": prediction.field_id,
            "value": sorted(value) if isinstance(value, frozenset) else value,
        }
        assert_valid("prediction_line", json.loads(dumps(row)))
    report = score(gold, predictions, schema=SCHEMA)
    assert_valid("report", json.loads(report.to_json()))


# --- what a schema refuses ---------------------------------------------------------------------


def _places(document: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    # Every path to an object in the document.
    if isinstance(document, dict):
        yield path
        for key, value in document.items():
            yield from _places(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _places(value, (*path, index))


def _at(document: Any, path: tuple[object, ...]) -> Any:
    for step in path:
        document = document[step]
    return document


_COUNT_KEYS = frozenset({"pairs", "answerable", "unanswerable", "ignored", "units"})


def _counts(document: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    # Every path to a count: a member named *_count (or a partial's counts), holding an integer.
    if isinstance(document, dict):
        for key, value in document.items():
            if type(value) is int and (key.endswith("_count") or key in _COUNT_KEYS):
                yield (*path, key)
            yield from _counts(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _counts(value, (*path, index))


@pytest.mark.parametrize(
    "kind", ["report", "comparison", "shared_report", "shared_comparison", "agreement", "partial"]
)
def test_an_unknown_key_or_a_negative_count_fails_the_schema(
    written: dict[str, list[tuple[str, Any]]], kind: str
) -> None:
    # The smallest document of the kind, edited in place and put back (validation walks it all).
    document = min((d for _, d in written[kind]), key=lambda d: len(json.dumps(d)))
    validator = VALIDATORS[kind]
    assert validator.is_valid(document)
    places = [p for p in _places(document) if not _is_open_map(p)]
    for path in places[:: max(1, len(places) // 8)]:
        target = _at(document, path)
        target["zz_unknown"] = 1
        refused = not validator.is_valid(document)
        del target["zz_unknown"]
        assert refused, path
    counts = list(_counts(document))
    assert counts
    for path in counts[:: max(1, len(counts) // 8)]:
        target = _at(document, path[:-1])
        target[path[-1]], kept = -1, target[path[-1]]
        refused = not validator.is_valid(document)
        target[path[-1]] = kept
        assert refused, path


_OPEN_MAPS = frozenset({"clusters", "metrics", "sampling", "fractions"})


def _is_open_map(path: tuple[object, ...]) -> bool:
    # Maps keyed by names the reader checks against the rest of the document (a partial's
    # per-case sums by slice and metric, a weighted estimate's metrics and fractions, a
    # schema's sampling fractions by declared label): the schema leaves their keys open, and
    # the reader refuses what the document does not declare.
    return any(step in _OPEN_MAPS for step in path)


def test_an_interval_out_of_range_or_another_version_fails_the_report_schema() -> None:
    document = json.loads(score_demo())
    edited = copy.deepcopy(document)
    edited["overall"]["exact_agreement"]["interval"] = [-0.1, 0.5]
    assert errors("report", edited)
    edited = copy.deepcopy(document)
    edited["format_version"] = 1
    assert errors("report", edited)
    edited = copy.deepcopy(document)
    edited["confidence"] = 0.8
    assert errors("report", edited)


def score_demo() -> str:
    return run(["demo", "--json"])


@pytest.mark.parametrize(
    ("kind", "row"),
    [
        ("gold_line", {"case_id": "c", "field_id": "a", "field_type": "text", "value": 1, "x": 1}),
        ("gold_line", {"case_id": "c", "field_id": "a", "field_type": "textual", "value": 1}),
        ("gold_line", {"case_id": "", "field_id": "a", "field_type": "text", "value": 1}),
        ("gold_line", {"case_id": "c", "field_id": "A", "field_type": "text", "value": 1}),
        ("prediction_line", {"case_id": "c", "field_id": "a"}),
        ("prediction_line", {"case_id": "c", "field_id": "a", "value": [1]}),
        ("prediction_line", {"case_id": "c", "field_id": "a", "value": 1, "field_type": "text"}),
        (
            "prediction_line",
            {"case_id": "c", "field_id": "a", "value": 1, "normalized_fact_digest": "x"},
        ),
        ("field_schema", {"fields": {"a": {"type": "ordinal"}}}),
        ("field_schema", {"fields": {"a": {"type": "boolean", "choices": ["x"]}}}),
        ("field_schema", {"fields": {}, "sampling": {"site": {"A": 1}}}),
        ("gates", {"gate": []}),
        ("gates", {"gate": [{"slice": "overall", "metric": "exact_agreement"}]}),
        ("gates", {"gate": [{"slice": "overall", "metric": "exact_agreement", "max_upper": 0.1}]}),
        ("gates", {"gate": [{"slice": "overall", "metric": "exact_agreement", "max_lower": 0.1}]}),
        (
            "gates",
            {"gate": [{"slice": "overall", "metric": "wrong_type_answer", "min_upper": 0.1}]},
        ),
        ("gates", {"gate": [{"slice": "all", "metric": "exact_agreement", "min_lower": 0.1}]}),
        ("gates", {"gate": [{"slice": "overall", "metric": "exact_agreement", "min_lower": 2}]}),
    ],
)
def test_a_malformed_input_fails_its_schema(kind: str, row: Document) -> None:
    assert errors(kind, row)
