"""Privacy canaries for the ledger and batch (docs/privacy.md, docs/ledger.md).

Markers (tests/test_privacy.py's :class:`Canary`) are planted in every slot of the
gold and prediction files (case ids, values of every type, digests, offsets, evidence),
in the schema's options, and in every path (the folder of the files, the ledger and the
key). ``score``, ``compare`` and ``share`` with ``--ledger`` and a ``batch`` then write
a ledger, and ``ledger show`` reads it. Searched: every ledger line, stdout and stderr
of every command; the ledger's report parts keep the closed report vocabulary; and no
line holds a plain (unkeyed) SHA-256 of any input file, line or value.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from chartscore.documents.canonical_json import canonical_json
from ledger_data import write_key
from test_privacy import (
    FIELD_TYPES,
    NO_SHRINK,
    Canary,
    assert_clean_bytes,
    assert_clean_streams,
    assert_report_vocabulary,
    canaries,
    dataset,
    declared_labels,
    jsonl,
    marker_directory,
    run_in_process,
    schema_document,
)

from helpers import examples

CANARY_SETTINGS = settings(
    max_examples=examples(6),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=NO_SHRINK,
)


def plain_digests(paths: list[Path]) -> set[str]:
    """Every SHA-256 (hex) a careless ledger could hold: of each file, each line, each value."""
    found = set()
    for path in paths:
        data = path.read_bytes()
        found.add(hashlib.sha256(data).hexdigest())
        for line in data.splitlines():
            found.add(hashlib.sha256(line).hexdigest())
            row = json.loads(line)
            for value in row.values():
                text = value if isinstance(value, str) else json.dumps(value, default=str)
                found.add(hashlib.sha256(text.encode()).hexdigest())
    return found


@CANARY_SETTINGS
@given(canaries)
def test_the_ledger_and_its_commands_hold_no_value_id_path_or_plain_digest(c: Canary) -> None:
    check_the_ledger(c, share=False)


@settings(CANARY_SETTINGS, max_examples=1)
@given(canaries)
def test_a_shared_run_in_the_ledger_holds_nothing_either(c: Canary) -> None:
    check_the_ledger(c, share=True)  # sharing solves integer programs: one example


def check_the_ledger(c: Canary, *, share: bool) -> None:
    """Every command with the ledger, on canary data; then every channel and the ledger."""
    with marker_directory(c) as base:
        folder = base / f"runs-{c.marker}"
        folder.mkdir()
        gold_rows, prediction_rows = dataset(c)
        gold = base / f"gold-{c.marker}.jsonl"
        gold.write_text(jsonl(gold_rows), encoding="utf-8")
        schema = base / f"schema-{c.marker}.json"
        schema.write_text(json.dumps(schema_document(c)), encoding="utf-8")
        first, second = folder / "system-a.jsonl", folder / "system-b.jsonl"
        first.write_text(jsonl(prediction_rows), encoding="utf-8")
        second.write_text(jsonl(prediction_rows[::2]), encoding="utf-8")
        broken = folder / "broken.jsonl"
        broken.write_text(jsonl(prediction_rows)[:-9] + "\n", encoding="utf-8")
        key = write_key(base / f"key-{c.marker}")
        ledger = base / f"ledger-{c.marker}.jsonl"
        common = ["--gold", str(gold), "--schema", str(schema), "--ledger", str(ledger)]
        common += ["--ledger-key", str(key)]
        commands = [
            (0, ["score", "--predictions", str(first), *common, "--out", str(base / "r.json")]),
            (0, ["compare", "--baseline", str(first), "--candidate", str(second), *common,
                 "--out", str(base / "c.json")]),
            (1, ["batch", "--gold", str(gold), "--predictions", str(folder / "*.jsonl"),
                 "--schema", str(schema), "--ledger", str(ledger), "--ledger-key", str(key),
                 "--baseline", "system-a", "--jobs", "2"]),
            (0, ["ledger", "show", "--ledger", str(ledger)]),
            (0, ["ledger", "show", "--ledger", str(ledger), "--mixed", "--all"]),
        ]  # fmt: skip
        if share:
            commands.insert(
                2,
                (0, ["share", "--predictions", str(second), *common, "--min-cell", "2",
                     "--out", str(base / "s.json"), "--quiet"]),
            )  # fmt: skip
        for expected, argv in commands:
            status, out, err = run_in_process(argv)
            assert status == expected, (argv[0], err)
            assert_clean_streams(out, err, c, " ".join(argv[:2]))
            assert str(base) not in out + err
        data = ledger.read_bytes()
        assert ledger.stat().st_mode & 0o777 == 0o600
        # The ledger holds the run's report, which names the schema's declared labels.
        assert_clean_bytes(data, c, "the ledger", declared_labels(c))
        text = data.decode("utf-8")
        for digest in plain_digests([gold, first, second, schema]):
            assert digest not in text, "a plain digest of an input"
        lines = [json.loads(line) for line in data.splitlines()]
        assert len(lines) == 2 + share + 4  # score, compare (share); batch: 3 runs, 1 comparison
        for line in lines:
            if line["kind"] == "score" and line["result"] is not None:
                assert_report_vocabulary(
                    canonical_json(line["result"]), set(FIELD_TYPES), declared_labels(c)
                )
            assert {line["system"], line.get("versus", "system-a")} <= {
                "system-a", "system-b", "broken",
            }  # fmt: skip
        assert any(line["status"] == "failed" for line in lines)


@CANARY_SETTINGS
@given(canaries)
def test_ledger_and_batch_errors_hold_no_path_or_name(c: Canary) -> None:
    with marker_directory(c) as base:
        gold_rows, prediction_rows = dataset(c)
        gold = base / "gold.jsonl"
        gold.write_text(jsonl(gold_rows), encoding="utf-8")
        runs = base / "runs"
        runs.mkdir()
        (runs / f"{c.marker} {c.wide}.jsonl").write_text(jsonl(prediction_rows), "utf-8")
        key = write_key(base / f"{c.marker}.key")
        exposed = write_key(base / f"{c.marker}-open.key", mode=0o644)
        ledger = base / f"{c.marker}.jsonl"
        schema = ["--schema", str(base / "schema.json")]
        (base / "schema.json").write_text(json.dumps(schema_document(c)), encoding="utf-8")
        batch = ["batch", "--gold", str(gold), "--predictions", str(runs / "*.jsonl"), *schema]
        expected = {
            "invalid_run_label (predictions part 1)": [
                *batch, "--ledger", str(ledger), "--ledger-key", str(key),
            ],
            "file_exposed (ledger_key)": [
                *batch, "--ledger", str(ledger), "--ledger-key", str(exposed),
            ],
            "file_unreadable (ledger_key)": [
                *batch, "--ledger", str(ledger), "--ledger-key", str(base / c.marker),
            ],
            "file_unreadable (ledger)": ["ledger", "show", "--ledger", str(ledger)],
            "not_a_ledger (ledger line 1)": ["ledger", "show", "--ledger", str(gold)],
            "invalid_run_label (predictions)": [
                "score", "--gold", str(gold), "--predictions",
                str(runs / f"{c.marker} {c.wide}.jsonl"), *schema, "--ledger", str(ledger),
                "--ledger-key", str(key),
            ],
        }  # fmt: skip
        os.environ.pop("CHARTSCORE_LEDGER_KEY_FILE", None)
        for message, argv in expected.items():
            status, out, err = run_in_process(argv)
            assert (status, out) == (1, ""), (message, err)
            assert err.startswith(f"chartscore: error: {message}: "), err
            assert_clean_streams(out, err, c, message)
        assert not ledger.exists()
