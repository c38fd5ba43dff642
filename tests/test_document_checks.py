"""Saved documents are checked, not trusted, and a bad one costs little (issue 19, items 3-4).

Every reader of a report, comparison or shared report recomputes the derived
figures from the counts and refuses an edited document with ``invalid_report``;
the bytes are checked while they stream (UTF-8 only, size, nesting), so a gzip
bomb is refused after little reading; gates read recomputed figures only.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, Report
from chartscore.cli import main
from chartscore.documents import load_document
from chartscore.documents.canonical_json import canonical_json
from chartscore.documents.comparison import Comparison
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.shared_report import SharedReport
from chartscore.documents.tally import COUNT_NAMES
from chartscore.io import inputs
from chartscore.io.document_files import load_document_file
from chartscore.stats.binomial import wilson_interval
from chartscore.workflows.demo import run_demo
from report_data import scored_reports
from shared_data import full_and_shared
from test_comparison import categorical_rows, compare, datasets

from helpers import examples

DEMO = run_demo()
FULL, SHARED = full_and_shared()
SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large]
KINDS = ("report", "comparison", "shared")


def text_of(kind: str) -> str:
    if kind == "report":
        return DEMO.to_json()
    if kind == "shared":
        return SHARED.to_json()
    return COMPARISON.to_json()


def refused_code(text: str | bytes) -> ErrorCode:
    """The code every reader gives ``text`` (they must agree)."""
    codes = set()
    readers: list[Callable[[Any], object]] = [load_document]
    kind = json.loads(text).get("format") if _decodes(text) else None
    readers += {
        "chartscore.report": [Report.from_json],
        "chartscore.comparison": [Comparison.from_json],
        "chartscore.shared_report": [SharedReport.from_json],
    }.get(kind, [Report.from_json, Comparison.from_json, SharedReport.from_json])
    for reader in readers:
        try:
            reader(text)
        except ChartscoreError as error:
            assert error.__cause__ is None and error.__context__ is None
            codes.add(error.code)
            continue
        raise AssertionError("a reader accepted the document")
    assert len(codes) == 1, codes
    return codes.pop()


def _decodes(text: str | bytes) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict)


# --------------------------------------------------------------------------- item 3: edits

COMPARISON = compare(
    categorical_rows(set(range(5)), set(range(9)), size=20)
    + categorical_rows({0, 1}, {1, 2, 3}, size=8, prefix="d")
)


def slices_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        document["overall"],
        *document["by_field"].values(),
        *document["by_field_type"].values(),
    ]


def metrics_of(part: dict[str, Any]) -> list[dict[str, Any]]:
    return [value for value in part.values() if isinstance(value, dict) and "total_count" in value]


def nudged(value: float) -> float:
    """The next float toward the middle of [0, 1]: still in range, no longer the same."""
    return math.nextafter(value, 1.0 if value < 0.5 else 0.0)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=SUPPRESS)
@given(scored_reports(), st.data())
def test_an_edited_count_or_interval_is_refused(report: Report, data: st.DataObject) -> None:
    document = json.loads(report.to_json())
    part = data.draw(st.sampled_from(slices_of(document)))
    metric = data.draw(st.sampled_from(metrics_of(part)))
    edit = data.draw(st.sampled_from(["count", "success", "lower", "upper"]))
    if edit == "count":
        part[data.draw(st.sampled_from(COUNT_NAMES))] += 1
    elif edit == "success":
        total = metric["total_count"]
        if total == 0:
            metric["total_count"] = metric["success_count"] = 1  # an interval of null: wrong
        else:
            metric["success_count"] += -1 if metric["success_count"] == total else 1
    elif metric["interval"] is None:
        metric["interval"] = [0, 1]
    else:
        bound = 0 if edit == "lower" else 1
        metric["interval"][bound] = nudged(metric["interval"][bound])
        metric["interval"].sort()
    assert refused_code(canonical_json(document)) is ErrorCode.INVALID_REPORT


@settings(max_examples=examples(120), deadline=None, suppress_health_check=SUPPRESS)
@given(scored_reports(), st.data())
def test_a_field_that_no_longer_sums_to_the_pooled_slices_is_refused(
    report: Report, data: st.DataObject
) -> None:
    # The field slice stays consistent in itself (its interval recomputed), but the
    # overall and field-type slices are no longer its sums.
    document = json.loads(report.to_json())
    part = data.draw(st.sampled_from(list(document["by_field"].values())))
    metric = data.draw(st.sampled_from(metrics_of(part)))
    total = metric["total_count"]
    if total == 0:
        return
    metric["success_count"] += -1 if metric["success_count"] == total else 1
    metric["interval"] = list(wilson_interval(metric["success_count"], total) or ())
    assert refused_code(canonical_json(document)) is ErrorCode.INVALID_REPORT


def paired_figures(document: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, Any]]:
    """(container, key, index or None) of every derived figure of a comparison with trials."""
    for part in slices_of(document):
        for name, value in part.items():
            if name == "kappa" or not isinstance(value, dict) or "baseline" not in value:
                continue  # kappa's table is in no document: only its bounds are checked
            for side in ("baseline", "candidate"):
                if value[side].get("interval") is not None:
                    yield value[side], "interval", 0
                    yield value[side], "interval", 1
            if "difference" in value and value["difference"]["estimate"] is not None:
                yield value["difference"], "estimate", None
                yield value["difference"], "interval", 0
                yield value["difference"], "interval", 1
                yield value["mcnemar"], "exact_p", None
                yield value["mcnemar"], "mid_p", None


@settings(max_examples=examples(60), deadline=None, suppress_health_check=SUPPRESS)
@given(datasets(), st.data())
def test_an_edited_comparison_figure_is_refused(rows: Any, data: st.DataObject) -> None:
    document = json.loads(compare(rows).to_json())
    figures = list(paired_figures(document))
    if not figures:
        return
    container, key, index = data.draw(st.sampled_from(figures))
    if index is None:
        container[key] = nudged(container[key]) if container[key] != 0 else 0.25
    else:
        container[key][index] = nudged(container[key][index])
        container[key].sort()
    assert refused_code(canonical_json(document)) is ErrorCode.INVALID_REPORT


def test_an_edited_shared_interval_or_count_is_refused() -> None:
    for edit in ("interval", "count"):
        document = json.loads(SHARED.to_json())
        published = [
            metric
            for part in slices_of(document)
            for metric in metrics_of(part)
            if metric["interval"] is not None
        ]
        assert published
        if edit == "interval":
            published[0]["interval"][0] = nudged(published[0]["interval"][0])
        else:
            published[0]["success_count"] += 1 if published[0]["success_count"] == 0 else -1
        assert refused_code(canonical_json(document)) is ErrorCode.INVALID_REPORT


def issue_report() -> dict[str, Any]:
    """The demo report with the overall normalized agreement's interval edited upwards."""
    document = json.loads(DEMO.to_json())
    document["overall"]["normalized_agreement"]["interval"] = [0.95, 0.99]
    return document


