"""One checked prediction, as the scorers take it: a single immutable row, not five arguments.

Every scorer joins the same five facts of a prediction: its case id, field id and value,
its evidence state (the chain and digests reduced to one of three: no evidence, supporting
evidence, evidence that does not support it), and the
chain's declared uncertainty. A sixth, the line's run cost (``usage``), is None on almost
every row; the scorer only counts it. :class:`PredictionRow` carries them together, so a new fact
of a prediction is one field here, not a parameter in every scorer.

It is a :class:`typing.NamedTuple`, not an attrs record, for speed: the file readers make
one per line, millions of times, and it replaces the plain tuple they made before (one
allocation in C, no ``__dict__``, pickled as a tuple across the reader's pipe and Dask's
partitions), where an attrs record's ``__init__`` measured ten times a tuple. Like every
record it is immutable and its ``repr`` shows no value, case id or digest.

The readers build it as ``new_row(PredictionRow, (case_id, ...))``: the tuple's own
constructor, in C, half the time of calling the class (whose ``__new__`` is Python).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from chartscore.metrics import Value

NO_EVIDENCE: Final = 0
"""An answer without evidence: no chain, or a chain with no source location."""
SUPPORTED_EVIDENCE: Final = 1
"""An answer its chain supports (docs/metrics.md, "Evidence support")."""
UNSUPPORTED_EVIDENCE: Final = 2
"""An answer whose chain has a source location but does not support it."""


class PredictionRow(NamedTuple):
    """A validated prediction: the only input a scorer's join needs (private: values).

    Attributes:
        case_id: The chart's case id.
        field_id: The field's id.
        value: The answer (None is an explicit abstention).
        evidence: Its evidence state (:meth:`chartscore.Prediction.evidence_state`):
            :data:`NO_EVIDENCE` (0, or False: no chain, or one without a source location),
            :data:`SUPPORTED_EVIDENCE` (1, or True: the chain supports it) or
            :data:`UNSUPPORTED_EVIDENCE` (2: a chain with a source location that does not
            support it). A bool keeps its meaning from before the third state (True is
            supported). Counts only for answers.
        uncertainty: Its chain's declared uncertainty (a number in [0, 1]), or None
            without a chain.
        usage: The line's checked ``usage`` (:data:`chartscore.records.usage.Usage`), or
            None. A run header line is read as a row whose ``usage`` is its
            :class:`~chartscore.stats.run_cost.RunHeader` (and whose case id is empty, which
            no prediction's can be): it flows with the rows and is no prediction.
    """

    case_id: str
    field_id: str
    value: Value
    evidence: int = NO_EVIDENCE
    uncertainty: object = None
    usage: object = None

    def __repr__(self) -> str:
        return f"PredictionRow(field_id={self.field_id!r}, <case id and value hidden>)"


new_row: Final = tuple.__new__
"""``new_row(PredictionRow, fields)``: a row from its six fields in order, built in C."""
