"""What a `postgresql://` URL says beyond the libpq connection string.

cairn reads a few query parameters of its own and removes them before handing the rest to
libpq (which refuses parameters it does not know):

    pool_min_size    connections the pool keeps open                       (default 1)
    pool_max_size    most connections one store opens at once              (default 10)
    pool_timeout     seconds a call waits for a free pooled connection     (default 30)
    busy_timeout_ms  milliseconds a writer waits for the write lock        (default 30000)
    hnsw_ef_search   HNSW candidate list size for dense search             (default 200)

Example: `postgresql://cairn@db.internal/cairn?pool_max_size=4&busy_timeout_ms=5000`.
A parameter in the URL wins over the same setting passed to `PostgresStore(...)`, so a caller's
defaults never override what the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit

from cairn.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class PoolOptions:
    pool_min_size: int = 1
    pool_max_size: int = 10
    pool_timeout: float = 30.0
    busy_timeout_ms: int = 30_000
    hnsw_ef_search: int = 200

    def validate(self) -> PoolOptions:
        if self.pool_min_size < 0 or self.pool_max_size < max(1, self.pool_min_size):
            raise InvalidInput(
                f"pool_max_size={self.pool_max_size} must be at least 1 and at least "
                f"pool_min_size={self.pool_min_size}; fix the numbers in the URL."
            )
        if self.pool_timeout <= 0 or self.busy_timeout_ms <= 0:
            raise InvalidInput(
                "pool_timeout and busy_timeout_ms must be positive; e.g. pool_timeout=30 and "
                "busy_timeout_ms=30000."
            )
        if not 1 <= self.hnsw_ef_search <= 1000:
            raise InvalidInput(
                f"hnsw_ef_search={self.hnsw_ef_search} is outside 1..1000 (pgvector's range); "
                "200 is the default."
            )
        return self


# Field types by name (the annotations are strings under `from __future__ import annotations`).
_OWN: dict[str, type] = {f.name: float if f.type == "float" else int for f in fields(PoolOptions)}


def split_url(url: str, defaults: PoolOptions) -> tuple[str, PoolOptions]:
    """The libpq URL without cairn's own parameters, and the options they set."""
    parts = urlsplit(url)
    kept: list[tuple[str, str]] = []
    found: dict[str, Any] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in _OWN:
            found[key] = _number(key, value, _OWN[key])
        else:
            kept.append((key, value))
    conninfo = _unsplit(parts._replace(query=urlencode(kept, safe="/")))
    return conninfo, replace(defaults, **found).validate()


def _number(key: str, raw: str, kind: type) -> Any:
    try:
        return kind(raw)
    except ValueError:
        raise InvalidInput(
            f"{key}={raw!r} in the PostgreSQL URL is not a number; write e.g. {key}=10."
        ) from None


def redact(url: str) -> str:
    """The URL with any password (in the authority or the query) masked, for messages."""
    parts = urlsplit(url)
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    if at and userinfo.partition(":")[2]:
        netloc = f"{userinfo.split(':', 1)[0]}:***@{hostport}"
    query = [
        (key, "***" if key == "password" else value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return _unsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="/*")))


def _unsplit(parts: SplitResult) -> str:
    """`urlunsplit`, but keeping `//` when the host is empty (`postgresql:///db?host=/sock`)."""
    url = f"{parts.scheme}://{parts.netloc}{parts.path}"
    if parts.query:
        url += f"?{parts.query}"
    if parts.fragment:
        url += f"#{parts.fragment}"
    return url
