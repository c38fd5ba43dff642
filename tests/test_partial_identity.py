"""Partials counted once (docs/partials.md, "Counted once"): each partial carries a random id,
and ``merge`` and ``share --partials`` refuse the same partial twice, whatever its file names,
links, or a merged partial that holds it. The id is inside-only: no message, stream or report
shows it, and nothing computed from partials depends on it."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chartscore import ChartscoreError, ErrorCode
from chartscore.cli import main
from chartscore.scoring.partial_document import partial_json, read_partial
from chartscore.workflows.partials import merge_partials, merged_partial_text
from test_partials import three_sites

from helpers import examples

SAVED = Path(__file__).resolve().parent / "data" / "partials"
IDS = st.text("0123456789abcdef", min_size=32, max_size=32)
SCIPY = importlib.util.find_spec("scipy") is not None  # share and audit need it


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(args), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def ids_of(path: Path) -> list[str]:
    ids: list[str] = json.loads(path.read_text(encoding="utf-8"))["identity"]["ids"]
    return ids


def without_identity(text: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(text)
    document.pop("identity")
    return document


def as_format_2(text: str) -> str:
    """The partial as an older build wrote it: format 2, with no identity.

    Before ``evidence_provided`` (format 4) a row class had no EVIDENCED bit (bit 18): the
    bits above it sat one lower, and the clustered sums had no ``evidence_provided``.
    """
    document: dict[str, Any] = without_identity(text)
    document["format_version"] = 2
    for counts in document["fields"].values():
        counts["outcomes"] = _old_rows(counts["outcomes"])
    cases = document["cases"]
    cases["by_field"] = {field_id: _old_rows(rows) for field_id, rows in cases["by_field"].items()}
    cases["groups"] = [[*group[:-1], _old_bits(group[-1])] for group in cases["groups"]]
    for sums in document["clusters"].values():
        sums.pop("evidence_provided", None)
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def _old_rows(rows: list[list[Any]]) -> list[list[Any]]:
    # [[bits, count], ...] in the old layout: classes that differed by EVIDENCED alone add up.
    added: dict[int, int] = {}
    for bits, count in rows:
        old = int(_old_bits(bits), 16)
        added[old] = added.get(old, 0) + count
    return [[format(bits, "x"), count] for bits, count in sorted(added.items())]


def _old_bits(bits: str) -> str:
    value = int(bits, 16)
    return format(value & (1 << 18) - 1 | (value >> 19) << 18, "x")


def without_evidence_provided(report_json: str) -> dict[str, Any]:
    """A report's JSON without ``evidence_provided``: what a merge with an older partial gives."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "evidence_provided"}
        return node

    return strip(json.loads(report_json))  # type: ignore[no-any-return]


