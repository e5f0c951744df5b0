"""The `Cairn` facade: one method per tool. It validates, resolves the scope, and delegates.

The CLI, MCP and HTTP adapters call these methods and nothing else; each method's docstring is
the contract an agent reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import IO, Any, TypedDict, Unpack, cast

from cairn import consolidate, exchange, history
from cairn.browse_tools import BrowseTools
from cairn.claim_args import validate_type
from cairn.code.records import UNCHECKED, CitationCheck
from cairn.code.tools import CodeTools
from cairn.config import Settings
from cairn.consolidate import Background, ConsolidateResult
from cairn.context import Context
from cairn.embeddings.base import Embedder
from cairn.errors import InvalidInput
from cairn.guard import checks_inside, guard_methods
from cairn.importers.tools import ImportTools
from cairn.lessons.tools import LessonTools
from cairn.models import (
    BatchItem,
    GetResult,
    Hit,
    Memory,
    NewEvent,
    RecallResult,
    RememberResult,
)
from cairn.ranking.recall import RecallQuery, Scored, retrieve_noting
from cairn.records.sessions import Session
from cairn.refusal import check_query, loggable
from cairn.remember import (
    build_claim,
    claim_vector,
    remember_batch,
    start_vector,
    store_claim,
)
from cairn.retrieval_tools import RetrievalTools, check_kind, memory_budget, with_pages
from cairn.scope import visible_scopes
from cairn.sessions.enrich import Completed, check_evidence_mode, complete
from cairn.sessions.ledger import check_context, context_cue, recall_session, record_retrieval
from cairn.sessions.relations import read_relations
from cairn.sessions.tools import SessionTools
from cairn.stats import reindex_notice, store_stats
from cairn.store import MemoryFilter, Store, open_store
from cairn.tags import normalise_tags
from cairn.timeutil import Clock, parse_when, system_clock
from cairn.toolbase import ToolBase
from cairn.updates import newer_first

MAX_LIMIT = 25
CONTENT_PREVIEW = 500


class CairnOptions(TypedDict, total=False):
    """`Cairn`'s keyword options, which `Cairn.open` passes on unchanged."""

    embedder: Embedder | Callable[[], Embedder] | None
    clock: Clock
    integration: str | None
    integration_version: str | None
    cwd: str | Path | None
    background: str


