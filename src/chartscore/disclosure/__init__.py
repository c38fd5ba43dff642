"""Disclosure control: share a report with small cells suppressed, and prove it.

- :func:`share` applies the cell-size rule (by distinct cases) with
  complementary suppression and returns a :class:`SharedReport`.
- :func:`audit` is the outsider's integer-programming attack on a shared
  report: it needs nothing but the shared report.
- :class:`Sensitivity` carries the distinct-case counts computed inside the
  boundary; it is never shared.

See docs/disclosure.md. Value-free: this package never imports the modules
that hold values.
"""

from chartscore.disclosure.audit import AuditResult, AuditRow, audit
from chartscore.disclosure.rule import DEFAULT_MIN_CELL, RULE, SHARED_FORMAT, UNIT
from chartscore.disclosure.shared import (
    Disclosure,
    SharedKappa,
    SharedMetric,
    SharedReport,
    SharedSlice,
)
from chartscore.disclosure.suppress import Sensitivity, protected_keys, share

__all__ = [
    "DEFAULT_MIN_CELL",
    "RULE",
    "SHARED_FORMAT",
    "UNIT",
    "AuditResult",
    "AuditRow",
    "Disclosure",
    "Sensitivity",
    "SharedKappa",
    "SharedMetric",
    "SharedReport",
    "SharedSlice",
    "audit",
    "protected_keys",
    "share",
]
