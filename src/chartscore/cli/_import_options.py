"""What the ``import`` commands share: output options, list-valued options, the summary line.

Every message names an option, never a value: a list that cannot be read says which
option and what shape it needs.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Final

from chartscore.cli._command import PROGRAM, Option, UsageError, output_file
from chartscore.cli._streams import Streams, say
from chartscore.importers import Imported, write_imported
from chartscore.io.inputs import InputPath
from chartscore.io.output import check_outputs as check_output_paths

GOLD_OUT: Final = Option("--gold-out", "write the gold JSON Lines file here (mode 0600)", "FILE")
PREDICTIONS_OUT: Final = Option(
    "--predictions-out", "write the predictions JSON Lines file here (mode 0600)", "FILE"
)
SCHEMA_OUT: Final = Option("--schema-out", "write the field schema (JSON) here", "FILE")
FIELD_SCHEMA: Final = Option(
    "--schema", "the fields' types and options (JSON, or TOML if *.toml)", "FILE", reads_input=True
)
"""The schema an import reads its fields' types from (``import csv``, ``import adjudication``)."""
RATER_OUTS: Final = tuple(
    Option(
        f"--rater-{number}-out",
        f"write rater {number}'s records (predictions format) here (mode 0600)",
        "FILE",
    )
    for number in (1, 2)
)
PARTS: Final = ("gold", "predictions", "rater_1", "rater_2", "schema")
"""The outputs an import may write, by part; each is the option ``--<part>-out``."""

FHIR_SKIPPED: Final = ("skipped_display", "skipped_unsupported", "skipped_repeating")
"""The FHIR items that are not fields, counted on the ``fields`` line."""
FHIR_EXTRAS: Final = (
    ("choices_unresolved", "choice items whose codes the questionnaire does not hold"),
    ("other_resources", "resources that are not QuestionnaireResponses (skipped)"),
    ("responses_other_questionnaire", "responses to another questionnaire (skipped)"),
    ("responses_not_completed", "responses not completed or amended (skipped)"),
    ("not_applicable", "not-applicable gold rows (enableWhen false)"),
    ("not_applicable_left_out", "answers not applicable (enableWhen false), left out"),
    ("enable_when_unevaluated", "answers whose enableWhen cannot be evaluated, left out"),
    ("unanswered", "items enabled but unanswered (written as null)"),
    ("answers_outside", "answers to items not in the questionnaire (left out)"),
    ("answers_unreadable", "answers that are not a value of their item (left out)"),
)
"""The FHIR importer's counts told on stderr, in this order."""

_RANGE: Final = re.compile(r"([0-9]{1,15})(?:-([0-9]{1,15}))?")
MAX_NOTES: Final = 10_000_000
"""The most note ids ``--notes`` may name (a range such as ``1-999999999999`` is refused)."""


def comma_list(value: str | None, flag: str, command: str) -> tuple[str, ...]:
    """A comma-separated option (``UNK,NA``) as its trimmed, non-empty items."""
    if value is None:
        return ()
    items = tuple(item.strip() for item in value.split(","))
    if not all(items):
        raise UsageError(f"{flag} must be a list separated by commas", command)
    return items


def tolerance_list(value: str | None, command: str) -> dict[str, str]:
    """``--tolerance nihss=1,arrival=2`` as ``{"nihss": "1", "arrival": "2"}``."""
    found: dict[str, str] = {}
    for item in comma_list(value, "--tolerance", command):
        name, equals, amount = item.partition("=")
        if not equals or not name.strip() or not amount.strip() or name.strip() in found:
            raise UsageError("--tolerance must be FIELD=AMOUNT pairs separated by commas", command)
        found[name.strip()] = amount.strip()
    return found


def note_ranges(value: str | None, command: str) -> tuple[range, ...] | None:
    """``--notes 1,3-4`` as the ranges of note ids it names (chart-review's ``ranges``).

    Kept as ranges, never as every id: ``1-9999998`` takes a few bytes.
    """
    if value is None:
        return None
    ranges: list[range] = []
    named = 0
    for item in comma_list(value, "--notes", command):
        match = _RANGE.fullmatch(item)
        first, last = (int(match[1]), int(match[2] or match[1])) if match else (1, 0)
        named += last - first + 1
        if match is None or last < first or named > MAX_NOTES:
            raise UsageError("--notes must be note ids or ranges such as 1,3-4", command)
        ranges.append(range(first, last + 1))
    return tuple(ranges)


