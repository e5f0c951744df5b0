-- Times are integer microseconds since the Unix epoch (UTC): exact round-trips, cheap compares.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('epoch', '0');

CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL,
    scope       TEXT,
    session_id  TEXT,
    at          INTEGER NOT NULL,
    integration TEXT,
    memory_id   INTEGER,
    payload     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_memory ON events (memory_id);
CREATE INDEX events_at ON events (at);
CREATE INDEX events_session ON events (session_id);

CREATE TABLE memories (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    scope            TEXT NOT NULL,
    type             TEXT NOT NULL,
    content          TEXT NOT NULL,
    summary          TEXT NOT NULL,
    durability       TEXT NOT NULL,
    weight           REAL NOT NULL,
    tags             TEXT NOT NULL DEFAULT '[]',
    reason           TEXT,
    source_ref       TEXT,
    pinned           INTEGER NOT NULL DEFAULT 0,
    branch           TEXT,
    session_id       TEXT,
    source_event_id  INTEGER,
    diff_text        TEXT,
    diff_files       TEXT NOT NULL DEFAULT '[]',
    error_trace      TEXT,
    integration      TEXT,
    content_hash     TEXT NOT NULL,
    written_at       INTEGER NOT NULL,
    occurred_at      INTEGER NOT NULL,
    until            INTEGER,
    replaces         INTEGER,
    replaced_by      INTEGER,
    status           TEXT NOT NULL DEFAULT 'active',
    confirmed        INTEGER NOT NULL DEFAULT 0,
    cited            INTEGER NOT NULL DEFAULT 0,
    contradicted     INTEGER NOT NULL DEFAULT 0,
    evidence         TEXT NOT NULL DEFAULT '{}',
    last_cited_at    INTEGER,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at INTEGER
);
CREATE INDEX memories_scope_status ON memories (scope, status);
CREATE INDEX memories_scope_hash ON memories (scope, content_hash);

CREATE TABLE memory_tags (
    memory_id INTEGER NOT NULL,
    tag       TEXT NOT NULL,
    PRIMARY KEY (memory_id, tag)
) WITHOUT ROWID;
CREATE INDEX memory_tags_tag ON memory_tags (tag);

CREATE TABLE vectors (
    memory_id INTEGER PRIMARY KEY,
    identity  TEXT NOT NULL,
    dims      INTEGER NOT NULL,
    vector    BLOB NOT NULL
);

-- Terms arrive analysed (folded, stemmed) from cairn.ranking.lexical, so FTS5 only splits on
-- spaces; BM25 itself is computed by the ranking layer with per-scope statistics.
CREATE VIRTUAL TABLE lexical USING fts5 (
    content, tags, source_ref, reason,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
CREATE TABLE lexical_lengths (
    memory_id  INTEGER PRIMARY KEY,
    content    INTEGER NOT NULL,
    tags       INTEGER NOT NULL,
    source_ref INTEGER NOT NULL,
    reason     INTEGER NOT NULL
);
