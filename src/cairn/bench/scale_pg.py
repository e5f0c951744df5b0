"""A throwaway PostgreSQL database for one size of `cairn bench scale --store postgresql://...`.

The URL names a server (and a role that may CREATE DATABASE); each size gets its own new
database with the vector extension, dropped when the size is done, so a benchmark never touches
an existing store.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
from psycopg import sql

from cairn.errors import InvalidInput


def with_database(url: str, name: str) -> str:
    """`url` pointing at database `name`, its other parameters (host, options) kept."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
    base = f"{parts.scheme}://{parts.netloc}/{name}"
    return f"{base}?{urlencode(query, safe='/')}" if query else base


def _libpq(url: str) -> str:
    """The URL without cairn's own pool parameters, which libpq would refuse."""
    from cairn.store.postgres.options import PoolOptions, split_url

    return split_url(url, PoolOptions())[0]


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection to the server of `url`, or one line saying what to do."""
    try:
        return psycopg.connect(_libpq(url), autocommit=True)
    except psycopg.Error as exc:
        why = " ".join(str(exc).split())  # libpq's message spans lines
        raise InvalidInput(
            f"cannot reach the PostgreSQL server of --store ({why}); pass the URL of a running "
            "server whose role may CREATE DATABASE."
        ) from None


@contextmanager
def fresh_database(url: str, name: str) -> Iterator[str]:
    admin = connect(url)
    try:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        target = with_database(url, name)
        with psycopg.connect(_libpq(target), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield target
    finally:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        admin.close()
