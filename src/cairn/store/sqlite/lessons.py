"""SQLite persistence of lessons on tool calls (migration 0005): citations by path, lessons
given per session, per-scope mute rules and agent sessions.

A mixin of `SqliteStore`. What is worth saying before a call, and what a rule mutes, is decided
in `cairn.lessons`; this only persists and looks up.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from cairn.records.code import CitationRow
from cairn.records.lessons import GivenLesson, LessonSession, MuteRule
from cairn.store.sqlite.code import CITATION_COLUMNS, _citation, _prefixed
from cairn.store.sqlite.connection import Connections
from cairn.store.sqlite.sql import marks
from cairn.timeutil import from_micros, to_micros

MUTE_COLUMNS = "id, scope, kind, value, created_at, integration"
GIVEN_COLUMNS = "session_key, subject, target, kind, scope, at"
_CURRENT = "m.until IS NULL AND m.status IN ('active', 'resting')"
_CHUNK = 200


class LessonRows:
    _db: Connections

    def citations_on_paths(
        self, scopes: Sequence[str], exact: Sequence[str], under: Sequence[str]
    ) -> list[CitationRow]:
        paths = list(dict.fromkeys(exact))[:_CHUNK]
        dirs = [d.strip("/") for d in dict.fromkeys(under) if d.strip("/")][:_CHUNK]
        matches = ["c.path GLOB '*[*?[]*'"]
        params: list[Any] = list(scopes)
        if paths:
            matches.append(f"c.path IN ({marks(paths)})")
            params.extend(paths)
        for directory in dirs:
            matches.append("substr(c.path, 1, ?) = ?")
            params.extend([len(directory) + 1, directory + "/"])
        rows = self._db.get().execute(
            f"SELECT {_prefixed(CITATION_COLUMNS, 'c')} FROM citations c "
            f"JOIN memories m ON m.id = c.memory_id WHERE m.scope IN ({marks(scopes)}) "
            f"AND {_CURRENT} AND c.path IS NOT NULL AND ({' OR '.join(matches)}) "
            "ORDER BY c.memory_id",
            params,
        )
        return [_citation(row) for row in rows.fetchall()]

    # given lessons ------------------------------------------------------------------------
    def add_given_lessons(self, rows: Sequence[GivenLesson]) -> None:
        if not rows:
            return
        with self._db.transaction() as conn:
            conn.executemany(
                f"INSERT OR IGNORE INTO lessons_given ({GIVEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (r.session_key, r.subject, r.target, r.kind, r.scope, to_micros(r.at))
                    for r in rows
                ],
            )

    def given_lessons(self, session_key: str) -> list[GivenLesson]:
        rows = self._db.get().execute(
            f"SELECT {GIVEN_COLUMNS} FROM lessons_given WHERE session_key = ? ORDER BY at",
            (session_key,),
        )
        return [
            GivenLesson(key, subject, target, kind, scope, from_micros(at))
            for key, subject, target, kind, scope, at in rows.fetchall()
        ]

    def forget_given_lessons(self, session_key: str) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute("DELETE FROM lessons_given WHERE session_key = ?", (session_key,))
            return cur.rowcount

    # mute rules ---------------------------------------------------------------------------
    def add_mute(
        self, scope: str, kind: str, value: str, at: datetime, integration: str | None
    ) -> tuple[MuteRule, bool]:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO lesson_mutes (scope, kind, value, created_at, integration) "
                "VALUES (?, ?, ?, ?, ?)",
                (scope, kind, value, to_micros(at), integration),
            )
            row = conn.execute(
                f"SELECT {MUTE_COLUMNS} FROM lesson_mutes WHERE scope = ? AND kind = ? "
                "AND value = ?",
                (scope, kind, value),
            ).fetchone()
        return _mute(row), cur.rowcount > 0

    def mute_rules(self, scopes: Sequence[str]) -> list[MuteRule]:
        rows = self._db.get().execute(
            f"SELECT {MUTE_COLUMNS} FROM lesson_mutes WHERE scope IN ({marks(scopes)}) ORDER BY id",
            list(scopes),
        )
        return [_mute(row) for row in rows.fetchall()]

    def remove_mute(self, scope: str, kind: str, value: str) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM lesson_mutes WHERE scope = ? AND kind = ? AND value = ?",
                (scope, kind, value),
            )
            return cur.rowcount > 0

    # agent sessions -----------------------------------------------------------------------
    def touch_lesson_session(
        self, session_key: str, scope: str | None, at: datetime, *, changed: bool
    ) -> None:
        moment = to_micros(at)
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO lesson_sessions (session_key, scope, seen_at, changed_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET "
                "seen_at = excluded.seen_at, scope = COALESCE(excluded.scope, scope), "
                "changed_at = COALESCE(excluded.changed_at, changed_at)",
                (session_key, scope, moment, moment if changed else None),
            )

    def lesson_session(self, session_key: str) -> LessonSession | None:
        row = (
            self._db.get()
            .execute(
                "SELECT session_key, scope, seen_at, changed_at, reminded_at FROM lesson_sessions "
                "WHERE session_key = ?",
                (session_key,),
            )
            .fetchone()
        )
        if row is None:
            return None
        key, scope, seen, changed, reminded = row
        return LessonSession(key, scope, from_micros(seen), _opt(changed), _opt(reminded))

    def mark_reminded(self, session_key: str, at: datetime) -> None:
        moment = to_micros(at)
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO lesson_sessions (session_key, seen_at, reminded_at) VALUES (?, ?, ?) "
                "ON CONFLICT (session_key) DO UPDATE SET reminded_at = excluded.reminded_at",
                (session_key, moment, moment),
            )


def _mute(row: tuple[Any, ...]) -> MuteRule:
    rid, scope, kind, value, created, integration = row
    return MuteRule(int(rid), scope, kind, value, from_micros(created), integration)


def _opt(micros: int | None) -> datetime | None:
    return None if micros is None else from_micros(micros)
