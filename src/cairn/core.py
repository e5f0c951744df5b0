"""The `Cairn` facade: one method per tool. It validates, resolves the scope, and delegates.

The CLI, MCP and HTTP adapters call these methods and nothing else; each method's docstring is
the contract an agent reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from cairn import exchange, history
from cairn.config import Settings
from cairn.context import Context
from cairn.embeddings.base import Embedder
from cairn.errors import InvalidInput
from cairn.evidence import check_cites, record_cites
from cairn.models import (
    BatchItem,
    GetResult,
    Hit,
    NewEvent,
    RecallResult,
    RememberResult,
)
from cairn.ranking.recall import RecallQuery, Scored, retrieve
from cairn.remember import build_claim, embed_claims, remember_batch, store_claim, validate_type
from cairn.scope import visible_scopes
from cairn.stats import store_stats
from cairn.store import MemoryFilter, Store, open_store
from cairn.tags import normalise_tags
from cairn.timeutil import Clock, parse_when, system_clock
from cairn.toolbase import ToolBase

MAX_LIMIT = 25
CONTENT_PREVIEW = 500


class Cairn(ToolBase):
    """Long-term memory for agents. `Cairn.open()` gives one on the default embedded store."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        clock: Clock = system_clock,
        integration: str | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self._cwd = Path(cwd) if cwd is not None else None
        self._ctx = Context(
            store=store,
            settings=settings,
            clock=clock,
            embedder_factory=_embedder_factory(embedder, settings),
            integration=integration or settings.integration,
        )

    @classmethod
    def open(
        cls,
        path_or_url: str | Path | None = None,
        *,
        settings: Settings | None = None,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        clock: Clock = system_clock,
        integration: str | None = None,
        cwd: str | Path | None = None,
    ) -> Cairn:
        """Open (creating if needed) the store at a path or `postgresql://` URL.

        With no argument: `CAIRN_URL` if set, else `memory.db` under `CAIRN_HOME`.
        """
        settings = settings or Settings.from_env()
        location = str(path_or_url) if path_or_url is not None else settings.store_location
        store = open_store(location, busy_timeout_ms=settings.busy_timeout_ms)
        return cls(
            store, settings, embedder=embedder, clock=clock, integration=integration, cwd=cwd
        )

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Cairn:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def embedder(self) -> Embedder:
        return self._ctx.embedder

    # remember ----------------------------------------------------------------------------
    def remember(
        self,
        content: str,
        *,
        type: str,
        scope: str | None = None,
        cwd: str | Path | None = None,
        tags: Sequence[str] | None = None,
        reason: str | None = None,
        source_ref: str | None = None,
        summary: str | None = None,
        weight: float | None = None,
        durability: str | None = None,
        pinned: bool = False,
        occurred_at: str | datetime | None = None,
        diff_text: str | None = None,
        diff_files: Sequence[str] | None = None,
        error_trace: str | None = None,
        session_id: str | None = None,
        used: Sequence[str] | None = None,
        embedding: Sequence[float] | None = None,
        dedup: bool = True,
    ) -> RememberResult:
        """Store one durable claim; identical or near-identical claims in the scope are reused."""
        args = {k: v for k, v in locals().items() if k not in {"self", "dedup"} and v is not None}
        if cwd is not None:
            args["cwd"] = str(cwd)
        claim = build_claim(self._ctx, args, self._default_cwd())
        cites = check_cites(self._ctx, list(used or ()), claim.scope)
        vector = embed_claims(self._ctx, [claim])[0]
        result = store_claim(self._ctx, claim, vector, dedup=dedup)
        if cites:
            record_cites(self._ctx, cites)
        return result

    def remember_many(
        self, items: Iterable[Mapping[str, Any]], *, dedup: bool = True
    ) -> list[BatchItem]:
        """Store several claims; each item succeeds or fails alone (`ok`, `data` or `error`)."""
        batch = list(items)
        if not batch:
            raise InvalidInput("remember_many needs at least one item: [{content, type}, ...].")
        return remember_batch(self._ctx, batch, self._default_cwd(), dedup=dedup)

    # recall ------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        limit: int = 8,
        as_of: str | datetime | None = None,
        types: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        kind: str = "memories",
        cut: bool = True,
        also: Sequence[str] | None = None,
        explain: bool = False,
    ) -> RecallResult:
        """Memories relevant to `query` in the scope (plus `global`), best first.

        `as_of` answers from what was believed at the end of that day (UTC when no zone).
        `cut=False` returns the top `limit` by rank with no relative cut and no abstention.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is blank; say what you are looking for.")
        resolved = self.scope_for(scope, cwd)
        moment = parse_when(as_of, field="as_of", end_of_day=True) if as_of else None
        request = RecallQuery(
            text=query.strip(),
            filt=MemoryFilter(
                scopes=visible_scopes(resolved),
                as_of=moment,
                types=tuple(validate_type(t) for t in types) if types else None,
                tags=normalise_tags(tags) if tags else None,
                since=parse_when(since, field="since", end_of_day=False) if since else None,
                until=parse_when(until, field="until", end_of_day=True) if until else None,
            ),
            limit=_check_limit(limit),
            cut=cut,
            also=_check_also(also),
        )
        _check_kind(kind)
        ranked = retrieve(self._ctx, request)
        event_id = self._record_recall(resolved, request, ranked, count_access=moment is None)
        hits = tuple(_hit(s, explain) for s in ranked)
        return RecallResult(f"ret_{event_id}", request.text, resolved, hits, moment)

    def _record_recall(
        self, scope: str, request: RecallQuery, ranked: list[Scored], *, count_access: bool
    ) -> int:
        now, store = self._ctx.clock(), self.store
        payload = {
            "query": request.text,
            "also": list(request.also),
            "as_of": request.filt.as_of.isoformat() if request.filt.as_of else None,
            "refs": [s.memory.ref for s in ranked],
        }
        with store.transaction():
            if count_access:
                for scored in ranked:
                    store.increment(scored.memory.id, "access_count")
                    store.update_memory(scored.memory.id, {"last_accessed_at": now})
            return store.add_event(
                NewEvent("recall", scope, None, now, self._ctx.integration, None, payload)
            )

    # history -----------------------------------------------------------------------------
    def get_memory(
        self, refs: Sequence[str] | str, *, scope: str | None = None, cwd: str | Path | None = None
    ) -> GetResult:
        """Full records for refs; refs naming nothing visible come back under `unknown`."""
        ref_list = [refs] if isinstance(refs, str) else list(refs)
        if not ref_list:
            raise InvalidInput("get_memory needs at least one ref, e.g. ['mem_12'].")
        return history.get_memories(self._ctx, ref_list, self.scope_for(scope, cwd))

    def correct(
        self,
        ref: str,
        content: str,
        *,
        reason: str,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> RememberResult:
        """Write a new version of a memory; the old one keeps its text and gets `until`."""
        return history.correct(self._ctx, ref, content, reason, self.scope_for(scope, cwd))

    def forget(
        self, ref: str, *, reason: str, scope: str | None = None, cwd: str | Path | None = None
    ) -> str:
        """Retire a memory: recall stops returning it; `as_of` before now still does."""
        return history.forget(self._ctx, ref, reason, self.scope_for(scope, cwd)).ref

    def purge(self, ref: str, *, scope: str | None = None, cwd: str | Path | None = None) -> str:
        """Erase a memory's content and embedding (e.g. a leaked secret); a tombstone remains."""
        return history.purge(self._ctx, ref, self.scope_for(scope, cwd))

    # whole store -------------------------------------------------------------------------
    def stats(
        self, *, scope: str | None = None, cwd: str | Path | None = None, all_scopes: bool = False
    ) -> dict[str, Any]:
        """Counts by type, status and scope, vectors by embedder, and the store's size."""
        scopes = None if all_scopes else visible_scopes(self.scope_for(scope, cwd))
        return store_stats(self.store, scopes)

    def export(self, out: IO[str]) -> int:
        """Write every memory, version, event and vector as JSON Lines; returns lines written."""
        return exchange.export_to(self.store, out)

    def import_(self, lines: Iterable[str]) -> dict[str, int]:
        """Load an export into this (empty) store, reproducing it exactly."""
        return exchange.import_from(self.store, lines)


