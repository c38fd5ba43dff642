"""Privacy canaries for sites' partial tallies (docs/partials.md, docs/privacy.md).

Markers (tests/test_privacy.py's :class:`Canary`) are planted in every slot of two
sites' gold and prediction files (case ids, values of every type, digests, offsets,
evidence), in the schema's options and in every path. Each site writes its partial with
``score --partial-out``; ``merge`` and ``share --partials`` read them, and a partial
edited to hold a marker is refused. Searched: every partial's bytes (which may hold the
schema's own option strings, as the schema file does, and nothing else of the markers),
the merged report (declared labels only), stdout and stderr of every command.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from test_privacy import (
    NO_SHRINK,
    Canary,
    assert_clean_bytes,
    assert_clean_streams,
    canaries,
    dataset,
    declared_labels,
    jsonl,
    marker_directory,
    run_in_process,
    schema_document,
)

from helpers import examples

CANARY_SETTINGS = settings(
    max_examples=examples(8),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    phases=NO_SHRINK,
)


def schema_strings(c: Canary) -> set[str]:
    """The schema's option strings (levels; choices, normalized): developer-authored."""
    fields = schema_document(c)["fields"]
    found: set[str] = set()
    for spec in fields.values():  # type: ignore[union-attr]
        for key in ("choices", "levels"):
            found.update(str(option) for option in spec.get(key, ()))
    return found | declared_labels(c)


def write_sites(c: Canary, base: Path) -> tuple[Path, list[Path]]:
    """Two sites' files (cases split by position), their partials; the schema file."""
    gold_rows, prediction_rows = dataset(c)
    cases = sorted({str(row["case_id"]) for row in gold_rows})
    site_of = {case: index % 2 for index, case in enumerate(cases)}
    schema = base / f"schema-{c.marker}.json"
    schema.write_text(json.dumps(schema_document(c)), encoding="utf-8")
    partials = []
    for site in (0, 1):
        gold = base / f"gold-{site}-{c.marker}.jsonl"
        predictions = base / f"predictions-{site}-{c.marker}.jsonl"
        gold.write_text(jsonl([r for r in gold_rows if site_of[r["case_id"]] == site]), "utf-8")  # type: ignore[index]
        mine = [r for r in prediction_rows if site_of.get(r["case_id"]) == site]  # type: ignore[arg-type]
        predictions.write_text(jsonl(mine), "utf-8")
        partial = base / f"site-{site}-{c.marker}.partial"
        argv = ["score", "--gold", str(gold), "--predictions", str(predictions)]
        argv += ["--schema", str(schema), "--partial-out", str(partial), "--out", str(base / "r")]
        status, out, err = run_in_process(argv)
        assert status == 0, err
        assert_clean_streams(out, err, c, "score --partial-out")
        partials.append(partial)
    return schema, partials


@CANARY_SETTINGS
@given(canaries)
def test_partials_and_their_merge_hold_no_value_id_or_path(c: Canary) -> None:
    with marker_directory(c) as base:
        _, partials = write_sites(c, base)
        for partial in partials:
            data = partial.read_bytes()
            assert_clean_bytes(data, c, "a partial", schema_strings(c))
            assert str(base).encode() not in data
        pattern = str(base / "site-*.partial")
        status, out, err = run_in_process(["merge", "--partials", pattern])
        assert status == 0, err
        assert_clean_streams(out, err, c, "merge", declared_labels(c))
        assert str(base) not in out + err
        # A partial edited to carry a marker: refused, and the marker is not echoed.
        document = json.loads(partials[0].read_text(encoding="utf-8"))
        document["fields"][sorted(document["fields"])[0]]["answerable"] = c.marker
        partials[0].write_text(json.dumps(document), encoding="utf-8")
        status, out, err = run_in_process(["merge", "--partials", pattern])
        assert (status, out) == (1, "") and err.startswith("chartscore: error: invalid_partial")
        assert_clean_streams(out, err, c, "merge of an edited partial")
        assert str(base) not in err


@settings(CANARY_SETTINGS, max_examples=1)
@given(canaries)
def test_sharing_partials_holds_nothing_either(c: Canary) -> None:
    with marker_directory(c) as base:  # sharing solves integer programs: one example
        _, _ = write_sites(c, base)
        argv = ["share", "--partials", str(base / "site-*.partial"), "--min-cell", "2"]
        status, out, err = run_in_process(argv)
        assert status == 0, err
        assert_clean_streams(out, err, c, "share --partials", declared_labels(c))
        assert str(base) not in out + err
