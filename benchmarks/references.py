"""Reference check: every issue-23 validation metric against an outside reference.

On ``--cohorts`` seeded random cohorts (a categorical, an ordinal, a boolean, a number and a
date field per case, with missing, abstained and wrong-type answers and declared
uncertainties), each metric is computed by ``chartscore.score`` and by a reference that
chartscore does not share code with:

- per-label sensitivity, PPV and F1, macro and micro F1: scikit-learn's
  ``precision_recall_fscore_support`` and ``f1_score`` with missing, abstained and wrong-type
  answers mapped to an extra "no answer" class (F1 only where scikit-learn's precision and
  recall are both defined: chartscore's F1, like chart-review's, is undefined elsewhere, and
  the macro F1 is the mean of the defined ones); specificity and NPV: the true negatives of
  scikit-learn's ``multilabel_confusion_matrix`` over the answered rows, over gold negatives
  (all answerable rows) and answered negatives (docs/metrics.md: a row without an answer is
  not a negative);
- every Wilson interval: statsmodels' ``proportion_confint(method="wilson")``;
- kappa: scikit-learn's ``cohen_kappa_score`` and statsmodels' ``cohens_kappa`` (its variance);
- Krippendorff's alpha (nominal, ordinal, interval) and its jackknife: the ``krippendorff``
  package, once per left-out row;
- Gwet's AC1 and AC2 on the cohorts: Gwet's per-subject (raw-data) form, from
  tests/test_reliability.py;
- error magnitude: scikit-learn's ``mean_absolute_error``, numpy, and statsmodels'
  ``DescrStatsW.tconfint_mean`` (the bias interval); Bland-Altman limits as numpy's mean -/+
  z times ``std(ddof=1)``; the chance level as scikit-learn's MAE of numpy's median;
- declared uncertainty: scikit-learn's ``roc_auc_score`` and ``brier_score_loss``; the
  risk-coverage steps from numpy's ``quantile(method="inverted_cdf")``; DeLong's standard
  error from every pair's placements in numpy, and the logit interval in plain floats with
  scipy's t quantile;

and, once each, the published values: chart-review's "cold" table (3 decimals), Gwet's
abstractors table (irrCAC: AC1 0.8493305 se 0.04321747, AC2 0.94024 se 0.01792, alpha
0.7972585) and Hanley and McNeil's (1982) CT ratings (area 0.893, SE 0.032).

It prints one row per metric: the reference, how many figures were compared, the largest
absolute difference and the tolerance (a published value's half unit in its last digit; 1e-9
for a library, 1e-6 for statsmodels' kappa variance, whose rounding noise a square root
magnifies). It exits 1 if any difference exceeds its tolerance. Deterministic: no timing, no
network; needs only the test extra (``pip install -e '.[test]'``)::

    python benchmarks/references.py                   # 200 cohorts, seed 2026
    python benchmarks/references.py --cohorts 20 --seed 7

Nothing here is a test; tests/test_references.py runs two cohorts of it.
"""

from __future__ import annotations

import argparse
import importlib
import math
import random
import sys
import warnings
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import krippendorff
import numpy as np
from scipy.stats import t as student
from sklearn.metrics import (
    brier_score_loss,
    cohen_kappa_score,
    f1_score,
    mean_absolute_error,
    multilabel_confusion_matrix,
    precision_recall_fscore_support,
    roc_auc_score,
)
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from chartscore import EvidenceChain, GoldField, Prediction, SourceLocation, score
from chartscore.documents.report import MetricResult, SliceReport
from chartscore.documents.tally import LABEL_METRICS
from chartscore.importers import import_labelstudio
from chartscore.stats.binomial import Z95
from chartscore.stats.reliability import gwet_ac, krippendorff_alpha
from chartscore.stats.uncertainty import UncertaintySums, auroc, hanley_mcneil_interval

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
DIGEST = "sha256:" + "ab" * 32
CHOICES = ("current", "former", "never")
LEVELS = ("1", "2", "3", "4", "5")
SCHEMA = {
    "fields": {
        "hx.smoking": {"type": "categorical", "choices": list(CHOICES)},
        "triage.acuity": {"type": "ordinal", "levels": list(LEVELS)},
    }
}
MISSING = object()  # no prediction row
NO_ANSWER = "(no answer)"  # scikit-learn's extra class: missing, abstained or wrong type
OTHER = "(not a declared choice)"
LIBRARY = 1e-9
Value = object
Row = tuple[Value, Value]


