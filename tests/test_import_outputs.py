"""What an import writes: all its outputs or none, each on its own path, never an empty gold file.

An import writes up to three files (gold, predictions, schema). They are written to
temporary files first and renamed only when every one is complete, so a failure (a full
disk on the second output) leaves every old output as it was and no new one. Two outputs
on one path are refused before any input is read, with a code that says so. An export
that would give an empty gold file (a header and no rows) is refused, as ``score``
would refuse the file.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import chartscore
import chartscore.io.output as output_module
from chartscore import ChartscoreError, ErrorCode
from chartscore.cli import main
from chartscore.errors import describe
from chartscore.importers import import_csv, import_labelstudio, import_redcap, write_imported

DATA = Path(__file__).resolve().parent / "data" / "importers"
UI = DATA / "redcap_dictionary_ui.csv"
GOLD = DATA / "redcap_records_gold.csv"
COLD = DATA / "labelstudio_cold.json"
TABLE = DATA / "csv_table.csv"
COLUMNS = DATA / "csv_columns.toml"
SCHEMA = DATA / "csv_schema.json"
CODES = ["UNK", "NA"]  # the gold export's missing-data codes
SRC = str(Path(chartscore.__file__).resolve().parents[1])
UNWRITABLE = (
    f"chartscore: error: output_unwritable (output): {describe(ErrorCode.OUTPUT_UNWRITABLE)}\n"
)


def run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    status = main(argv, stdout=io.StringIO(), stderr=err)
    return status, err.getvalue()


def labelstudio_argv(folder: Path) -> list[str]:
    """Import chart-review's cold project to gold, predictions and schema in ``folder``."""
    return [
        "import",
        "labelstudio",
        "--export",
        str(COLD),
        "--gold-annotator",
        "6",
        "--annotator",
        "3",
        "--gold-out",
        str(folder / "gold.jsonl"),
        "--predictions-out",
        str(folder / "predictions.jsonl"),
        "--schema-out",
        str(folder / "schema.json"),
    ]


OUTPUTS = ("gold.jsonl", "predictions.jsonl", "schema.json")


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


# --- all outputs or none -------------------------------------------------------------------


@pytest.mark.parametrize("old_outputs", [False, True], ids=["new", "over old outputs"])
def test_a_full_disk_on_the_second_output_leaves_no_new_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_outputs: bool
) -> None:
    if old_outputs:  # an earlier import's files: gold must never be new beside old predictions
        for name in OUTPUTS:
            (tmp_path / name).write_bytes(f"old {name}\n".encode())
    before = contents(tmp_path)
    real_fsync = os.fsync
    files_synced: list[int] = []

    def full_disk_on_the_second_file(descriptor: int) -> None:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):  # a file's data, not a folder's entry
            files_synced.append(descriptor)
            if len(files_synced) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(descriptor)

    monkeypatch.setattr(output_module.os, "fsync", full_disk_on_the_second_file)
    assert run(labelstudio_argv(tmp_path)) == (1, UNWRITABLE)
    assert contents(tmp_path) == before  # nothing new, no temporary file, old files intact
    monkeypatch.setattr(output_module.os, "fsync", real_fsync)
    assert run(labelstudio_argv(tmp_path))[0] == 0  # and with room, all three are written
    assert sorted(contents(tmp_path)) == sorted(OUTPUTS)


