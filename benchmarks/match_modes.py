"""Match modes (issue 34): regex and fuzzy scoring against plain scoring, and the worst rows.

Run by ``python benchmarks/run.py`` (or alone: ``python benchmarks/run.py --match-only``). It
measures, in one run:

- 10^5 rows of a ``text`` field scored by ``chartscore.score()`` three ways on the same
  records: plain, ``"match": "regex"`` and ``"match": {"fuzzy": ...}``, alternating round by
  round; the ratios to plain scoring are paired (each round's over the plain time of the
  same round), then the median. Regex rows come twice: answers that repeat (codes, as a
  model writes them) and answers that are all distinct (no cache helps);
- the worst rows, each in a fresh process (its time, and the growth of its peak resident
  memory over what the process held before scoring): the issue's ``.*a.{990}x``, eight
  distinct such patterns and the slowest patterns a random search found, against answers at
  the length limit; fuzzy texts at the limit of their threshold, unrelated or edited at the
  largest distance that still agrees (50,000 characters near 0, 200,000 from 0.9375); and
  texts over the limit (the issue's 100,000-character regex answer and 200,000-character
  texts at 0.85), which are refused;
- for the record, what rapidfuzz alone takes for two 200,000-character texts at any
  threshold, which is why the fuzzy limit depends on the threshold.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import subprocess
import sys
import time

from chartscore import GoldField, Prediction, score

ROWS = 100_000

RULES = [
    r"I50\.[0-9]+",
    r"I11\.0",
    r"E1[01]\.[0-9]{1,2}",
    r"J44(?:\.[0-9])?",
    r"N18\.[1-6]",
    r"I48\.[0-2]",
    r"C34\.[0-9]{2}",
    r"(?:current|former) smoker",
    r"\d{1,3} ?mg",
    r"[A-Z][0-9]{2}\.[0-9]",
]
CODES = ["I50.9", "I50.22", "I11.0", "E11.65", "E10.9", "J44", "J44.1", "N18.3", "I48.1",
         "C34.11", "former smoker", "250 mg", "I51.0", "I50", "I50.9 HFrEF", "unknown"]  # fmt: skip
PHRASES = [
    "heart failure with reduced ejection fraction",
    "vegan chia pudding",
    "chronic obstructive pulmonary disease",
    "type 2 diabetes mellitus without complications",
    "atrial fibrillation",
    "chronic kidney disease stage 3",
]

# The slowest patterns a random search over the subset found (about 12,000 accepted patterns
# against 5,000-character answers; docs/performance.md, "Match modes"), and hand-made ones.
WORST_PATTERNS = [
    r".*.(?:.*\d*|b){0,540}a",
    r".*.+é(?:a{0,805}.*(?:[^x]?\d?){0,647}[^x]{724}|\d?b{95,})?a",
    r".*(?:a*\s*){0,677}é*b?a",
    r".*a{0,591}(?:a*[^x]*.?|a*b*){351}(?:[ab]{132,}|\W*.+)a",
    r"(?:.*[ab]){999}x",
    r"(?:.{0,999})*x",
    r"(?:.*\w){100}x",
]
# Gold patterns whose translation for RE2 is longest (each \w is a class of 734 ranges):
# accepted (the alternation merges into one class) and refused (over the memory budget).
LONG_PATTERNS = [r"(?:\w|\W)" * 111, r"\w" * 500]


def _variant(text: str, chooser: random.Random) -> str:
    # Case and whitespace variants, as answers arrive.
    return chooser.choice([text, text.upper(), f" {text} ", text.lower()])


def code_rows(*, distinct: bool) -> tuple[list[GoldField], list[Prediction]]:
    """Gold coding rules and answers (codes; all distinct if ``distinct``), 10% missing."""
    chooser = random.Random(34)
    gold = [GoldField(f"c{i}", "dx.code", "text", chooser.choice(RULES)) for i in range(ROWS)]
    answers = []
    for i in range(ROWS):
        if i % 10 == 0:
            continue
        answer = _variant(chooser.choice(CODES), chooser)
        answers.append(Prediction(f"c{i}", "dx.code", f"{answer}{i}" if distinct else answer))
    return gold, answers


def phrase_rows() -> tuple[list[GoldField], list[Prediction]]:
    """Gold phrases and answers with a typo now and then, 10% missing."""
    chooser = random.Random(35)
    gold = [GoldField(f"c{i}", "dx.summary", "text", chooser.choice(PHRASES)) for i in range(ROWS)]
    answers = []
    for i, row in enumerate(gold):
        if i % 10 == 0:
            continue
        text = str(row.value)
        if chooser.random() < 0.5:
            at = chooser.randrange(len(text))
            text = text[:at] + chooser.choice("aeiou") + text[at + 1 :]
        answers.append(Prediction(f"c{i}", "dx.summary", _variant(text, chooser)))
    return gold, answers


def _schema(field_id: str, match: object) -> dict[str, object]:
    entry: dict[str, object] = {"type": "text"}
    if match is not None:
        entry["match"] = match
    return {"fields": {field_id: entry}}


def _timed(gold: list[GoldField], answers: list[Prediction], schema: dict[str, object]) -> float:
    gc.collect()
    start = time.perf_counter()
    score(gold, answers, schema=schema)
    return time.perf_counter() - start


def measure_rows(repeat: int) -> dict[str, float]:
    """Paired ratios to plain scoring of 10^5 rows (medians over ``repeat`` rounds)."""
    codes = code_rows(distinct=False)
    distinct = code_rows(distinct=True)
    phrases = phrase_rows()
    regex, fuzzy = "regex", {"fuzzy": "0.85"}
    for data, field_id, match in ((codes, "dx.code", regex), (phrases, "dx.summary", fuzzy)):
        score(data[0][:20], data[1][:10], schema=_schema(field_id, match))  # engines loaded
    times: dict[str, list[float]] = {}
    runs = {
        "plain codes": (codes, "dx.code", None),
        "regex codes": (codes, "dx.code", regex),
        "plain distinct": (distinct, "dx.code", None),
        "regex distinct": (distinct, "dx.code", regex),
        "plain phrases": (phrases, "dx.summary", None),
        "fuzzy phrases": (phrases, "dx.summary", fuzzy),
    }
    for _ in range(repeat):
        for name, (data, field_id, match) in runs.items():
            times.setdefault(name, []).append(_timed(*data, _schema(field_id, match)))
    result = {name: statistics.median(values) for name, values in times.items()}
    for mode, rows in (("regex", "codes"), ("regex", "distinct"), ("fuzzy", "phrases")):
        pairs = zip(times[f"{mode} {rows}"], times[f"plain {rows}"], strict=True)
        result[f"{mode} {rows} ratio"] = statistics.median(m / p for m, p in pairs)
    return result


# --- the worst rows, one fresh process each ------------------------------------------------

ROW_PROGRAM = r"""
import json, random, sys, time
from chartscore import ChartscoreError, GoldField, Prediction, score

