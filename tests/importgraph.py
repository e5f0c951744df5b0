"""The import graph of a package tree, read from the source (nothing is imported), and its cycles.

Every import statement counts wherever it stands: at the top, inside a function (a lazy import
that keeps start-up light is still a dependency) or under `if TYPE_CHECKING:`. Relative imports
are resolved; `from package import name` is an edge to `package.name` when that is a module,
else to `package` itself. Used by tests/test_architecture.py and scripts/architecture_diagram.py.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

Graph = dict[str, set[str]]


def module_files(src: Path = SRC, package: str = "cairn") -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, whether it is a package's __init__)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _imported(
    node: ast.AST, module: str, is_package: bool, known: Mapping[str, object]
) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in known)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        for alias in node.names:
            if f"{target}.{alias.name}" in known:
                yield f"{target}.{alias.name}"
            elif target in known:
                yield target


@cache
def import_graph(src: Path = SRC, package: str = "cairn") -> Graph:
    """Module -> the modules of the same tree it imports (itself excluded)."""
    files = module_files(src, package)
    graph: Graph = {}
    for module, (path, is_package) in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = {t for node in ast.walk(tree) for t in _imported(node, module, is_package, files)}
        graph[module] = targets - {module}
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
