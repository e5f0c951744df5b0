"""Lessons on tool calls (migration 0005) on either SQL backend: citations by path, lessons
given per session, per-scope mute rules and agent sessions.

A mixin of the SQL stores. What is worth saying before a call, and what a rule mutes, is decided
in `cairn.lessons`; this only persists and looks up.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cairn.records.code import CitationRow
from cairn.records.lessons import GivenLesson, LessonSession, MuteRule
from cairn.store.sql.code import CITATION_COLUMNS, CURRENT, citation_from_row, prefixed
from cairn.store.sql.dialect import Sql
from cairn.store.sql.records import Columns

MUTES = Columns("lesson_mutes", MuteRule)
GIVEN = Columns("lessons_given", GivenLesson)
SESSIONS = Columns("lesson_sessions", LessonSession)
_LIMIT = 200


class LessonRows:
    _sql: Sql

    def citations_on_paths(
        self, scopes: Sequence[str], exact: Sequence[str], under: Sequence[str]
    ) -> list[CitationRow]:
        d = self._sql.dialect
        paths = list(dict.fromkeys(exact))[:_LIMIT]
        dirs = [p.strip("/") for p in dict.fromkeys(under) if p.strip("/")][:_LIMIT]
        in_scopes, params = d.among("m.scope", scopes, "text")
        matches = [d.has_glob("c.path")]
        if paths:
            is_path, more = d.among("c.path", paths, "text")
            matches.append(is_path)
            params.extend(more)
        for directory in dirs:
            # Exact prefix comparison: LIKE would read `_` and `%` in a path as wildcards.
            matches.append("substr(c.path, 1, ?) = ?")
            params.extend([len(directory) + 1, directory + "/"])
        rows = self._sql.all(
            f"SELECT {prefixed(CITATION_COLUMNS, 'c')} FROM citations c "
            f"JOIN memories m ON m.id = c.memory_id WHERE {in_scopes} "
            f"AND {CURRENT} AND c.path IS NOT NULL AND ({' OR '.join(matches)}) "
            "ORDER BY c.memory_id",
            params,
        )
        return [citation_from_row(d, row) for row in rows]

    # given lessons ------------------------------------------------------------------------
    def add_given_lessons(self, rows: Sequence[GivenLesson]) -> None:
        if not rows:
            return
        d = self._sql.dialect
        with self._sql.write() as run:
            run.many(GIVEN.insert(" ON CONFLICT DO NOTHING"), [GIVEN.values(d, r) for r in rows])

    def given_lessons(self, session_key: str) -> list[GivenLesson]:
        rows = self._sql.all(GIVEN.select("WHERE session_key = ? ORDER BY at"), (session_key,))
        return [GIVEN.read(self._sql.dialect, row) for row in rows]

    def forget_given_lessons(self, session_key: str) -> int:
        return self._sql.run("DELETE FROM lessons_given WHERE session_key = ?", (session_key,))

    # mute rules ---------------------------------------------------------------------------
    def add_mute(
        self, scope: str, kind: str, value: str, at: datetime, integration: str | None
    ) -> tuple[MuteRule, bool]:
        d = self._sql.dialect
        with self._sql.write() as run:
            added = run.count(
                "INSERT INTO lesson_mutes (scope, kind, value, created_at, integration) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, kind, value) DO NOTHING",
                (scope, kind, value, d.time(at), integration),
            )
            row = run.one(
                MUTES.select("WHERE scope = ? AND kind = ? AND value = ?"), (scope, kind, value)
            )
        return MUTES.read(d, row), added > 0

    def mute_rules(self, scopes: Sequence[str]) -> list[MuteRule]:
        in_scopes, params = self._sql.dialect.among("scope", scopes, "text")
        rows = self._sql.all(MUTES.select(f"WHERE {in_scopes} ORDER BY id"), params)
        return [MUTES.read(self._sql.dialect, row) for row in rows]

    def remove_mute(self, scope: str, kind: str, value: str) -> bool:
        removed = self._sql.run(
            "DELETE FROM lesson_mutes WHERE scope = ? AND kind = ? AND value = ?",
            (scope, kind, value),
        )
        return removed > 0

    # agent sessions -----------------------------------------------------------------------
    def touch_lesson_session(
        self, session_key: str, scope: str | None, at: datetime, *, changed: bool
    ) -> None:
        moment = self._sql.dialect.time(at)
        self._sql.run(
            "INSERT INTO lesson_sessions (session_key, scope, seen_at, changed_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET "
            "seen_at = excluded.seen_at, scope = COALESCE(excluded.scope, lesson_sessions.scope), "
            "changed_at = COALESCE(excluded.changed_at, lesson_sessions.changed_at)",
            (session_key, scope, moment, moment if changed else None),
        )

    def lesson_session(self, session_key: str) -> LessonSession | None:
        row = self._sql.one(SESSIONS.select("WHERE session_key = ?"), (session_key,))
        return None if row is None else SESSIONS.read(self._sql.dialect, row)

    def mark_reminded(self, session_key: str, at: datetime) -> None:
        moment = self._sql.dialect.time(at)
        self._sql.run(
            "INSERT INTO lesson_sessions (session_key, seen_at, reminded_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_key) DO UPDATE SET reminded_at = excluded.reminded_at",
            (session_key, moment, moment),
        )
