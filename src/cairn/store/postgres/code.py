"""PostgreSQL persistence of code awareness and the lifecycle (migration 0003): citations,
branch goals, acts, tidy proposals, and the lookups the brief, the acts, resting and stats need.

A mixin of `PostgresStore`, statement for statement the SQLite backend's `CodeRows`. Commit
prefixes are compared with `starts_with` on lowercased shas, which is what SQLite's
case-insensitive `LIKE 'sha%'` does for hex, without LIKE's wildcards.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.errors import StoreError
from cairn.models import Event, Memory
from cairn.records.code import ActRow, BranchGoal, BriefSession, CitationRow, NewAct, ProposalRow
from cairn.store.postgres.connection import Database
from cairn.store.postgres.rows import (
    EVENT_COLUMNS,
    MEMORY_COLUMNS,
    event_from_row,
    json_value,
    memory_from_row,
    opt_param,
    opt_utc,
    utc,
)
from cairn.timeutil import as_utc

CITATION_COLUMNS = (
    "memory_id, scope, kind, path, symbol, commit_sha, root, start_line, end_line, digest, "
    "fingerprint, file_hash, created_at"
)
ACT_COLUMNS = "id, scope, kind, subject, at, integration, effects, detail, undone_at"
PROPOSAL_COLUMNS = "id, scope, kind, key, memory_ids, payload, status, created_at, decided_at"
_CURRENT = "m.until IS NULL AND m.status IN ('active', 'resting')"


class CodeRows:
    _db: Database

    # citations ----------------------------------------------------------------------------
    def put_citation(self, citation: CitationRow) -> None:
        fingerprint = {
            "lines": list(citation.line_hashes),
            "before": list(citation.before),
            "after": list(citation.after),
        }
        updates = ", ".join(
            f"{c.strip()} = EXCLUDED.{c.strip()}" for c in CITATION_COLUMNS.split(",")[1:]
        )
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO citations ({CITATION_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                f" ON CONFLICT (memory_id) DO UPDATE SET {updates}",
                (
                    citation.memory_id, citation.scope, citation.kind, citation.path,
                    citation.symbol, citation.commit, citation.root, citation.start_line,
                    citation.end_line, citation.digest, json_value(fingerprint),
                    citation.file_hash, as_utc(citation.created_at),
                ),
            )  # fmt: skip

    def get_citations(self, memory_ids: Sequence[int]) -> dict[int, CitationRow]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {CITATION_COLUMNS} FROM citations WHERE memory_id = ANY(%s::bigint[])",
                (list(memory_ids),),
            ).fetchall()
        return {int(row[0]): _citation(row) for row in rows}

    def current_citations(self, scopes: Sequence[str] | None) -> list[CitationRow]:
        where, params = _scoped("m.scope", scopes)
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_prefixed(CITATION_COLUMNS, 'c')} FROM citations c"
                f" JOIN memories m ON m.id = c.memory_id WHERE {_CURRENT} AND {where}"
                " ORDER BY c.memory_id",
                params,
            ).fetchall()
        return [_citation(row) for row in rows]

    def memories_citing_commit(self, scope: str, sha: str) -> list[int]:
        """Current memories of `scope` whose source_ref is this commit (either sha may be short)."""
        if len(sha) < 4:
            return []
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT c.memory_id FROM citations c JOIN memories m ON m.id = c.memory_id"
                f" WHERE c.kind = 'commit' AND m.scope = %(scope)s AND {_CURRENT}"
                " AND (starts_with(lower(c.commit_sha), %(sha)s)"
                " OR starts_with(%(sha)s, lower(c.commit_sha))) ORDER BY c.memory_id",
                {"scope": scope, "sha": sha.lower()},
            ).fetchall()
        return [int(row[0]) for row in rows]

    def rewrite_commit_citations(self, pairs: Sequence[tuple[str, str]]) -> int:
        """Point commit citations at the commits a rebase or amend rewrote them into."""
        changed = 0
        with self._db.transaction() as conn:
            for old, new in pairs:
                cur = conn.execute(
                    "UPDATE citations SET commit_sha = %s WHERE kind = 'commit'"
                    " AND commit_sha = %s",
                    (new, old),
                )
                changed += cur.rowcount
        return changed

    def citation_roots(self, scope: str, limit: int) -> list[str]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT root FROM citations WHERE scope = %s AND root IS NOT NULL"
                " GROUP BY root ORDER BY max(created_at) DESC LIMIT %s",
                (scope, limit),
            ).fetchall()
        return [str(row[0]) for row in rows]

    # branches -----------------------------------------------------------------------------
    def set_branch_goal(self, goal: BranchGoal) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO branch_goals (scope, branch, goal, set_at, integration, session_id)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (goal.scope, goal.branch, goal.goal, as_utc(goal.set_at), goal.integration,
                 goal.session_id),
            )  # fmt: skip

    def get_branch_goal(self, scope: str, branch: str) -> BranchGoal | None:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT scope, branch, goal, set_at, integration, session_id FROM branch_goals"
                " WHERE scope = %s AND branch = %s ORDER BY id DESC LIMIT 1",
                (scope, branch),
            ).fetchone()
        if row is None:
            return None
        return BranchGoal(row[0], row[1], row[2], utc(row[3]), row[4], row[5])

    def branch_memories(
        self, scopes: Sequence[str], branch: str, types: Sequence[str], limit: int
    ) -> list[Memory]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope = ANY(%s::text[])"
                " AND m.branch = %s AND m.type = ANY(%s::text[]) AND m.status = 'active'"
                " AND m.until IS NULL ORDER BY m.written_at DESC, m.id DESC LIMIT %s",
                (list(scopes), branch, list(types), limit),
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def branch_sessions(self, scope: str, branch: str, limit: int) -> list[BriefSession]:
        with self._db.connection() as conn:
            opened = conn.execute(
                "SELECT id, task, COALESCE(closed_at, opened_at), status FROM sessions"
                " WHERE scope = %s AND branch = %s ORDER BY opened_at DESC LIMIT %s",
                (scope, branch, limit),
            ).fetchall()
            written = conn.execute(
                "SELECT session_id, max(written_at) FROM memories WHERE scope = %s"
                " AND branch = %s AND session_id IS NOT NULL GROUP BY session_id"
                " ORDER BY 2 DESC LIMIT %s",
                (scope, branch, limit),
            ).fetchall()
        found = {sid: BriefSession(sid, task, utc(at), status) for sid, task, at, status in opened}
        for sid, at in written:
            known = found.get(sid)
            moment = utc(at)
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
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO cites (memory_id, scope, branch, session_id, integration, at)"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                (memory_id, scope, branch, session_id, integration, as_utc(at)),
            )

    def cited_in_session(self, session_id: str) -> list[int]:
        """The memories cited in a session (a cairn session or an agent's), each once."""
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT memory_id FROM cites WHERE session_id = %(session)s"
                " ORDER BY memory_id",
                {"session": session_id},
            ).fetchall()
        return [int(row[0]) for row in rows]

    def cited_on_branch(self, scope: str, branch: str) -> list[int]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT memory_id FROM cites WHERE (scope = %(scope)s"
                " AND branch = %(branch)s) OR session_id IN (SELECT id FROM sessions"
                " WHERE scope = %(scope)s AND branch = %(branch)s) ORDER BY memory_id",
                {"scope": scope, "branch": branch},
            ).fetchall()
        return [int(row[0]) for row in rows]

    def cites_in(self, scopes: Sequence[str] | None) -> list[tuple[int, str | None, datetime]]:
        """(memory id, scope, time) of every cite made in `scopes` (all when None)."""
        where, params = _scoped("scope", scopes)
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT memory_id, scope, at FROM cites WHERE {where} ORDER BY id", params
            ).fetchall()
        return [(int(m), s, utc(a)) for m, s, a in rows]

    def events_of_kind(self, kinds: Sequence[str], scopes: Sequence[str] | None) -> list[Event]:
        where, params = _scoped("scope", scopes)
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE kind = ANY(%(kinds)s::text[])"
                f" AND {where} ORDER BY id",
                {**params, "kinds": list(kinds)},
            ).fetchall()
        return [event_from_row(row) for row in rows]

    # acts ---------------------------------------------------------------------------------
    def add_act(self, act: NewAct) -> int:
        with self._db.transaction() as conn:
            row = conn.execute(
                "INSERT INTO acts (scope, kind, subject, at, integration, effects, detail)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (act.scope, act.kind, act.subject, as_utc(act.at), act.integration,
                 json_value([dict(e) for e in act.effects]), json_value(dict(act.detail))),
            ).fetchone()  # fmt: skip
        return int(row[0]) if row else 0

    def get_act(self, act_id: int) -> ActRow | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {ACT_COLUMNS} FROM acts WHERE id = %s", (act_id,)
            ).fetchone()
        return None if row is None else _act(row)

    def acts_in(self, scope: str, kinds: Sequence[str], limit: int) -> list[ActRow]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {ACT_COLUMNS} FROM acts WHERE scope = %s AND kind = ANY(%s::text[])"
                " ORDER BY id DESC LIMIT %s",
                (scope, list(kinds), limit),
            ).fetchall()
        return [_act(row) for row in rows]

    def mark_act_undone(self, act_id: int, at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute("UPDATE acts SET undone_at = %s WHERE id = %s", (as_utc(at), act_id))

    # lifecycle ----------------------------------------------------------------------------
    def idle_memories(self, scopes: Sequence[str], before: datetime) -> list[Memory]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope = ANY(%(scopes)s::text[])"
                " AND m.status = 'active' AND m.until IS NULL AND NOT m.pinned"
                " AND m.type <> 'preference' AND m.written_at < %(before)s"
                " AND (m.last_cited_at IS NULL OR m.last_cited_at < %(before)s) ORDER BY m.id",
                {"scopes": list(scopes), "before": as_utc(before)},
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def current_memories(
        self,
        scopes: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        statuses: Sequence[str] = ("active",),
        limit: int = 2000,
    ) -> list[Memory]:
        clauses = [
            "m.scope = ANY(%(scopes)s::text[])",
            "m.until IS NULL",
            "m.status = ANY(%(statuses)s::text[])",
        ]
        params: dict[str, Any] = {"scopes": list(scopes), "statuses": list(statuses)}
        if types is not None:
            clauses.append("m.type = ANY(%(types)s::text[])")
            params["types"] = list(types)
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {' AND '.join(clauses)}"
                " ORDER BY m.id DESC LIMIT %(limit)s",
                {**params, "limit": limit},
            ).fetchall()
        return [memory_from_row(row) for row in rows]

    def index_health(self, scopes: Sequence[str] | None) -> dict[str, Any]:
        where, params = _scoped("m.scope", scopes)
        with self._db.connection() as conn:
            counts = conn.execute(
                "SELECT count(*),"
                " count(*) FILTER (WHERE NOT EXISTS"
                " (SELECT 1 FROM vectors v WHERE v.memory_id = m.id)),"
                " count(*) FILTER (WHERE NOT EXISTS"
                " (SELECT 1 FROM lexical l WHERE l.memory_id = m.id)),"
                f" max(m.written_at) FROM memories m WHERE {_CURRENT} AND {where}",
                params,
            ).fetchone() or (0, 0, 0, None)
            identities = conn.execute(
                "SELECT v.identity, count(*) FROM vectors v JOIN memories m ON m.id = v.memory_id"
                f" WHERE {_CURRENT} AND {where} GROUP BY v.identity",
                params,
            ).fetchall()
        current, no_vector, no_lexical, newest = counts
        return {
            "current": int(current or 0),
            "without_vector": int(no_vector or 0),
            "without_lexical": int(no_lexical or 0),
            "newest_write": opt_utc(newest),
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
        select = f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE scope = %s AND key = %s"
        with self._db.transaction() as conn:
            row = conn.execute(select, (scope, key)).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO tidy_proposals (scope, kind, key, memory_ids, payload, status,"
                    " created_at) VALUES (%s, %s, %s, %s, %s, 'open', %s)",
                    (scope, kind, key, [int(i) for i in memory_ids], json_value(dict(payload)),
                     as_utc(at)),
                )  # fmt: skip
            elif row[6] in ("open", "stale"):
                conn.execute(
                    "UPDATE tidy_proposals SET payload = %s, memory_ids = %s, status = 'open'"
                    " WHERE id = %s",
                    (json_value(dict(payload)), [int(i) for i in memory_ids], row[0]),
                )
            fresh = conn.execute(select, (scope, key)).fetchone()
        if fresh is None:  # the row was written just above in this transaction
            raise StoreError(f"tidy proposal {scope}/{key} vanished inside its transaction; retry.")
        return _proposal(fresh)

    def get_proposal(self, proposal_id: int) -> ProposalRow | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE id = %s", (proposal_id,)
            ).fetchone()
        return None if row is None else _proposal(row)

    def proposals(self, scope: str, statuses: Sequence[str]) -> list[ProposalRow]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE scope = %s"
                " AND status = ANY(%s::text[]) ORDER BY id",
                (scope, list(statuses)),
            ).fetchall()
        return [_proposal(row) for row in rows]

    def set_proposal_status(self, proposal_id: int, status: str, at: datetime | None) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE tidy_proposals SET status = %s, decided_at = %s WHERE id = %s",
                (status, opt_param(at), proposal_id),
            )