class Table:
    """Per metric: the reference, figures compared, largest absolute difference, tolerance."""

    def __init__(self) -> None:
        self.rows: dict[str, list[object]] = {}

    def compare(
        self,
        metric: str,
        reference: str,
        found: float | None,
        expected: float | None,
        tolerance: float = LIBRARY,
    ) -> None:
        """One figure; ``None`` or NaN is "undefined", which must match too (else inf)."""
        row = self.rows.setdefault(metric, [reference, 0, 0.0, tolerance])
        missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in (found, expected)]
        if all(missing):
            return
        row[1] = int(row[1]) + 1  # type: ignore[call-overload]
        if any(missing):
            row[2] = math.inf
            return
        assert found is not None and expected is not None
        row[2] = max(float(row[2]), abs(float(found) - float(expected)))  # type: ignore[arg-type]

    def interval(
        self,
        metric: str,
        reference: str,
        found: tuple[float, float] | None,
        expected: tuple[float, float] | None,
        tolerance: float = LIBRARY,
    ) -> None:
        """Both bounds of an interval (None when undefined)."""
        for side in (0, 1):
            self.compare(
                metric,
                reference,
                None if found is None else found[side],
                None if expected is None else expected[side],
                tolerance,
            )

    def failures(self) -> list[str]:
        return [name for name, row in self.rows.items() if not float(row[2]) <= float(row[3])]  # type: ignore[arg-type]

    def render(self) -> str:
        lines = [
            "| metric | reference | n compared | largest difference | tolerance |",
            "|---|---|---|---|---|",
        ]
        for name, (reference, count, largest, tolerance) in self.rows.items():
            lines.append(f"| {name} | {reference} | {count} | {largest:.1e} | {tolerance:.0e} |")
        return "\n".join(lines)


# --------------------------------------------------------------------------- cohorts


def _chain(field_id: str, uncertainty: Decimal) -> EvidenceChain:
    return EvidenceChain(
        field_id=field_id,
        source_locations=[SourceLocation(DIGEST, 0, 5)],
        normalized_fact_digest=DIGEST,
        transformation_kind="model",
        transformation_digest=DIGEST,
        uncertainty=uncertainty,
        reviewer_state="pending",
    )


def _answer(rng: random.Random, right: Value, wrong: Callable[[], Value], odd: Value) -> Value:
    draw = rng.random()
    if draw < 0.08:
        return MISSING
    if draw < 0.14:
        return None  # abstained
    if draw < 0.18:
        return odd  # wrong type (or, for the categorical field, an undeclared text)
    return right if draw < 0.7 else wrong()


