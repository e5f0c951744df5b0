-- Retrieval quality (issue 3): session neighbours and the pages index.
--
-- The lexical index gains a `context` field: the analysed text of a memory's session
-- neighbours (see cairn/neighbours.py). FTS5 cannot add a column, so the table is rebuilt.
CREATE VIRTUAL TABLE lexical_v4 USING fts5 (
    content, tags, source_ref, reason, context,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
INSERT INTO lexical_v4 (rowid, content, tags, source_ref, reason, context)
    SELECT rowid, content, tags, source_ref, reason, '' FROM lexical;
DROP TABLE lexical;
ALTER TABLE lexical_v4 RENAME TO lexical;
ALTER TABLE lexical_lengths ADD COLUMN context INTEGER NOT NULL DEFAULT 0;

-- Neighbours are the memories of the same scope and session, in write (id) order.
CREATE INDEX memories_session_order ON memories (scope, session_id, id);

-- A memory's window vector: the normalised weighted sum of its own vector and its
-- neighbours' (computed from stored vectors, never by a model). `rev` grows with every write
-- so the in-memory cache can patch rewritten rows instead of reloading.
CREATE TABLE windows (
    memory_id INTEGER PRIMARY KEY,
    identity  TEXT NOT NULL,
    vector    BLOB NOT NULL,
    rev       INTEGER NOT NULL
);
CREATE INDEX windows_rev ON windows (rev);
INSERT INTO meta (key, value) VALUES ('window_rev', '0');

-- Pages: the repository's documentation, chunked at headings (doc_<id>).
CREATE TABLE page_files (
    scope    TEXT NOT NULL,
    path     TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size     INTEGER NOT NULL,
    digest   TEXT NOT NULL,
    PRIMARY KEY (scope, path)
) WITHOUT ROWID;
CREATE TABLE pages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    scope      TEXT NOT NULL,
    path       TEXT NOT NULL,
    heading    TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end   INTEGER NOT NULL,
    text       TEXT NOT NULL,
    digest     TEXT NOT NULL
);
CREATE INDEX pages_scope_path ON pages (scope, path);
