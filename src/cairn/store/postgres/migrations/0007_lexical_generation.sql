-- A generation counter for the BM25 statistics cache (issue 3 follow-up): every statement that
-- changes the lexical index, or a memory column a recall filter reads, or memory tags, moves
-- meta 'lexgen' on, inside the writing transaction. A process caches per-scope document counts,
-- average field lengths and document frequencies until it reads a different value, so other
-- processes' writes invalidate it as its own do. Statement-level triggers: a batch of rows
-- costs one update of the counter, and writers already queue on the advisory write lock.
INSERT INTO meta (key, value) VALUES ('lexgen', '0') ON CONFLICT (key) DO NOTHING;

CREATE FUNCTION cairn_bump_lexgen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'lexgen';
    RETURN NULL;
END
$$;

CREATE TRIGGER lexical_lexgen AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lexical
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_lexgen();
CREATE TRIGGER memory_tags_lexgen AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON memory_tags
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_lexgen();
CREATE TRIGGER memories_lexgen
    AFTER INSERT OR DELETE OR UPDATE OF scope, type, status, until, written_at, occurred_at
    ON memories FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_lexgen();
CREATE TRIGGER memories_truncate_lexgen AFTER TRUNCATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_bump_lexgen();