def cohort(rng: random.Random) -> dict[str, list[Row]]:
    """Per field, ``(gold, answer)`` rows of one random cohort (answer MISSING: no row)."""
    cases = rng.randint(15, 45)
    rows: dict[str, list[Row]] = {f: [] for f in ("smoking", "acuity", "flag", "lvef", "onset")}
    prevalence = rng.choice([0.5, 0.8, 0.95])
    for _ in range(cases):
        gold = None if rng.random() < 0.1 else rng.choice(CHOICES)
        answer = _answer(
            rng, gold, lambda: rng.choice(CHOICES), rng.choice(["Never ", "other text", 7])
        )
        rows["smoking"].append((gold, answer if gold is not None else rng.choice([None, "never"])))

        level = None if rng.random() < 0.1 else rng.randrange(5)
        near = level if level is not None else 2
        answer = _answer(
            rng,
            None if level is None else LEVELS[level],
            lambda: LEVELS[min(4, max(0, near + rng.choice([-2, -1, 1])))],  # noqa: B023
            "9",
        )
        rows["acuity"].append((None if level is None else LEVELS[level], answer))

        flag = rng.random() < prevalence
        answer = _answer(rng, flag, lambda: not flag, "yes")  # noqa: B023
        rows["flag"].append((flag, answer))

        lvef = rng.choice([rng.randint(10, 80), Decimal(rng.randint(100, 800)) / 10])
        noise = Decimal(rng.choice([0, 0, 1, -1, 2, -3, 5, 10])) / rng.choice([1, 2, 10])
        answer = _answer(rng, lvef, lambda: lvef + noise, "12 mg")  # noqa: B023
        rows["lvef"].append((None if rng.random() < 0.05 else lvef, answer))

        onset = date(2023, 1, 1) + timedelta(days=rng.randrange(400))
        text = onset.isoformat() if rng.random() < 0.9 else onset.isoformat()[:7]
        shifted = (onset + timedelta(days=rng.choice([-30, -3, -1, 1, 2, 7]))).isoformat()
        answer = _answer(rng, text, lambda: shifted, onset.isoformat()[:7])  # noqa: B023
        rows["onset"].append((text, answer))
    return rows


def uncertainty_for(rng: random.Random, agreed: bool) -> Decimal | None:
    """An uncertainty that tends to be lower on agreeing answers; None for no evidence chain."""
    if rng.random() < 0.15:
        return None
    centre = 0.3 if agreed else 0.6
    return Decimal(min(20, max(0, round(20 * (centre + rng.uniform(-0.4, 0.4)))))) / 20


FIELDS = {
    "smoking": ("hx.smoking", "categorical"),
    "acuity": ("triage.acuity", "ordinal"),
    "flag": ("dx.flag", "boolean"),
    "lvef": ("echo.lvef", "number"),
    "onset": ("dx.onset", "date"),
}


def records(
    rows: dict[str, list[Row]], uncertainties: list[Decimal | None]
) -> tuple[list[GoldField], list[Prediction]]:
    gold: list[GoldField] = []
    predictions: list[Prediction] = []
    for key, (field_id, field_type) in FIELDS.items():
        for i, (g, a) in enumerate(rows[key]):
            gold.append(GoldField(f"c{i}", field_id, field_type, g))
            if a is MISSING:
                continue
            u = uncertainties[i] if key == "flag" else None
            if u is None:
                predictions.append(Prediction(f"c{i}", field_id, a))
            else:
                predictions.append(Prediction(f"c{i}", field_id, a, DIGEST, _chain(field_id, u)))
    return gold, predictions


# --------------------------------------------------------------------------- references


def _rate(metric: MetricResult) -> float | None:
    return metric.success_count / metric.total_count if metric.total_count else None


def _wilson(table: Table, metric: MetricResult) -> None:
    expected = None
    if metric.total_count:
        low, high = proportion_confint(
            metric.success_count, metric.total_count, alpha=0.05, method="wilson"
        )
        expected = (float(low), float(high))
    table.interval("Wilson interval", "statsmodels proportion_confint", metric.interval, expected)