def test_a_full_disk_leaves_no_new_output_on_a_real_file_system(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare")
    export = tmp_path / "export.json"
    labels = [{"value": {"labels": ["Cough", "Fever"]}}]
    tasks = [
        {
            "id": note,
            "annotations": [{"completed_by": person, "result": labels} for person in (1, 2)],
        }
        for note in range(1, 301)
    ]
    export.write_text(json.dumps(tasks), encoding="utf-8")
    disk = tmp_path / "disk"
    disk.mkdir()
    # On a 40 KiB file system (in a private mount namespace) the gold file (about 24 KB)
    # fits and the predictions (about 22 KB) do not: first on an empty disk, then over
    # an earlier import's three small files. Then list what is left, and print it.
    script = (
        'd="$1"; py="$2"; shift 2; mount -t tmpfs -o size=40k tmpfs "$d" || exit 99; '
        'out() { "$py" -m chartscore "$@" --gold-out "$d/gold.jsonl" '
        '--predictions-out "$d/predictions.jsonl" --schema-out "$d/schema.json"; }; '
        'out "$@"; a=$?; ls -A "$d"; echo ---; '
        'for f in gold.jsonl predictions.jsonl schema.json; do echo "old $f" > "$d/$f"; done; '
        'out "$@"; b=$?; echo "$a $b"; ls -A "$d"; cat "$d/gold.jsonl" "$d/predictions.jsonl"'
    )
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    argv = ["import", "labelstudio", "--export", str(export), "--gold-annotator", "1"]
    argv += ["--annotator", "2"]
    result = subprocess.run(
        [*command, str(disk), sys.executable, *argv],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=120,
        check=False,
    )
    if result.returncode == 99 or b"unshare" in result.stderr:
        pytest.skip("cannot mount a small file system here")
    assert result.stderr == UNWRITABLE.encode() * 2
    listing = "---\n1 1\ngold.jsonl\npredictions.jsonl\nschema.json\n"
    assert result.stdout.decode() == listing + "old gold.jsonl\nold predictions.jsonl\n"


def test_the_library_writes_all_outputs_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imported = import_redcap(UI, GOLD, missing_codes=CODES)
    gold, schema = tmp_path / "gold.jsonl", tmp_path / "schema.json"

    for failing in ("fsync", "chmod"):  # the first output's data, or the second's mode
        calls: list[object] = []
        real = getattr(output_module.os, failing)

        def fail_on_second(*args: object, real: object = real, calls: list[object] = calls) -> None:
            calls.append(args)
            if len(calls) == 2:
                raise OSError(errno.ENOSPC, "No space left on device")
            real(*args)  # type: ignore[operator]

        monkeypatch.setattr(output_module.os, failing, fail_on_second)
        with pytest.raises(ChartscoreError) as caught:
            write_imported(imported, gold=gold, schema=schema, inputs=[UI, GOLD])
        assert caught.value.code is ErrorCode.OUTPUT_UNWRITABLE
        assert caught.value.__context__ is None and caught.value.__cause__ is None
        assert list(tmp_path.iterdir()) == [], failing
        monkeypatch.setattr(output_module.os, failing, real)
    write_imported(imported, gold=gold, schema=schema, inputs=[UI, GOLD])
    assert stat.S_IMODE(gold.stat().st_mode) == 0o600
    assert json.loads(schema.read_text())["fields"]


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, SystemExit])
def test_ctrl_c_while_the_outputs_are_written_leaves_no_new_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interruption: type[BaseException]
) -> None:
    for name in OUTPUTS:
        (tmp_path / name).write_bytes(b"old\n")
    real_fsync = os.fsync
    synced: list[int] = []

    def interrupted_on_the_second(descriptor: int) -> None:
        synced.append(descriptor)
        if len(synced) == 2:
            raise interruption
        real_fsync(descriptor)

    monkeypatch.setattr(output_module.os, "fsync", interrupted_on_the_second)
    imported = import_labelstudio(COLD, gold_annotator=6, annotator=3)
    targets = {
        part: tmp_path / name
        for part, name in zip(("gold", "predictions", "schema"), OUTPUTS, strict=True)
    }
    with pytest.raises(interruption):
        write_imported(imported, **targets, inputs=[COLD])  # type: ignore[arg-type]
    assert contents(tmp_path) == dict.fromkeys(OUTPUTS, b"old\n")  # no temporary file either


def test_a_rename_that_fails_part_way_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in OUTPUTS:
        (tmp_path / name).write_bytes(b"old\n")
    real_replace = os.replace
    renamed: list[str] = []

    def fail_on_second(source: str, target: str) -> None:
        if renamed:
            raise OSError(errno.EIO, "Input/output error")
        renamed.append(target)
        real_replace(source, target)

    monkeypatch.setattr(output_module.os, "replace", fail_on_second)
    status, err = run(labelstudio_argv(tmp_path))
    assert status == 1
    assert err == (
        "chartscore: error: output_unwritable (output; some outputs were replaced, "
        f"the others not): {describe(ErrorCode.OUTPUT_UNWRITABLE)}\n"
    )
    found = contents(tmp_path)
    assert sorted(found) == sorted(OUTPUTS)  # no temporary file is left
    assert [name for name in OUTPUTS if found[name] != b"old\n"] == [Path(renamed[0]).name]


# --- each output its own path, checked before reading --------------------------------------


