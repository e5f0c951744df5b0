"""PostgreSQL persistence of lessons on tool calls (migration 0005): citations by path, lessons
given per session, per-scope mute rules and agent sessions.

A mixin of `PostgresStore`, statement for statement the SQLite backend's `LessonRows`. A
citation path "holds glob characters" when it matches `[*?[]`, what SQLite's `GLOB '*[*?[]*'`
asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from cairn.records.code import CitationRow
from cairn.records.lessons import GivenLesson, LessonSession, MuteRule
from cairn.store.postgres.code import CITATION_COLUMNS, _citation, _prefixed
from cairn.store.postgres.connection import Database
from cairn.store.postgres.rows import opt_utc, utc
from cairn.timeutil import as_utc

MUTE_COLUMNS = "id, scope, kind, value, created_at, integration"
GIVEN_COLUMNS = "session_key, subject, target, kind, scope, at"
_CURRENT = "m.until IS NULL AND m.status IN ('active', 'resting')"
_LIMIT = 200


class LessonRows:
    _db: Database

    def citations_on_paths(
        self, scopes: Sequence[str], exact: Sequence[str], under: Sequence[str]
    ) -> list[CitationRow]:
        paths = list(dict.fromkeys(exact))[:_LIMIT]
        prefixes = [d.strip("/") + "/" for d in dict.fromkeys(under) if d.strip("/")][:_LIMIT]
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_prefixed(CITATION_COLUMNS, 'c')} FROM citations c"
                " JOIN memories m ON m.id = c.memory_id"
                f" WHERE m.scope = ANY(%(scopes)s::text[]) AND {_CURRENT} AND c.path IS NOT NULL"
                " AND (c.path ~ '[*?[]' OR c.path = ANY(%(paths)s::text[])"
                " OR c.path ^@ ANY(%(prefixes)s::text[]))"
                " ORDER BY c.memory_id",
                {"scopes": list(scopes), "paths": paths, "prefixes": prefixes},
            ).fetchall()
        return [_citation(row) for row in rows]

    # given lessons ------------------------------------------------------------------------
    def add_given_lessons(self, rows: Sequence[GivenLesson]) -> None:
        if not rows:
            return
        with self._db.transaction() as conn:
            for r in rows:
                conn.execute(
                    f"INSERT INTO lessons_given ({GIVEN_COLUMNS})"
                    " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (r.session_key, r.subject, r.target, r.kind, r.scope, as_utc(r.at)),
                )

    def given_lessons(self, session_key: str) -> list[GivenLesson]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {GIVEN_COLUMNS} FROM lessons_given WHERE session_key = %s ORDER BY at",
                (session_key,),
            ).fetchall()
        return [
            GivenLesson(key, subject, target, kind, scope, utc(at))
            for key, subject, target, kind, scope, at in rows
        ]

    def forget_given_lessons(self, session_key: str) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM lessons_given WHERE session_key = %s", (session_key,))
            return cur.rowcount

    # mute rules ---------------------------------------------------------------------------
    def add_mute(
        self, scope: str, kind: str, value: str, at: datetime, integration: str | None
    ) -> tuple[MuteRule, bool]:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO lesson_mutes (scope, kind, value, created_at, integration)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (scope, kind, value) DO NOTHING",
                (scope, kind, value, as_utc(at), integration),
            )
            row = conn.execute(
                f"SELECT {MUTE_COLUMNS} FROM lesson_mutes"
                " WHERE scope = %s AND kind = %s AND value = %s",
                (scope, kind, value),
            ).fetchone()
        assert row is not None
        return _mute(row), cur.rowcount > 0

    def mute_rules(self, scopes: Sequence[str]) -> list[MuteRule]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {MUTE_COLUMNS} FROM lesson_mutes WHERE scope = ANY(%s::text[])"
                " ORDER BY id",
                (list(scopes),),
            ).fetchall()
        return [_mute(row) for row in rows]

    def remove_mute(self, scope: str, kind: str, value: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM lesson_mutes WHERE scope = %s AND kind = %s AND value = %s",
                (scope, kind, value),
            )
            return cur.rowcount > 0

    # agent sessions -----------------------------------------------------------------------
    def touch_lesson_session(
        self, session_key: str, scope: str | None, at: datetime, *, changed: bool
    ) -> None:
        moment = as_utc(at)
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO lesson_sessions (session_key, scope, seen_at, changed_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (session_key) DO UPDATE SET"
                " seen_at = EXCLUDED.seen_at,"
                " scope = COALESCE(EXCLUDED.scope, lesson_sessions.scope),"
                " changed_at = COALESCE(EXCLUDED.changed_at, lesson_sessions.changed_at)",
                (session_key, scope, moment, moment if changed else None),
            )

    def lesson_session(self, session_key: str) -> LessonSession | None:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT session_key, scope, seen_at, changed_at, reminded_at FROM lesson_sessions"
                " WHERE session_key = %s",
                (session_key,),
            ).fetchone()
        if row is None:
            return None
        key, scope, seen, changed, reminded = row
        return LessonSession(key, scope, utc(seen), opt_utc(changed), opt_utc(reminded))

    def mark_reminded(self, session_key: str, at: datetime) -> None:
        moment = as_utc(at)
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO lesson_sessions (session_key, seen_at, reminded_at)"
                " VALUES (%s, %s, %s) ON CONFLICT (session_key) DO UPDATE SET"
                " reminded_at = EXCLUDED.reminded_at",
                (session_key, moment, moment),
            )


def _mute(row: Sequence[Any]) -> MuteRule:
    rid, scope, kind, value, created, integration = row
    return MuteRule(int(rid), scope, kind, value, utc(created), integration)
