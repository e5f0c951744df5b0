-- Sessions: the SQLite backend's 0002_sessions.sql in PostgreSQL types (timestamptz, json,
-- text[]). The episodic trace is the events table itself, read by scope and time.
CREATE TABLE sessions (
    id           text PRIMARY KEY,
    scope        text NOT NULL,
    task         text NOT NULL,
    task_context json NOT NULL DEFAULT '{}',
    status       text NOT NULL DEFAULT 'open',
    opened_at    timestamptz NOT NULL,
    closed_at    timestamptz,
    integration  text,
    branch       text,
    episode_id   bigint
);
CREATE INDEX sessions_scope ON sessions (scope, opened_at);

-- A retrieval's id is the id of the activate/recall event that produced it.
CREATE TABLE retrievals (
    id          bigint PRIMARY KEY,
    session_id  text NOT NULL,
    at          timestamptz NOT NULL,
    source      text NOT NULL,
    refs        text[] NOT NULL DEFAULT '{}',
    feedback_at timestamptz
);
CREATE INDEX retrievals_session ON retrievals (session_id);

CREATE TABLE assessments (
    retrieval_id bigint NOT NULL,
    ref          text NOT NULL,
    session_id   text NOT NULL,
    used         boolean NOT NULL,
    effect       text NOT NULL,
    at           timestamptz NOT NULL,
    PRIMARY KEY (retrieval_id, ref)
);
CREATE INDEX assessments_session ON assessments (session_id);

CREATE TABLE procedures (
    id              bigserial PRIMARY KEY,
    scope           text NOT NULL,
    goal            text NOT NULL,
    summary         text NOT NULL,
    context         json NOT NULL DEFAULT '{}',
    steps           text[] NOT NULL DEFAULT '{}',
    caveats         text[] NOT NULL DEFAULT '{}',
    outcome         text NOT NULL,
    outcome_summary text NOT NULL,
    session_id      text,
    content_hash    text NOT NULL,
    written_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    used            bigint NOT NULL DEFAULT 0,
    not_used        bigint NOT NULL DEFAULT 0,
    helped          bigint NOT NULL DEFAULT 0,
    no_effect       bigint NOT NULL DEFAULT 0,
    harmed          bigint NOT NULL DEFAULT 0,
    unknown         bigint NOT NULL DEFAULT 0
);
CREATE INDEX procedures_scope_hash ON procedures (scope, content_hash);

CREATE TABLE procedure_contributions (
    id              bigserial PRIMARY KEY,
    procedure_id    bigint NOT NULL,
    session_id      text,
    effect          text NOT NULL,
    contribution    text NOT NULL,
    outcome         text NOT NULL,
    outcome_summary text NOT NULL,
    occurred_at     timestamptz NOT NULL
);
CREATE INDEX procedure_contributions_procedure ON procedure_contributions (procedure_id, id);

-- Read by id only (procedures are ranked in memory), so a plain real[] and no HNSW index.
CREATE TABLE procedure_vectors (
    procedure_id bigint PRIMARY KEY,
    identity     text NOT NULL,
    dims         integer NOT NULL,
    vector       real[] NOT NULL
);

CREATE TABLE episodes (
    id           bigserial PRIMARY KEY,
    session_id   text NOT NULL UNIQUE,
    scope        text NOT NULL,
    task         text NOT NULL,
    outcome      text NOT NULL,
    summary      text NOT NULL,
    procedure_id bigint,
    started_at   timestamptz NOT NULL,
    ended_at     timestamptz NOT NULL
);

-- Undirected in meaning, stored once per pair and kind; lookups read both columns.
CREATE TABLE relations (
    from_id bigint NOT NULL,
    to_id   bigint NOT NULL,
    kind    text NOT NULL,
    at      timestamptz NOT NULL,
    PRIMARY KEY (from_id, to_id, kind)
);
CREATE INDEX relations_to ON relations (to_id);

CREATE INDEX events_scope_at ON events (scope, at);
