"""Bring your memory: import the agents' own memory files and other memory stores into a live
cairn, and re-import them without echo.

`prepare` reads a source into batches and gives one `Importer` per batch; its `steps()` are the
plan (compared with the import ledger, `cairn.importers.ledger`) and `run` carries them out item
by item (`cairn.importers.apply`). The memories it writes carry the source system as their
`integration`.
"""

from __future__ import annotations

import os
from pathlib import Path

from cairn.code.citations import checkout_for
from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.importers import agent_files, basic_memory, cairn_export, mcp_memory, mem0
from cairn.importers.apply import Importer
from cairn.importers.files import given_path
from cairn.importers.model import Batch, Report
from cairn.scope import resolve_scope

SOURCES: tuple[str, ...] = ("agent-files", "mcp-memory", "mem0", "basic-memory", "cairn")

__all__ = ["SOURCES", "Importer", "Report", "prepare"]


def prepare(
    ctx: Context,
    default_cwd: Path,
    source: str,
    path: str | Path | None,
    *,
    scope: str | None = None,
    user: bool = False,
    dry_run: bool = False,
) -> list[Importer]:
    """One importer per batch the source yields (agent files: the checkout's, then with
    `user` the home directory's; a cairn export: one per scope it holds)."""
    if source not in SOURCES:
        raise InvalidInput(f"unknown source {source!r}; import from one of {', '.join(SOURCES)}.")
    if path is not None and not str(path).strip():
        raise InvalidInput("the PATH to import from is blank; name a file or folder.")
    batches = _batches(source, path, scope, user, default_cwd)
    return [
        Importer(_source_context(ctx, batch.system), batch, default_cwd, dry_run=dry_run)
        for batch in batches
    ]


def _batches(
    source: str, path: str | Path | None, scope: str | None, user: bool, default_cwd: Path
) -> list[Batch]:
    if source == "agent-files":
        root = checkout_for(Path(path) if path is not None else default_cwd)
        if root is None:
            raise InvalidInput(f"{path} is not a folder; give the checkout to read files from.")
        batches = [agent_files.repo_batch(root, resolve_scope(scope, root, default_cwd=root))]
        if user:
            batches.append(agent_files.user_batch(Path(os.path.expanduser("~"))))
        return batches
    if path is None:
        raise InvalidInput(f"--from {source} needs the PATH of the file or folder to read.")
    where = Path(path).expanduser()
    resolved = resolve_scope(scope, None, default_cwd=default_cwd)
    if source == "mcp-memory":
        return [mcp_memory.batch(_file(where), resolved)]
    if source == "mem0":
        return [mem0.batch(_file(where), resolved)]
    if source == "cairn":
        with open(_file(where), encoding="utf-8", errors="surrogateescape") as lines:
            return cairn_export.batches(lines, where.name)
    return [basic_memory.batch(where, resolved)]


def _file(path: Path) -> Path:
    return given_path(path, Path.is_file, "is not a file; give the path of the export to read.")


def _source_context(ctx: Context, system: str) -> Context:
    """The same store, settings, clock and embedder, recording `system` as the integration."""
    return Context(
        store=ctx.store,
        settings=ctx.settings,
        clock=ctx.clock,
        embedder_factory=lambda: ctx.embedder,
        integration=system,
        integration_version=ctx.integration_version,
    )
