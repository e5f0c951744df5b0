"""`query` and the pages half of `recall`: a mixin of `Cairn`.

- `query(text)` is the seeds' nearest-neighbour lookup: the memories whose own embedding is
  closest to the text's, by cosine alone, up to `max_recall_items` (default 20). No keywords, no
  neighbours, no signals, no cut: what an agent that wants raw similarity asks for.
- `recall(kind=...)` mixes pages (cairn.pages) into the answer. `kind="pages"` returns pages
  only (up to `MAX_PAGES`); `kind="all"` (the default) caps the memories at half of `limit`
  when pages match and gives pages the rest; `kind="memories"` never reads the docs. Pages
  answer from their current text, so `as_of` returns memories only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cairn import pages
from cairn.code.tools import CodeTools
from cairn.errors import InvalidInput
from cairn.models import Hit, NewEvent, RecallResult
from cairn.refusal import check_query, loggable
from cairn.reindex import DEFAULT_BATCH, ReindexReport, reindex
from cairn.scope import visible_scopes
from cairn.sessions.ledger import record_retrieval, session_for_call
from cairn.stats import page_stats
from cairn.store.base import MemoryFilter

KINDS = ("all", "memories", "pages")


@dataclass(frozen=True, slots=True)
class QueryResult:
    """A query's hits; in a session also the retrieval that needs feedback."""

    hits: tuple[Hit, ...]
    scope: str
    retrieval_id: str | None = None
    session_id: str | None = None


PAGE_PREVIEW = 500


def check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise InvalidInput(
            f"kind {kind!r} is not one of {', '.join(KINDS)}; use 'all' (memories and docs, "
            "the default), 'memories' or 'pages' (docs only)."
        )
    return str(kind)


def memory_budget(kind: str, limit: int, page_count: int) -> int:
    """How many direct memories an answer may hold: none for pages, half when pages match."""
    if kind == "pages":
        return 0
    if kind == "all" and page_count:
        return max(1, limit // 2)
    return limit


class RetrievalTools(CodeTools):
    def query(
        self,
        text: str,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        limit: int | None = None,
    ) -> list[Hit]:
        """The memories whose embedding is nearest to `text`'s, by cosine alone, best first.

        Up to `limit` (default and maximum `max_recall_items`, 20). Unlike `recall` it reads
        no keywords and applies no cut: every hit is as close as the embedding says (`score`).
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("query text is blank; give a short phrase to look up.")
        check_query(text, field="query")
        most = self._ctx.settings.max_recall_items
        count = most if limit is None else limit
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= most:
            raise InvalidInput(
                f"limit {limit!r} is out of range; give 1 to {most} (default {most})."
            )
        resolved = self.scope_for(scope, cwd)
        embedder = self._ctx.embedder
        vector = self._ctx.embed_query(text.strip())
        filt = MemoryFilter(scopes=visible_scopes(resolved))
        nearest = self._ctx.store.nearest(filt, embedder.identity, vector, count)
        memories = {m.id: m for m in self._ctx.store.get_memories([i for i, _ in nearest])}
        return [
            Hit.of_memory(memory, similarity, preview=PAGE_PREVIEW)
            for memory_id, similarity in nearest
            if (memory := memories.get(memory_id)) is not None
        ]

    def reindex(
        self,
        *,
        batch: int = DEFAULT_BATCH,
        max_batches: int | None = None,
        on_start: Callable[[int], None] | None = None,
        on_batch: Callable[[int], None] | None = None,
    ) -> ReindexReport:
        """Re-embed, with the current embedder, every memory whose vector another embedder
        wrote (or that has none), `batch` memories per committed transaction: a run stopped
        midway loses nothing and the next run continues. `max_batches` stops early."""
        return reindex(
            self._ctx, batch=batch, max_batches=max_batches, on_start=on_start, on_batch=on_batch
        )

    def query_in_session(
        self,
        text: str,
        *,
        session_id: str,
        scope: str | None = None,
        cwd: str | Path | None = None,
        limit: int | None = None,
    ) -> QueryResult:
        """`query` inside a session: the same nearest memories, recorded on the session's
        ledger like a recall, so its `retrieval_id` needs feedback before `commit` (a query
        is no way around the ledger)."""
        session = session_for_call(self._ctx, session_id, scope, cwd, self._default_cwd())
        resolved = session.scope
        hits = self.query(text, scope=resolved, limit=limit)
        refs = [hit.ref for hit in hits]
        store = self._ctx.store
        payload = {
            "query": loggable(text.strip()),
            "also": [],
            "as_of": None,
            "refs": refs,
            "via": "query",
        }
        with store.transaction():
            event_id = store.add_event(
                NewEvent("recall", resolved, session.id, self._ctx.clock(),
                         self._ctx.integration, None, payload)
            )  # fmt: skip
            record_retrieval(self._ctx, session, event_id, "recall", refs)
        return QueryResult(tuple(hits), resolved, f"ret_{event_id}", session.id)

    def _page_hits(
        self, kind: str, scope: str, cwd: str | Path | None, text: str, limit: int
    ) -> list[Hit]:
        """The pages matching `text` for a recall of this kind (refreshed from disk first)."""
        if kind == "memories":
            return []
        root = self._project_root(scope, cwd)
        if root is None:
            return []
        files = pages.refresh(self._ctx.store, scope, root).files
        if not files:
            return []
        found = pages.search(self._ctx.store, scope, files, text, min(limit, pages.MAX_PAGES))
        best = max((h.score for h in found), default=0.0) or 1.0
        return [_page_hit(h, h.score / best) for h in found]

    def _page_stats(self, scope: str, cwd: str | Path | None) -> dict[str, Any]:
        """`stats` → `pages`: the scope's checkout refreshed now, with what was skipped."""
        root = self._project_root(scope, cwd)
        if root is None:
            return {"pages": page_stats(None, None, 0)}
        refreshed = pages.refresh(self._ctx.store, scope, root)
        chunks = len(self._ctx.store.pages_in(scope))
        return {"pages": page_stats(root, refreshed, chunks)}


def with_pages(result: RecallResult, page_hits: list[Hit], kind: str, limit: int) -> RecallResult:
    """The answer with pages after the direct memories (associated memories stay last)."""
    if kind == "pages":
        # Procedures stay: they are what the retrieval recorded for feedback, if any.
        return replace(result, hits=tuple(page_hits[: min(limit, pages.MAX_PAGES)]))
    if not page_hits:
        return result
    direct = [h for h in result.hits if h.pathway == "direct"]
    others = [h for h in result.hits if h.pathway != "direct"]
    room = max(0, limit - len(direct))
    return replace(result, hits=(*direct, *page_hits[:room], *others))


def _page_hit(hit: pages.PageHit, score: float) -> Hit:
    page = hit.page
    return Hit(
        ref=page.ref,
        kind="page",
        summary=f"{page.path} › {page.heading}: {hit.snippet}",
        score=round(score, 6),
        weak=False,
        source_ref=f"{page.path}:{page.line_start}-{page.line_end}",
        citation="same",
        until=None,
        content=page.text[:PAGE_PREVIEW],
    )
