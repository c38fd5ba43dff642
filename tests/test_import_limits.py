"""Importers read exports as a stream, in bounded memory, and decide from the header first.

A gzip bomb (a small file that expands to far more than it holds) is read by a separate
process whose peak resident memory (``VmHWM``, Linux) is measured: whatever the bomb's shape,
the import stops with a code (a limit, or the first row or task that is wrong) within
256 MiB. The decompressed limits are lowered for most cases through the importers'
module constants (``MAX_TABLE_BYTES``, ``MAX_EXPORT_BYTES``), read at call time, so that
the bombs stay small; one case per reader meets the real 1 GiB limit (about 10 s each,
so they run under ``--hypothesis-profile thorough``, as .ci/run runs). The child also runs
under an address-space limit, so a reader that reads a bomb whole fails fast (with
``internal_error``) instead of taking the machine's memory.

A table's header decides ``column_not_found`` and ``unknown_column`` on its own: standard
input that sends a header and never ends is refused at once.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

import chartscore
from chartscore.cli import main
from chartscore.errors import ErrorCode, describe

from helpers import PROFILE_DEPENDENT, THOROUGH

DATA = Path(__file__).resolve().parent / "data" / "importers"
UI = DATA / "redcap_dictionary_ui.csv"
COLD = DATA / "labelstudio_cold.json"
SRC = str(Path(chartscore.__file__).resolve().parents[1])
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])),
}
LIMIT = 120.0  # seconds: only a broken run waits this long
MEMORY_CEILING = 256 << 20  # what any import may need, whatever the bomb (issue 34)
ADDRESS_SPACE = 1 << 30  # the child's address-space limit: a whole-file reader fails fast
LOWERED = 16 << 20  # the decompressed limit most cases run under
BLOCK = 1 << 20

# The child: lower the limits (when asked), run the command line, report status and peak memory.
# The peak is the child's own address space's (VmHWM): ru_maxrss is not, on Linux, since exec
# keeps the parent's peak in it (a test run's pytest process is larger than any import here).
CHILD = f"""
import json, resource, sys
limit, argv = json.loads(sys.argv[1]), json.loads(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE}))
if limit:
    import chartscore.importers.labelstudio as labelstudio, chartscore.importers.table as table
    table.MAX_TABLE_BYTES = labelstudio.MAX_EXPORT_BYTES = limit
from chartscore.cli import main
status = main(argv)
with open("/proc/self/status") as lines:
    peak = next(int(line.split()[1]) * 1024 for line in lines if line.startswith("VmHWM:"))
print(json.dumps([status, peak]))
"""
pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="measures memory through /proc (Linux)"
)


def gzip_bomb(path: Path, head: bytes, unit: bytes, size: int, tail: bytes = b"") -> Path:
    """``head``, ``unit`` repeated to ``size`` bytes, then ``tail``, as a small gzip file.

    Built from gzip members (RFC 1952 allows any number, read one after the other): one
    member of a 1 MiB block, written again and again, so building a bomb takes no time.
    """
    block = gzip.compress(unit * (BLOCK // len(unit)), compresslevel=9)
    with path.open("wb") as handle:
        handle.write(gzip.compress(head))
        for _ in range(size // BLOCK):
            handle.write(block)
        if tail:
            handle.write(gzip.compress(tail))
    return path


def run_child(argv: list[str], limit: int | None) -> tuple[int, int, str]:
    """(exit status, peak resident bytes, stderr) of ``chartscore argv`` in a new process."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(limit), json.dumps(argv)],
        capture_output=True,
        env=ENV,
        timeout=LIMIT,
        check=False,
    )
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0, stderr  # the child itself ran to its end
    status, peak = json.loads(result.stdout.decode().splitlines()[-1])
    return status, peak, stderr


def columns(tmp_path: Path, name: str, fields: dict[str, str]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"case_id": "chart", "fields": fields}), encoding="utf-8")
    return str(path)


REDCAP_HEADER = b"record_id,arrival,sex,nihss\n"
TABLE_HEADER = b"chart,smoking\n"
TASK = b'{"id": 1, "annotations": [{"completed_by": 1, "result": []}]}'

