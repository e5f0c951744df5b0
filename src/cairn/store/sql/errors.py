"""Driver failures as cairn's error tree, the way both SQL backends translate them: a table
from what the driver reports to a rule (the error class, and a message template saying what
happened and what to do, with `{path}` for the store and `{reason}` for the driver's words).
What a backend looks at (SQLite's result codes, psycopg's exception classes) is its own."""

from __future__ import annotations

from cairn.errors import CairnError, Conflict, StoreError

Rule = tuple[type[CairnError], str]

CONFLICT: Rule = (
    Conflict,
    "the write collides with a row the store at {path} already holds ({reason}); "
    "import into an empty store or skip records already copied.",
)
FAILED: Rule = (StoreError, "the store at {path} failed: {reason}")


def raised(rule: Rule, **fields: object) -> CairnError:
    """The error `rule` makes, its template filled with `fields`."""
    kind, message = rule
    return kind(message.format(**fields))
