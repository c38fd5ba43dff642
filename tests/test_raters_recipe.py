"""docs/raters.md's recipe, run as written on the Double Data Entry fixture (issue 37, item 2).

The page's commands are read from the page itself, run in a folder holding the fixture under the
names the page uses, and their outputs checked against what the page says: the ceiling, and a
non-inferiority gate whose verdict and exit status follow the comparison's clustered bound.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import tomllib
from pathlib import Path

from chartscore.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "raters.md").read_text(encoding="utf-8")
DATA = Path(__file__).resolve().parent / "data" / "importers"


def example(name: str) -> str:
    match = re.search(rf"<!-- example: raters recipe {name} -->\n```\w+\n(.*?)```", PAGE, re.S)
    assert match is not None, name
    return match.group(1)


def run(name: str, where: Path) -> tuple[int, str]:
    argv = shlex.split(example(name).replace("\\\n", " "))
    assert argv[0] == "chartscore"
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(where)
    try:
        status = main(argv[1:], stdout=out, stderr=err)
    finally:
        os.chdir(here)
    assert out.getvalue() == ""  # every output goes to a named file
    return status, err.getvalue()


def model_from(rater: Path, target: Path) -> None:
    """The page's model: person 1's answers, abstaining on NYHA class."""
    rows = [json.loads(line) for line in rater.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["field_id"] == "nyha":
            row["value"] = None
    target.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_the_recipe_gives_the_ceiling_and_a_gateable_verdict(tmp_path: Path) -> None:
    shutil.copyfile(DATA / "redcap_dde_dictionary.csv", tmp_path / "dictionary.csv")
    shutil.copyfile(DATA / "redcap_dde_records.csv", tmp_path / "dde.csv")
    assert run("import", tmp_path)[0] == 0
    assert run("agree", tmp_path)[0] == 0
    agreement = json.loads((tmp_path / "agreement.json").read_text(encoding="utf-8"))
    ceiling = agreement["gold"]["ceiling"]
    # As the page says: person 1 agrees with gold on 65 of 67 rows, and is the median of two.
    assert (ceiling["best"]["rater"], ceiling["median"]["rater"]) == ("rater1", "rater1")
    assert (ceiling["best"]["success_count"], ceiling["best"]["total_count"]) == (65, 67)
    low, high = ceiling["best"]["interval"]
    assert (round(low, 3), round(high, 3)) == (0.898, 0.992)
    # Person 2 is below person 1 against the same gold.
    second = agreement["gold"]["raters"]["rater2"]["normalized_agreement"]
    assert second["total_count"] == 67 and second["success_count"] < 65

    model_from(tmp_path / "rater1.jsonl", tmp_path / "model.jsonl")
    (tmp_path / "noninferiority.toml").write_text(example("gates"), encoding="utf-8")
    status, err = run("compare", tmp_path)
    comparison = json.loads((tmp_path / "comparison.json").read_text(encoding="utf-8"))
    difference = comparison["overall"]["normalized_agreement"]["difference"]
    bound = difference["clustered_interval"][0]
    margin = tomllib.loads(example("gates"))["gate"][0]["min_difference_lower"]
    assert round(bound, 2) == -0.27  # the page's figure
    assert status == (0 if bound >= margin else 3) == 3
    assert "FAIL" in err and f"{bound:.4f}" in err
    # The same comparison, gated at a margin its bound clears, passes (exit 0).
    loose = example("gates").replace(str(margin), "-0.30")
    (tmp_path / "noninferiority.toml").write_text(loose, encoding="utf-8")
    (tmp_path / "comparison.json").unlink()
    status, err = run("compare", tmp_path)
    assert status == 0 and "pass" in err
