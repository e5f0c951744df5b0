"""What the app reads and the few writes only a person makes: a mixin of `Cairn`.

`list_memories` pages a scope's memories (recall's ranking when searched), `scopes` counts
them, `sessions` lists sessions with their outcomes, `procedures` their tallies, `timeline`
the writes per day, `cited_lines` the text a citation points at, and `set_pinned` pins or
unpins. The app's other actions (confirm, correct, forget, undo_act, purge, tidy) are the
methods the CLI and MCP already use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cairn import browse, history
from cairn.browse import CitedLines, DayCount, MemoryPage, ScopeCounts, SessionRow
from cairn.code.tools import CodeTools
from cairn.models import Memory
from cairn.records.sessions import Procedure
from cairn.scope import visible_scopes

MAX_PROCEDURES = 200


class BrowseTools(CodeTools):
    def list_memories(
        self,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        query: str | None = None,
        types: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        citation: str | None = None,
        cursor: str | None = None,
        size: int = browse.PAGE_SIZE,
    ) -> MemoryPage:
        """A page of the scope's current memories (plus `global`): newest first, or with a
        `query` in recall's ranking (no cut, the best 200). Filters: `types`, `tags` (any),
        `statuses` (active, resting), `citation` (same, changed, gone, unchecked). Pass the
        page's `next_cursor` as `cursor` for the next one. Records no recall and no access."""
        resolved = self.scope_for(scope, cwd)
        request = browse.check_request(
            visible_scopes(resolved), query=query, types=types, tags=tags,
            statuses=statuses, citation=citation, cursor=cursor, size=size,
        )  # fmt: skip
        checker = self._citation_checker(resolved, cwd, [])
        return browse.list_memories(self._ctx, request, resolved, checker)

    def scopes(self) -> list[ScopeCounts]:
        """Every scope in the store with its memories counted by type and by status."""
        return browse.scope_counts(self._ctx)

    def sessions(
        self, *, scope: str | None = None, cwd: str | Path | None = None
    ) -> list[SessionRow]:
        """The scope's sessions (newest 200), each with its outcome once committed or ended."""
        return browse.sessions_of(self._ctx, visible_scopes(self.scope_for(scope, cwd)))

    def procedures(
        self, *, scope: str | None = None, cwd: str | Path | None = None
    ) -> list[Procedure]:
        """The scope's procedures, most recently updated first, with tallies and contributions."""
        scopes = visible_scopes(self.scope_for(scope, cwd))
        return self._ctx.store.procedures_in(scopes, as_of=None, limit=MAX_PROCEDURES)

    def timeline(
        self, *, scope: str | None = None, cwd: str | Path | None = None, all_scopes: bool = False
    ) -> list[DayCount]:
        """Memories written per UTC day and type, oldest day first."""
        scopes = None if all_scopes else visible_scopes(self.scope_for(scope, cwd))
        return browse.writes_by_day(self._ctx, scopes)

    def cited_lines(
        self, ref: str, *, scope: str | None = None, cwd: str | Path | None = None
    ) -> CitedLines | None:
        """The lines a memory's `source_ref` cites, as they read now (at most 40), when its
        citation is `same` and the file can be read; else None."""
        resolved = self.scope_for(scope, cwd)
        memory = history.load_visible(self._ctx, ref, resolved)
        checked = self._citation_checker(resolved, cwd, [memory])(memory)
        row = self._ctx.store.get_citations([memory.id]).get(memory.id)
        return browse.cited_lines(row, checked)

    def set_pinned(
        self,
        ref: str,
        pinned: bool,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> Memory:
        """Pin (never decays, first in briefs) or unpin a current memory."""
        return history.set_pinned(self._ctx, ref, pinned, self.scope_for(scope, cwd))
