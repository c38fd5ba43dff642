"""Sharing a comparison (issue 22 item 4): the paired model, the audit, the bounds, the command.

Small cohorts of two fields (a boolean and a categorical one) scored by two invented
systems: ``chartscore share --gold --baseline --candidate`` must write a document whose
audit passes, whose published numbers are the full comparison's, in which no published
nonzero number has fewer than ``min_cell`` cases and no hidden one is pinned from 1 to
``min_cell - 1``, and which fails its audit once edited by hand.
"""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore.cli import main
from chartscore.disclosure.attack import audit_comparison
from chartscore.disclosure.comparison_model import (
    ComparisonModel,
    _state_hit,
    _state_trial,
    paired_classes,
    quantity_cells,
)
from chartscore.disclosure.comparison_model import comparison_values as published_values
from chartscore.disclosure.ranges import RangeSolver
from chartscore.documents import shared_comparison
from chartscore.documents.comparison import Comparison
from chartscore.documents.shared_comparison import (
    NEWCOMBE_BOUND,
    SharedComparison,
    difference_bound,
)
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.scoring.comparison_cases import _hit, _trial, comparison_case_counts
from chartscore.stats.binomial import Z95, wilson_interval
from chartscore.stats.paired import newcombe_difference
from chartscore.workflows.compare import paired_scorer

from helpers import examples, write_jsonl

MIN_CELL = 11
CANARY_CASE = "zq-canary-case-"
CANARY_VALUE = "canary-choice-"

_FIELDS = (
    ("dx.flag", "boolean", [True, False]),
    ("hx.kind", "categorical", [f"{CANARY_VALUE}{i}" for i in range(3)]),
)


def write_cohort(where: Path, cases: int, seed: int) -> tuple[Path, Path, Path]:
    """Gold and two systems' predictions for ``cases`` charts (canary ids and values)."""
    rnd = random.Random(seed)
    gold, baseline, candidate = [], [], []
    for number in range(cases):
        case_id = f"{CANARY_CASE}{number:04d}"
        for field_id, field_type, choices in _FIELDS:
            value = None if rnd.random() < 0.2 else rnd.choice(choices)
            gold.append(
                {"case_id": case_id, "field_id": field_id, "field_type": field_type, "value": value}
            )
            for rows, skill in ((baseline, 0.75), (candidate, 0.85)):
                draw = rnd.random()
                if draw < 0.05:
                    continue  # missing
                answer = None if draw < 0.12 else value
                if (answer is None and draw >= 0.12) or rnd.random() > skill:
                    answer = rnd.choice(choices)
                rows.append({"case_id": case_id, "field_id": field_id, "value": answer})
    return (
        write_jsonl(where / "gold.jsonl", gold),
        write_jsonl(where / "baseline.jsonl", baseline),
        write_jsonl(where / "candidate.jsonl", candidate),
    )


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def share_cohort(tmp_path: Path, cases: int, seed: int) -> tuple[int, str, str, Path]:
    gold, baseline, candidate = write_cohort(tmp_path, cases, seed)
    out = tmp_path / "shared_comparison.json"
    argv = ["share", "--gold", str(gold), "--baseline", str(baseline)]
    argv += ["--candidate", str(candidate), "--out", str(out)]
    status, stdout, stderr = run(argv)
    return status, stdout, stderr, out


def inside(tmp_path: Path) -> tuple[Comparison, dict[tuple[str, str, str], int], dict[str, str]]:
    """The full comparison and the distinct cases, computed as share does."""
    scorer = paired_scorer(
        tmp_path / "gold.jsonl", tmp_path / "baseline.jsonl", tmp_path / "candidate.jsonl"
    )
    comparison = Comparison.from_tally(scorer.paired_tally())
    rows = scorer.paired_rows()
    return (
        comparison,
        comparison_case_counts(rows),
        {field_id: field_type for field_id, (field_type, _) in rows.items()},
    )


