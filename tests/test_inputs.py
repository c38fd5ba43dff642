"""Inputs as people have them: paths, gzip files, schema names and the schema's limits.

docs/formats.md ("Reading rules") states what is read and how. Standard input
and FIFOs need real processes: see test_cli.py and test_faults.py.
"""

from __future__ import annotations

import gzip
import io
import os
import tracemalloc
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, InputKind, load_schema, score_files
from chartscore.errors import describe
from chartscore.io import MAX_LINE_BYTES, MAX_SCHEMA_BYTES, STDIN
from chartscore.io.inputs import InputStream, input_path, open_input
from chartscore.io.jsonl import iter_objects
from chartscore.io.schema_file import is_toml_name

from helpers import examples, write_jsonl

GOLD = [
    {"case_id": f"c{i}", "field_id": "hx.smoking", "field_type": "categorical", "value": v}
    for i, v in enumerate(["former", "never", None, "current"])
]
PREDICTIONS = [{"case_id": "c0", "field_id": "hx.smoking", "value": "Former"}]


def error_of(function: object, *args: object, **kwargs: object) -> ChartscoreError:
    with pytest.raises(ChartscoreError) as caught:
        function(*args, **kwargs)  # type: ignore[operator]
    error = caught.value
    assert error.__cause__ is None and error.__context__ is None
    return error


# --- paths ----------------------------------------------------------------------------


class ExplodingPath:
    def __init__(self, secret: str) -> None:
        self.secret = secret

    def __fspath__(self) -> str:
        raise RuntimeError(f"cannot resolve {self.secret}")


class BytesPath:
    def __fspath__(self) -> bytes:
        return b"gold.jsonl"


class OddString(str):
    """A str subclass whose own methods misbehave: only its characters are used."""

    __slots__ = ()

    def __str__(self) -> str:
        raise RuntimeError("never called")

    def __fspath__(self) -> str:
        return self


def test_paths_are_strings_or_pathlike(tmp_path: Path) -> None:
    assert input_path("a.jsonl", InputKind.GOLD) == "a.jsonl"
    assert input_path(tmp_path / "a.jsonl", InputKind.GOLD) == str(tmp_path / "a.jsonl")
    assert input_path(STDIN, InputKind.GOLD) is STDIN
    converted = input_path(OddString("odd.jsonl"), InputKind.GOLD)
    assert type(converted) is str and converted == "odd.jsonl"