def whole_number(value: str | None, flag: str, command: str) -> int | None:
    """A whole-number option (a Label Studio user id)."""
    if value is None:
        return None
    if not re.fullmatch(r"[0-9]{1,15}", value):
        raise UsageError(f"{flag} must be a whole number", command)
    return int(value)


def outputs(args: argparse.Namespace, command: str) -> dict[str, str | None]:
    """The asked outputs by part (``gold``, ``predictions``, ``rater_1``, ``rater_2``,
    ``schema``); None when not asked (or not an option of the command)."""
    return {
        part: output_file(
            getattr(args, f"{part}_out", None), f"--{part.replace('_', '-')}-out", command
        )
        for part in PARTS
    }


def check_outputs(
    args: argparse.Namespace, command: str, inputs: Sequence[InputPath | None]
) -> None:
    """Check every output before any input is read: a file, never an input
    (``output_is_input``), never another output's file (``duplicate_output``)."""
    asked = [target for target in outputs(args, command).values() if target is not None]
    check_output_paths(asked, inputs=inputs)


def write_and_tell(
    imported: Imported,
    args: argparse.Namespace,
    streams: Streams,
    *,
    inputs: Sequence[InputPath | None],
    command: str,
) -> None:
    """Write the asked outputs, then one summary line per output on stderr (counts only)."""
    targets = outputs(args, command)
    gold, predictions, schema = targets["gold"], targets["predictions"], targets["schema"]
    raters = [targets["rater_1"], targets["rater_2"]][: len(imported.raters)]
    write_imported(
        imported, gold=gold, predictions=predictions, schema=schema, raters=raters, inputs=inputs
    )
    written = {part for part, target in targets.items() if target is not None}
    for line in summary(imported, gold="gold" in written, predictions="predictions" in written):
        say(streams.err, f"{PROGRAM}: {line}\n")


def summary(imported: Imported, *, gold: bool, predictions: bool) -> list[str]:
    """Closed sentences of counts: what was written and what was left out.

    Raters (REDCap Double Data Entry) are told when the import has them; their
    counts, and gold's beside them, are named ``rater_1_cases``, ``gold_cases`` ...
    """
    counts = imported.counts
    lines: list[str] = []
    if imported.schema is not None:
        fields = imported.schema["fields"]
        skipped = [
            f"{counts[name]:,} {name.removeprefix('skipped_')}"
            for name in (
                "skipped_calc",
                "skipped_descriptive",
                "skipped_file",
                "skipped_excluded",
                *FHIR_SKIPPED,
            )
            if counts.get(name)
        ]
        left = f" (skipped: {', '.join(skipped)})" if skipped else ""
        lines.append(f"fields: {len(fields):,}{left}")  # type: ignore[arg-type]
    parts = [
        *((f"rater_{index + 1}", True, len(rows)) for index, rows in enumerate(imported.raters)),
        ("gold", gold, len(imported.gold)),
        ("predictions", predictions, len(imported.predictions)),
    ]
    for name, wanted, rows in parts:
        if wanted:
            prefix = f"{name}_" if f"{name}_cases" in counts else ""
            cases, nulls = counts.get(f"{prefix}cases", 0), counts.get(f"{prefix}unanswerable")
            line = f"{name.replace('_', ' ')}: {_many(rows, 'row')} for {_many(cases, 'case')}"
            if nulls:
                line += f", {nulls:,} null (declared missing-data codes)"
            lines.append(line)
    extras = [
        ("blank_cells", "blank cells (no row written)"),
        ("branching_not_applicable", "not-applicable gold rows (branching logic false)"),
        ("hidden_with_value", "gold cells with a value where branching logic is false (kept)"),
        ("branching_untranslated", "fields whose branching logic was not translated"),
        ("labels_dropped", "labels outside the declared labels (dropped)"),
        ("notes_left_out", "notes only one of the two annotators annotated (left out)"),
        ("dde_unpaired", "double data entries without their partner (left out)"),
        ("dde_merged_left_out", "merged records (no --gold-out: not written)"),
        *FHIR_EXTRAS,
    ]
    lines += [f"{what}: {counts[name]:,}" for name, what in extras if counts.get(name)]
    if counts.get("undeclared_missing_codes"):
        cells = counts["undeclared_missing_codes"]
        lines.append(
            f"warning: {_many(cells, 'cell')} {'holds' if cells == 1 else 'hold'} REDCap "
            "missing-data codes, read as values, not null: did you forget --missing-codes?"
        )
    return lines


def _many(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")
