-- Lessons on tool calls: the SQLite backend's 0005_lessons.sql in PostgreSQL types.

CREATE TABLE lessons_given (
    session_key text NOT NULL,
    subject     text NOT NULL,
    target      text NOT NULL,
    kind        text NOT NULL,
    scope       text NOT NULL,
    at          timestamptz NOT NULL,
    PRIMARY KEY (session_key, subject, target, kind)
);

CREATE TABLE lesson_mutes (
    id          bigserial PRIMARY KEY,
    scope       text NOT NULL,
    kind        text NOT NULL,
    value       text NOT NULL,
    created_at  timestamptz NOT NULL,
    integration text,
    UNIQUE (scope, kind, value)
);

CREATE TABLE lesson_sessions (
    session_key text PRIMARY KEY,
    scope       text,
    seen_at     timestamptz NOT NULL,
    changed_at  timestamptz,
    reminded_at timestamptz
);

CREATE INDEX citations_path ON citations (path);
