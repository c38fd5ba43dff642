"""The field id rule, on its own so value-free modules can check ids.

``_rules`` (which also remembers digests it has seen) re-exports the pattern;
``errors`` and ``report`` use this module so that nothing value-free imports a
module that holds input state.
"""

from __future__ import annotations

import re
from typing import Final

FIELD_ID_PATTERN: Final = r"[a-z][a-z0-9_]{0,63}(?:\.[a-z][a-z0-9_]{0,63}){0,7}"
"""Dotted lowercase segments: ``[a-z][a-z0-9_]{0,63}``, at most eight, joined by ``.``."""

_FULL_MATCH = re.compile(FIELD_ID_PATTERN).fullmatch


def is_valid_field_id(value: object) -> bool:
    """True when ``value`` is a ``str`` that is a field id; never raises."""
    return type(value) is str and _FULL_MATCH(value) is not None
