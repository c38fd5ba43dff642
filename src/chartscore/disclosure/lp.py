"""A linear program kept loaded in HiGHS, re-solved warm for one objective after another.

The range solver asks many questions of one problem (the minimum, then the
maximum, of many forms over the same rows). ``scipy.optimize.milp`` builds a
fresh HiGHS instance for every call and solves from scratch; here the problem
is loaded once and each new objective starts from the last optimal basis,
which stays primal feasible (only the costs change), so a re-solve takes a
few simplex iterations. HiGHS is the same one scipy ships (its private
``scipy.optimize._highspy`` binding): when that binding is missing or
behaves unexpectedly, :class:`WarmLP` reports it unavailable and the caller
uses ``milp`` as before. Exactness never depends on this module: every
point it returns is checked by the caller in exact integer arithmetic.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

OPTIMAL: Final = "optimal"
INFEASIBLE: Final = "infeasible"
UNBOUNDED: Final = "unbounded"
OTHER: Final = "other"


def _load() -> Any:
    # The binding, or None when this scipy has none that fits (then milp is used).
    try:
        core = importlib.import_module("scipy.optimize._highspy._core")
        needed = ("_Highs", "HighsLp", "HighsModelStatus", "MatrixFormat", "HighsStatus")
        if not all(hasattr(core, name) for name in needed):
            return None
        return core
    except ImportError:
        return None


_CORE: Final = _load()


class WarmLP:
    """``min c x`` subject to ``lower <= A x <= upper`` and ``x >= 0``, for many ``c``.

    Args:
        width: The number of columns.
        matrix: ``A`` in compressed sparse row form: ``(indptr, indices, data)``
            (:func:`rowwise`).
        lower, upper: Row bounds (``-inf`` / ``inf`` for none).

    Attributes:
        available: False when HiGHS could not be used directly (use ``milp``).
    """

    def __init__(
        self,
        width: int,
        matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
        lower: np.ndarray,
        upper: np.ndarray,
    ) -> None:
        indptr, indices, data = matrix
        self.width = width
        self.available = False
        self._highs: Any = None
        core = _CORE
        if core is None or width == 0:
            return
        self._status = self._statuses(core)
        failed = False
        try:
            highs = core._Highs()
            highs.setOptionValue("output_flag", False)
            highs.setOptionValue("log_to_console", False)
            highs.setOptionValue("presolve", "off")  # small problems: presolve costs more
            rows = len(lower)
            lp = core.HighsLp()
            lp.num_col_ = width
            lp.num_row_ = rows
            lp.col_cost_ = np.zeros(width)
            lp.col_lower_ = np.zeros(width)
            lp.col_upper_ = np.full(width, np.inf)
            lp.row_lower_ = np.asarray(lower, dtype=np.float64)
            lp.row_upper_ = np.asarray(upper, dtype=np.float64)
            a_matrix = lp.a_matrix_
            a_matrix.format_ = core.MatrixFormat.kRowwise
            a_matrix.num_col_ = width
            a_matrix.num_row_ = rows
            a_matrix.start_ = np.asarray(indptr, dtype=np.int32)
            a_matrix.index_ = np.asarray(indices, dtype=np.int32)
            a_matrix.value_ = np.asarray(data, dtype=np.float64)
            status = highs.passModel(lp)
            failed = status == core.HighsStatus.kError
        except Exception:  # noqa: BLE001 - an unexpected binding: fall back to milp
            failed = True
        if failed:
            return
        self._core = core
        self._highs = highs
        self._columns = np.arange(width, dtype=np.int32)
        self.available = True

    @staticmethod
    def _statuses(core: Any) -> dict[Any, str]:
        status = core.HighsModelStatus
        return {
            status.kOptimal: OPTIMAL,
            status.kInfeasible: INFEASIBLE,
            status.kUnbounded: UNBOUNDED,
        }

    def minimize(self, c: np.ndarray) -> tuple[str, np.ndarray | None, float]:
        """Solve for objective ``c``, starting from the last basis.

        Returns:
            The status (:data:`OPTIMAL`, :data:`INFEASIBLE`, :data:`UNBOUNDED` or
            :data:`OTHER`), the optimal point (None unless optimal) and its value.
        """
        highs = self._highs
        failed = False
        status = OTHER
        x: np.ndarray | None = None
        value = 0.0
        try:
            highs.changeColsCost(self.width, self._columns, np.asarray(c, dtype=np.float64))
            if highs.run() == self._core.HighsStatus.kError:
                failed = True
            else:
                status = self._status.get(highs.getModelStatus(), OTHER)
                if status == OPTIMAL:
                    x = np.asarray(highs.getSolution().col_value, dtype=np.float64)
                    value = float(highs.getInfo().objective_function_value)
        except Exception:  # noqa: BLE001 - treated as "not settled here": the caller falls back
            failed = True
        if failed or (status == OPTIMAL and (x is None or len(x) != self.width)):
            self.available = False  # do not trust this instance again
            return OTHER, None, 0.0
        return status, x, value


def rowwise(rows: Sequence[Mapping[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``rows`` (column -> coefficient) as compressed sparse row arrays, columns sorted."""
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    total = int(indptr[-1])
    indices = np.empty(total, dtype=np.int64)
    data = np.empty(total, dtype=np.int64)
    at = 0
    for row in rows:
        for column in sorted(row):
            indices[at] = column
            data[at] = row[column]
            at += 1
    return indptr, indices, data
