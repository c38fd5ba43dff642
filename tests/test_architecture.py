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
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {item for item in found if item.startswith("chartscore") and module_exists(item)}


def module_exists(name: str) -> bool:
    path = module_path(name)
    return path.exists()


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


@pytest.mark.parametrize("module", VALUE_FREE)
def test_value_free_modules_do_not_import_values(module: str) -> None:
    reached = reachable(f"chartscore.{module}")
    forbidden = {f"chartscore.{name}" for name in VALUE_HOLDING}
    leaks = {
        name for name in reached if any(name == f or name.startswith(f + ".") for f in forbidden)
    }
    assert leaks == set()


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
            {"tally", "stats", "report", "canonical_json", "paired", "errors", "_version"},
        ),
        ("gates", {"comparison", "report", "tally", "errors"}),
    ],
)
def test_comparison_modules_import_only_what_they_may(module: str, allowed: set[str]) -> None:
    direct = {name.split(".")[1] for name in imports_of(f"chartscore.{module}")}
    assert direct <= allowed
