"""The session layer on either SQL backend: sessions, retrievals, assessments, episodes,
relations between memories, the trace (events read by scope and time) and brief selections.

A mixin of the SQL stores. Like the rest of the store it only persists and looks up; the rules
(who may commit, what feedback means) live in `cairn.sessions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.models import Event, Memory
from cairn.records.sessions import (
    Episode,
    NewEpisode,
    Relation,
    Retrieval,
    Session,
    StoredAssessment,
)
from cairn.store.sql.dialect import Sql
from cairn.store.sql.records import Columns
from cairn.store.sql.rows import EVENTS, MEMORY_COLUMNS, memory_from_row

SESSIONS = Columns("sessions", Session)
RETRIEVALS = Columns("retrievals", Retrieval)
ASSESSMENTS = Columns("assessments", StoredAssessment)
EPISODES = Columns("episodes", Episode)
NEW_EPISODES = Columns("episodes", NewEpisode)
# A relation between two memories; the same pair and kind twice is one relation.
ADD_RELATION = (
    "INSERT INTO relations (from_id, to_id, kind, at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
SESSION_UPDATABLE = frozenset({"status", "closed_at", "task_context", "episode_id"})


class SessionRows:
    _sql: Sql

    # sessions -----------------------------------------------------------------------------
    def add_session(self, session: Session) -> None:
        self._sql.run(SESSIONS.insert(), SESSIONS.values(self._sql.dialect, session))

    def get_session(self, session_id: str) -> Session | None:
        row = self._sql.one(SESSIONS.select("WHERE id = ?"), (session_id,))
        return None if row is None else SESSIONS.read(self._sql.dialect, row)

    def update_session(self, session_id: str, changes: Mapping[str, Any]) -> None:
        columns, values = SESSIONS.assign(self._sql.dialect, changes, SESSION_UPDATABLE, "session")
        if not columns:
            return
        self._sql.run(f"UPDATE sessions SET {columns} WHERE id = ?", (*values, session_id))

    # retrievals and assessments -----------------------------------------------------------
    def add_retrieval(self, retrieval: Retrieval) -> None:
        self._sql.run(RETRIEVALS.insert(), RETRIEVALS.values(self._sql.dialect, retrieval))

    def get_retrieval(self, retrieval_id: int) -> Retrieval | None:
        row = self._sql.one(RETRIEVALS.select("WHERE id = ?"), (retrieval_id,))
        return None if row is None else RETRIEVALS.read(self._sql.dialect, row)

    def session_retrievals(self, session_id: str) -> list[Retrieval]:
        rows = self._sql.all(RETRIEVALS.select("WHERE session_id = ? ORDER BY id"), (session_id,))
        return [RETRIEVALS.read(self._sql.dialect, row) for row in rows]

    def mark_feedback(self, retrieval_id: int, at: datetime) -> None:
        self._sql.run(
            "UPDATE retrievals SET feedback_at = ? WHERE id = ?",
            (self._sql.dialect.time(at), retrieval_id),
        )

    def put_assessment(self, assessment: StoredAssessment) -> StoredAssessment | None:
        d = self._sql.dialect
        with self._sql.write() as run:
            row = run.one(
                ASSESSMENTS.select("WHERE retrieval_id = ? AND ref = ?"),
                (assessment.retrieval_id, assessment.ref),
            )
            run.execute(
                ASSESSMENTS.insert(
                    " ON CONFLICT (retrieval_id, ref) DO UPDATE SET session_id ="
                    " excluded.session_id, used = excluded.used, effect = excluded.effect,"
                    " at = excluded.at"
                ),
                ASSESSMENTS.values(d, assessment),
            )
        return None if row is None else ASSESSMENTS.read(d, row)

    def session_assessments(self, session_id: str) -> list[StoredAssessment]:
        rows = self._sql.all(
            ASSESSMENTS.select("WHERE session_id = ? ORDER BY at, retrieval_id, ref"),
            (session_id,),
        )
        return [ASSESSMENTS.read(self._sql.dialect, row) for row in rows]

    # episodes -----------------------------------------------------------------------------
    def add_episode(self, episode: NewEpisode) -> int:
        return self._sql.insert(
            NEW_EPISODES.insert(), NEW_EPISODES.values(self._sql.dialect, episode)
        )

    def get_episodes(self, ids: Sequence[int]) -> list[Episode]:
        rows = self._sql.select_in(EPISODES.select("WHERE {among}"), "id", ids)
        found = {int(row[0]): EPISODES.read(self._sql.dialect, row) for row in rows}
        return [found[i] for i in ids if i in found]

    def episodes_for_sessions(self, session_ids: Sequence[str]) -> list[Episode]:
        rows = self._sql.select_in(
            EPISODES.select("WHERE {among} ORDER BY id"), "session_id", session_ids, "text"
        )
        return [EPISODES.read(self._sql.dialect, row) for row in rows]

    # relations ----------------------------------------------------------------------------
    def add_relation(self, from_id: int, to_id: int, kind: str, at: datetime) -> None:
        self._sql.run(ADD_RELATION, (from_id, to_id, kind, self._sql.dialect.time(at)))

    def relations_of(self, ids: Sequence[int]) -> list[Relation]:
        d = self._sql.dialect
        found: dict[tuple[int, int, str], Relation] = {}
        with self._sql.read() as run:
            for chunk in d.chunks(ids):
                # Both engines read an OR of the two keys through both indexes.
                from_ids, params = d.among("from_id", chunk)
                to_ids, _ = d.among("to_id", chunk)
                rows = run.all(
                    f"SELECT from_id, to_id, kind FROM relations WHERE {from_ids} OR {to_ids}",
                    (*params, *params),
                )
                found.update(((a, b, k), Relation(int(a), int(b), str(k))) for a, b, k in rows)
        return sorted(found.values(), key=lambda r: (r.from_id, r.to_id, r.kind))

    # trace --------------------------------------------------------------------------------
    def trace_before(self, scope: str, at: datetime | None, limit: int) -> list[Event]:
        """Events of the scope at or before `at` (all when None), newest first."""
        d = self._sql.dialect
        bound, params = ("", ()) if at is None else (" AND at <= ?", (d.time(at),))
        rows = self._sql.all(
            f"SELECT {EVENTS.columns} FROM events WHERE scope = ?{bound} "
            "ORDER BY at DESC, id DESC LIMIT ?",
            (scope, *params, limit),
        )
        return [EVENTS.read(d, row) for row in rows]

    def trace_after(self, scope: str, at: datetime, limit: int) -> list[Event]:
        """Events of the scope strictly after `at`, oldest first."""
        d = self._sql.dialect
        rows = self._sql.all(
            f"SELECT {EVENTS.columns} FROM events WHERE scope = ? AND at > ? "
            "ORDER BY at, id LIMIT ?",
            (scope, d.time(at), limit),
        )
        return [EVENTS.read(d, row) for row in rows]

    # brief selections ---------------------------------------------------------------------
    def select_memories(
        self,
        scopes: Sequence[str],
        *,
        types: Sequence[str] | None,
        pinned_only: bool,
        limit: int,
    ) -> list[Memory]:
        """Current active memories by importance: pinned first, then weight, then newest."""
        d = self._sql.dialect
        among, params = d.among("scope", scopes, "text")
        clauses = [among, "status = 'active'", "until IS NULL"]
        if types is not None:
            of_type, more = d.among("type", types, "text")
            clauses.append(of_type)
            params.extend(more)
        if pinned_only:
            clauses.append("pinned = ?")
            params.append(d.flag(True))
        rows = self._sql.all(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(clauses)} "
            "ORDER BY pinned DESC, weight DESC, id DESC LIMIT ?",
            (*params, limit),
        )
        return [memory_from_row(d, row) for row in rows]
