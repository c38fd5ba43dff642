"""The publication's joint choice: complementary cells chosen on the joint model.

docs/disclosure.md, "One publication". Where the products held together pin a hidden number,
:func:`chartscore.disclosure.joint_choice.joint_choice` picks the further numbers to hide on
the joint model the outsider attacks. What it picks must end every joint leak (checked by the
outsider's own audit on the products rebuilt with those numbers hidden), give a gold-only
number one decision, and be the same whatever the hash seed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("scipy")

from chartscore import compare, score
from chartscore.disclosure import joint_choice as joint_choice_module
from chartscore.disclosure.comparison_model import ComparisonModel, comparison_values, derived_terms
from chartscore.disclosure.joint_choice import STEPS, joint_choice
from chartscore.disclosure.model import model_of
from chartscore.disclosure.publication import audit_publication, gold_only_keys
from chartscore.disclosure.suppress import _with_figures
from chartscore.documents.shared_comparison import SharedComparison, build_shared_comparison
from chartscore.documents.shared_figures import AGREED_Q, DISAGREED_Q
from chartscore.documents.shared_quantities import FAILURES, published_values
from chartscore.documents.shared_report import Key, SharedReport, shared_from_report
from test_publication import SCHEMA, _cohort
from test_publication_comparison import MIN_CELL, SYSTEMS, TYPES, _products

from helpers import examples, thorough_only

Products = list[SharedReport | SharedComparison]


def _rebuilt(cases: int, seed: int, products: Products, extra: list[set[Key]]) -> Products:
    # The same products with each one's extra numbers hidden too (no suppression: exactly
    # what the choice says, so the audit below judges the choice alone).
    gold, first, second = _cohort(cases, seed)
    out: Products = []
    for predictions, product, more in zip((first, second), products, extra, strict=False):
        hidden = {key for key, value in product.numbers() if value is None} | more
        report = score(gold, predictions, schema=SCHEMA)
        document = _with_figures(report.core().to_dict(), report)
        out.append(shared_from_report(document, TYPES, MIN_CELL, hidden, set(), figures={}))
    comparison = compare(gold, first, second, schema=SCHEMA)
    hidden = {key for key, value in products[2].numbers() if value is None} | extra[2]
    out.append(build_shared_comparison(comparison, TYPES, MIN_CELL, hidden))
    return out


def _term_to_hide(product: SharedReport | SharedComparison, key: Key) -> Key:
    # A published number a derived quantity follows from (hiding it hides the quantity).
    kind, name, label = key
    if isinstance(product, SharedComparison):
        return (kind, name, derived_terms(label)[-1][0])
    if label == DISAGREED_Q:
        return (kind, name, AGREED_Q)
    assert label.endswith(f".{FAILURES}")
    return (kind, name, f"{label.removesuffix(FAILURES)}success_count")


def _own_rule_kept(cases: int, seed: int, products: Products) -> Products:
    """The random pattern with what each product's own audit never leaves: a derived
    quantity (failures, a paired table's cell) that its shown numbers give as 1..min cell - 1.

    The joint choice is given products that pass their own audits, so a number it hides
    was never shown small: it asks the numbers it hides, not the derived ones they hide.
    """
    more: list[set[Key]] = []
    for product in products:
        if isinstance(product, SharedReport):
            known = published_values(product)
        else:
            known = comparison_values(product, ComparisonModel(TYPES))
        shown = dict(product.numbers())
        more.append(
            {
                _term_to_hide(product, key)
                for key, value in known.items()
                if key not in shown and value is not None and 1 <= value < MIN_CELL
            }
        )
    return _rebuilt(cases, seed, products, more)


def _values(truths: list[dict[Key, int | None]]) -> list[dict[Key, int]]:
    return [{key: value for key, value in truth.items() if value is not None} for truth in truths]


def _gold_keys(products: Products) -> frozenset[Key]:
    assert isinstance(products[0], SharedReport)
    return gold_only_keys(model_of(products[0]))


def _leaking() -> tuple[Products, list[dict[Key, int]]]:
    # The pinned missing count of test_publication_comparison: A hides a field (and where it
    # pools), B its gold counts; the comparison shows both systems' missing counts.
    from test_publication_comparison import _hidden_report

    products, truths = _products(30, 7, 0.0)
    gold, first, second = _cohort(30, 7)
    slices = [("field", "hx.smoking"), ("field_type", "categorical"), ("overall", "")]
    a = _hidden_report(first, gold, {key for key, _ in products[0].numbers() if key[:2] in slices})
    gold_counts = ("unanswerable_count", "answerable_count")
    b = _hidden_report(second, gold, {(*where, c) for where in slices for c in gold_counts})
    return [a, b, products[2]], _values(truths)


def test_the_joint_choice_ends_a_joint_leak() -> None:
    products, values = _leaking()
    assert not audit_publication(products, SYSTEMS).passed  # the leak the choice must end
    found = joint_choice(products, SYSTEMS, values, _gold_keys(products))
    assert found.leaks and found.extra is not None
    assert any(found.extra), "something more is hidden"
    rebuilt = _rebuilt(30, 7, products, found.extra)
    result = audit_publication(rebuilt, SYSTEMS)
    assert all(row.passed for row in result.rows)
    again = joint_choice(rebuilt, SYSTEMS, values, _gold_keys(rebuilt))
    assert again.leaks == [] and again.extra == [set(), set(), set()]


def test_the_joint_choice_chooses_through_the_one_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The joint choice is the one loop's (complement.complement over the joint view), not a
    loop of its own: the leaking publication hands it its pinned numbers, and what the loop
    hides ends the leak in one step."""
    calls: list[list[Any]] = []
    loop = joint_choice_module.complement

    def counted(view: Any, sensitive: Any) -> None:
        calls.append(list(sensitive))
        loop(view, sensitive)

    monkeypatch.setattr(joint_choice_module, "complement", counted)
    products, values = _leaking()
    found = joint_choice(products, SYSTEMS, values, _gold_keys(products))
    assert found.extra is not None and any(found.extra)
    assert calls == [[(row.product, row.key) for row in found.leaks]]
    assert calls[0]


def test_the_joint_choice_gives_up_after_its_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A number the attack still pins after every step: the view reports nothing exposed
    after STEPS steps (the loop ends) and the choice gives up, keeping its proofs."""
    asked: list[int] = []
    still_pinned = joint_choice_module._still_pinned

    def stuck(joint: Any, published: Any, values: Any, pending: Any) -> Any:
        asked.append(len(pending))
        found = still_pinned(joint, published, values, pending)
        assert found is not None
        return [pending[0]], found[1]

    monkeypatch.setattr(joint_choice_module, "_still_pinned", stuck)
    products, values = _leaking()
    found = joint_choice(products, SYSTEMS, values, _gold_keys(products))
    assert found.leaks and found.extra is None
    assert len(asked) == STEPS
    assert len(found.proofs) == joint_choice_module.PROOFS


def _one_decision(products: Products, extra: list[set[Key]], gold_keys: frozenset[Key]) -> None:
    # A gold-only number hidden in one product is hidden in every product that shows it.
    shown = [{key for key, value in product.numbers() if value is not None} for product in products]
    for key in {key for more in extra for key in more if key in gold_keys}:
        assert all(key not in own or key in more for own, more in zip(shown, extra, strict=True))


def test_the_joint_choice_gives_a_gold_only_number_one_decision() -> None:
    products, truths = _products(20, 0, 0.3)  # a random pattern whose choice hides gold counts
    gold_keys = _gold_keys(products)
    found = joint_choice(products, SYSTEMS, _values(truths), gold_keys)
    assert found.extra is not None
    assert any(key in gold_keys for key in found.extra[0])
    _one_decision(products, found.extra, gold_keys)


@settings(max_examples=examples(10, least=2), deadline=None)
@given(
    st.integers(min_value=12, max_value=30),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from([0.3, 0.6]),
)
# A comparison whose shown numbers gave its "neither" cell as 1 (min cell 2): the choice hid
# two of its terms and the rebuilt audit pinned the cell. No product's own audit shows it.
@example(cases=23, seed=1492, hide=0.3)
def test_whatever_it_chooses_passes_the_joint_attack(cases: int, seed: int, hide: float) -> None:
    # Random hidden patterns (with each product's own rule on derived numbers kept): where
    # the choice succeeds, the rebuilt products leak nothing together (the outsider's
    # audit); where it gives up, the caller hides whole slices.
    products, truths = _products(cases, seed, hide)
    products = _own_rule_kept(cases, seed, products)
    values = _values(truths)
    gold_keys = _gold_keys(products)
    found = joint_choice(products, SYSTEMS, values, gold_keys)
    if found.extra is None:
        assert found.leaks
        return
    _one_decision(products, found.extra, gold_keys)
    rebuilt = _rebuilt(cases, seed, products, found.extra)
    rows = audit_publication(rebuilt, SYSTEMS).rows
    assert all(row.passed for row in rows)
    for product, more in zip(rebuilt, found.extra, strict=True):
        assert all(dict(product.numbers())[key] is None for key in more)


_SCRIPT = """
import sys
sys.path[:0] = [{tests!r}]
from test_joint_choice import _gold_keys, _leaking
from test_publication_comparison import SYSTEMS
from chartscore.disclosure.joint_choice import joint_choice
products, values = _leaking()
found = joint_choice(products, SYSTEMS, values, _gold_keys(products))
print([sorted(more) for more in found.extra or []])
"""


@thorough_only("publications under several hash seeds (about 5 s)")
def test_the_joint_choice_is_the_same_under_any_hash_seed() -> None:
    tests = str(Path(__file__).parent)
    script = _SCRIPT.format(tests=tests)
    outputs: list[Any] = []
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(done.stdout)
    assert outputs[0].startswith("[[") and outputs[0] != "[]\n"
    assert outputs.count(outputs[0]) == len(outputs)


def test_a_publication_with_a_comparison_ends_its_leak_by_the_joint_choice(tmp_path: Path) -> None:
    # The workflow: the products leak together after their first suppression, the joint
    # choice ends it in one more round, and what it chose is hidden in the written products;
    # each passes its own audit, all pass the outsider's, gold-only numbers get one decision.
    from unittest import mock

    from chartscore.disclosure import audit
    from chartscore.disclosure import joint_choice as module
    from chartscore.disclosure.attack import audit_comparison
    from chartscore.workflows import publication
    from test_shared_comparison import write_cohort

    verdicts: list[Any] = []

    def spy(*args: Any) -> Any:
        verdicts.append(joint_choice(*args))
        return verdicts[-1]

    gold, baseline, candidate = write_cohort(tmp_path, 30, 5)
    with (
        mock.patch.object(publication, "FIRSTS", 1),
        mock.patch.object(module, "joint_choice", spy),
    ):
        products = publication.share_publication_files(
            gold, [baseline, candidate], comparisons=[(0, 1)]
        )
    assert len(verdicts) == 2 and verdicts[0].leaks and not verdicts[1].leaks
    chosen = verdicts[0].extra
    assert chosen is not None and any(chosen)
    for product, more in zip(products, chosen, strict=True):
        assert all(dict(product.numbers())[key] is None for key in more)
    assert audit_publication(products, SYSTEMS).passed
    a, b, paired = products
    assert isinstance(a, SharedReport) and isinstance(b, SharedReport)
    assert isinstance(paired, SharedComparison)
    assert audit(a.to_json()).passed and audit(b.to_json()).passed
    assert audit_comparison(paired).passed
    first, second = dict(a.numbers()), dict(b.numbers())
    gold_keys = _gold_keys(products) & set(first)
    assert gold_keys and all(first[key] == second[key] for key in gold_keys)


@st.composite
def _linear_programs(
    draw: Any,
) -> tuple[int, list[tuple[int, int, int]], list[int], int, list[int]]:
    # A small LP: entries (row, column, coefficient; repeats and zeros allowed), each row's
    # right-hand side, how many of the first rows are "<=" (the rest "=="), and the costs.
    width = draw(st.integers(1, 8))
    rows = draw(st.integers(1, 6))
    entry = st.tuples(st.integers(0, rows - 1), st.integers(0, width - 1), st.integers(-3, 3))
    entries = draw(st.lists(entry, max_size=30))
    targets = draw(st.lists(st.integers(-4, 12), min_size=rows, max_size=rows))
    below = draw(st.integers(0, rows))
    cost = draw(st.lists(st.integers(0, 5), min_size=width, max_size=width))
    return width, entries, targets, below, cost


@settings(max_examples=200, deadline=None)
@given(_linear_programs())
def test_the_relaxed_escape_by_the_binding_is_linprogs_point(problem: Any) -> None:
    # The joint choice solves its relaxed escapes through HiGHS's binding with the model and
    # options linprog builds: the same status and the same point, bit for bit (a different
    # optimal vertex would move other numbers and change the publication).
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_array

    from chartscore.disclosure.lp import OPTIMAL, columnwise, solve_as_linprog

    width, entries, targets, below, cost = problem
    rows, columns, data = (
        (list(part) for part in zip(*entries, strict=True)) if entries else ([], [], [])
    )
    matrix = coo_array((data, (rows, columns)), shape=(len(targets), width)).tocsr()
    c = np.asarray(cost, dtype=np.float64)
    expected = linprog(
        c,
        A_ub=matrix[:below] if below else None,
        b_ub=targets[:below] if below else None,
        A_eq=matrix[below:] if below < len(targets) else None,
        b_eq=targets[below:] if below < len(targets) else None,
        bounds=(0, None),
        method="highs",
    )
    upper = np.asarray(targets, dtype=np.float64)
    lower = upper.copy()
    lower[:below] = -np.inf
    solved = solve_as_linprog(
        width, columnwise(len(targets), width, (rows, columns, data)), lower, upper, c
    )
    assert solved is not None
    status, x = solved
    assert (status == OPTIMAL) == (expected.status == 0)
    if status == OPTIMAL:
        assert x is not None
        assert np.array_equal(x, np.asarray(expected.x))


def test_the_joint_choice_chooses_the_same_through_linprog(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the binding (the fallback: scipy.optimize.linprog), the same choice.
    from chartscore.disclosure import joint_choice as module

    products, values = _leaking()
    gold_keys = _gold_keys(products)
    direct = joint_choice(products, SYSTEMS, values, gold_keys)
    monkeypatch.setattr(module, "solve_as_linprog", lambda *args: None)
    fallback = joint_choice(products, SYSTEMS, values, gold_keys)
    assert direct.extra is not None and any(direct.extra)
    assert direct.extra == fallback.extra
    assert [(r.product, r.key) for r in direct.leaks] == [
        (r.product, r.key) for r in fallback.leaks
    ]


def _verdict(found: Any) -> tuple[list[tuple[int, Key, str]], Any]:
    return [(row.product, row.key, row.status) for row in found.leaks], found.extra


def test_a_proof_serves_only_a_region_it_holds() -> None:
    # The choice hands on what its attacks proved protected. Over the same rows the verdict
    # is the same; the leaking products have rows the choice's last check had not (what it
    # hid is shown there), so its proof of the pinned numbers must not serve them.
    products, values = _leaking()
    gold_keys = _gold_keys(products)
    first = joint_choice(products, SYSTEMS, values, gold_keys)
    assert first.leaks and first.extra is not None and len(first.proofs) >= 2
    again = joint_choice(products, SYSTEMS, values, gold_keys, first.proofs)
    assert _verdict(again) == _verdict(first)
    rebuilt = _rebuilt(30, 7, products, first.extra)
    fresh = joint_choice(rebuilt, SYSTEMS, values, _gold_keys(rebuilt))
    proven = joint_choice(rebuilt, SYSTEMS, values, _gold_keys(rebuilt), first.proofs)
    assert _verdict(proven) == _verdict(fresh) == ([], [set(), set(), set()])


@thorough_only("joint choices with and without an earlier round's proofs (about 5 s)")
@settings(max_examples=examples(10, least=2), deadline=None)
@given(
    st.integers(min_value=12, max_value=30),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from([0.3, 0.6]),
    st.floats(min_value=0.0, max_value=0.5),
)
def test_an_earlier_rounds_proofs_change_no_verdict(
    cases: int, seed: int, hide: float, more: float
) -> None:
    # Random patterns, then the same with more hidden (the next round's shape: usually
    # within every proof's rows) or less (never): the verdict with the first attack's
    # proofs is the verdict without them.
    import random

    products, truths = _products(cases, seed, hide)
    values = _values(truths)
    found = joint_choice(products, SYSTEMS, values, _gold_keys(products))
    pick = random.Random(seed)
    extra = [
        {key for key, value in product.numbers() if value is not None and pick.random() < more}
        for product in products
    ]
    for other in (_rebuilt(cases, seed, products, extra), _products(cases, seed, hide / 2)[0]):
        gold_keys = _gold_keys(other)
        plain = joint_choice(other, SYSTEMS, values, gold_keys)
        proven = joint_choice(other, SYSTEMS, values, gold_keys, found.proofs)
        assert _verdict(proven) == _verdict(plain)