@pytest.fixture(scope="module")
def cohort(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """One shared cohort (40 charts) for the tests that read it: (dir, file, stdout, stderr)."""
    where = tmp_path_factory.mktemp("cohort")
    status, stdout, stderr, out = share_cohort(where, 40, 3)
    assert status == 0, stderr
    return where, out, stdout, stderr


def check_shared(tmp_path: Path, document: str) -> None:
    """The issue's "done when" on one shared comparison."""
    shared = SharedComparison.from_json(document)
    comparison, cases, field_types = inside(tmp_path)
    model = ComparisonModel(field_types)
    values = published_values(shared, model)
    full = published_values(
        SharedComparison.from_json(document.replace("null", "null")), model
    )  # the same reading twice: deterministic
    assert values == full
    hidden = 0
    for key, value in values.items():
        if value is None:
            hidden += 1
            continue
        assert value == 0 or cases[key] >= MIN_CELL, key  # no small cell shown
    assert hidden > 0
    verdict = audit_comparison(document)
    assert verdict.passed
    for row in verdict.rows:
        assert row.lo is not None
        # nothing pinned below min cell: every hidden quantity's range reaches 0 or min cell
        pinned = row.lo >= 1 and row.hi is not None and row.hi < MIN_CELL
        assert not pinned, row
        true = cases.get((row.slice_kind, row.slice_name, row.name))
        if true is not None and 1 <= true < MIN_CELL:
            assert row.lo != row.hi, row  # a sensitive quantity is never derivable
    # The published numbers are the full comparison's.
    overall = comparison.overall
    for metric, item in shared.overall.paired.items():
        paired = overall.paired[metric]
        if item.baseline_only is not None:
            assert item.baseline_only == paired.baseline_only
        if item.candidate.success_count is not None:
            assert item.candidate.success_count == paired.candidate.success_count


def test_a_shared_comparison_passes_its_audit(cohort: tuple[Path, Path, str, str]) -> None:
    where, out, stdout, stderr = cohort
    document = out.read_text(encoding="utf-8")
    check_shared(where, document)
    assert "numbers of the comparison suppressed (min cell 11); the audit passed" in stderr
    shared = SharedComparison.from_json(document)
    items = [item for _, _, part in shared.slices() for item in part.paired.values()]
    shown = sum(item.result is not None for item in items)
    bounded = sum(item.difference_bound is not None for item in items)
    assert f"differences shown {shown}/{len(items)}, bounded {bounded};" in stderr
    verdict = audit_comparison(document)
    assert "audit PASS" in verdict.table()
    # A derived quantity's range (read off its one hidden term's) is the solver's own.
    model = ComparisonModel(shared.disclosure.field_types)
    values = published_values(shared, model)
    published = {
        k: v for k, v in values.items() if v is not None and not model.quantities[k].derived
    }
    solver = RangeSolver(model, published)
    derived = [
        (key, (row.lo, row.hi))
        for row in verdict.rows
        if model.quantities[key := (row.slice_kind, row.slice_name, row.name)].derived
    ]
    assert derived
    for key, proven in derived:
        assert solver.range_of(model.quantities[key].form) == proven, key
    # Their own identities: which system, which paired cell.
    table = verdict.table()
    assert "exact_agreement.baseline_only" in table or "exact_agreement.candidate_only" in table
    for text in (document, stdout, stderr, table):
        assert CANARY_CASE not in text
        assert CANARY_VALUE not in text


SMALL = settings(
    max_examples=examples(8, least=1),  # each share takes seconds: the exact choice
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@SMALL
@given(cases=st.integers(12, 30), seed=st.integers(0, 10_000))
def test_small_cohorts_pin_nothing_below_min_cell(tmp_path: Path, cases: int, seed: int) -> None:
    where = tmp_path / f"c{cases}-{seed}"
    where.mkdir()
    status, _, stderr, out = share_cohort(where, cases, seed)
    assert status == 0, stderr
    check_shared(where, out.read_text(encoding="utf-8"))


def test_a_hand_edited_shared_comparison_fails(
    tmp_path: Path, cohort: tuple[Path, Path, str, str]
) -> None:
    where, out, _, _ = cohort
    document = json.loads(out.read_text(encoding="utf-8"))
    # A count range widened by one: stale or edited (range_wide).
    edited = None
    slices = [document["overall"], *document["by_field"].values()]
    slices += list(document["by_field_type"].values())
    for part in slices:
        for counts in (part, part["baseline_counts"], part["candidate_counts"]):
            for name, value in counts.items():
                if edited is None and name.endswith("_count_range"):
                    if value[0] > 0:
                        value[0] -= 1
                    elif value[1] is not None:
                        value[1] += 1
                    else:
                        continue
                    edited = name
    assert edited is not None
    wide = tmp_path / "wide.json"
    wide.write_text(json.dumps(document), encoding="utf-8")
    status, table, _ = run(["audit", str(wide)])
    assert status == 4
    assert "range_wide" in table
    # A suppressed discordant count filled back in: the reader or the audit refuses it.
    comparison, _, _ = inside(where)
    document = json.loads(out.read_text(encoding="utf-8"))
    filled = False
    for field_id, part in document["by_field"].items():
        for metric, item in part.items():
            if isinstance(item, dict) and item.get("candidate_only", 0) is None:
                item["candidate_only"] = comparison.by_field[field_id].paired[metric].candidate_only
                del item["candidate_only_range"]
                filled = True
                break
        if filled:
            break
    assert filled
    document["disclosure"]["suppressed_count"] -= 1
    refilled = tmp_path / "refilled.json"
    refilled.write_text(json.dumps(document), encoding="utf-8")
    status, table, _ = run(["audit", str(refilled)])
    assert status != 0
    assert "audit PASS" not in table


def _brute(
    total: int, sb: tuple[int, int], sc: tuple[int, int], b: tuple[int, int], c: tuple[int, int]
) -> tuple[float, float]:
    lower, upper = 1.0, -1.0
    for both in range(total + 1):
        for bo in range(b[0], b[1] + 1):
            for co in range(c[0], c[1] + 1):
                neither = total - both - bo - co
                if (
                    neither < 0
                    or not sb[0] <= both + bo <= sb[1]
                    or not sc[0] <= both + co <= sc[1]
                ):
                    continue
                found = newcombe_difference(both, co, bo, neither)
                assert found is not None
                lower, upper = min(lower, found[1][0]), max(upper, found[1][1])
    return lower, upper


def test_difference_bound_by_hand() -> None:
    # 20 trials, baseline 12 successes, candidate 14, discordant counts hidden in [0, 3] and
    # [2, 5]: both = 12 - b = 14 - c, so (b, c) is (0, 2), (1, 3), (2, 4) or (3, 5).
    bound = difference_bound((20, 20), (12, 12), (14, 14), (0, 3), (2, 5), pooled=False)
    assert bound is not None and bound.kind == NEWCOMBE_BOUND
    tables = [(12 - b, b, b + 2, 20 - (12 - b) - b - (b + 2)) for b in range(4)]
    intervals = []
    for both, b, c, neither in tables:
        found = newcombe_difference(both, c, b, neither)
        assert found is not None
        intervals.append(found[1])
    assert bound.lower == min(low for low, _ in intervals)
    assert bound.upper == max(high for _, high in intervals)
    assert (bound.lower, bound.upper) == _brute(20, (12, 12), (14, 14), (0, 3), (2, 5))
    # The observed difference is 2/20 in every table; the bound holds each table's interval.
    assert bound.lower < 0.1 < bound.upper


def test_pooled_difference_range_by_hand() -> None:
    # (c - b) / n with n in [40, 50], b in [0, 4], c in [6, 9]: from 2/50 to 9/40.
    bound = difference_bound((40, 50), (20, 30), (22, 35), (0, 4), (6, 9), pooled=True)
    assert bound is not None and bound.kind == "difference_range"
    assert (bound.lower, bound.upper) == (2 / 50, 9 / 40)


@settings(max_examples=examples(200), deadline=None)
@given(
    cells=st.lists(st.integers(0, 12), min_size=4, max_size=4),
    slack=st.lists(st.integers(0, 3), min_size=8, max_size=8),
)
def test_difference_bound_holds_the_true_interval(cells: list[int], slack: list[int]) -> None:
    both, b, c, neither = cells
    n = sum(cells)
    if n == 0:
        return
    ranges = [
        (max(0, both + b - slack[0]), both + b + slack[1]),
        (max(0, both + c - slack[2]), both + c + slack[3]),
        (max(0, b - slack[4]), b + slack[5]),
        (max(0, c - slack[6]), c + slack[7]),
    ]
    bound = difference_bound((n, n), *ranges, pooled=False)
    found = newcombe_difference(both, c, b, neither)
    assert bound is not None and found is not None
    assert bound.lower <= found[1][0] and found[1][1] <= bound.upper
    assert (bound.lower, bound.upper) == _brute(n, *ranges)
    # The outer bound (the Wilson ends' differences) holds Newcombe's interval too.
    first, second = wilson_interval(both + c, n), wilson_interval(both + b, n)
    assert first is not None and second is not None
    assert first[0] - second[1] <= found[1][0] + 1e-12
    assert found[1][1] <= first[1] - second[0] + 1e-12


_RANGE = st.tuples(st.integers(0, 14), st.integers(0, 4)).map(lambda t: (t[0], t[0] + t[1]))


def _uncached(*ranges: tuple[int, int], pooled: bool, z: float) -> object:
    # difference_bound computed with neither of its caches: the answer or the error's type.
    with pytest.MonkeyPatch.context() as patch:
        plain = shared_comparison._newcombe_interval.__wrapped__
        patch.setattr(shared_comparison, "_newcombe_interval", plain)
        try:
            return shared_comparison._proven_difference.__wrapped__(ranges, pooled, z)
        except ValueError:
            return ValueError


def _cached(*ranges: tuple[int, int], pooled: bool, z: float) -> object:
    try:
        return difference_bound(*ranges, pooled=pooled, z=z)
    except ValueError:
        return ValueError


@settings(max_examples=examples(200), deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.lists(_RANGE, min_size=5, max_size=5),
            st.booleans(),
            st.sampled_from([Z95, 1.6448536269514722, 2.5758293035489004]),
        ),
        min_size=1,
        max_size=6,
    ),
    clear=st.booleans(),
)
def test_difference_bound_cached_equals_uncached(
    calls: list[tuple[list[tuple[int, int]], bool, float]], clear: bool
) -> None:
    # The caches key on every argument (ranges, pooled, z): the same ranges asked again with
    # another level or kind, cold or warm, give what a fresh computation gives.
    if clear:
        shared_comparison._proven_difference.cache_clear()
        shared_comparison._newcombe_interval.cache_clear()
    for ranges, pooled, z in calls + calls[::-1]:
        expected = _uncached(*ranges, pooled=pooled, z=z)
        assert _cached(*ranges, pooled=pooled, z=z) == expected
        assert _cached(*ranges, pooled=not pooled, z=z) == _uncached(
            *ranges, pooled=not pooled, z=z
        )


