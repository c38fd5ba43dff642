"""CSV import: one row per case, one column per field, through a declared column map."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from chartscore import ChartscoreError, load_schema, score
from chartscore.cli import main
from chartscore.importers import import_csv

DATA = Path(__file__).resolve().parent / "data" / "importers"
TABLE = DATA / "csv_table.csv"
COLUMNS = DATA / "csv_columns.toml"
SCHEMA = DATA / "csv_schema.json"

# The table's rows as gold, read off tests/data/importers/csv_table.csv by hand.
EXPECTED_GOLD = {
    ("c-001", "hx.smoking"): "former",
    ("c-001", "echo.lvef"): 35,
    ("c-001", "dx.onset"): "2023-04",
    ("c-001", "hx.symptoms"): ["cough", "fever"],
    ("c-001", "hx.afib"): True,
    ("c-002", "hx.smoking"): None,
    ("c-002", "echo.lvef"): 55,
    ("c-002", "dx.onset"): "2023-05-02",
    ("c-002", "hx.afib"): False,
    ("c-003", "hx.smoking"): "never",
    ("c-003", "dx.onset"): None,
    ("c-003", "hx.symptoms"): ["syncope"],
    ("c-003", "hx.afib"): True,
}


def rows(data: bytes) -> dict[tuple[str, str], object]:
    found = [json.loads(line, parse_float=Decimal) for line in data.decode().splitlines()]
    return {(row["case_id"], row["field_id"]): row["value"] for row in found}


def test_table_to_gold_through_the_column_map() -> None:
    imported = import_csv(TABLE, COLUMNS, schema=load_schema(SCHEMA))
    assert rows(imported.gold_lines()) == EXPECTED_GOLD
    assert imported.counts == {"cases": 3, "rows": 13, "unanswerable": 2}
    # The same map as a decoded document, and a JSON column map, read the same.
    document = {
        "case_id": "chart",
        "fields": {
            "hx.smoking": "smoking",
            "echo.lvef": "lvef",
            "dx.onset": "onset",
            "hx.symptoms": "symptoms",
            "hx.afib": "afib",
        },
        "missing": ["NA", "UNK"],
        "true": ["yes", "y"],
        "false": ["no", "n"],
    }
    assert import_csv(TABLE, document, schema=load_schema(SCHEMA)).gold == imported.gold


def test_predictions_with_and_without_a_schema() -> None:
    typed = import_csv(TABLE, COLUMNS, role="predictions", schema=load_schema(SCHEMA))
    assert rows(typed.prediction_lines()) == EXPECTED_GOLD
    plain = rows(import_csv(TABLE, COLUMNS, role="predictions").prediction_lines())
    assert plain[("c-001", "echo.lvef")] == "35"
    assert plain[("c-001", "hx.symptoms")] == "cough|fever"
    assert plain[("c-002", "hx.smoking")] is None
    gold = import_csv(TABLE, COLUMNS, schema=load_schema(SCHEMA))
    report = score(list(gold.gold), list(typed.predictions), schema=load_schema(SCHEMA))
    assert report.overall.metric("exact_agreement").success_count == 11  # 13 rows, 2 null


def _table(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.csv"
    path.write_text(text, encoding="utf-8")
    return path


MAP = {"case_id": "chart", "fields": {"hx.smoking": "smoking", "hx.afib": "afib"}}


@pytest.mark.parametrize(
    ("table", "column_map", "message"),
    [
        ("chart,smoking,afib\nc1,former,maybe\n", MAP, "invalid_cell (table line 2 column 3)"),
        ("chart,smoking,afib\nc1,sometimes,yes\n", MAP, "invalid_cell (table line 2 column 2)"),
        ("chart,smoking,afib\n,former,yes\n", MAP, "invalid_case_id (table line 2 column 1)"),
        ("chart,smoking,afib\nc1,,\nc1,,\n", MAP, "duplicate_case (table line 3)"),
        ("chart,smoking\nc1,former\n", MAP, "column_not_found (columns field hx.afib)"),
        ("id,smoking,afib\nc1,former,yes\n", MAP, "column_not_found (columns, key case_id)"),
        ("chart,smoking,afib,afib\nc1,former,yes,no\n", MAP, "duplicate_column (table column 4)"),
        ("chart,smoking,afib\nc1,former\n", MAP, "ragged_row (table line 2)"),
        ("chart,smoking,afib\n", {"case_id": "chart"}, "invalid_column_map (columns)"),
        (
            "chart,smoking,afib\n",
            {**MAP, "case_id": ""},
            "invalid_column_map (columns, key case_id)",
        ),
        ("chart,smoking,afib\n", {**MAP, "sites": "x"}, "invalid_column_map (columns)"),
        (
            "chart,smoking,afib\n",
            {**MAP, "fields": {"Smoking": "x"}},
            "invalid_column_map (columns)",
        ),
        ("chart,smoking,afib\n", {**MAP, "missing": "NA"}, "invalid_column_map (columns)"),
        (
            "chart,smoking,afib\n",
            {**MAP, "true": ["y"], "false": ["y"]},
            "invalid_column_map (columns)",
        ),
        (
            "chart,smoking,afib\n",
            {**MAP, "fields": {"hx.other": "smoking"}},
            "field_undeclared (schema field hx.other)",
        ),
    ],
)
def test_errors_name_a_line_column_or_field(
    table: str, column_map: dict[str, object], message: str, tmp_path: Path
) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_csv(_table(tmp_path, table), column_map, schema=load_schema(SCHEMA))
    assert str(caught.value) == message
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_gold_needs_a_schema(tmp_path: Path) -> None:
    with pytest.raises(ChartscoreError) as caught:
        import_csv(_table(tmp_path, "chart,smoking,afib\n"), MAP)
    assert str(caught.value) == "field_undeclared (schema field hx.smoking)"


def test_a_column_map_file_with_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    broken = tmp_path / "columns.toml"
    broken.write_text('case_id = "chart"\n[fields\n', encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        import_csv(TABLE, broken, schema=load_schema(SCHEMA))
    assert str(caught.value) == "invalid_json (columns line 2)"


def test_cli(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    err = io.StringIO()
    argv = ["import", "csv", "--table", str(TABLE), "--columns", str(COLUMNS)]
    argv += ["--schema", str(SCHEMA), "--gold-out", str(gold)]
    assert main(argv, stdout=io.StringIO(), stderr=err) == 0
    assert rows(gold.read_bytes()) == EXPECTED_GOLD
    assert err.getvalue() == (
        "chartscore: gold: 13 rows for 3 cases, 2 null (declared missing-data codes)\n"
    )
    err = io.StringIO()
    assert main(argv[:-2], stdout=io.StringIO(), stderr=err) == 2
    assert "give one of --gold-out and --predictions-out" in err.getvalue()
    err = io.StringIO()
    assert main([*argv[:-1], str(SCHEMA)], stdout=io.StringIO(), stderr=err) == 1
    assert err.getvalue().startswith("chartscore: error: output_is_input (output)")
