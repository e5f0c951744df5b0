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
from cairn.store.sql.dialect import Dialect, Sql, assignments
from cairn.store.sql.rows import EVENT_COLUMNS, MEMORY_COLUMNS, event_from_row, memory_from_row

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
    _sql: Sql

    # sessions -----------------------------------------------------------------------------
    def add_session(self, session: Session) -> None:
        d = self._sql.dialect
        self._sql.run(
            f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                session.id,
                session.scope,
                session.task,
                d.json(dict(session.task_context)),
                session.status,
                d.time(session.opened_at),
                d.opt_time(session.closed_at),
                session.integration,
                session.branch,
                session.episode_id,
            ),
        )

    def get_session(self, session_id: str) -> Session | None:
        row = self._sql.one(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return None if row is None else _session(self._sql.dialect, row)

    def update_session(self, session_id: str, changes: Mapping[str, Any]) -> None:
        columns = assignments(changes, SESSION_UPDATABLE, "session")
        if not columns:
            return
        d = self._sql.dialect
        values = [_encode_session(d, column, value) for column, value in changes.items()]
        self._sql.run(f"UPDATE sessions SET {columns} WHERE id = ?", (*values, session_id))

    # retrievals and assessments -----------------------------------------------------------
    def add_retrieval(self, retrieval: Retrieval) -> None:
        d = self._sql.dialect
        self._sql.run(
            f"INSERT INTO retrievals ({RETRIEVAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (
                retrieval.id,
                retrieval.session_id,
                d.time(retrieval.at),
                retrieval.source,
                d.texts(retrieval.refs),
                d.opt_time(retrieval.feedback_at),
            ),
        )

    def get_retrieval(self, retrieval_id: int) -> Retrieval | None:
        row = self._sql.one(
            f"SELECT {RETRIEVAL_COLUMNS} FROM retrievals WHERE id = ?", (retrieval_id,)
        )
        return None if row is None else _retrieval(self._sql.dialect, row)

    def session_retrievals(self, session_id: str) -> list[Retrieval]:
        rows = self._sql.all(
            f"SELECT {RETRIEVAL_COLUMNS} FROM retrievals WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        return [_retrieval(self._sql.dialect, row) for row in rows]

    def mark_feedback(self, retrieval_id: int, at: datetime) -> None:
        self._sql.run(
            "UPDATE retrievals SET feedback_at = ? WHERE id = ?",
            (self._sql.dialect.time(at), retrieval_id),
        )

    def put_assessment(self, assessment: StoredAssessment) -> StoredAssessment | None:
        d = self._sql.dialect
        with self._sql.write() as run:
            row = run.one(
                f"SELECT {ASSESSMENT_COLUMNS} FROM assessments WHERE retrieval_id = ? AND ref = ?",
                (assessment.retrieval_id, assessment.ref),
            )
            run.execute(
                f"INSERT INTO assessments ({ASSESSMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (retrieval_id, ref) DO UPDATE SET session_id = excluded.session_id,"
                " used = excluded.used, effect = excluded.effect, at = excluded.at",
                (
                    assessment.retrieval_id,
                    assessment.session_id,
                    assessment.ref,
                    d.flag(assessment.used),
                    assessment.effect,
                    d.time(assessment.at),
                ),
            )
        return None if row is None else _assessment(d, row)

    def session_assessments(self, session_id: str) -> list[StoredAssessment]:
        rows = self._sql.all(
            f"SELECT {ASSESSMENT_COLUMNS} FROM assessments WHERE session_id = ? "
            "ORDER BY at, retrieval_id, ref",
            (session_id,),
        )
        return [_assessment(self._sql.dialect, row) for row in rows]

    # episodes -----------------------------------------------------------------------------
    def add_episode(self, episode: NewEpisode) -> int:
        d = self._sql.dialect
        return self._sql.insert(
            "INSERT INTO episodes (session_id, scope, task, outcome, summary, procedure_id, "
            "started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                episode.session_id,
                episode.scope,
                episode.task,
                episode.outcome,
                episode.summary,
                episode.procedure_id,
                d.time(episode.started_at),
                d.time(episode.ended_at),
            ),
        )

    def get_episodes(self, ids: Sequence[int]) -> list[Episode]:
        rows = self._sql.select_in(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {{among}}", "id", ids
        )
        found = {int(row[0]): _episode(self._sql.dialect, row) for row in rows}
        return [found[i] for i in ids if i in found]

    def episodes_for_sessions(self, session_ids: Sequence[str]) -> list[Episode]:
        rows = self._sql.select_in(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {{among}} ORDER BY id",
            "session_id",
            session_ids,
            "text",
        )
        return [_episode(self._sql.dialect, row) for row in rows]

    # relations ----------------------------------------------------------------------------
    def add_relation(self, from_id: int, to_id: int, kind: str, at: datetime) -> None:
        self._sql.run(
            "INSERT INTO relations (from_id, to_id, kind, at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (from_id, to_id, kind, self._sql.dialect.time(at)),
        )

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
            f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = ?{bound} "
            "ORDER BY at DESC, id DESC LIMIT ?",
            (scope, *params, limit),
        )
        return [event_from_row(d, row) for row in rows]

    def trace_after(self, scope: str, at: datetime, limit: int) -> list[Event]:
        """Events of the scope strictly after `at`, oldest first."""
        d = self._sql.dialect
        rows = self._sql.all(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE scope = ? AND at > ? "
            "ORDER BY at, id LIMIT ?",
            (scope, d.time(at), limit),
        )
        return [event_from_row(d, row) for row in rows]

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


def _session(d: Dialect, row: Sequence[Any]) -> Session:
    sid, scope, task, context, status, opened, closed, integration, branch, episode = row
    return Session(
        id=sid,
        scope=scope,
        task=task,
        task_context=dict(d.read_json(context)),
        status=status,
        opened_at=d.read_time(opened),
        closed_at=d.read_opt_time(closed),
        integration=integration,
        branch=branch,
        episode_id=episode,
    )


def _encode_session(d: Dialect, column: str, value: Any) -> Any:
    if column == "task_context":
        return d.json(dict(value))
    if column == "closed_at":
        return d.opt_time(value)
    return value


def _retrieval(d: Dialect, row: Sequence[Any]) -> Retrieval:
    rid, session_id, at, source, refs, feedback_at = row
    return Retrieval(
        rid, session_id, d.read_time(at), source, d.read_texts(refs), d.read_opt_time(feedback_at)
    )


def _assessment(d: Dialect, row: Sequence[Any]) -> StoredAssessment:
    retrieval_id, session_id, ref, used, effect, at = row
    return StoredAssessment(retrieval_id, session_id, ref, bool(used), effect, d.read_time(at))


def _episode(d: Dialect, row: Sequence[Any]) -> Episode:
    eid, session_id, scope, task, outcome, summary, procedure_id, started, ended = row
    return Episode(
        eid, session_id, scope, task, outcome, summary, procedure_id,
        d.read_time(started), d.read_time(ended),
    )  # fmt: skip
