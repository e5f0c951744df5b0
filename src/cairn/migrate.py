"""Copy a whole store into another, on either backend, resumably: `cairn migrate`.

Every table `cairn.store.tables` lists is copied in the order of its key, in batches read from
the source with `dump_table(after=..., limit=...)` and written to the target with `load_rows`.

Resuming. Each batch is loaded in one target transaction together with a checkpoint in the
target's meta (`migrate:<table>` = the key of the batch's last row), so after an interruption
(Ctrl-C, a lost connection, a killed process) the target holds whole batches only, and the
next run continues after the checkpoint. A checkpoint rather than "the largest id present":
several tables have text or composite keys, and the checkpoint is exact for all of them.

Refusing to mix stores. Every store has an identity (`store_id` in its meta, migration 0006).
The first run records the source's identity in the target (`migrated_from`) and requires the
target to be empty; later runs continue only when that marker names the same source. A target
holding rows that did not come from this source is refused, as is the source itself.

Derived data is built on the target, not copied: memory tags and the lexical index's own
structures row by row as documents load, PostgreSQL's HNSW indexes once at the end
(`finish_load`), when one build costs far less than keeping the graph up to date per row.

Verification. After the copy (and the id sequences carried over), every table is read again on
both sides and its row count and order-independent checksum over the neutral encoding compared
(`cairn.store.tables.table_sum`). A mismatch - the source was written to during the copy, or
the target was - is an error naming the tables and the first rows that differ; a clean rerun
into an empty target is then the way out. Writers should be stopped while a store migrates.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cairn.errors import Conflict, InvalidInput, StoreError
from cairn.exchange import require_empty
from cairn.store.base import Store
from cairn.store.tables import TableSum, row_digest, table_spec, table_sum

MARKER = "migrated_from"
DEFAULT_BATCH = 500
_SHOWN_ROWS = 3

# Called after each committed batch (and once per resumed table) with the table and the rows.
Progress = Callable[[str, int], None]


@dataclass(frozen=True, slots=True)
class TableCheck:
    """A table after the copy: rows and checksum, equal on both sides."""

    table: str
    rows: int
    checksum: str


@dataclass(frozen=True, slots=True)
class MigrationResult:
    source: str
    target: str
    resumed: bool
    copied: int  # rows copied by this run
    tables: tuple[TableCheck, ...]
    finish_seconds: float  # building what is built once at the end (PostgreSQL: HNSW)


def rows_to_copy(source: Store) -> int:
    """All rows the source holds in copied tables (a progress bar's length)."""
    return sum(source.count_rows(name) for name in source.table_names())


def migrate(
    source: Store,
    target: Store,
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> MigrationResult:
    """Copy `source` into `target` (empty, or partly filled by an earlier run from `source`),
    then verify counts and checksums; raises `StoreError` when they differ."""
    if batch_size < 1:
        raise InvalidInput(f"batch size {batch_size} must be at least 1, e.g. 500.")
    tables = source.table_names()
    missing = sorted(set(tables) - set(target.table_names()))
    if missing:
        raise StoreError(
            f"the target {target.location} has no table {', '.join(missing)}; it was created by "
            "an older cairn. Upgrade cairn-memory where it runs, then retry."
        )
    resumed = _claim(source, target)
    copied = 0
    for name in tables:
        copied += _copy_table(source, target, name, batch_size, progress)
    target.advance_sequences(source.sequences())
    start = time.perf_counter()
    target.finish_load()
    finished = time.perf_counter() - start
    checks = verify(source, target)
    return MigrationResult(source.location, target.location, resumed, copied, checks, finished)


def _identity(store: Store) -> str:
    identity = store.get_meta("store_id")
    if not identity:
        raise StoreError(
            f"the store at {store.location} has no store_id; open it once with this cairn "
            "version (which records one), then retry."
        )
    return identity


def _claim(source: Store, target: Store) -> bool:
    """Mark the target as filled from `source`; True when an earlier run already did."""
    source_id = _identity(source)
    if _identity(target) == source_id:
        raise InvalidInput(
            f"{source.location} and {target.location} are the same store; give another "
            "--to location."
        )
    marker = target.get_meta(MARKER)
    if marker == source_id:
        return True
    if marker is not None:
        raise Conflict(
            f"{target.location} is being filled from another store (store_id {marker}), not "
            f"from {source.location}; migrate into an empty database or file instead."
        )
    require_empty(target, "migrate", "point --to")
    target.set_meta(MARKER, source_id)
    return False


def _copy_table(
    source: Store, target: Store, name: str, batch_size: int, progress: Progress | None
) -> int:
    spec = table_spec(name)
    checkpoint = f"migrate:{name}"
    raw = target.get_meta(checkpoint)
    after: list[Any] | None = None if raw is None else json.loads(raw)
    if after is not None and progress is not None:
        progress(name, target.count_rows(name))
    copied = 0
    while True:
        rows = list(source.dump_table(name, after=after, limit=batch_size))
        if not rows:
            return copied
        after = spec.key_of(rows[-1])
        with target.transaction():
            target.load_rows(name, rows)
            target.set_meta(checkpoint, json.dumps(after, ensure_ascii=False))
        copied += len(rows)
        if progress is not None:
            progress(name, len(rows))


def verify(source: Store, target: Store) -> tuple[TableCheck, ...]:
    """Compare every copied table's row count and checksum; raise naming what differs."""
    checks: list[TableCheck] = []
    problems: list[str] = []
    for name in source.table_names():
        mine, theirs = table_sum(source.dump_table(name)), table_sum(target.dump_table(name))
        if mine == theirs:
            checks.append(TableCheck(name, mine.rows, mine.checksum))
        else:
            problems.append(_describe(source, target, name, mine, theirs))
    if problems:
        raise StoreError(
            f"the copy in {target.location} does not match {source.location}: "
            f"{'; '.join(problems)}. The source or the target was written to during the "
            "migration: stop every writer, then migrate again into an empty target."
        )
    return tuple(checks)


def _describe(source: Store, target: Store, name: str, mine: TableSum, theirs: TableSum) -> str:
    if mine.rows != theirs.rows:
        counts = f"{mine.rows} rows in the source, {theirs.rows} in the target"
    else:
        counts = f"{mine.rows} rows on both sides but different checksums"
    differing = _differing_keys(_digests(source, name), _digests(target, name))
    keys = ", ".join(differing[:_SHOWN_ROWS])
    more = f" and {len(differing) - _SHOWN_ROWS} more" if len(differing) > _SHOWN_ROWS else ""
    return f"table {name}: {counts} (rows differing: {keys}{more})"


def _digests(store: Store, name: str) -> dict[str, int]:
    spec = table_spec(name)
    found: dict[str, int] = {}
    for row in store.dump_table(name):
        key = ", ".join(f"{k}={v}" for k, v in zip(spec.key, spec.key_of(row), strict=True))
        found[key] = row_digest(row)
    return found


def _differing_keys(mine: Mapping[str, int], theirs: Mapping[str, int]) -> list[str]:
    keys = set(mine) | set(theirs)
    return sorted(k for k in keys if mine.get(k) != theirs.get(k))
