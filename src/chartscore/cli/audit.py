"""``chartscore audit``: an outsider's attack on a shared report; exit 4 if it fails.

With ``--releases DIR`` instead (inside only), the attack on every release of
the ledger, each jointly with all earlier ones.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import os
from collections.abc import Iterable
from typing import Final

from chartscore.cli._command import Command, Option, UsageError, input_argument
from chartscore.cli._options import REQUIRED_MIN_CELL, declared_min_cell, required_min_cell
from chartscore.cli._streams import Streams
from chartscore.disclosure.solver import require_solver
from chartscore.documents import format_of, refuse_agreement
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_report import SharedReport
from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint, InputKind, named_as, with_hint
from chartscore.io.document_files import read_document_bytes
from chartscore.io.inputs import InputPath, StandardInput, identity
from chartscore.io.output import write_output
from chartscore.io.release_ledger import FORMAT as RELEASE_FORMAT
from chartscore.io.release_ledger import HEAD_FORMAT

EXIT_AUDIT_FAILED: Final = 4
MAX_ORIENTATIONS: Final = 16
"""The most readings of which systems the --comparisons compare that audit tries."""


def run(args: argparse.Namespace, streams: Streams) -> int:
    """Attack the shared report; print the table and the verdict.

    With ``--min-cell N``, a document shared at a smaller min cell fails without
    an attack: the reader's rule is broken whatever the attack would find.
    """
    required = required_min_cell(args.min_cell, "audit")
    # scipy (the solver, the extra chartscore[share]) loads here, for this command only.
    if args.releases and args.shared == "-":
        raise UsageError("--releases needs a folder, not standard input", "audit")
    if args.releases and required is not None:  # the ledger never leaves: no reader's rule
        raise UsageError("--min-cell checks one shared document, not --releases", "audit")
    given = (args.others, args.system, args.variants, args.comparisons)
    together = any(p is not None for p in given)
    if together and (args.releases or required is not None):
        flag = "--releases" if args.releases else "--min-cell"
        raise UsageError(
            f"--others, --system, --variants and --comparisons cannot be combined with {flag}",
            "audit",
        )
    require_solver()
    if args.releases:  # SHARED names the ledger folder
        return _audit_releases(args.shared, streams)
    if together:
        return _audit_publication(args, streams)
    from chartscore.disclosure.audits import audit, audit_comparison  # noqa: PLC0415

    shared = _read_shared(input_argument(args.shared), comparison=True)
    declared = declared_min_cell(shared)
    assert declared is not None
    if required is not None and declared < required:
        verdict = f"audit FAIL: min_cell {declared}, below the required {required} (--min-cell)\n"
        write_output(verdict.encode("utf-8"), None, inputs=(), stdout=streams.out)
        return EXIT_AUDIT_FAILED
    result = audit(shared) if isinstance(shared, SharedReport) else audit_comparison(shared)
    table = result.table()
    if required is not None:
        table += f"min_cell {declared}: at least the required {required} (--min-cell)\n"
    write_output(table.encode("utf-8"), None, inputs=(), stdout=streams.out)
    return result.exit_status


def _audit_publication(args: argparse.Namespace, streams: Streams) -> int:
    # SHARED with the other products of its cohort: each alone, then all together.
    from chartscore.disclosure.audits import audit_publication  # noqa: PLC0415

    # A system's label: "0" for SHARED's and --variants', then one per --others file and one
    # per --system pattern (all its files: one system's variants, tied class by class).
    paths = [input_argument(args.shared)]
    systems = ["0"]
    # Where each file came from, for an error: SHARED (report), or an option's part N.
    places: list[tuple[InputKind, int | None]] = [(InputKind.REPORT, None)]
    if args.variants is not None:
        # SHARED in its own --variants pattern (a.shared.json in 'a.*.json') is one product.
        itself = _identity(paths[0])
        variants = [
            (part, path)
            for part, path in enumerate(_matched(args.variants, "--others or --variants"), 1)
            if itself is None or _identity(path) != itself
        ]
        paths += [path for _, path in variants]
        systems += ["0"] * len(variants)
        places += [(InputKind.VARIANTS, part) for part, _ in variants]
    groups: list[tuple[InputKind, list[str]]] = []
    if args.others is not None:
        others = _matched(args.others, "--others or --variants")
        groups += [(InputKind.OTHERS, [path]) for path in others]
    groups += [(InputKind.SYSTEM, _matched(pattern, "--system")) for pattern in args.system or ()]
    counted = dict.fromkeys((InputKind.OTHERS, InputKind.SYSTEM), 0)
    for number, (kind, group) in enumerate(groups, start=1):
        paths += group
        systems += [str(number)] * len(group)
        places += [(kind, counted[kind] + part) for part in range(1, len(group) + 1)]
        counted[kind] += len(group)
    reports: list[SharedReport | SharedComparison] = [
        _shared_report(path, place) for path, place in zip(paths, places, strict=True)
    ]
    compared = [] if args.comparisons is None else _matched(args.comparisons, "--comparisons")
    comparisons: list[SharedComparison] = []
    for part, path in enumerate(compared, start=1):
        shared = _read_shared(path, comparison=True, place=(InputKind.COMPARISONS, part))
        if not isinstance(shared, SharedComparison):
            raise UsageError("--comparisons names a shared report", "audit")
        comparisons.append(shared)
    _refuse_named_twice([*paths, *compared])  # after each is read: a misplaced kind says so first
    results = [
        audit_publication([*reports, *comparisons], [*systems, *sides])
        for sides in _orientations(reports, systems, comparisons)
    ]
    result = min(results, key=lambda r: (r.passed, -len(r.rows)))  # a failing one, if any
    write_output(result.table().encode("utf-8"), None, inputs=(), stdout=streams.out)
    return 0 if result.passed else EXIT_AUDIT_FAILED


def _refuse_named_twice(paths: Iterable[InputPath]) -> None:
    # One file for two systems (SHARED inside a --system or --others pattern, two
    # overlapping patterns) was audited as two products: tied by the gold alone ("2
    # products together ... PASS"), or, a pattern naming SHARED and another system's
    # files, tied with those as one system, failing as "inconsistent".
    seen: set[tuple[int, int]] = set()
    for path in paths:
        key = _identity(path)
        if key is not None and key in seen:
            raise UsageError("a file is named twice (by SHARED or the patterns)", "audit")
        if key is not None:
            seen.add(key)


def _identity(path: InputPath) -> tuple[int, int] | None:
    return identity(path if isinstance(path, str | StandardInput) else os.fspath(path))


def _matched(pattern: str, flag: str) -> list[str]:
    found = sorted(glob.glob(pattern))
    if not found:
        raise UsageError(f"{flag} names no file", "audit")
    return found


def _orientations(
    reports: list[SharedReport | SharedComparison],
    systems: list[str],
    comparisons: list[SharedComparison],
) -> list[list[tuple[str, str]]]:
    # Which two systems each comparison compares, as baseline and candidate: every ordered
    # pair of the reports' systems its numbers agree with (held with the reports alone);
    # when none fits, a report's system and one with no report here (its own, per
    # comparison: A's report and "A vs B" without B's). Each combination is audited; the
    # publication passes only if every one does.
    from chartscore.disclosure.audits import publication_consistent  # noqa: PLC0415

    labels = sorted(set(systems), key=int)
    choices: list[list[tuple[str, str]]] = []
    for number, comparison in enumerate(comparisons):
        held = [*reports, comparison]
        pairs: Iterable[tuple[str, str]] = itertools.permutations(labels, 2)
        fits = [pair for pair in pairs if publication_consistent(held, [*systems, pair])]
        if not fits:  # one side may have no report here: a system of its own (unseen)
            unseen = str(len(systems) + number)
            pairs = (pair for label in labels for pair in ((label, unseen), (unseen, label)))
            fits = [pair for pair in pairs if publication_consistent(held, [*systems, pair])]
        if not fits:
            raise UsageError(
                "--comparisons: a shared comparison fits no two of the reports' systems "
                "(is it of this cohort?)",
                "audit",
            )
        choices.append(fits)
    combinations = list(itertools.product(*choices))
    if len(combinations) > MAX_ORIENTATIONS:
        raise UsageError("--comparisons: too many ways to read the comparisons' systems", "audit")
    return [list(combination) for combination in combinations]


def _shared_report(path: InputPath, place: tuple[InputKind, int | None]) -> SharedReport:
    # A publication's product: a shared report (a shared comparison is given with
    # --comparisons, which reads which systems it compares).
    shared = _read_shared(path, comparison=True, place=place)
    if not isinstance(shared, SharedReport):
        raise UsageError("a shared comparison goes to --comparisons", "audit")
    return shared


def _read_shared(
    path: InputPath, *, comparison: bool, place: tuple[InputKind, int | None] | None = None
) -> SharedReport | SharedComparison:
    # A shared report (or shared comparison), read as _read_document reads it; with ``place``
    # (a publication's file), a refusal of the file names it: SHARED as the report, another
    # by its option and its part (``unknown_report_format (system part 2; ...)``).
    failure: ChartscoreError | None = None
    try:
        return _read_document(path, comparison=comparison)
    except ChartscoreError as error:
        failure = error
    if failure.hint is ErrorHint.DOCUMENT_LOOKS_LIKE_GATES:  # its advice is gate's, not audit's
        failure = with_hint(failure, ErrorHint.GATES_GIVEN_TO_AUDIT)
    if place is not None and failure.input in (None, InputKind.REPORT):
        raise named_as(failure, input=place[0], part=place[1])  # outside the handler
    raise failure


def _read_document(path: InputPath, *, comparison: bool) -> SharedReport | SharedComparison:
    # A shared report (or, with ``comparison``, a shared comparison); any other document is
    # refused with the hint that audit needs a shared one, raised outside the handler.
    data = read_document_bytes(path)
    wrong_format: ChartscoreError | None = None
    kinds: tuple[type[SharedReport] | type[SharedComparison], ...] = (
        (SharedReport, SharedComparison) if comparison else (SharedReport,)
    )
    for kind in kinds:
        try:
            return kind.from_json(data)
        except ChartscoreError as error:
            if error.code is not ErrorCode.UNKNOWN_REPORT_FORMAT:
                raise
            wrong_format = wrong_format or error  # the report's refusal, as it always was
    assert wrong_format is not None
    refuse_agreement(data)  # agree's document: never shared, so never audited as one
    if format_of(data) in (RELEASE_FORMAT, HEAD_FORMAT):  # share made it, yet not shared
        raise with_hint(wrong_format, ErrorHint.RELEASE_RECORD_GIVEN)
    raise with_hint(wrong_format, ErrorHint.SHARED_REPORT_EXPECTED)


def _audit_releases(folder: str, streams: Streams) -> int:
    # One line per release (counts and verdicts only), then the verdict; exit 4 on a failure.
    from chartscore.workflows.releases import audit_ledger  # noqa: PLC0415

    results = audit_ledger(folder)
    failed = sum(not result.passed for result in results)
    text = "".join(result.line() for result in results)
    text += (
        f"audit {'FAIL' if failed else 'PASS'}: {len(results)} release"
        f"{'' if len(results) == 1 else 's'}, {failed} failing "
        "(each jointly with every earlier one)\n"
    )
    write_output(text.encode("utf-8"), None, inputs=(), stdout=streams.out)
    return 4 if failed else 0


COMMAND: Final = Command(
    name="audit",
    help="attack a shared report: can any suppressed small cell be worked out?",
    description="Compute, by integer programming, the range an outsider can prove for "
    "every suppressed number of a shared report, from the report alone. Prints a table "
    "and a verdict; exit 0 when it passes, 4 when it fails. With --min-cell N, a document "
    "shared at a min cell below N fails as well. With --releases, SHARED is the ledger "
    "folder of successive releases: re-check it and attack each release jointly with "
    "every earlier one, one line per release.",
    options=(
        Option(
            "shared",
            "a shared report or shared comparison (JSON); with --releases, the folder",
            "SHARED",
            True,
            reads_input=True,
        ),
        REQUIRED_MIN_CELL,
        Option(
            "--others",
            "a glob pattern of other systems' shared reports of the same cohort, each file "
            "its own system: audit them all together with SHARED (one publication; "
            "docs/disclosure.md); a system with several reports goes to --system",
            "PATTERN",
        ),
        Option(
            "--system",
            "a glob pattern of one other system's shared reports of the cohort (its "
            "variants: with or without strata, at another min cell), audited together as "
            "that system's; repeat the option for each system",
            "PATTERN",
            repeated=True,
        ),
        Option(
            "--variants",
            "a glob pattern of the same system's other shared reports of the cohort (with "
            "or without strata, at another min cell), audited together with SHARED",
            "PATTERN",
        ),
        Option(
            "--comparisons",
            "a glob pattern of shared comparisons of the same cohort between SHARED's "
            "system and the other systems, audited together with them; which two systems "
            "each compares is read from its numbers (every reading that fits is audited)",
            "PATTERN",
        ),
        Option(
            "--releases",
            "SHARED is the inside-only ledger folder of share --releases: re-audit every "
            "release jointly with all earlier ones (docs/disclosure.md)",
        ),
    ),
    run=run,
)
