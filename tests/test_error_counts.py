"""The bounds an error magnitude puts on the nonzero errors, at the edges of a float.

An analyst's pass: answers near 1e308 (or a unit under 1e-308) made a float step of
``nonzero_bounds`` infinite, and ``share`` stopped with ``internal_error``
(``OverflowError: cannot convert float infinity to integer``).
"""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from chartscore.cli import main
from chartscore.disclosure.error_counts import DAY, nonzero_bounds
from chartscore.documents.shared_figures import SharedMagnitude

Z = 1.959963984540054


def magnitude(
    pairs: int, mae: float, bias: float, limits: tuple[float, float] | None = None
) -> SharedMagnitude:
    return SharedMagnitude(
        unit="field",
        pairs=pairs,
        gold_rows=2 * pairs,
        mean_absolute_error=mae,
        bias=bias,
        bias_interval=None,
        limits_of_agreement=limits,
        chance_level=1.0,
    )


def test_ordinary_figures_keep_their_float_bounds() -> None:
    # 20 errors of a day: ten 0, ten 5. S1 = 50, S2 = 250: 10 = S1^2 / S2 <= N <= S1 / u = 50.
    deviation = ((250 - 20 * 2.5**2) / 19) ** 0.5
    shown = magnitude(20, 2.5, 2.5, (2.5 - Z * deviation, 2.5 + Z * deviation))
    assert nonzero_bounds(shown, Z, DAY) == (10, 50)
    assert nonzero_bounds(shown, Z, None) == (10, None)
    assert nonzero_bounds(magnitude(20, 0.0, 0.0, (0.0, 0.0)), Z, DAY) == (0, 0)


@pytest.mark.parametrize(
    ("shown", "unit", "expected"),
    [
        # The mean absolute error times the pairs is beyond a float (the study's case).
        (magnitude(88, 2.5e307, -21.83), Fraction(1, 10**300), (1, None)),
        (magnitude(88, 2.5e307, -21.83), Fraction(1), (1, None)),
        # A unit that is 0.0 as a float: S1 / u divided by zero.
        (magnitude(20, 0.5, 0.1), Fraction(1, 10**400), (1, None)),
        # S1 squared over S2: infinity over infinity.
        (magnitude(20, 1e300, 0.0, (-1e308, 1e308)), None, (1, None)),
    ],
)
def test_figures_beyond_a_float_are_bounded_exactly(
    shown: SharedMagnitude, unit: Fraction | None, expected: tuple[int, int | None]
) -> None:
    assert nonzero_bounds(shown, Z, unit) == expected


def test_an_exact_upper_bound_below_the_pairs_is_kept() -> None:
    # S1 = 1e307 * 30 overflows a float; with a unit of 1e307 at most 30 errors are
    # nonzero: no bound (30 pairs). With a unit of 2e307, at most 15.
    shown = magnitude(30, 1e307, 0.0)
    assert nonzero_bounds(shown, Z, Fraction(10**307)) == (1, None)
    assert nonzero_bounds(shown, Z, Fraction(2 * 10**307)) == (1, 15)


def test_share_of_answers_near_1e308_is_no_internal_error(tmp_path: Path) -> None:
    pytest.importorskip("scipy")
    cases = [f"c{i:02d}" for i in range(60)]
    answers = [-1e308] * 13 + [1e-300] * 12 + [30 + i % 30 + 1 for i in range(25, 60)]
    gold = [
        {"case_id": case, "field_id": "echo.lvef", "field_type": "number", "value": 30 + i % 30}
        for i, case in enumerate(cases)
    ] + [
        {"case_id": case, "field_id": "hx.smoking", "field_type": "categorical",
         "value": None if i < 3 else "never"}
        for i, case in enumerate(cases)
    ]  # fmt: skip
    predictions = [
        {"case_id": case, "field_id": "echo.lvef", "value": answer}
        for case, answer in zip(cases, answers, strict=True)
    ] + [{"case_id": case, "field_id": "hx.smoking", "value": "never"} for case in cases]
    paths = []
    for name, rows in (("gold", gold), ("predictions", predictions)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        paths.append(path)
    shared = tmp_path / "shared.json"
    argv = ["share", "--gold", str(paths[0]), "--predictions", str(paths[1])]
    err = io.StringIO()
    status = main([*argv, "--out", str(shared), "--quiet"], stdout=io.StringIO(), stderr=err)
    assert status == 0 and "error" not in err.getvalue()  # was internal_error (exit 70)
    out = io.StringIO()
    assert main(["audit", str(shared)], stdout=out, stderr=io.StringIO()) == 0
    assert out.getvalue().splitlines()[-1].startswith("audit PASS")