def test_difference_bound_checks_before_it_remembers() -> None:
    # A bool is not a count even when the equal int ranges' answer is cached.
    assert difference_bound((1, 1), (1, 1), (1, 1), (0, 0), (0, 0), pooled=False) is not None
    with pytest.raises(ValueError, match="integers"):
        difference_bound((True, True), (1, 1), (1, 1), (0, 0), (0, 0), pooled=False)


@settings(max_examples=examples(50), deadline=None)
@given(
    types=st.dictionaries(
        st.sampled_from(["f1", "f2", "f3", "g", "h"]),
        st.sampled_from(["text", "boolean", "number", "date", "categorical", "ordinal", "multi"]),
        min_size=1,
    )
)
def test_comparison_model_forms_cached_equal_fresh(types: dict[str, str]) -> None:
    # The remembered per-type cells give every field the forms the cell tests give afresh.
    model = ComparisonModel(types)
    cells = quantity_cells()
    for field_id, classes in model.classes.items():
        offset = model.layouts[field_id].offset
        assert classes == paired_classes(types[field_id])
        for name, (cell, derived) in cells.items():
            fresh = tuple(
                (offset + index, 1)
                for index, (answerable, b, c) in enumerate(classes)
                if cell.counts(_state_trial, _state_hit, (answerable, b), (answerable, c))
            )
            quantity = model.quantities["field", field_id, name]
            assert (quantity.form, quantity.derived) == (fresh, derived)


