"""SQLite persistence of the session layer: sessions, retrievals, assessments, episodes,
relations between memories, the trace (events read by scope and time) and brief selections.

A mixin of `SqliteStore`, kept apart so the memory store stays readable. Like the rest of the
backend it only persists and looks up; the rules (who may commit, what feedback means) live in
`cairn.sessions`.
"""

from __future__ import annotations

import json
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
from cairn.store.sqlite.connection import Connections
from cairn.store.sqlite.rows import EVENT_COLUMNS, MEMORY_COLUMNS, event_from_row, memory_from_row
from cairn.store.sqlite.sql import chunks, marks
from cairn.timeutil import from_micros, to_micros

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
    _db: Connections

    # sessions -----------------------------------------------------------------------------
    def add_session(self, session: Session) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session.id,
                    session.scope,
                    session.task,
                    _dump(session.task_context),
                    session.status,
                    to_micros(session.opened_at),
                    _opt_micros(session.closed_at),
                    session.integration,
                    session.branch,
                    session.episode_id,
                ),
            )

    def get_session(self, session_id: str) -> Session | None:
        row = (
            self._db.get()
            .execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
            .fetchone()
        )
        return None if row is None else _session(row)

    def update_session(self, session_id: str, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - SESSION_UPDATABLE
        if unknown:
            raise InvalidInput(f"cannot update session fields {sorted(unknown)}")
        if not changes:
            return
        values = [_encode_session(column, value) for column, value in changes.items()]
        assignments = ", ".join(f"{column} = ?" for column in changes)
        with self._db.transaction() as conn:
            conn.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*values, session_id))

    # retrievals and assessments -----------------------------------------------------------
    def add_retrieval(self, retrieval: Retrieval) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                f"INSERT INTO retrievals ({RETRIEVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    retrieval.id,
                    retrieval.session_id,
                    to_micros(retrieval.at),
                    retrieval.source,
                    json.dumps(list(retrieval.refs)),
                    _opt_micros(retrieval.feedback_at),
                ),
            )

    def get_retrieval(self, retrieval_id: int) -> Retrieval | None:
        row = (
            self._db.get()
            .execute(f"SELECT {RETRIEVAL_COLUMNS} FROM retrievals WHERE id = ?", (retrieval_id,))
            .fetchone()
        )
        return None if row is None else _retrieval(row)

    def session_retrievals(self, session_id: str) -> list[Retrieval]:
        rows = self._db.get().execute(
            f"SELECT {RETRIEVAL_COLUMNS} FROM retrievals WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        return [_retrieval(row) for row in rows.fetchall()]

    def mark_feedback(self, retrieval_id: int, at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE retrievals SET feedback_at = ? WHERE id = ?", (to_micros(at), retrieval_id)
            )

    def put_assessment(self, assessment: StoredAssessment) -> StoredAssessment | None:
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT {ASSESSMENT_COLUMNS} FROM assessments WHERE retrieval_id = ? AND ref = ?",
                (assessment.retrieval_id, assessment.ref),
            ).fetchone()
            conn.execute(
                f"INSERT OR REPLACE INTO assessments ({ASSESSMENT_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    assessment.retrieval_id,
                    assessment.session_id,
                    assessment.ref,
                    int(assessment.used),
                    assessment.effect,
                    to_micros(assessment.at),
                ),
            )
        return None if row is None else _assessment(row)

    def session_assessments(self, session_id: str) -> list[StoredAssessment]:
        rows = self._db.get().execute(
            f"SELECT {ASSESSMENT_COLUMNS} FROM assessments WHERE session_id = ? "
            "ORDER BY at, retrieval_id, ref",
            (session_id,),
        )
        return [_assessment(row) for row in rows.fetchall()]

    # episodes -----------------------------------------------------------------------------
    def add_episode(self, episode: NewEpisode) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO episodes (session_id, scope, task, outcome, summary, procedure_id, "
                "started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    episode.session_id,
                    episode.scope,
                    episode.task,
                    episode.outcome,
                    episode.summary,
                    episode.procedure_id,
                    to_micros(episode.started_at),
                    to_micros(episode.ended_at),
                ),
            )
            return int(cur.lastrowid or 0)

    def get_episodes(self, ids: Sequence[int]) -> list[Episode]:
        found: dict[int, Episode] = {}
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN ({marks(chunk)})", chunk
            )
            found.update((row[0], _episode(row)) for row in rows)
        return [found[i] for i in ids if i in found]

    def episodes_for_sessions(self, session_ids: Sequence[str]) -> list[Episode]:
        found: list[Episode] = []
        for chunk in chunks(session_ids):
            rows = self._db.get().execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE session_id IN ({marks(chunk)}) "
                "ORDER BY id",
                chunk,
            )
            found.extend(_episode(row) for row in rows)
        return found

    # relations ----------------------------------------------------------------------------
    def add_relation(self, from_id: int, to_id: int, kind: str, at: datetime) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO relations (from_id, to_id, kind, at) VALUES (?, ?, ?, ?)",
                (from_id, to_id, kind, to_micros(at)),
            )

    def relations_of(self, ids: Sequence[int]) -> list[Relation]:
        found: dict[tuple[int, int, str], Relation] = {}
        for chunk in chunks(ids):
            holes = marks(chunk)
            rows = self._db.get().execute(
                f"SELECT from_id, to_id, kind FROM relations WHERE from_id IN ({holes}) "
                f"UNION SELECT from_id, to_id, kind FROM relations WHERE to_id IN ({holes})",
                (*chunk, *chunk),
            )
            found.update(((a, b, k), Relation(a, b, k)) for a, b, k in rows)
        return sorted(found.values(), key=lambda r: (r.from_id, r.to_id, r.kind))

    # trace --------------------------------------------------------------------------------
    def trace_before(self, scope: str, at: datetime | None, limit: int) -> list[Event]:
        """Events of the scope at or before `at` (all when None), newest first."""
        if at is None:
            rows = self._db.get().execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = ? ORDER BY at DESC, id DESC "
                "LIMIT ?",
                (scope, limit),
            )
        else:
            rows = self._db.get().execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = ? AND at <= ? "
                "ORDER BY at DESC, id DESC LIMIT ?",
                (scope, to_micros(at), limit),
            )
        return [event_from_row(row) for row in rows.fetchall()]

    def trace_after(self, scope: str, at: datetime, limit: int) -> list[Event]:
        """Events of the scope strictly after `at`, oldest first."""
        rows = self._db.get().execute(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = ? AND at > ? "
            "ORDER BY at, id LIMIT ?",
            (scope, to_micros(at), limit),
        )
        return [event_from_row(row) for row in rows.fetchall()]

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
        clauses = [f"scope IN ({marks(scopes)})", "status = 'active'", "until IS NULL"]
        params: list[Any] = list(scopes)
        if types is not None:
            clauses.append(f"type IN ({marks(types)})")
            params.extend(types)
        if pinned_only:
            clauses.append("pinned = 1")
        rows = self._db.get().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(clauses)} "
            "ORDER BY pinned DESC, weight DESC, id DESC LIMIT ?",
            (*params, limit),
        )
        return [memory_from_row(row) for row in rows.fetchall()]


