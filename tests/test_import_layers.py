"""rag_core's imports point down: a module imports its own package and the layers below it,
never a layer above nor a neighbour in its own layer; and no modules import each other in a circle,
inside a package either.

Every module of ``rag_core``, the evaluation wing (``rag_core.evals``) included, is read with ``ast``,
and every import of another ``rag_core`` module is checked: at module level, under
``TYPE_CHECKING`` and inside functions alike. An import inside a function is how a cycle is
usually dodged, so it is held to the same rule: the only exceptions are the ones ``EXCEPTIONS``
names, each with its reason.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rag_core"

# Bottom to top. Each entry names a module or a package (with everything in it); the packages and
# modules of one layer are neighbours that do not import each other. ``rag_core`` is the package's
# own ``__init__`` (the public names), not everything under it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("text and files", ("rag_core.text", "rag_core._files")),
    ("messages", ("rag_core.messages",)),
    ("run results", ("rag_core.run_output",)),
    ("errors", ("rag_core.errors",)),
    ("optional dependencies", ("rag_core._optional",)),
    ("progress", ("rag_core.progress",)),
    ("documents", ("rag_core.document",)),
    ("provider clients", ("rag_core.providers",)),
    ("embedders and rerankers", ("rag_core.embedder", "rag_core.reranker")),
    ("stores", ("rag_core.vectordb", "rag_core.db")),
    ("knowledge", ("rag_core.knowledge",)),
    ("tools", ("rag_core.tools",)),
    ("models", ("rag_core.models",)),
    ("agent", ("rag_core.agent",)),
    ("public names", ("rag_core",)),
    # the evaluation wing, bottom to top (docs/development.md draws it)
    ("the wing's own name", ("rag_core.evals",)),
    ("the wing's shared helpers", ("rag_core.evals.common", "rag_core.evals.offline", "rag_core.evals.postgres",
                                   "rag_core.evals.secret_rules")),
    ("the credential detector", ("rag_core.evals.credentials",)),
    ("checked atomic writes", ("rag_core.evals.atomic",)),
    ("run records", ("rag_core.evals.runs",)),
    ("the HTML report", ("rag_core.evals.report",)),
    ("wire reading and the emulator", ("rag_core.evals.wire", "rag_core.evals.emulator")),
    ("record and replay", ("rag_core.evals.recording",)),
    ("golden cases and retrieval suites", ("rag_core.evals.golden", "rag_core.evals.retrieval")),
    ("files no case uses", ("rag_core.evals.orphans",)),
    ("the pytest plugins and rag-core init", ("rag_core.evals.plugins", "rag_core.evals.scaffold")),
    ("command line", ("rag_core.cli",)),
    ("entry point", ("rag_core.__main__",)),
]

EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    imported: str
    in_function: bool
    type_only: bool = False  # under ``if TYPE_CHECKING:``

    def __str__(self) -> str:
        where = "inside a function" if self.in_function else "under TYPE_CHECKING" if self.type_only else "at module level"
        return f"{self.module} (line {self.line}, {where}) imports {self.imported}"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def walked_modules() -> dict[str, Path]:
    return dict(sorted((module_name(path), path) for path in PACKAGE.rglob("*.py")))


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imported_names(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: from the importing module's package
        package = module.split(".") if is_package else module.split(".")[:-1]
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join(anchor + ([node.module] if node.module else []))
    # ``from rag_core.tools import knowledge`` imports the module rag_core.tools.knowledge
    return [f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}") else base for alias in node.names]


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool) -> None:
        self.module, self.is_package = module, is_package
        self.found: list[Import] = []
        self._functions = 0
        self._type_checking = 0

    def _function(self, node: ast.AST) -> None:
        self._functions += 1
        self.generic_visit(node)
        self._functions -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            self._type_checking += 1
            for statement in node.body:
                self.visit(statement)
            self._type_checking -= 1
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        for name in imported_names(node, self.module, self.is_package):
            if name == "rag_core" or name.startswith("rag_core."):
                self.found.append(Import(self.module, node.lineno, name, self._functions > 0, self._type_checking > 0))

    visit_Import = visit_ImportFrom = _import


def imports_of(module: str, path: Path) -> list[Import]:
    collector = _Collector(module, path.name == "__init__.py")
    collector.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return collector.found


def unit_of(name: str) -> tuple[int, str]:
    """The layer a module belongs to, and the entry of that layer that holds it."""
    best: tuple[int, str] | None = None
    for number, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            holds = name == entry or (entry != "rag_core" and name.startswith(entry + "."))
            if holds and (best is None or len(entry) > len(best[1])):
                best = (number, entry)
    assert best is not None, f"{name} is in no layer: add it to LAYERS in {Path(__file__).name}"
    return best


def all_imports() -> list[Import]:
    return [found for module, path in walked_modules().items() for found in imports_of(module, path)]


def points_down(found: Import) -> bool:
    (layer, unit), (target_layer, target_unit) = unit_of(found.module), unit_of(found.imported)
    return unit == target_unit or target_layer < layer


def test_every_module_is_in_a_layer():
    for module in walked_modules():
        unit_of(module)


def test_imports_point_down():
    wrong = [found for found in all_imports()
             if not points_down(found) and (found.module, found.imported) not in EXCEPTIONS]
    shown = "\n".join(f"  {found}: {LAYERS[unit_of(found.module)[0]][0]!r} must not import "
                      f"{LAYERS[unit_of(found.imported)[0]][0]!r}" for found in wrong)
    assert not wrong, f"imports that do not point down (layers: see LAYERS in {Path(__file__).name}):\n{shown}"


def test_every_exception_is_still_needed_and_says_why():
    upward = {(found.module, found.imported) for found in all_imports() if not points_down(found)}
    stale = [pair for pair in EXCEPTIONS if pair not in upward]
    assert not stale, f"exceptions no import needs any more: remove them from EXCEPTIONS: {stale}"
    assert all(reason.strip() for reason in EXCEPTIONS.values())


def import_graph(imports: list[Import]) -> dict[str, set[str]]:
    """Module -> the rag_core modules it imports, by any kind of import (a package's ``__init__``
    is the module its name names: importing ``a.b`` does not make ``a`` import ``a.b``)."""
    graph: dict[str, set[str]] = {}
    for found in imports:
        if found.imported != found.module:
            graph.setdefault(found.module, set()).add(found.imported)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import each other (the graph's strongly
    connected components of more than one module, Tarjan's algorithm), each as the path
    ``[a, b, ..., a]``, in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(_circle_through(min(group), group, graph) for group in groups)


def _circle_through(start: str, group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for imported in sorted(graph.get(module, set()) & group):
                if imported == start:
                    return paths[module] + [start]
                if imported not in paths:
                    paths[imported] = paths[module] + [imported]
                    following.append(imported)
        frontier = following
    raise AssertionError(f"{start} is in no circle of {sorted(group)}")


def test_no_modules_import_each_other_in_a_circle():
    """Module-level, TYPE_CHECKING and function-level imports alike: a circle dodged by a lazy
    import or a type-only import is still a circle (move the shared type or function down)."""
    imports = all_imports()
    found = circles(import_graph(imports))
    lines = {(f.module, f.imported): f for f in imports}
    shown = "\n".join("  " + " -> ".join(circle) + "\n" + "".join(
        f"      {lines[pair]}\n" for pair in zip(circle, circle[1:])) for circle in found)
    assert not found, f"modules that import each other in a circle:\n{shown}"


def test_the_circle_finder_finds_circles_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}, "g": {"a"}}
    assert circles(graph) == [["a", "b", "c", "a"], ["e", "f", "e"]]
    assert circles({"a": {"b"}, "b": {"c"}}) == []


def test_the_walk_sees_imports_inside_functions():
    """The check is only as good as the walk: a lazy import deep in a method is found too."""
    found = imports_of("rag_core.knowledge.knowledge", ROOT / "rag_core" / "knowledge" / "knowledge.py")
    assert any(f.imported == "rag_core.vectordb.in_memory" and f.in_function for f in found), found


def test_the_walk_sees_imports_under_type_checking(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rag_core.agent import agent\n")
    [found] = imports_of("rag_core.probe", module)
    assert found.type_only and not found.in_function and "under TYPE_CHECKING" in str(found), found


def test_importing_knowledge_loads_neither_the_agent_nor_the_models_nor_pydantic():
    probe = ("import sys, rag_core.knowledge; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' "
             "or m.startswith(('rag_core.agent', 'rag_core.models', 'rag_core.tools'))))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"
