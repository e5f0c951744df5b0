-- Code awareness and lifecycle: the SQLite backend's 0003_code.sql in PostgreSQL types.

-- One row per memory whose source_ref can be checked; a correction copies its row.
CREATE TABLE citations (
    memory_id   bigint PRIMARY KEY,
    scope       text NOT NULL,
    kind        text NOT NULL,
    path        text,
    symbol      text,
    commit_sha  text,
    root        text,
    start_line  integer,
    end_line    integer,
    digest      text,
    fingerprint json NOT NULL DEFAULT '{}',
    file_hash   text,
    created_at  timestamptz NOT NULL
);
CREATE INDEX citations_scope ON citations (scope, created_at);
CREATE INDEX citations_commit ON citations (commit_sha);

-- One row per memory a call said it used: the branch and session it was used on.
CREATE TABLE cites (
    id          bigserial PRIMARY KEY,
    memory_id   bigint NOT NULL,
    scope       text,
    branch      text,
    session_id  text,
    integration text,
    at          timestamptz NOT NULL
);
CREATE INDEX cites_branch ON cites (scope, branch);
CREATE INDEX cites_session ON cites (session_id);
CREATE INDEX cites_memory ON cites (memory_id);

-- The newest row for a (scope, branch) is the goal; older rows are its history.
CREATE TABLE branch_goals (
    id          bigserial PRIMARY KEY,
    scope       text NOT NULL,
    branch      text NOT NULL,
    goal        text NOT NULL,
    set_at      timestamptz NOT NULL,
    integration text,
    session_id  text
);
CREATE INDEX branch_goals_branch ON branch_goals (scope, branch, id);

-- effects: [{memory_id, effect, prior_status}], undone by undo_act.
CREATE TABLE acts (
    id          bigserial PRIMARY KEY,
    scope       text NOT NULL,
    kind        text NOT NULL,
    subject     text NOT NULL,
    at          timestamptz NOT NULL,
    integration text,
    effects     json NOT NULL DEFAULT '[]',
    detail      json NOT NULL DEFAULT '{}',
    undone_at   timestamptz
);
CREATE INDEX acts_subject ON acts (scope, kind, subject);

-- key names what is proposed, so a declined proposal is recognised and never made again.
CREATE TABLE tidy_proposals (
    id         bigserial PRIMARY KEY,
    scope      text NOT NULL,
    kind       text NOT NULL,
    key        text NOT NULL,
    memory_ids bigint[] NOT NULL DEFAULT '{}',
    payload    json NOT NULL DEFAULT '{}',
    status     text NOT NULL DEFAULT 'open',
    created_at timestamptz NOT NULL,
    decided_at timestamptz,
    UNIQUE (scope, key)
);

CREATE INDEX events_kind ON events (kind, scope);
CREATE INDEX memories_branch ON memories (scope, branch);
