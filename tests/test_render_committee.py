"""Reports a committee understands: names, labels and axes people can read (issue 38, item 5)."""

from __future__ import annotations

import datetime
import io
import json
import re
from pathlib import Path

import attrs
import pytest

import chartscore
from chartscore import Comparison, GoldField, Prediction, Report
from chartscore.cli import main
from chartscore.disclosure import audit
from chartscore.documents.gates import evaluate, parse_gates
from chartscore.documents.json_schemas import schema_bytes
from chartscore.documents.shared_comparison import SharedComparison
from chartscore.documents.shared_quantities import hidden_counts
from chartscore.documents.system_names import SYSTEM_NAME_PATTERN, SystemNames
from chartscore.errors import ChartscoreError, ErrorCode
from chartscore.ledger.entry import LABEL_PATTERN
from chartscore.render import render
from chartscore.render.axis import zoomed_axis, zoomed_plots
from chartscore.render.forest import PLOT_WIDTH, Geometry, forest_svg
from chartscore.render.view import Estimate, Kind, Plot, PlotRow
from shared_data import full_and_shared

# Ten cases: an ordinal field answered one level off twice, a categorical field wrong twice.
LEVELS = ["I", "II", "III", "IV"]
SCHEMA: dict[str, object] = {
    "fields": {
        "hf.nyha": {"type": "ordinal", "levels": LEVELS},
        "hx.smoking": {"type": "categorical", "choices": ["never", "former", "current"]},
    }
}
SMOKING = ["never", "former", "current"]


def _gold() -> list[GoldField]:
    rows = []
    for case in range(10):
        rows.append(GoldField(f"c{case}", "hf.nyha", "ordinal", LEVELS[case % 4]))
        rows.append(GoldField(f"c{case}", "hx.smoking", "categorical", SMOKING[case % 3]))
    return rows


def _predictions(wrong: int) -> list[Prediction]:
    rows = []
    for case in range(10):
        level = LEVELS[case % 4] if case >= wrong else LEVELS[(case % 4 + 1) % 4]
        smoking = SMOKING[case % 3] if case >= wrong else SMOKING[(case + 1) % 3]
        rows.append(Prediction(f"c{case}", "hf.nyha", level))
        rows.append(Prediction(f"c{case}", "hx.smoking", smoking))
    return rows


def report() -> Report:
    return chartscore.score(_gold(), _predictions(2), schema=SCHEMA)


def comparison() -> Comparison:
    return chartscore.compare(_gold(), _predictions(2), _predictions(1), schema=SCHEMA)


def _row(text: str, field_id: str, heading: str) -> str:
    # The Markdown row of a field in the table under a heading.
    section = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    (line,) = [line for line in section.splitlines() if line.startswith(f"| `{field_id}`")]
    return line


def test_an_ordinal_kappa_is_named_weighted_kappa_and_a_nominal_one_cohens() -> None:
    for document in (report(), comparison()):
        text = render(document, "markdown")
        heading = "Kappa (higher is better)"
        assert "weighted kappa (quadratic)" in _row(text, "hf.nyha", heading)
        assert "Cohen's kappa" not in _row(text, "hf.nyha", heading)
        assert "Cohen's kappa" in _row(text, "hx.smoking", heading)
        assert "weighted" not in _row(text, "hx.smoking", heading)


def test_the_summary_marks_the_weighted_kappa() -> None:
    lines = render(report(), "summary").splitlines()
    (nyha,) = [line for line in lines if line.startswith("hf.nyha")]
    (smoking,) = [line for line in lines if line.startswith("hx.smoking")]
    assert nyha.endswith("(weighted)") and not smoking.endswith("(weighted)")
    assert (
        "kappa: Cohen's kappa; (weighted): an ordinal field's weighted kappa (quadratic)." in lines
    )


def test_the_report_plot_names_the_weighted_kappa() -> None:
    html = render(report(), "html")
    panel = html.split('id="plot-kappa"', 1)[1].split("</figure>", 1)[0]
    assert "hf.<wbr>nyha: weighted kappa (quadratic)" in panel or (
        "hf.nyha: weighted kappa (quadratic)" in panel
    )
    assert "hx.smoking: weighted" not in panel


