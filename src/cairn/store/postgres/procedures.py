"""PostgreSQL persistence of procedures, as in the SQLite backend (`cairn.store.sqlite.
procedures`): rows with tally columns, contributions (three newest shown) and plain `real[]`
vectors (procedures are ranked in memory, so no pgvector index). A mixin of `PostgresStore`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from psycopg.types.json import Json

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Contribution, ProcedureEvidence
from cairn.records.sessions import TALLIES, NewProcedure, Procedure
from cairn.store.postgres.connection import Conn, Database
from cairn.timeutil import as_utc

PROCEDURE_COLUMNS = (
    "id, scope, goal, summary, context, steps, caveats, outcome, outcome_summary, session_id, "
    "content_hash, written_at, updated_at, used, not_used, helped, no_effect, harmed, unknown"
)
PROCEDURE_UPDATABLE = frozenset({"outcome", "outcome_summary", "updated_at"})
CONTRIBUTIONS_SHOWN = 3


class ProcedureRows:
    _db: Database

    def add_procedure(self, procedure: NewProcedure) -> int:
        with self._db.transaction() as conn:
            row = conn.execute(
                "INSERT INTO procedures (scope, goal, summary, context, steps, caveats, outcome, "
                "outcome_summary, session_id, content_hash, written_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    procedure.scope,
                    procedure.goal,
                    procedure.summary,
                    Json(dict(procedure.context)),
                    list(procedure.steps),
                    list(procedure.caveats),
                    procedure.outcome,
                    procedure.outcome_summary,
                    procedure.session_id,
                    procedure.content_hash,
                    as_utc(procedure.written_at),
                    as_utc(procedure.written_at),
                ),
            ).fetchone()
        return int(row[0]) if row else 0

    def get_procedures(self, ids: Sequence[int]) -> list[Procedure]:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE id = ANY(%s::bigint[])",
                (list(ids),),
            ).fetchall()
            found = {p.id: p for p in _with_contributions(conn, rows)}
        return [found[i] for i in ids if i in found]

    def procedures_in(
        self, scopes: Sequence[str], *, as_of: datetime | None, limit: int
    ) -> list[Procedure]:
        """The scopes' procedures, most recently updated first (written by `as_of` when set)."""
        bound = "" if as_of is None else " AND written_at <= %(as_of)s"
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {PROCEDURE_COLUMNS} FROM procedures "
                f"WHERE scope = ANY(%(scopes)s::text[]){bound} "
                "ORDER BY updated_at DESC, id DESC LIMIT %(limit)s",
                {"scopes": list(scopes), "as_of": as_of and as_utc(as_of), "limit": limit},
            ).fetchall()
            return _with_contributions(conn, rows)

    def find_procedure(self, scope: str, content_hash: str) -> Procedure | None:
        with self._db.connection() as conn:
            rows = conn.execute(
                f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE scope = %s "
                "AND content_hash = %s ORDER BY id LIMIT 1",
                (scope, content_hash),
            ).fetchall()
            found = _with_contributions(conn, rows)
        return found[0] if found else None

    def update_procedure(self, procedure_id: int, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - PROCEDURE_UPDATABLE
        if unknown:
            raise InvalidInput(f"cannot update procedure fields {sorted(unknown)}")
        if not changes:
            return
        params = {k: as_utc(v) if isinstance(v, datetime) else v for k, v in changes.items()}
        assignments = ", ".join(f"{column} = %({column})s" for column in changes)
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE procedures SET {assignments} WHERE id = %(procedure_id)s",
                {**params, "procedure_id": procedure_id},
            )

    def tally_procedure(self, procedure_id: int, tally: str, by: int = 1) -> None:
        if tally not in TALLIES:
            raise InvalidInput(f"{tally} is not a procedure tally; tallies are {list(TALLIES)}")
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE procedures SET {tally} = greatest(0, {tally} + %s) WHERE id = %s",
                (by, procedure_id),
            )

    def add_contribution(
        self, procedure_id: int, session_id: str | None, contribution: Contribution
    ) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO procedure_contributions (procedure_id, session_id, effect, "
                "contribution, outcome, outcome_summary, occurred_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    procedure_id,
                    session_id,
                    contribution.effect,
                    contribution.contribution,
                    contribution.outcome,
                    contribution.outcome_summary,
                    as_utc(contribution.occurred_at),
                ),
            )

    def put_procedure_vector(self, procedure_id: int, identity: str, vector: Vector) -> None:
        values = [float(x) for x in np.asarray(vector, dtype=np.float32)]
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO procedure_vectors (procedure_id, identity, dims, vector) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (procedure_id) DO UPDATE SET "
                "identity = EXCLUDED.identity, dims = EXCLUDED.dims, vector = EXCLUDED.vector",
                (procedure_id, identity, len(values), values),
            )

    def get_procedure_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        with self._db.connection() as conn:
            rows = conn.execute(
                "SELECT procedure_id, vector FROM procedure_vectors WHERE identity = %s "
                "AND procedure_id = ANY(%s::bigint[])",
                (identity, list(ids)),
            ).fetchall()
        return {int(pid): np.asarray(values, dtype=np.float32) for pid, values in rows}


def _with_contributions(conn: Conn, rows: Sequence[Sequence[Any]]) -> list[Procedure]:
    ids = [int(row[0]) for row in rows]
    recent: dict[int, list[Contribution]] = {}
    found = conn.execute(
        "SELECT procedure_id, effect, contribution, outcome, outcome_summary, occurred_at "
        "FROM procedure_contributions WHERE procedure_id = ANY(%s::bigint[]) "
        "ORDER BY procedure_id, occurred_at DESC, id DESC",
        (ids,),
    ).fetchall()
    for pid, effect, kind, outcome, summary, at in found:
        shown = recent.setdefault(int(pid), [])
        if len(shown) < CONTRIBUTIONS_SHOWN:
            shown.append(Contribution(effect, kind, outcome, summary, at.astimezone(UTC)))
    return [_procedure(row, recent.get(int(row[0]), [])) for row in rows]


def _procedure(row: Sequence[Any], contributions: Sequence[Contribution]) -> Procedure:
    (
        pid, scope, goal, summary, context, steps, caveats, outcome, outcome_summary, session_id,
        content_hash, written_at, updated_at, *tallies,
    ) = row  # fmt: skip
    return Procedure(
        id=int(pid),
        scope=scope,
        goal=goal,
        summary=summary,
        context=dict(context),
        steps=tuple(steps),
        caveats=tuple(caveats),
        outcome=outcome,
        outcome_summary=outcome_summary,
        evidence=ProcedureEvidence(*(int(t) for t in tallies)),
        session_id=session_id,
        content_hash=content_hash,
        written_at=written_at.astimezone(UTC),
        updated_at=updated_at.astimezone(UTC),
        contributions=tuple(contributions),
    )
