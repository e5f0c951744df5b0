-- BM25 statistics kept by the writes themselves (issue 18), so a recall after a write reads a
-- few rows instead of counting: at 100k memories the averages' join of every lexical row with
-- `memories` took 114 ms and a query's document frequencies 70-140 ms, and every write (any
-- process) made the next recall pay both again. Triggers, not application code, so every
-- writer (remember, bulk COPY, copy, purge, another process) keeps them true.
--
-- Both tables count lexical entries by the (scope, status, open) of their memory, `open` being
-- `until IS NULL`: exactly what a filter of scopes and statuses admits, so its statistics are
-- sums over its groups. A term row holds the analysed lexeme as the tsvector stores it.
CREATE TABLE lexical_groups (
    scope      text NOT NULL,
    status     text NOT NULL,
    open       boolean NOT NULL,
    docs       bigint NOT NULL,
    content    bigint NOT NULL,
    tags       bigint NOT NULL,
    source_ref bigint NOT NULL,
    reason     bigint NOT NULL,
    context    bigint NOT NULL,
    PRIMARY KEY (scope, status, open)
);
CREATE TABLE lexical_terms (
    term   text NOT NULL,
    scope  text NOT NULL,
    status text NOT NULL,
    open   boolean NOT NULL,
    docs   bigint NOT NULL,
    PRIMARY KEY (term, scope, status, open)
);

