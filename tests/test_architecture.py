"""Layering, checked by walking the imports: adapters import the core, never the reverse;
backends never import ranking; nothing below the adapters imports an adapter."""

from __future__ import annotations

import ast
from pathlib import Path

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
    offenders = [
        str(path.relative_to(SRC))
        for path in modules_under("")
        if "adapters" not in path.parts
        and any(name.startswith("cairn.adapters") for name in imports_of(path))
    ]
    assert offenders == []


def test_backends_never_import_ranking_or_the_core() -> None:
    banned = ("cairn.ranking", "cairn.core", "cairn.remember", "cairn.history", "cairn.adapters")
    offenders = [
        str(path.relative_to(SRC))
        for path in modules_under("store")
        if any(name.startswith(banned) for name in imports_of(path))
    ]
    assert offenders == []


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
