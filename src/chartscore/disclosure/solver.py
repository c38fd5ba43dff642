"""Whether the disclosure audit's solver is installed: scipy is the extra ``chartscore[share]``.

Scoring, comparing, rendering and gates need attrs alone; only sharing a report
(suppression proves itself with the audit) and auditing one need scipy's
integer solver. Each of those entry points calls :func:`require_solver` first,
so a missing scipy is one coded error that says how to install it, not an
ImportError from deep inside, and nothing is read or written before it.
"""

from __future__ import annotations

import importlib.util

from chartscore.errors import ChartscoreError, ErrorCode


def require_solver() -> None:
    """Check that scipy's solver is installed (found, not imported: the solver loads only
    scipy's HiGHS binding when it can, not all of ``scipy.optimize``).

    Raises:
        ChartscoreError: ``missing_dependency``: ``pip install 'chartscore[share]'``.
    """
    missing = False
    try:
        missing = any(
            importlib.util.find_spec(name) is None for name in ("scipy.optimize", "scipy.sparse")
        )
    except ImportError:
        missing = True
    if missing:  # raised outside the handler: no chained ImportError
        raise ChartscoreError(ErrorCode.MISSING_DEPENDENCY)