# --------------------------------------------------------------------------- names, date, gates

NAMED = attrs.evolve(comparison(), names=SystemNames("model-v1", "model-v2"))
GATES = parse_gates(
    '[[gate]]\nslice = "overall"\nmetric = "normalized_agreement"\n'
    'min_difference_lower = -0.02\nlevel = "required"\n'
    '[[gate]]\nslice = "field:hx.smoking"\nmetric = "exact_agreement"\nmin_lower = 0.99\n'
    'level = "warning"\n'
)


def test_the_names_round_trip_through_the_json_and_are_optional() -> None:
    text = NAMED.to_json()
    assert '"names":{"baseline":"model-v1","candidate":"model-v2"}' in text
    assert Comparison.from_json(text).to_json() == text
    assert '"names"' not in comparison().to_json()
    one = attrs.evolve(NAMED, names=SystemNames(candidate="model-v2"))
    assert '"names":{"candidate":"model-v2"}' in one.to_json()
    assert Comparison.from_json(one.to_json()) == one


@pytest.mark.parametrize(
    "names",
    [{}, {"baseline": ""}, {"baseline": "a b"}, {"baseline": None}, {"other": "x"},
     {"baseline": "x" * 65}, {"candidate": "-x"}, ["x"]],
)  # fmt: skip
def test_a_names_member_that_is_not_plain_names_is_an_invalid_report(names: object) -> None:
    document = json.loads(NAMED.to_json())
    document["names"] = names
    with pytest.raises(ChartscoreError) as caught:
        Comparison.from_json(json.dumps(document))
    assert caught.value.code is ErrorCode.INVALID_REPORT
    assert "a b" not in str(caught.value) and "xxxx" not in str(caught.value)


def test_the_name_rule_is_the_ledgers_label_rule() -> None:
    assert SYSTEM_NAME_PATTERN == LABEL_PATTERN
    with pytest.raises(ChartscoreError) as caught:
        SystemNames("MRN 1234", None)
    assert caught.value.code is ErrorCode.INVALID_RUN_LABEL and "1234" not in str(caught.value)
    with pytest.raises(ChartscoreError):
        SystemNames(None, None)


def test_a_named_comparison_says_who_is_who_in_every_rendering() -> None:
    expected = "model-v2 (candidate) against model-v1 (baseline)"
    for fmt in ("table", "markdown", "html", "summary"):
        text = render(NAMED, fmt)
        assert f"chartscore comparison: {expected}" in text, fmt
    assert render(NAMED, "csv") == render(comparison(), "csv")  # rows name their side already
    assert "against" not in render(comparison(), "markdown").split("\n", 1)[0]


def test_the_header_gives_the_date_the_level_each_margin_and_the_verdict() -> None:
    verdicts = evaluate(NAMED, GATES)
    text = render(NAMED, "markdown", gates=GATES, verdicts=verdicts, date="2026-12-06")
    header = text.split("\n## ", 1)[0]
    assert "- **date**: 2026-12-06" in header
    assert "- **confidence**: 95% intervals" in header
    assert (
        "- **margin**: gate 1 (required): overall normalized\\_agreement: the lower 95% bound "
        "of candidate minus baseline must be \\>= -2 points"
    ) in header
    # The candidate is 10 points better overall (18 of 20 against 16 of 20; 2 discordant
    # rows), but 10 charts cannot rule out a 2-point loss: the required gate fails. The
    # warning gate on exact agreement (lower bound >= 99%) cannot hold with 9 of 10 right.
    assert "- **verdict**: gates FAILED: 0 of 2 passed; failed: 1 required, 1 warning" in header
    assert "- **gate**: gate 1 FAIL (required): overall normalized\\_agreement" in header
    assert "- **gate**: gate 2 warn (warning): field:hx.smoking exact\\_agreement" in header
    assert "**date**" not in render(NAMED, "markdown").split("\n## ", 1)[0]
    html = render(NAMED, "html", gates=GATES, verdicts=verdicts, date="2026-12-06")
    assert "a gate's margin" in html and html.count('<g class="margin"') == 1


