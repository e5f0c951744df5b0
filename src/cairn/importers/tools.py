"""The import tools of the `Cairn` facade."""

from __future__ import annotations

from pathlib import Path

from cairn.importers import Importer, Report, prepare
from cairn.toolbase import ToolBase


class ImportTools(ToolBase):
    def importers(
        self,
        source: str,
        path: str | Path | None = None,
        *,
        scope: str | None = None,
        user: bool = False,
        dry_run: bool = False,
    ) -> list[Importer]:
        """The importers of a source (`agent-files`, `mcp-memory`, `mem0`, `basic-memory`),
        one per batch it yields; each plans (`steps()`) and then runs its steps."""
        return prepare(
            self._ctx, self._default_cwd(), source, path, scope=scope, user=user, dry_run=dry_run
        )

    def import_memory(
        self,
        source: str,
        path: str | Path | None = None,
        *,
        scope: str | None = None,
        user: bool = False,
        dry_run: bool = False,
    ) -> list[Report]:
        """Import a source into this (possibly non-empty) store, item by item: new items are
        remembered (deduplicated, secrets refused), edited ones corrected, removed ones retired,
        unchanged ones left alone (no boost). `dry_run` reports without writing."""
        found = self.importers(source, path, scope=scope, user=user, dry_run=dry_run)
        return [importer.run(importer.steps()) for importer in found]
