-- Lexical lengths summed by the (scope, status, open) of their memory (issue 18), `open` being
-- `until IS NULL`: the BM25 averages of a filter of scopes and statuses (every recall's
-- default) are sums over the groups it admits. They were a join of every length row with
-- `memories`, redone after every write: 35 ms at 100k in a store of two scopes, most of a
-- recall that follows a `remember` there. PostgreSQL keeps the same table (its migration 0010).
-- An entry counts while both its length row and its memory row exist, whichever is written
-- first (a copy loads the tables in its own order).
CREATE TABLE lexical_groups (
    scope      TEXT NOT NULL,
    status     TEXT NOT NULL,
    open       INTEGER NOT NULL,
    docs       INTEGER NOT NULL,
    content    INTEGER NOT NULL,
    tags       INTEGER NOT NULL,
    source_ref INTEGER NOT NULL,
    reason     INTEGER NOT NULL,
    context    INTEGER NOT NULL,
    PRIMARY KEY (scope, status, open)
);
INSERT INTO lexical_groups
    SELECT m.scope, m.status, m.until IS NULL, count(*), sum(l.content), sum(l.tags),
           sum(l.source_ref), sum(l.reason), sum(l.context)
    FROM lexical_lengths l JOIN memories m ON m.id = l.memory_id GROUP BY 1, 2, 3;

-- INSERT OR REPLACE removes the old length row without firing DELETE triggers
-- (recursive_triggers is off), so the insert takes the replaced row out first.
CREATE TRIGGER lexical_groups_replace BEFORE INSERT ON lexical_lengths
WHEN EXISTS (SELECT 1 FROM lexical_lengths WHERE memory_id = NEW.memory_id)
BEGIN
    UPDATE lexical_groups SET docs = docs - 1,
        content = content - (SELECT content FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        tags = tags - (SELECT tags FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        source_ref = source_ref
            - (SELECT source_ref FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        reason = reason - (SELECT reason FROM lexical_lengths WHERE memory_id = NEW.memory_id),
        context = context - (SELECT context FROM lexical_lengths WHERE memory_id = NEW.memory_id)
    WHERE (scope, status, open)
        = (SELECT scope, status, until IS NULL FROM memories WHERE id = NEW.memory_id);
END;
CREATE TRIGGER lexical_groups_insert AFTER INSERT ON lexical_lengths
BEGIN
    INSERT INTO lexical_groups
        SELECT scope, status, until IS NULL, 1, NEW.content, NEW.tags, NEW.source_ref,
               NEW.reason, NEW.context
        FROM memories WHERE id = NEW.memory_id
        ON CONFLICT (scope, status, open) DO UPDATE SET docs = docs + 1,
            content = content + excluded.content, tags = tags + excluded.tags,
            source_ref = source_ref + excluded.source_ref, reason = reason + excluded.reason,
            context = context + excluded.context;
END;
CREATE TRIGGER lexical_groups_delete AFTER DELETE ON lexical_lengths
BEGIN
    UPDATE lexical_groups SET docs = docs - 1, content = content - OLD.content,
        tags = tags - OLD.tags, source_ref = source_ref - OLD.source_ref,
        reason = reason - OLD.reason, context = context - OLD.context
    WHERE (scope, status, open)
        = (SELECT scope, status, until IS NULL FROM memories WHERE id = OLD.memory_id);
END;
CREATE TRIGGER lexical_groups_update AFTER UPDATE ON lexical_lengths
BEGIN
    UPDATE lexical_groups SET docs = docs - 1, content = content - OLD.content,
        tags = tags - OLD.tags, source_ref = source_ref - OLD.source_ref,
        reason = reason - OLD.reason, context = context - OLD.context
    WHERE (scope, status, open)
        = (SELECT scope, status, until IS NULL FROM memories WHERE id = OLD.memory_id);
    INSERT INTO lexical_groups
        SELECT scope, status, until IS NULL, 1, NEW.content, NEW.tags, NEW.source_ref,
               NEW.reason, NEW.context
        FROM memories WHERE id = NEW.memory_id
        ON CONFLICT (scope, status, open) DO UPDATE SET docs = docs + 1,
            content = content + excluded.content, tags = tags + excluded.tags,
            source_ref = source_ref + excluded.source_ref, reason = reason + excluded.reason,
            context = context + excluded.context;
END;

-- The memory side: a memory row written after its length row, deleted, or moved to another
-- group carries its entry with it.
CREATE TRIGGER lexical_groups_memory_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO lexical_groups
        SELECT NEW.scope, NEW.status, NEW.until IS NULL, 1, content, tags, source_ref, reason,
               context
        FROM lexical_lengths WHERE memory_id = NEW.id
        ON CONFLICT (scope, status, open) DO UPDATE SET docs = docs + 1,
            content = content + excluded.content, tags = tags + excluded.tags,
            source_ref = source_ref + excluded.source_ref, reason = reason + excluded.reason,
            context = context + excluded.context;
END;
CREATE TRIGGER lexical_groups_memory_delete AFTER DELETE ON memories
WHEN EXISTS (SELECT 1 FROM lexical_lengths WHERE memory_id = OLD.id)
BEGIN
    UPDATE lexical_groups SET docs = docs - 1,
        content = content - (SELECT content FROM lexical_lengths WHERE memory_id = OLD.id),
        tags = tags - (SELECT tags FROM lexical_lengths WHERE memory_id = OLD.id),
        source_ref = source_ref - (SELECT source_ref FROM lexical_lengths WHERE memory_id = OLD.id),
        reason = reason - (SELECT reason FROM lexical_lengths WHERE memory_id = OLD.id),
        context = context - (SELECT context FROM lexical_lengths WHERE memory_id = OLD.id)
    WHERE scope = OLD.scope AND status = OLD.status AND open = (OLD.until IS NULL);
END;
CREATE TRIGGER lexical_groups_memory_update AFTER UPDATE OF scope, status, until ON memories
WHEN (OLD.scope IS NOT NEW.scope OR OLD.status IS NOT NEW.status
      OR (OLD.until IS NULL) IS NOT (NEW.until IS NULL))
    AND EXISTS (SELECT 1 FROM lexical_lengths WHERE memory_id = NEW.id)
BEGIN
    UPDATE lexical_groups SET docs = docs - 1,
        content = content - (SELECT content FROM lexical_lengths WHERE memory_id = NEW.id),
        tags = tags - (SELECT tags FROM lexical_lengths WHERE memory_id = NEW.id),
        source_ref = source_ref - (SELECT source_ref FROM lexical_lengths WHERE memory_id = NEW.id),
        reason = reason - (SELECT reason FROM lexical_lengths WHERE memory_id = NEW.id),
        context = context - (SELECT context FROM lexical_lengths WHERE memory_id = NEW.id)
    WHERE scope = OLD.scope AND status = OLD.status AND open = (OLD.until IS NULL);
    INSERT INTO lexical_groups
        SELECT NEW.scope, NEW.status, NEW.until IS NULL, 1, content, tags, source_ref, reason,
               context
        FROM lexical_lengths WHERE memory_id = NEW.id
        ON CONFLICT (scope, status, open) DO UPDATE SET docs = docs + 1,
            content = content + excluded.content, tags = tags + excluded.tags,
            source_ref = source_ref + excluded.source_ref, reason = reason + excluded.reason,
            context = context + excluded.context;
END;
