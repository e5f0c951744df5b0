-- Lexical statistics kept up to date by the writes themselves (issue 18), so a fresh process
-- does not scan every memory and every length row before its first recall (~1.7 s at 100k
-- under load). Triggers, not application code, so every writer (remember, bulk load, copy,
-- purge, another process, an older cairn that knows nothing of these tables) keeps them true.

-- Documents and the sum of each field's length: the averages of a filter that admits every
-- document.
CREATE TABLE lexical_totals (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    docs       INTEGER NOT NULL,
    content    INTEGER NOT NULL,
    tags       INTEGER NOT NULL,
    source_ref INTEGER NOT NULL,
    reason     INTEGER NOT NULL,
    context    INTEGER NOT NULL
);
INSERT INTO lexical_totals
    SELECT 1, count(*), coalesce(sum(content), 0), coalesce(sum(tags), 0),
           coalesce(sum(source_ref), 0), coalesce(sum(reason), 0), coalesce(sum(context), 0)
    FROM lexical_lengths;
-- INSERT OR REPLACE removes the old row without firing DELETE triggers (recursive_triggers is
-- off), so the insert trigger takes the replaced row out itself, before the insert.
CREATE TRIGGER lexical_totals_replace BEFORE INSERT ON lexical_lengths
WHEN EXISTS (SELECT 1 FROM lexical_lengths WHERE memory_id = NEW.memory_id)
BEGIN
    UPDATE lexical_totals SET docs = docs - 1,
        content = content - (SELECT content FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        tags = tags - (SELECT tags FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        source_ref = source_ref
            - (SELECT source_ref FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        reason = reason - (SELECT reason FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        context = context - (SELECT context FROM lexical_lengths WHERE memory_id = NEW.memory_id);
END;
CREATE TRIGGER lexical_totals_insert AFTER INSERT ON lexical_lengths
BEGIN
    UPDATE lexical_totals SET docs = docs + 1, content = content + NEW.content,
        tags = tags + NEW.tags, source_ref = source_ref + NEW.source_ref,
        reason = reason + NEW.reason, context = context + NEW.context;
END;
CREATE TRIGGER lexical_totals_delete AFTER DELETE ON lexical_lengths
BEGIN
    UPDATE lexical_totals SET docs = docs - 1, content = content - OLD.content,
        tags = tags - OLD.tags, source_ref = source_ref - OLD.source_ref,
        reason = reason - OLD.reason, context = context - OLD.context;
END;
CREATE TRIGGER lexical_totals_update AFTER UPDATE ON lexical_lengths
BEGIN
    UPDATE lexical_totals SET content = content - OLD.content + NEW.content,
        tags = tags - OLD.tags + NEW.tags, source_ref = source_ref - OLD.source_ref + NEW.source_ref,
        reason = reason - OLD.reason + NEW.reason, context = context - OLD.context + NEW.context;
END;

-- Memories by (scope, status, open): whether a filter of scopes and statuses refuses any
-- memory, without walking them all.
CREATE TABLE memory_counts (
    scope  TEXT NOT NULL,
    status TEXT NOT NULL,
    open   INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (scope, status, open)
);
INSERT INTO memory_counts
    SELECT scope, status, until IS NULL, count(*) FROM memories GROUP BY 1, 2, 3;
CREATE TRIGGER memory_counts_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_counts (scope, status, open, n)
        VALUES (NEW.scope, NEW.status, NEW.until IS NULL, 1)
        ON CONFLICT (scope, status, open) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memory_counts_delete AFTER DELETE ON memories
BEGIN
    UPDATE memory_counts SET n = n - 1
        WHERE scope = OLD.scope AND status = OLD.status AND open = (OLD.until IS NULL);
END;
CREATE TRIGGER memory_counts_update AFTER UPDATE OF scope, status, until ON memories
WHEN OLD.scope IS NOT NEW.scope OR OLD.status IS NOT NEW.status
    OR (OLD.until IS NULL) IS NOT (NEW.until IS NULL)
BEGIN
    UPDATE memory_counts SET n = n - 1
        WHERE scope = OLD.scope AND status = OLD.status AND open = (OLD.until IS NULL);
    INSERT INTO memory_counts (scope, status, open, n)
        VALUES (NEW.scope, NEW.status, NEW.until IS NULL, 1)
        ON CONFLICT (scope, status, open) DO UPDATE SET n = n + 1;
END;
