"""The import tools of the `Cairn` facade."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict, Unpack

from cairn.code.citations import checkout_for
from cairn.errors import InvalidInput
from cairn.importers import Importer, Report, prepare
from cairn.importers.to_agent_files import AgentFileExport, export_rules
from cairn.toolbase import ToolBase


class ImportOptions(TypedDict, total=False):
    """An import's keyword options, the same for planning (`importers`) and running
    (`import_memory`); `importers.prepare` holds their defaults and checks them."""

    scope: str | None
    user: bool
    dry_run: bool


class ImportTools(ToolBase):
    def importers(
        self, source: str, path: str | Path | None = None, **options: Unpack[ImportOptions]
    ) -> list[Importer]:
        """The importers of a source (`agent-files`, `mcp-memory`, `mem0`, `basic-memory`),
        one per batch it yields; each plans (`steps()`) and then runs its steps."""
        return prepare(self._ctx, self._default_cwd(), source, path, **options)

    def import_memory(
        self, source: str, path: str | Path | None = None, **options: Unpack[ImportOptions]
    ) -> list[Report]:
        """Import a source into this (possibly non-empty) store, item by item: new items are
        remembered (deduplicated, secrets refused), edited ones corrected, removed ones retired,
        unchanged ones left alone (no boost). `dry_run` reports without writing."""
        found = self.importers(source, path, **options)
        return [importer.run(importer.steps()) for importer in found]

    def export_agent_file(
        self,
        path: str = "AGENTS.md",
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> AgentFileExport:
        """Write the scope's pinned constraints, instructions and preferences into the agent
        file `path` of the checkout (AGENTS.md, CLAUDE.md, ...) between cairn's markers; the
        rest of the file is left as it was, and exporting again is stable."""
        if cwd is not None and not str(cwd).strip():
            raise InvalidInput("cwd is blank; give the checkout to write into.")
        root = checkout_for(Path(cwd) if cwd is not None else self._default_cwd())
        if root is None:
            raise InvalidInput(f"{cwd} is not a folder; give the checkout to write into.")
        relative = Path(path)
        if relative.name in ("", ".", ".."):
            raise InvalidInput(f"{path!r} names no file; write to AGENTS.md, CLAUDE.md or similar.")
        if relative.is_absolute():
            try:
                relative = relative.resolve().relative_to(root)
            except ValueError:
                raise InvalidInput(f"{path} is outside the checkout {root}.") from None
        resolved = self.scope_for(scope, root)
        return export_rules(self._ctx.store, resolved, root, relative.as_posix())
