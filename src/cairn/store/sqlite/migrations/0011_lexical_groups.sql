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

-- Every move of an entry into its group (sign 1) or out of it (-1) goes through this view:
-- its INSTEAD OF trigger is the one place that adds lengths up.
CREATE VIEW lexical_group_moves (scope, status, open, sign, content, tags, source_ref, reason,
    context) AS SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0;
CREATE TRIGGER lexical_group_move INSTEAD OF INSERT ON lexical_group_moves
BEGIN
    INSERT INTO lexical_groups (scope, status, open, docs, content, tags, source_ref, reason,
        context)
        VALUES (NEW.scope, NEW.status, NEW.open, NEW.sign, NEW.sign * NEW.content,
            NEW.sign * NEW.tags, NEW.sign * NEW.source_ref, NEW.sign * NEW.reason,
            NEW.sign * NEW.context)
        ON CONFLICT (scope, status, open) DO UPDATE SET docs = docs + excluded.docs,
            content = content + excluded.content, tags = tags + excluded.tags,
            source_ref = source_ref + excluded.source_ref, reason = reason + excluded.reason,
            context = context + excluded.context;
END;

-- The length side. INSERT OR REPLACE removes the old row without firing DELETE triggers
-- (recursive_triggers is off), so the insert takes the replaced row out first.
CREATE TRIGGER lexical_groups_replace BEFORE INSERT ON lexical_lengths
BEGIN
    INSERT INTO lexical_group_moves
        SELECT m.scope, m.status, m.until IS NULL, -1, l.content, l.tags, l.source_ref,
            l.reason, l.context
        FROM lexical_lengths l JOIN memories m ON m.id = l.memory_id
        WHERE l.memory_id = NEW.memory_id;
END;
CREATE TRIGGER lexical_groups_insert AFTER INSERT ON lexical_lengths
BEGIN
    INSERT INTO lexical_group_moves
        SELECT scope, status, until IS NULL, 1, NEW.content, NEW.tags, NEW.source_ref,
            NEW.reason, NEW.context
        FROM memories WHERE id = NEW.memory_id;
END;
CREATE TRIGGER lexical_groups_delete AFTER DELETE ON lexical_lengths
BEGIN
    INSERT INTO lexical_group_moves
        SELECT scope, status, until IS NULL, -1, OLD.content, OLD.tags, OLD.source_ref,
            OLD.reason, OLD.context
        FROM memories WHERE id = OLD.memory_id;
END;
CREATE TRIGGER lexical_groups_update AFTER UPDATE ON lexical_lengths
BEGIN
    INSERT INTO lexical_group_moves
        SELECT scope, status, until IS NULL, -1, OLD.content, OLD.tags, OLD.source_ref,
            OLD.reason, OLD.context
        FROM memories WHERE id = OLD.memory_id;
    INSERT INTO lexical_group_moves
        SELECT scope, status, until IS NULL, 1, NEW.content, NEW.tags, NEW.source_ref,
            NEW.reason, NEW.context
        FROM memories WHERE id = NEW.memory_id;
END;

-- The memory side: a memory row written after its length row, deleted, or moved to another
-- group carries its entry with it.
CREATE TRIGGER lexical_groups_memory_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO lexical_group_moves
        SELECT NEW.scope, NEW.status, NEW.until IS NULL, 1, content, tags, source_ref, reason, context
        FROM lexical_lengths WHERE memory_id = NEW.id;
END;
CREATE TRIGGER lexical_groups_memory_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO lexical_group_moves
        SELECT OLD.scope, OLD.status, OLD.until IS NULL, -1, content, tags, source_ref, reason, context
        FROM lexical_lengths WHERE memory_id = OLD.id;
END;
CREATE TRIGGER lexical_groups_memory_update AFTER UPDATE OF scope, status, until ON memories
WHEN OLD.scope IS NOT NEW.scope OR OLD.status IS NOT NEW.status
    OR (OLD.until IS NULL) IS NOT (NEW.until IS NULL)
BEGIN
    INSERT INTO lexical_group_moves
        SELECT OLD.scope, OLD.status, OLD.until IS NULL, -1, content, tags, source_ref, reason, context
        FROM lexical_lengths WHERE memory_id = OLD.id;
    INSERT INTO lexical_group_moves
        SELECT NEW.scope, NEW.status, NEW.until IS NULL, 1, content, tags, source_ref, reason, context
        FROM lexical_lengths WHERE memory_id = NEW.id;
END;
