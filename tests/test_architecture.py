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
    "disclosure",
    "disclosure.rule",
    "disclosure.shared",
    "disclosure.model",
    "disclosure.ranges",
    "disclosure.audit",
    "disclosure.suppress",
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
