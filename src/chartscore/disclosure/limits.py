"""How large a stratified report ``share`` takes on: refused at once beyond it, not run for hours.

With strata, the attacker's model copies every field's outcome classes once per stratum cell
(the cross-classification of the declared keys' labels), and the complementary choice and the
self-audit solve integer programs over the whole product. Their time grows faster than the
number of field x stratum-cell blocks (with an exponent of about 2.6): measured on this
project's two-core machine (docs/disclosure.md#limits), 13 fields over 12 sites (156 blocks)
took 6.2 minutes, over 15 sites (195) 11 minutes, and over 30 sites (390) did not finish in 68
minutes. :data:`MAX_STRATUM_BLOCKS` is the documented limit, set where a share ends in about a
quarter of an hour (issue 39: refused at once, rather than run for an hour or more); a
larger report is ``share_too_large`` before any suppression starts.

A publication's joint choice and joint audit attack every product's stratum cells at once, so
its products are dearer together than each alone. Its blocks are its stratified reports' blocks
and, with strata, each comparison's too (the joint model splits a comparison's paired classes by
the stratum cells). On the invented 200-case study over 3 sites (39 blocks a report), with two
systems: 78 blocks took 28 s, 117 (with their comparison) 2.3 minutes, 156 (``--also-min-cell``)
6.5 minutes, 195 (both) did not end in 20. :data:`MAX_PUBLICATION_STRATUM_BLOCKS` bounds them.

Value-free: counts only.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode, ErrorHint

MAX_STRATUM_BLOCKS: Final = 200
"""The most field x stratum-cell blocks ``share`` takes on (195 took 11 minutes; 390 over 68)."""


MAX_PUBLICATION_STRATUM_BLOCKS: Final = 160
"""The most blocks a stratified publication takes on (156 took 6.5 minutes, 195 over 20)."""


def stratum_blocks(fields: int, stratum_names: Iterable[str]) -> int:
    """Fields times stratum cells: each declared key's labels, cross-classified.

    ``stratum_names`` are a report's stratum slices (``key=label``); without any, one cell.
    """
    labels: dict[str, int] = {}
    for name in stratum_names:
        key = name.partition("=")[0]
        labels[key] = labels.get(key, 0) + 1
    return fields * math.prod(labels.values())


def check_share_size(fields: int, stratum_names: Iterable[str]) -> None:
    """Refuse a stratified report beyond :data:`MAX_STRATUM_BLOCKS`.

    Raises:
        ChartscoreError: ``share_too_large``.
    """
    if stratum_blocks(fields, stratum_names) > MAX_STRATUM_BLOCKS:
        raise ChartscoreError(ErrorCode.SHARE_TOO_LARGE)


def joint_blocks(reports: Iterable[tuple[int, Collection[str]]], comparisons: int) -> int:
    """The blocks of several documents attacked together: their stratified reports' blocks,
    and with strata each comparison's, as many as the stratified report with the most (the
    joint model splits a comparison's paired classes by the stratum cells)."""
    stratified = [stratum_blocks(fields, names) for fields, names in reports if names]
    return sum(stratified) + comparisons * max(stratified, default=0)


def check_publication_size(
    reports: Iterable[tuple[int, Collection[str]]], comparisons: int
) -> None:
    """Refuse a publication beyond :data:`MAX_PUBLICATION_STRATUM_BLOCKS` blocks in all.

    Args:
        reports: Each report's number of fields and its stratum slices' names (as for
            :func:`check_share_size`).
        comparisons: How many comparisons join it: with strata, each holds as many blocks
            as the stratified report with the most.

    Raises:
        ChartscoreError: ``share_too_large``, with the hint that says it is the publication's.
    """
    if joint_blocks(reports, comparisons) > MAX_PUBLICATION_STRATUM_BLOCKS:
        raise ChartscoreError(ErrorCode.SHARE_TOO_LARGE, hint=ErrorHint.PUBLICATION_TOO_LARGE)


def check_audit_size(reports: Iterable[tuple[int, Collection[str]]], comparisons: int) -> None:
    """Refuse to audit documents larger than ``share`` writes, before any model is built.

    A shared report comes from outside: a document that declares a dozen stratum keys
    (their labels cross-classified) would make the attack's model billions of
    variables. Each stratified report may hold :data:`MAX_STRATUM_BLOCKS`, and a joint
    audit as many in all (:func:`joint_blocks`), which
    every document and publication ``share`` writes stays within.

    Raises:
        ChartscoreError: ``share_too_large``, with the hint that says it is the audit's.
    """
    if joint_blocks(reports, comparisons) > MAX_STRATUM_BLOCKS:
        raise ChartscoreError(ErrorCode.SHARE_TOO_LARGE, hint=ErrorHint.AUDIT_TOO_LARGE)
