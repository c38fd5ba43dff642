"""An independent reference model of docs/metrics.md, checked against chartscore.

The reference scorer below is written from docs/metrics.md and docs/formats.md only (not from
chartscore's scoring code), with plain dictionaries and loops, for the four core field types
(text, categorical, number, boolean), the six counts and the six core metrics. Hypothesis
generates random datasets in the JSON Lines file format; chartscore must reproduce the
reference's counts and its Wilson intervals exactly (metrics.md gives z and the evaluation order
to the bit), through the command line, ``score_files`` and ``score``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import t as student
from statsmodels.stats.proportion import proportion_confint

import chartscore
from chartscore import EvidenceChain, GoldField, Prediction, SourceLocation

from helpers import CORE_METRIC_NAMES, chain_dict, digest, examples

Row = dict[str, Any]
Slice = dict[str, Any]

# --- the reference model (docs/metrics.md) ---------------------------------------------------

Z = 1.9599639845400536  # the 0.975 standard-normal quantile, as metrics.md states it
TOLERANCE = 1e-12  # only for comparisons with statsmodels, which evaluates differently

COUNT_KEYS = (
    "field_count",
    "answerable_count",
    "unanswerable_count",
    "missing_count",
    "answered_count",
    "abstained_count",
)
METRIC_KEYS = CORE_METRIC_NAMES
# Each metric's denominator, as a count of the same slice (metrics.md, "Core metrics").
DENOMINATORS = {
    "exact_agreement": "answerable_count",
    "normalized_agreement": "answerable_count",
    "abstention_correctness": "field_count",
    "answerable_abstention": "answerable_count",
    "unanswerable_answer": "unanswerable_count",
    "wrong_type_answer": "answered_count",
    "evidence_support": "answered_count",
    "evidence_provided": "answered_count",
}
CORE_TYPES = ("text", "categorical", "number", "boolean")
DIGITS = frozenset("0123456789")
MAX_MAGNITUDE = Decimal("1e9999")
MIN_MAGNITUDE = Decimal("1e-9999")


def wilson(k: int, n: int, z: float = Z) -> list[float] | None:
    """The 95% Wilson score interval of metrics.md ("Intervals"); None with no trials.

    Written from the documented evaluation: binary64, left to right, k(n - k)/n one
    correctly rounded division of integers.
    """
    if n == 0:
        return None
    z2 = z * z
    s = k + z2 / 2 + z * math.sqrt(k * (n - k) / n + z2 / 4)
    lower = k * k / (n * s)
    upper = 1.0 if k == n else min(1.0, s / (n + z2))
    # "The lower bound is exactly 0 when k = 0 and the upper exactly 1 when k = n."
    assert k != 0 or lower == 0.0
    return [lower, upper]


def normalize_text(value: object) -> str | None:
    """NFKC, case folding, NFKC again, whitespace runs collapsed to one space and trimmed."""
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value)
    text = text.casefold()
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.split())


def decimal_literal(text: str) -> Decimal | None:
    """metrics.md, "Number literals": [sign] (digits ["." [digits]] | "." digits) [exponent].

    A digit is any character with str.isdecimal(), worth unicodedata.decimal(char); the
    literal is rewritten in ASCII digits and read by Decimal. None when it is no literal.
    """
    ascii_text: list[str] = []
    i = 0

    def digits() -> int:
        nonlocal i
        start = i
        while i < len(text) and text[i].isdecimal():
            ascii_text.append(str(unicodedata.decimal(text[i])))
            i += 1
        return i - start

    if i < len(text) and text[i] in "+-":
        ascii_text.append(text[i])
        i += 1
    whole = digits()
    fraction = 0
    if i < len(text) and text[i] == ".":
        ascii_text.append(".")
        i += 1
        fraction = digits()
    if whole == 0 and fraction == 0:
        return None  # "." alone, or no digits at all
    if i < len(text) and text[i] in "eE":
        ascii_text.append("e")
        i += 1
        if i < len(text) and text[i] in "+-":
            ascii_text.append(text[i])
            i += 1
        if digits() == 0:
            return None
    if i != len(text):
        return None
    try:
        return Decimal("".join(ascii_text))
    except ArithmeticError:  # an exponent beyond what Decimal can hold: not in range anyway
        return None


def number_in_range(number: Decimal) -> bool:
    """At most 100 significant digits; magnitude in [1e-9999, 1e9999] unless zero."""
    if not number.is_finite():
        return False
    if number.is_zero():
        return True
    if len(number.as_tuple().digits) > 100:
        return False
    return MIN_MAGNITUDE <= abs(number) <= MAX_MAGNITUDE


def normalize_number(value: object) -> Decimal | None:
    """The exact decimal value of an integer, a decimal or a decimal literal string."""
    if isinstance(value, bool):  # JSON true/false are not numbers
        return None
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, Decimal):
        number = value
    elif isinstance(value, str):
        literal = decimal_literal(unicodedata.normalize("NFKC", value).strip())
        if literal is None:
            return None
        number = literal
    else:
        return None
    return number if number_in_range(number) else None


def normalize_boolean(value: object) -> bool | None:
    """Only real booleans are booleans."""
    return value if isinstance(value, bool) else None


NORMALIZERS = {
    "text": normalize_text,
    "categorical": normalize_text,
    "number": normalize_number,
    "boolean": normalize_boolean,
}


def exactly_equal(answer: object, gold: object) -> bool:
    """Same Python/JSON type and equal value (True is not 1, "35" is not 35, 12 is not 12.0)."""
    return type(answer) is type(gold) and answer == gold


def normalized_equal(field_type: str, answer: object, gold: object) -> bool:
    normalize = NORMALIZERS[field_type]
    normalized_gold = normalize(gold)
    assert normalized_gold is not None, "gold values are valid values of their type"
    normalized_answer = normalize(answer)
    return normalized_answer is not None and normalized_answer == normalized_gold


def is_supported(prediction: Row) -> bool:
    """metrics.md, "Evidence support"; reviewer state plays no part."""
    digest = prediction.get("normalized_fact_digest")
    chain = prediction.get("evidence_chain")
    if digest is None or chain is None:
        return False
    if chain["field_id"] != prediction["field_id"]:
        return False
    has_clinical = False
    for location in chain["source_locations"]:
        if location.get("kind", "clinical_record") == "clinical_record":
            has_clinical = True
    if not has_clinical:
        return False
    return chain["normalized_fact_digest"] == digest


def is_evidenced(prediction: Row) -> bool:
    """metrics.md, "Evidence provided": a chain with a source location of any kind."""
    chain = prediction.get("evidence_chain")
    return chain is not None and len(chain["source_locations"]) > 0


def empty_tally() -> dict[str, int]:
    tally = dict.fromkeys(COUNT_KEYS, 0)
    for name in METRIC_KEYS:
        tally[name] = 0
    return tally


def add_row(tally: dict[str, int], gold: Row, prediction: Row | None) -> None:
    field_type = gold["field_type"]
    gold_value = gold["value"]
    answerable = gold_value is not None
    missing = prediction is None
    abstained = prediction is not None and prediction["value"] is None
    answered = prediction is not None and prediction["value"] is not None

    tally["field_count"] += 1
    if answerable:
        tally["answerable_count"] += 1
    else:
        tally["unanswerable_count"] += 1
    if missing:
        tally["missing_count"] += 1
    if answered:
        tally["answered_count"] += 1
    if abstained:
        tally["abstained_count"] += 1

    if answerable and answered:
        assert prediction is not None
        answer = prediction["value"]
        if exactly_equal(answer, gold_value):
            tally["exact_agreement"] += 1
        if normalized_equal(field_type, answer, gold_value):
            tally["normalized_agreement"] += 1
    if (answerable and answered) or (not answerable and abstained):
        tally["abstention_correctness"] += 1
    if answerable and abstained:
        tally["answerable_abstention"] += 1
    if not answerable and answered:
        tally["unanswerable_answer"] += 1
    if answered:
        assert prediction is not None
        if NORMALIZERS[field_type](prediction["value"]) is None:
            tally["wrong_type_answer"] += 1
        if is_supported(prediction):
            tally["evidence_support"] += 1
        if is_evidenced(prediction):
            tally["evidence_provided"] += 1


def finish(tally: dict[str, int], cases: Mapping[str, dict[str, int]] | None = None) -> Slice:
    result: Slice = {key: tally[key] for key in COUNT_KEYS}
    for name in METRIC_KEYS:
        k = tally[name]
        n = tally[DENOMINATORS[name]]
        result[name] = {"success_count": k, "total_count": n, "interval": wilson(k, n)}
        if cases is not None:  # a pooled slice: the clustered figures (metrics.md)
            per_case = [(case[name], case[DENOMINATORS[name]]) for case in cases.values()]
            result[name]["design_effect"] = design_effect(k, n, per_case)
            result[name]["case_count"] = sum(1 for _, m in per_case if m)
    return result


def design_effect(k: int, n: int, per_case: Sequence[tuple[int, int]]) -> float | None:
    """The exact design effect of metrics.md ("Case-clustered intervals"), in floats.

    From the per-case (successes, trials) directly, not from the sums chartscore keeps.
    """
    if n == 0:
        return None
    used = [(y, m) for y, m in per_case if m]
    worst = sum(m * m for _, m in used) / n
    if len(used) < 2 or k in (0, n):
        return worst
    p = k / n
    c = len(used)
    v_case = c / (c - 1) * sum((y - p * m) ** 2 for y, m in used) / n**2
    v_row = n / (n - 1) * p * (1 - p) / n
    # Fewer than 10 charts hold the less common outcome: at least the worst case.
    minority = min(sum(1 for y, _ in used if y), sum(1 for y, m in used if y < m))
    return max(v_case / v_row, worst) if minority < 10 else v_case / v_row


def round_up_two_digits(value: float) -> float:
    """1.0 at most; else up to two significant digits (the grid of metrics.md)."""
    if value <= 1:
        return 1.0
    exponent = math.floor(math.log10(value))
    step = 10.0 ** (exponent - 1)
    return float(Decimal(math.ceil(value / step - 1e-9)) * Decimal(10) ** (exponent - 1))


def reference_score(gold_rows: Iterable[Row], prediction_rows: Iterable[Row]) -> dict[str, Any]:
    """Score rows shaped like the JSON Lines records; returns overall/by_field/by_field_type."""
    predictions: dict[tuple[str, str], Row] = {}
    for row in prediction_rows:
        key = (row["case_id"], row["field_id"])
        assert key not in predictions
        predictions[key] = row
    overall = empty_tally()
    by_field: dict[str, dict[str, int]] = {}
    by_field_type: dict[str, dict[str, int]] = {}
    # Pooled slices also keep a tally per case, for the clustered figures.
    cases: dict[str, dict[str, dict[str, int]]] = {"": {}}
    for gold in gold_rows:
        prediction = predictions.get((gold["case_id"], gold["field_id"]))
        if gold["field_id"] not in by_field:
            by_field[gold["field_id"]] = empty_tally()
        if gold["field_type"] not in by_field_type:
            by_field_type[gold["field_type"]] = empty_tally()
        add_row(overall, gold, prediction)
        add_row(by_field[gold["field_id"]], gold, prediction)
        add_row(by_field_type[gold["field_type"]], gold, prediction)
        for pooled in ("", gold["field_type"]):
            case = cases.setdefault(pooled, {}).setdefault(gold["case_id"], empty_tally())
            add_row(case, gold, prediction)
    return {
        "overall": finish(overall, cases[""]),
        "by_field": {field_id: finish(tally) for field_id, tally in by_field.items()},
        "by_field_type": {
            kind: finish(tally, cases[kind]) for kind, tally in by_field_type.items()
        },
    }


# --- comparing a chartscore report with the reference ----------------------------------------


def assert_interval_close(
    actual: object, expected: list[float] | None, where: str, tolerance: float = 0.0
) -> None:
    """Equal bounds (to the bit by default; within ``tolerance`` for outside oracles)."""
    if expected is None:
        assert actual is None, where
        return
    assert isinstance(actual, list | tuple), where
    assert len(actual) == 2, where
    for got, want in zip(actual, expected, strict=True):
        assert isinstance(got, int | float), where
        assert not isinstance(got, bool), where
        assert abs(got - want) <= tolerance, (where, actual, expected)


def assert_slice_matches(actual: Mapping[str, Any], expected: Slice, where: str) -> None:
    for key in COUNT_KEYS:
        assert key in actual, (where, key)
        assert type(actual[key]) is int, (where, key)
        assert actual[key] == expected[key], (where, key, actual[key], expected[key])
    for name in METRIC_KEYS:
        assert name in actual, (where, name)
        metric = actual[name]
        want = expected[name]
        assert (metric["success_count"], metric["total_count"]) == (
            want["success_count"],
            want["total_count"],
        ), (where, name, metric, want)
        assert_interval_close(metric["interval"], want["interval"], f"{where}.{name}")
        assert ("design_effect" in metric) == ("design_effect" in want), (where, name)
        if "design_effect" in want:
            assert_clustered_matches(metric, want, f"{where}.{name}")


def assert_clustered_matches(
    metric: Mapping[str, Any], want: Mapping[str, Any], where: str
) -> None:
    """The published design effect is the reference's rounded up; the interval follows it."""
    exact = want["design_effect"]
    shown = metric["design_effect"]
    if exact is None:
        assert shown is None and metric["clustered_interval"] is None, where
        return
    assert shown >= 1.0 and shown >= exact * (1 - 1e-12), (where, shown, exact)
    # Float and exact rational arithmetic can differ only at a grid point itself.
    assert shown in {round_up_two_digits(exact * (1 - 1e-12)), round_up_two_digits(exact)}, (
        where,
        shown,
        exact,
    )
    k, n = metric["success_count"], metric["total_count"]
    cases = want["case_count"]
    assert metric["case_count"] == cases, where
    plain = wilson(k, n)
    assert plain is not None
    if cases == n:  # one trial a chart: the Wilson interval
        expected = plain
    elif cases < 2:  # one chart: nothing to estimate a spread from
        expected = [0.0, 1.0]
    else:  # Student's t over the charts, scipy's quantile
        wide = wilson(k, n, float(student.ppf(0.975, cases - 1)) * math.sqrt(shown))
        assert wide is not None
        expected = [min(plain[0], wide[0]), max(plain[1], wide[1])]
    # scipy's t quantile is a few ulp from chartscore's (which solves its equation exactly).
    assert_interval_close(metric["clustered_interval"], expected, where, tolerance=1e-12)


