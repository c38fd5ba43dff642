"""A two-cohort run of benchmarks/references.py: every metric within its reference's tolerance.

The benchmark itself (200 cohorts) is what the closing note of issue 23 quotes; this only keeps
it working and checks that its comparison can fail.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "references.py"


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chartscore_references", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_cohorts_match_every_reference() -> None:
    table = _benchmark().run(2, 1)
    assert table.failures() == []
    compared = {name: row[1] for name, row in table.rows.items()}
    # Every metric of issue 23 was compared at least once (none only "undefined on both sides").
    for name in (
        "sensitivity",
        "specificity",
        "ppv",
        "npv",
        "f1",
        "macro_f1",
        "micro_f1",
        "Wilson interval",
        "kappa interval",
        "Gwet AC2 interval",
        "alpha (interval) interval",
        "mean_signed_error interval",
        "Bland-Altman limits",
        "chance level",
        "uncertainty_auroc interval",
        "brier_score",
        "risk_coverage counts",
        "chart-review cold rows",
        "Gwet AC2 published SE",
        "uncertainty_auroc SE published",
    ):
        assert compared[name] > 0, name


def test_the_comparison_can_fail() -> None:
    table = _benchmark().Table()
    table.compare("m", "ref", 0.5, 0.5)
    table.compare("undefined", "ref", None, math.nan)
    assert table.failures() == [] and table.rows["undefined"][1] == 0
    table.compare("m", "ref", 0.5, 0.5 + 1e-6)
    table.compare("one-sided", "ref", None, 0.25)
    assert table.failures() == ["m", "one-sided"]
