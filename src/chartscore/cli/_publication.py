"""``chartscore share --publication``: several systems' shared reports (and with ``--compare``
their comparisons), safe together."""

from __future__ import annotations

import argparse
import glob
import itertools
import os
from collections.abc import Sequence
from typing import Final

from chartscore.cli._command import (
    EXIT_OK,
    PROGRAM,
    UsageError,
    input_argument,
    min_cell_number,
    optional_input,
)
from chartscore.cli._options import (
    confidence,
    extra_predictions,
    refuse_combined,
    strata_input,
)
from chartscore.cli._streams import Streams, is_terminal, say
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind
from chartscore.io.inputs import STDIN, identity
from chartscore.io.output import check_outputs, write_atomic_all
from chartscore.io.release_ledger import is_inside
from chartscore.workflows.publication import share_publication_files

# A publication takes gold, the systems' pattern and these options only.
_PUBLICATION_TAKES: Final = (
    "gold",
    "schema",
    "min_cell",
    "confidence",
    "quiet",
    "publication",
    "out_dir",
    "compare",
    "strata",
    "also_min_cell",
    "extra_predictions",
    "releases",
)


def share_publication(
    args: argparse.Namespace, streams: Streams, min_cell: int, options: Sequence[str]
) -> int:
    """Write each system's shared report of one publication (``options``: share's dests)."""
    refuse_combined(args, [n for n in options if n not in _PUBLICATION_TAKES], "--publication")
    if args.gold is None or args.publication is None or args.out_dir is None:
        raise UsageError("a publication needs --gold, --publication and --out-dir", "share")
    also = _also_min_cell(args.also_min_cell)
    if also == min_cell:  # the same documents twice, under two names
        raise UsageError("--also-min-cell must differ from --min-cell", "share")
    gold = input_argument(args.gold)
    if gold is STDIN:  # read once per system and pair: a second read found it empty
        raise UsageError("--publication needs --gold from a file: it is read again", "share")
    schema_path = optional_input(args.schema)
    systems = sorted(glob.glob(args.publication))
    if not systems:
        raise UsageError("--publication names no file", "share")
    gold_file = identity(str(args.gold))
    if gold_file is not None and any(identity(path) == gold_file for path in systems):
        raise UsageError("--publication names the gold file", "share")  # 'DIR/*.jsonl'
    names = [_stem(path) for path in systems]
    if len(set(names)) != len(names):
        raise UsageError("--publication names two files with one name", "share")
    if args.compare and len(systems) < 2:  # no pair to compare: --compare would do nothing
        raise UsageError("--compare needs two systems or more", "share")
    if args.releases is not None:
        _check_releases(args)
    pairs = list(itertools.combinations(range(len(systems)), 2)) if args.compare else []
    strata = strata_input(args)
    variants = [""] + ([".strata"] if strata is not None else [])
    rules = [""] + ([f".min-{also}"] if also is not None else [])
    outs = [
        os.path.join(args.out_dir, f"{name}{variant}{rule}.shared.json")
        for name in names
        for variant in variants
        for rule in rules
    ]
    outs += [
        os.path.join(args.out_dir, f"{names[b]}_vs_{names[c]}.shared-comparison.json")
        for b, c in pairs
    ]
    if len(set(outs)) != len(outs):  # x.jsonl's stratified variant and x.strata.jsonl's report
        raise UsageError("--publication would write two documents to one name", "share")
    inputs = (gold, schema_path, strata, *systems)
    check_outputs(outs, inputs=[i for i in inputs if i is not None])
    if not args.quiet and is_terminal(streams.err):  # nothing else is said until it ends
        say(
            streams.err,
            f"{PROGRAM}: sharing {len(outs):,} document{'' if len(outs) == 1 else 's'} as one "
            "publication: scoring, suppressing small cells and auditing them together (this "
            "can take minutes)...\n",
        )
    products = share_publication_files(
        gold,
        systems,
        schema=schema_path,
        min_cell=min_cell,
        confidence=confidence(args),
        comparisons=pairs,
        strata=strata,
        also_min_cell=also,
        extra_predictions=extra_predictions(args),
        releases=args.releases,
    )
    write_atomic_all([(out, (p.to_json() + "\n").encode("utf-8"), None) for out, p in
                      zip(outs, products, strict=True)])  # fmt: skip
    hidden = sum(product.disclosure.suppressed_count for product in products)
    reports = len(outs) - len(pairs)
    written = f"{reports:,} shared report{'' if reports == 1 else 's'}"
    if pairs:
        written += f" and {len(pairs):,} shared comparison{'' if len(pairs) == 1 else 's'}"
    rule = "" if also is None else f"; {also} in the .min-{also} reports"
    say(
        streams.err,
        f"{PROGRAM}: {written} written, {hidden:,} numbers suppressed "
        f"in all (min cell {min_cell}{rule}); each audit and the joint audit passed\n",
    )
    if args.releases is not None:
        earlier = products[0].disclosure.earlier_releases or 0
        say(
            streams.err,
            f"{PROGRAM}: recorded in the releases folder as one release; audited jointly "
            f"with {earlier:,} earlier release{'' if earlier == 1 else 's'} "
            "(docs/disclosure.md#successive-releases)\n",
        )
    others = _other_shared(args.out_dir, outs)
    if others:  # an earlier publication's documents, say: not chosen or audited with these
        say(
            streams.err,
            f"{PROGRAM}: warning: the output folder holds {others:,} other shared "
            f"document{'' if others == 1 else 's'}, not chosen or audited with these: publish "
            "them apart, or audit them together (docs/disclosure.md#one-publication)\n",
        )
    return EXIT_OK


def _check_releases(args: argparse.Namespace) -> None:
    # A publication into the ledger: its reports (and comparisons), outside the folder.
    for flag, given in (
        ("--strata", args.strata is not None),
        ("--also-min-cell", args.also_min_cell is not None),
    ):
        if given:
            raise UsageError(f"--releases with --publication cannot take {flag} yet", "share")
    if is_inside(args.out_dir, args.releases):  # share writes that folder alone
        raise ChartscoreError(
            ErrorCode.OUTPUT_IS_INPUT, input=InputKind.OUTPUT, hint=ErrorHint.OUTPUT_IN_RELEASES
        )


def _other_shared(folder: str, outs: Sequence[str]) -> int:
    # How many shared documents (by their names) the folder holds beside the ones written.
    written = {os.path.basename(out) for out in outs}
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    return sum(
        name.endswith((".shared.json", ".shared-comparison.json")) and name not in written
        for name in names
    )


def _also_min_cell(given: str | None) -> int | None:
    if given is None:
        return None
    return min_cell_number(given, "--also-min-cell", "share")


def _stem(path: str) -> str:
    # pred_system_a.jsonl (or .jsonl.gz, read as gzip) -> pred_system_a
    name = os.path.basename(path).removesuffix(".gz")
    for suffix in (".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name