def test_two_outputs_on_one_path_are_refused_before_any_input_is_read(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.csv")  # reading it would be file_unreadable
    same = str(tmp_path / "out")
    expected = (
        f"chartscore: error: duplicate_output (output): {describe(ErrorCode.DUPLICATE_OUTPUT)}\n"
    )
    redcap = ["import", "redcap", "--dictionary", missing, "--records", missing]
    assert run([*redcap, "--gold-out", same, "--schema-out", same]) == (1, expected)
    labelstudio = ["import", "labelstudio", "--export", missing, "--gold-annotator", "1"]
    labelstudio += ["--annotator", "2", "--gold-out", same]
    assert run([*labelstudio, "--predictions-out", same]) == (1, expected)
    assert run([*labelstudio, "--predictions-out", "x", "--schema-out", same]) == (1, expected)
    # Another spelling, a hard link: the same file.
    Path(same).write_bytes(b"old\n")
    os.link(same, tmp_path / "link")
    spelled = str(tmp_path / "." / "out")
    assert run([*redcap, "--gold-out", same, "--schema-out", spelled]) == (1, expected)
    assert run([*redcap, "--gold-out", same, "--schema-out", str(tmp_path / "link")]) == (
        1,
        expected,
    )
    assert Path(same).read_bytes() == b"old\n"
    assert describe(ErrorCode.DUPLICATE_OUTPUT) != describe(ErrorCode.OUTPUT_IS_INPUT)
    # The library says the same.
    imported = import_redcap(UI, GOLD, missing_codes=CODES)
    with pytest.raises(ChartscoreError) as caught:
        write_imported(imported, gold=same, schema=str(tmp_path / "link"), inputs=[UI, GOLD])
    assert str(caught.value) == "duplicate_output (output)"
    assert Path(same).read_bytes() == b"old\n"


# --- never an empty gold file --------------------------------------------------------------


def test_a_header_only_redcap_export_is_refused(tmp_path: Path) -> None:
    header = GOLD.read_bytes().splitlines(keepends=True)[0]
    records = tmp_path / "records.csv"
    records.write_bytes(header)
    for role in ("gold", "predictions"):
        with pytest.raises(ChartscoreError) as caught:
            import_redcap(UI, records, role=role, missing_codes=CODES)  # type: ignore[arg-type]
        assert str(caught.value) == "empty_export (records)"
        out = tmp_path / f"{role}.jsonl"
        argv = ["import", "redcap", "--dictionary", str(UI), "--records", str(records)]
        argv += ["--missing-codes", ",".join(CODES)]
        expected = (
            f"chartscore: error: empty_export (records): {describe(ErrorCode.EMPTY_EXPORT)}\n"
        )
        assert run([*argv, f"--{role}-out", str(out)]) == (1, expected)
        assert not out.exists()
    # Rows whose every cell is empty give no gold row either; as predictions they are
    # an abstractor who answered nothing, which scores.
    records.write_bytes(header + b"101" + b";" * (header.count(b";")) + b"\n")
    with pytest.raises(ChartscoreError) as caught:
        import_redcap(UI, records, missing_codes=CODES)
    assert str(caught.value) == "empty_export (records)"
    answered_nothing = import_redcap(UI, records, role="predictions", missing_codes=CODES)
    assert answered_nothing.predictions == ()
    assert answered_nothing.counts["cases"] == 0  # the cases written, as import csv counts


def test_a_header_only_table_is_refused(tmp_path: Path) -> None:
    from chartscore import load_schema

    table = tmp_path / "table.csv"
    table.write_bytes(TABLE.read_bytes().splitlines(keepends=True)[0])
    for role, schema in (("gold", load_schema(SCHEMA)), ("predictions", None)):
        with pytest.raises(ChartscoreError) as caught:
            import_csv(table, COLUMNS, role=role, schema=schema)  # type: ignore[arg-type]
        assert str(caught.value) == "empty_export (table)"


def test_annotators_with_no_note_in_common_are_refused(tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    tasks = [
        {"id": 1, "annotations": [{"completed_by": 1, "result": []}]},
        {"id": 2, "annotations": [{"completed_by": 2, "result": []}]},
    ]
    export.write_text(json.dumps(tasks), encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        import_labelstudio(export, gold_annotator=1, annotator=2)
    assert str(caught.value) == "empty_export (export)"
