"""Both cores: a forked child answers half the questions; the answers are the one-process ones.

``chartscore.disclosure.split.answers`` must return exactly ``[question(item) ...]`` in order,
whichever process answered; a child that fails must leave no trace (no message, no process)
and its half is answered here; an error here is raised as one process would raise it.
"""

from __future__ import annotations

import os
import random

import pytest

import chartscore.disclosure.attack as attack_module
import chartscore.disclosure.suppress as suppress_module
from chartscore.disclosure import audit, split
from chartscore.workflows.share import share
from disclosure_reference import build_cohort

from helpers import thorough_only

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")

CANARY = "split-canary-4417"


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_answers_come_back_in_order_from_both_processes() -> None:
    here = os.getpid()
    answered = split.answers(lambda n: (n * n, os.getpid()), list(range(100)), worth=True)
    assert [value for value, _ in answered] == [n * n for n in range(100)]
    pids = [pid for _, pid in answered]
    assert pids[:50] == [here] * 50  # the first half here, the second in one child
    assert len(set(pids[50:])) == 1 and pids[50] != here
    assert no_children_left()


def test_small_or_unwanted_work_stays_in_one_process() -> None:
    here = os.getpid()
    few = split.answers(lambda n: os.getpid(), list(range(split.MIN_QUESTIONS - 1)), worth=True)
    unwanted = split.answers(lambda n: os.getpid(), list(range(200)), worth=False)
    assert set(few) == {here} and set(unwanted) == {here}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(split, "ENABLED", False)
        assert set(split.answers(lambda n: os.getpid(), list(range(200)), worth=True)) == {here}


def test_a_failing_child_leaves_no_trace_and_its_half_is_answered_here(
    capfd: pytest.CaptureFixture[str],
) -> None:
    here = os.getpid()

    def question(n: int) -> int:
        if os.getpid() != here:
            raise ValueError(f"{CANARY} {n}")  # only in the child
        return n + 1

    assert split.answers(question, list(range(80)), worth=True) == list(range(1, 81))
    out, err = capfd.readouterr()
    assert CANARY not in out and CANARY not in err
    assert no_children_left()


def test_an_error_here_is_raised_as_one_process_raises_it_and_the_child_is_ended() -> None:
    def question(n: int) -> int:
        if n == 3:
            raise KeyError(n)
        return n

    with pytest.raises(KeyError):
        split.answers(question, list(range(80)), worth=True)
    assert no_children_left()


@thorough_only("shares and audits on one process and on two (about 4 s)")
def test_the_audit_and_share_give_the_same_bytes_on_two_processes() -> None:
    rng = random.Random(7)
    types = ["multi", "boolean", "categorical", "number"]
    made = build_cohort(rng.choice, types, 30)
    gold, predictions = made.records()
    schema = made.schema_document()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(split, "ENABLED", False)
        one = share(gold, predictions, schema=schema, min_cell=11).to_json()
        one_rows = audit(one).rows
    with pytest.MonkeyPatch.context() as patch:  # every solver counts as wide, 2 questions do
        patch.setattr(attack_module, "_WIDE", 0)
        patch.setattr(suppress_module, "_WIDE", 0)
        patch.setattr(split, "MIN_QUESTIONS", 2)
        two = share(gold, predictions, schema=schema, min_cell=11).to_json()
        two_rows = audit(one).rows
    assert two == one
    assert two_rows == one_rows
    assert len(one_rows) >= 4  # enough hidden numbers for both processes to answer some
    assert no_children_left()