def _case_counts_row_by_row(
    rows: dict[str, tuple[str, dict[str, tuple[int, int]]]],
) -> dict[tuple[str, str, str], int]:
    # comparison_case_counts as it was: every row's masks tested, no grouping by pair.
    cells = quantity_cells()
    out: dict[tuple[str, str, str], int] = {}
    pooled: dict[tuple[str, str, str], set[str]] = {}
    for field_id, (field_type, pairs) in sorted(rows.items()):
        for name, (cell, _) in cells.items():
            found = [c for c, (b, d) in pairs.items() if cell.counts(_trial, _hit, b, d)]
            out["field", field_id, name] = len(found)
            pooled.setdefault(("overall", "", name), set()).update(found)
            pooled.setdefault(("field_type", field_type, name), set()).update(found)
    return out | {key: len(cases) for key, cases in pooled.items()}


@settings(max_examples=examples(50), deadline=None)
@given(
    rows=st.dictionaries(
        st.sampled_from(["f1", "f2", "g"]),
        st.tuples(
            st.sampled_from(["text", "boolean", "number"]),
            st.dictionaries(
                st.sampled_from([f"c{i}" for i in range(12)]),
                st.tuples(st.integers(0, 2**12 - 1), st.integers(0, 2**12 - 1)),
            ),
        ),
        min_size=1,
    )
)
def test_case_counts_by_pair_equal_row_by_row(
    rows: dict[str, tuple[str, dict[str, tuple[int, int]]]],
) -> None:
    # Testing each distinct pair of masks once counts the same cases as testing every row.
    assert comparison_case_counts(rows) == _case_counts_row_by_row(rows)


