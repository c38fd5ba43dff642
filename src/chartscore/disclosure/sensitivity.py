"""The distinct-case counts behind a report's protected numbers: computed inside, never shared.

``share`` needs, beside the report's counts, how many distinct cases stand behind each
protected number (a pooled slice counts a case once however many rows it has) and the
per-case contributions the dominance rule reads. They exist only inside the protected
environment, for the duration of a share: :class:`Sensitivity` has no repr that shows a
number, and nothing writes it out.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from chartscore.documents.shared_figures import FieldFigures
from chartscore.documents.shared_report import Key


@attrs.frozen(repr=False)
class Sensitivity:
    """Distinct-case counts behind every protected quantity: computed inside, never shared.

    The scorer fills this inside the protected environment; it must never be
    written out, so its repr shows no number.

    Attributes:
        case_counts: For every protected quantity ``(slice_kind, slice_name,
            quantity)`` (``slice_kind`` in ``overall``, ``field``,
            ``field_type``; ``slice_name`` the field id, the type name or
            ``""``; ``quantity`` a count name, ``<metric>.success_count``,
            ``<metric>.total_count``, ``<metric>.failures``, ``kappa.pairs``
            or ``ignored_prediction_count``), the number of distinct cases
            behind it. In a field slice each row is one case, except item
            metrics (the rows with at least one such item); in a pooled slice
            one case can be behind many rows.
        kappa_smallest_margin: Per kappa field id: the smallest nonzero gold or
            answer category count among its pairs.
        field_types: Every field id's type name (schema knowledge; published).
        figures: Per field id, the per-case contributions the dominance rule
            needs (:class:`~chartscore.documents.shared_figures.FieldFigures`); None
            to withhold the validation figures (error magnitude, declared
            uncertainty) altogether. Their counts are field-slice rows, one per
            case, so ``case_counts`` need not hold them.
    """

    case_counts: Mapping[Key, int]
    kappa_smallest_margin: Mapping[str, int]
    field_types: Mapping[str, str]
    figures: Mapping[str, FieldFigures] | None = None

    def __repr__(self) -> str:
        return f"Sensitivity({len(self.case_counts)} case counts, {len(self.field_types)} fields)"
