"""Reports a committee understands: names, labels and axes people can read (issue 38, item 5)."""

from __future__ import annotations

import chartscore
from chartscore import Comparison, GoldField, Prediction, Report
from chartscore.render import render

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
    assert any("(weighted): weighted kappa (quadratic)" in line for line in lines)


def test_the_report_plot_names_the_weighted_kappa() -> None:
    html = render(report(), "html")
    panel = html.split('id="plot-kappa"', 1)[1].split("</figure>", 1)[0]
    assert "hf.<wbr>nyha: weighted kappa (quadratic)" in panel or (
        "hf.nyha: weighted kappa (quadratic)" in panel
    )
    assert "hx.smoking: weighted" not in panel
