-- The same logical schema as the SQLite backend's 0001_init.sql, in PostgreSQL types:
-- times are timestamptz (microsecond precision, exact round-trips), JSON is `json` (kept as
-- written: key order and "\u0000" escapes survive, unlike jsonb), lists are text[].
-- IF NOT EXISTS: a superuser may have created the extension already; then no privilege is needed.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE events (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL,
    scope       text,
    session_id  text,
    at          timestamptz NOT NULL,
    integration text,
    memory_id   bigint,
    payload     json NOT NULL DEFAULT '{}'
);
CREATE INDEX events_memory ON events (memory_id);
CREATE INDEX events_at ON events (at);
CREATE INDEX events_session ON events (session_id);

CREATE TABLE memories (
    id               bigserial PRIMARY KEY,
    scope            text NOT NULL,
    type             text NOT NULL,
    content          text NOT NULL,
    summary          text NOT NULL,
    durability       text NOT NULL,
    weight           double precision NOT NULL,
    tags             text[] NOT NULL DEFAULT '{}',
    reason           text,
    source_ref       text,
    pinned           boolean NOT NULL DEFAULT false,
    branch           text,
    session_id       text,
    source_event_id  bigint,
    diff_text        text,
    diff_files       text[] NOT NULL DEFAULT '{}',
    error_trace      text,
    integration      text,
    content_hash     text NOT NULL,
    written_at       timestamptz NOT NULL,
    occurred_at      timestamptz NOT NULL,
    until            timestamptz,
    replaces         bigint,
    replaced_by      bigint,
    status           text NOT NULL DEFAULT 'active',
    confirmed        bigint NOT NULL DEFAULT 0,
    cited            bigint NOT NULL DEFAULT 0,
    contradicted     bigint NOT NULL DEFAULT 0,
    evidence         json NOT NULL DEFAULT '{}',
    last_cited_at    timestamptz,
    access_count     bigint NOT NULL DEFAULT 0,
    last_accessed_at timestamptz
);
CREATE INDEX memories_scope_status ON memories (scope, status);
CREATE INDEX memories_scope_hash ON memories (scope, content_hash);

CREATE TABLE memory_tags (
    memory_id bigint NOT NULL,
    tag       text NOT NULL,
    PRIMARY KEY (memory_id, tag)
);
CREATE INDEX memory_tags_tag ON memory_tags (tag);

-- Dimensions vary by embedder, so the column is an untyped `vector`; each embedder identity gets
-- its own partial HNSW index over `embedding::vector(dims)`, created on first use and recorded
-- in vector_indexes (see cairn/store/postgres/vectors.py).
CREATE TABLE vectors (
    memory_id bigint PRIMARY KEY,
    identity  text NOT NULL,
    dims      integer NOT NULL,
    embedding vector NOT NULL
);
CREATE INDEX vectors_identity ON vectors (identity, dims);

CREATE TABLE vector_indexes (
    identity   text NOT NULL,
    dims       integer NOT NULL,
    index_name text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (identity, dims)
);

-- Terms arrive analysed (folded, stemmed) from cairn.ranking.lexical and are written into `doc`
-- as tsvector literals, one weight class per field (content A, tags B, source_ref C, reason D),
-- without any PostgreSQL parser or dictionary in between; BM25 itself is computed by the
-- ranking layer from the per-field lengths kept here.
CREATE TABLE lexical (
    memory_id      bigint PRIMARY KEY,
    content        text NOT NULL,
    tags           text NOT NULL,
    source_ref     text NOT NULL,
    reason         text NOT NULL,
    doc            tsvector NOT NULL,
    len_content    integer NOT NULL,
    len_tags       integer NOT NULL,
    len_source_ref integer NOT NULL,
    len_reason     integer NOT NULL
);
CREATE INDEX lexical_doc ON lexical USING gin (doc);