def gates_file(tmp_path: Path, metric: str = "normalized_agreement") -> Path:
    path = tmp_path / "gates.toml"
    path.write_text(
        f'[[gate]]\nslice = "overall"\nmetric = "{metric}"\nmin_lower = 0.90\n', encoding="utf-8"
    )
    return path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_the_issue_example_an_edited_interval_neither_renders_nor_passes_a_gate(
    tmp_path: Path,
) -> None:
    real = DEMO.overall.metric("normalized_agreement").interval
    assert real is not None and real[0] < 0.90  # the real figure fails the gate
    document = tmp_path / "report.json"
    document.write_text(canonical_json(issue_report()), encoding="utf-8")
    for argv in (
        ("render", str(document), "--format", "table"),
        ("gate", str(document), "--gates", str(gates_file(tmp_path))),
    ):
        status, out, err = run(*argv)
        assert status == 1 and out == ""
        assert err.startswith("chartscore: error: invalid_report"), err
        assert "0.95" not in err and "0.99" not in err


def test_an_edited_count_and_a_broken_sum_do_not_render(tmp_path: Path) -> None:
    changed = json.loads(DEMO.to_json())
    changed["overall"]["missing_count"] += 1
    broken_sum = json.loads(DEMO.to_json())
    field = next(iter(broken_sum["by_field"].values()))
    for name in ("field_count", "answerable_count", "answered_count"):
        field[name] += 1
    for name, count in (("exact_agreement", "answerable_count"),):
        field[name]["total_count"] = field[count]
        field[name]["interval"] = list(
            wilson_interval(field[name]["success_count"], field[count]) or ()
        )
    for number, document in enumerate((changed, broken_sum)):
        path = tmp_path / f"report{number}.json"
        path.write_text(canonical_json(document), encoding="utf-8")
        status, out, err = run("render", str(path), "--format", "table")
        assert (status, out) == (1, "") and err.startswith("chartscore: error: invalid_report")


