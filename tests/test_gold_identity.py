"""The gold set's keyed identity and the ledger key (docs/ledger.md#the-gold-identity).

The identity is recomputed here from its written definition with the standard library's
own ``hmac`` and ``json`` (an independent reference), and checked to be a property of
the gold set: the same rows in any order or spelling give it; any change, or another
key, gives another.
"""

from __future__ import annotations

import gzip
import hmac
import json
import os
import pickle
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode, GoldField
from chartscore.io.ledger_file import KEY_FILE_VARIABLE, gold_file_identity, load_ledger_key
from chartscore.records.gold_identity import LedgerKey, gold_identity
from ledger_data import KEY, write_key

from helpers import dumps, examples

E = ErrorCode
GOLD_ROWS = [
    {"case_id": "c-001", "field_id": "hx.smoking", "field_type": "categorical", "value": "former"},
    {"case_id": "c-001", "field_id": "echo.lvef", "field_type": "number", "value": 35},
    {"case_id": "c-002", "field_id": "echo.lvef", "field_type": "number", "value": Decimal("55.5")},
    {"case_id": "c-002", "field_id": "hx.smoking", "field_type": "categorical", "value": None},
    {"case_id": "c-003", "field_id": "dx.flag", "field_type": "boolean", "value": True},
    {"case_id": "c-003", "field_id": "hx.sx", "field_type": "multi", "value": ["fever", "cough"]},
    {"case_id": "cé-\u2603", "field_id": "hx.note", "field_type": "text", "value": 'a "q" é'},
]


def reference_identity(lines: list[str], secret: bytes) -> str:
    """The definition of docs/ledger.md, step by step, with hmac and json (not chartscore)."""
    total, rows = 0, 0
    for line in lines:
        row = json.loads(line, parse_float=Decimal)
        value = row["value"]
        if isinstance(value, list):
            value_text = json.dumps(sorted(value), separators=(",", ":"))
        elif isinstance(value, Decimal):
            value_text = str(value)
        else:
            value_text = json.dumps(value)
        text = (
            "["
            + ",".join(json.dumps(row[k]) for k in ("case_id", "field_id", "field_type"))
            + ","
            + value_text
            + "]"
        )
        tag = hmac.digest(secret, b"chartscore gold row 1\n" + text.encode("ascii"), "sha256")
        total += int.from_bytes(tag, "big")
        rows += 1
    message = b"chartscore gold set 1\n" + str(rows).encode() + b"\n"
    message += (total % 2**256).to_bytes(32, "big")
    return "hmac-sha256:" + hmac.digest(secret, message, "sha256").hex()


def jsonl(rows: list[dict[str, object]]) -> list[str]:
    return [dumps(row) for row in rows]  # Decimals as their exact literals (55.50)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def key() -> LedgerKey:
    return LedgerKey(KEY)


def test_the_identity_is_the_documented_one(tmp_path: Path, key: LedgerKey) -> None:
    lines = jsonl(GOLD_ROWS)
    expected = reference_identity(lines, KEY)
    assert gold_file_identity(write(tmp_path / "g.jsonl", lines), key).digest() == expected
    records = [GoldField.from_dict(json.loads(line, parse_float=Decimal)) for line in lines]
    assert gold_identity(records, key) == expected
    assert expected.startswith("hmac-sha256:") and len(expected) == 12 + 64


@settings(max_examples=examples(60), deadline=None)
@given(st.binary(min_size=32, max_size=300), st.binary(max_size=200))
def test_the_key_macs_as_the_standard_library_does(secret: bytes, message: bytes) -> None:
    assert LedgerKey(secret).mac(message) == hmac.digest(secret, message, "sha256")


@settings(max_examples=examples(40), deadline=None)
@given(st.permutations(range(len(GOLD_ROWS))), st.booleans())
def test_order_and_spelling_do_not_change_it(order: list[int], spaced: bool) -> None:
    key = LedgerKey(KEY)
    rows = [GOLD_ROWS[i] for i in order]
    if spaced:  # another key order and spacing: the same rows
        rows = [dict(reversed(list(row.items()))) for row in rows]
    lines = jsonl(rows)
    if spaced:
        lines = [line.replace(", ", " ,  ") for line in lines]
    records = [GoldField.from_dict(json.loads(line, parse_float=Decimal)) for line in lines]
    assert gold_identity(records, key) == reference_identity(jsonl(GOLD_ROWS), KEY)


def test_any_change_or_another_key_changes_it(tmp_path: Path, key: LedgerKey) -> None:
    base = gold_file_identity(write(tmp_path / "g.jsonl", jsonl(GOLD_ROWS)), key).digest()
    changed = [dict(row) for row in GOLD_ROWS]
    changed[0]["value"] = "current"
    variants = {
        "a value": jsonl(changed),
        "a row fewer": jsonl(GOLD_ROWS[1:]),
        "a case id": jsonl([{**GOLD_ROWS[0], "case_id": "c-009"}, *GOLD_ROWS[1:]]),
        "55.50 for 55.5": [line.replace("55.5", "55.50") for line in jsonl(GOLD_ROWS)],
        "a string for a number": [line.replace("35}", '"35"}') for line in jsonl(GOLD_ROWS)],
    }
    seen = {base}
    for name, lines in variants.items():
        digest = gold_file_identity(write(tmp_path / f"{len(seen)}.jsonl", lines), key).digest()
        assert digest not in seen, name
        seen.add(digest)
    other = LedgerKey(KEY[::-1])
    assert gold_file_identity(tmp_path / "g.jsonl", other).digest() not in seen
    assert other.key_id != key.key_id


