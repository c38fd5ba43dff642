"""The adapter from an :class:`~chartscore.documents.agreement.Agreement` to a :class:`View`.

An agreement document is read for two questions: how often do the raters agree with each
other (per field: each pair's observed agreement and kappa, then Fleiss' kappa, AC1/AC2 and
alpha over all raters), and, with gold, how good is each rater: the ceiling a model is judged
against. Plots show each pair's agreement per field and each rater against gold; the tables
give every figure and each rater's entries.

Machine-readable rows (CSV) use ``metric`` ``pair_agreement``, ``pair_kappa``,
``fleiss_kappa``, ``ac1``, ``ac2``, ``alpha``, ``gold_exact_agreement`` and
``gold_normalized_agreement``; ``label`` holds the pair (``a~b``) or the rater. The pairs
pooled over fields have no interval (a chart's rows are not independent).
"""

from __future__ import annotations

from typing import Final

from chartscore.documents.agreement import (
    AGREEMENT_FORMAT,
    AGREEMENT_FORMAT_VERSION,
    Agreement,
    Coefficient,
    CountResult,
    FieldAgreement,
    PairAgreement,
)
from chartscore.render.view import (
    Cell,
    Column,
    Definition,
    Estimate,
    Kind,
    LabelText,
    Plot,
    PlotRow,
    Row,
    Table,
    View,
    level_text,
)

_SOURCE: Final = "docs/metrics.md#agreement-among-raters"
_DEFINITIONS: Final = (
    Definition(
        "pair_agreement",
        "pair agreement",
        "Of the rows both raters answered, the share where their normalized answers agree "
        "(Wilson interval in field rows; none pooled over fields).",
        _SOURCE,
    ),
    Definition(
        "pair_kappa",
        "pair kappa",
        "Cohen's kappa of the two raters on the rows both answered (quadratic-weighted on an "
        "ordinal scale); pooled over fields, unweighted over (field, category) cells.",
        _SOURCE,
    ),
    Definition(
        "fleiss_kappa",
        "Fleiss' kappa",
        "Agreement of all raters beyond chance, over rows with two or more ratings.",
        _SOURCE,
    ),
    Definition(
        "ac1",
        "Gwet's AC1 / AC2",
        "Gwet's chance-corrected agreement of all raters (AC2, quadratic-weighted, on an "
        "ordinal scale).",
        _SOURCE,
    ),
    Definition(
        "alpha",
        "Krippendorff's alpha",
        "Krippendorff's alpha of all raters: nominal, ordinal or interval by field type.",
        _SOURCE,
    ),
    Definition(
        "gold_normalized_agreement",
        "against gold",
        "Each rater scored against gold as chartscore score scores a predictions file: "
        "normalized (and exact) agreement over answerable gold rows.",
        _SOURCE,
    ),
)


_NONE: Final = ""
"""A cell with no figure (not a suppressed one: a view's None means withheld)."""

_ALL_RATERS: Final = {
    "fleiss_kappa": "all raters: Fleiss' kappa",
    "ac1": "all raters: AC1",
    "ac2": "all raters: AC2",
    "alpha": "all raters: alpha",
}


def _pair_name(pair: PairAgreement) -> str:
    return f"{pair.raters[0]}~{pair.raters[1]}"


def _rate(slice_kind: str, name: str, metric: str, label: str, result: CountResult) -> Estimate:
    lower, upper = result.interval if result.interval is not None else (None, None)
    return Estimate(
        slice_kind,
        name,
        metric,
        Kind.RATE,
        result.success_count,
        result.total_count,
        result.rate,
        lower,
        upper,
        label=label,
    )


def _coefficient(
    slice_kind: str, name: str, metric: str, label: str, found: Coefficient
) -> Estimate:
    lower, upper = found.interval if found.interval is not None else (None, None)
    pairs = found.units if found.pairs is None else found.pairs
    return Estimate(
        slice_kind,
        name,
        metric,
        Kind.KAPPA,
        None,
        pairs,
        found.value,
        lower,
        upper,
        label=label,
        units=found.units,  # a pair's are its pairs; all raters': too few below 100 units
    )


def _all_raters(field_id: str, part: FieldAgreement) -> list[tuple[str, Estimate]]:
    found = []
    if part.fleiss_kappa is not None:
        found.append(("fleiss_kappa", part.fleiss_kappa))
    if part.gwet is not None:
        found.append(("ac2" if part.field_type == "ordinal" else "ac1", part.gwet))
    if part.alpha is not None:
        found.append(("alpha", part.alpha))
    return [(metric, _coefficient("field", field_id, metric, "", value)) for metric, value in found]


