"""The pages index on either SQL backend: documentation files and their heading chunks."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.records.pages import Page, PageChunk, PageFile
from cairn.store.sql.dialect import Run, Sql
from cairn.store.sql.records import Columns

PAGES = Columns("pages", Page)
FILES = Columns("page_files", PageFile)


class PageRows:
    """Mixin of the SQL stores: the `PageStore` part of the Protocol."""

    _sql: Sql

    def page_files(self, scope: str) -> dict[str, PageFile]:
        rows = self._sql.all(FILES.select("WHERE scope = ?"), (scope,))
        return {row[0]: FILES.read(self._sql.dialect, row) for row in rows}

    def sync_page_file(self, scope: str, file: PageFile, chunks: Sequence[PageChunk]) -> None:
        with self._sql.write() as run:
            run.execute(
                "INSERT INTO page_files (scope, path, mtime_ns, size, digest)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, path) DO UPDATE SET"
                " mtime_ns = excluded.mtime_ns, size = excluded.size, digest = excluded.digest",
                (scope, file.path, file.mtime_ns, file.size, file.digest),
            )
            old: dict[str, list[int]] = {}
            for page_id, digest in run.all(
                "SELECT id, digest FROM pages WHERE scope = ? AND path = ? ORDER BY id",
                (scope, file.path),
            ):
                old.setdefault(digest, []).append(int(page_id))
            for chunk in chunks:
                _write_chunk(run, scope, file.path, chunk, old.get(chunk.digest))
            stale = [page_id for ids in old.values() for page_id in ids]
            for part in run.dialect.chunks(stale):
                among, params = run.dialect.among("id", part)
                run.execute(f"DELETE FROM pages WHERE {among}", params)

    def drop_page_files(self, scope: str, paths: Sequence[str]) -> None:
        with self._sql.write() as run:
            for part in run.dialect.chunks(paths):
                among, params = run.dialect.among("path", part, "text")
                run.execute(f"DELETE FROM pages WHERE scope = ? AND {among}", (scope, *params))
                run.execute(f"DELETE FROM page_files WHERE scope = ? AND {among}", (scope, *params))

    def pages_in(self, scope: str) -> list[Page]:
        rows = self._sql.all(
            PAGES.select("WHERE scope = ? ORDER BY path, line_start, id"), (scope,)
        )
        return [PAGES.read(self._sql.dialect, row) for row in rows]

    def get_pages(self, ids: Sequence[int]) -> list[Page]:
        wanted = list(dict.fromkeys(ids))
        rows = self._sql.select_in(PAGES.select("WHERE {among}"), "id", wanted)
        found = {int(row[0]): PAGES.read(self._sql.dialect, row) for row in rows}
        return [found[i] for i in ids if i in found]


def _write_chunk(
    run: Run, scope: str, path: str, chunk: PageChunk, reusable: list[int] | None
) -> None:
    """Update a chunk whose digest is unchanged in place (it keeps its `doc_` ref), else add it."""
    if reusable:
        run.execute(
            "UPDATE pages SET heading = ?, line_start = ?, line_end = ?, text = ? WHERE id = ?",
            (chunk.heading, chunk.line_start, chunk.line_end, chunk.text, reusable.pop(0)),
        )
        return
    run.execute(
        "INSERT INTO pages (scope, path, heading, line_start, line_end, text, digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (scope, path, chunk.heading, chunk.line_start, chunk.line_end, chunk.text, chunk.digest),
    )
