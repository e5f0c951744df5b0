"""Procedures: rows with their tallies, contributions and vectors, on either SQL backend.

A mixin of the SQL stores. Tallies are columns so feedback can increment them without a read;
a procedure always comes back with its three most recent contributions, newest first.
Procedures are ranked in memory, so their vectors are plain values, not a vector index.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Contribution, ProcedureEvidence
from cairn.records.sessions import TALLIES, NewProcedure, Procedure
from cairn.store.sql.dialect import Dialect, Sql, assignments
from cairn.store.sql.records import Columns

PROCEDURE_COLUMNS = (
    "id, scope, goal, summary, context, steps, caveats, outcome, outcome_summary, session_id, "
    "content_hash, written_at, updated_at, used, not_used, helped, no_effect, harmed, unknown"
)
PROCEDURE_UPDATABLE = frozenset({"outcome", "outcome_summary", "updated_at"})
CONTRIBUTIONS_SHOWN = 3
NEW_PROCEDURES = Columns("procedures", NewProcedure)
CONTRIBUTIONS = Columns("procedure_contributions", Contribution)


class ProcedureRows:
    _sql: Sql

    def add_procedure(self, procedure: NewProcedure) -> int:
        d = self._sql.dialect
        # A new procedure was last updated when it was written.
        return self._sql.insert(
            NEW_PROCEDURES.insert(also=("updated_at",)),
            [*NEW_PROCEDURES.values(d, procedure), d.time(procedure.written_at)],
        )

    def get_procedures(self, ids: Sequence[int]) -> list[Procedure]:
        rows = self._sql.select_in(
            f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE {{among}}", "id", ids
        )
        found = {p.id: p for p in self._with_contributions(rows)}
        return [found[i] for i in ids if i in found]

    def procedures_in(
        self, scopes: Sequence[str], *, as_of: datetime | None, limit: int
    ) -> list[Procedure]:
        """The scopes' procedures, most recently updated first (written by `as_of` when set)."""
        d = self._sql.dialect
        among, params = d.among("scope", scopes, "text")
        if as_of is not None:
            among += " AND written_at <= ?"
            params.append(d.time(as_of))
        rows = self._sql.all(
            f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE {among} "
            "ORDER BY updated_at DESC, id DESC LIMIT ?",
            (*params, limit),
        )
        return self._with_contributions(rows)

    def find_procedure(self, scope: str, content_hash: str) -> Procedure | None:
        rows = self._sql.all(
            f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE scope = ? AND content_hash = ? "
            "ORDER BY id LIMIT 1",
            (scope, content_hash),
        )
        found = self._with_contributions(rows)
        return found[0] if found else None

    def update_procedure(self, procedure_id: int, changes: Mapping[str, Any]) -> None:
        columns = assignments(changes, PROCEDURE_UPDATABLE, "procedure")
        if not columns:
            return
        d = self._sql.dialect
        values = [d.time(v) if isinstance(v, datetime) else v for v in changes.values()]
        self._sql.run(f"UPDATE procedures SET {columns} WHERE id = ?", (*values, procedure_id))

    def tally_procedure(self, procedure_id: int, tally: str, by: int = 1) -> None:
        if tally not in TALLIES:
            raise InvalidInput(f"{tally} is not a procedure tally; tallies are {list(TALLIES)}")
        top = self._sql.dialect.greatest
        self._sql.run(
            f"UPDATE procedures SET {tally} = {top}(0, {tally} + ?) WHERE id = ?",
            (by, procedure_id),
        )

    def add_contribution(
        self, procedure_id: int, session_id: str | None, contribution: Contribution
    ) -> None:
        self._sql.run(
            CONTRIBUTIONS.insert(also=("procedure_id", "session_id")),
            [*CONTRIBUTIONS.values(self._sql.dialect, contribution), procedure_id, session_id],
        )

    def put_procedure_vector(self, procedure_id: int, identity: str, vector: Vector) -> None:
        self._sql.run(
            "INSERT INTO procedure_vectors (procedure_id, identity, dims, vector) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (procedure_id) DO UPDATE SET "
            "identity = excluded.identity, dims = excluded.dims, vector = excluded.vector",
            (procedure_id, identity, int(vector.shape[0]), self._sql.dialect.vector(vector)),
        )

    def get_procedure_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        return plain_vectors(self._sql, "procedure_vectors", "procedure_id", ids, identity)

    def _with_contributions(self, rows: Sequence[Sequence[Any]]) -> list[Procedure]:
        d = self._sql.dialect
        found = self._sql.select_in(
            f"SELECT procedure_id, {CONTRIBUTIONS.columns} FROM procedure_contributions "
            "WHERE {among} ORDER BY procedure_id, occurred_at DESC, id DESC",
            "procedure_id",
            [int(row[0]) for row in rows],
        )
        recent: dict[int, list[Contribution]] = {}
        for pid, *contribution in found:
            shown = recent.setdefault(int(pid), [])
            if len(shown) < CONTRIBUTIONS_SHOWN:
                shown.append(CONTRIBUTIONS.read(d, contribution))
        return [_procedure(d, row, recent.get(int(row[0]), [])) for row in rows]


def plain_vectors(
    sql: Sql, table: str, key: str, ids: Sequence[int], identity: str
) -> dict[int, Vector]:
    """The vectors of `ids` under one embedder identity, from a table of plain (dialect-encoded)
    vectors keyed by `key`: procedures' on both backends, memories' on SQLite."""
    rows = sql.select_in(
        f"SELECT {key}, vector FROM {table} WHERE identity = ? AND {{among}}",
        key,
        ids,
        before=(identity,),
    )
    return {int(row_id): sql.dialect.read_vector(value) for row_id, value in rows}


def _procedure(d: Dialect, row: Sequence[Any], contributions: Sequence[Contribution]) -> Procedure:
    (
        pid, scope, goal, summary, context, steps, caveats, outcome, outcome_summary, session_id,
        content_hash, written_at, updated_at, *tallies,
    ) = row  # fmt: skip
    return Procedure(
        id=int(pid),
        scope=scope,
        goal=goal,
        summary=summary,
        context=dict(d.read_json(context)),
        steps=d.read_texts(steps),
        caveats=d.read_texts(caveats),
        outcome=outcome,
        outcome_summary=outcome_summary,
        evidence=ProcedureEvidence(*(int(t) for t in tallies)),
        session_id=session_id,
        content_hash=content_hash,
        written_at=d.read_time(written_at),
        updated_at=d.read_time(updated_at),
        contributions=tuple(contributions),
    )
