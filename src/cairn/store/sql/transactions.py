"""Write transactions as both SQL backends run them: bound to the calling thread until the
outermost block ends, nested blocks joining it without savepoints, rolled back on any failure.
Where the connection comes from, what opens a transaction, how a failed one is rolled back and
how driver errors read are each backend's own (its `Connections` or `Database`)."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Generic, TypeVar

from cairn.store.sql.dialect import Conn

C = TypeVar("C", bound=Conn)


@contextmanager
def begun(conn: C, begin: str, pending: Callable[[C], bool], lost: type[Exception]) -> Iterator[C]:
    """`conn` in the transaction `begin` opens: committed at the end, rolled back on failure
    when it is still `pending` (engines drop some failed transactions themselves, and a second
    ROLLBACK would mask the real cause with "no transaction is active"), a ROLLBACK failing with
    `lost` (the connection is gone, and the transaction with it) ignored for the same reason."""
    try:
        conn.execute(begin)
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if pending(conn):
            with suppress(lost):
                conn.execute("ROLLBACK")
        raise


class ThreadTransactions(ABC, Generic[C]):
    """`transaction()` for a backend's connections: subclasses say where a connection comes
    from (`connection`), how driver errors are translated, and whether a failed one is still
    open; `_committed` runs after an outermost commit (PostgreSQL's ANALYZE when due)."""

    _local: threading.local  # `tx`: the thread's open transaction's connection
    _begin: str  # the statement that opens a write transaction
    # The statement that opens one whose commit may skip waiting for the log to reach disk
    # (`durable=False`); a backend without that choice opens it as any other.
    _begin_lazy: str = ""
    _lost: type[Exception]  # what a ROLLBACK on a dropped connection raises (see `begun`)

    @abstractmethod
    def connection(self) -> AbstractContextManager[C]:
        """For reads: the thread's transaction's connection when it has one."""

    @abstractmethod
    def translated(self) -> AbstractContextManager[None]:
        """A block whose driver errors leave it as cairn's error tree."""

    @abstractmethod
    def _pending(self, conn: C) -> bool:
        """Whether `conn` still holds a transaction to roll back."""

    def _committed(self, conn: C) -> None:
        """After an outermost transaction commits, still holding its connection."""

    @property
    def in_transaction(self) -> bool:
        return getattr(self._local, "tx", None) is not None

    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[C]:
        """A write transaction; nested calls join the outermost one.

        `durable=False` is for writes whose loss in a crash loses nothing the user wrote (a
        recall's event and access counts): the commit returns before the log is flushed, still
        atomic, and a crash can only drop the last such commits whole. The outermost block
        decides, since every store write opens a nested block of its own: nothing the user
        wrote may be written inside a lazy one."""
        with self.translated(), self.connection() as conn:
            if self.in_transaction:
                yield conn
                return
            begin = self._begin if durable or not self._begin_lazy else self._begin_lazy
            with begun(conn, begin, self._pending, self._lost):
                self._local.tx = conn
                try:
                    yield conn
                finally:
                    self._local.tx = None
            self._committed(conn)