@pytest.mark.parametrize("date", ["2026-13-01", "2026-02-30", "26-12-06", "2026-12-06 ", 20261206])
def test_a_date_that_is_not_a_calendar_date_is_refused(date: object) -> None:
    with pytest.raises(ChartscoreError) as caught:
        render(NAMED, "markdown", date=date)  # type: ignore[arg-type]
    assert caught.value.code is ErrorCode.USAGE


def test_compare_writes_only_names_it_was_given(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(
            json.dumps({"case_id": f"c{i}", "field_id": "hx.smoking", "field_type": "categorical",
                        "value": SMOKING[i % 3]}) + "\n"
            for i in range(6)
        )
    )  # fmt: skip
    baseline = tmp_path / "Jane-Doe.jsonl"  # a stem that is a person's name
    baseline.write_text(
        "".join(
            json.dumps({"case_id": f"c{i}", "field_id": "hx.smoking", "value": SMOKING[i % 3]})
            + "\n"
            for i in range(6)
        )
    )
    argv = ["compare", "--gold", str(gold), "--baseline", str(baseline), "--candidate"]
    argv.append(str(baseline))
    status, out, err = _run(argv)
    assert status == 0 and "Jane" not in out + err and '"names"' not in out
    status, out, err = _run([*argv, "--baseline-name", "v1", "--candidate-name", "v2"])
    assert status == 0 and '"names":{"baseline":"v1","candidate":"v2"}' in out
    status, out, err = _run([*argv, "--candidate-name", "v2", "--format", "markdown"])
    assert (
        status == 0 and "# chartscore comparison: v2 (candidate) against baseline (baseline)" in out
    )
    status, out, err = _run([*argv, "--baseline-name", "Jane Doe"])
    assert status == 2 and out == "" and "Jane" not in err
    assert "--baseline-name must be a plain name" in err


def test_the_cli_date_is_today_or_source_date_epoch_or_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = tmp_path / "comparison.json"
    saved.write_text(NAMED.to_json())
    argv = ["render", str(saved), "--format", "markdown"]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(86400 * 365))  # 1971-01-01
    assert "- **date**: 1971-01-01" in _run(argv)[1]
    assert "- **date**: 2024-02-29" in _run([*argv, "--date", "2024-02-29"])[1]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    assert _run(argv)[0] == 2
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    today = datetime.datetime.now(datetime.UTC).date()
    shown = _run(argv)[1]
    assert any(
        f"- **date**: {today + datetime.timedelta(days=d)}" in shown for d in (0, 1)
    )  # the clock may pass midnight between the two reads


def test_a_shared_comparison_never_carries_names() -> None:
    schema = json.loads(schema_bytes("shared_comparison"))
    assert "names" not in schema["properties"]
    assert "names" in json.loads(schema_bytes("comparison"))["properties"]
    assert not hasattr(SharedComparison, "names")


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- the zoomed axis


@pytest.mark.parametrize(
    ("axis", "numbers", "expected"),
    [
        # 85..97: 20 wide starting at 85 rounded down to 5 -> 80..100 (moved left to fit)
        ((0.0, 1.0), (0.85, 0.97), (0.8, 1.0)),
        # 61..79: 20 wide from 60 holds it
        ((0.0, 1.0), (0.61, 0.79), (0.6, 0.8)),
        # 55..92: 20 is too narrow; 40 wide from 50 (a multiple of 10) -> 50..90 misses 92;
        # so 80 wide from 40 (a multiple of 20) -> 40..120, moved left to 20..100
        ((0.0, 1.0), (0.55, 0.92), (0.2, 1.0)),
        # 3..17: 0..20
        ((0.0, 1.0), (0.03, 0.17), (0.0, 0.2)),
        # 5..95: nothing narrower than the whole axis
        ((0.0, 1.0), (0.05, 0.95), (0.0, 1.0)),
        # kappa 0.62..0.91: 40 wide from 0.6 -> 0.6..1.0
        ((-1.0, 1.0), (0.62, 0.91), (0.6, 1.0)),
        # kappa -0.3..0.5: 80 wide from -0.4 -> -0.4..0.4 misses 0.5; the whole axis
        ((-1.0, 1.0), (-0.3, 0.5), (-1.0, 1.0)),
    ],
)
def test_the_zoomed_axis_is_the_narrowest_round_range_that_holds_the_data(
    axis: tuple[float, float], numbers: tuple[float, float], expected: tuple[float, float]
) -> None:
    assert zoomed_axis(axis, numbers) == pytest.approx(expected)


