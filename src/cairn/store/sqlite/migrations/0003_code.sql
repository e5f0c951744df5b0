-- Code awareness and lifecycle (issue 5): citations checked against the code, branch goals,
-- acts observed in git (merge, revert, discard) and tidy proposals. Times are integer
-- microseconds since the Unix epoch (UTC).

-- One row per memory whose source_ref can be checked; a correction copies its row.
CREATE TABLE citations (
    memory_id   INTEGER PRIMARY KEY,
    scope       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    path        TEXT,
    symbol      TEXT,
    commit_sha  TEXT,
    root        TEXT,
    start_line  INTEGER,
    end_line    INTEGER,
    digest      TEXT,
    fingerprint TEXT NOT NULL DEFAULT '{}',
    file_hash   TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX citations_scope ON citations (scope, created_at);
CREATE INDEX citations_commit ON citations (commit_sha);

-- One row per memory a call said it used (`used`): the branch and session it was used on, so
-- acts can find "the memories the branch's sessions cited". Kept apart from the events so the
-- episodic trace shows calls, not their bookkeeping.
CREATE TABLE cites (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id   INTEGER NOT NULL,
    scope       TEXT,
    branch      TEXT,
    session_id  TEXT,
    integration TEXT,
    at          INTEGER NOT NULL
);
CREATE INDEX cites_branch ON cites (scope, branch);
CREATE INDEX cites_session ON cites (session_id);
CREATE INDEX cites_memory ON cites (memory_id);

-- The newest row for a (scope, branch) is the goal; older rows are its history.
CREATE TABLE branch_goals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    branch      TEXT NOT NULL,
    goal        TEXT NOT NULL,
    set_at      INTEGER NOT NULL,
    integration TEXT,
    session_id  TEXT
);
CREATE INDEX branch_goals_branch ON branch_goals (scope, branch, id);

-- effects: [{memory_id, effect, prior_status}], undone by undo_act.
CREATE TABLE acts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    subject     TEXT NOT NULL,
    at          INTEGER NOT NULL,
    integration TEXT,
    effects     TEXT NOT NULL DEFAULT '[]',
    detail      TEXT NOT NULL DEFAULT '{}',
    undone_at   INTEGER
);
CREATE INDEX acts_subject ON acts (scope, kind, subject);

-- key names what is proposed (kind + the memories involved), so a declined proposal is
-- recognised and never made again.
CREATE TABLE tidy_proposals (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    scope      TEXT NOT NULL,
    kind       TEXT NOT NULL,
    key        TEXT NOT NULL,
    memory_ids TEXT NOT NULL DEFAULT '[]',
    payload    TEXT NOT NULL DEFAULT '{}',
    status     TEXT NOT NULL DEFAULT 'open',
    created_at INTEGER NOT NULL,
    decided_at INTEGER,
    UNIQUE (scope, key)
);

CREATE INDEX events_kind ON events (kind, scope);
CREATE INDEX memories_branch ON memories (scope, branch);
