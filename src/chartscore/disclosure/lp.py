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

import contextlib
import importlib
import importlib.machinery
import importlib.util
import itertools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from chartscore.disclosure.native_output import stdout_closed

OPTIMAL: Final = "optimal"
INFEASIBLE: Final = "infeasible"
UNBOUNDED: Final = "unbounded"
OTHER: Final = "other"


_CORE_NAME: Final = "scipy.optimize._highspy._core"
_PRIMAL: Final = 4
"""HiGHS's ``simplex_strategy`` value for the primal simplex method."""


def _load() -> Any:
    """scipy's HiGHS binding, or None when this scipy has none that fits (then ``milp``).

    Loaded from its file without running ``scipy.optimize``'s package start-up (which
    imports all of scipy.optimize and scipy.sparse, about half a second of CPU), and
    registered under its own name, so a later ``import scipy.optimize`` (the fallback)
    finds and shares this one module.
    """
    loaded = sys.modules.get(_CORE_NAME)
    if loaded is None:
        with contextlib.suppress(Exception):
            loaded = _load_file()
    if loaded is None:
        with contextlib.suppress(ImportError):
            loaded = importlib.import_module(_CORE_NAME)
    needed = ("_Highs", "HighsLp", "HighsOptions", "HighsModelStatus", "MatrixFormat")
    if loaded is None or not all(hasattr(loaded, name) for name in needed):
        return None
    return loaded


def _load_file() -> Any:
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "optimize" / "_highspy"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"_core{suffix}"
        if not path.is_file():
            continue
        core_spec = importlib.util.spec_from_file_location(_CORE_NAME, path)
        if core_spec is None or core_spec.loader is None:
            return None
        module = importlib.util.module_from_spec(core_spec)
        sys.modules[_CORE_NAME] = module
        try:
            core_spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[_CORE_NAME]
            raise
        return module
    return None


_CORE: Final = _load()


def _floats(values: object) -> list[float]:
    # An array as the binding's vector of doubles. The binding copies a list element by
    # element in C, a NumPy array through Python-level item access (three times slower):
    # the same values either way.
    floats: list[float] = np.asarray(values, dtype=np.float64).tolist()
    return floats


def _ints(values: object) -> list[int]:
    # An array as the binding's vector of 32-bit integers (see _floats).
    ints: list[int] = np.asarray(values, dtype=np.int32).tolist()
    return ints


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
            # Primal simplex: a new objective leaves the last basis primal feasible, so the
            # primal method resumes from it where the dual one starts over. On the 200-case
            # study's questions it re-solves about 2x faster, and more of its optimal
            # vertices are integral (fewer integer programs after it).
            highs.setOptionValue("simplex_strategy", _PRIMAL)
            rows = len(lower)
            lp = core.HighsLp()
            lp.num_col_ = width
            lp.num_row_ = rows
            lp.col_cost_ = _floats(np.zeros(width))
            lp.col_lower_ = _floats(np.zeros(width))
            lp.col_upper_ = _floats(np.full(width, np.inf))
            lp.row_lower_ = _floats(lower)
            lp.row_upper_ = _floats(upper)
            a_matrix = lp.a_matrix_
            a_matrix.format_ = core.MatrixFormat.kRowwise
            a_matrix.num_col_ = width
            a_matrix.num_row_ = rows
            a_matrix.start_ = _ints(indptr)
            a_matrix.index_ = _ints(indices)
            a_matrix.value_ = _floats(data)
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

    def start_from(self, other: WarmLP) -> None:
        """Start the next solve from ``other``'s last basis (the same rows and columns)."""
        with contextlib.suppress(Exception):  # a speed-up only: a cold start otherwise
            self._highs.setBasis(other._highs.getBasis())

    def cap_objective(self, c: np.ndarray, most: float) -> bool:
        """Add the row ``c x <= most`` (a dive stays on the optimal face); whether it took."""
        columns = np.flatnonzero(c)
        try:
            status = self._highs.addRow(
                -np.inf,
                float(most),
                len(columns),
                columns.astype(np.int32),
                np.asarray(c, dtype=np.float64)[columns],
            )
        except Exception:  # noqa: BLE001 - an unexpected binding: no dive
            self.available = False
            return False
        return bool(status != self._core.HighsStatus.kError)

    def fix(self, column: int, value: float) -> bool:
        """Fix one column at ``value`` (its bounds both set to it); whether it took."""
        try:
            status = self._highs.changeColBounds(column, value, value)
        except Exception:  # noqa: BLE001 - an unexpected binding: no dive
            self.available = False
            return False
        return bool(status != self._core.HighsStatus.kError)