@guard_methods
class Cairn(
    SessionTools, LessonTools, RetrievalTools, BrowseTools, CodeTools, ImportTools, ToolBase
):
    """Long-term memory for agents. `Cairn.open()` gives one on the default embedded store."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        embedder: Embedder | Callable[[], Embedder] | None = None,
        clock: Clock = system_clock,
        integration: str | None = None,
        integration_version: str | None = None,
        cwd: str | Path | None = None,
        background: str = "thread",
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
            integration_version=integration_version,
        )
        # Upkeep after writes: a thread here, a detached process for short-lived commands.
        self._background = Background(self._ctx, background)

    @classmethod
    def open(
        cls,
        path_or_url: str | Path | None = None,
        *,
        settings: Settings | None = None,
        **options: Unpack[CairnOptions],
    ) -> Cairn:
        """Open (creating if needed) the store at a path or `postgresql://` URL; the other
        options are `Cairn`'s own (embedder, clock, integration, cwd, background).

        With no argument: `CAIRN_URL` if set, else `memory.db` under `CAIRN_HOME`. Writes
        start consolidation when it is due (`CAIRN_CONSOLIDATE_INTERVAL`) on a daemon thread,
        or with `background="process"` as a detached `cairn consolidate --if-due`.
        """
        settings = settings or Settings.from_env()
        location = str(path_or_url) if path_or_url is not None else settings.store_location
        store = open_store(location, busy_timeout_ms=settings.busy_timeout_ms)
        return cls(store, settings, **options)

    def close(self) -> None:
        self._background.join()  # a consolidation in progress finishes before the store closes
        self._ctx.close()
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
        relates_to: Sequence[str] | None = None,
        dedup: bool = True,
    ) -> RememberResult:
        """Store one durable claim; identical or near-identical claims in the scope are reused.

        `used` memories each count a cite; `relates_to` associates the claim with memories that
        recall then returns beside it (`pathway="associated"`). With `session_id` the session
        must be open and in the same scope (omit scope and cwd to use the session's).
        """
        args = {k: v for k, v in locals().items() if k not in {"self", "dedup"} and v is not None}
        if cwd is not None:
            args["cwd"] = str(cwd)
        started = start_vector(self._ctx, content) if embedding is None else None
        claim = build_claim(self._ctx, args, self._default_cwd())
        vector = claim_vector(self._ctx, claim, started)
        result = store_claim(self._ctx, claim, vector, dedup=dedup)
        self._wrote()
        return result

    @checks_inside("items")
    def remember_many(
        self, items: Iterable[Mapping[str, Any]], *, dedup: bool = True
    ) -> list[BatchItem]:
        """Store several claims; each item succeeds or fails alone (`ok`, `data` or `error`)."""
        batch = list(items)
        if not batch:
            raise InvalidInput("remember_many needs at least one item: [{content, type}, ...].")
        results = remember_batch(self._ctx, batch, self._default_cwd(), dedup=dedup)
        self._wrote()
        return results

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
        kind: str = "all",
        cut: bool = True,
        also: Sequence[str] | None = None,
        explain: bool = False,
        session_id: str | None = None,
        task_context: Mapping[str, Any] | None = None,
        evidence: str = "references",
        include_resting: bool = False,
    ) -> RecallResult:
        """Memories relevant to `query` in the scope (plus `global`), best first.

        `as_of` answers from what was believed at the end of that day (UTC when no zone).
        `cut=False` returns the top `limit` by rank with no relative cut, no coverage gate and
        no `weak` marks. `kind` is `all` (memories and the project's docs: memories at most
        half of `limit` when docs match), `memories` or `pages` (docs only, up to 20).
        `explain=True` gives each hit's score breakdown (lexical, dense, fused, multipliers).
        Related memories follow with `pathway="associated"` (beyond `limit`); `evidence="full"`
        adds source text. `session_id` names an open session of this scope: `task_context`
        facts merge into it and steer retrieval; the `retrieval_id` needs feedback to `commit`.
        Each hit's `citation` is checked in the caller's checkout, then the project folder;
        Resting memories (idle 30 days, or contradicted twice) are found too, ranked lower and
        marked `resting` (`include_resting` is accepted for older callers and changes nothing).
        A hit whose vector another embedder wrote is ranked by keywords and marked
        `stale_vector`; `needs_reindex` then names the memories `cairn reindex` would re-embed.
        A query about the checked-out branch (naming it, or asking what is open) gets the
        branch brief first.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is blank; say what you are looking for.")
        check_query(query, field="query")
        # The arguments first; the session's state (closed, other scope) after them.
        mode = check_evidence_mode(evidence)
        moment = parse_when(as_of, field="as_of", end_of_day=True) if as_of else None
        count, phrasings, kind = _check_limit(limit), _check_also(also), check_kind(kind)
        check_context(task_context)
        filt = _recall_filter(moment, types, tags, since, until)
        session, resolved, context = recall_session(
            self._ctx, session_id, scope, cwd, task_context, self._default_cwd()
        )
        request = RecallQuery(
            text=query.strip(),
            filt=replace(filt, scopes=visible_scopes(resolved)),
            limit=count,
            cut=cut,
            also=phrasings + context_cue(query.strip(), context),
        )
        text = query.strip()
        page_hits = self._page_hits(kind, resolved, cwd, text, limit) if moment is None else []
        request = replace(request, limit=memory_budget(kind, request.limit, len(page_hits)))
        if moment is None:
            self._rest_idle(resolved)
        done, ranked, stale = self._answered(request, resolved, cwd, mode, explain=explain)
        event_id = self._record_recall(
            resolved, request, ranked, session, context, done.refs, count_access=moment is None
        )
        result = with_pages(
            done.result(f"ret_{event_id}", request, resolved, session), page_hits, kind, limit
        )
        if stale:
            notice = reindex_notice(self.store, request.filt.scopes, self._ctx.embedder.identity)
            result = replace(result, needs_reindex=notice)
        return self._with_brief(result, cwd) if moment is None else result

    def _answered(
        self, request: RecallQuery, scope: str, cwd: str | Path | None, mode: str, *, explain: bool
    ) -> tuple[Completed, list[Scored], bool]:
        """The ranked memories, a newer version before what it may update, each hit's citation
        checked, the answer completed around them (relations read once for both); and whether
        a hit was ranked without its vector (another embedder wrote it)."""
        ranked, stale = retrieve_noting(self._ctx, request) if request.limit else ([], False)
        read = read_relations(self.store, [s.memory.id for s in ranked])
        ranked, conflicts = newer_first(self._ctx, ranked, request.filt, request.limit, read)
        cited = self._citation_checker(scope, cwd, [s.memory for s in ranked])
        hit = partial(_hit, explain=explain, citation=cited, conflicts=conflicts)
        done = complete(
            self._ctx, request, ranked, scope, mode, hit, explain=explain, relations=read
        )
        return done, ranked, stale

    def _record_recall(
        self,
        scope: str,
        request: RecallQuery,
        ranked: list[Scored],
        session: Session | None,
        context: Mapping[str, Any],
        returned: Sequence[str],
        *,
        count_access: bool,
    ) -> int:
        now, store = self._ctx.clock(), self.store
        payload = {
            # Kept for feedback and stats, never verbatim: capped, and secrets replaced by markers.
            "query": loggable(request.text),
            "also": [loggable(phrasing) for phrasing in request.also],
            "as_of": request.filt.as_of.isoformat() if request.filt.as_of else None,
            "refs": list(returned) or [s.memory.ref for s in ranked],
        }
        session_id = session.id if session is not None else None
        # The recall's event and access counts are the store's own bookkeeping, not what the
        # user remembered, so the commit need not wait for the log to reach disk.
        with store.transaction(durable=False):
            if count_access:
                store.touch([scored.memory.id for scored in ranked], now)
            event_id = store.add_event(
                NewEvent("recall", scope, session_id, now, self._ctx.integration, None, payload)
            )
            if session is not None:
                record_retrieval(self._ctx, session, event_id, "recall", returned, context)
            return event_id

    # history -----------------------------------------------------------------------------
    def get_memory(
        self, refs: Sequence[str] | str, *, scope: str | None = None, cwd: str | Path | None = None
    ) -> GetResult:
        """Full records for refs; refs naming nothing visible come back under `unknown`."""
        ref_list = [refs] if isinstance(refs, str) else list(refs)
        if not ref_list:
            raise InvalidInput("get_memory needs at least one ref, e.g. ['mem_12'].")
        resolved = self.scope_for(scope, cwd)
        cited = self._citation_checker(resolved, cwd, [])
        return history.get_memories(self._ctx, ref_list, resolved, citation=cited)

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
        result = history.correct(self._ctx, ref, content, reason, self.scope_for(scope, cwd))
        self._wrote()
        return result

    def forget(
        self, ref: str, *, reason: str, scope: str | None = None, cwd: str | Path | None = None
    ) -> str:
        """Retire a memory: recall stops returning it; `as_of` before now still does."""
        return history.forget(self._ctx, ref, reason, self.scope_for(scope, cwd)).ref

    def purge(self, ref: str, *, scope: str | None = None, cwd: str | Path | None = None) -> str:
        """Erase a memory and every version of it (e.g. a leaked secret), every byte; tombstone
        events remain. Returns the memory's tombstone event ref."""
        return history.purge(self._ctx, ref, self.scope_for(scope, cwd))

    # whole store -------------------------------------------------------------------------
    def consolidate(self, *, if_due: bool = False) -> ConsolidateResult:
        """Run the store's upkeep now: refresh tidy proposals in every scope (proposed, never
        applied), rest idle memories, keep the indexes healthy. One process at a time: when
        another holds the lease this returns `ran=False`. `if_due` runs only when
        `CAIRN_CONSOLIDATE_INTERVAL` has passed since the last run (as writes do)."""
        return consolidate.consolidate(self._ctx, if_due=if_due)

    def stats(
        self, *, scope: str | None = None, cwd: str | Path | None = None, all_scopes: bool = False
    ) -> dict[str, Any]:
        """Counts by type, status and scope, vectors by embedder, the store's size, citation
        health, recall hit/used/helped rates, index freshness, and the pages of the scope's
        checkout (files indexed, files skipped by reason, files held back for a secret)."""
        resolved = self.scope_for(scope, cwd)
        scopes = None if all_scopes else visible_scopes(resolved)
        return {
            **store_stats(self.store, scopes),
            **self._code_stats(scopes, resolved, cwd),
            **self._page_stats(resolved, cwd),
        }

    def export(self, out: IO[str]) -> int:
        """Write the whole store (every table: memories and their versions, events, vectors,
        sessions, procedures, citations, ...) as JSON Lines; returns lines written."""
        return exchange.export_to(self.store, out)

    def import_(self, lines: Iterable[str]) -> dict[str, int]:
        """Load an export into this (empty) store, reproducing it exactly; returns the rows
        loaded per table."""
        return exchange.import_from(self.store, lines)


def _embedder_factory(
    embedder: Embedder | Callable[[], Embedder] | None, settings: Settings
) -> Callable[[], Embedder]:
    if embedder is None:
        from cairn.embeddings import make_embedder

        return lambda: make_embedder(settings)
    # hasattr, not isinstance: a runtime Protocol check reads `dimensions`, which makes an
    # Ollama embedder probe its server just to be recognised.
    if hasattr(embedder, "embed_many"):
        chosen = cast(Embedder, embedder)
        return lambda: chosen
    return embedder


def _recall_filter(
    moment: datetime | None,
    types: Sequence[str] | None,
    tags: Sequence[str] | None,
    since: str | datetime | None,
    until: str | datetime | None,
) -> MemoryFilter:
    """What a recall may return, from its validated arguments (the scopes come later)."""
    return MemoryFilter(
        scopes=(),
        as_of=moment,
        types=tuple(validate_type(t) for t in types) if types else None,
        tags=normalise_tags(tags) if tags else None,
        since=parse_when(since, field="since", end_of_day=False) if since else None,
        until=parse_when(until, field="until", end_of_day=True) if until else None,
        # Resting memories are always candidates, ranked lower (DESIGN §3.6).
        statuses=("active", "resting"),
    )


def _check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit {limit!r} is out of range; give 1 to {MAX_LIMIT} (default 8).")
    return limit


def _check_also(also: Sequence[str] | None) -> tuple[str, ...]:
    given = [a for a in also or () if isinstance(a, str)]
    for phrasing in given:
        check_query(phrasing, field="an also phrasing")
    phrasings = tuple(a.strip() for a in given if a.strip())
    if len(phrasings) > 3:
        raise InvalidInput(f"also takes at most 3 other phrasings; {len(phrasings)} given.")
    return phrasings


def _hit(
    scored: Scored,
    explain: bool,
    citation: Callable[[Memory], CitationCheck] | None = None,
    conflicts: Mapping[int, tuple[str, ...]] | None = None,
) -> Hit:
    memory = scored.memory
    checked = citation(memory) if citation is not None else UNCHECKED
    return Hit.of_memory(
        memory,
        scored.score,
        preview=CONTENT_PREVIEW,
        weak=scored.weak,
        citation=checked.status,
        citation_lines=checked.lines,
        explain=dict(scored.parts) if explain else None,
        conflicts_with=(conflicts or {}).get(memory.id, ()),
        resting=memory.status == "resting",
        stale_vector=scored.stale,
    )
