"""``chartscore import labelstudio``: Label Studio exports to gold (one annotator),
predictions (another) and rater files (any annotators)."""

from __future__ import annotations

import argparse
import re
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    PROGRAM,
    Command,
    Option,
    UsageError,
    input_argument,
    output_file,
)
from chartscore.cli._import_options import (
    GOLD_OUT,
    PREDICTIONS_OUT,
    SCHEMA_OUT,
    comma_list,
    note_ranges,
    outputs,
    summary,
)
from chartscore.cli._streams import Streams, say
from chartscore.importers import import_labelstudio, write_imported
from chartscore.importers.labelstudio import DEFAULT_FIELD
from chartscore.io.output import check_outputs as check_output_paths

NAME: Final = "import labelstudio"
_WHOLE: Final = re.compile(r"[0-9]{1,15}")


def _person(value: str | None, flag: str, has_config: bool) -> int | str | None:
    """A user id (digits) or, with --config, an annotator's name from it."""
    if value is None:
        return None
    if _WHOLE.fullmatch(value):
        return int(value)
    if not has_config or not value.strip():
        raise UsageError(f"{flag} must be a whole number (or a name from --config)", NAME)
    return value


def _rater_outs(args: argparse.Namespace, has_config: bool) -> list[tuple[int | str, str]]:
    found: list[tuple[int | str, str]] = []
    for item in args.rater_out or []:
        who, equals, path = item.partition("=")
        if not equals or not who or not path:
            raise UsageError("--rater-out takes ANNOTATOR=FILE", NAME)
        person = _person(who, "--rater-out", has_config)
        assert person is not None
        found.append((person, output_file(path, "--rater-out", NAME) or path))
    return found


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Read the exports; write gold, predictions, rater files and the schema as asked."""
    has_config = args.config is not None
    raters = _rater_outs(args, has_config)
    if args.predictions_out is not None and args.annotator is None:
        raise UsageError("--predictions-out needs --annotator", NAME)
    if args.annotator is not None and args.predictions_out is None:
        raise UsageError("--annotator needs --predictions-out", NAME)
    if args.gold_annotator is None and (args.annotator is not None or not raters):
        raise UsageError("give --gold-annotator, or --rater-out", NAME)
    if args.gold_out is not None and args.gold_annotator is None:
        raise UsageError("--gold-out needs --gold-annotator", NAME)
    if (
        args.gold_out is None
        and args.schema_out is None
        and args.predictions_out is None
        and not raters
    ):
        raise UsageError(
            "nothing to write: give --gold-out, --predictions-out, --rater-out or --schema-out",
            NAME,
        )
    gold_annotator = _person(args.gold_annotator, "--gold-annotator", has_config)
    annotator = _person(args.annotator, "--annotator", has_config)
    if annotator is not None and annotator == gold_annotator:
        raise UsageError("--annotator must differ from --gold-annotator", NAME)
    if len({who for who, _ in raters}) != len(raters):
        raise UsageError("--rater-out names an annotator twice", NAME)
    labels = comma_list(args.labels, "--labels", NAME) or None
    notes = note_ranges(args.notes, NAME)
    exports = [input_argument(path) for path in args.export]
    config = None if args.config is None else input_argument(args.config)
    inputs = (*exports, config)
    targets = outputs(args, NAME)
    asked = [t for t in targets.values() if t is not None] + [path for _, path in raters]
    check_output_paths(asked, inputs=inputs)
    imported = import_labelstudio(
        exports,
        gold_annotator=gold_annotator,
        annotator=annotator,
        raters=[who for who, _ in raters],
        labels=labels,
        field=args.field or DEFAULT_FIELD,
        per_label=args.per_label,
        notes=notes,
        config=config,
    )
    write_imported(
        imported,
        gold=targets["gold"],
        predictions=targets["predictions"],
        schema=targets["schema"],
        raters=[path for _, path in raters],
        inputs=inputs,
    )
    lines = summary(
        imported, gold=targets["gold"] is not None, predictions=targets["predictions"] is not None
    )
    counts = imported.counts
    lines += [
        f"{what}: {counts[name]:,}"
        for name, what in (
            ("notes_ignored", "notes on the config's ignore list (left out)"),
            ("labels_unused", "declared labels no compared annotator used (left out)"),
        )
        if counts.get(name)
    ]
    for line in lines:
        say(streams.err, f"{PROGRAM}: {line}\n")
    return EXIT_OK


COMMAND: Final = Command(
    name=NAME,
    help="Label Studio: one annotator's labels as gold, another's as predictions, any as raters",
    description="Read Label Studio JSON exports as chart-review reads them: each "
    "annotator's labels (sublabels and choices too) per note (task) become one "
    "multi-select field, or with --per-label one boolean field per label; the notes both "
    "annotators annotated are compared. --config reads chart-review's config.yaml "
    "(annotators, labels, implied and grouped labels, ignore, ranges); --rater-out writes "
    "any annotator as a rater file for chartscore agree. See docs/import.md.",
    options=(
        Option(
            "--export",
            "Label Studio JSON exports (several are merged)",
            "FILE",
            required=True,
            reads_input=True,
            many=True,
        ),
        Option(
            "--config",
            "chart-review's project config (JSON, TOML, or its YAML subset)",
            "FILE",
            reads_input=True,
        ),
        Option(
            "--gold-annotator",
            "the Label Studio user id (or --config name) whose labels are gold",
            "ID",
        ),
        Option("--annotator", "the user id (or name) whose labels are the predictions", "ID"),
        GOLD_OUT,
        PREDICTIONS_OUT,
        Option(
            "--rater-out",
            "write an annotator's labels as a rater file (predictions format, mode 0600)",
            "ANNOTATOR=FILE",
            many=True,
        ),
        SCHEMA_OUT,
        Option("--labels", "the labels to score, LABEL,... (default: every label found)", "LIST"),
        Option(
            "--field", f"the field id (default {DEFAULT_FIELD}); with --per-label, the prefix", "ID"
        ),
        Option("--per-label", "one boolean field per label instead of one multi-select field"),
        Option("--notes", "only these note ids, such as 1,3-4 (chart-review's ranges)", "IDS"),
    ),
    run=run,
)
