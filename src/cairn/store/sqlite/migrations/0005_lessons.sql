-- Lessons on tool calls (issue 8): what each agent session was already told, per-scope mute
-- rules, and what each agent session did (for the Stop reminder). Times are integer
-- microseconds since the Unix epoch (UTC).

-- session_key is a cairn session id or the agent's own (Claude Code's session_id); subject a
-- ref (mem_4, proc_2); target the file or command the lesson was given for; kind note|question.
CREATE TABLE lessons_given (
    session_key TEXT NOT NULL,
    subject     TEXT NOT NULL,
    target      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    scope       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (session_key, subject, target, kind)
) WITHOUT ROWID;

-- kind: type | tag | path (a glob); one rule per (scope, kind, value).
CREATE TABLE lesson_mutes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    value       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    integration TEXT,
    UNIQUE (scope, kind, value)
);

CREATE TABLE lesson_sessions (
    session_key TEXT PRIMARY KEY,
    scope       TEXT,
    seen_at     INTEGER NOT NULL,
    changed_at  INTEGER,
    reminded_at INTEGER
);

-- Lessons look citations up by the files a call touches.
CREATE INDEX citations_path ON citations (path);
