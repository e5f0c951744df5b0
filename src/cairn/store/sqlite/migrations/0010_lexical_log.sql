-- Which lexical documents changed, in order (issue 18): the in-memory postings pool of a large
-- store (cairn/store/sqlite/postings_index.py) reads the rows past the last sequence it applied
-- and re-reads those documents from FTS5, instead of rebuilding. Triggers on lexical_lengths,
-- which every writer of the lexical index writes with it (FTS5 tables take no triggers).
-- Only the newest 50,000 rows are kept: a pool further behind finds a gap and rebuilds.
CREATE TABLE lexical_log (
    seq       INTEGER PRIMARY KEY,
    memory_id INTEGER NOT NULL
);
CREATE TRIGGER lexical_log_insert AFTER INSERT ON lexical_lengths
BEGIN
    INSERT INTO lexical_log (memory_id) VALUES (NEW.memory_id);
END;
CREATE TRIGGER lexical_log_delete AFTER DELETE ON lexical_lengths
BEGIN
    INSERT INTO lexical_log (memory_id) VALUES (OLD.memory_id);
END;
CREATE TRIGGER lexical_log_update AFTER UPDATE ON lexical_lengths
BEGIN
    INSERT INTO lexical_log (memory_id) VALUES (OLD.memory_id);
    INSERT INTO lexical_log (memory_id) SELECT NEW.memory_id WHERE NEW.memory_id != OLD.memory_id;
END;
-- The trim never deletes the newest row, so `seq` (max + 1) only grows.
CREATE TRIGGER lexical_log_trim AFTER INSERT ON lexical_log
BEGIN
    DELETE FROM lexical_log WHERE seq <= NEW.seq - 50000;
END;