def _session(row: tuple[Any, ...]) -> Session:
    sid, scope, task, context, status, opened, closed, integration, branch, episode = row
    return Session(
        id=sid,
        scope=scope,
        task=task,
        task_context=json.loads(context),
        status=status,
        opened_at=from_micros(opened),
        closed_at=_opt_time(closed),
        integration=integration,
        branch=branch,
        episode_id=episode,
    )


def _encode_session(column: str, value: Any) -> Any:
    if column == "task_context":
        return _dump(value)
    if column == "closed_at":
        return _opt_micros(value)
    return value


def _retrieval(row: tuple[Any, ...]) -> Retrieval:
    rid, session_id, at, source, refs, feedback_at = row
    return Retrieval(
        rid, session_id, from_micros(at), source, tuple(json.loads(refs)), _opt_time(feedback_at)
    )


def _assessment(row: tuple[Any, ...]) -> StoredAssessment:
    retrieval_id, session_id, ref, used, effect, at = row
    return StoredAssessment(retrieval_id, session_id, ref, bool(used), effect, from_micros(at))


def _episode(row: tuple[Any, ...]) -> Episode:
    eid, session_id, scope, task, outcome, summary, procedure_id, started, ended = row
    return Episode(
        eid,
        session_id,
        scope,
        task,
        outcome,
        summary,
        procedure_id,
        from_micros(started),
        from_micros(ended),
    )


def _dump(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value), ensure_ascii=False, sort_keys=True, default=str)


def _opt_micros(value: datetime | None) -> int | None:
    return None if value is None else to_micros(value)


def _opt_time(value: int | None) -> datetime | None:
    return None if value is None else from_micros(value)
