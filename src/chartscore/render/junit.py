"""Gate results as JUnit XML, the test report that CI systems read and display.

One ``<testsuite>`` per checked document (``chartscore gate``, ``score``, ``compare``; one per
run of ``chartscore batch``), one ``<testcase>`` per gate in file order, named by the gate's
number, slice, metric (and label), rule and threshold::

    <testsuites name="chartscore" tests="3" failures="1" errors="0" skipped="1">
      <testsuite name="chartscore gate" tests="3" failures="1" errors="0" skipped="1">
        <properties>
          <property name="confidence" value="0.95" />
          <property name="gate_interval" value="wilson" />
        </properties>
        <testcase classname="chartscore gate" name="gate 1: overall exact_agreement ..." />
        <testcase classname="chartscore gate" name="gate 2: ...">
          <failure type="required" message="lower 95% bound 0.7412 (clustered) is below 0.8" />
        </testcase>
        <testcase classname="chartscore gate" name="gate 3: ...">
          <skipped type="warning" message="..." />
        </testcase>
      </testsuite>
    </testsuites>

- A passed gate (required or warning) is a bare ``<testcase>``.
- A failed **required** gate holds a ``<failure>`` whose ``message`` names the figure the gate
  read (the bound, with its interval) and the threshold it missed.
- A failed **warning** gate holds a ``<skipped>`` with the same message, so that CI shows it
  without failing the build: the exit status decides the build, and a warning never fails it.
- A batch run whose gates could not be checked (scoring, the comparison or the gate check
  failed) is a suite with one ``<testcase name="run">`` holding an ``<error>`` per failed step,
  with the coded error's one-line message; its baseline, whose gates are not checked, is an
  empty suite.

The testsuite's ``tests``, ``failures``, ``errors`` and ``skipped`` count its cases; the root's
add them up. There is no timestamp, host name or duration: the same results give the same
bytes. The XML is built with :mod:`xml.etree.ElementTree`, which escapes every attribute and
text. Value-free: gate results hold gate numbers, slice and metric names from the gates file
(developer-authored, no patient data), thresholds and figures recomputed from counts; a
failure's message is a coded error's, which holds no value, path or id.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Final

import attrs

from chartscore.documents.gates import (
    OTHER_LEVEL,
    TOO_FEW_PAIRS,
    GateResult,
    GateResults,
    format_observed,
    format_threshold,
)
from chartscore.errors import ChartscoreError, ErrorCode

__all__ = ["JUnitSuite", "failure_message", "junit_xml", "testcase_name"]

ROOT_NAME: Final = "chartscore"


@attrs.frozen
class JUnitSuite:
    """One ``<testsuite>``: the gates checked against one document, or why they were not.

    Attributes:
        name: The suite's name (``chartscore gate``; a batch run's label).
        results: The gate results; None when the gates were not checked.
        errors: ``(step, message)`` for each step that failed before the gates could be
            checked (a batch run: ``scoring``, ``comparison``, ``gates``), messages of
            coded errors only.
        properties: ``(name, value)`` pairs shown as the suite's ``<properties>``, after
            the results' confidence and gate interval.
        checks: ``(name, failure)`` of required checks beside the gates (``gate
            --min-cell N``: ``min cell >= 11``), one test case each after the gates';
            ``failure`` is why it failed, ``""`` when it passed.
    """

    name: str
    results: GateResults | None = None
    errors: tuple[tuple[str, str], ...] = ()
    properties: tuple[tuple[str, str], ...] = ()
    checks: tuple[tuple[str, str], ...] = ()


def testcase_name(result: GateResult) -> str:
    """``gate 1: overall normalized_agreement min_lower >= 0.8`` (a label after its metric)."""
    gate = result.gate
    metric = gate.metric if not gate.label else f"{gate.metric} label {gate.label}"
    sign = ">=" if gate.at_least else "<="
    threshold = format_threshold(gate.threshold)
    return f"gate {gate.number}: {gate.slice} {metric} {gate.rule} {sign} {threshold}"


def failure_message(result: GateResult, confidence: float) -> str:
    """Why a gate failed: the figure it read (which bound, of which interval) and the threshold.

    ``lower 95% bound 0.7412 (clustered) is below 0.8``; a difference rule reads
    ``difference's lower 95% bound ...``; a gate with no figure says so
    (``no figure (clustered): cannot be shown to be at least 0.8``), and one on a
    coefficient from too few pairs gives that reason.
    """
    gate = result.gate
    threshold = format_threshold(gate.threshold)
    side = "at least" if gate.at_least else "at most"
    if result.reason == TOO_FEW_PAIRS:
        return (
            f"too few pairs ({result.interval}): no reliable interval, "
            f"cannot be shown to be {side} {threshold}"
        )
    if result.reason == OTHER_LEVEL:
        return (
            f"written at another level ({result.interval}): the document's interval, "
            f"cannot be shown to be {side} {threshold} at {100 * confidence:g}%"
        )
    if result.observed is None:
        return f"no figure ({result.interval}): cannot be shown to be {side} {threshold}"
    bound = "lower" if gate.reads_lower else "upper"
    whose = "difference's " if gate.is_difference else ""
    relation = "below" if gate.at_least else "above"
    figure = format_observed(result.observed, gate.threshold)
    percent = f"{100 * confidence:g}%"
    return f"{whose}{bound} {percent} bound {figure} ({result.interval}) is {relation} {threshold}"


def junit_xml(suites: Sequence[JUnitSuite]) -> bytes:
    """The JUnit XML document of these suites: UTF-8 bytes with a declaration, ending in a newline.

    Raises:
        ChartscoreError: ``usage`` when ``suites`` is not a list or tuple of :class:`JUnitSuite`.
    """
    if not isinstance(suites, list | tuple) or any(type(s) is not JUnitSuite for s in suites):
        raise ChartscoreError(ErrorCode.USAGE)
    root = ET.Element("testsuites", {"name": ROOT_NAME})
    totals = dict.fromkeys(_COUNTS, 0)
    for suite in suites:
        counts = _suite(root, suite)
        for key in _COUNTS:
            totals[key] += counts[key]
    for key in _COUNTS:
        root.set(key, str(totals[key]))
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


_COUNTS: Final = ("tests", "failures", "errors", "skipped")


def _suite(root: ET.Element, suite: JUnitSuite) -> dict[str, int]:
    element = ET.SubElement(root, "testsuite", {"name": suite.name})
    counts = dict.fromkeys(_COUNTS, 0)
    properties = list(suite.properties)
    if suite.results is not None:
        properties = [
            ("confidence", f"{suite.results.confidence:g}"),
            ("gate_interval", suite.results.gate_interval),
            *properties,
        ]
    if properties:
        holder = ET.SubElement(element, "properties")
        for name, value in properties:
            ET.SubElement(holder, "property", {"name": name, "value": value})
    if suite.errors:
        case = ET.SubElement(element, "testcase", {"classname": suite.name, "name": "run"})
        for step, message in suite.errors:
            ET.SubElement(case, "error", {"type": step, "message": f"{step}: {message}"})
        counts["tests"] += 1
        counts["errors"] += 1
    if suite.results is not None:
        for result in suite.results.results:
            case = ET.SubElement(
                element, "testcase", {"classname": suite.name, "name": testcase_name(result)}
            )
            counts["tests"] += 1
            if result.passed:
                continue
            message = failure_message(result, suite.results.confidence)
            if result.gate.required:
                ET.SubElement(case, "failure", {"type": "required", "message": message})
                counts["failures"] += 1
            else:
                ET.SubElement(case, "skipped", {"type": "warning", "message": message})
                counts["skipped"] += 1
    for name, failure in suite.checks:
        case = ET.SubElement(element, "testcase", {"classname": suite.name, "name": name})
        counts["tests"] += 1
        if failure:
            ET.SubElement(case, "failure", {"type": "required", "message": failure})
            counts["failures"] += 1
    # Attributes in a fixed order after the name: tests, failures, errors, skipped.
    for key in _COUNTS:
        element.set(key, str(counts[key]))
    return counts
