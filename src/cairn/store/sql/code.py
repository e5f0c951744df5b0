"""Code awareness and the lifecycle (migration 0003) on either SQL backend: citations, branch
goals, acts, tidy proposals, and the lookups the brief, the acts, resting and stats need.

A mixin of the SQL stores. It only persists and looks up; what a citation's status is, what an
act does to a memory and when a memory rests are decided in `cairn.code` and `cairn.lifecycle`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.errors import StoreError
from cairn.models import Event, Memory
from cairn.records.code import ActRow, BranchGoal, BriefSession, CitationRow, NewAct, ProposalRow
from cairn.store.base import MemoryFilter
from cairn.store.sql.dialect import Dialect, Sql
from cairn.store.sql.filters import filter_sql
from cairn.store.sql.records import Columns
from cairn.store.sql.rows import EVENTS, MEMORY_COLUMNS, memory_from_row

CITATION_COLUMNS = (
    "memory_id, scope, kind, path, symbol, commit_sha, root, start_line, end_line, digest, "
    "fingerprint, file_hash, created_at"
)
GOALS = Columns("branch_goals", BranchGoal)
ACTS = Columns("acts", ActRow)
NEW_ACTS = Columns("acts", NewAct)
PROPOSALS = Columns("tidy_proposals", ProposalRow)
CURRENT = "m.until IS NULL AND m.status IN ('active', 'resting')"
_CITATION_UPDATES = ", ".join(
    f"{c.strip()} = excluded.{c.strip()}" for c in CITATION_COLUMNS.split(",")[1:]
)


class CodeRows:
    _sql: Sql

    # citations ----------------------------------------------------------------------------
    def put_citation(self, citation: CitationRow) -> None:
        d = self._sql.dialect
        fingerprint = {
            "lines": list(citation.line_hashes),
            "before": list(citation.before),
            "after": list(citation.after),
        }
        self._sql.run(
            f"INSERT INTO citations ({CITATION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT (memory_id) DO UPDATE SET {_CITATION_UPDATES}",
            (
                citation.memory_id, citation.scope, citation.kind, citation.path,
                citation.symbol, citation.commit, citation.root, citation.start_line,
                citation.end_line, citation.digest, d.json(fingerprint),
                citation.file_hash, d.time(citation.created_at),
            ),
        )  # fmt: skip

    def get_citations(self, memory_ids: Sequence[int]) -> dict[int, CitationRow]:
        rows = self._sql.select_in(
            f"SELECT {CITATION_COLUMNS} FROM citations WHERE {{among}}", "memory_id", memory_ids
        )
        return {int(row[0]): citation_from_row(self._sql.dialect, row) for row in rows}

    def current_citations(self, scopes: Sequence[str] | None) -> list[CitationRow]:
        where, params = _scoped(self._sql.dialect, "m.scope", scopes)
        rows = self._sql.all(
            f"SELECT {prefixed(CITATION_COLUMNS, 'c')} FROM citations c "
            f"JOIN memories m ON m.id = c.memory_id WHERE {CURRENT} AND {where} "
            "ORDER BY c.memory_id",
            params,
        )
        return [citation_from_row(self._sql.dialect, row) for row in rows]

    def memories_citing_commit(self, scope: str, sha: str) -> list[int]:
        """Current memories of `scope` whose source_ref is this commit (either sha may be short)."""
        if len(sha) < 4:
            return []
        sha = sha.lower()
        # Exact prefix comparison: LIKE would read `_` and `%` in a sha as wildcards.
        rows = self._sql.all(
            "SELECT c.memory_id FROM citations c JOIN memories m ON m.id = c.memory_id "
            f"WHERE c.kind = 'commit' AND m.scope = ? AND {CURRENT} "
            "AND (substr(lower(c.commit_sha), 1, length(?)) = ? "
            "OR substr(?, 1, length(c.commit_sha)) = lower(c.commit_sha)) ORDER BY c.memory_id",
            (scope, sha, sha, sha),
        )
        return [int(row[0]) for row in rows]

    def rewrite_commit_citations(self, pairs: Sequence[tuple[str, str]]) -> int:
        """Point commit citations at the commits a rebase or amend rewrote them into."""
        changed = 0
        with self._sql.write() as run:
            for old, new in pairs:
                changed += run.count(
                    "UPDATE citations SET commit_sha = ? WHERE kind = 'commit' AND commit_sha = ?",
                    (new, old),
                )
        return changed

    def citation_roots(self, scope: str, limit: int) -> list[str]:
        rows = self._sql.all(
            "SELECT root FROM citations WHERE scope = ? AND root IS NOT NULL "
            "GROUP BY root ORDER BY max(created_at) DESC LIMIT ?",
            (scope, limit),
        )
        return [str(row[0]) for row in rows]

    # branches -----------------------------------------------------------------------------
    def set_branch_goal(self, goal: BranchGoal) -> None:
        self._sql.run(GOALS.insert(), GOALS.values(self._sql.dialect, goal))

    def get_branch_goal(self, scope: str, branch: str) -> BranchGoal | None:
        row = self._sql.one(
            GOALS.select("WHERE scope = ? AND branch = ? ORDER BY id DESC LIMIT 1"), (scope, branch)
        )
        return None if row is None else GOALS.read(self._sql.dialect, row)

    def branch_memories(
        self, scopes: Sequence[str], branch: str, types: Sequence[str], limit: int
    ) -> list[Memory]:
        d = self._sql.dialect
        in_scopes, scope_params = d.among("m.scope", scopes, "text")
        of_type, type_params = d.among("m.type", types, "text")
        rows = self._sql.all(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {in_scopes} "
            f"AND m.branch = ? AND {of_type} AND m.status = 'active' "
            "AND m.until IS NULL ORDER BY m.written_at DESC, m.id DESC LIMIT ?",
            (*scope_params, branch, *type_params, limit),
        )
        return [memory_from_row(d, row) for row in rows]

    def branch_sessions(self, scope: str, branch: str, limit: int) -> list[BriefSession]:
        d = self._sql.dialect
        with self._sql.read() as run:
            opened = run.all(
                "SELECT id, task, COALESCE(closed_at, opened_at), status FROM sessions "
                "WHERE scope = ? AND branch = ? ORDER BY opened_at DESC LIMIT ?",
                (scope, branch, limit),
            )
            written = run.all(
                "SELECT session_id, max(written_at) FROM memories WHERE scope = ? "
                "AND branch = ? AND session_id IS NOT NULL GROUP BY session_id "
                "ORDER BY 2 DESC LIMIT ?",
                (scope, branch, limit),
            )
        found = {sid: BriefSession(sid, task, d.read_time(at), st) for sid, task, at, st in opened}
        for sid, at in written:
            known = found.get(sid)
            moment = d.read_time(at)
            if known is None:
                found[sid] = BriefSession(sid, None, moment)
            elif moment > known.last_at:
                found[sid] = BriefSession(sid, known.task, moment, known.status)
        ordered = sorted(found.values(), key=lambda s: s.last_at, reverse=True)
        return ordered[:limit]

    def add_cite(
        self,
        memory_id: int,
        *,
        scope: str | None,
        branch: str | None,
        session_id: str | None,
        integration: str | None,
        at: datetime,
    ) -> None:
        self._sql.run(
            "INSERT INTO cites (memory_id, scope, branch, session_id, integration, at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (memory_id, scope, branch, session_id, integration, self._sql.dialect.time(at)),
        )

    def cited_in_session(self, session_id: str) -> list[int]:
        """The memories cited in a session (a cairn session or an agent's), each once."""
        rows = self._sql.all(
            "SELECT DISTINCT memory_id FROM cites WHERE session_id = ? ORDER BY memory_id",
            (session_id,),
        )
        return [int(row[0]) for row in rows]

    def cited_on_branch(self, scope: str, branch: str) -> list[int]:
        rows = self._sql.all(
            "SELECT DISTINCT memory_id FROM cites WHERE (scope = ? AND branch = ?) "
            "OR session_id IN (SELECT id FROM sessions WHERE scope = ? AND branch = ?) "
            "ORDER BY memory_id",
            (scope, branch, scope, branch),
        )
        return [int(row[0]) for row in rows]

    def cites_in(self, scopes: Sequence[str] | None) -> list[tuple[int, str | None, datetime]]:
        """(memory id, scope, time) of every cite made in `scopes` (all when None)."""
        d = self._sql.dialect
        where, params = _scoped(d, "scope", scopes)
        rows = self._sql.all(
            f"SELECT memory_id, scope, at FROM cites WHERE {where} ORDER BY id", params
        )
        return [(int(m), s, d.read_time(a)) for m, s, a in rows]

    def events_of_kind(self, kinds: Sequence[str], scopes: Sequence[str] | None) -> list[Event]:
        d = self._sql.dialect
        of_kind, kind_params = d.among("kind", kinds, "text")
        where, params = _scoped(d, "scope", scopes)
        rows = self._sql.all(
            f"SELECT {EVENTS.columns} FROM events WHERE {of_kind} AND {where} ORDER BY id",
            (*kind_params, *params),
        )
        return [EVENTS.read(d, row) for row in rows]

    # acts ---------------------------------------------------------------------------------
    def add_act(self, act: NewAct) -> int:
        return self._sql.insert(NEW_ACTS.insert(), NEW_ACTS.values(self._sql.dialect, act))

    def get_act(self, act_id: int) -> ActRow | None:
        row = self._sql.one(ACTS.select("WHERE id = ?"), (act_id,))
        return None if row is None else ACTS.read(self._sql.dialect, row)

    def acts_in(self, scope: str, kinds: Sequence[str], limit: int) -> list[ActRow]:
        of_kind, params = self._sql.dialect.among("kind", kinds, "text")
        rows = self._sql.all(
            ACTS.select(f"WHERE scope = ? AND {of_kind} ORDER BY id DESC LIMIT ?"),
            (scope, *params, limit),
        )
        return [ACTS.read(self._sql.dialect, row) for row in rows]

    def mark_act_undone(self, act_id: int, at: datetime) -> None:
        self._sql.run(
            "UPDATE acts SET undone_at = ? WHERE id = ?", (self._sql.dialect.time(at), act_id)
        )

    # lifecycle ----------------------------------------------------------------------------
    def idle_memories(self, scopes: Sequence[str], before: datetime) -> list[Memory]:
        d = self._sql.dialect
        moment = d.time(before)
        in_scopes, params = d.among("m.scope", scopes, "text")
        rows = self._sql.all(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {in_scopes} "
            "AND m.status = 'active' AND m.until IS NULL AND m.pinned = ? "
            "AND m.type <> 'preference' AND m.written_at < ? "
            "AND (m.last_cited_at IS NULL OR m.last_cited_at < ?) ORDER BY m.id",
            (*params, d.flag(False), moment, moment),
        )
        return [memory_from_row(d, row) for row in rows]

    def current_memories(
        self,
        scopes: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        statuses: Sequence[str] = ("active",),
        limit: int = 2000,
    ) -> list[Memory]:
        d = self._sql.dialect
        kinds = None if types is None else tuple(types)
        filt = MemoryFilter(tuple(scopes), statuses=tuple(statuses), types=kinds)
        where, params = filter_sql(d, filt)  # current ones only: `as_of` is unset
        rows = self._sql.all(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where} ORDER BY m.id DESC LIMIT ?",
            (*params, limit),
        )
        return [memory_from_row(d, row) for row in rows]

    def index_health(self, scopes: Sequence[str] | None) -> dict[str, Any]:
        d = self._sql.dialect
        where, params = _scoped(d, "m.scope", scopes)
        with self._sql.read() as run:
            current, no_vector, no_lexical, newest = run.one(
                "SELECT count(*), "
                "sum(CASE WHEN EXISTS (SELECT 1 FROM vectors v WHERE v.memory_id = m.id) "
                "THEN 0 ELSE 1 END), "
                f"sum(CASE WHEN EXISTS (SELECT 1 FROM {d.lexical_table} l "
                "WHERE l.memory_id = m.id) THEN 0 ELSE 1 END), "
                f"max(m.written_at) FROM memories m WHERE {CURRENT} AND {where}",
                params,
            )
            identities = run.all(
                "SELECT v.identity, count(*) FROM vectors v JOIN memories m ON m.id = v.memory_id "
                f"WHERE {CURRENT} AND {where} GROUP BY v.identity",
                params,
            )
        return {
            "current": int(current or 0),
            "without_vector": int(no_vector or 0),
            "without_lexical": int(no_lexical or 0),
            "newest_write": d.read_opt_time(newest),
            "vector_identities": {str(i): int(n) for i, n in identities},
        }

    # tidy ---------------------------------------------------------------------------------
    def upsert_proposal(
        self,
        scope: str,
        kind: str,
        key: str,
        memory_ids: Sequence[int],
        payload: Mapping[str, Any],
        at: datetime,
    ) -> ProposalRow:
        """Record a proposal; one already decided (accepted, declined) is returned unchanged."""
        d = self._sql.dialect
        ids, body = d.texts([int(i) for i in memory_ids]), d.json(dict(payload))
        select = PROPOSALS.select("WHERE scope = ? AND key = ?")
        with self._sql.write() as run:
            row = run.one(select, (scope, key))
            if row is None:
                run.execute(
                    "INSERT INTO tidy_proposals (scope, kind, key, memory_ids, payload, status, "
                    "created_at) VALUES (?, ?, ?, ?, ?, 'open', ?)",
                    (scope, kind, key, ids, body, d.time(at)),
                )
            elif row[6] in ("open", "stale"):
                run.execute(
                    "UPDATE tidy_proposals SET payload = ?, memory_ids = ?, status = 'open' "
                    "WHERE id = ?",
                    (body, ids, row[0]),
                )
            fresh = run.one(select, (scope, key))
        if fresh is None:  # the row was written just above in this transaction
            raise StoreError(f"tidy proposal {scope}/{key} vanished inside its transaction; retry.")
        return PROPOSALS.read(d, fresh)

    def get_proposal(self, proposal_id: int) -> ProposalRow | None:
        row = self._sql.one(PROPOSALS.select("WHERE id = ?"), (proposal_id,))
        return None if row is None else PROPOSALS.read(self._sql.dialect, row)

    def proposals(self, scope: str, statuses: Sequence[str]) -> list[ProposalRow]:
        with_status, params = self._sql.dialect.among("status", statuses, "text")
        rows = self._sql.all(
            PROPOSALS.select(f"WHERE scope = ? AND {with_status} ORDER BY id"), (scope, *params)
        )
        return [PROPOSALS.read(self._sql.dialect, row) for row in rows]

    def set_proposal_status(self, proposal_id: int, status: str, at: datetime | None) -> None:
        self._sql.run(
            "UPDATE tidy_proposals SET status = ?, decided_at = ? WHERE id = ?",
            (status, self._sql.dialect.opt_time(at), proposal_id),
        )


def citation_from_row(d: Dialect, row: Sequence[Any]) -> CitationRow:
    (mid, scope, kind, path, symbol, commit, root, start, end, digest, fingerprint, file_hash,
     created) = row  # fmt: skip
    prints = d.read_json(fingerprint)
    return CitationRow(
        memory_id=int(mid), scope=scope, kind=kind, path=path, symbol=symbol, commit=commit,
        root=root, start_line=start, end_line=end, digest=digest,
        line_hashes=tuple(prints.get("lines", ())), before=tuple(prints.get("before", ())),
        after=tuple(prints.get("after", ())), file_hash=file_hash,
        created_at=d.read_time(created),
    )  # fmt: skip


def _scoped(d: Dialect, column: str, scopes: Sequence[str] | None) -> tuple[str, list[Any]]:
    if scopes is None:
        return "1 = 1", []
    return d.among(column, scopes, "text")


def prefixed(columns: str, alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))
