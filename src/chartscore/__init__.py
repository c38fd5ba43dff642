"""chartscore: score chart abstraction against gold, share only value-free reports.

Typical use::

    from chartscore import GoldField, Prediction, score

    report = score(gold_fields, predictions)
    print(report.to_json())   # canonical JSON with counts and Wilson intervals

Everything that holds patient data (records, normalization, scoring) stays
inside the process; the :class:`Report` holds counts, intervals and field ids
only. See docs/privacy.md.
"""

import sys as _sys
from importlib import import_module as _import_module

from chartscore._version import __version__
from chartscore.documents import display as _display
from chartscore.documents.comparison import Comparison
from chartscore.documents.report import KappaResult, MetricResult, Report, SliceReport
from chartscore.engine import score_dask
from chartscore.errors import ChartscoreError, ErrorCode, InputKind
from chartscore.io import STDIN, load_schema
from chartscore.io.ledger_file import load_ledger_key, read_ledger
from chartscore.metrics import FieldType
from chartscore.records.evidence import (
    EvidenceChain,
    ReviewerState,
    SourceKind,
    SourceLocation,
    TransformationKind,
)
from chartscore.records.model import GoldField, Prediction
from chartscore.records.plugins import MetricPlugin
from chartscore.records.schema import FieldSpec, Schema
from chartscore.render.frames import to_pandas
from chartscore.render.html import notebook_html as _notebook_html
from chartscore.scoring.paired_scorer import compare
from chartscore.scoring.scorer import score
from chartscore.workflows.batch import Batch, BatchRun, batch_files
from chartscore.workflows.compare import compare_files
from chartscore.workflows.ledger import record_run
from chartscore.workflows.score import score_files
from chartscore.workflows.share import share, share_files
from chartscore.workflows.worklist import Worklist, worklist, worklist_files, write_worklist

# A document's to_pandas() and _repr_html_() are made by the render layer, which the documents
# sit below and may not import: the public API (above every layer) fills their hooks here.
_display.register(frame=to_pandas, html=_notebook_html)

# Modules that moved into folders keep their old flat paths as aliases of the same module
# objects, so that old imports, docs and pickles (which name classes by module path) keep
# working; nothing inside chartscore uses the old paths.
_MOVED_MODULES = {
    "chartscore._types": "chartscore.metrics",
    "chartscore.model": "chartscore.records.model",
    "chartscore.evidence": "chartscore.records.evidence",
    "chartscore.schema": "chartscore.records.schema",
    **{
        f"chartscore.{name}": f"chartscore.stats.{name}"
        for name in (
            "clopper_pearson",
            "clustered",
            "confusion",
            "magnitude",
            "paired",
            "reliability",
            "student_t",
            "uncertainty",
            "weighting",
        )
    },
    **{
        f"chartscore.{name}": f"chartscore.documents.{name}"
        for name in (
            "_strict_json",
            "canonical_json",
            "comparison",
            "gates",
            "plugin_layout",
            "report",
            "tally",
        )
    },
    **{
        f"chartscore.disclosure.{old}": f"chartscore.documents.{new}"
        for old, new in (
            ("figures", "shared_figures"),
            ("shared", "shared_report"),
            ("shared_comparison", "shared_comparison"),
            ("shared_labels", "shared_labels"),
            ("shared_metric", "shared_metric"),
        )
    },
}
for _old, _new in _MOVED_MODULES.items():
    _sys.modules.setdefault(_old, _import_module(_new))
    # The alias is an attribute of its old parent package (``chartscore`` itself, or
    # ``chartscore.disclosure``), as an imported submodule would be.
    _parent, _, _name = _old.rpartition(".")
    vars(_import_module(_parent)).setdefault(_name, _sys.modules[_old])
del _old, _new, _parent, _name

__all__ = [
    "STDIN",
    "Batch",
    "BatchRun",
    "ChartscoreError",
    "Comparison",
    "ErrorCode",
    "EvidenceChain",
    "FieldSpec",
    "FieldType",
    "GoldField",
    "InputKind",
    "KappaResult",
    "MetricPlugin",
    "MetricResult",
    "Prediction",
    "Report",
    "ReviewerState",
    "Schema",
    "SliceReport",
    "SourceKind",
    "SourceLocation",
    "TransformationKind",
    "Worklist",
    "__version__",
    "batch_files",
    "compare",
    "compare_files",
    "load_ledger_key",
    "load_schema",
    "read_ledger",
    "record_run",
    "score",
    "score_dask",
    "score_files",
    "share",
    "share_files",
    "to_pandas",
    "worklist",
    "worklist_files",
    "write_worklist",
]