def test_reading_refuses_a_bound_its_ranges_do_not_give(
    cohort: tuple[Path, Path, str, str],
) -> None:
    _, out, _, _ = cohort
    document = json.loads(out.read_text(encoding="utf-8"))
    changed = False
    for part in document["by_field"].values():
        for item in part.values():
            if isinstance(item, dict) and "bound" in item.get("difference", {}):
                item["difference"]["bound"]["lower"] = (
                    -1.0 if item["difference"]["bound"]["lower"] > -1.0 else -0.5
                )
                changed = True
                break
        if changed:
            break
    assert changed
    with pytest.raises(ChartscoreError) as caught:
        SharedComparison.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT


def test_share_refuses_predictions_with_both_systems(tmp_path: Path) -> None:
    gold, baseline, candidate = write_cohort(tmp_path, 12, 1)
    argv = [
        "share",
        "--gold",
        str(gold),
        "--baseline",
        str(baseline),
        "--predictions",
        str(candidate),
    ]
    status, _, stderr = run(argv)
    assert status != 0
    assert "--predictions" in stderr


def _first(document: SharedComparison, *, shown: bool) -> tuple[str, str]:
    """A slice (as gates name it) and paired metric whose difference is shown (or bounded)."""
    slices = [(f"field:{k}", v) for k, v in sorted(document.by_field.items())]
    slices += [(f"type:{k}", v) for k, v in sorted(document.by_field_type.items())]
    slices.append(("overall", document.overall))
    for where, part in slices:
        for metric, item in part.paired.items():
            if shown and item.result is not None and item.result.interval is not None:
                return where, metric
            if not shown and where.startswith("field:") and item.difference_bound is not None:
                return where, metric
    raise AssertionError("no such metric")


