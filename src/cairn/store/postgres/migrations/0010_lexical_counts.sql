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

-- One lexical entry counted in or out (sign 1 or -1) of its memory's group.
CREATE TYPE cairn_lexical_delta AS (
    scope text, status text, open boolean, doc tsvector, len_content integer,
    len_tags integer, len_source_ref integer, len_reason integer, len_context integer,
    sign integer
);

-- Add the deltas to both tables. Rows that reach zero are deleted: a purged memory's words must
-- not outlive it here. Static SQL throughout, so each statement is planned once per session
-- (dynamic SQL planned anew on every write cost a `remember` about 15 ms at 100k).
CREATE FUNCTION cairn_lexical_apply(deltas cairn_lexical_delta[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    emptied boolean;
    gone text[];
BEGIN
    IF deltas IS NULL THEN
        RETURN;
    END IF;
    WITH d AS MATERIALIZED (SELECT * FROM unnest(deltas)),
    g AS (
        INSERT INTO lexical_groups
        SELECT scope, status, open, sum(sign), sum(sign * len_content), sum(sign * len_tags),
            sum(sign * len_source_ref), sum(sign * len_reason), sum(sign * len_context)
        FROM d GROUP BY 1, 2, 3
        ON CONFLICT (scope, status, open) DO UPDATE SET
            docs = lexical_groups.docs + EXCLUDED.docs,
            content = lexical_groups.content + EXCLUDED.content,
            tags = lexical_groups.tags + EXCLUDED.tags,
            source_ref = lexical_groups.source_ref + EXCLUDED.source_ref,
            reason = lexical_groups.reason + EXCLUDED.reason,
            context = lexical_groups.context + EXCLUDED.context
        RETURNING docs),
    t AS (
        INSERT INTO lexical_terms
        SELECT term, scope, status, open, sum(sign)
        FROM d, unnest(tsvector_to_array(d.doc)) AS term GROUP BY 1, 2, 3, 4
        HAVING sum(sign) <> 0
        ON CONFLICT (term, scope, status, open) DO UPDATE SET
            docs = lexical_terms.docs + EXCLUDED.docs
        RETURNING term, docs)
    SELECT (SELECT coalesce(bool_or(docs <= 0), false) FROM g),
        (SELECT array_agg(term) FILTER (WHERE docs <= 0) FROM t)
    INTO emptied, gone;
    IF emptied THEN
        DELETE FROM lexical_groups WHERE docs <= 0;
    END IF;
    IF gone IS NOT NULL THEN
        DELETE FROM lexical_terms WHERE term = ANY(gone) AND docs <= 0;
    END IF;
END
$$;

-- Every lexical entry under its memory's group, from scratch (this migration, and TRUNCATE):
-- set-based, not through a delta array, which would hold a large store's every vector at once.
CREATE FUNCTION cairn_lexical_count_all() RETURNS void LANGUAGE sql AS $$
DELETE FROM lexical_groups;
DELETE FROM lexical_terms;
INSERT INTO lexical_groups
SELECT m.scope, m.status, m.until IS NULL, count(*), sum(l.len_content), sum(l.len_tags),
    sum(l.len_source_ref), sum(l.len_reason), sum(l.len_context)
FROM lexical l JOIN memories m ON m.id = l.memory_id GROUP BY 1, 2, 3;
INSERT INTO lexical_terms
SELECT term, m.scope, m.status, m.until IS NULL, count(*)
FROM lexical l JOIN memories m ON m.id = l.memory_id, unnest(tsvector_to_array(l.doc)) AS term
GROUP BY 1, 2, 3, 4;
$$;

CREATE FUNCTION cairn_lexical_recount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM cairn_lexical_count_all();
    RETURN NULL;
END
$$;

-- The entries a statement changed, as deltas. A lexical entry counts while its memory row
-- exists, whichever of the two is written first; a memory update counts only when it moves
-- the memory to another group (most updates touch access counts and move nothing).
CREATE FUNCTION cairn_lexical_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas cairn_lexical_delta[];
    added cairn_lexical_delta[];
BEGIN
    IF TG_TABLE_NAME = 'lexical' THEN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            SELECT array_agg(ROW(m.scope, m.status, m.until IS NULL, l.doc, l.len_content,
                l.len_tags, l.len_source_ref, l.len_reason, l.len_context, -1)::cairn_lexical_delta)
            INTO deltas FROM old_rows l JOIN memories m ON m.id = l.memory_id;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
            SELECT array_agg(ROW(m.scope, m.status, m.until IS NULL, l.doc, l.len_content,
                l.len_tags, l.len_source_ref, l.len_reason, l.len_context, 1)::cairn_lexical_delta)
            INTO added FROM new_rows l JOIN memories m ON m.id = l.memory_id;
            deltas := deltas || added;
        END IF;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT array_agg(ROW(m.scope, m.status, m.until IS NULL, l.doc, l.len_content,
            l.len_tags, l.len_source_ref, l.len_reason, l.len_context, 1)::cairn_lexical_delta)
        INTO deltas FROM new_rows m JOIN lexical l ON l.memory_id = m.id;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(ROW(m.scope, m.status, m.until IS NULL, l.doc, l.len_content,
            l.len_tags, l.len_source_ref, l.len_reason, l.len_context, -1)::cairn_lexical_delta)
        INTO deltas FROM old_rows m JOIN lexical l ON l.memory_id = m.id;
    ELSE
        WITH moved AS (
            SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE (o.scope, o.status, o.until IS NULL)
                IS DISTINCT FROM (n.scope, n.status, n.until IS NULL)),
        sides AS (
            SELECT o.id, o.scope, o.status, o.until, -1 AS sign FROM old_rows o
            WHERE o.id IN (SELECT id FROM moved)
            UNION ALL
            SELECT n.id, n.scope, n.status, n.until, 1 FROM new_rows n
            WHERE n.id IN (SELECT id FROM moved))
        SELECT array_agg(ROW(m.scope, m.status, m.until IS NULL, l.doc, l.len_content,
            l.len_tags, l.len_source_ref, l.len_reason, l.len_context, m.sign)::cairn_lexical_delta)
        INTO deltas FROM sides m JOIN lexical l ON l.memory_id = m.id;
    END IF;
    PERFORM cairn_lexical_apply(deltas);
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
SELECT cairn_lexical_count_all();