def check_labels(
    table: Table,
    part: SliceReport,
    rows: Sequence[Row],
    labels: Sequence[Value],
    names: Sequence[str],
    *,
    answer_class: Callable[[Value], Value],
) -> None:
    """Per-label and pooled confusion metrics of one field against scikit-learn."""
    answerable = [(g, a) for g, a in rows if g is not None]
    y_true = [g for g, _ in answerable]
    y_pred = [answer_class(a) for _, a in answerable]
    answered = [(t, p) for t, p in zip(y_true, y_pred, strict=True) if p != NO_ANSWER]
    sk = "scikit-learn precision_recall_fscore_support"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if y_true:
            precision, recall, f1, _ = precision_recall_fscore_support(
                y_true, y_pred, labels=list(labels), zero_division=np.nan
            )
            micro = f1_score(
                y_true, y_pred, labels=list(labels), average="micro", zero_division=np.nan
            )
            # F1 is undefined where precision or recall is (chart-review's definition,
            # docs/metrics.md); scikit-learn's F1 elsewhere, and the mean of those.
            f1 = np.where(np.isnan(precision) | np.isnan(recall), np.nan, f1)
            macro = float(np.nanmean(f1)) if not np.isnan(f1).all() else np.nan
            micro_p, micro_r, _, _ = precision_recall_fscore_support(
                y_true, y_pred, labels=list(labels), average="micro", zero_division=np.nan
            )
            if np.isnan(micro_p) or np.isnan(micro_r):
                micro = np.nan
        else:
            precision = recall = f1 = np.full(len(labels), np.nan)
            macro = micro = np.nan
    if answered:
        matrices = multilabel_confusion_matrix(
            [t for t, _ in answered], [p for _, p in answered], labels=list(labels)
        )
    else:
        matrices = np.zeros((len(labels), 2, 2), dtype=int)
    pooled = [0, 0, 0, 0]  # TP, gold positives, answered positives, TN
    negatives_total = answered_negatives_total = 0
    for index, (label, name) in enumerate(zip(labels, names, strict=True)):
        result = part.label(name)
        tn, _, fn, tp = (int(v) for v in matrices[index].ravel())
        negatives = sum(1 for t in y_true if t != label)
        answered_negatives = tn + fn
        table.compare(
            "sensitivity", sk + " (recall)", _rate(result.metric("sensitivity")), recall[index]
        )
        table.compare("ppv", sk + " (precision)", _rate(result.metric("ppv")), precision[index])
        table.compare("f1", sk, result.f1, f1[index])
        spec = tn / negatives if negatives else None
        npv = tn / answered_negatives if answered_negatives else None
        mcm = "scikit-learn multilabel_confusion_matrix (answered rows)"
        table.compare("specificity", mcm, _rate(result.metric("specificity")), spec)
        table.compare("npv", mcm, _rate(result.metric("npv")), npv)
        for metric in LABEL_METRICS:
            _wilson(table, result.metric(metric))
        pooled[0] += tp
        pooled[3] += tn
        negatives_total += negatives
        answered_negatives_total += answered_negatives
    table.compare("macro_f1", "scikit-learn f1_score(average='macro')", part.macro_f1, macro)
    table.compare("micro_f1", "scikit-learn f1_score(average='micro')", part.micro_f1, micro)
    pooled_spec = pooled[3] / negatives_total if negatives_total else None
    pooled_npv = pooled[3] / answered_negatives_total if answered_negatives_total else None
    micro_ref = "scikit-learn multilabel_confusion_matrix, summed"
    table.compare(
        "micro specificity, npv", micro_ref, _rate(part.metric("specificity")), pooled_spec
    )
    table.compare("micro specificity, npv", micro_ref, _rate(part.metric("npv")), pooled_npv)
    for metric in LABEL_METRICS:
        _wilson(table, part.metric(metric))


def _clamped(value: float, se: float) -> tuple[float, float]:
    return (max(min(-1.0, value), value - Z95 * se), min(1.0, value + Z95 * se))


def _alpha_reference(
    gold: list[float], answers: list[float], metric: str, domain: list[float] | None
) -> tuple[float | None, tuple[float, float] | None]:
    data = np.array([gold, answers], dtype=float)
    if len(set(data.ravel())) < 2:
        return None, None

    def alpha(values: np.ndarray) -> float:
        return float(
            krippendorff.alpha(
                reliability_data=values, level_of_measurement=metric, value_domain=domain
            )
        )

    value = alpha(data)
    n = len(gold)
    leave_one_out = []
    for row in range(n):
        kept = np.delete(data, row, axis=1)
        if len(set(kept.ravel())) < 2:
            return value, None
        leave_one_out.append(alpha(kept))
    if n < 2:
        return value, None
    jack = np.array(leave_one_out)
    se = math.sqrt((n - 1) / n * float(((jack - jack.mean()) ** 2).sum()))
    return value, _clamped(value, se)