def test_gates_read_the_bounded_difference(
    tmp_path: Path, cohort: tuple[Path, Path, str, str]
) -> None:
    where_cohort, out, _, _ = cohort
    shared = SharedComparison.from_json(out.read_text(encoding="utf-8"))
    where, metric = _first(shared, shown=False)
    bound = shared.by_field[where[6:]].paired[metric].difference_bound
    assert bound is not None and bound.kind == NEWCOMBE_BOUND
    gates = tmp_path / "gates.toml"
    gates.write_text(
        "\n".join(
            [
                f'[[gate]]\nslice = "{where}"\nmetric = "{metric}"\n'
                f"min_difference_lower = {bound.lower!r}\n",
                f'[[gate]]\nslice = "{where}"\nmetric = "{metric}"\n'
                f"min_difference_lower = {bound.lower + 1e-9!r}\n",
                '[[gate]]\nslice = "overall"\nmetric = "exact_agreement"\nmin_lower = 0.0\n',
            ]
        ),
        encoding="utf-8",
    )
    status, table, _ = run(["gate", str(out), "--gates", str(gates)])
    lines = table.splitlines()
    rows = {line.split()[0]: line for line in lines[1:4]}
    assert status == 3  # the second gate: the bound does not clear a margin above it
    assert "newcombe bound" in rows["1"] and rows["1"].endswith("pass")
    assert "newcombe bound" in rows["2"] and rows["2"].endswith("FAIL")
    assert any(line.startswith("newcombe bound: a suppressed difference") for line in lines)
    # A shown difference reads Newcombe's interval as on a comparison (clustered if pooled):
    # two systems that answer every row as gold does (no discordant rows) show everything.
    perfect = tmp_path / "perfect"
    perfect.mkdir()
    gold_rows = [
        json.loads(line) for line in (where_cohort / "gold.jsonl").read_text().splitlines()
    ]
    answers = [{k: row[k] for k in ("case_id", "field_id", "value")} for row in gold_rows]
    for name in ("gold", "baseline", "candidate"):
        write_jsonl(perfect / f"{name}.jsonl", gold_rows if name == "gold" else answers)
    argv = ["share", "--gold", str(perfect / "gold.jsonl"), "--baseline"]
    argv += [str(perfect / "baseline.jsonl"), "--candidate", str(perfect / "candidate.jsonl")]
    argv += ["--out", str(perfect / "shared.json")]
    assert run(argv)[0] == 0
    shown = SharedComparison.from_json((perfect / "shared.json").read_text(encoding="utf-8"))
    where, metric = _first(shown, shown=True)
    gates.write_text(
        f'[[gate]]\nslice = "{where}"\nmetric = "{metric}"\nmin_difference_lower = -1.0\n',
        encoding="utf-8",
    )
    status, table, _ = run(["gate", str(perfect / "shared.json"), "--gates", str(gates)])
    assert status == 0
    assert "newcombe" in table.splitlines()[1] and "bound" not in table.splitlines()[1]
    # A metric the shared comparison withholds is missing, not failed.
    gates.write_text(
        '[[gate]]\nslice = "overall"\nmetric = "evidence_support"\nmin_lower = 0.5\n',
        encoding="utf-8",
    )
    status, _, stderr = run(["gate", str(out), "--gates", str(gates)])
    assert status == 1
    assert "gate_metric_missing" in stderr


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "html", "summary"])
def test_a_shared_comparison_renders(cohort: tuple[Path, Path, str, str], fmt: str) -> None:
    _, out, _, _ = cohort
    status, text, stderr = run(["render", str(out), "--format", fmt])
    assert status == 0, stderr
    assert "suppressed" in text
    assert CANARY_CASE not in text and CANARY_VALUE not in text
    if fmt == "table":
        assert "pp (95% bounds)" in text or "(provable range)" in text
    if fmt == "summary":  # a withheld difference reads its bound, in short
        assert re.search(r"  \[[-+]?[0-9.]+, [-+]?[0-9.]+\] pp  ", text)
