"""Disclosure control: share a report with small cells suppressed, and prove it.

- :func:`share` applies the cell-size rule (by distinct cases) with
  complementary suppression and returns a :class:`SharedReport`.
- :func:`audit` is the outsider's integer-programming attack on a shared
  report: it needs nothing but the shared report. It, a shared comparison's and a
  publication's audits and a ledger release's verdict live in one module,
  :mod:`chartscore.disclosure.audits`.
- :class:`Sensitivity` carries the distinct-case counts computed inside the
  boundary; it is never shared.

The shared documents themselves (:class:`SharedReport`, the shared
comparison) live in :mod:`chartscore.documents`; this package is the engine
that makes and attacks them, and re-exports the shared report's classes.

See docs/disclosure.md. Value-free: this package never imports the modules
that hold values.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from chartscore.disclosure.rule import DEFAULT_MIN_CELL, RULE, SHARED_FORMAT, UNIT
from chartscore.disclosure.solver import require_solver
from chartscore.documents.shared_metric import SharedMetric
from chartscore.documents.shared_report import Disclosure, SharedKappa, SharedReport, SharedSlice

if TYPE_CHECKING:
    from chartscore.disclosure.audits import AuditResult, AuditRow, audit
    from chartscore.disclosure.sensitivity import Sensitivity
    from chartscore.disclosure.suppress import protected_keys, share

# The audit and suppression import scipy (about a second): loaded on first use,
# so that reading or rendering a shared report does not pay for the solver.
_SOLVER_MODULES = {
    "AuditResult": "chartscore.disclosure.audits",
    "AuditRow": "chartscore.disclosure.audits",
    "audit": "chartscore.disclosure.audits",
    "Sensitivity": "chartscore.disclosure.sensitivity",
    "protected_keys": "chartscore.disclosure.suppress",
    "share": "chartscore.disclosure.suppress",
}


def __getattr__(name: str) -> object:
    module = _SOLVER_MODULES.get(name)
    if module is None:
        raise AttributeError(name)
    require_solver()  # missing_dependency, not an ImportError, without chartscore[share]
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


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
