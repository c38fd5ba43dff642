"""How large a stratified report ``share`` takes on: refused at once beyond it, not run for hours.

With strata, the attacker's model copies every field's outcome classes once per stratum cell
(the cross-classification of the declared keys' labels), and the complementary choice and the
self-audit solve integer programs over the whole product. Their time grows faster than the
number of field x stratum-cell blocks: measured on this project's two-core machine
(docs/disclosure.md#limits), 13 fields over 6 sites (78 blocks) took 21 s, over 12 sites (156)
99 s, over 30 sites (390) 26 minutes and 8 GiB in one step, and 52 minutes and 12.8 GiB in
the two steps that keep the field level (``suppress.share``). :data:`MAX_STRATUM_BLOCKS` is the
documented limit; a larger report is ``share_too_large`` before any suppression starts.

Value-free: counts only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

from chartscore.errors import ChartscoreError, ErrorCode

MAX_STRATUM_BLOCKS: Final = 400
"""The most field x stratum-cell blocks ``share`` takes on (390 took 52 minutes in two steps)."""


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
