-- Scale (issue 18): window vectors get HNSW indexes like own vectors. A row of vector_indexes
-- now says which table its index covers, so one embedder can have both.
ALTER TABLE vector_indexes ADD COLUMN kind text NOT NULL DEFAULT 'vectors';
ALTER TABLE vector_indexes DROP CONSTRAINT vector_indexes_pkey;
ALTER TABLE vector_indexes ADD PRIMARY KEY (kind, identity, dims);
