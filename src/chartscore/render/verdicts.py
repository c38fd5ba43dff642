"""Gates for people: each gate's verdict, and a difference gate's margin, as one line each.

The summary lists the verdicts after its table; a comparison's header names its margins
and its verdict, so a committee reads what was required and whether it was met on the
first page. Lines hold gate numbers, slices, closed metric and rule names and numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

from chartscore.documents.gates import Gate, GateResult, GateResults

__all__ = ["margin_line", "verdict", "verdict_line", "verdict_lines"]


def verdict_line(result: GateResult) -> str:
    """``gate 1 pass (required): overall normalized_agreement min_lower >= 0.6``."""
    gate = result.gate
    verdict = "pass" if result.passed else ("FAIL" if gate.required else "warn")
    sign = ">=" if gate.reads_lower else "<="
    return (
        f"gate {gate.number} {verdict} ({gate.level}): {gate.slice} {gate.metric} "
        f"{gate.rule} {sign} {gate.threshold:g}"
    )


def verdict(results: GateResults) -> str:
    """``gates passed: 3 of 3 passed; failed: 0 required, 0 warning`` (FAILED on a required)."""
    failed = [r for r in results.results if not r.passed]
    required = sum(1 for r in failed if r.gate.required)
    word = "FAILED" if required else "passed"
    return (
        f"gates {word}: {len(results.results) - len(failed)} of {len(results.results)} "
        f"passed; failed: {required} required, {len(failed) - required} warning"
    )


def verdict_lines(results: GateResults) -> list[str]:
    """The gates' verdicts: a line per gate, then how many passed."""
    return [*(verdict_line(result) for result in results.results), verdict(results)]


def margin_line(gate: Gate, level: str) -> str:
    """A difference gate as people read it: the margin in points and which bound must clear it.

    ``gate 1 (required): overall normalized_agreement: the lower 95% bound of candidate minus
    baseline must be >= -2 points``.
    """
    bound, sign = ("lower", ">=") if gate.reads_lower else ("upper", "<=")
    points = round(gate.threshold * 100, 4)
    return (
        f"gate {gate.number} ({gate.level}): {gate.slice} {gate.metric}: the {bound} {level} "
        f"bound of candidate minus baseline must be {sign} {points:+g} points"
    )


def margin_lines(gates: Sequence[Gate], level: str) -> list[str]:
    """Each difference gate's :func:`margin_line`, in file order."""
    return [margin_line(gate, level) for gate in gates if gate.is_difference]
