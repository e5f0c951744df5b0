-- Purge erases every byte (issue 12). From this version on every connection runs with
-- `PRAGMA secure_delete = ON` (connection.py), so SQLite zeroes the space a deleted or
-- rewritten row leaves behind. A store written before may still hold old text in space freed
-- without zeroing; `freed_space` says so, and its first purge rebuilds the file once (VACUUM).
INSERT OR IGNORE INTO meta (key, value)
    SELECT 'freed_space',
        CASE WHEN EXISTS (SELECT 1 FROM memories) OR EXISTS (SELECT 1 FROM events)
            THEN 'unscrubbed' ELSE 'zeroed' END;