def _plot(lower: float, value: float, upper: float, axis: tuple[float, float] = (0.0, 1.0)) -> Plot:
    estimate = Estimate("field", "a", "exact_agreement", Kind.RATE, 9, 10, value, lower, upper)
    return Plot("p", "p", "", "exact_agreement", axis, (PlotRow("a", estimate, "field"),))


def test_a_panel_zooms_says_so_under_its_axis_and_full_keeps_the_range() -> None:
    (zoomed,) = zoomed_plots([_plot(0.62, 0.9, 0.98)])
    assert zoomed.axis == (0.6, 1.0) and zoomed.zoomed
    svg = forest_svg(zoomed, element_id="t")
    assert "axis zoomed to fit, 60% to 100%, not the full range" in svg
    assert 'data-axis-low="0.6"' in svg
    # the point 0.9 sits three quarters along the 60..100 axis
    geometry = Geometry.fit([zoomed])
    circle = re.search(r'<circle class="point" cx="([0-9.]+)"', svg)
    assert circle is not None
    assert float(circle.group(1)) == pytest.approx(geometry.left + 0.75 * PLOT_WIDTH, abs=0.1)
    (whole,) = zoomed_plots([_plot(0.05, 0.5, 0.95)])
    assert whole.axis == (0.0, 1.0) and not whole.zoomed
    assert "zoomed" not in forest_svg(whole, element_id="t")
    difference = _plot(-0.01, 0.01, 0.03, (-0.05, 0.05))
    assert zoomed_plots([difference]) == (difference,)  # a difference axis is fitted already


def test_render_zooms_by_default_and_axis_full_keeps_0_to_100() -> None:
    document = report()
    zoomed = render(document, "html")
    full = render(document, "html", axis="full")
    assert "axis zoomed to fit" in zoomed and "axis zoomed" not in full
    lows = set(re.findall(r'data-axis-low="([-0-9.e]+)"', full))
    assert lows <= {"0.0", "-1.0", "-0.05", "-0.1", "-0.2", "-0.5"}
    for fmt in ("table", "markdown", "csv", "summary"):
        assert render(document, fmt) == render(document, fmt, axis="full")
    with pytest.raises(ChartscoreError):
        render(document, "html", axis="wide")


# --------------------------------------------------------------------------- shared counts


def test_the_shared_report_says_how_its_suppressed_count_relates_to_the_audits() -> None:
    _, shared = full_and_shared()
    numbers = dict(shared.numbers())
    suppressed = sum(1 for value in numbers.values() if value is None)
    # Derived by hand from the document: a metric's failures are hidden when either of its
    # counts is, a field's disagreed rows when agreed or rows is.
    derived = 0
    for _, _, part in shared.slices():
        results = list(part.metrics.values())
        for label in (part.labels or {}).values():
            results += list(label.metrics.values())
        derived += sum(1 for r in results if r.success_count is None or r.total_count is None)
        if part.uncertainty is not None:
            derived += part.uncertainty.agreed is None or part.uncertainty.rows is None
    assert suppressed == shared.disclosure.suppressed_count and derived > 0
    assert hidden_counts(shared) == (suppressed, derived)
    text = render(shared, "markdown")
    assert (
        f"{suppressed} of {len(numbers)} numbers suppressed, primary and complementary; the "
        f"audit also checks {derived} quantities derived from them (failures, disagreed rows): "
        f"{suppressed + derived} hidden numbers in all"
    ) in text
    audit_line = audit(shared).table().splitlines()[-1]
    assert audit_line == (
        f"audit PASS: min_cell 11, {suppressed + derived} hidden numbers checked ({suppressed} "
        f"suppressed in the document, {derived} derived from them), 0 failing"
    )
    # How many are primary stays inside: the rendering never gives the split.
    assert shared.primary_count is not None and f" {shared.primary_count} primary" not in text