# name: (command, its inputs' bomb as (head, unit, tail), the decompressed size, the
# limit the child runs under (None: the real one), the expected error)
CASES: dict[str, tuple[list[str], tuple[bytes, bytes, bytes], int, int | None, str]] = {
    # The case: a column the map names is not in the header.
    "csv: a column not found": (
        ["import", "csv", "--columns", "{missing}", "--predictions-out", "{out}", "--table"],
        (TABLE_HEADER, b"c,x\n", b""),
        256 << 20,
        None,
        "column_not_found (columns field hx.smoking)",
    ),
    "csv: one row again and again": (
        ["import", "csv", "--columns", "{smoking}", "--predictions-out", "{out}", "--table"],
        (TABLE_HEADER, b"c,x\n", b""),
        256 << 20,
        None,
        "duplicate_case (table line 3)",
    ),
    "csv: blank lines to the limit": (
        ["import", "csv", "--columns", "{smoking}", "--predictions-out", "{out}", "--table"],
        (TABLE_HEADER, b"\n", b"c,x\n"),
        4 * LOWERED,
        LOWERED,
        "file_too_large (table)",
    ),
    "csv: CRLF blank lines to the real limit": (
        ["import", "csv", "--columns", "{smoking}", "--predictions-out", "{out}", "--table"],
        (TABLE_HEADER, b"\r\n", b"c,x\n"),
        (1 << 30) + BLOCK,
        None,
        "file_too_large (table)",
    ),
    "csv: a long unmapped cell on every row": (
        ["import", "csv", "--columns", "{smoking}", "--predictions-out", "{out}", "--table"],
        (b"chart,smoking,note\n", b"x" * 64, b""),
        4 * LOWERED,
        LOWERED,
        "line_too_long (table line 2)",
    ),
    "redcap: records repeating a row": (
        ["import", "redcap", "--dictionary", str(UI), "--gold-out", "{out}", "--records"],
        (REDCAP_HEADER, b"101,2023-04-17,0,7\n", b""),
        256 << 20,
        None,
        "repeating_rows (records line 3)",
    ),
    "redcap: records of blank lines to the limit": (
        ["import", "redcap", "--dictionary", str(UI), "--gold-out", "{out}", "--records"],
        (REDCAP_HEADER, b"\n", b""),
        4 * LOWERED,
        LOWERED,
        "file_too_large (records)",
    ),
    "redcap: a dictionary of blank lines to the limit": (
        ["import", "redcap", "--schema-out", "{out}", "--dictionary"],
        (UI.read_bytes(), b"\n", b""),
        4 * LOWERED,
        LOWERED,
        "file_too_large (dictionary)",
    ),
    # Label Studio: the 96 KB export of empty objects, and every other shape.
    "labelstudio: empty objects": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b"[", b"{},", b"{}]"),
        256 << 20,
        None,
        "invalid_export (export item 0)",
    ),
    "labelstudio: one task again and again": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b"[", TASK + b",", TASK + b"]"),
        256 << 20,
        None,
        "duplicate_case (export item 1)",
    ),
    "labelstudio: white space to the real limit": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b"[" + TASK + b",", b" " * 64, TASK + b"]"),
        (1 << 30) + BLOCK,
        None,
        "file_too_large (export)",
    ),
    "labelstudio: a note text without end": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b'[{"id": 1, "data": {"text": "', b"note ", b'"}}]'),
        256 << 20,
        None,
        "task_too_large (export item 0)",
    ),
    "labelstudio: escaped quotes without end": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b'[{"id": 1, "data": {"text": "', b'\\"', b'"}}]'),
        256 << 20,
        None,
        "task_too_large (export item 0)",
    ),
    "labelstudio: a task of small values": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b'[{"id": 1, "data": [', b"1.5,", b"0]}]"),
        256 << 20,
        None,
        "task_too_large (export item 0)",
    ),
    "labelstudio: a task of empty objects": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b'[{"id": 1, "data": [', b"{},", b"{}]}]"),
        256 << 20,
        None,
        "task_too_large (export item 0)",
    ),
    "labelstudio: nesting": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b'[{"id": 1, "data": ', b"[", b""),
        256 << 20,
        None,
        "nesting_too_deep (export item 0)",
    ),
    "labelstudio: a number without end": (
        ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", "{out}", "--export"],
        (b"[", b"1", b"]"),
        256 << 20,
        None,
        "task_too_large (export item 0)",
    ),
}


def _past_the_real_limit(case: str) -> bool:
    _, _, size, limit, _ = CASES[case]
    return limit is None and size > 1 << 30


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, marks=PROFILE_DEPENDENT) if _past_the_real_limit(case) else case
        for case in CASES
    ],
)
def test_a_gzip_bomb_meets_the_limits_in_bounded_memory(case: str, tmp_path: Path) -> None:
    command, (head, unit, tail), size, limit, expected = CASES[case]
    if _past_the_real_limit(case) and not THOROUGH:
        pytest.skip("a bomb past the real 1 GiB limit: with --hypothesis-profile thorough")
    bomb = gzip_bomb(tmp_path / "bomb.gz", head, unit, size, tail)
    assert bomb.stat().st_size < size // 256  # a bomb indeed
    names = {
        "out": str(tmp_path / "out"),
        "missing": columns(tmp_path, "missing", {"hx.smoking": "not_in_the_header"}),
        "smoking": columns(tmp_path, "smoking", {"hx.smoking": "smoking"}),
    }
    argv = [part.format(**names) for part in command] + [str(bomb)]
    status, peak, stderr = run_child(argv, limit)
    assert stderr.startswith(f"chartscore: error: {expected}:"), stderr
    assert status == 1
    assert peak < MEMORY_CEILING, f"{peak >> 20} MiB"
    assert not (tmp_path / "out").exists()


