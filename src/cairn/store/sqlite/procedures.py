"""SQLite persistence of procedures: rows with their tallies, contributions and vectors.

A mixin of `SqliteStore`. Tallies are columns so feedback can increment them without a read;
a procedure always comes back with its three most recent contributions, newest first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from cairn.embeddings.base import Vector
from cairn.errors import InvalidInput
from cairn.models import Contribution, ProcedureEvidence
from cairn.records.sessions import TALLIES, NewProcedure, Procedure
from cairn.store.sqlite.connection import Connections
from cairn.store.sqlite.sql import chunks, marks
from cairn.timeutil import from_micros, to_micros

PROCEDURE_COLUMNS = (
    "id, scope, goal, summary, context, steps, caveats, outcome, outcome_summary, session_id, "
    "content_hash, written_at, updated_at, used, not_used, helped, no_effect, harmed, unknown"
)
PROCEDURE_UPDATABLE = frozenset({"outcome", "outcome_summary", "updated_at"})
CONTRIBUTIONS_SHOWN = 3


class ProcedureRows:
    _db: Connections

    def add_procedure(self, procedure: NewProcedure) -> int:
        with self._db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO procedures (scope, goal, summary, context, steps, caveats, outcome, "
                "outcome_summary, session_id, content_hash, written_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    procedure.scope,
                    procedure.goal,
                    procedure.summary,
                    _dump(dict(procedure.context)),
                    _dump(list(procedure.steps)),
                    _dump(list(procedure.caveats)),
                    procedure.outcome,
                    procedure.outcome_summary,
                    procedure.session_id,
                    procedure.content_hash,
                    to_micros(procedure.written_at),
                    to_micros(procedure.written_at),
                ),
            )
            return int(cur.lastrowid or 0)

    def get_procedures(self, ids: Sequence[int]) -> list[Procedure]:
        rows: list[tuple[Any, ...]] = []
        for chunk in chunks(ids):
            rows.extend(
                self._db.get().execute(
                    f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE id IN ({marks(chunk)})",
                    chunk,
                )
            )
        found = {p.id: p for p in self._with_contributions(rows)}
        return [found[i] for i in ids if i in found]

    def procedures_in(
        self, scopes: Sequence[str], *, as_of: datetime | None, limit: int
    ) -> list[Procedure]:
        """The scopes' procedures, most recently updated first (written by `as_of` when set)."""
        sql = f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE scope IN ({marks(scopes)})"
        params: list[Any] = list(scopes)
        if as_of is not None:
            sql += " AND written_at <= ?"
            params.append(to_micros(as_of))
        rows = (
            self._db.get()
            .execute(sql + " ORDER BY updated_at DESC, id DESC LIMIT ?", (*params, limit))
            .fetchall()
        )
        return self._with_contributions(rows)

    def find_procedure(self, scope: str, content_hash: str) -> Procedure | None:
        rows = (
            self._db.get()
            .execute(
                f"SELECT {PROCEDURE_COLUMNS} FROM procedures WHERE scope = ? AND content_hash = ? "
                "ORDER BY id LIMIT 1",
                (scope, content_hash),
            )
            .fetchall()
        )
        found = self._with_contributions(rows)
        return found[0] if found else None

    def update_procedure(self, procedure_id: int, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - PROCEDURE_UPDATABLE
        if unknown:
            raise InvalidInput(f"cannot update procedure fields {sorted(unknown)}")
        if not changes:
            return
        values = [to_micros(v) if isinstance(v, datetime) else v for v in changes.values()]
        assignments = ", ".join(f"{column} = ?" for column in changes)
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE procedures SET {assignments} WHERE id = ?", (*values, procedure_id)
            )

    def tally_procedure(self, procedure_id: int, tally: str, by: int = 1) -> None:
        if tally not in TALLIES:
            raise InvalidInput(f"{tally} is not a procedure tally; tallies are {list(TALLIES)}")
        with self._db.transaction() as conn:
            conn.execute(
                f"UPDATE procedures SET {tally} = max(0, {tally} + ?) WHERE id = ?",
                (by, procedure_id),
            )

    def add_contribution(
        self, procedure_id: int, session_id: str | None, contribution: Contribution
    ) -> None:
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO procedure_contributions (procedure_id, session_id, effect, "
                "contribution, outcome, outcome_summary, occurred_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    procedure_id,
                    session_id,
                    contribution.effect,
                    contribution.contribution,
                    contribution.outcome,
                    contribution.outcome_summary,
                    to_micros(contribution.occurred_at),
                ),
            )

    def put_procedure_vector(self, procedure_id: int, identity: str, vector: Vector) -> None:
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO procedure_vectors (procedure_id, identity, dims, vector) "
                "VALUES (?, ?, ?, ?)",
                (procedure_id, identity, int(vector.shape[0]), blob),
            )

    def get_procedure_vectors(self, ids: Sequence[int], identity: str) -> dict[int, Vector]:
        found: dict[int, Vector] = {}
        for chunk in chunks(ids):
            rows = self._db.get().execute(
                "SELECT procedure_id, vector FROM procedure_vectors WHERE identity = ? "
                f"AND procedure_id IN ({marks(chunk)})",
                (identity, *chunk),
            )
            for procedure_id, blob in rows:
                found[procedure_id] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _with_contributions(self, rows: Sequence[tuple[Any, ...]]) -> list[Procedure]:
        ids = [row[0] for row in rows]
        recent: dict[int, list[Contribution]] = {}
        for chunk in chunks(ids):
            found = self._db.get().execute(
                "SELECT procedure_id, effect, contribution, outcome, outcome_summary, occurred_at "
                f"FROM procedure_contributions WHERE procedure_id IN ({marks(chunk)}) "
                "ORDER BY procedure_id, occurred_at DESC, id DESC",
                chunk,
            )
            for pid, effect, kind, outcome, summary, at in found:
                shown = recent.setdefault(pid, [])
                if len(shown) < CONTRIBUTIONS_SHOWN:
                    shown.append(Contribution(effect, kind, outcome, summary, from_micros(at)))
        return [_procedure(row, recent.get(row[0], [])) for row in rows]


def _procedure(row: tuple[Any, ...], contributions: Sequence[Contribution]) -> Procedure:
    (
        pid,
        scope,
        goal,
        summary,
        context,
        steps,
        caveats,
        outcome,
        outcome_summary,
        session_id,
        content_hash,
        written_at,
        updated_at,
        *tallies,
    ) = row
    return Procedure(
        id=pid,
        scope=scope,
        goal=goal,
        summary=summary,
        context=json.loads(context),
        steps=tuple(json.loads(steps)),
        caveats=tuple(json.loads(caveats)),
        outcome=outcome,
        outcome_summary=outcome_summary,
        evidence=ProcedureEvidence(*tallies),
        session_id=session_id,
        content_hash=content_hash,
        written_at=from_micros(written_at),
        updated_at=from_micros(updated_at),
        contributions=tuple(contributions),
    )


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
