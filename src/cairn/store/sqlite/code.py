"""SQLite persistence of code awareness and the lifecycle (migration 0003): citations, branch
goals, acts, tidy proposals, and the lookups the brief, the acts, resting and stats need.

A mixin of `SqliteStore`. It only persists and looks up; what a citation's status is, what an
act does to a memory and when a memory rests are decided in `cairn.code` and `cairn.lifecycle`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.models import Event, Memory
from cairn.records.code import ActRow, BranchGoal, BriefSession, CitationRow, NewAct, ProposalRow
from cairn.store.sqlite.connection import Connections
from cairn.store.sqlite.rows import EVENT_COLUMNS, MEMORY_COLUMNS, event_from_row, memory_from_row
from cairn.store.sqlite.sql import chunks, marks
from cairn.timeutil import from_micros, to_micros

CITATION_COLUMNS = (
    "memory_id, scope, kind, path, symbol, commit_sha, root, start_line, end_line, digest, "
    "fingerprint, file_hash, created_at"
)
ACT_COLUMNS = "id, scope, kind, subject, at, integration, effects, detail, undone_at"
PROPOSAL_COLUMNS = "id, scope, kind, key, memory_ids, payload, status, created_at, decided_at"
_CURRENT = "m.until IS NULL AND m.status IN ('active', 'resting')"


class CodeRows:
    _db: Connections

    # citations ----------------------------------------------------------------------------
    def put_citation(self, citation: CitationRow) -> None:
        fingerprint = {
            "lines": list(citation.line_hashes),
            "before": list(citation.before),
            "after": list(citation.after),
        }
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO citations ({CITATION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    citation.memory_id, citation.scope, citation.kind, citation.path,
                    citation.symbol, citation.commit, citation.root, citation.start_line,
                    citation.end_line, citation.digest, json.dumps(fingerprint),
                    citation.file_hash, to_micros(citation.created_at),
                ),
            )  # fmt: skip

    def get_citations(self, memory_ids: Sequence[int]) -> dict[int, CitationRow]:
        found: dict[int, CitationRow] = {}
        ids = list(memory_ids)
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                f"SELECT {CITATION_COLUMNS} FROM citations WHERE memory_id IN ({marks(chunk)})",
                chunk,
            )
            found.update((row[0], _citation(row)) for row in rows.fetchall())
        return found

    def current_citations(self, scopes: Sequence[str] | None) -> list[CitationRow]:
        where, params = _scoped("m.scope", scopes)
        rows = self._db.get().execute(
            f"SELECT {_prefixed(CITATION_COLUMNS, 'c')} FROM citations c "
            f"JOIN memories m ON m.id = c.memory_id WHERE {_CURRENT} AND {where} "
            "ORDER BY c.memory_id",
            params,
        )
        return [_citation(row) for row in rows.fetchall()]

    def memories_citing_commit(self, scope: str, sha: str) -> list[int]:
        """Current memories of `scope` whose source_ref is this commit (either sha may be short)."""
        rows = self._db.get().execute(
            "SELECT c.memory_id FROM citations c JOIN memories m ON m.id = c.memory_id "
            f"WHERE c.kind = 'commit' AND m.scope = :scope AND {_CURRENT} AND length(:sha) >= 4 "
            # Exact prefix comparison: LIKE would read `_` and `%` in a sha as wildcards.
            "AND (substr(lower(c.commit_sha), 1, length(:sha)) = :sha "
            "OR substr(:sha, 1, length(c.commit_sha)) = lower(c.commit_sha)) ORDER BY c.memory_id",
            {"scope": scope, "sha": sha.lower()},
        )
        return [int(row[0]) for row in rows.fetchall()]

    def rewrite_commit_citations(self, pairs: Sequence[tuple[str, str]]) -> int:
        """Point commit citations at the commits a rebase or amend rewrote them into."""
        changed = 0
        with self._db.transaction() as conn:
            for old, new in pairs:
                cur = conn.execute(
                    "UPDATE citations SET commit_sha = ? WHERE kind = 'commit' AND commit_sha = ?",
                    (new, old),
                )
                changed += cur.rowcount
        return changed

    def citation_roots(self, scope: str, limit: int) -> list[str]:
        rows = self._db.get().execute(
            "SELECT root FROM citations WHERE scope = ? AND root IS NOT NULL "
            "GROUP BY root ORDER BY max(created_at) DESC LIMIT ?",
            (scope, limit),
        )
        return [str(row[0]) for row in rows.fetchall()]

    # branches -----------------------------------------------------------------------------
    def set_branch_goal(self, goal: BranchGoal) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO branch_goals (scope, branch, goal, set_at, integration, session_id) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (goal.scope, goal.branch, goal.goal, to_micros(goal.set_at), goal.integration,
                 goal.session_id),
            )  # fmt: skip

    def get_branch_goal(self, scope: str, branch: str) -> BranchGoal | None:
        row = (
            self._db.get()
            .execute(
                "SELECT scope, branch, goal, set_at, integration, session_id FROM branch_goals "
                "WHERE scope = ? AND branch = ? ORDER BY id DESC LIMIT 1",
                (scope, branch),
            )
            .fetchone()
        )
        if row is None:
            return None
        return BranchGoal(row[0], row[1], row[2], from_micros(row[3]), row[4], row[5])

    def branch_memories(
        self, scopes: Sequence[str], branch: str, types: Sequence[str], limit: int
    ) -> list[Memory]:
        rows = self._db.get().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope IN ({marks(scopes)}) "
            f"AND m.branch = ? AND m.type IN ({marks(types)}) AND m.status = 'active' "
            "AND m.until IS NULL ORDER BY m.written_at DESC, m.id DESC LIMIT ?",
            (*scopes, branch, *types, limit),
        )
        return [memory_from_row(row) for row in rows.fetchall()]

    def branch_sessions(self, scope: str, branch: str, limit: int) -> list[BriefSession]:
        conn = self._db.get()
        found: dict[str, BriefSession] = {}
        for sid, task, at, status in conn.execute(
            "SELECT id, task, COALESCE(closed_at, opened_at), status FROM sessions "
            "WHERE scope = ? AND branch = ? ORDER BY opened_at DESC LIMIT ?",
            (scope, branch, limit),
        ).fetchall():
            found[sid] = BriefSession(sid, task, from_micros(at), status)
        for sid, at in conn.execute(
            "SELECT session_id, max(written_at) FROM memories WHERE scope = ? AND branch = ? "
            "AND session_id IS NOT NULL GROUP BY session_id ORDER BY 2 DESC LIMIT ?",
            (scope, branch, limit),
        ).fetchall():
            known = found.get(sid)
            moment = from_micros(at)
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
                "INSERT INTO cites (memory_id, scope, branch, session_id, integration, at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (memory_id, scope, branch, session_id, integration, to_micros(at)),
            )

    def cited_in_session(self, session_id: str) -> list[int]:
        """The memories cited in a session (a cairn session or an agent's), each once."""
        rows = self._db.get().execute(
            "SELECT DISTINCT memory_id FROM cites WHERE session_id = ? ORDER BY memory_id",
            (session_id,),
        )
        return [int(row[0]) for row in rows.fetchall()]

    def cited_on_branch(self, scope: str, branch: str) -> list[int]:
        rows = self._db.get().execute(
            "SELECT DISTINCT memory_id FROM cites WHERE (scope = ? AND branch = ?) "
            "OR session_id IN (SELECT id FROM sessions WHERE scope = ? AND branch = ?) "
            "ORDER BY memory_id",
            (scope, branch, scope, branch),
        )
        return [int(row[0]) for row in rows.fetchall()]

    def cites_in(self, scopes: Sequence[str] | None) -> list[tuple[int, str | None, datetime]]:
        """(memory id, scope, time) of every cite made in `scopes` (all when None)."""
        where, params = _scoped("scope", scopes)
        rows = self._db.get().execute(
            f"SELECT memory_id, scope, at FROM cites WHERE {where} ORDER BY id", params
        )
        return [(int(m), s, from_micros(a)) for m, s, a in rows.fetchall()]

    def events_of_kind(self, kinds: Sequence[str], scopes: Sequence[str] | None) -> list[Event]:
        where, params = _scoped("scope", scopes)
        rows = self._db.get().execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE kind IN ({marks(kinds)}) AND {where} "
            "ORDER BY id",
            (*kinds, *params),
        )
        return [event_from_row(row) for row in rows.fetchall()]

    # acts ---------------------------------------------------------------------------------
    def add_act(self, act: NewAct) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO acts (scope, kind, subject, at, integration, effects, detail) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (act.scope, act.kind, act.subject, to_micros(act.at), act.integration,
                 _dump([dict(e) for e in act.effects]), _dump(dict(act.detail))),
            )  # fmt: skip
            return int(cur.lastrowid or 0)

    def get_act(self, act_id: int) -> ActRow | None:
        row = (
            self._db.get()
            .execute(f"SELECT {ACT_COLUMNS} FROM acts WHERE id = ?", (act_id,))
            .fetchone()
        )
        return None if row is None else _act(row)

    def acts_in(self, scope: str, kinds: Sequence[str], limit: int) -> list[ActRow]:
        rows = self._db.get().execute(
            f"SELECT {ACT_COLUMNS} FROM acts WHERE scope = ? AND kind IN ({marks(kinds)}) "
            "ORDER BY id DESC LIMIT ?",
            (scope, *kinds, limit),
        )
        return [_act(row) for row in rows.fetchall()]

    def mark_act_undone(self, act_id: int, at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute("UPDATE acts SET undone_at = ? WHERE id = ?", (to_micros(at), act_id))

    # lifecycle ----------------------------------------------------------------------------
    def idle_memories(self, scopes: Sequence[str], before: datetime) -> list[Memory]:
        moment = to_micros(before)
        rows = self._db.get().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.scope IN ({marks(scopes)}) "
            "AND m.status = 'active' AND m.until IS NULL AND m.pinned = 0 "
            "AND m.type != 'preference' AND m.written_at < ? "
            "AND (m.last_cited_at IS NULL OR m.last_cited_at < ?) ORDER BY m.id",
            (*scopes, moment, moment),
        )
        return [memory_from_row(row) for row in rows.fetchall()]

    def current_memories(
        self,
        scopes: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        statuses: Sequence[str] = ("active",),
        limit: int = 2000,
    ) -> list[Memory]:
        clauses = [
            f"m.scope IN ({marks(scopes)})",
            "m.until IS NULL",
            f"m.status IN ({marks(statuses)})",
        ]
        params: list[Any] = [*scopes, *statuses]
        if types is not None:
            clauses.append(f"m.type IN ({marks(types)})")
            params.extend(types)
        rows = self._db.get().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {' AND '.join(clauses)} "
            "ORDER BY m.id DESC LIMIT ?",
            (*params, limit),
        )
        return [memory_from_row(row) for row in rows.fetchall()]

    def index_health(self, scopes: Sequence[str] | None) -> dict[str, Any]:
        where, params = _scoped("m.scope", scopes)
        conn = self._db.get()
        current, no_vector, no_lexical, newest = conn.execute(
            "SELECT count(*), "
            "sum(NOT EXISTS (SELECT 1 FROM vectors v WHERE v.memory_id = m.id)), "
            "sum(NOT EXISTS (SELECT 1 FROM lexical_lengths l WHERE l.memory_id = m.id)), "
            f"max(m.written_at) FROM memories m WHERE {_CURRENT} AND {where}",
            params,
        ).fetchone()
        identities = conn.execute(
            "SELECT v.identity, count(*) FROM vectors v JOIN memories m ON m.id = v.memory_id "
            f"WHERE {_CURRENT} AND {where} GROUP BY v.identity",
            params,
        ).fetchall()
        return {
            "current": int(current or 0),
            "without_vector": int(no_vector or 0),
            "without_lexical": int(no_lexical or 0),
            "newest_write": None if newest is None else from_micros(newest),
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
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE scope = ? AND key = ?",
                (scope, key),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO tidy_proposals (scope, kind, key, memory_ids, payload, status, "
                    "created_at) VALUES (?, ?, ?, ?, ?, 'open', ?)",
                    (scope, kind, key, _dump(list(memory_ids)), _dump(dict(payload)),
                     to_micros(at)),
                )  # fmt: skip
            elif row[6] in ("open", "stale"):
                conn.execute(
                    "UPDATE tidy_proposals SET payload = ?, memory_ids = ?, status = 'open' "
                    "WHERE id = ?",
                    (_dump(dict(payload)), _dump(list(memory_ids)), row[0]),
                )
            fresh = conn.execute(
                f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE scope = ? AND key = ?",
                (scope, key),
            ).fetchone()
        return _proposal(fresh)

    def get_proposal(self, proposal_id: int) -> ProposalRow | None:
        row = (
            self._db.get()
            .execute(f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE id = ?", (proposal_id,))
            .fetchone()
        )
        return None if row is None else _proposal(row)

    def proposals(self, scope: str, statuses: Sequence[str]) -> list[ProposalRow]:
        rows = self._db.get().execute(
            f"SELECT {PROPOSAL_COLUMNS} FROM tidy_proposals WHERE scope = ? "
            f"AND status IN ({marks(statuses)}) ORDER BY id",
            (scope, *statuses),
        )
        return [_proposal(row) for row in rows.fetchall()]

    def set_proposal_status(self, proposal_id: int, status: str, at: datetime | None) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE tidy_proposals SET status = ?, decided_at = ? WHERE id = ?",
                (status, None if at is None else to_micros(at), proposal_id),
            )


def _citation(row: tuple[Any, ...]) -> CitationRow:
    (mid, scope, kind, path, symbol, commit, root, start, end, digest, fingerprint, file_hash,
     created) = row  # fmt: skip
    prints = json.loads(fingerprint)
    return CitationRow(
        memory_id=mid, scope=scope, kind=kind, path=path, symbol=symbol, commit=commit,
        root=root, start_line=start, end_line=end, digest=digest,
        line_hashes=tuple(prints.get("lines", ())), before=tuple(prints.get("before", ())),
        after=tuple(prints.get("after", ())), file_hash=file_hash,
        created_at=from_micros(created),
    )  # fmt: skip


def _act(row: tuple[Any, ...]) -> ActRow:
    aid, scope, kind, subject, at, integration, effects, detail, undone = row
    return ActRow(
        aid, scope, kind, subject, from_micros(at), integration,
        tuple(json.loads(effects)), json.loads(detail),
        None if undone is None else from_micros(undone),
    )  # fmt: skip


def _proposal(row: tuple[Any, ...]) -> ProposalRow:
    pid, scope, kind, key, ids, payload, status, created, decided = row
    return ProposalRow(
        pid, scope, kind, key, tuple(json.loads(ids)), json.loads(payload), status,
        from_micros(created), None if decided is None else from_micros(decided),
    )  # fmt: skip


def _scoped(column: str, scopes: Sequence[str] | None) -> tuple[str, tuple[Any, ...]]:
    if scopes is None:
        return "1 = 1", ()
    return f"{column} IN ({marks(scopes)})", tuple(scopes)


def _prefixed(columns: str, alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
