"""A comparison's system names: the plain labels a committee reads instead of "baseline".

A name is a run label the user gives (``--baseline-name model-v1``; never a file's name,
which could be a patient's), held to the ledger's label rule (letters, digits, ``_ . + -``,
1 to 64 characters): no spaces, so no sentence, and no path. It is still text chartscore
cannot vouch for, so a shared comparison never carries it (docs/compare.md, "Naming the
systems"), and an error never shows it.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from chartscore.errors import ChartscoreError, ErrorCode

__all__ = ["SYSTEM_NAME_PATTERN", "SystemNames", "is_system_name"]

SYSTEM_NAME_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}"
"""A system name: the ledger's label rule (:data:`chartscore.ledger.entry.LABEL_PATTERN`)."""

_NAME: Final = re.compile(SYSTEM_NAME_PATTERN)
_SIDES: Final = ("baseline", "candidate")


def is_system_name(value: object) -> bool:
    """Whether ``value`` is a system name (:data:`SYSTEM_NAME_PATTERN`), by exact type."""
    return type(value) is str and _NAME.fullmatch(value) is not None


def _name(instance: object, attribute: attrs.Attribute[str | None], value: str | None) -> None:
    if value is not None and not is_system_name(value):
        # The code alone: the refused text is never shown.
        raise ChartscoreError(ErrorCode.INVALID_RUN_LABEL)


@attrs.frozen
class SystemNames:
    """What a comparison calls its two systems; either may be unnamed (None).

    Raises:
        ChartscoreError: ``invalid_run_label`` for a name that is not a plain label,
            or when neither system is named.
    """

    baseline: str | None = attrs.field(default=None, validator=_name)
    candidate: str | None = attrs.field(default=None, validator=_name)

    def __attrs_post_init__(self) -> None:
        if self.baseline is None and self.candidate is None:
            raise ChartscoreError(ErrorCode.INVALID_RUN_LABEL)

    def to_dict(self) -> dict[str, str]:
        """The JSON member ``names``: each named system's name."""
        return {
            side: name
            for side, name in zip(_SIDES, (self.baseline, self.candidate), strict=True)
            if name is not None
        }

    @classmethod
    def from_dict(cls, value: object) -> SystemNames:
        """Read ``names`` back.

        Raises:
            ChartscoreError: ``invalid_report`` for anything but one or two plain names.
        """
        names: SystemNames | None = None
        if (
            type(value) is dict
            and value
            and set(value) <= set(_SIDES)
            and all(is_system_name(name) for name in value.values())
        ):
            try:
                names = cls(value.get("baseline"), value.get("candidate"))
            except ChartscoreError:
                names = None
        if names is None:  # raised outside the handler: nothing chained
            raise ChartscoreError(ErrorCode.INVALID_REPORT)
        return names