-- Add `delta` (a query of rows: scope, status, open, doc, len_content .. len_context, sign) to
-- both tables. Rows that reach zero are deleted: a purged memory's words must not outlive it
-- here. The statements run in the caller's own EXECUTE because a trigger's transition tables
-- are visible only to the trigger function itself, not to functions it calls.
CREATE FUNCTION cairn_lexical_sql(delta text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
SELECT ARRAY[
    format(
        'WITH d AS (%s), g AS (SELECT scope, status, open, sum(sign) AS docs,'
        ' sum(sign * len_content) AS content, sum(sign * len_tags) AS tags,'
        ' sum(sign * len_source_ref) AS source_ref, sum(sign * len_reason) AS reason,'
        ' sum(sign * len_context) AS context FROM d GROUP BY 1, 2, 3),'
        ' up AS (INSERT INTO lexical_groups SELECT * FROM g ON CONFLICT (scope, status, open)'
        ' DO UPDATE SET docs = lexical_groups.docs + EXCLUDED.docs,'
        ' content = lexical_groups.content + EXCLUDED.content,'
        ' tags = lexical_groups.tags + EXCLUDED.tags,'
        ' source_ref = lexical_groups.source_ref + EXCLUDED.source_ref,'
        ' reason = lexical_groups.reason + EXCLUDED.reason,'
        ' context = lexical_groups.context + EXCLUDED.context RETURNING docs)'
        ' SELECT coalesce(bool_or(docs <= 0), false) FROM up', delta),
    format(
        'WITH d AS (%s), t AS (SELECT term, scope, status, open, sum(sign) AS docs'
        ' FROM d, unnest(tsvector_to_array(d.doc)) AS term GROUP BY 1, 2, 3, 4'
        ' HAVING sum(sign) <> 0), up AS (INSERT INTO lexical_terms SELECT * FROM t'
        ' ON CONFLICT (term, scope, status, open)'
        ' DO UPDATE SET docs = lexical_terms.docs + EXCLUDED.docs RETURNING term, docs)'
        ' SELECT array_agg(term) FILTER (WHERE docs <= 0) FROM up', delta)]
$$;

CREATE FUNCTION cairn_lexical_apply(delta text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    statements text[] := cairn_lexical_sql(delta);
    emptied boolean;
    gone text[];
BEGIN
    EXECUTE statements[1] INTO emptied;
    IF emptied THEN
        DELETE FROM lexical_groups WHERE docs <= 0;
    END IF;
    EXECUTE statements[2] INTO gone;
    IF gone IS NOT NULL THEN
        DELETE FROM lexical_terms WHERE term = ANY(gone) AND docs <= 0;
    END IF;
END
$$;

-- Every lexical entry under its memory's group, from scratch (this migration, and TRUNCATE).
CREATE FUNCTION cairn_lexical_recount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lexical_groups;
    DELETE FROM lexical_terms;
    PERFORM cairn_lexical_apply(
        'SELECT m.scope, m.status, m.until IS NULL AS open, l.doc, l.len_content, l.len_tags,'
        ' l.len_source_ref, l.len_reason, l.len_context, 1 AS sign'
        ' FROM lexical l JOIN memories m ON m.id = l.memory_id');
    RETURN NULL;
END
$$;

-- The rows a statement changed, as signed deltas. A lexical entry counts while its memory row
-- exists, whichever of the two is written first; a memory update counts only when it moves
-- the memory to another group (most updates touch access counts and move nothing).
CREATE FUNCTION cairn_lexical_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    lex text := 'l.doc, l.len_content, l.len_tags, l.len_source_ref, l.len_reason,'
        ' l.len_context';
    parts text[] := '{}';
    statements text[];
    emptied boolean;
    gone text[];
BEGIN
    IF TG_TABLE_NAME = 'lexical' THEN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            parts := parts || ('SELECT m.scope, m.status, m.until IS NULL AS open, ' || lex
                || ', -1 AS sign FROM old_rows l JOIN memories m ON m.id = l.memory_id');
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            parts := parts || ('SELECT m.scope, m.status, m.until IS NULL AS open, ' || lex
                || ', 1 AS sign FROM new_rows l JOIN memories m ON m.id = l.memory_id');
        END IF;
    ELSIF TG_OP = 'INSERT' THEN
        parts := parts || ('SELECT m.scope, m.status, m.until IS NULL AS open, ' || lex
            || ', 1 AS sign FROM new_rows m JOIN lexical l ON l.memory_id = m.id');
    ELSIF TG_OP = 'DELETE' THEN
        parts := parts || ('SELECT m.scope, m.status, m.until IS NULL AS open, ' || lex
            || ', -1 AS sign FROM old_rows m JOIN lexical l ON l.memory_id = m.id');
    ELSE
        IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE (o.scope, o.status, o.until IS NULL)
                    IS DISTINCT FROM (n.scope, n.status, n.until IS NULL)) THEN
            RETURN NULL;
        END IF;
        parts := parts || ('SELECT m.scope, m.status, m.until IS NULL AS open, ' || lex
            || ', m.sign FROM (SELECT o.id, o.scope, o.status, o.until, -1 AS sign'
            || ' FROM old_rows o UNION ALL SELECT n.id, n.scope, n.status, n.until, 1'
            || ' FROM new_rows n) m JOIN lexical l ON l.memory_id = m.id'
            || ' WHERE m.id IN (SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id'
            || ' WHERE (o.scope, o.status, o.until IS NULL)'
            || ' IS DISTINCT FROM (n.scope, n.status, n.until IS NULL))');
    END IF;
    -- cairn_lexical_apply's body, here where the transition tables are visible.
    statements := cairn_lexical_sql(array_to_string(parts, ' UNION ALL '));
    EXECUTE statements[1] INTO emptied;
    IF emptied THEN
        DELETE FROM lexical_groups WHERE docs <= 0;
    END IF;
    EXECUTE statements[2] INTO gone;
    IF gone IS NOT NULL THEN
        DELETE FROM lexical_terms WHERE term = ANY(gone) AND docs <= 0;
    END IF;
    RETURN NULL;
END
$$;

-- Transition tables allow one event per trigger.
CREATE TRIGGER lexical_counts_insert AFTER INSERT ON lexical REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_counts();
CREATE TRIGGER lexical_counts_update AFTER UPDATE ON lexical
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_counts();
CREATE TRIGGER lexical_counts_delete AFTER DELETE ON lexical REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_counts();
CREATE TRIGGER memories_counts_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_counts();
CREATE TRIGGER memories_counts_update AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_counts();
CREATE TRIGGER memories_counts_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_counts();
CREATE TRIGGER lexical_counts_truncate AFTER TRUNCATE ON lexical
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_recount();
CREATE TRIGGER memories_counts_truncate AFTER TRUNCATE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION cairn_lexical_recount();

-- The store's current rows.
SELECT cairn_lexical_apply(
    'SELECT m.scope, m.status, m.until IS NULL AS open, l.doc, l.len_content, l.len_tags,'
    ' l.len_source_ref, l.len_reason, l.len_context, 1 AS sign'
    ' FROM lexical l JOIN memories m ON m.id = l.memory_id');
