"""The layers and the privacy boundary, read from the import graph (docs/architecture.md).

Every module belongs to a layer by its folder (or, at the top level, by its name). A module
imports only from its own layer or lower; the layers below ``records`` never reach a value.
Deferred (function-level) and type-checking imports count like any other.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from helpers import examples

SRC = Path(__file__).resolve().parent.parent / "src" / "chartscore"

# Lowest first. A package's name covers every module inside it, so a new file is covered
# without editing this table; a new top-level module must be placed here by name.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # processes/: how a forked child dies with its parent, for every layer that forks.
    ("vocabulary", ("_version", "errors", "_format", "metrics", "processes")),
    ("statistics", ("stats",)),
    # The value-free documents and what they are made of: tally, canonical_json, _strict_json,
    # plugin_layout, report and comparison (see BUILDING_BLOCKS below), the shared report and
    # the shared comparison with their parts (shared_rule, shared_metric, shared_labels,
    # shared_figures), load_document and the release gates.
    ("documents", ("documents",)),
    # The disclosure engine (share and audit) and the ledger read every kind of document.
    ("disclosure/render", ("disclosure", "render", "ledger")),
    ("records", ("records",)),
    ("scoring", ("scoring",)),
    # Importers read exports and write gold, predictions and schemas: readers and writers.
    ("io", ("io", "importers")),
    ("workflows/engine", ("workflows", "engine")),
    ("cli", ("cli", "__main__", "__init__")),
)
# What the documents are made of, which import no document: the layer below the documents
# before they shared the documents/ folder.
BUILDING_BLOCKS = ("tally", "canonical_json", "_strict_json", "plugin_layout")
BOUNDARY = "records"  # the first layer that may hold a patient value


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def layer_of(module: str) -> int:
    parts = module.split(".")
    head = parts[1] if len(parts) > 1 else "__init__"
    for index, (_, members) in enumerate(LAYERS):
        if head in members:
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def chartscore_imports(tree: ast.AST) -> list[tuple[str, str | None]]:
    """Each (module, imported name or None) of an import of chartscore, anywhere in the tree."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.module, alias.name) for alias in node.names)
    return [(module, name) for module, name in found if module.split(".")[0] == "chartscore"]


@cache
def imports_of(module: str) -> frozenset[str]:
    tree = ast.parse(modules()[module].read_text(encoding="utf-8"))
    found: set[str] = set()
    for target, name in chartscore_imports(tree):
        # "from package import submodule" reaches the submodule; any other name reaches the
        # module that defines it.
        submodule = f"{target}.{name}"
        found.add(submodule if name is not None and submodule in modules() else target)
    return frozenset(found & modules().keys())


def reachable(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(imports_of(current))
    return seen


def test_every_module_is_in_a_layer() -> None:
    assert len(modules()) > 50
    for module in modules():
        layer_of(module)


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_stay_in_the_same_layer_or_lower(module: str) -> None:
    higher = {
        target: LAYERS[layer_of(target)][0]
        for target in imports_of(module)
        if layer_of(target) > layer_of(module)
    }
    assert higher == {}, f"{module} ({LAYERS[layer_of(module)][0]}) imports {higher}"


@pytest.mark.parametrize(
    "module", [m for m in sorted(modules()) if layer_of(m) < layer_of(f"chartscore.{BOUNDARY}")]
)
def test_value_free_modules_never_reach_a_value(module: str) -> None:
    boundary = layer_of(f"chartscore.{BOUNDARY}")
    assert {name for name in reachable(module) if layer_of(name) >= boundary} == set()


def strongly_connected(graph: dict[str, frozenset[str]]) -> list[set[str]]:
    """Tarjan's components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_there_is_no_import_cycle() -> None:
    graph = {module: imports_of(module) for module in modules()}
    assert strongly_connected(graph) == []


def test_the_cycle_finder_can_fail() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}
    assert strongly_connected(graph) == [{"a", "b", "c"}]


def private_names_used(module: str) -> set[str]:
    return private_names_in(modules()[module].read_text(encoding="utf-8"))


def private_names_in(source: str) -> set[str]:
    """Underscore names a module's source takes from another chartscore module."""
    tree = ast.parse(source)
    used: set[str] = set()
    bound_modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if not node.module.startswith("chartscore"):
                    continue
                if f"{node.module}.{alias.name}" in modules():
                    bound_modules.add(alias.asname or alias.name)
                elif is_private(alias.name):
                    used.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("chartscore") and alias.asname:
                    bound_modules.add(alias.asname)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound_modules
            and is_private(node.attr)
        ):
            used.add(f"{node.value.id}.{node.attr}")
    return used


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("module", sorted(modules()))
def test_no_module_takes_another_modules_private_names(module: str) -> None:
    assert private_names_used(module) == set()


def test_the_private_name_check_can_fail() -> None:
    source = (
        "from chartscore.stats import _hidden, wilson\n"
        "from chartscore import stats\n"
        "import chartscore.documents.tally as tally\n"
        "stats._cache, stats.wilson, tally._rows, tally.__doc__\n"
    )
    assert private_names_in(source) == {"chartscore.stats._hidden", "stats._cache", "tally._rows"}