# --- the header decides on its own ------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "header", "row", "expected"),
    [
        (
            ["import", "csv", "--columns", "{missing}", "--predictions-out", "{out}", "--table"],
            b"chart,smoking\n",
            b"c-%d,never\n",
            "column_not_found (columns field hx.smoking)",
        ),
        (
            ["import", "redcap", "--dictionary", str(UI), "--gold-out", "{out}", "--records"],
            b"record_id,arrival,not_a_field\n",
            b"%d,2023-04-17,1\n",
            "unknown_column (records column 3)",
        ),
        (
            ["import", "redcap", "--dictionary", str(UI), "--gold-out", "{out}", "--records"],
            b"arrival,record_id\n",
            b"2023-04-17,%d\n",
            "record_id_column (records column 1)",
        ),
    ],
)
def test_the_header_alone_decides_on_an_input_that_never_ends(
    command: list[str], header: bytes, row: bytes, expected: str, tmp_path: Path
) -> None:
    names = {
        "out": str(tmp_path / "out"),
        "missing": columns(tmp_path, "missing", {"hx.smoking": "not_in_the_header"}),
    }
    argv = [part.format(**names) for part in command] + ["-"]
    body = b"".join(row % index for index in range(100_000))  # over a reader's 256 KiB block
    with _running(argv) as process:
        writer = threading.Thread(target=_feed, args=(process, header + body), daemon=True)
        writer.start()
        status = process.wait(timeout=LIMIT)  # standard input is still open: never its end
        assert process.stderr is not None
        stderr = process.stderr.read().decode()
    assert (status, stderr) == (1, f"chartscore: error: {expected}: {_describe(expected)}\n")
    assert not (tmp_path / "out").exists()


def _describe(expected: str) -> str:
    return describe(ErrorCode(expected.split(maxsplit=1)[0]))


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    """Write ``data`` to the child's standard input and leave it open (until the test closes it)."""
    assert process.stdin is not None
    with contextlib.suppress(OSError):  # the child may be gone before all of it is written
        process.stdin.write(data)
        process.stdin.flush()


@contextlib.contextmanager
def _running(argv: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "chartscore", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    try:
        yield process
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


# --- --notes names ranges, never every id -----------------------------------------------------


def test_a_wide_notes_range_takes_no_memory(tmp_path: Path) -> None:
    out = tmp_path / "gold.jsonl"
    argv = ["import", "labelstudio", "--export", str(COLD), "--gold-annotator", "6"]
    err = io.StringIO()
    tracemalloc.start()
    try:
        status = main([*argv, "--notes", "1-9999998", "--gold-out", str(out)], stderr=err)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 0, err.getvalue()
    assert peak < 16 << 20, f"{peak >> 20} MiB"
    every = tmp_path / "every.jsonl"
    assert main([*argv, "--gold-out", str(every)], stderr=io.StringIO()) == 0
    assert out.read_bytes() == every.read_bytes()  # every note of the export is in the range


# --- the largest task accepted ---------------------------------------------------------------

VALUES = 499_000  # just under the 500,000 values of a task


@pytest.mark.parametrize(
    "shape",
    [
        b"[" + b"1.5," * VALUES + b"0]",  # decimals: the largest value per byte
        b"{" + b",".join(b'"k%d": 1.5' % index for index in range(VALUES // 2)) + b"}",
        b"[" + b"[[[[[[[1.5]]]]]]]," * (VALUES // 8) + b"0]",  # nests of one-item arrays
        b"[" + b"{}," * (VALUES // 2) + b"{}]",  # two values each: the object and a comma
        b'"' + b"x" * ((8 << 20) - 64) + "\U0001f600".encode() + b'"',  # 4 bytes a character
    ],
    ids=["decimals", "keys", "nests", "objects", "text"],
)
def test_the_largest_task_accepted_is_decoded_in_bounded_memory(
    shape: bytes, tmp_path: Path
) -> None:
    export = tmp_path / "export.json"
    export.write_bytes(b'[{"id": 1, "annotations": [], "data": ' + shape + b"}]")
    argv = ["import", "labelstudio", "--gold-annotator", "1", "--gold-out", str(tmp_path / "g")]
    status, peak, stderr = run_child([*argv, "--export", str(export)], None)
    # Decoded whole, then found to hold no annotation (so the task was accepted).
    assert stderr.startswith("chartscore: error: annotator_not_found (export):"), stderr
    assert status == 1
    assert peak < MEMORY_CEILING, f"{peak >> 20} MiB"  # about 100 to 120 MiB
