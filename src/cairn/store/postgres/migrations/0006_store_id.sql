-- Whole-store copy (issue 7): the SQLite backend's `meta` table (store identity, migration
-- checkpoints), and an identity of this store's own, so `cairn migrate` can record in a
-- target which source it is being filled from and refuse to mix two sources.
CREATE TABLE meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO meta (key, value) VALUES ('store_id', replace(gen_random_uuid()::text, '-', ''));
