"""Every shared part of the `Store` Protocol in one mixin, for a SQL store class to inherit
beside its own context, copy and erase parts. It needs `self._sql` and the `_write_tags` hook."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cairn.store.sql.browse import BrowseRows
from cairn.store.sql.code import CodeRows
from cairn.store.sql.lessons import LessonRows
from cairn.store.sql.memories import MemoryRows
from cairn.store.sql.pages import PageRows
from cairn.store.sql.procedures import ProcedureRows
from cairn.store.sql.sessions import SessionRows
from cairn.store.sql.vectors import VectorRows


class SharedRows(
    MemoryRows, VectorRows, SessionRows, ProcedureRows, CodeRows, LessonRows, PageRows, BrowseRows
):
    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[None]:
        with self._sql.db.transaction(durable=durable):
            yield

    def close(self) -> None:
        self._sql.db.close()