scenario = json.loads(sys.argv[1])
kind, length, patterns = scenario["kind"], scenario["length"], scenario["patterns"]
chooser = random.Random(34)
if kind == "regex":
    schema = {"fields": {"dx.code": {"type": "text", "match": "regex"}}}
    answer = "".join(chooser.choice(scenario["alphabet"]) for _ in range(length))
    rows = [(pattern, answer) for pattern in patterns]
else:
    schema = {"fields": {"dx.code": {"type": "text", "match": {"fuzzy": scenario["threshold"]}}}}
    alphabet = scenario["alphabet"]
    first = "".join(chooser.choice(alphabet) for _ in range(length))
    if scenario.get("edited"):  # edited at the largest distance that still agrees
        from decimal import Decimal
        p, q = Decimal(scenario["threshold"]).as_integer_ratio()
        second = list(first)
        for i in chooser.sample(range(length), (q - p) * length // q):
            second[i] = chooser.choice(alphabet)
        second = "".join(second)
    else:
        second = "".join(chooser.choice(alphabet) for _ in range(length))
    rows = [(first, second)]
# The engines, and the class tables of \\d \\w \\s (once per process: about 0.3 s and a
# 13 MB scratch string), are loaded first, so the figures are the row's own.
warm = "regex" if kind == "regex" else {"fuzzy": "0.5"}
score([GoldField("w", "dx.warm", "text", "[\\w\\d\\s]")], [Prediction("w", "dx.warm", "x")],
      schema={"fields": {"dx.warm": {"type": "text", "match": warm}}})
gold = [GoldField(f"c{i}", "dx.code", "text", g) for i, (g, _) in enumerate(rows)]
answers = [Prediction(f"c{i}", "dx.code", a) for i, (_, a) in enumerate(rows)]


def status(name):
    with open("/proc/self/status") as lines:
        for line in lines:
            if line.startswith(name + ":"):
                return int(line.split()[1]) * 1024
    raise LookupError(name)


with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak resident size (VmHWM) starts again from here
before = status("VmRSS")
wall, cpu = time.perf_counter(), time.process_time()
outcome = "scored"
try:
    score(gold, answers, schema=schema)
except ChartscoreError as error:
    outcome = str(error.code)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
grew = max(0, status("VmHWM") - before)
print(json.dumps({"wall": wall, "cpu": cpu, "grew": grew, "outcome": outcome}))
"""

LATIN = "abcdefghijklmnopqrstuvwxyz "
CJK = "".join(chr(0x4E00 + i) for i in range(3000))


def worst_scenarios() -> list[tuple[str, dict[str, object]]]:
    """(name, scenario) of the worst rows the benchmark knows."""
    issue = r".*a.{990}x"
    eight = [f".*a.{{{990 - i}}}x" for i in range(8)]
    return [
        ("regex .*a.{990}x, 5,000-char answer", _regex(5_000, [issue])),
        ("regex 8 distinct .*a.{990-i}x, 5,000 chars", _regex(5_000, eight)),
        *[
            (f"regex worst #{i}, 5,000 chars of {alphabet}", _regex(5_000, [pattern], alphabet))
            for i, pattern in enumerate(WORST_PATTERNS, 1)
            for alphabet in ("ab", "aé漢b 1x")
        ],
        ("regex 111 x (?:\\w|\\W), compiled", _regex(5_000, [LONG_PATTERNS[0]])),
        ("regex 500 x \\w, refused", _regex(5_000, [LONG_PATTERNS[1]])),
        ("regex .*a.{990}x, 100,000 chars (issue)", _regex(100_000, [issue])),
        ("fuzzy 50,000 CJK chars, t = 0.0001", _fuzzy(50_000, CJK, "0.0001")),
        ("fuzzy 50,000 Latin chars, t = 0.0001", _fuzzy(50_000, LATIN, "0.0001")),
        ("fuzzy 200,000 CJK chars, t = 0.9375", _fuzzy(200_000, CJK, "0.9375")),
        ("fuzzy 200,000 CJK chars edited, t = 0.9375", _fuzzy(200_000, CJK, "0.9375", True)),
        ("fuzzy 200,000 Latin chars edited, t = 0.95", _fuzzy(200_000, LATIN, "0.95", True)),
        ("fuzzy 158,117 CJK chars edited, t = 0.9", _fuzzy(158_117, CJK, "0.9", True)),
        ("fuzzy 70,711 CJK chars edited, t = 0.5", _fuzzy(70_711, CJK, "0.5", True)),
        ("fuzzy 200,000 chars, t = 0.85 (issue; refused)", _fuzzy(200_000, LATIN, "0.85")),
    ]


def _regex(length: int, patterns: list[str], alphabet: str = "ab") -> dict[str, object]:
    return {"kind": "regex", "length": length, "patterns": patterns, "alphabet": alphabet}


def _fuzzy(length: int, alphabet: str, threshold: str, edited: bool = False) -> dict[str, object]:
    return {
        "kind": "fuzzy",
        "length": length,
        "patterns": [],
        "alphabet": alphabet,
        "threshold": threshold,
        "edited": edited,
    }


def measure_worst_row(scenario: dict[str, object]) -> dict[str, object]:
    """One scenario's time, memory growth and outcome, in a fresh process."""
    result = subprocess.run(
        [sys.executable, "-c", ROW_PROGRAM, json.dumps(scenario)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    measured: dict[str, object] = json.loads(result.stdout)
    return measured


def rapidfuzz_alone() -> list[tuple[str, float]]:
    """CPU seconds rapidfuzz takes for two 200,000-character texts (not through chartscore)."""
    from rapidfuzz.distance import Levenshtein

    chooser = random.Random(36)
    size = 200_000
    first = "".join(chooser.choice(LATIN) for _ in range(size))
    near = list(first)
    for _ in range(size // 10):  # about 10% edits: similarity near 0.9
        near[chooser.randrange(size)] = chooser.choice(LATIN)
    unrelated = "".join(chooser.choice(CJK) for _ in range(size))
    other = "".join(chooser.choice(CJK) for _ in range(size))
    cases = [
        ("near copies, Latin, t = 0.85", first, "".join(near), 0.15),
        ("unrelated, CJK, t = 0.0001", unrelated, other, 0.9999),
    ]
    out = []
    for name, a, b, share in cases:
        start = time.process_time()
        Levenshtein.distance(a, b, score_cutoff=int(size * share))
        out.append((name, time.process_time() - start))
    return out


def report(repeat: int) -> None:
    """Measure and print the match-mode figures and targets."""
    print(f"\nmatch modes (issue 34): {ROWS:,} rows of one text field, in-memory score()")
    rows = measure_rows(repeat)
    print(f"  {'rows':<34}{'plain s':>9}{'mode s':>9}{'mode/plain':>12}")
    for label, mode, kind in (
        ("regex, answers repeat (codes)", "regex", "codes"),
        ("regex, every answer distinct", "regex", "distinct"),
        ("fuzzy t = 0.85, phrases", "fuzzy", "phrases"),
    ):
        print(
            f"  {label:<34}{rows[f'plain {kind}']:>9.3f}{rows[f'{mode} {kind}']:>9.3f}"
            f"{rows[f'{mode} {kind} ratio']:>12.2f}"
        )
    print("\n  worst rows (one fresh process each; memory: growth of the peak while scoring)")
    print(f"  {'scenario':<48}{'cpu s':>8}{'wall s':>8}{'MiB':>7}  outcome")
    worst_cpu = worst_wall = worst_memory = 0.0
    for name, scenario in worst_scenarios():
        measured = measure_worst_row(scenario)
        cpu, wall = float(measured["cpu"]), float(measured["wall"])  # type: ignore[arg-type]
        grew = float(measured["grew"]) / 2**20  # type: ignore[arg-type]
        rows_in = max(1, len(scenario["patterns"]))  # type: ignore[arg-type]
        worst_cpu = max(worst_cpu, cpu / rows_in)
        worst_wall = max(worst_wall, wall / rows_in)
        worst_memory = max(worst_memory, grew)
        print(f"  {name:<48}{cpu:>8.3f}{wall:>8.3f}{grew:>7.1f}  {measured['outcome']}")
    print(
        "\n  rapidfuzz alone, two 200,000-character texts (why the limit depends on the threshold):"
    )
    for name, seconds in rapidfuzz_alone():
        print(f"    {name}: {seconds:.2f} s cpu")
    print("\n  targets:")
    checks = [
        ("regex 10^5 rows / plain, answers repeat (<= 2)", rows["regex codes ratio"], 2.0),
        ("regex 10^5 rows / plain, answers distinct (<= 2)", rows["regex distinct ratio"], 2.0),
        ("fuzzy 10^5 rows / plain", rows["fuzzy phrases ratio"], None),
        ("slowest row, cpu s (<= 1)", worst_cpu, 1.0),
        ("slowest row, wall s (other processes' load adds to it)", worst_wall, None),
        ("largest memory growth of a row, MiB (<= 64)", worst_memory, 64.0),
    ]
    for name, value, bound in checks:
        verdict = "" if bound is None else ("  meets target" if value <= bound else "  MISSES")
        print(f"    {name}: {value:.2f}{verdict}")