def test_gates_read_recomputed_figures_not_the_objects_intervals() -> None:
    # An object built in memory is not checked like a loaded file: the gate recomputes.
    metric = DEMO.overall.metric("normalized_agreement")
    forged = attrs.evolve(metric, interval=(0.95, 0.99))
    report = attrs.evolve(
        DEMO,
        overall=attrs.evolve(
            DEMO.overall, metrics={**DEMO.overall.metrics, "normalized_agreement": forged}
        ),
    )
    gates = parse_gates(
        '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\nmin_lower = 0.9\n'
    )
    result = evaluate(report, gates).results[0]
    assert metric.clustered_interval is not None  # a pooled slice: the gate reads this one
    assert result.observed == metric.clustered_interval[0] and not result.passed


def test_gates_read_a_recomputed_paired_difference() -> None:
    paired = next(
        (name, value)
        for name, value in COMPARISON.overall.paired.items()
        if value.interval is not None
    )
    name, figures = paired
    forged = attrs.evolve(figures, interval=(0.5, 0.9))
    comparison = attrs.evolve(
        COMPARISON,
        overall=attrs.evolve(
            COMPARISON.overall, paired={**COMPARISON.overall.paired, name: forged}
        ),
    )
    gates = parse_gates(
        f'[[gate]]\nslice = "overall"\nmetric = "{name}"\nmin_difference_lower = 0.4\n'
    )
    assert figures.interval is not None
    result = evaluate(comparison, gates).results[0]
    assert result.observed == figures.interval[0] and not result.passed


# --------------------------------------------------------------------------- item 4: bad bytes


@pytest.mark.parametrize("kind", KINDS)
def test_an_integer_of_400_digits_is_an_invalid_report(kind: str, tmp_path: Path) -> None:
    huge = 10**400
    raw = re.sub(r'"interval":\[[-0-9.e]+', f'"interval":[{huge}', text_of(kind), count=1)
    assert str(huge) in raw
    assert refused_code(raw) is ErrorCode.INVALID_REPORT
    path = tmp_path / "document.json"
    path.write_text(raw, encoding="utf-8")
    for argv in (
        ("render", str(path), "--format", "table"),
        ("gate", str(path), "--gates", str(gates_file(tmp_path, "exact_agreement"))),
    ):
        status, _, err = run(*argv)
        assert status == 1 and err.startswith("chartscore: error: invalid_report"), err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-32"])
def test_documents_are_utf8_only(kind: str, encoding: str, tmp_path: Path) -> None:
    text = text_of(kind)
    data = text.encode(encoding)
    assert refused_code(data) is ErrorCode.INVALID_REPORT
    path = tmp_path / "document.json"
    path.write_bytes(data)
    status, out, err = run("render", str(path), "--format", "table")
    assert (status, out) == (1, "") and err.startswith("chartscore: error: invalid_report")
    if kind == "shared":
        status, out, err = run("audit", str(path))
        assert (status, out) == (1, "") and err.startswith("chartscore: error: invalid_report")


