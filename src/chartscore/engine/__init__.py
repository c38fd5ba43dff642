"""Scale out: score part files on a Dask cluster by merging partial tallies.

:func:`score_dask` needs the optional extra ``chartscore[dask]``; importing
this package (or chartscore) never imports Dask. See docs/scale.md.
"""

from chartscore.engine.run import score_dask

__all__ = ["score_dask"]