def rowwise(rows: Sequence[Mapping[int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``rows`` (column -> coefficient) as compressed sparse row arrays, columns sorted."""
    lengths = np.fromiter((len(row) for row in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    columns = [sorted(row) for row in rows]
    indices = np.fromiter(itertools.chain.from_iterable(columns), dtype=np.int64)
    data = np.fromiter(
        (row[column] for row, ordered in zip(rows, columns, strict=True) for column in ordered),
        dtype=np.int64,
        count=len(indices),
    )
    return indptr, indices, data


def solve_afresh(
    width: int,
    matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
    lower: np.ndarray,
    upper: np.ndarray,
    c: np.ndarray,
    *,
    integer: bool,
) -> tuple[str, np.ndarray | None, float, float | None] | None:
    """``min c x`` solved from scratch exactly as ``scipy.optimize.milp`` solves it.

    The same HiGHS model (columns stored column by column, in the order scipy's
    conversion gives), the same options (presolve on, no log; for integers a zero
    gap), so the same points: a suppression run's seed must not depend on which of
    the two solved it. None when the binding cannot be used (call ``milp``).

    Returns:
        The status, the point (None unless optimal), its value, and for integer
        programs the proven dual bound.
    """
    core = _CORE
    if core is None or width == 0:
        return None
    indptr, indices, data = matrix
    rows = len(lower)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), np.diff(indptr))
    order = np.lexsort((row_of, indices))  # by column, then row: scipy's CSC order
    starts = np.zeros(width + 1, dtype=np.int64)
    np.cumsum(np.bincount(indices, minlength=width), out=starts[1:])
    failed = False
    try:
        lp = _model(
            core, width, c, lower=lower, upper=upper, columns=(starts, row_of[order], data[order])
        )
        kind = core.HighsVarType(1 if integer else 0)
        lp.integrality_ = [kind] * width
        highs = core._Highs()
        options = core.HighsOptions()
        options.log_to_console = False
        options.presolve = "on"
        if integer:
            options.mip_rel_gap = 0.0
        error = core.HighsStatus.kError
        if highs.passOptions(options) == error or highs.passModel(lp) == error:
            return OTHER, None, 0.0, None
        with stdout_closed() if integer else contextlib.nullcontext():
            ran = highs.run()
        if ran == error:
            return OTHER, None, 0.0, None
        status = highs.getModelStatus()
        info = highs.getInfo()
        named = core.HighsModelStatus
        if status in (named.kInfeasible, named.kModelError):
            return INFEASIBLE, None, 0.0, None
        if status != named.kOptimal:
            return OTHER, None, 0.0, None
        x = np.array(highs.getSolution().col_value, dtype=np.float64)
        bound = float(info.mip_dual_bound) if integer else None
        return OPTIMAL, x, float(info.objective_function_value), bound
    except Exception:  # noqa: BLE001 - an unexpected binding: milp instead
        failed = True
    if failed:
        return None
    return None


def _model(
    core: Any,
    width: int,
    c: np.ndarray,
    *,
    lower: np.ndarray,
    upper: np.ndarray,
    columns: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> Any:
    """The HiGHS model of ``min c x``, ``lower <= A x <= upper``, ``x >= 0``, ``A`` by columns.

    ``columns``: the compressed sparse column arrays (starts, row indices, values), in
    the order scipy's conversion gives: the model both scipy wrappers pass to HiGHS.
    """
    starts, indices, values = columns
    rows = len(lower)
    lp = core.HighsLp()
    lp.num_col_ = width
    lp.num_row_ = rows
    a_matrix = lp.a_matrix_
    a_matrix.num_col_ = width
    a_matrix.num_row_ = rows
    a_matrix.format_ = core.MatrixFormat.kColwise
    lp.col_cost_ = _floats(c)
    lp.col_lower_ = _floats(np.zeros(width))
    lp.col_upper_ = _floats(np.full(width, np.inf))
    lp.row_lower_ = _floats(lower)
    lp.row_upper_ = _floats(upper)
    a_matrix.start_ = _ints(starts)
    a_matrix.index_ = _ints(indices)
    a_matrix.value_ = _floats(values)
    return lp


_DUAL: Final = 1
"""HiGHS's ``simplex_strategy`` value for the dual simplex method (what ``linprog`` sets)."""


def columnwise(
    rows: int, width: int, entries: tuple[Sequence[int] | np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse entries ``(row, column, coefficient)`` as compressed sparse column arrays.

    Repeated entries are summed and explicit zeros kept, in column then row order:
    the arrays ``linprog`` gets from scipy's ``coo_array(...).tocsr()`` and ``csc_array``.
    """
    row, column, data = (np.asarray(part, dtype=np.int64) for part in entries)
    key = column * max(rows, 1) + row
    order = np.argsort(key, kind="stable")
    key, data = key[order], data[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
    summed = np.add.reduceat(data, first) if len(key) else data
    unique = key[first]
    indptr = np.zeros(width + 1, dtype=np.int64)
    np.cumsum(np.bincount(unique // max(rows, 1), minlength=width), out=indptr[1:])
    return indptr, unique % max(rows, 1), summed


def solve_as_linprog(
    width: int,
    matrix: tuple[np.ndarray, np.ndarray, np.ndarray],
    lower: np.ndarray,
    upper: np.ndarray,
    c: np.ndarray,
) -> tuple[str, np.ndarray | None] | None:
    """``min c x`` subject to ``lower <= A x <= upper`` and ``x >= 0``, from scratch, exactly
    as ``scipy.optimize.linprog(method="highs")`` builds and solves it.

    Why: the same HiGHS model (``matrix``: :func:`columnwise`'s arrays, no integrality)
    and options (presolve on, the dual simplex, no output), so the same point, without
    importing ``scipy.optimize`` and ``scipy.sparse`` or the wrapper's conversions. None
    when the binding cannot be used (call ``linprog``).

    Returns:
        The status and the point (None unless optimal).
    """
    core = _CORE
    if core is None or width == 0:
        return None
    indptr, indices, data = matrix
    failed = False
    try:
        lp = _model(core, width, c, lower=lower, upper=upper, columns=(indptr, indices, data))
        highs = core._Highs()
        options = core.HighsOptions()
        options.presolve = "on"
        options.highs_debug_level = 0
        options.log_to_console = False
        options.output_flag = False
        options.simplex_strategy = _DUAL
        error = core.HighsStatus.kError
        if highs.passOptions(options) == error or highs.passModel(lp) == error:
            return OTHER, None
        if highs.run() == error:
            return OTHER, None
        named = core.HighsModelStatus
        status = highs.getModelStatus()
        if status == named.kInfeasible:
            return INFEASIBLE, None
        if status != named.kOptimal:
            return OTHER, None
        return OPTIMAL, np.array(highs.getSolution().col_value, dtype=np.float64)
    except Exception:  # noqa: BLE001 - an unexpected binding: linprog instead
        failed = True
    if failed:
        return None
    return None
