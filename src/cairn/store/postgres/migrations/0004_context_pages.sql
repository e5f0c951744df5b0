-- Retrieval quality (issue 3): the SQLite backend's 0004_context_pages.sql in PostgreSQL types.
--
-- The lexical index gains a `context` field: the analysed text of a memory's session
-- neighbours (see cairn/neighbours.py), written into `doc` with weight class D.
ALTER TABLE lexical ADD COLUMN context text NOT NULL DEFAULT '';
ALTER TABLE lexical ADD COLUMN len_context integer NOT NULL DEFAULT 0;

-- Neighbours are the memories of the same scope and session, in write (id) order.
CREATE INDEX memories_session_order ON memories (scope, session_id, id);

-- A memory's window vector: the normalised weighted sum of its own vector and its
-- neighbours' (computed from stored vectors, never by a model). Searched exactly: the windows
-- of one scope are read by the filter, not through an index.
CREATE TABLE windows (
    memory_id bigint PRIMARY KEY,
    identity  text NOT NULL,
    dims      integer NOT NULL,
    embedding vector NOT NULL
);

-- Pages: the repository's documentation, chunked at headings (doc_<id>).
CREATE TABLE page_files (
    scope    text NOT NULL,
    path     text NOT NULL,
    mtime_ns bigint NOT NULL,
    size     bigint NOT NULL,
    digest   text NOT NULL,
    PRIMARY KEY (scope, path)
);
CREATE TABLE pages (
    id         bigserial PRIMARY KEY,
    scope      text NOT NULL,
    path       text NOT NULL,
    heading    text NOT NULL,
    line_start integer NOT NULL,
    line_end   integer NOT NULL,
    text       text NOT NULL,
    digest     text NOT NULL
);
CREATE INDEX pages_scope_path ON pages (scope, path);