def test_gzip_and_records_agree_with_the_file(tmp_path: Path, key: LedgerKey) -> None:
    lines = jsonl(GOLD_ROWS)
    plain = write(tmp_path / "g.jsonl", lines)
    packed = tmp_path / "g.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert gold_file_identity(packed, key).digest() == gold_file_identity(plain, key).digest()


def test_the_key_id_is_a_tag_of_a_fixed_string(key: LedgerKey) -> None:
    expected = hmac.digest(KEY, b"chartscore ledger key id 1\n", "sha256").hex()[:16]
    assert key.key_id == expected


def test_the_key_is_hidden_and_never_pickled(key: LedgerKey) -> None:
    assert repr(key) == "LedgerKey(<hidden>)"
    assert KEY.decode() not in repr(key) and not hasattr(key, "__dict__")
    with pytest.raises(ChartscoreError) as raised:
        pickle.dumps(key)
    assert raised.value.code is E.USAGE
    for secret in (b"x" * 31, b"x" * 4097, "a" * 40, bytearray(KEY)):
        with pytest.raises(ChartscoreError) as refused:
            LedgerKey(secret)  # type: ignore[arg-type]
        assert refused.value.code is E.LEDGER_KEY_INVALID


def test_gold_from_standard_input_has_no_identity(key: LedgerKey) -> None:
    from chartscore.io import STDIN

    with pytest.raises(ChartscoreError) as raised:
        gold_file_identity(STDIN, key)
    assert str(raised.value) == "invalid_path (gold)"


def test_a_gold_error_is_located_by_line(tmp_path: Path, key: LedgerKey) -> None:
    path = write(tmp_path / "g.jsonl", [*jsonl(GOLD_ROWS[:2]), "{not json"])
    with pytest.raises(ChartscoreError) as raised:
        gold_file_identity(path, key)
    assert str(raised.value) == "invalid_json (gold line 3)"


# --- the key file --------------------------------------------------------------------------


def code_of(call: object) -> str:
    try:
        call()  # type: ignore[operator]
    except ChartscoreError as error:
        assert error.__cause__ is None and error.__context__ is None
        return str(error)
    raise AssertionError("no error")


def test_the_key_file_rules(tmp_path: Path) -> None:
    good = write_key(tmp_path / "good.key")
    assert load_ledger_key(good).key_id == LedgerKey(KEY).key_id
    newline = write_key(tmp_path / "newline.key", KEY + b"\n")
    assert load_ledger_key(newline).key_id == LedgerKey(KEY).key_id  # one line end dropped
    crlf = write_key(tmp_path / "crlf.key", KEY + b"\r\n")
    assert load_ledger_key(crlf).key_id == LedgerKey(KEY).key_id
    binary = bytes(range(200, 231)) + b"\r"  # a random key may end with any byte: kept whole
    assert load_ledger_key(write_key(tmp_path / "b1.key", binary)).key_id == (
        LedgerKey(binary).key_id
    )
    binary = bytes(range(200, 231)) + b"\n"
    assert load_ledger_key(write_key(tmp_path / "b2.key", binary)).key_id == (
        LedgerKey(binary).key_id
    )
    link = tmp_path / "link.key"
    link.symlink_to(good)  # secret mounts are links: followed
    assert load_ledger_key(link).key_id == LedgerKey(KEY).key_id
    assert load_ledger_key(environ={KEY_FILE_VARIABLE: str(good)}).key_id == LedgerKey(KEY).key_id
    cases = {
        "ledger_key_missing (ledger_key)": lambda: load_ledger_key(environ={}),
        "ledger_key_missing (ledger_key) ": lambda: load_ledger_key(
            environ={KEY_FILE_VARIABLE: ""}
        ),
        "file_exposed (ledger_key)": lambda: load_ledger_key(
            write_key(tmp_path / "open.key", mode=0o640)
        ),
        "file_exposed (ledger_key) ": lambda: load_ledger_key(
            write_key(tmp_path / "world.key", mode=0o604)
        ),
        "ledger_key_invalid (ledger_key)": lambda: load_ledger_key(
            write_key(tmp_path / "short.key", KEY[:31])
        ),
        "ledger_key_invalid (ledger_key) ": lambda: load_ledger_key(
            write_key(tmp_path / "zeros.key", b"\0" * 64)
        ),
        "ledger_key_invalid (ledger_key)  ": lambda: load_ledger_key(
            write_key(tmp_path / "long.key", bytes(range(256)) * 17)
        ),
        "file_unreadable (ledger_key)": lambda: load_ledger_key(tmp_path / "absent.key"),
        "file_unreadable (ledger_key) ": lambda: load_ledger_key(tmp_path),
    }
    for expected, call in cases.items():
        assert code_of(call) == expected.strip(), expected
    from chartscore.io import STDIN

    assert code_of(lambda: load_ledger_key(STDIN)) == "invalid_path (ledger_key)"
    assert code_of(lambda: load_ledger_key(environ=os.environ)) == "usage"  # a dict only


@settings(max_examples=examples(60), deadline=None)
@given(st.binary(min_size=32, max_size=80).filter(lambda data: len(set(data)) >= 8))
def test_a_random_binary_key_is_read_whole(data: bytes) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = write_key(Path(folder) / "key", data)
        printable_text = data.endswith(b"\n") and all(
            0x20 <= byte <= 0x7E for byte in data.removesuffix(b"\n").removesuffix(b"\r")
        )
        expected = data if not printable_text else data.removesuffix(b"\n").removesuffix(b"\r")
        assume(len(expected) >= 32)
        assert load_ledger_key(path).key_id == LedgerKey(expected).key_id