def assert_report_matches(report: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    assert report["format"] == "chartscore.report"
    assert report["format_version"] == 3
    assert report["confidence"] == 0.95
    assert report["scorer"]["name"] == "chartscore"
    assert_slice_matches(report["overall"], expected["overall"], "overall")
    assert set(report["by_field"]) == set(expected["by_field"])
    for field_id, want in expected["by_field"].items():
        assert_slice_matches(report["by_field"][field_id], want, f"by_field[{field_id}]")
    assert set(report["by_field_type"]) == set(expected["by_field_type"])
    for field_type, want in expected["by_field_type"].items():
        where = f"by_field_type[{field_type}]"
        assert_slice_matches(report["by_field_type"][field_type], want, where)


# --- writing files and building records -------------------------------------------------------


def encode(value: object) -> str:
    """JSON text; a Decimal is written as its own (non-integer) literal, never via float."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        text = str(value)
        # An integer-looking literal would decode to an int and change exact agreement.
        assert any(mark in text for mark in ".eE"), text
        return text
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(encode(item) for item in value) + "]"
    if isinstance(value, dict):
        members = (f"{json.dumps(key)}: {encode(item)}" for key, item in value.items())
        return "{" + ", ".join(members) + "}"
    raise TypeError(type(value))


def jsonl_lines(rows: Sequence[Row]) -> list[str]:
    lines = [encode(row) for row in rows]
    for line, row in zip(lines, rows, strict=True):
        # The file must decode back to exactly these values (ints stay ints, decimals decimals).
        decoded = json.loads(line, parse_float=Decimal)
        assert decoded == row
        assert type(decoded["value"]) is type(row["value"])
    return lines


def write_jsonl(path: Path, rows: Sequence[Row]) -> None:
    text = "".join(line + "\n" for line in jsonl_lines(rows))
    path.write_bytes(text.encode("utf-8"))


def gold_record(row: Row) -> GoldField:
    return GoldField(row["case_id"], row["field_id"], row["field_type"], row["value"])


def prediction_record(row: Row) -> Prediction:
    chain = row.get("evidence_chain")
    evidence = None
    if chain is not None:
        locations = [
            SourceLocation(
                location["source_digest"],
                location["start_offset"],
                location["end_offset"],
                location.get("kind", "clinical_record"),
            )
            for location in chain["source_locations"]
        ]
        evidence = EvidenceChain(
            field_id=chain["field_id"],
            source_locations=locations,
            normalized_fact_digest=chain["normalized_fact_digest"],
            transformation_kind=chain["transformation_kind"],
            transformation_digest=chain["transformation_digest"],
            uncertainty=chain["uncertainty"],
            reviewer_state=chain["reviewer_state"],
        )
    return Prediction(
        row["case_id"],
        row["field_id"],
        row["value"],
        normalized_fact_digest=row.get("normalized_fact_digest"),
        evidence_chain=evidence,
    )


def run_cli(
    gold: Path, predictions: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "chartscore", "score", "--gold", str(gold)]
    command += ["--predictions", str(predictions)]
    full_env = dict(os.environ)
    if env is not None:
        full_env.update(env)
    result = subprocess.run(command, capture_output=True, env=full_env, timeout=60, check=False)
    assert result.returncode == 0, result.stderr.decode("utf-8", "replace")
    assert result.stdout.endswith(b"\n")
    return result


# --- random datasets --------------------------------------------------------------------------

DIGESTS = tuple("sha256:" + hashlib.sha256(str(i).encode()).hexdigest() for i in range(4))
TEXT_GOLD = (
    "Synthetic Alpha",
    "Test Beta",
    "former",
    "never smoked",
    "Straße",
    "strasse",
    "ﬁbrosis",
    "fibrosis",
    "café",
    "cafe\u0301",
    "ΐ",
    "İstanbul",
    "Ⅻ",
    "x²",
    "",
)
CATEGORICAL_GOLD = ("code_a", "code_b", "former", "never", "current", "Code A")
UNCERTAINTIES = (0, 1, Decimal("0.0"), Decimal("0.1"), Decimal("0.5"), Decimal("1.0"))
NON_NUMERIC_STRINGS = (
    "1,000",
    "NaN",
    "nan",
    "Infinity",
    "-Infinity",
    "",
    " ",
    "abc",
    "1.2.3",
    "0x1A",
    "12_000",
    "\u0661\u066c\u0662",  # an Arabic thousands separator between Arabic-Indic digits
    "\u0661\u066b\u0662",  # the Arabic decimal separator: only "." is a decimal point
    "\u0661_\u0662",
    "\u221212",  # U+2212 MINUS SIGN is not a sign
    "1e",
    "e3",
    "--1",
    "+-1",
    ".",
    "-.",
    ".e1",
    "1 2",
)


def in_script(text: str, zero: str) -> str:
    """ASCII digits rewritten in another script's decimal digits (zero .. zero + 9)."""
    return "".join(chr(ord(zero) + int(c)) if c in DIGITS else c for c in text)


def fullwidth(text: str) -> str:
    """ASCII printable characters as their fullwidth forms (NFKC maps them back)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def decimal_with_trailing_zero(number: Decimal) -> Decimal:
    plain = format(number, "f")
    return Decimal(plain + ("0" if "." in plain else ".0"))


def text_answers(gold: str, pool: Sequence[str]) -> list[object]:
    return [
        gold,
        gold,
        gold.upper(),
        gold.lower(),
        gold.title(),
        gold.swapcase(),
        f" {gold} ",
        f"\t{gold}\n",
        gold.replace(" ", "  \t "),
        gold.replace(" ", "\u00a0"),
        "\u3000" + fullwidth(gold) + "\u3000",
        fullwidth(gold.upper()),
        gold + "x",
        " Former ",
        "FORMER",
        "",
        *pool,
        12,
        Decimal("1.5"),
        True,
        False,
        [gold],
        [],
    ]


def number_answers(gold: int | Decimal) -> list[object]:
    number = Decimal(gold)
    plain = format(number, "f")
    signed = plain if plain.startswith("-") else "+" + plain
    answers: list[object] = [
        gold,
        gold,
        decimal_with_trailing_zero(number),
        f" {plain} ",
        signed,
        plain,
        f"{number:e}",
        f"{number:E}",
        f"{plain}e0",
        f"{plain}0e-1",
        fullwidth(plain),
        in_script(plain, "\u0660"),  # Arabic-Indic
        in_script(f"{number:e}", "\u06f0"),  # Extended Arabic-Indic, exponent digits too
        in_script(plain, "\u0966"),  # Devanagari
        plain + ("" if "." in plain else "."),  # "35." is 35
        plain.replace("0.", ".", 1) if plain.lstrip("-").startswith("0.") else plain,
        "." + plain.lstrip("-").replace(".", "") + "e" + str(len(plain.lstrip("-").split(".")[0])),
        f"\u3000{plain}\t",
        f"{plain} mg",
        *NON_NUMERIC_STRINGS,
        " 12 ",
        "1.2e1",
        "+12",
        "12.0",
        "12.",
        ".5",
        "\u0661\u0662",
        True,
        False,
        1,
        0,
        12,
        Decimal("12.0"),
        Decimal("2.50"),
        gold + 1 if isinstance(gold, int) else gold + Decimal("0.5"),
        [plain],
    ]
    if number == number.to_integral_value():
        answers.append(int(number))
    return answers


def boolean_answers(gold: bool) -> list[object]:
    return [
        gold,
        gold,
        not gold,
        1,
        0,
        Decimal("1.0"),
        "true",
        "false",
        "True",
        "yes",
        "",
        [],
        ["true"],
    ]


@st.composite
def gold_values(draw: st.DrawFn, field_type: str) -> object:
    if field_type == "text":
        return draw(st.sampled_from(TEXT_GOLD))
    if field_type == "categorical":
        return draw(st.sampled_from(CATEGORICAL_GOLD))
    if field_type == "boolean":
        return draw(st.booleans())
    if draw(st.booleans()):
        return draw(st.sampled_from((0, 1, 12, -3, 35, 1000)) | st.integers(-5000, 5000))
    coefficient = draw(st.integers(-99999, 99999))
    exponent = draw(st.sampled_from((-1, -1, -2, -3, 1, 3)))
    value = Decimal(f"{coefficient}E{exponent}")
    assert value.as_tuple().exponent != 0
    return value


def answers_for(field_type: str, gold: object) -> list[object]:
    if field_type == "text":
        assert isinstance(gold, str)
        return text_answers(gold, TEXT_GOLD)
    if field_type == "categorical":
        assert isinstance(gold, str)
        return text_answers(gold, CATEGORICAL_GOLD)
    if field_type == "number":
        assert isinstance(gold, int | Decimal)
        return number_answers(gold)
    assert isinstance(gold, bool)
    return boolean_answers(gold)


EVIDENCE_SHAPES = (
    "absent",
    "nulls",
    "digest_only",
    "supported",
    "supported",
    "mixed_kinds",
    "other_field",
    "generated_only",
    "digest_mismatch",
    "no_prediction_digest",
    "empty_sources",
    "random",
)


@st.composite
def source_locations(draw: st.DrawFn, kinds: Sequence[str | None]) -> list[Row]:
    locations = []
    for index, kind in enumerate(kinds):
        start = 10 * index + draw(st.integers(0, 4))
        end = start + draw(st.integers(1, 5))
        if index == 0 and draw(st.integers(0, 9)) == 0:
            start, end = 2**63 - 2, 2**63 - 1
        location: Row = {
            "source_digest": draw(st.sampled_from(DIGESTS)),
            "start_offset": start,
            "end_offset": end,
        }
        if kind is not None:  # an absent kind means clinical_record
            location["kind"] = kind
        locations.append(location)
    return locations


@st.composite
def evidence(draw: st.DrawFn, field_id: str, field_ids: Sequence[str]) -> Row:
    """Extra prediction keys: a digest and an evidence chain, in one of many shapes."""
    shape = draw(st.sampled_from(EVIDENCE_SHAPES))
    if shape == "absent":
        return {}
    if shape == "nulls":
        return {"normalized_fact_digest": None, "evidence_chain": None}
    digest = draw(st.sampled_from(DIGESTS))
    if shape == "digest_only":
        return {"normalized_fact_digest": digest}
    clinical = st.sampled_from(("clinical_record", None))
    kinds: list[str | None]
    if shape == "mixed_kinds":
        kinds = [draw(clinical), "generated_text", *draw(st.lists(clinical, max_size=1))]
        kinds = draw(st.permutations(kinds))
    elif shape == "generated_only":
        kinds = ["generated_text"] * draw(st.integers(1, 3))
    elif shape == "empty_sources":
        kinds = []
    elif shape == "random":
        any_kind = st.sampled_from(("clinical_record", "generated_text", None))
        kinds = draw(st.lists(any_kind, max_size=3))
    else:
        kinds = draw(st.lists(clinical, min_size=1, max_size=3))
    chain_field = field_id
    chain_digest = digest
    if shape == "other_field" or (shape == "random" and draw(st.booleans())):
        others = [other for other in field_ids if other != field_id]
        chain_field = draw(st.sampled_from([*others, field_id + ".other"]))
    if shape == "digest_mismatch":
        chain_digest = draw(st.sampled_from([d for d in DIGESTS if d != digest]))
    elif shape == "random":
        chain_digest = draw(st.sampled_from(DIGESTS))
    chain: Row = {
        "field_id": chain_field,
        "source_locations": draw(source_locations(kinds)),
        "normalized_fact_digest": chain_digest,
        "transformation_kind": draw(st.sampled_from(("rule", "model"))),
        "transformation_digest": draw(st.sampled_from(DIGESTS)),
        "uncertainty": draw(st.sampled_from(UNCERTAINTIES)),
        "reviewer_state": draw(st.sampled_from(("pending", "approved", "rejected"))),
    }
    no_digest = shape == "no_prediction_digest" or (shape == "random" and draw(st.booleans()))
    if no_digest:
        if draw(st.booleans()):
            return {"normalized_fact_digest": None, "evidence_chain": chain}
        return {"evidence_chain": chain}
    return {"normalized_fact_digest": digest, "evidence_chain": chain}


FIELD_IDS = st.from_regex(r"[a-z][a-z0-9_]{0,5}(\.[a-z][a-z0-9_]{0,5}){0,2}", fullmatch=True)
CASE_IDS = st.text(min_size=1, max_size=6) | st.from_regex(r"c-[0-9]{3}", fullmatch=True)


@st.composite
def datasets(draw: st.DrawFn) -> tuple[list[Row], list[Row]]:
    """(gold rows, prediction rows), as dicts exactly as they appear in the files."""
    case_count = draw(st.integers(1, 40))
    field_count = draw(st.integers(1, 6))
    case_ids = draw(st.lists(CASE_IDS, min_size=case_count, max_size=case_count, unique=True))
    field_ids = draw(st.lists(FIELD_IDS, min_size=field_count, max_size=field_count, unique=True))
    field_types = {fid: draw(st.sampled_from(CORE_TYPES)) for fid in field_ids}
    gold_rows: list[Row] = []
    prediction_rows: list[Row] = []
    for case_id in case_ids:
        for field_id in field_ids:
            field_type = field_types[field_id]
            roll = draw(st.integers(0, 99))
            if roll < 5 and gold_rows:
                continue  # this case has no gold row for this field
            gold = None if roll < 25 else draw(gold_values(field_type))
            gold_rows.append(
                {"case_id": case_id, "field_id": field_id, "field_type": field_type, "value": gold}
            )
            outcome = draw(st.integers(0, 99))
            if outcome < 15:
                continue  # missing
            prediction: Row = {"case_id": case_id, "field_id": field_id}
            if outcome < 30:
                prediction["value"] = None  # explicit abstention
            else:
                basis = gold if gold is not None else draw(gold_values(field_type))
                prediction["value"] = draw(st.sampled_from(answers_for(field_type, basis)))
            prediction.update(draw(evidence(field_id, field_ids)))
            prediction_rows.append(prediction)
    prediction_rows = draw(st.permutations(prediction_rows))
    return gold_rows, prediction_rows


SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


# --- the reference model's own checks ---------------------------------------------------------


def test_wilson_matches_statsmodels_and_the_documented_examples() -> None:
    for n in range(1, 121):
        for k in range(n + 1):
            lower, upper = proportion_confint(k, n, alpha=0.05, method="wilson")
            expected = [float(lower), float(upper)]
            assert_interval_close(wilson(k, n), expected, f"{k}/{n}", TOLERANCE)
    assert wilson(0, 0) is None
    # metrics.md prints 8 / 8 -> [0.6755, 1] and 0 / 8 -> [0, 0.3245]; its own formula (and
    # statsmodels) gives 0.67559... and 0.32441..., i.e. 0.6756 and 0.3244 to four places.
    assert wilson(0, 8) == [0.0, pytest.approx(0.3244, abs=5e-5)]
    assert wilson(8, 8) == [pytest.approx(0.6756, abs=5e-5), 1.0]
    assert wilson(3, 4) == [pytest.approx(0.3006, abs=5e-5), pytest.approx(0.9544, abs=5e-5)]
    assert wilson(0, 3) == [0.0, pytest.approx(0.5614970317550454, abs=TOLERANCE)]
    assert wilson(1, 2) == pytest.approx([0.09453120573423075, 0.9054687942657692], abs=TOLERANCE)


def test_reference_normalization_follows_the_documented_table() -> None:
    assert normalize_text("  Former\t ") == normalize_text("FORMER") == "former"
    assert normalize_text("Ｆｏｒｍｅｒ") == "former"
    assert normalize_text("Straße") == normalize_text("STRASSE")
    assert normalize_text("never \u00a0 smoked") == "never smoked"
    assert normalize_text(12) is None
    assert normalize_number(" 12 ") == normalize_number("1.2e1") == normalize_number("+12") == 12
    assert normalize_number("１２") == 12
    assert normalize_number(Decimal("2.50")) == normalize_number(Decimal("2.5"))
    for text in ("12 mg", "1,000", "NaN", "Infinity", "12_000", ".", "1_2", "\u0661\u066b\u0662"):
        assert normalize_number(text) is None, text
    assert normalize_number("\u0661\u0662") == normalize_number("12.") == 12
    assert normalize_number(".5") == normalize_number("5e-1") == Decimal("0.5")
    assert normalize_number("\u0967\u0968.\u096b") == Decimal("12.5")
    assert normalize_number(True) is None
    assert normalize_boolean(1) is None
    assert normalize_boolean("true") is None
    assert normalize_boolean(False) is False
    assert exactly_equal(Decimal("2.5"), Decimal("2.50"))
    assert not exactly_equal(12, Decimal("12.0"))
    assert not exactly_equal("35", 35)
    assert not exactly_equal(True, 1)


def test_reference_reproduces_the_readme_example_counts() -> None:
    chain = {
        "field_id": "echo.lvef",
        "source_locations": [{"source_digest": DIGESTS[1], "start_offset": 120, "end_offset": 131}],
        "normalized_fact_digest": DIGESTS[0],
        "transformation_kind": "model",
        "transformation_digest": DIGESTS[2],
        "uncertainty": Decimal("0.1"),
        "reviewer_state": "pending",
    }
    gold = [
        {
            "case_id": "c-001",
            "field_id": "hx.smoking",
            "field_type": "categorical",
            "value": "former",
        },
        {"case_id": "c-001", "field_id": "echo.lvef", "field_type": "number", "value": 35},
        {"case_id": "c-002", "field_id": "hx.smoking", "field_type": "categorical", "value": None},
        {"case_id": "c-002", "field_id": "echo.lvef", "field_type": "number", "value": 55},
    ]
    predictions = [
        {"case_id": "c-001", "field_id": "hx.smoking", "value": " Former "},
        {
            "case_id": "c-001",
            "field_id": "echo.lvef",
            "value": "35",
            "normalized_fact_digest": DIGESTS[0],
            "evidence_chain": chain,
        },
        {"case_id": "c-002", "field_id": "hx.smoking", "value": None},
    ]
    overall = reference_score(gold, predictions)["overall"]
    got = {
        name: (overall[name]["success_count"], overall[name]["total_count"]) for name in METRIC_KEYS
    }
    assert got == {
        "exact_agreement": (0, 3),
        "normalized_agreement": (2, 3),
        "abstention_correctness": (3, 4),
        "answerable_abstention": (0, 3),
        "unanswerable_answer": (0, 1),
        "wrong_type_answer": (0, 2),
        "evidence_support": (1, 2),
        "evidence_provided": (1, 2),
    }
    assert [overall[key] for key in COUNT_KEYS] == [4, 3, 1, 1, 2, 1]
    report = chartscore.score(
        [gold_record(row) for row in gold], [prediction_record(row) for row in predictions]
    )
    assert_report_matches(report.to_dict(), reference_score(gold, predictions))


# --- the property tests -----------------------------------------------------------------------


@settings(max_examples=examples(25), **SETTINGS)
@given(datasets())
def test_cli_report_equals_the_reference(dataset: tuple[list[Row], list[Row]]) -> None:
    gold_rows, prediction_rows = dataset
    expected = reference_score(gold_rows, prediction_rows)
    with tempfile.TemporaryDirectory() as directory:
        gold_path = Path(directory) / "gold.jsonl"
        prediction_path = Path(directory) / "predictions.jsonl"
        write_jsonl(gold_path, gold_rows)
        write_jsonl(prediction_path, prediction_rows)
        result = run_cli(gold_path, prediction_path)
    assert_report_matches(json.loads(result.stdout), expected)


@settings(max_examples=examples(200), **SETTINGS)
@given(datasets())
def test_library_reports_equal_the_reference(dataset: tuple[list[Row], list[Row]]) -> None:
    gold_rows, prediction_rows = dataset
    expected = reference_score(gold_rows, prediction_rows)
    with tempfile.TemporaryDirectory() as directory:
        gold_path = Path(directory) / "gold.jsonl"
        prediction_path = Path(directory) / "predictions.jsonl"
        write_jsonl(gold_path, gold_rows)
        write_jsonl(prediction_path, prediction_rows)
        from_files = chartscore.score_files(gold_path, prediction_path)
    from_records = chartscore.score(
        [gold_record(row) for row in gold_rows],
        [prediction_record(row) for row in prediction_rows],
    )
    assert_report_matches(from_files.to_dict(), expected)
    assert_report_matches(from_records.to_dict(), expected)
    assert_report_matches(json.loads(from_records.to_json()), expected)
    assert from_files.to_json() == from_records.to_json()


# --- the contract's worked example ------------------------------------------------------------

CONTRACT_FIELDS = (
    ("summary.text", "text", ("Synthetic Alpha", "Test Beta")),
    ("summary.code", "categorical", ("code_a", "code_b")),
    ("summary.number", "number", (12, Decimal("2.5"))),
    ("summary.flag", "boolean", (True, False)),
)


def contract_gold() -> list[Row]:
    rows = []
    for index, case_id in enumerate(("case-1", "case-2", "case-3")):
        for field_id, field_type, values in CONTRACT_FIELDS:
            value = values[index] if index < 2 else None
            rows.append(
                {"case_id": case_id, "field_id": field_id, "field_type": field_type, "value": value}
            )
    return rows


def perfect_answers(gold_rows: Sequence[Row]) -> list[Row]:
    return [
        {"case_id": row["case_id"], "field_id": row["field_id"], "value": row["value"]}
        for row in gold_rows
    ]


def metric_counts(slice_: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    return {
        name: (slice_[name]["success_count"], slice_[name]["total_count"]) for name in METRIC_KEYS
    }


def contract_reports(gold_rows: list[Row], prediction_rows: list[Row]) -> list[dict[str, Any]]:
    """The report through the command line, score_files and score."""
    with tempfile.TemporaryDirectory() as directory:
        gold_path = Path(directory) / "gold.jsonl"
        prediction_path = Path(directory) / "predictions.jsonl"
        write_jsonl(gold_path, gold_rows)
        write_jsonl(prediction_path, prediction_rows)
        from_cli = json.loads(run_cli(gold_path, prediction_path).stdout)
        from_files = chartscore.score_files(gold_path, prediction_path).to_dict()
    from_records = chartscore.score(
        [gold_record(row) for row in gold_rows],
        [prediction_record(row) for row in prediction_rows],
    ).to_dict()
    return [from_cli, from_files, from_records]


def test_contract_example_with_perfect_answers() -> None:
    gold_rows = contract_gold()
    prediction_rows = perfect_answers(gold_rows)
    expected_metrics = {
        "exact_agreement": (8, 8),
        "normalized_agreement": (8, 8),
        "abstention_correctness": (12, 12),
        "answerable_abstention": (0, 8),
        "unanswerable_answer": (0, 4),
        "wrong_type_answer": (0, 8),
        "evidence_support": (0, 8),
        "evidence_provided": (0, 8),  # no answer carries a chain: "not provided", not 0%
    }
    reference = reference_score(gold_rows, prediction_rows)
    assert metric_counts(reference["overall"]) == expected_metrics
    for report in contract_reports(gold_rows, prediction_rows):
        overall = report["overall"]
        assert [overall[key] for key in COUNT_KEYS] == [12, 8, 4, 0, 8, 4]
        assert metric_counts(overall) == expected_metrics
        assert overall["exact_agreement"]["interval"][1] == 1
        assert overall["exact_agreement"]["interval"][0] == pytest.approx(0.6756, abs=5e-5)
        assert overall["evidence_support"]["interval"][0] == 0
        assert overall["evidence_support"]["interval"][1] == pytest.approx(0.3244, abs=5e-5)
        assert set(report["by_field_type"]) == set(CORE_TYPES)
        assert_report_matches(report, reference)


def test_contract_example_with_one_missing_and_one_unsafe_answer() -> None:
    gold_rows = contract_gold()
    prediction_rows = [
        row
        for row in perfect_answers(gold_rows)
        if (row["case_id"], row["field_id"]) != ("case-1", "summary.number")
    ]
    for row in prediction_rows:
        if (row["case_id"], row["field_id"]) == ("case-3", "summary.text"):
            row["value"] = "Synthetic Alpha"
    expected_metrics = {
        "exact_agreement": (7, 8),
        "normalized_agreement": (7, 8),
        "abstention_correctness": (10, 12),
        "answerable_abstention": (0, 8),
        "unanswerable_answer": (1, 4),
        "wrong_type_answer": (0, 8),
        "evidence_support": (0, 8),
        "evidence_provided": (0, 8),
    }
    reference = reference_score(gold_rows, prediction_rows)
    assert metric_counts(reference["overall"]) == expected_metrics
    for report in contract_reports(gold_rows, prediction_rows):
        assert metric_counts(report["overall"]) == expected_metrics
        assert report["overall"]["missing_count"] == 1
        assert_report_matches(report, reference)


# --- determinism ------------------------------------------------------------------------------


@settings(max_examples=examples(6, least=2), **SETTINGS)
@given(datasets(), st.randoms(use_true_random=False), st.booleans())
def test_cli_output_is_byte_identical_across_order_and_hash_seed(
    dataset: tuple[list[Row], list[Row]], rng: random.Random, crlf: bool
) -> None:
    gold_rows, prediction_rows = dataset
    shuffled_gold = list(gold_rows)
    shuffled_predictions = list(prediction_rows)
    rng.shuffle(shuffled_gold)
    rng.shuffle(shuffled_predictions)
    end = "\r\n" if crlf else "\n"
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_jsonl(root / "gold.jsonl", gold_rows)
        write_jsonl(root / "predictions.jsonl", prediction_rows)
        # The same records in another order (and with CRLF line ends, which the reader accepts).
        (root / "gold2.jsonl").write_bytes(
            "".join(line + end for line in jsonl_lines(shuffled_gold)).encode("utf-8")
        )
        (root / "predictions2.jsonl").write_bytes(
            "".join(line + end for line in jsonl_lines(shuffled_predictions)).encode("utf-8")
        )
        first = run_cli(root / "gold.jsonl", root / "predictions.jsonl", {"PYTHONHASHSEED": "0"})
        seeded = run_cli(
            root / "gold.jsonl", root / "predictions.jsonl", {"PYTHONHASHSEED": "12345"}
        )
        reordered = run_cli(root / "gold2.jsonl", root / "predictions2.jsonl")
    assert first.stdout == seeded.stdout
    assert first.stdout == reordered.stdout
    assert_report_matches(json.loads(first.stdout), reference_score(gold_rows, prediction_rows))


# --- fields with no answerable rows ----------------------------------------------------------


@pytest.mark.parametrize("field_type", CORE_TYPES)
@pytest.mark.parametrize("answer", ["missing", None, "x"])
def test_field_without_answerable_rows_is_scored(field_type: str, answer: object) -> None:
    """A field whose gold is all null has no kappa pairs: kappa is null, not an error."""
    gold_rows: list[Row] = [
        {"case_id": "c-001", "field_id": "hx.field", "field_type": field_type, "value": None}
    ]
    prediction_rows: list[Row] = []
    if answer != "missing":
        prediction_rows.append({"case_id": "c-001", "field_id": "hx.field", "value": answer})
    expected = reference_score(gold_rows, prediction_rows)
    for report in contract_reports(gold_rows, prediction_rows):
        assert_report_matches(report, expected)
        field_slice = report["by_field"]["hx.field"]
        if field_type in ("categorical", "boolean"):
            assert field_slice["kappa"] == {"value": None, "interval": None, "pairs": 0}
        else:
            assert "kappa" not in field_slice


# --- numeric strings are limited by coefficient digits, not characters ------------------------


def test_numeric_string_with_many_leading_zeros_agrees_with_gold() -> None:
    answer = "0" * 99 + "12"
    assert normalize_number(answer) == 12  # the documented reading
    report = chartscore.score(
        [GoldField("c-001", "echo.lvef", "number", 12)],
        [Prediction("c-001", "echo.lvef", answer)],
    )
    assert report.overall.metric("normalized_agreement").success_count == 1


def test_contract_example_with_chains_that_never_support_their_answer() -> None:
    # docs/metrics.md, "Evidence provided": the perfect answers, each with a chain that supports
    # nothing (generated text only; another fact; another field; a span but no prediction
    # digest), all but one (case-2's boolean, an empty chain: no evidence). Evidence support stays
    # 0 / 8, a real grounding failure, while evidence provided is 7 / 8.
    gold_rows = contract_gold()
    prediction_rows = perfect_answers(gold_rows)
    answered = [row for row in prediction_rows if row["value"] is not None]
    assert len(answered) == 8
    for index, row in enumerate(answered):
        fact = digest(f"{row['case_id']}/{row['field_id']}")
        kinds: tuple[str, ...] = ("clinical_record",)
        chain_field, chain_fact, declared = row["field_id"], fact, fact
        if index % 4 == 0:
            kinds = ("generated_text",)
        elif index % 4 == 1:
            chain_fact = digest("another fact")
        elif index % 4 == 2:
            chain_field = "other.field"
        else:
            declared = None
        if (row["case_id"], row["field_id"]) == ("case-2", "summary.flag"):
            kinds = ()
        chain = chain_dict(chain_field, chain_fact, kinds)
        row["evidence_chain"] = chain
        if declared is not None:
            row["normalized_fact_digest"] = declared
    expected = {"evidence_support": (0, 8), "evidence_provided": (7, 8)}
    reference = reference_score(gold_rows, prediction_rows)
    assert {k: metric_counts(reference["overall"])[k] for k in expected} == expected
    for report in contract_reports(gold_rows, prediction_rows):
        assert {k: metric_counts(report["overall"])[k] for k in expected} == expected
        assert_report_matches(report, reference)
