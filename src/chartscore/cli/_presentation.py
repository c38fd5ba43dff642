"""How a rendering presents a comparison: its systems' names and its date.

``--baseline-name`` and ``--candidate-name`` name the systems in the comparison and its
renderings. There is no default: a file's stem could be a patient's or a person's name
(``MRN-1234.jsonl``), and a comparison is the document most often passed around, so
chartscore writes only names it was given (docs/compare.md, "Naming the systems"). A name
is a plain label (the ledger's rule); one that is not is a usage error that never shows
it. ``--date`` (default: today, UTC, or the day ``SOURCE_DATE_EPOCH``
gives) is the date a rendered comparison shows; the JSON carries no date.
"""

from __future__ import annotations

import argparse
import datetime
import os
from typing import Final

from chartscore.cli._command import Option, UsageError
from chartscore.documents.system_names import SystemNames, is_system_name
from chartscore.render import is_iso_date

BASELINE_NAME: Final = Option(
    "--baseline-name",
    "the baseline's name in the comparison and its renderings, a plain name such as "
    "model-v1 (default: none, shown as baseline)",
    "NAME",
)
CANDIDATE_NAME: Final = Option(
    "--candidate-name",
    "the candidate's name in the comparison and its renderings, a plain name such as "
    "model-v2 (default: none, shown as candidate)",
    "NAME",
)
DATE: Final = Option(
    "--date",
    "the date a rendered comparison shows, YYYY-MM-DD (default: today, UTC; "
    "SOURCE_DATE_EPOCH if set)",
    "DATE",
)
SOURCE_DATE_EPOCH: Final = "SOURCE_DATE_EPOCH"
"""The reproducible-builds variable: seconds since 1970 that stand for "now"."""

_PLAIN: Final = "a plain name such as model-v2"


def system_names(args: argparse.Namespace, command: str) -> SystemNames | None:
    """The names given by ``--baseline-name`` and ``--candidate-name``; None without either.

    Never a file's name: see the module's docstring.

    Raises:
        UsageError: a name that is not a plain name (the value is not shown).
    """
    found: list[str | None] = []
    for option in (BASELINE_NAME, CANDIDATE_NAME):
        given = getattr(args, option.dest, None)
        if given is not None and not is_system_name(given):
            raise UsageError(f"{option.flag} must be {_PLAIN}", command)
        found.append(given)
    baseline_name, candidate_name = found
    if baseline_name is None and candidate_name is None:
        return None
    return SystemNames(baseline_name, candidate_name)


def check_date(args: argparse.Namespace, command: str) -> None:
    """Refuse a ``--date`` that is not a calendar date, before any work.

    Raises:
        UsageError: as :func:`rendering_date` (the value is not shown).
    """
    given = getattr(args, "date", None)
    if given is not None and not is_iso_date(given):
        raise UsageError("--date must be a date such as 2026-12-06", command)


def rendering_date(args: argparse.Namespace, command: str) -> str:
    """``--date``, or today's date (UTC), or the day ``SOURCE_DATE_EPOCH`` names.

    Raises:
        UsageError: ``--date`` that is not a calendar date ``YYYY-MM-DD``, or a
            ``SOURCE_DATE_EPOCH`` that is not a whole number of seconds.
    """
    check_date(args, command)
    given = getattr(args, "date", None)
    if given is not None:
        return str(given)
    epoch = os.environ.get(SOURCE_DATE_EPOCH)
    if epoch is None:
        return datetime.datetime.now(datetime.UTC).date().isoformat()
    seconds = int(epoch) if epoch.isascii() and epoch.isdigit() and len(epoch) <= 12 else None
    if seconds is None:
        raise UsageError(f"{SOURCE_DATE_EPOCH} must be a whole number of seconds", command)
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).date().isoformat()
