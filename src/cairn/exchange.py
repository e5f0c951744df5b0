"""Export and import: the whole store as JSON Lines, every table that `cairn.store.tables`
lists (memories with their history, events, vectors, sessions, procedures, citations, ...).

Version 2, written here:

    {"format": "cairn-export", "version": 2, "backend": "sqlite", "tables": ["memories", ...]}
    {"record": "row", "table": "memories", "row": {...}}        one line per row, table by table
    {"record": "sequences", "sequences": {"memories": 12, ...}}  last: id high-water marks

Rows are in the neutral encoding of `cairn.store.tables` (times ISO UTC, vectors base64
float32, JSON as values), so a file written by one backend loads into the other. Version 1
files (memories, events and vectors as `"record": "memory" | "event" | "vector"`) are still
read; their lexical index is rebuilt by analysing the memories, as version 1 did.

A superseded version is exported with the status `replaced`; older files, which kept it
`active`, are read as if they had said `replaced`.

Loading a copy is only allowed into an empty store: merging two histories would renumber refs
that other records point at. The load runs in one transaction, so a damaged line leaves the
store empty. Into a non-empty store an export is merged instead, claim by claim
(`current_memories` feeds `cairn.importers.cairn_export`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from cairn.errors import Conflict, InvalidInput
from cairn.indexing import lexical_doc
from cairn.refusal import check_text
from cairn.store.base import LEXICAL_FIELDS, Store
from cairn.store.tables import table_spec, time_text, vector_blob
from cairn.timeutil import parse_when

FORMAT = "cairn-export"
VERSION = 2
READS = (1, 2)
_BATCH = 500
_V1_TABLES = {"memory": "memories", "event": "events", "vector": "vectors"}
_V1_TIMES = {
    "memories": ("written_at", "occurred_at", "until", "last_cited_at", "last_accessed_at"),
    "events": ("at",),
}


def export_lines(store: Store) -> Iterator[str]:
    tables = store.table_names()
    yield header_line(store.backend, tables)
    for name in tables:
        for row in store.dump_table(name):
            yield row_line(name, row)
    yield sequences_line(store.sequences())


def header_line(backend: str, tables: list[str]) -> str:
    return _dump({"format": FORMAT, "version": VERSION, "backend": backend, "tables": tables})


def row_line(table: str, row: Mapping[str, Any]) -> str:
    return _dump({"record": "row", "table": table, "row": row})


def sequences_line(sequences: Mapping[str, int]) -> str:
    return _dump({"record": "sequences", "sequences": dict(sequences)})


def export_to(store: Store, out: IO[str]) -> int:
    count = 0
    for line in export_lines(store):
        out.write(line + "\n")
        count += 1
    return count


def is_empty(store: Store) -> bool:
    return not any(store.count_rows(name) for name in store.table_names())


def require_empty(
    store: Store, what: str, where: str = "point CAIRN_HOME, CAIRN_URL or --store"
) -> None:
    """Refuse a store that holds any copied row (ids in the copy would collide)."""
    held = {name: n for name in store.table_names() if (n := store.count_rows(name))}
    if held:
        shown = ", ".join(f"{n} {name}" for name, n in held.items())
        raise Conflict(
            f"{what} needs an empty store, and {store.location} holds {shown} (refs in the "
            f"copy would collide with existing ones); {where} at a new location."
        )


def import_from(store: Store, lines: Iterable[str]) -> dict[str, int]:
    """Load an export into an empty store; returns the rows loaded per table."""
    require_empty(store, "import")
    counts: dict[str, int] = {}
    with store.transaction():
        loader = _Loader(store, counts)
        for version, record, number in _records(lines):
            if version == 1:
                loader.add_v1(record, number)
            else:
                loader.add(record, number)
        loader.flush()
        store.advance_sequences(loader.sequences)
        store.finish_load()
    return counts


def current_memories(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The memory rows of an export that are current (active or resting), in file order."""
    for version, record, number in _records(lines):
        row = _memory_row(record, version, number)
        if row is not None and _current_status(row).get("status") in ("active", "resting"):
            yield row


def _records(lines: Iterable[str]) -> Iterator[tuple[int, dict[str, Any], int]]:
    """The records after an export's header, each with the format version and its line number;
    a file with no header is refused once read through."""
    version = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _parse(line, number)
        if version == 0:
            version = _check_header(record)
        else:
            yield version, record, number
    if version == 0:
        raise InvalidInput("the file is empty; export the store again.")