def test_a_byte_order_mark_in_a_str_is_refused_too() -> None:
    for kind in KINDS:
        assert refused_code("\ufeff" + text_of(kind)) is ErrorCode.INVALID_REPORT


@pytest.mark.parametrize("kind", KINDS)
def test_a_gzip_document_is_read_by_every_command(kind: str, tmp_path: Path) -> None:
    text = text_of(kind)
    plain, packed = tmp_path / "document.json", tmp_path / "document.json.gz"
    plain.write_text(text, encoding="utf-8")
    packed.write_bytes(gzip.compress(text.encode()))
    commands = [("render", "{}", "--format", "csv")]
    commands.append(("gate", "{}", "--gates", str(gates_file(tmp_path, "exact_agreement"))))
    if kind == "shared":
        commands.append(("audit", "{}"))
    for command in commands:
        expected = run(*(word.format(plain) for word in command))
        assert run(*(word.format(packed) for word in command)) == expected
        assert expected[0] in (0, 3) and expected[2] == ""


def gzip_bomb(path: Path, head: bytes, unit: bytes, expanded: int) -> Path:
    """A gzip file of ``head`` then ``unit`` repeated to ``expanded`` bytes: small on disk."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = unit * ((1 << 20) // len(unit))
    parts = [packer.compress(head)]
    parts += [packer.compress(block) for _ in range(expanded // len(block))]
    parts.append(packer.flush())
    path.write_bytes(b"".join(parts))
    return path


BOMBS = {
    "an array": (b"[", b"{},"),
    "objects after the object": (b"", b"{},"),
    "empty objects in an array": (b'{"format":"chartscore.report","a":[', b"{},"),
    "zeros in an array": (b'{"format":"chartscore.report","a":[', b"0,"),
    "deep nesting": (b'{"format":"chartscore.report","a":', b"["),
    "a long string": (b'{"format":"chartscore.report","a":"', b"x"),
    "strings in an array": (b'{"format":"chartscore.report","a":[', b'"x",'),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_gzip_bomb_is_refused_after_little_reading(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head, unit = BOMBS[name]
    path = gzip_bomb(tmp_path / "bomb.json", head, unit, 64 << 20)
    assert path.stat().st_size < 256 << 10
    read = [0]
    original = inputs.InputStream.read

    def counted(self: inputs.InputStream, size: int = -1, /) -> bytes:
        data = original(self, size)
        read[0] += len(data)
        return data

    monkeypatch.setattr(inputs.InputStream, "read", counted)
    with pytest.raises(ChartscoreError) as caught:
        load_document_file(path)
    assert caught.value.code in (ErrorCode.INVALID_REPORT, ErrorCode.FILE_TOO_LARGE)
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    # Never more than the 16 MiB limit and one 64 KiB block; most bombs far less.
    assert read[0] <= (16 << 20) + (64 << 10)
    if name != "strings in an array":  # that one is refused at the size limit
        assert read[0] <= 2 << 20
    status, out, err = run("render", str(path), "--format", "table")
    assert status == 1 and out == "" and err.startswith("chartscore: error: ")


def test_the_size_limit_is_file_too_large_and_a_real_report_is_far_below_it() -> None:
    padded = b'{"format":"chartscore.report","a":[' + b'"x",' * (4 << 20) + b"0]}"
    with pytest.raises(ChartscoreError) as caught:
        Report.from_json(padded)
    assert caught.value.code is ErrorCode.FILE_TOO_LARGE
    assert str(caught.value).startswith("file_too_large (report)")
    assert len(FULL.to_json()) < 64 << 10


# --------------------------------------------------------------------------- the scanner


SCANNED: dict[bytes, ErrorCode | None] = {
    **{text_of(kind).encode(): None for kind in KINDS},
    b'{"a":"[[[[[[[[[[\\"{{{{{{{{{{"}': None,  # brackets in a string do not nest
    b'{"a":' + b"[" * 7 + b"]" * 7 + b"}": None,  # depth 8, the limit
    b'{"a":' + b"[" * 8 + b"]" * 8 + b"}": ErrorCode.INVALID_REPORT,
    b"{}{}": ErrorCode.INVALID_REPORT,
    b"[{}]": ErrorCode.INVALID_REPORT,
    b"\xef\xbb\xbf{}": ErrorCode.INVALID_REPORT,
    b'{"a":"\xc3"}': ErrorCode.INVALID_REPORT,
    b'{"a":"' + b"x" * 4096 + b'"}': None,
    b'{"a":"' + b"x" * 4097 + b'"}': ErrorCode.INVALID_REPORT,
    b'{"a":[' + b"0," * 3000 + b"0]}": ErrorCode.INVALID_REPORT,
    b" \n{}\n": None,
    b'{"a":"\\\\","b":["\\"]"]}': None,  # an escaped backslash, then an escaped quote
    b'{"a":"\\\\"]}': ErrorCode.INVALID_REPORT,  # the string ends at the second quote
}


def _scanned_in_pieces(document: bytes, data: st.DataObject) -> ErrorCode | None:
    # The scanner's verdict on ``document`` fed in pieces cut where hypothesis draws.
    from chartscore.documents._strict_json import DocumentScanner

    cuts = sorted(data.draw(st.lists(st.integers(0, len(document)), max_size=12)))
    pieces = [document[a:b] for a, b in zip([0, *cuts], [*cuts, len(document)], strict=True)]
    scanner = DocumentScanner()
    try:
        for piece in pieces:
            scanner.feed(piece)
        scanner.finish()
    except ChartscoreError as error:
        return error.code
    return None


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(sorted(SCANNED)), st.data())
def test_the_scanner_gives_the_same_verdict_whatever_the_chunks(
    document: bytes, data: st.DataObject
) -> None:
    assert _scanned_in_pieces(document, data) is SCANNED[document]


_TRICKY_TEXT = st.text(alphabet='ab"\\[]{}\u00e9', max_size=8)
_JSON_VALUES = st.recursive(
    _TRICKY_TEXT | st.integers(-5, 5) | st.none(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY_TEXT, inner, max_size=3),
    max_leaves=24,
)


def _depth(value: object) -> int:
    # The nesting of a decoded JSON value: containers counted, scalars not.
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@settings(max_examples=examples(300), deadline=None)
@given(_JSON_VALUES, st.data())
def test_the_scanner_counts_nesting_outside_strings_whatever_the_chunks(
    value: object, data: st.DataObject
) -> None:
    # Strings full of quotes, backslashes and brackets, cut anywhere (an escape too): a
    # document is refused exactly when it nests deeper than MAX_DEPTH.
    from chartscore.documents._strict_json import MAX_DEPTH

    document = json.dumps({"x": value}, ensure_ascii=False).encode("utf-8")
    deep = 1 + _depth(value) > MAX_DEPTH
    assert _scanned_in_pieces(document, data) is (ErrorCode.INVALID_REPORT if deep else None)


def test_a_long_string_of_escaped_quotes_is_scanned_in_linear_time() -> None:
    # A string far longer than a chunk whose quotes are all escaped (a release file's
    # "shared", or a hostile document): each chunk was searched again from every escaped
    # quote and the open string carried whole, so 120 KB took a minute; the brackets in it
    # must not count either.
    import time

    from chartscore.documents._strict_json import scan

    text = json.dumps({"a": '\\"[{x' * 100_000, "b": [1]}, separators=(",", ":"))
    started = time.monotonic()
    scan(text.encode())
    assert time.monotonic() - started < 3
