"""The privacy boundary in the import graph: value-free modules never reach values."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "chartscore"
VALUE_FREE = (
    "tally",
    "stats",
    "report",
    "canonical_json",
    "render",
    "errors",
    "paired",
    "comparison",
    "gates",
    "_document",
    "documents",
    "_format",
    "_version",
    "disclosure",
    "disclosure.rule",
    "disclosure.shared",
    "disclosure.model",
    "disclosure.ranges",
    "disclosure.attack",
    "disclosure.suppress",
    "disclosure.solver",
)
VALUE_HOLDING = (
    "model",
    "evidence",
    "normalize",
    "agreement",
    "scoring",
    "schema",
    "io",
    "_rules",
    "demo",
    "cli",
    "engine",
    "partial",
    "casecount",
    "pairing",
    "outcomes",
)


def module_path(name: str) -> Path:
    parts = name.split(".")[1:]
    package = SRC.joinpath(*parts)
    return package / "__init__.py" if package.is_dir() else package.with_suffix(".py")


def imports_of(name: str) -> set[str]:
    tree = ast.parse(module_path(name).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            # "from package import submodule" reaches the submodule; any other name
            # reaches the module that defines it.
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if module_exists(submodule) else node.module)
    return {item for item in found if item.startswith("chartscore") and module_exists(item)}


def module_exists(name: str) -> bool:
    return name.startswith("chartscore") and module_path(name).exists()


def reachable(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(imports_of(current))
    return seen


def value_holding_reached(module: str) -> set[str]:
    forbidden = {f"chartscore.{name}" for name in VALUE_HOLDING}
    return {
        name
        for name in reachable(f"chartscore.{module}")
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    }


@pytest.mark.parametrize("module", VALUE_FREE)
def test_value_free_modules_do_not_import_values(module: str) -> None:
    assert value_holding_reached(module) == set()


def render_modules() -> list[str]:
    return sorted(f"render.{path.stem}" for path in (SRC / "render").glob("*.py"))


@pytest.mark.parametrize("module", render_modules())
def test_every_renderer_is_value_free(module: str) -> None:
    # Each renderer module on its own, not only those the package's __init__ imports.
    assert value_holding_reached(module) == set()


def test_the_render_package_has_its_modules() -> None:
    assert {
        "render.__init__",
        "render.table",
        "render.markdown",
        "render.csv",
        "render.html",
    } <= set(render_modules())


def test_from_import_of_the_package_reaches_everything() -> None:
    # "from chartscore import X" of a name defined in chartscore/__init__ reaches the
    # whole public API, values included: the walker must follow it.
    assert "chartscore.model" in reachable("chartscore.demo")
    assert "chartscore._document" in imports_of("chartscore.report")


def test_the_graph_walker_can_fail() -> None:
    # The scorer does reach the value-holding modules; if this stopped being true the
    # walker above would be vacuous.
    assert "chartscore.model" in reachable("chartscore.scoring")


def test_errors_checks_field_ids_exactly_as_the_rules_do() -> None:
    # errors repeats the field-id pattern rather than importing _rules (whose caches
    # hold input digests), so that value-free modules can raise coded errors.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from chartscore import _format, _rules, errors

    assert errors._FIELD_ID.pattern == _format.FIELD_ID_PATTERN

    @settings(max_examples=300)
    @given(st.from_regex(_format.FIELD_ID_PATTERN, fullmatch=True) | st.text(max_size=20))
    def agree(text: str) -> None:
        assert errors.valid_field_id(text) == _rules.is_field_id(text)

    agree()
    assert not errors.valid_field_id(None)
    assert not errors.valid_field_id(b"dx.onset")


@pytest.mark.parametrize(
    ("module", "allowed"),
    [
        ("paired", {"stats"}),
        (
            "comparison",
            {
                "tally",
                "stats",
                "report",
                "canonical_json",
                "paired",
                "errors",
                "_version",
                "_document",
            },
        ),
        # documents: to take a document by its exact type (Report, SharedReport, Comparison).
        ("gates", {"comparison", "documents", "report", "tally", "errors"}),
    ],
)
def test_comparison_modules_import_only_what_they_may(module: str, allowed: set[str]) -> None:
    direct = {name.split(".")[1] for name in imports_of(f"chartscore.{module}")}
    assert direct <= allowed