def test_the_graph_walker_can_fail() -> None:
    # The scorer does reach the value-holding modules; if this stopped being true the
    # walker above would be vacuous.
    assert "chartscore.records.model" in reachable("chartscore.scoring.scorer")
    # "from chartscore import X" of a name defined in chartscore/__init__ reaches the whole
    # public API, values included.
    assert "chartscore.records.model" in reachable("chartscore")
    assert "chartscore.documents._strict_json" in imports_of("chartscore.documents.report")


@pytest.mark.parametrize("block", BUILDING_BLOCKS)
def test_the_documents_building_blocks_import_no_document(block: str) -> None:
    module = f"chartscore.documents.{block}"
    assert module in modules()
    blocks = {f"chartscore.documents.{name}" for name in BUILDING_BLOCKS}
    reached = {
        target
        for target in imports_of(module)
        if layer_of(target) >= layer_of(module) and target not in blocks
    }
    assert reached == set(), module


def test_io_reads_and_writes_only() -> None:
    for module in modules():
        if module.startswith(("chartscore.io", "chartscore.importers")):
            reached = {
                name
                for name in imports_of(module)
                if name.startswith(("chartscore.scoring", "chartscore.workflows"))
            }
            assert reached == set(), module


def test_the_command_line_files_are_short() -> None:
    lengths = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in (SRC / "cli").glob("*.py")
    }
    assert max(lengths.values()) <= 400, lengths


def test_no_source_file_is_over_1200_lines() -> None:
    # Issue 35's bound: a module past it holds more than one concept (split it by one).
    lengths = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SRC.rglob("*.py")
    }
    assert len(lengths) > 100  # the whole package was read
    assert {name: n for name, n in lengths.items() if n > 1200} == {}


def test_errors_checks_field_ids_exactly_as_the_rules_do() -> None:
    # errors repeats the field-id pattern rather than importing _rules (whose caches
    # hold input digests), so that value-free modules can raise coded errors.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from chartscore import _format, errors
    from chartscore.records import _rules

    assert errors._FIELD_ID.pattern == _format.FIELD_ID_PATTERN

    @settings(max_examples=examples(300))
    @given(st.from_regex(_format.FIELD_ID_PATTERN, fullmatch=True) | st.text(max_size=20))
    def agree(text: str) -> None:
        assert errors.valid_field_id(text) == _rules.is_field_id(text)

    agree()
    assert not errors.valid_field_id(None)
    assert not errors.valid_field_id(b"dx.onset")


@pytest.mark.parametrize(
    ("module", "allowed"),
    [
        ("stats.paired", {"stats"}),
        (
            "documents.comparison",
            {
                "tally",
                "stats",
                "report",
                "canonical_json",
                "errors",
                "_version",
                "_strict_json",
                "_shell",  # the one reader of a document's shell
                "plugin_layout",
                "metrics",  # the metric catalog: which metrics are paired, and their trials
                "display",  # the hooks of to_pandas() and _repr_html_(), filled by render/
                "run",  # each system's run-cost section (documents/run.py)
                "system_names",  # what the comparison calls its systems (plain labels)
            },
        ),
        # documents: to take a document by its exact type (Report, SharedReport, Comparison).
        (
            "documents.gates",
            {
                "comparison",
                "documents",
                "report",
                "tally",
                # clustered intervals, the widest Wilson interval over a shared report's
                # ranges, Clopper-Pearson (--gate-interval exact), and the pairs below which
                # a coefficient's interval is not read
                "stats",
                "errors",
                "plugin_layout",
                "shared_comparison",  # a shared comparison: its reader and its difference bound
                "metrics",  # the metric catalog: which metrics a gate may name
                "agreement",  # an agreement document, taken by its exact type
                "agreement_gates",  # what a gate reads in it
                "_gate_errors",  # gate_metric_missing, worded once for every document
            },
        ),
        (
            "documents.agreement_gates",
            {"agreement", "errors", "stats", "_gate_errors"},
        ),
    ],
)
def test_comparison_modules_import_only_what_they_may(module: str, allowed: set[str]) -> None:
    direct = {short_name(name) for name in imports_of(f"chartscore.{module}")}
    assert direct <= allowed


def short_name(module: str) -> str:
    """A module's folder, or its own name inside documents/ ("documents" for the package)."""
    parts = module.split(".")
    return parts[2] if parts[1] == "documents" and len(parts) > 2 else parts[1]


def test_moved_modules_keep_their_old_paths() -> None:
    # Old imports, docs and pickles name modules by their old paths: each is the same module
    # object as the new one, an attribute of its old parent package, and no file of its own.
    import importlib
    import subprocess
    import sys

    import chartscore

    moved = chartscore._MOVED_MODULES
    assert moved["chartscore.disclosure.shared"] == "chartscore.documents.shared_report"
    for old, new in moved.items():
        module = importlib.import_module(new)
        assert importlib.import_module(old) is module, old
        parent, _, leaf = old.rpartition(".")
        assert getattr(importlib.import_module(parent), leaf) is module, old
        assert not (SRC.parent / f"{old.replace('.', '/')}.py").exists(), old
    code = (
        "import chartscore.disclosure.shared as m, chartscore.disclosure\n"
        "from chartscore.disclosure.figures import FieldFigures\n"
        "from chartscore.documents.shared_report import SharedReport\n"
        "assert m.SharedReport is SharedReport is chartscore.disclosure.shared.SharedReport\n"
        "assert chartscore.disclosure.figures.FieldFigures is FieldFigures\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=SRC.parent)
