"""chart-review's published example tables, computed by chartscore from the same exports.

The exports are chart-review's own test projects (smart-on-fhir/chart-review, Apache-2.0,
commit e9e04b7), their annotations unchanged: tests/data/importers/labelstudio_sublabels.json
is its tests/data/sublabels/labelstudio-export.json and labelstudio_many_notes.json its
tests/data/many-notes/labelstudio-export.json (one task a line); chart_review_cold.yaml and
chart_review_three.yaml are their config.yaml files. The "cold" export is
labelstudio_cold.json (tests/test_import_labelstudio.py). Every table below is quoted
exactly from chart-review's tests, with its path; ``-`` is chart-review's undefined.

Where chartscore differs, the test says so and docs/import.md gives the reason.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from chartscore import Report, compare, score
from chartscore.cli import main
from chartscore.importers import import_labelstudio
from chartscore.importers.labelstudio import label_segment
from chartscore.stats.confusion import f1_score, pooled_kappa

DATA = Path(__file__).resolve().parent / "data" / "importers"
COLD, COLD_CONFIG = DATA / "labelstudio_cold.json", DATA / "chart_review_cold.yaml"
SUBLABELS = DATA / "labelstudio_sublabels.json"
MANY_NOTES = DATA / "labelstudio_many_notes.json"
THREE = DATA / "chart_review_three.yaml"

# tests/test_accuracy.py, test_sublabels (``chart-review accuracy alice bob``, sublabels):
#
#     Comparing 2 charts (1308–1309)  # noqa: RUF003
#     Truth: alice
#     Annotator: bob
#     Macro F1: 1.0
#
#     F1   Sens  Spec   PPV  NPV    Kappa   TP  FN  TN  FP  Label
#     0.6  0.6   0.778  0.6  0.778  0.378   3   2   7   2   *
#     -    0.0   1.0    -    0.5    0.0     0   1   1   0   Deceased
#     1.0  1.0   1.0    1.0  1.0    1.0     1   0   1   0   Deceased → *
#     1.0  1.0   1.0    1.0  1.0    1.0     1   0   1   0   Deceased → False
#     -    0.0   0.667  0.0  0.667  -0.333  0   1   2   1   Deceased → Datetime → *
#     -    0.0   1.0    -    0.5    0.0     0   1   1   0   Deceased → Datetime →
#                                                           11/12/25
#     -    -     0.5    0.0  1.0    0.0     0   0   1   1   Deceased → Datetime →
#                                                           11/13/25
#     1.0  1.0   1.0    1.0  1.0    1.0     1   0   1   0   Fungal → *
#     1.0  1.0   1.0    1.0  1.0    1.0     1   0   1   0   Fungal → Confirmed
#     -    -     0.5    0.0  1.0    0.0     0   0   1   1   Infection
#     1.0  1.0   1.0    1.0  1.0    1.0     1   0   1   0   Infection → *
#     -    -     -      -    -      -       0   0   0   0   Infection → Confirmed
#     1.0  1.0   1.0    1.0  1.0    1.0     1   0   1   0   Infection → Suspected
#
# label (chartscore's spelling) -> (F1, Sens, Spec, PPV, NPV, Kappa, TP, FN, TN, FP)
SUBLABELS_POOLED = (0.6, 0.6, 0.778, 0.6, 0.778, 0.378, 3, 2, 7, 2)
SUBLABELS_MACRO_F1 = 1.0
SUBLABELS_ROWS = {
    "Deceased": (None, 0.0, 1.0, None, 0.5, 0.0, 0, 1, 1, 0),
    "Deceased|Deceased|False": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1, 0, 1, 0),
    "Deceased|Deceased Datetime|11/12/25": (None, 0.0, 1.0, None, 0.5, 0.0, 0, 1, 1, 0),
    "Deceased|Deceased Datetime|11/13/25": (None, None, 0.5, 0.0, 1.0, 0.0, 0, 0, 1, 1),
    "Fungal|Fungal|Confirmed": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1, 0, 1, 0),
    "Infection": (None, None, 0.5, 0.0, 1.0, 0.0, 0, 0, 1, 1),
    "Infection|Infection|Suspected": (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1, 0, 1, 0),
}
# The sublabel aggregates (``Deceased → *``: chart-review's matcher ``Deceased|Deceased|*``).
SUBLABELS_AGGREGATES = {
    ("Deceased", "Deceased"): (1.0, 1, 0, 1, 0),
    ("Deceased", "Deceased Datetime"): (None, 0, 1, 2, 1),  # chartscore: F1 0.0, see below
    ("Fungal", "Fungal"): (1.0, 1, 0, 1, 0),
    ("Infection", "Infection"): (1.0, 1, 0, 1, 0),
}

# tests/test_mcnemar.py, test_default_output (``chart-review mcnemar alice bob carla``,
# many-notes):
#
#     Comparing 50 charts (1–50)  # noqa: RUF003
#     Truth: alice
#     Annotators: bob, carla
#
#     McNemar  P-value   BC  OL  OR  BW  Label
#     12.375   4.35e-04  20  61  27  42  *
#     6.5      0.011     10  20  6   14  A
#     N/A      0.035     1   16  6   27  B
#     2.025    0.155     9   25  15  1   C
MANY_NOTES_MCNEMAR = {"*": (20, 61, 27, 42), "A": (10, 20, 6, 14), "B": (1, 16, 6, 27)}
MANY_NOTES_MCNEMAR["C"] = (9, 25, 15, 1)

# tests/test_mcnemar.py, test_sublabels (``chart-review mcnemar alice bob carla``, sublabels):
#
#     McNemar  P-value  BC  OL  OR  BW  Label
#     N/A      0.688    10  2   3   1   *
#     N/A      1.0      1   0   0   1   Deceased
#     N/A      1.0      2   0   0   0   Deceased → False
#     N/A      0.5      1   0   1   0   Deceased → Datetime → 11/12/25
#     N/A      0.5      1   0   1   0   Deceased → Datetime → 11/13/25
#     N/A      1.0      2   0   0   0   Fungal → Confirmed
#     N/A      0.5      1   0   1   0   Infection
#     N/A      0.5      1   1   0   0   Infection → Confirmed
#     N/A      0.5      1   1   0   0   Infection → Suspected
SUBLABELS_MCNEMAR = {
    "*": (10, 2, 3, 1),
    "Deceased": (1, 0, 0, 1),
    "Deceased|Deceased|False": (2, 0, 0, 0),
    "Deceased|Deceased Datetime|11/12/25": (1, 0, 1, 0),
    "Deceased|Deceased Datetime|11/13/25": (1, 0, 1, 0),
    "Fungal|Fungal|Confirmed": (2, 0, 0, 0),
    "Infection": (1, 0, 1, 0),
    "Infection|Infection|Confirmed": (1, 1, 0, 0),
    "Infection|Infection|Suspected": (1, 1, 0, 0),
}
# The text-area sublabel values are free text: chartscore reads them only when declared.
SUBLABELS_DECLARED = sorted(SUBLABELS_MCNEMAR.keys() - {"*"})


def _rate(metric: object) -> float | None:
    k, n = metric.success_count, metric.total_count  # type: ignore[attr-defined]
    return k / n if n else None


def _shown(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _row(metrics: object, f1: float | None, kappa: float | None) -> tuple[object, ...]:
    """(F1, Sens, Spec, PPV, NPV, Kappa, TP, FN, TN, FP) as chart-review prints them."""
    m = metrics  # a mapping of the four label metrics
    sens, spec = m["sensitivity"], m["specificity"]  # type: ignore[index]
    tp, tn = sens.success_count, spec.success_count
    rates = [_rate(m[name]) for name in ("sensitivity", "specificity", "ppv", "npv")]  # type: ignore[index]
    return (
        *(_shown(v) for v in (f1, *rates, kappa)),
        tp,
        sens.total_count - tp,
        tn,
        spec.total_count - tn,
    )


def test_cold_through_chart_reviews_config() -> None:
    # ``chart-review accuracy jill jane`` with its config.yaml: names, labels and jane's range.
    imported = import_labelstudio(COLD, gold_annotator="jill", annotator="jane", config=COLD_CONFIG)
    assert sorted({row.case_id for row in imported.gold}) == ["1", "3", "4"]
    part = score(list(imported.gold), list(imported.predictions), schema=imported.schema)
    labels = part.by_field["labels"]
    assert _row(labels.metrics, labels.micro_f1, labels.pooled_kappa) == (
        0.667, 0.75, 0.6, 0.6, 0.75, 0.341, 3, 1, 3, 2
    )  # fmt: skip
    assert _shown(labels.macro_f1) == 0.833
    assert imported.counts["labels_dropped"] == 1  # "Label Not In Study" on note 1
    # The pooled kappa as the report JSON states it (and as a saved report reads back).
    written = json.loads(part.to_json())["by_field"]["labels"]
    assert written["pooled_kappa"] == 14 / 41 and _shown(written["pooled_kappa"]) == 0.341
    assert Report.from_json(part.to_json()).by_field["labels"].pooled_kappa == 14 / 41


def _sublabels(**options: object) -> tuple[object, object]:
    imported = import_labelstudio(
        SUBLABELS, gold_annotator="alice", annotator="bob", config=THREE, **options
    )
    report = score(list(imported.gold), list(imported.predictions), schema=imported.schema)
    return imported, report


def test_sublabels_accuracy_table() -> None:
    imported, report = _sublabels(labels=SUBLABELS_DECLARED)
    # carla's "Infection → Confirmed" is used by neither alice nor bob: chart-review's row of
    # zeros, which chartscore leaves out (and counts).
    assert imported.counts["labels_unused"] == 1  # type: ignore[attr-defined]
    part = report.by_field["labels"]  # type: ignore[attr-defined]
    assert sorted(part.labels) == sorted(label.lower() for label in SUBLABELS_ROWS)
    assert _row(part.metrics, part.micro_f1, part.pooled_kappa) == SUBLABELS_POOLED
    written = json.loads(report.to_json())["by_field"]["labels"]  # type: ignore[attr-defined]
    assert _shown(written["pooled_kappa"]) == SUBLABELS_POOLED[5]  # 0.378
    assert part.macro_f1 == SUBLABELS_MACRO_F1
    _, booleans = _sublabels(labels=SUBLABELS_DECLARED, per_label=True)
    for label, published in SUBLABELS_ROWS.items():
        field = booleans.by_field[f"labels.{label_segment(label)}"]  # type: ignore[attr-defined]
        assert field.kappa is not None
        result = part.label(label.lower())
        found = _row(result.metrics, result.f1, field.kappa.value)
        assert found == published, label
    # The aggregates over one sublabel's values: the sum of its labels' counts.
    for (name, sublabel), (f1, tp, fn, tn, fp) in SUBLABELS_AGGREGATES.items():
        members = [
            part.label(label.lower()).metrics
            for label in SUBLABELS_ROWS
            if label.startswith(f"{name}|{sublabel}|")
        ]
        counts = [0, 0, 0, 0]
        for m in members:
            sens, spec = m["sensitivity"], m["specificity"]
            counts[0] += sens.success_count
            counts[1] += sens.total_count - sens.success_count
            counts[2] += spec.success_count
            counts[3] += spec.total_count - spec.success_count
        assert tuple(counts) == (tp, fn, tn, fp)
        mine = f1_score(counts[0], counts[0] + counts[1], counts[0] + counts[3])
        # chart-review prints "-" where TP is 0; chartscore's F1 is 0 there (both sides name
        # the sublabel, none agree): the one documented difference in these tables.
        assert _shown(mine) == (0.0 if f1 is None else f1)


def test_sublabels_without_declared_labels_leave_free_text_out() -> None:
    # Undeclared, a text area's value (here a date) is never a label: free text may be a
    # patient value. The rest is chart-review's table.
    imported, report = _sublabels()
    part = report.by_field["labels"]  # type: ignore[attr-defined]
    assert "deceased|deceased datetime|11/12/25" not in part.labels
    assert imported.counts["labels_dropped"] == 2  # type: ignore[attr-defined]
    assert sorted(part.labels) == sorted(
        label.lower() for label in SUBLABELS_ROWS if "Datetime" not in label
    )
    assert part.macro_f1 == SUBLABELS_MACRO_F1


def _mcnemar(path: Path, labels: list[str] | None = None) -> dict[str, tuple[int, ...]]:
    """(BC, OL, OR, BW) per label and pooled, from chartscore's paired comparison.

    alice is gold; bob and carla are raters of one import, so that the labels are those any
    of the three used, as chart-review's ``mcnemar`` has them.
    """
    imported = import_labelstudio(
        path,
        gold_annotator="alice",
        raters=["bob", "carla"],
        config=THREE,
        labels=labels,
        per_label=True,
    )
    bob, carla = imported.raters
    comparison = compare(imported.gold, bob, carla, schema=imported.schema)
    names = {f"labels.{label_segment(label)}": label for label in (labels or list("ABC"))}
    found: dict[str, tuple[int, ...]] = {}
    slices = {"*": comparison.by_field_type["boolean"], **comparison.by_field}
    for key, part in slices.items():
        cells = part.paired["normalized_agreement"].cells
        found[names.get(key, key)] = (
            cells.both,
            cells.baseline_only,
            cells.candidate_only,
            cells.neither,
        )
    return found


def test_many_notes_mcnemar_counts() -> None:
    assert _mcnemar(MANY_NOTES) == MANY_NOTES_MCNEMAR


def test_sublabels_mcnemar_counts() -> None:
    assert _mcnemar(SUBLABELS, SUBLABELS_DECLARED) == SUBLABELS_MCNEMAR


def test_every_annotator_as_a_rater_file_for_agree(tmp_path: Path) -> None:
    # chart-review's three annotators of many-notes as rater files, which chartscore agree reads.
    out, err = io.StringIO(), io.StringIO()
    argv = ["import", "labelstudio", "--export", str(MANY_NOTES), "--config", str(THREE)]
    argv += ["--per-label", "--schema-out", str(tmp_path / "schema.json")]
    for name in ("alice", "bob", "carla"):
        argv += ["--rater-out", f"{name}={tmp_path / name}.jsonl"]
    assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
    assert err.getvalue() == (
        "chartscore: fields: 3\n"
        "chartscore: rater 1: 150 rows for 50 cases\n"
        "chartscore: rater 2: 150 rows for 50 cases\n"
        "chartscore: rater 3: 150 rows for 50 cases\n"
    )
    agreement = tmp_path / "agreement.json"
    argv = ["agree", "--schema", str(tmp_path / "schema.json"), "--out", str(agreement)]
    argv += ["--raters", *(str(tmp_path / f"{name}.jsonl") for name in ("alice", "bob", "carla"))]
    assert main(argv, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    document = json.loads(agreement.read_text())
    assert document["format"] == "chartscore.agreement"


@pytest.mark.parametrize(
    ("tp", "fn", "tn", "fp", "published"),
    [
        (20, 5, 15, 10, 0.4),
        (45, 15, 15, 25, 0.1304),
        (25, 35, 35, 5, 0.2593),
        (15, 6, 26, 9, 0.4444),
    ],
)
def test_pooled_kappa_gives_chart_reviews_kappa_examples(
    tp: int, fn: int, tn: int, fp: int, published: float
) -> None:
    # chart-review's tests/test_agree.py, test_kappa_score (its examples from Wikipedia's
    # "Cohen's kappa" and table 2 of PubMed 12474424), rounded to 4 places as it does.
    found = pooled_kappa(tp, fn, tn, fp)
    assert found is not None and round(found, 4) == published
