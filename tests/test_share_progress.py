"""A progress bar through suppression and the audit, on a terminal only; counts only."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest

import chartscore.cli.progress as progress_module
from chartscore.cli import main
from chartscore.cli.progress import TerminalProgress
from chartscore.disclosure import audit
from chartscore.disclosure.attack import AUDITING
from chartscore.disclosure.progress import reporting
from chartscore.disclosure.suppress import CHOOSING, SUPPRESSING
from chartscore.workflows.share import share
from disclosure_reference import build_cohort
from test_sharing import cohort_files


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_stage_shows_a_bar_of_counts_and_blanks_what_a_longer_line_left() -> None:
    ticks = iter([0.0, 0.5, 1.0, 1.2, 1.6, 2.0])
    stream = FakeTerminal()
    progress = TerminalProgress(stream, clock=lambda: next(ticks))
    progress.stage("auditing", 1, 4)  # 0.5 s: too early
    progress.stage("auditing", 2, 4)  # 1.0 s: 12 of 24 marks
    progress.stage("auditing", 3, 4)  # 1.2 s: too soon after
    progress.stage("x", 4, 4)  # 1.6 s: shorter, so padded with blanks
    progress.finish()
    first = "chartscore: auditing [############............] 2/4, 1 s elapsed"
    second = "chartscore: x [########################] 4/4, 2 s elapsed"
    assert stream.getvalue() == (
        "\r" + first + "\r" + second + " " * (len(first) - len(second)) + "\n"
    )


def test_a_stage_that_has_run_a_while_estimates_the_time_left_at_its_rate_so_far() -> None:
    ticks = iter([0.0, 1.0, 2.0, 4.0, 10.0, 100.0, 200.0])
    stream = FakeTerminal()
    progress = TerminalProgress(stream, clock=lambda: next(ticks))
    progress.stage("auditing", 1, 10)  # 1 s: the stage's first line, nothing to go on
    progress.stage("auditing", 2, 10)  # 2 s: 1 s into the stage, too early to say
    progress.stage("auditing", 4, 10)  # 4 s: 3 done in 3 s, 6 to go
    progress.stage("auditing", 5, 10)  # 10 s: 4 done in 9 s, 5 to go: 11.25 s
    progress.stage("choosing", 1, 100)  # 100 s: a new stage starts again
    progress.stage("choosing", 2, 100)  # 200 s: 1 done in 100 s, 98 to go
    lines = stream.getvalue().split("\r")[1:]
    assert [line.rstrip().rpartition("elapsed")[2] for line in lines] == [
        "",
        "",
        ", about 6 s left",
        ", about 11 s left",
        "",
        ", about 163 min left",
    ]


def test_suppression_and_the_audit_report_their_steps_as_counts() -> None:
    cohort = build_cohort(random.Random(5).choice, ["boolean", "multi", "number"], 24)
    gold, predictions = cohort.records()
    steps: list[tuple[str, int, int]] = []
    with reporting(lambda stage, done, total: steps.append((stage, done, total))):
        shared = share(gold, predictions, schema=cohort.schema_document(), min_cell=11)
    quiet = share(gold, predictions, schema=cohort.schema_document(), min_cell=11)
    assert shared.to_json() == quiet.to_json()  # reporting changes nothing
    assert {stage for stage, _, _ in steps} <= {SUPPRESSING, CHOOSING, AUDITING}
    assert all(type(d) is int and type(t) is int and 0 <= d <= t for _, d, t in steps)
    checks = [(d, t) for stage, d, t in steps if stage == SUPPRESSING]
    assert checks and checks[-1][0] == checks[-1][1]  # every small cell protected at the end
    audited = [(d, t) for stage, d, t in steps if stage == AUDITING]
    hidden = sum(1 for row in audit(shared.to_json()).rows if row.lo is not None)
    assert audited == [(d, audited[0][1]) for d in range(len(audited))]
    assert audited[0][1] >= hidden > 0  # one step per hidden quantity (failures included)


@pytest.mark.parametrize("terminal", [True, False])
def test_share_draws_the_bar_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    monkeypatch.setattr(progress_module, "_FIRST_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(progress_module, "_EVERY_SECONDS", 0.0)
    cohort = build_cohort(random.Random(5).choice, ["boolean", "multi"], 20)
    gold, predictions, schema = cohort_files(cohort, tmp_path)
    err = FakeTerminal() if terminal else io.StringIO()
    out = io.StringIO()
    files = ["--gold", str(gold), "--predictions", str(predictions), "--schema", str(schema)]
    assert main(["share", *files, "--jobs", "1"], stdout=out, stderr=err) == 0
    text = err.getvalue()
    assert ("chartscore: auditing [" in text) is terminal
    assert ("chartscore: suppressing [" in text) is terminal
    for case, _, _, _ in cohort.gold:
        assert case not in text