def check_agreement(
    table: Table, part: SliceReport, gold: list[int], answers: list[int], q: int, *, ordinal: bool
) -> None:
    """Kappa, Gwet's AC1/AC2 and alpha of one field's pairs (category codes 0..q-1)."""
    gwet_raw = importlib.import_module("test_reliability")._gwet_raw
    kappa = part.kappa
    assert kappa is not None and kappa.pairs == len(gold)
    weighting = "quadratic" if ordinal else None
    expected_kappa: float | None = None
    expected_interval: tuple[float, float] | None = None
    if gold:
        matrix = np.zeros((q, q))
        for g, a in zip(gold, answers, strict=True):
            matrix[g, a] += 1
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            sk = cohen_kappa_score(gold, answers, labels=list(range(q)), weights=weighting)
            sm = cohens_kappa(matrix, wt="quadratic") if ordinal else cohens_kappa(matrix)
        if not math.isnan(sk):
            expected_kappa = float(sk)
            half = Z95 * math.sqrt(max(float(sm.var_kappa), 0.0))
            expected_interval = (max(-1.0, sk - half), min(1.0, sk + half))
    name = "kappa (quadratic)" if ordinal else "kappa"
    table.compare(name, "scikit-learn cohen_kappa_score", kappa.value, expected_kappa)
    table.interval(
        name + " interval",
        "statsmodels cohens_kappa var_kappa",
        kappa.interval,
        expected_interval,
        1e-6,
    )
    coefficients = part.coefficients or {}
    ac = coefficients["ac2" if ordinal else "ac1"]
    if gold:
        value, variance = gwet_raw(gold, answers, q, ordinal)
        n = len(gold)
        se = math.sqrt(variance * (n - 1) / n)  # the table form divides by n
        gwet = "Gwet's per-subject form (tests/test_reliability.py)"
        label = "Gwet AC2" if ordinal else "Gwet AC1"
        table.compare(label, gwet, ac.value, value)
        table.interval(
            label + " interval", gwet, ac.interval, _clamped(value, se) if n > 1 else None
        )
    metric = "ordinal" if ordinal else "nominal"
    value, interval = _alpha_reference(
        [float(g) for g in gold], [float(a) for a in answers], metric, list(range(q))
    )
    alpha = coefficients["alpha"]
    table.compare(f"alpha ({metric})", "krippendorff.alpha", alpha.value, value)
    table.interval(
        f"alpha ({metric}) interval", "krippendorff.alpha jackknife", alpha.interval, interval
    )


def _number(value: Value) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    return Fraction(value)


def _day(value: Value) -> int | None:
    if isinstance(value, str) and len(value) == 10:
        return date.fromisoformat(value).toordinal()
    return None


def check_magnitude(
    table: Table, part: SliceReport, rows: Sequence[Row], distance: Callable[[Value], object]
) -> None:
    found = part.magnitude
    assert found is not None
    pairs = [
        (float(g), float(a))  # type: ignore[arg-type]
        for g, a in ((distance(g), distance(a)) for g, a in rows if g is not None)
        if g is not None and a is not None
    ]
    gold = [float(v) for v in (distance(g) for g, _ in rows) if v is not None]  # type: ignore[arg-type]
    assert found.pairs == len(pairs) and found.gold_rows == len(gold)
    d = np.array([a - g for g, a in pairs])
    mae = mean_absolute_error([g for g, _ in pairs], [a for _, a in pairs]) if pairs else None
    table.compare(
        "mean_absolute_error", "scikit-learn mean_absolute_error", found.mean_absolute_error, mae
    )
    table.compare("mean_signed_error", "numpy mean", found.bias, float(d.mean()) if pairs else None)
    bias_interval = limits = None
    if len(pairs) > 1:
        low, high = DescrStatsW(d).tconfint_mean(alpha=0.05)
        bias_interval = (float(low), float(high))
        sd = float(np.std(d, ddof=1))
        limits = (float(d.mean()) - Z95 * sd, float(d.mean()) + Z95 * sd)
    table.interval(
        "mean_signed_error interval",
        "statsmodels DescrStatsW.tconfint_mean",
        found.bias_interval,
        bias_interval,
    )
    table.interval(
        "Bland-Altman limits", "numpy mean -/+ z std(ddof=1)", found.limits_of_agreement, limits
    )
    chance = None
    if gold:
        chance = mean_absolute_error(gold, np.full(len(gold), np.median(gold)))
    table.compare("chance level", "scikit-learn MAE of numpy median", found.chance_level, chance)