def _embedder_factory(
    embedder: Embedder | Callable[[], Embedder] | None, settings: Settings
) -> Callable[[], Embedder]:
    if embedder is None:
        from cairn.embeddings import make_embedder

        return lambda: make_embedder(settings)
    if isinstance(embedder, Embedder):
        chosen = embedder
        return lambda: chosen
    return embedder


def _check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit {limit!r} is out of range; give 1 to {MAX_LIMIT} (default 8).")
    return limit


def _check_also(also: Sequence[str] | None) -> tuple[str, ...]:
    phrasings = tuple(a.strip() for a in also or () if isinstance(a, str) and a.strip())
    if len(phrasings) > 3:
        raise InvalidInput(f"also takes at most 3 other phrasings; {len(phrasings)} given.")
    return phrasings


def _check_kind(kind: str) -> None:
    if kind != "memories":
        raise InvalidInput(f"kind {kind!r} is not available; use kind='memories'.")


def _hit(scored: Scored, explain: bool) -> Hit:
    memory = scored.memory
    return Hit(
        ref=memory.ref,
        kind="memory",
        summary=memory.summary,
        score=round(scored.score, 6),
        weak=scored.weak,
        source_ref=memory.source_ref,
        citation="unchecked",
        until=memory.until,
        type=memory.type,
        scope=memory.scope,
        content=memory.content[:CONTENT_PREVIEW],
        occurred_at=memory.occurred_at,
        explain=dict(scored.parts) if explain else None,
    )