def _citation(row: Sequence[Any]) -> CitationRow:
    (mid, scope, kind, path, symbol, commit, root, start, end, digest, prints, file_hash,
     created) = row  # fmt: skip
    return CitationRow(
        memory_id=mid, scope=scope, kind=kind, path=path, symbol=symbol, commit=commit,
        root=root, start_line=start, end_line=end, digest=digest,
        line_hashes=tuple(prints.get("lines", ())), before=tuple(prints.get("before", ())),
        after=tuple(prints.get("after", ())), file_hash=file_hash, created_at=utc(created),
    )  # fmt: skip


def _act(row: Sequence[Any]) -> ActRow:
    aid, scope, kind, subject, at, integration, effects, detail, undone = row
    return ActRow(
        aid, scope, kind, subject, utc(at), integration, tuple(effects), dict(detail),
        opt_utc(undone),
    )  # fmt: skip


def _proposal(row: Sequence[Any]) -> ProposalRow:
    pid, scope, kind, key, ids, payload, status, created, decided = row
    return ProposalRow(
        pid, scope, kind, key, tuple(int(i) for i in ids), dict(payload), status, utc(created),
        opt_utc(decided),
    )  # fmt: skip


def _scoped(column: str, scopes: Sequence[str] | None) -> tuple[str, dict[str, Any]]:
    if scopes is None:
        return "TRUE", {}
    return f"{column} = ANY(%(scopes)s::text[])", {"scopes": list(scopes)}


def _prefixed(columns: str, alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))
