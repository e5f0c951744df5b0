"""PostgreSQL persistence of the session layer: sessions, retrievals, assessments, episodes,
relations between memories, the trace (events read by scope and time) and brief selections.

A mixin of `PostgresStore`, statement for statement the SQLite backend's `SessionRows`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.errors import InvalidInput
from cairn.models import Event, Memory
from cairn.records.sessions import (
    Episode,
    NewEpisode,
    Relation,
    Retrieval,
    Session,
    StoredAssessment,
)
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

SESSION_COLUMNS = (
    "id, scope, task, task_context, status, opened_at, closed_at, integration, branch, episode_id"
)
RETRIEVAL_COLUMNS = "id, session_id, at, source, refs, feedback_at"
ASSESSMENT_COLUMNS = "retrieval_id, session_id, ref, used, effect, at"
EPISODE_COLUMNS = (
    "id, session_id, scope, task, outcome, summary, procedure_id, started_at, ended_at"
)
SESSION_UPDATABLE = frozenset({"status", "closed_at", "task_context", "episode_id"})


class SessionRows:
    _db: Database

    # sessions -----------------------------------------------------------------------------
    def add_session(self, session: Session) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO sessions ({SESSION_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    session.id,
                    session.scope,
                    session.task,
                    json_value(dict(session.task_context)),
                    session.status,
                    as_utc(session.opened_at),
                    opt_param(session.closed_at),
                    session.integration,
                    session.branch,
                    session.episode_id,
                ),
            )

    def get_session(self, session_id: str) -> Session | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,)
            ).fetchone()
        return None if row is None else _session(row)

    def update_session(self, session_id: str, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - SESSION_UPDATABLE
        if unknown:
            raise InvalidInput(f"cannot update session fields {sorted(unknown)}")
        if not changes:
            return
        params = {column: _encode_session(column, value) for column, value in changes.items()}
        assignments = ", ".join(f"{column} = %({column})s" for column in changes)
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE sessions SET {assignments} WHERE id = %(session_id)s",
                {**params, "session_id": session_id},
            )

    # retrievals and assessments -----------------------------------------------------------
    def add_retrieval(self, retrieval: Retrieval) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO retrievals ({RETRIEVAL_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    retrieval.id,
                    retrieval.session_id,
                    as_utc(retrieval.at),
                    retrieval.source,
                    list(retrieval.refs),
                    opt_param(retrieval.feedback_at),
                ),
            )

    def get_retrieval(self, retrieval_id: int) -> Retrieval | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {RETRIEVAL_COLUMNS} FROM retrievals WHERE id = %s", (retrieval_id,)
            ).fetchone()
        return None if row is None else _retrieval(row)

    def session_retrievals(self, session_id: str) -> list[Retrieval]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {RETRIEVAL_COLUMNS} FROM retrievals WHERE session_id = %s ORDER BY id",
                (session_id,),
            ).fetchall()
        return [_retrieval(row) for row in rows]

    def mark_feedback(self, retrieval_id: int, at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE retrievals SET feedback_at = %s WHERE id = %s", (as_utc(at), retrieval_id)
            )

    def put_assessment(self, assessment: StoredAssessment) -> StoredAssessment | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT {ASSESSMENT_COLUMNS} FROM assessments"
                " WHERE retrieval_id = %s AND ref = %s",
                (assessment.retrieval_id, assessment.ref),
            ).fetchone()
            conn.execute(
                f"INSERT INTO assessments ({ASSESSMENT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (retrieval_id, ref) DO UPDATE SET session_id = EXCLUDED.session_id,"
                " used = EXCLUDED.used, effect = EXCLUDED.effect, at = EXCLUDED.at",
                (
                    assessment.retrieval_id,
                    assessment.session_id,
                    assessment.ref,
                    bool(assessment.used),
                    assessment.effect,
                    as_utc(assessment.at),
                ),
            )
        return None if row is None else _assessment(row)

    def session_assessments(self, session_id: str) -> list[StoredAssessment]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {ASSESSMENT_COLUMNS} FROM assessments WHERE session_id = %s"
                " ORDER BY at, retrieval_id, ref",
                (session_id,),
            ).fetchall()
        return [_assessment(row) for row in rows]

    # episodes -----------------------------------------------------------------------------
    def add_episode(self, episode: NewEpisode) -> int:
        with self._db.transaction() as conn:
            row = conn.execute(
                "INSERT INTO episodes (session_id, scope, task, outcome, summary, procedure_id,"
                " started_at, ended_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    episode.session_id,
                    episode.scope,
                    episode.task,
                    episode.outcome,
                    episode.summary,
                    episode.procedure_id,
                    as_utc(episode.started_at),
                    as_utc(episode.ended_at),
                ),
            ).fetchone()
        return int(row[0]) if row else 0

    def get_episodes(self, ids: Sequence[int]) -> list[Episode]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ANY(%s::bigint[])",
                (list(ids),),
            ).fetchall()
        found = {row[0]: _episode(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def episodes_for_sessions(self, session_ids: Sequence[str]) -> list[Episode]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE session_id = ANY(%s::text[])"
                " ORDER BY id",
                (list(session_ids),),
            ).fetchall()
        return [_episode(row) for row in rows]

    # relations ----------------------------------------------------------------------------
    def add_relation(self, from_id: int, to_id: int, kind: str, at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO relations (from_id, to_id, kind, at) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                (from_id, to_id, kind, as_utc(at)),
            )

    def relations_of(self, ids: Sequence[int]) -> list[Relation]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT from_id, to_id, kind FROM relations"
                " WHERE from_id = ANY(%(ids)s::bigint[]) OR to_id = ANY(%(ids)s::bigint[])"
                " ORDER BY from_id, to_id, kind",
                {"ids": list(ids)},
            ).fetchall()
        return [Relation(int(a), int(b), str(k)) for a, b, k in rows]

    # trace --------------------------------------------------------------------------------
    def trace_before(self, scope: str, at: datetime | None, limit: int) -> list[Event]:
        """Events of the scope at or before `at` (all when None), newest first."""
        bound = "" if at is None else " AND at <= %(at)s"
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = %(scope)s{bound}"
                " ORDER BY at DESC, id DESC LIMIT %(limit)s",
                {"scope": scope, "at": opt_param(at), "limit": limit},
            ).fetchall()
        return [event_from_row(row) for row in rows]

    def trace_after(self, scope: str, at: datetime, limit: int) -> list[Event]:
        """Events of the scope strictly after `at`, oldest first."""
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = %s AND at > %s"
                " ORDER BY at, id LIMIT %s",
                (scope, as_utc(at), limit),
            ).fetchall()
        return [event_from_row(row) for row in rows]

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
        clauses = ["scope = ANY(%(scopes)s::text[])", "status = 'active'", "until IS NULL"]
        params: dict[str, Any] = {"scopes": list(scopes), "limit": limit}
        if types is not None:
            clauses.append("type = ANY(%(types)s::text[])")
            params["types"] = list(types)
        if pinned_only:
            clauses.append("pinned")
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(clauses)}"
                " ORDER BY pinned DESC, weight DESC, id DESC LIMIT %(limit)s",
                params,
            ).fetchall()
        return [memory_from_row(row) for row in rows]


def _session(row: Sequence[Any]) -> Session:
    sid, scope, task, context, status, opened, closed, integration, branch, episode = row
    return Session(
        id=sid,
        scope=scope,
        task=task,
        task_context=dict(context),
        status=status,
        opened_at=utc(opened),
        closed_at=opt_utc(closed),
        integration=integration,
        branch=branch,
        episode_id=episode,
    )


def _encode_session(column: str, value: Any) -> Any:
    if column == "task_context":
        return json_value(dict(value))
    if column == "closed_at":
        return opt_param(value)
    return value


def _retrieval(row: Sequence[Any]) -> Retrieval:
    rid, session_id, at, source, refs, feedback_at = row
    return Retrieval(rid, session_id, utc(at), source, tuple(refs), opt_utc(feedback_at))


def _assessment(row: Sequence[Any]) -> StoredAssessment:
    retrieval_id, session_id, ref, used, effect, at = row
    return StoredAssessment(retrieval_id, session_id, ref, bool(used), effect, utc(at))


def _episode(row: Sequence[Any]) -> Episode:
    eid, session_id, scope, task, outcome, summary, procedure_id, started, ended = row
    return Episode(
        eid, session_id, scope, task, outcome, summary, procedure_id, utc(started), utc(ended)
    )
