"""The small three-field schema the publication tests share, and each field's values."""

from __future__ import annotations

from typing import Any

SCHEMA = {
    "fields": {
        "dx.flag": {"type": "boolean"},
        "hx.smoking": {"type": "categorical"},
        "triage.acuity": {"type": "ordinal", "levels": ["1", "2", "3", "4", "5"]},
    }
}
VALUES: dict[str, list[Any]] = {
    "dx.flag": [True, False],
    "hx.smoking": ["current", "former", "never"],
    "triage.acuity": ["1", "2", "3", "4", "5"],
}
"""Each field's gold and answer values, drawn at random by the tests' cohorts."""
