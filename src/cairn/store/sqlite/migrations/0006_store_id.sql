-- Whole-store copy (issue 7): every store gets an identity of its own, so `cairn migrate` can
-- record in a target which source it is being filled from and refuse to mix two sources.
INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));
