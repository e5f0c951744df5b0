"""The queries both SQL backends share, written once and run through a backend's `Dialect`
(`dialect.py`). SQLite and PostgreSQL each supply a dialect (`store/<backend>/dialect.py`) and
their own code only where the engines really differ: lexical and dense search, connections and
locking, migrations' DDL."""
