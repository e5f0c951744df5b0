"""The error tree. Every message says what was wrong and what to do about it.

    CairnError                      code            retryable
    ├── InvalidInput                invalid_input   no     a call's arguments are wrong
    │   ├── Refused                 refused         no     remember refused the content
    │   ├── UnknownType             unknown_type    no
    │   ├── InvalidScope            invalid_scope   no
    │   └── InvalidRef              invalid_ref     no
    ├── NotFound                    not_found       no     a ref names nothing
    ├── Conflict                    conflict        no     the state forbids the call
    ├── StoreBusy                   store_busy      yes    the store stayed locked too long
    ├── StoreError                  store_error     no     the store is unusable (schema, file)
    │   ├── StoreCorrupt            store_corrupt   no     damaged pages, or not a database at all
    │   ├── StoreForeign            store_foreign   no     another application's database
    │   ├── StoreReadOnly           store_read_only no     the file or its directory is read-only
    │   └── StoreFull               store_full      no     the disk (or a size limit) is full
    └── EmbedderUnavailable         embedder_error  yes    the embedding model could not run
        └── EmbedderUnreachable     embedder_error  yes    its server did not answer at all

Adapters map these to exit codes (CLI), tool errors (MCP) and status codes (HTTP); they
never need to match on message text.
"""

from __future__ import annotations


class CairnError(Exception):
    """Base of every error cairn raises on purpose."""

    code = "error"
    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def as_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "retryable": self.retryable}


class InvalidInput(CairnError):
    code = "invalid_input"


class Refused(InvalidInput):
    """remember refused the content (blank, too large, holds a secret)."""

    code = "refused"


class UnknownType(InvalidInput):
    code = "unknown_type"


class InvalidScope(InvalidInput):
    code = "invalid_scope"


class InvalidRef(InvalidInput):
    code = "invalid_ref"


class NotFound(CairnError):
    code = "not_found"


class Conflict(CairnError):
    code = "conflict"


class StoreBusy(CairnError):
    code = "store_busy"
    retryable = True


class StoreError(CairnError):
    code = "store_error"


class StoreCorrupt(StoreError):
    """The file is damaged, truncated, or not a database; `cairn check` and `export` help."""

    code = "store_corrupt"


class StoreForeign(StoreError):
    """A database that some other application owns; cairn will not write its tables into it."""

    code = "store_foreign"


class StoreReadOnly(StoreError):
    code = "store_read_only"


class StoreFull(StoreError):
    code = "store_full"


class EmbedderUnavailable(CairnError):
    code = "embedder_error"
    retryable = True


class EmbedderUnreachable(EmbedderUnavailable):
    """The embedding server could not be reached at all (refused, timed out, no route): the
    case the Ollama embedder falls back to the local model for."""