@pytest.fixture
def sites(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Three sites' partials, in tmp/sites/site-{a,b,c}.partial."""
    folder = tmp_path / "sites"
    folder.mkdir()
    three_sites(folder)
    return folder, sorted(folder.glob("site-*.partial"))


@pytest.fixture
def old_sites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Path]]:
    """Three sites' partials whose answers carry no evidence chain: an older build's format
    holds them exactly (it could not say which unsupported answers carried evidence)."""
    import test_partials

    plain = test_partials.cohort

    def without_chains(
        marker: str = "c",
    ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        gold, answers = plain(marker)
        return gold, [{k: v for k, v in a.items() if k != "evidence_chain"} for a in answers]

    monkeypatch.setattr(test_partials, "cohort", without_chains)
    folder = tmp_path / "old-sites"
    folder.mkdir()
    three_sites(folder)
    return folder, sorted(folder.glob("site-*.partial"))


def assert_refused_quietly(status: int, out: str, err: str, *secrets: str) -> None:
    """Refused as ``duplicate_partial`` in one line naming no path and no id."""
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and "duplicate_partial" in err
    for secret in secrets:
        assert secret not in err


# --- the same partial twice ----------------------------------------------------------------------


@pytest.mark.parametrize("how", ["copy", "hard link", "symbolic link"])
@pytest.mark.parametrize("command", ["merge", "share"])
def test_the_same_partial_under_another_name_is_refused(
    sites: tuple[Path, list[Path]], how: str, command: str
) -> None:
    if command == "share":
        pytest.importorskip("scipy")
    folder, paths = sites
    twin = folder / "site-zq-canary-name.partial"
    {"copy": shutil.copyfile, "hard link": os.link, "symbolic link": os.symlink}[how](
        paths[0], twin
    )
    pattern = str(folder / "site-*.partial")
    status, out, err = run(command, "--partials", pattern)
    assert_refused_quietly(status, out, err, "zq-canary", str(folder), *ids_of(paths[0]))
    twin.unlink()  # and without the twin, the same command works
    assert run(command, "--partials", pattern)[0] == 0


def test_the_library_refuses_the_same_text_twice(sites: tuple[Path, list[Path]]) -> None:
    _, paths = sites
    text = paths[1].read_text(encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([paths[0].read_text(encoding="utf-8"), text, text])
    assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    assert not any(i in str(caught.value) or i in repr(caught.value) for i in ids_of(paths[1]))


def test_share_partials_in_python_refuses_the_same_text_twice(
    sites: tuple[Path, list[Path]],
) -> None:
    pytest.importorskip("scipy")
    from chartscore.workflows.share import share_partials

    text = sites[1][0].read_text(encoding="utf-8")
    with pytest.raises(ChartscoreError) as caught:
        share_partials([text, text])
    assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL


def test_the_same_id_in_edited_partials_is_still_the_same_partial(
    sites: tuple[Path, list[Path]],
) -> None:
    # A site's partial with another site's id (edited by hand, or a bug) is refused: the id,
    # not the file or the counts, is what makes two partials two.
    _, paths = sites
    first, second = (path.read_text(encoding="utf-8") for path in paths[:2])
    document = json.loads(second)
    document["identity"]["ids"] = ids_of(paths[0])
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([first, json.dumps(document)])
    assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL


# --- merged partials -----------------------------------------------------------------------------


def test_a_merged_partial_with_one_of_its_constituents_is_refused(
    sites: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    folder, paths = sites
    region = tmp_path / "region"
    region.mkdir()
    merged = region / "north.partial"
    pattern = str(folder / "site-[ab].partial")
    status, report, err = run("merge", "--partials", pattern, "--partial-out", str(merged))
    assert status == 0 and err == ""
    assert ids_of(merged) == sorted(ids_of(paths[0]) + ids_of(paths[1]))
    assert json.loads(merged.read_text(encoding="utf-8"))["identity"]["cases"] == 24
    # The merged partial merges as its constituents do ...
    assert run("merge", "--partials", str(merged))[1] == report
    shutil.copyfile(paths[2], region / "site-c.partial")
    everything = run("merge", "--partials", str(folder / "site-*.partial"))[1]
    assert run("merge", "--partials", str(region / "*.partial"))[1] == everything
    # ... and with one of them again it is refused, by merge and share.
    shutil.copyfile(paths[1], region / "site-b.partial")
    for command in ["merge", "share"] if SCIPY else ["merge"]:
        status, out, err = run(command, "--partials", str(region / "*.partial"))
        assert_refused_quietly(status, out, err, str(region), *ids_of(merged))


def test_two_merged_partials_that_share_a_site_are_refused(
    sites: tuple[Path, list[Path]],
) -> None:
    _, paths = sites
    a, b, c = (path.read_text(encoding="utf-8") for path in paths)
    north, south = merged_partial_text([a, b]), merged_partial_text([b, c])
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([north, south])
    assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL
    assert merge_partials([north, c]).to_json() == merge_partials([a, b, c]).to_json()


def test_merging_one_partial_gives_it_back(sites: tuple[Path, list[Path]]) -> None:
    text = sites[1][0].read_text(encoding="utf-8")
    assert merged_partial_text([text]) == text.removesuffix("\n")


# --- partials older than format 3 ----------------------------------------------------------------


def test_older_partials_are_known_by_their_bytes(old_sites: tuple[Path, list[Path]]) -> None:
    _, paths = old_sites
    a, b, c = (path.read_text(encoding="utf-8") for path in paths)
    old_a, old_bc = as_format_2(a), as_format_2(merged_partial_text([b, c]))
    merged = json.loads(merge_partials([old_a, old_bc]).to_json())
    assert merged == without_evidence_provided(merge_partials([a, b, c]).to_json())
    for texts in ([old_a, old_a], [old_a, old_bc, old_a.encode("utf-8")]):
        with pytest.raises(ChartscoreError) as caught:
            merge_partials(texts)
        assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL
    # The caveat (docs/partials.md): sites a and b have the same counts in every cell, so
    # their older partials are the same bytes and cannot be told apart; with ids they can.
    assert as_format_2(b) == old_a
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([old_a, as_format_2(b)])
    assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL
    merge_partials([a, b])
    saved = (SAVED / "demo-site-0.v1.partial").read_text(encoding="utf-8")
    merge_partials([saved])
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([saved, saved])
    assert caught.value.code is ErrorCode.DUPLICATE_PARTIAL
    # An older partial has no id to pass on: no merged partial can hold it.
    with pytest.raises(ChartscoreError) as caught:
        merged_partial_text([old_a, c])
    assert caught.value.code is ErrorCode.PARTIALS_DIFFER


def test_an_older_partial_in_a_folder_twice_is_refused(
    old_sites: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, paths = old_sites
    old = tmp_path / "old"
    old.mkdir()
    (old / "one.partial").write_text(as_format_2(paths[0].read_text(encoding="utf-8")))
    os.symlink(old / "one.partial", old / "two.partial")
    status, out, err = run("merge", "--partials", str(old / "*.partial"))
    assert_refused_quietly(status, out, err, str(old))
    status, out, err = run(
        "merge", "--partials", str(old / "one.partial"), "--partial-out", str(tmp_path / "m")
    )
    assert status == 1 and "partials_differ" in err and not (tmp_path / "m").exists()


# --- the identity's form -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.pop("identity"),
        lambda d: d["identity"].update(cases=d["identity"]["cases"] + 1),
        lambda d: d["identity"].update(cases=-1),
        lambda d: d["identity"].update(ids=[]),
        lambda d: d["identity"].update(ids=d["identity"]["ids"] * 2),
        lambda d: d["identity"].update(ids=["0" * 32, "f" * 32][::-1]),
        lambda d: d["identity"].update(ids=["A" * 32]),
        lambda d: d["identity"].update(ids=["0" * 31]),
        lambda d: d["identity"].update(ids="0" * 32),
        lambda d: d["identity"].update(extra=1),
        lambda d: d.update(format_version=2),  # format 2 had no identity
    ],
)
def test_a_malformed_identity_is_refused(sites: tuple[Path, list[Path]], change: object) -> None:
    document = json.loads(sites[1][0].read_text(encoding="utf-8"))
    change(document)  # type: ignore[operator]
    with pytest.raises(ChartscoreError) as caught:
        merge_partials([json.dumps(document)])
    assert caught.value.code is ErrorCode.INVALID_PARTIAL


def test_the_identity_counts_the_sites_cases(sites: tuple[Path, list[Path]]) -> None:
    for path in sites[1]:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["identity"]["cases"] == 12  # each site of three_sites has 12 cases
        assert len(document["identity"]["ids"]) == 1


# --- determinism: the ids change every run, nothing computed from partials does ------------------


def test_two_runs_write_partials_that_differ_in_their_ids_only(tmp_path: Path) -> None:
    # Compared with the identity taken out: the rest of the partial is byte for byte the same.
    first, second = tmp_path / "1", tmp_path / "2"
    first.mkdir()
    second.mkdir()
    three_sites(first)
    three_sites(second)
    for one, two in zip(
        sorted(first.glob("*.partial")), sorted(second.glob("*.partial")), strict=True
    ):
        a, b = one.read_text(encoding="utf-8"), two.read_text(encoding="utf-8")
        assert a != b and ids_of(one) != ids_of(two)
        assert without_identity(a) == without_identity(b)
        assert a.replace(ids_of(one)[0], ids_of(two)[0]) == b


@settings(max_examples=examples(20), deadline=None)
@given(st.lists(IDS, min_size=3, max_size=3, unique=True), st.permutations(range(3)))
def test_merged_and_shared_reports_do_not_depend_on_the_ids(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str], order: list[int]
) -> None:
    folder = tmp_path_factory.mktemp("ids")
    three_sites(folder)
    texts = [path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.partial"))]
    renamed = []
    for text, new in zip(texts, ids, strict=True):
        site = read_partial(text)
        renamed.append(
            partial_json(
                site.partial, site.schema, extra_predictions=site.extra_predictions, ids=[new]
            )
        )
    shuffled = [renamed[i] for i in order]
    merged = merge_partials(shuffled).to_json()
    assert merged == merge_partials(texts).to_json()
    assert not any(i in merged for i in ids)
    north = merged_partial_text(shuffled[:2])
    assert merge_partials([north, shuffled[2]]).to_json() == merged
    if not SCIPY:
        return
    from chartscore.workflows.share import share_partials

    shared = share_partials(shuffled).to_json()
    assert shared == share_partials(texts).to_json()
    assert not any(i in shared for i in ids)


def test_no_id_reaches_a_stream_or_report(sites: tuple[Path, list[Path]], tmp_path: Path) -> None:
    folder, paths = sites
    ids = [i for path in paths for i in ids_of(path)]
    pattern = str(folder / "site-*.partial")
    outputs = [run("merge", "--partials", pattern, "--format", fmt) for fmt in ("json", "table")]
    outputs.append(run("merge", "--partials", pattern, "--partial-out", str(tmp_path / "m")))
    if SCIPY:
        outputs.append(run("share", "--partials", pattern))
        shared = tmp_path / "shared.json"
        outputs.append(run("share", "--partials", pattern, "--out", str(shared)))
        outputs.append(run("audit", str(shared)))
        outputs.append((0, shared.read_text(encoding="utf-8"), ""))
    for status, out, err in outputs:
        assert status == 0
        assert not any(i in out or i in err for i in ids)