def agreement_view(document: Agreement, *, rater_labels: bool = False) -> View:
    """The view of an agreement document: pairs and all-rater figures, entries, gold.

    Raters are named by position (``rater-1``, ...: :meth:`Agreement.by_position`) unless
    ``rater_labels``: a label is a file's stem, which may name a person, and a rendering is
    what gets passed around.
    """
    if not rater_labels:
        document = document.by_position()
    level = level_text(document.confidence)
    estimates: list[Estimate] = []
    pair_rows: list[Row] = []
    pair_plot: list[PlotRow] = []
    entry_rows: list[Row] = []
    for field_id, part in document.by_field.items():
        for pair in part.pairs:
            agreement = _rate("field", field_id, "pair_agreement", _pair_name(pair), pair.agreement)
            kappa = None
            if pair.kappa is not None:
                kappa = _coefficient("field", field_id, "pair_kappa", _pair_name(pair), pair.kappa)
            estimates += [agreement] if kappa is None else [agreement, kappa]
            pair_rows.append(
                Row(
                    "field",
                    field_id,
                    (LabelText(_pair_name(pair)), agreement, kappa or _NONE, _NONE),
                )
            )
            pair_plot.append(PlotRow(f"{field_id} {_pair_name(pair)}", agreement, field_id))
        for metric, estimate in _all_raters(field_id, part):
            estimates.append(estimate)
            pair_rows.append(Row("field", field_id, (_ALL_RATERS[metric], _NONE, _NONE, estimate)))
        for rater, counts in part.raters.items():
            cells: tuple[Cell, ...] = (
                LabelText(rater),
                counts.answered_count,
                counts.abstained_count,
                counts.wrong_type_count,
                counts.missing_count,
            )
            entry_rows.append(Row("field", field_id, cells))
    for pair in document.pooled:
        agreement = _rate("overall", "", "pair_agreement", _pair_name(pair), pair.agreement)
        kappa = None
        if pair.kappa is not None:
            kappa = _coefficient("overall", "", "pair_kappa", _pair_name(pair), pair.kappa)
        estimates += [agreement] if kappa is None else [agreement, kappa]
        pair_rows.append(
            Row("overall", "", (LabelText(_pair_name(pair)), agreement, kappa or _NONE, _NONE))
        )
    tables = [
        Table(
            "agreement",
            "Agreement among raters",
            f"Pairs: observed agreement over rows both answered, and Cohen's kappa; then "
            f"Fleiss' kappa, AC1/AC2 and alpha over all raters. {level} intervals; the pairs "
            "pooled over all fields have none.",
            "field",
            (
                Column("raters"),
                Column("agreement", "pair_agreement"),
                Column("kappa", "pair_kappa"),
                Column("all raters"),
            ),
            tuple(pair_rows),
            repeat=1,
        ),
        Table(
            "entries",
            "Each rater's entries",
            "Answered (wrong type included), abstained, wrong type and missing rows; "
            "abstentions and missing rows are never a category.",
            "field",
            (
                Column("rater"),
                Column("answered"),
                Column("abstained"),
                Column("wrong type"),
                Column("missing"),
            ),
            tuple(entry_rows),
            repeat=1,
        ),
    ]
    plots = [
        Plot(
            "pair_agreement",
            "Agreement between raters",
            f"Each pair's observed agreement per field, {level} Wilson interval.",
            "pair_agreement",
            (0.0, 1.0),
            tuple(pair_plot),
        )
    ]
    facts: list[tuple[str, str]] = [
        ("document", f"{AGREEMENT_FORMAT}, format version {AGREEMENT_FORMAT_VERSION}"),
        ("scorer", f"chartscore {document.version}"),
        ("raters", ", ".join(document.raters)),
    ]
    definitions = list(_DEFINITIONS)
    if document.gold is not None:
        gold_rows, gold_plot = _gold(document, estimates)
        tables.append(
            Table(
                "gold",
                "Each rater against gold",
                f"As chartscore score scores a predictions file; {level} Wilson intervals.",
                "field",
                (
                    Column("rater"),
                    Column("exact agreement", "exact_agreement"),
                    Column("normalized agreement", "gold_normalized_agreement"),
                ),
                tuple(gold_rows),
                repeat=1,
            )
        )
        plots.append(
            Plot(
                "gold_normalized_agreement",
                "Each rater against gold",
                f"Normalized agreement over all fields, {level} Wilson interval.",
                "gold_normalized_agreement",
                (0.0, 1.0),
                tuple(gold_plot),
            )
        )
        facts += _ceiling_facts(document)
    else:
        definitions = definitions[:-1]
    return View(
        title="chartscore agreement among raters",
        facts=tuple(facts),
        plots=tuple(plots),
        tables=tuple(tables),
        estimates=tuple(estimates),
        definitions=tuple(definitions),
        notes=(
            (
                "Rater labels are the names the files were given; name files by role, never by "
                "patient (docs/raters.md#rater-labels)."
            )
            if rater_labels
            else (
                "Raters are named by position: rater-1 is the first of the document's labels in "
                "sorted order, and so on; chartscore render --rater-labels names them "
                "(docs/raters.md#rater-labels)."
            ),
        ),
        confidence=document.confidence,
    )


def _gold(document: Agreement, estimates: list[Estimate]) -> tuple[list[Row], list[PlotRow]]:
    assert document.gold is not None
    rows: list[Row] = []
    plot: list[PlotRow] = []
    slices = [("field", field_id, found) for field_id, found in document.gold.by_field.items()]
    slices.append(("overall", "", document.gold.overall))
    for slice_kind, name, found in slices:
        for rater, results in found.items():
            exact = _rate(
                slice_kind, name, "gold_exact_agreement", rater, results["exact_agreement"]
            )
            normalized = _rate(
                slice_kind,
                name,
                "gold_normalized_agreement",
                rater,
                results["normalized_agreement"],
            )
            estimates += [exact, normalized]
            rows.append(Row(slice_kind, name, (LabelText(rater), exact, normalized)))
            if slice_kind == "overall":
                plot.append(PlotRow(rater, normalized, "overall"))
    return rows, plot


def _ceiling_facts(document: Agreement) -> list[tuple[str, str]]:
    assert document.gold is not None
    ceiling = document.gold.ceiling()
    facts = []
    for which in ("best", "median"):
        found = ceiling[which]
        if not isinstance(found, dict):
            facts.append((f"ceiling ({which})", "no rater has answerable gold rows"))
            continue
        facts.append(
            (
                f"ceiling ({which})",
                f"{found['rater']}: {found['success_count']} of {found['total_count']} "
                "normalized agreement with gold",
            )
        )
    return facts
