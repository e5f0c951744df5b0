-- Sessions (issue 4): sessions and their retrievals, feedback, procedures, episodes and
-- relations between memories. Times are integer microseconds since the Unix epoch (UTC).
-- The episodic trace is the events table itself (pins and progress lines are events), read
-- by scope and time, hence the index below.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    scope        TEXT NOT NULL,
    task         TEXT NOT NULL,
    task_context TEXT NOT NULL DEFAULT '{}',
    status       TEXT NOT NULL DEFAULT 'open',
    opened_at    INTEGER NOT NULL,
    closed_at    INTEGER,
    integration  TEXT,
    branch       TEXT,
    episode_id   INTEGER
);
CREATE INDEX sessions_scope ON sessions (scope, opened_at);

-- A retrieval's id is the id of the activate/recall event that produced it.
CREATE TABLE retrievals (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    at          INTEGER NOT NULL,
    source      TEXT NOT NULL,
    refs        TEXT NOT NULL DEFAULT '[]',
    feedback_at INTEGER
);
CREATE INDEX retrievals_session ON retrievals (session_id);

CREATE TABLE assessments (
    retrieval_id INTEGER NOT NULL,
    ref          TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    used         INTEGER NOT NULL,
    effect       TEXT NOT NULL,
    at           INTEGER NOT NULL,
    PRIMARY KEY (retrieval_id, ref)
) WITHOUT ROWID;
CREATE INDEX assessments_session ON assessments (session_id);

CREATE TABLE procedures (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    scope           TEXT NOT NULL,
    goal            TEXT NOT NULL,
    summary         TEXT NOT NULL,
    context         TEXT NOT NULL DEFAULT '{}',
    steps           TEXT NOT NULL DEFAULT '[]',
    caveats         TEXT NOT NULL DEFAULT '[]',
    outcome         TEXT NOT NULL,
    outcome_summary TEXT NOT NULL,
    session_id      TEXT,
    content_hash    TEXT NOT NULL,
    written_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    used            INTEGER NOT NULL DEFAULT 0,
    not_used        INTEGER NOT NULL DEFAULT 0,
    helped          INTEGER NOT NULL DEFAULT 0,
    no_effect       INTEGER NOT NULL DEFAULT 0,
    harmed          INTEGER NOT NULL DEFAULT 0,
    unknown         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX procedures_scope_hash ON procedures (scope, content_hash);

CREATE TABLE procedure_contributions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    procedure_id    INTEGER NOT NULL,
    session_id      TEXT,
    effect          TEXT NOT NULL,
    contribution    TEXT NOT NULL,
    outcome         TEXT NOT NULL,
    outcome_summary TEXT NOT NULL,
    occurred_at     INTEGER NOT NULL
);
CREATE INDEX procedure_contributions_procedure ON procedure_contributions (procedure_id, id);

CREATE TABLE procedure_vectors (
    procedure_id INTEGER PRIMARY KEY,
    identity     TEXT NOT NULL,
    dims         INTEGER NOT NULL,
    vector       BLOB NOT NULL
);

CREATE TABLE episodes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL UNIQUE,
    scope        TEXT NOT NULL,
    task         TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    summary      TEXT NOT NULL,
    procedure_id INTEGER,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER NOT NULL
);

-- Undirected in meaning, stored once per pair and kind; lookups read both columns.
CREATE TABLE relations (
    from_id INTEGER NOT NULL,
    to_id   INTEGER NOT NULL,
    kind    TEXT NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_id, kind)
) WITHOUT ROWID;
CREATE INDEX relations_to ON relations (to_id);

CREATE INDEX events_scope_at ON events (scope, at);