def check_interval_alpha(table: Table, part: SliceReport, rows: Sequence[Row]) -> None:
    pairs = [(_number(g), _number(a)) for g, a in rows]
    kept = [(float(g), float(a)) for g, a in pairs if g is not None and a is not None]
    alpha = (part.coefficients or {})["alpha"]
    value, interval = _alpha_reference([g for g, _ in kept], [a for _, a in kept], "interval", None)
    table.compare("alpha (interval)", "krippendorff.alpha", alpha.value, value)
    table.interval(
        "alpha (interval) interval", "krippendorff.alpha jackknife", alpha.interval, interval
    )


def delong_floats(agreed: np.ndarray, disagreed: np.ndarray) -> tuple[float, float]:
    """DeLong et al. (1988) from every pair, in floats: (AUROC, standard error)."""
    psi = (agreed[:, None] > disagreed[None, :]) + 0.5 * (agreed[:, None] == disagreed[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    variance = v10.var(ddof=1) / len(agreed) + v01.var(ddof=1) / len(disagreed)
    return float(psi.mean()), math.sqrt(variance)


def logit_interval(area: float, se: float, n1: int, n0: int) -> tuple[float, float]:
    """The logit-scale interval docs/metrics.md defines, from the standard error rounded up to
    two significant digits (decimal ceiling) and scipy's t over min(n1, n0) - 1 df."""
    rounded = Decimal(repr(se))
    step = Decimal(1).scaleb(rounded.adjusted() - 1)
    shown = float((rounded / step).to_integral_value(rounding="ROUND_CEILING") * step)
    t = float(student.ppf(0.975, min(n1, n0) - 1))
    centre, half = math.log(area / (1 - area)), t * shown / (area * (1 - area))
    return 1 / (1 + math.exp(-(centre - half))), 1 / (1 + math.exp(-(centre + half)))


def hanley_mcneil_floats(area: float, n1: int, n0: int) -> tuple[float, float]:
    q1, q2 = area / (2 - area), 2 * area * area / (1 + area)
    variance = (area * (1 - area) + (n1 - 1) * (q1 - area**2) + (n0 - 1) * (q2 - area**2)) / (
        n1 * n0
    )
    half = Z95 * math.sqrt(max(variance, 0.0))
    return max(0.0, area - half), min(1.0, area + half)


def check_uncertainty(
    table: Table, part: SliceReport, rows: Sequence[Row], uncertainties: list[Decimal | None]
) -> None:
    found = part.uncertainty
    assert found is not None
    kept = [
        (isinstance(a, bool) and a == g, float(u))
        for (g, a), u in zip(rows, uncertainties, strict=True)
        if a is not MISSING and a is not None and u is not None
    ]
    without = sum(
        1
        for (_, a), u in zip(rows, uncertainties, strict=True)
        if a not in (MISSING, None) and u is None
    )
    table.compare("without_uncertainty", "count of rows without one", found.sums.without, without)
    y = np.array([right for right, _ in kept], dtype=int)
    forecast = np.array([1 - u for _, u in kept])
    area = roc_auc_score(y, forecast) if len(set(y.tolist())) == 2 else None
    table.compare("uncertainty_auroc", "scikit-learn roc_auc_score", found.auroc, area)
    interval = None
    n1, n0 = int(y.sum()), int(len(y) - y.sum())
    if area is not None and min(n1, n0) >= 2 and 0 < area < 1:
        _, se = delong_floats(forecast[y == 1], forecast[y == 0])
        variance = found.sums.delong_variance
        assert variance is not None
        table.compare(
            "auroc standard error", "DeLong's placements in numpy", math.sqrt(variance), se
        )
        if se > 0:
            interval = logit_interval(float(area), se, n1, n0)
            table.interval(
                "uncertainty_auroc interval",
                "DeLong logit interval in floats, scipy t",
                found.auroc_interval,
                interval,
            )
    brier = brier_score_loss(y, forecast) if kept else None
    table.compare("brier_score", "scikit-learn brier_score_loss", found.brier_score, brier)
    values = np.array([u for _, u in kept])
    for k, step in enumerate(found.risk_coverage, start=1):
        if not kept:
            table.compare(
                "risk_coverage counts", "numpy quantile(inverted_cdf)", step.total_count, 0
            )
            continue
        threshold = np.quantile(values, k / 10, method="inverted_cdf")
        chosen = values <= threshold
        reference = "numpy quantile(inverted_cdf)"
        table.compare("risk_coverage counts", reference, step.total_count, int(chosen.sum()))
        table.compare("risk_coverage counts", reference, step.success_count, int(y[chosen].sum()))
        _wilson(table, step)


def check_cohort(table: Table, rng: random.Random) -> None:
    rows = cohort(rng)
    uncertainties = [uncertainty_for(rng, isinstance(a, bool) and a == g) for g, a in rows["flag"]]
    gold, predictions = records(rows, uncertainties)
    report = score(gold, predictions, schema=SCHEMA)
    parts = report.by_field

    def smoking_class(a: Value) -> Value:
        if not isinstance(a, str):
            return NO_ANSWER
        text = " ".join(a.lower().split())
        return text if text in CHOICES else OTHER

    check_labels(
        table, parts["hx.smoking"], rows["smoking"], CHOICES, CHOICES, answer_class=smoking_class
    )

    def flag_class(a: Value) -> Value:
        return str(a).lower() if isinstance(a, bool) else NO_ANSWER

    flags_named = [(flag_class(g), a) for g, a in rows["flag"]]
    labels = ["false", "true"]
    check_labels(table, parts["dx.flag"], flags_named, labels, labels, answer_class=flag_class)
    # Kappa's pairs: answerable rows answered with a value of the field's type.
    categories = [*CHOICES, OTHER]
    smoking = [(g, smoking_class(a)) for g, a in rows["smoking"] if g is not None]
    smoking = [(g, a) for g, a in smoking if a != NO_ANSWER]
    q = len(CHOICES) + any(a == OTHER for _, a in smoking)
    codes = [(categories.index(g), categories.index(a)) for g, a in smoking]  # type: ignore[arg-type]
    check_agreement(
        table, parts["hx.smoking"], [g for g, _ in codes], [a for _, a in codes], q, ordinal=False
    )
    flags = [(int(g), int(a)) for g, a in rows["flag"] if isinstance(a, bool)]  # type: ignore[call-overload]
    check_agreement(
        table, parts["dx.flag"], [g for g, _ in flags], [a for _, a in flags], 2, ordinal=False
    )
    acuity = [
        (LEVELS.index(g), LEVELS.index(a))  # type: ignore[arg-type]
        for g, a in rows["acuity"]
        if g is not None and a in LEVELS
    ]
    check_agreement(
        table,
        parts["triage.acuity"],
        [g for g, _ in acuity],
        [a for _, a in acuity],
        5,
        ordinal=True,
    )
    check_magnitude(table, parts["echo.lvef"], rows["lvef"], _number)
    check_interval_alpha(table, parts["echo.lvef"], rows["lvef"])
    check_magnitude(table, parts["dx.onset"], rows["onset"], _day)
    check_uncertainty(table, parts["dx.flag"], rows["flag"], uncertainties)


# --------------------------------------------------------------------------- published values

COLD = TESTS / "data" / "importers" / "labelstudio_cold.json"
# chart-review's published rows (tests/test_label_metrics.py): F1, Sens, Spec, PPV, NPV;
# None is its "-".
CHART_REVIEW = {
    "*": (0.667, 0.75, 0.6, 0.6, 0.75),
    "cough": (0.667, 0.5, 1.0, 1.0, 0.5),
    "fatigue": (1.0, 1.0, 1.0, 1.0, 1.0),
    "headache": (None, None, 0.333, 0.0, 1.0),
}
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
HANLEY_NORMAL = [33, 6, 6, 11, 2]  # ratings 1 (definitely normal) .. 5 of 58 normal cases
HANLEY_ABNORMAL = [3, 2, 2, 11, 33]  # and of 51 abnormal ones


def check_published(table: Table) -> None:
    imported = import_labelstudio(
        COLD,
        gold_annotator=6,
        annotator=3,
        labels=["Cough", "Fatigue", "Headache"],
        notes=[1, 3, 4],
    )
    part = score(list(imported.gold), list(imported.predictions), schema=imported.schema).by_field[
        "labels"
    ]
    cold = "chart-review 'cold' table (3 decimals)"
    for name, published in CHART_REVIEW.items():
        metrics = part.metrics if name == "*" else part.label(name).metrics
        f1 = part.micro_f1 if name == "*" else part.label(name).f1
        found = [f1, *(_rate(metrics[m]) for m in LABEL_METRICS)]
        for value, expected in zip(found, published, strict=True):
            table.compare("chart-review cold rows", cold, value, expected, 5e-4)
    cells = [(i, j, n) for i, row in enumerate(ABSTRACTORS) for j, n in enumerate(row) if n]
    irr = "Gwet (2014) abstractors, irrCAC"
    # (weighting, AC, its half unit, SE, its half unit): irrCAC's R and Python outputs.
    published = (
        ("none", 0.8493305, 5e-8, 0.04321747, 5e-9),
        ("quadratic", 0.94024, 5e-6, 0.01792, 5e-6),
    )
    for weighting, value, value_unit, se, se_unit in published:
        ac = gwet_ac(cells, 3, weighting, z=1.0)
        assert ac is not None
        label = "Gwet AC1 published" if weighting == "none" else "Gwet AC2 published"
        table.compare(label, irr, ac[0], value, value_unit)
        table.compare(label + " SE", irr, (ac[1][1] - ac[1][0]) / 2, se, se_unit)
    alpha = krippendorff_alpha(cells, 3, "nominal")
    assert alpha is not None
    table.compare("alpha (nominal) published", irr + " krippen2.table", alpha[0], 0.7972585, 5e-8)
    rows = [
        (Fraction(5 - rating, 4), agreed, count)
        for rating in range(1, 6)
        for agreed, count in (
            (True, HANLEY_ABNORMAL[rating - 1]),
            (False, HANLEY_NORMAL[rating - 1]),
        )
    ]
    sums = UncertaintySums.of(rows, 0)
    hm = "Hanley & McNeil (1982) CT ratings"
    table.compare("uncertainty_auroc published", hm, auroc(sums), 0.893, 5e-4)
    interval = hanley_mcneil_interval(sums, 1.0)
    assert interval is not None
    table.compare(
        "uncertainty_auroc SE published", hm, (interval[1] - interval[0]) / 2, 0.032, 5e-4
    )


def run(cohorts: int, seed: int) -> Table:
    """Every comparison over ``cohorts`` cohorts drawn from ``seed``, then the published values."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))  # tests/test_reliability.py and its helpers
    table = Table()
    rng = random.Random(seed)
    for _ in range(cohorts):
        check_cohort(table, rng)
    check_published(table)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cohorts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    table = run(args.cohorts, args.seed)
    print(f"{args.cohorts} cohorts, seed {args.seed}")
    print(table.render())
    failures = table.failures()
    if failures:
        print("beyond tolerance: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
