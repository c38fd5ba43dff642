"""A worker preload for the local cluster: nothing of distributed's may print.

Distributed runs this module in each worker process it starts for
:func:`chartscore.score_dask` (``distributed.worker.preload``). It silences the
loggers of Dask, distributed, tornado and asyncio in that process, and
Python's warnings, for the life of the process: their messages can name tasks,
files and exceptions, and workers share the caller's stderr.
"""

from __future__ import annotations

import logging
import warnings
from typing import Final

SILENT: Final = logging.CRITICAL + 10
NAMESPACES: Final = ("distributed", "dask", "tornado", "bokeh", "asyncio")


def silence() -> None:
    """Raise every Dask-related logger above CRITICAL and ignore warnings, in this process."""
    for name in list(logging.root.manager.loggerDict):
        if name.split(".")[0] in NAMESPACES:
            logging.getLogger(name).setLevel(SILENT)
    for name in NAMESPACES:
        logging.getLogger(name).setLevel(SILENT)
    warnings.simplefilter("ignore")


def dask_setup(worker: object) -> None:
    """Distributed's preload hook: runs once when a worker starts."""
    silence()
