"""Layering, checked by walking the imports: adapters import the core, never the reverse;
backends never import ranking; nothing below the adapters imports an adapter; no import cycle."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

from importgraph import cycles, import_graph

SRC = Path(__file__).resolve().parents[1] / "src" / "cairn"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def modules_under(folder: str) -> list[Path]:
    return sorted((SRC / folder).rglob("*.py")) if folder else sorted(SRC.rglob("*.py"))


def test_core_never_imports_adapters() -> None:
    # The resolved graph: a relative import (`from ..adapters import cli`) counts as well.
    offenders = sorted(
        (module, target)
        for module, targets in import_graph().items()
        if not module.startswith("cairn.adapters")
        for target in targets
        if target.startswith("cairn.adapters")
    )
    assert offenders == []


def test_no_import_cycle_between_modules() -> None:
    """Lazy (function-level) and TYPE_CHECKING imports count: a cycle through them is still
    two modules that cannot be understood, tested or moved one without the other."""
    assert cycles(import_graph()) == []


def test_commands_and_tools_import_helpers_not_the_assembly() -> None:
    """`cli.py` assembles the command group and `mcp.py` the server from the command and tool
    modules; those share `cli_common.py` and `mcp_binding.py`/`mcp_toolkit.py` instead."""
    graph = import_graph()
    into_cli = sorted(m for m, targets in graph.items() if "cairn.adapters.cli" in targets)
    assert into_cli == []
    tool_modules = [m for m in graph if m.startswith("cairn.adapters.mcp_") and "tools" in m]
    assert len(tool_modules) >= 4
    helpers = ("cairn.adapters.mcp_binding", "cairn.adapters.mcp_toolkit", *tool_modules)
    into_mcp = sorted(m for m in helpers if "cairn.adapters.mcp" in graph[m])
    assert into_mcp == []


def test_the_cycle_finder_sees_cycles(tmp_path: Path) -> None:
    """The checks above pass on an empty answer, so the finder must be seen to find one: a
    relative from-import of a module, an absolute one inside a function, a TYPE_CHECKING one."""
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from toy.sub.leaf import VALUE\n")
    (pkg / "sub" / "leaf.py").write_text("VALUE = 1\n")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def later():\n    from toy import c\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import thing\n"
    )
    (pkg / "d.py").write_text("from .sub import VALUE\nimport toy.sub.leaf\n")
    graph = import_graph(tmp_path, "toy")
    assert graph["toy.a"] == {"toy.b"} and graph["toy.c"] == {"toy.a"}
    assert graph["toy.d"] == {"toy.sub", "toy.sub.leaf"}
    assert cycles(graph) == [["toy.a", "toy.b", "toy.c"]]


def test_backends_never_import_ranking_or_the_core() -> None:
    banned = ("cairn.ranking", "cairn.core", "cairn.remember", "cairn.history", "cairn.adapters")
    offenders = [
        str(path.relative_to(SRC))
        for path in modules_under("store")
        if any(name.startswith(banned) for name in imports_of(path))
    ]
    assert offenders == []


FEATURES = (
    "cairn.sessions",
    "cairn.lessons",
    "cairn.code",
    "cairn.ranking",
    "cairn.pages",
    "cairn.page_",
    "cairn.importers",
)


def test_store_never_imports_features() -> None:
    """The store persists the records in `cairn.records`; a feature package above it is never
    imported by it, so the features can change their policy without touching storage."""
    offenders = sorted(
        (module, target)
        for module, targets in import_graph().items()
        if module.startswith("cairn.store")
        for target in targets
        if target.startswith(FEATURES)
    )
    assert offenders == []


def test_records_sit_below_the_store() -> None:
    graph = import_graph()
    records = [m for m in graph if m.startswith("cairn.records")]
    assert len(records) >= 4
    allowed = ("cairn.records", "cairn.models")
    assert sorted((m, t) for m in records for t in graph[m] if not t.startswith(allowed)) == []


def test_embedders_stand_alone() -> None:
    allowed = ("cairn.embeddings", "cairn.errors", "cairn.config")
    offenders = [
        (str(path.relative_to(SRC)), name)
        for path in modules_under("embeddings")
        for name in imports_of(path)
        if name.startswith("cairn") and not name.startswith(allowed)
    ]
    assert offenders == []


def test_no_module_is_too_long() -> None:
    long = [
        (str(p.relative_to(SRC)), n)
        for p in modules_under("")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    ]
    assert long == []


def _diagram() -> ModuleType:
    path = SRC.parents[1] / "scripts" / "architecture_diagram.py"
    spec = importlib.util.spec_from_file_location("architecture_diagram", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_architecture_picture_is_current() -> None:
    """docs/architecture.svg is drawn from the import graph; every module has a layer (a new
    package must be placed on purpose) and the picture shows today's group dependencies."""
    diagram = _diagram()
    picture = diagram.render(*diagram.group_edges())
    current = (SRC.parents[1] / "docs" / "architecture.svg").read_text(encoding="utf-8")
    assert picture == current, "run: python scripts/architecture_diagram.py"


def test_the_picture_marks_an_upward_import_red() -> None:
    diagram = _diagram()
    assert diagram.edge_kind("protocol", "features") == "up"
    assert diagram.edge_kind("backends", "protocol") == "plugs"
    assert diagram.edge_kind("adapters", "facade") == "down"
    assert diagram.group_of("cairn.store.sqlite.store") == ("store/sqlite", "backends")
    assert diagram.group_of("cairn.sessions.tools") == ("core", "facade")
    assert diagram.group_of("cairn.scope_file") == ("foundation", "foundation")
