"""Session neighbours on either SQL backend: which memories of a session lie around a memory,
and when memories occurred. What the neighbours' window vectors are searched with differs per
backend (`store/<backend>/context.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cairn.store.sql.dialect import Sql

# Each target's neighbours: the memories of its session (and scope) at most `reach` positions
# away in write order, the target itself included.
_WINDOWS = (
    "WITH targets AS (SELECT id, scope, session_id FROM memories WHERE {among}), "
    "ordered AS (SELECT m.id, m.scope, m.session_id, row_number() OVER "
    "(PARTITION BY m.scope, m.session_id ORDER BY m.id) AS pos FROM memories m "
    "JOIN (SELECT DISTINCT scope, session_id FROM targets WHERE session_id IS NOT NULL) s "
    "ON m.scope = s.scope AND m.session_id = s.session_id) "
    "SELECT t.id, n.id FROM ordered t JOIN ordered n ON n.scope = t.scope "
    "AND n.session_id = t.session_id AND n.pos BETWEEN t.pos - ? AND t.pos + ? "
    "WHERE t.id IN (SELECT id FROM targets) ORDER BY t.id, n.id"
)
_EXISTING = "SELECT id FROM memories WHERE {among}"


class NeighbourRows:
    _sql: Sql

    def session_windows(self, memory_ids: Sequence[int], reach: int) -> dict[int, tuple[int, ...]]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[int, list[int]] = {}
        with self._sql.read() as run:
            rows = run.select_in(_WINDOWS, "id", ids, after=(reach, reach))
            known = {int(row[0]) for row in run.select_in(_EXISTING, "id", ids)}
        for memory_id, neighbour in rows:
            found.setdefault(int(memory_id), []).append(int(neighbour))
        return {i: tuple(found.get(i, [i])) for i in ids if i in known}

    def occurred_times(self, memory_ids: Sequence[int]) -> dict[int, datetime]:
        rows = self._sql.select_in(
            "SELECT id, occurred_at FROM memories WHERE {among}",
            "id",
            list(dict.fromkeys(memory_ids)),
        )
        read = self._sql.dialect.read_time
        return {int(memory_id): read(at) for memory_id, at in rows}