@pytest.mark.parametrize(
    "path", [b"gold.jsonl", 0, 3, 1.5, None, ["gold.jsonl"], BytesPath(), ExplodingPath("MRN123")]
)
def test_anything_else_is_invalid_path(path: object, tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    for parallel in (False, True):
        error = error_of(score_files, path, gold, parallel=parallel)
        assert str(error) == "invalid_path (gold)"
        error = error_of(score_files, gold, path, parallel=parallel)
        assert str(error) == "invalid_path (predictions)"
    assert str(error_of(load_schema, path)) == "invalid_path (schema)"
    if path is not None:  # schema=None means "no schema"
        assert str(error_of(score_files, gold, gold, schema=path)) == "invalid_path (schema)"


def test_a_failing_fspath_leaves_no_trace(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    for parallel in (False, True):
        error = error_of(score_files, gold, ExplodingPath("MRN123"), parallel=parallel)
        assert "MRN123" not in repr(error)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")  # not even the reader process printed it


def test_standard_input_cannot_feed_two_inputs() -> None:
    error = error_of(lambda: score_files(STDIN, STDIN))
    assert str(error) == "invalid_path (predictions)"


def test_a_missing_file_and_a_directory_are_unreadable(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    for bad in (tmp_path / "missing.jsonl", tmp_path, Path(f"{gold}\0x")):
        assert str(error_of(score_files, bad, gold)) == "file_unreadable (gold)"
        assert str(error_of(load_schema, bad)) == "file_unreadable (schema)"


# --- gzip -------------------------------------------------------------------------------


def gzipped(path: Path, target: Path) -> Path:
    target.write_bytes(gzip.compress(path.read_bytes()))
    return target


@pytest.mark.parametrize("parallel", [False, True])
def test_gzip_inputs_give_the_same_report(tmp_path: Path, parallel: bool) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    predictions = write_jsonl(tmp_path / "p.jsonl", PREDICTIONS)
    expected = score_files(gold, predictions).to_json()
    gold_gz = gzipped(gold, tmp_path / "g.jsonl.gz")
    predictions_gz = gzipped(predictions, tmp_path / "predictions-without-suffix")
    assert score_files(gold_gz, predictions_gz, parallel=parallel).to_json() == expected
    assert score_files(gold, predictions_gz, parallel=parallel).to_json() == expected
    # Recognised by its bytes, not its name: a plain file called *.gz is plain.
    plain_named_gz = tmp_path / "plain.jsonl.gz"
    plain_named_gz.write_bytes(gold.read_bytes())
    assert score_files(plain_named_gz, predictions, parallel=parallel).to_json() == expected


def test_concatenated_gzip_members_are_one_file(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    lines = gold.read_bytes().splitlines(keepends=True)
    members = tmp_path / "members.gz"
    members.write_bytes(b"".join(gzip.compress(line) for line in lines))
    predictions = write_jsonl(tmp_path / "p.jsonl", PREDICTIONS)
    expected = score_files(gold, predictions).to_json()
    assert score_files(members, predictions).to_json() == expected


@pytest.mark.parametrize(
    ("damage", "line"),
    [
        (lambda data: data[: len(data) // 2], 1),  # truncated
        (lambda data: data[:10] + bytes(b ^ 0xFF for b in data[10:30]) + data[30:], 1),
        (lambda data: data[:-8] + b"\0" * 8, 1),  # wrong checksum and length
        (lambda data: data + b"trailing garbage", 1),
    ],
)
def test_a_damaged_gzip_file_is_unreadable(tmp_path: Path, damage: object, line: int) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", GOLD)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(damage(gzip.compress(gold.read_bytes())))  # type: ignore[operator]
    error = error_of(lambda: score_files(bad, gold))
    assert error.code is ErrorCode.FILE_UNREADABLE and error.input is InputKind.GOLD
    assert error.line is not None and error.line >= line


def test_a_gzip_bomb_meets_the_line_limit_in_bounded_memory(tmp_path: Path) -> None:
    # 1 GiB of one character and no line break, as 1024 gzip members of 1 MiB each
    # (one stream to a reader): about 1 MiB on disk.
    bomb = tmp_path / "bomb.gz"
    member = gzip.compress(b"A" * (1 << 20), compresslevel=9)
    with bomb.open("wb") as out:
        out.write(gzip.compress(b'{"case_id": "'))
        for _ in range(1024):
            out.write(member)
    assert bomb.stat().st_size < 4 << 20
    tracemalloc.start()
    try:
        with open_input(str(bomb), InputKind.GOLD) as stream:
            error = error_of(lambda: list(iter_objects(stream, InputKind.GOLD)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(error) == "line_too_long (gold line 1)"
    assert peak < 8 * MAX_LINE_BYTES  # a few blocks, never the gigabyte


def test_a_gzip_schema_bomb_is_too_large(tmp_path: Path) -> None:
    bomb = tmp_path / "schema.json"
    member = gzip.compress(b" " * (1 << 20), compresslevel=9)
    bomb.write_bytes(gzip.compress(b'{"fields": {}, "x": "') + member * 40)
    error = error_of(load_schema, bomb)
    assert str(error) == "file_too_large (schema)"


def test_input_stream_reads_in_any_sizes(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + os.urandom(5000)
    for content in (data, gzip.compress(data)):
        path = tmp_path / "data"
        path.write_bytes(content)
        for sizes in ([1, 1, 1, 3, 7, -1], [2, 10_000, 5], [0, 1, 0, 4096, 4096]):
            with open_input(str(path), InputKind.GOLD) as stream:
                parts = [stream.read(size) for size in sizes]
                parts.append(stream.read())
            assert b"".join(parts) == data
            assert all(
                len(part) <= size for part, size in zip(parts, sizes, strict=False) if size >= 0
            )


def test_input_stream_wraps_any_binary_stream() -> None:
    stream = InputStream(io.BytesIO(b"\x1f"))  # shorter than the gzip magic: plain
    assert stream.read(10) == b"\x1f" and stream.read(10) == b""


# --- schema files ---------------------------------------------------------------------------

TOML = '[fields."hx.smoking"]\ntype = "categorical"\nchoices = ["never", "former", "current"]\n'


@pytest.mark.parametrize(
    ("name", "toml"),
    [
        ("schema.toml", True),
        ("schema.TOML", True),
        ("Schema.Toml", True),
        ("schema.toml.gz", True),
        ("schema.TOML.GZ", True),
        ("schema.json", False),
        ("schema.toml.json", False),
        ("schema", False),
        ("toml", False),
    ],
)
def test_toml_is_chosen_by_name_in_any_case(tmp_path: Path, name: str, toml: bool) -> None:
    assert is_toml_name(name) is toml
    path = tmp_path / name
    text = TOML if toml else '{"fields": {"hx.smoking": {"type": "categorical"}}}'
    data = text.encode()
    path.write_bytes(gzip.compress(data) if name.lower().endswith(".gz") else data)
    assert "hx.smoking" in load_schema(path).fields
    assert is_toml_name(STDIN) is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"fields": {\n  "a.b": {"type": "text"},\n  "c.d": {"type" "text"}\n}}', "line 3"),
        ('\n\n\n\n{"fields": {}', "line 5"),
        ("{}\n{}", "line 2"),
    ],
)
def test_a_json_schema_syntax_error_names_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "schema.json"
    path.write_text(text)
    assert str(error_of(lambda: load_schema(path))) == f"invalid_json (schema {message})"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[fields."a.b"]\ntype = "text"\nx = = 1\n', "invalid_json (schema line 3)"),
        ('[fields."a.b"]\ntype = "text"\n[fields."a.b"]\n', "invalid_json (schema line 3)"),
        ("x = [1,\n2,\n", "invalid_json (schema line 3)"),  # at the end of the document
        ("x = [1,\n2,", "invalid_json (schema line 2)"),
        ('[fields."a.b"]\nlevels = [' + "9" * 5000 + "]\n", "number_out_of_range (schema)"),
        ('[fields."a.b"]\nlevels = [' + "9" * 101 + "]\n", "number_out_of_range (schema)"),
        ('[fields."a.b"]\nlevels = [-' + "9" * 101 + "]\n", "number_out_of_range (schema)"),
        ('[fields."a.b"]\ntolerance = 1e10000\n', "number_out_of_range (schema)"),
        ('[fields."a.b"]\ntolerance = 0.' + "1" * 130 + "\n", "number_out_of_range (schema)"),
        ('[fields."a.b"]\ntolerance = nan\n', "nonfinite_number (schema)"),
        ('[fields."a.b"]\ntolerance = -inf\n', "nonfinite_number (schema)"),
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nesting_too_deep (schema)"),
        ("x = " + "{y = " * 3000 + "1" + "}" * 3000 + "\n", "nesting_too_deep (schema)"),
    ],
)
def test_toml_follows_the_json_limits(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "schema.toml"
    path.write_text(text)
    assert str(error_of(lambda: load_schema(path))) == expected


def test_toml_numbers_within_the_limits_are_exact(tmp_path: Path) -> None:
    path = tmp_path / "schema.toml"
    path.write_text(
        '[fields."n.x"]\ntype = "number"\ntolerance = 0.1_5\n'
        '[fields."o.x"]\ntype = "ordinal"\nlevels = [' + "9" * 15 + ", 1]\n"
    )
    schema = load_schema(path)
    assert schema.fields["n.x"].tolerance == Decimal("0.15")
    assert schema.fields["o.x"].levels == (int("9" * 15), 1)
    # Past 2**53 - 1 a level is exact too, and refused: a schema is written as canonical
    # JSON (the ledger's schema digest, an importer's schema), which holds no larger integer.
    path.write_text('[fields."o.x"]\ntype = "ordinal"\nlevels = [' + "9" * 99 + ", 1]\n")
    assert str(error_of(lambda: load_schema(path))) == "schema_invalid_levels (schema field o.x)"


def test_the_schema_size_limit_has_its_own_code(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_bytes(b'{"fields": {}}' + b" " * (MAX_SCHEMA_BYTES - 14))
    assert load_schema(path).fields == {}  # exactly at the limit
    with path.open("ab") as more:
        more.write(b" ")
    assert str(error_of(lambda: load_schema(path))) == "file_too_large (schema)"
    assert "16 MiB" in describe(ErrorCode.FILE_TOO_LARGE)
    assert "JSON Lines" not in describe(ErrorCode.FILE_TOO_LARGE)  # not the line-limit wording


@settings(max_examples=examples(50), deadline=None)
@given(st.binary(max_size=200))
def test_any_gzip_payload_reads_back(payload: bytes) -> None:
    stream = InputStream(io.BytesIO(gzip.compress(payload)))  # type: ignore[arg-type]
    assert stream.read(-1) == payload