def _memory_row(record: dict[str, Any], version: int, number: int) -> dict[str, Any] | None:
    if version == 1:
        if record.get("record") != "memory":
            return None
        try:
            return _v1_row("memories", {k: v for k, v in record.items() if k != "record"})
        except (KeyError, ValueError, TypeError) as exc:
            raise InvalidInput(f"line {number}: unreadable memories record ({exc}).") from None
    row = record.get("row")
    if record.get("table") != "memories" or not isinstance(row, dict):
        return None
    return row


class _Loader:
    """Collects consecutive rows of one table and loads them in batches."""

    def __init__(self, store: Store, counts: dict[str, int]) -> None:
        self.store = store
        self.counts = counts
        self.table = ""
        self.rows: list[Mapping[str, Any]] = []
        self.sequences: dict[str, int] = {}

    def add(self, record: dict[str, Any], number: int) -> None:
        kind = record.get("record")
        if kind == "sequences" and isinstance(record.get("sequences"), dict):
            self.sequences = {str(k): int(v) for k, v in record["sequences"].items()}
        elif kind == "row" and isinstance(record.get("row"), dict):
            self.put(str(record.get("table")), record["row"], number)
        else:
            raise InvalidInput(f"line {number}: unknown record {kind!r}; the file is damaged.")

    def add_v1(self, record: dict[str, Any], number: int) -> None:
        table = _V1_TABLES.get(record.pop("record", None))
        if table is None:
            raise InvalidInput(f"line {number}: unknown record kind; the file is damaged.")
        try:
            row = _v1_row(table, record)
        except (KeyError, ValueError, TypeError) as exc:
            raise InvalidInput(f"line {number}: unreadable {table} record ({exc}).") from None
        self.put(table, row, number)
        if table == "memories" and row["status"] != "purged":
            doc = lexical_doc(row["content"], row["tags"], row["source_ref"], row["reason"])
            fields = {name: doc.field(name) for name in LEXICAL_FIELDS}
            self.put("lexical", {"memory_id": row["id"], **fields}, number)

    def put(self, table: str, row: Mapping[str, Any], number: int) -> None:
        try:
            table_spec(table)
        except InvalidInput as exc:
            raise InvalidInput(f"line {number}: {exc.message}") from None
        if table != self.table or len(self.rows) >= _BATCH:
            self.flush()
            self.table = table
        self.rows.append(_current_status(row) if table == "memories" else row)

    def flush(self) -> None:
        if self.rows:
            self.store.load_rows(self.table, self.rows)
            self.counts[self.table] = self.counts.get(self.table, 0) + len(self.rows)
            self.rows = []


def _current_status(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """Files written before the `replaced` status kept superseded versions `active`."""
    if row.get("replaced_by") is not None and row.get("status") in ("active", "resting"):
        return {**row, "status": "replaced"}
    return row


def _v1_row(table: str, record: dict[str, Any]) -> dict[str, Any]:
    """A version 1 record as a neutral row (same field names; times re-encoded)."""
    if table == "vectors":
        blob = vector_blob(str(record["vector"]))
        return {
            "memory_id": int(record["memory_id"]),
            "identity": str(record["identity"]),
            "dims": len(blob) // 4,
            "vector": record["vector"],
        }
    row = dict(record)
    for name in _V1_TIMES[table]:
        if row.get(name) is not None:
            row[name] = time_text(parse_when(row[name], field=name, end_of_day=False))
    return row


def _check_header(record: dict[str, Any]) -> int:
    if record.get("format") != FORMAT:
        raise InvalidInput("this file is not a cairn export (its first line has no header).")
    version = record.get("version")
    if version not in READS:
        raise InvalidInput(
            f"export version {version} is not supported; this cairn reads versions "
            f"{', '.join(map(str, READS))}. Export again with the same cairn version."
        )
    return int(version)


def _parse(line: str, number: int) -> dict[str, Any]:
    check_text(f"line {number}", line)
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {number} is not JSON ({exc.msg}); the file is damaged.") from None
    except RecursionError:
        raise InvalidInput(
            f"line {number} nests too deeply to read; the file is damaged."
        ) from None
    if not isinstance(value, dict):
        raise InvalidInput(f"line {number} is not a JSON object; the file is damaged.")
    return value


def _dump(value: dict[str, Any]) -> str:
    # Keys keep their order: JSON values are carried as they were written.
    return json.dumps(value, ensure_ascii=False)
