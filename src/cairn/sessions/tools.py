"""`SessionTools`: the session verbs of `cairn.Cairn` (activate, feedback, commit, end, pin,
episodes, log_progress, history) and the seed-shaped `remember_typed`.

Each method validates, resolves the scope and delegates to one module of this package; the
docstrings are the contract an agent reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput
from cairn.models import RememberBatch, RememberResult
from cairn.sessions import brief, commit, feedback, trace, typed
from cairn.sessions.ledger import session_for_call
from cairn.sessions.models import (
    Brief,
    CommitResult,
    EpisodesResult,
    FeedbackResult,
    HistoryResult,
    TraceWrite,
)
from cairn.toolbase import ToolBase


class SessionTools(ToolBase):
    def activate(
        self,
        task: str,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        task_context: Mapping[str, Any] | None = None,
        standing: bool = True,
    ) -> Brief:
        """Open a session for `task` and return its id and brief.

        The brief, bounded by `brief_budget_chars` and ordered by importance: pinned memories,
        constraints, warnings, the branch brief (branch and recent commits), the memories and
        procedures most relevant to the task, instructions and preferences; `more_available`
        says when recall would find more. The brief is the session's first retrieval
        (`retrieval_id`): give it feedback before `commit`, like every recall. `standing=False`
        leaves out the standing sections and the branch, for an agent whose session-start
        brief (`agent_start`) already gave them.
        """
        if not isinstance(standing, bool):
            raise InvalidInput(f"standing must be true or false, not {standing!r}.")
        resolved = self.scope_for(scope, cwd)
        where = Path(cwd) if cwd is not None else (self._default_cwd() if scope is None else None)
        return brief.activate(self._ctx, task, resolved, where, task_context, standing)

    def feedback(
        self, session_id: str, retrieval_id: str, assessments: Sequence[Mapping[str, Any]]
    ) -> FeedbackResult:
        """Assess what a retrieval returned: per memory or procedure, `used` and `effect`.

        `effect` is `helped`, `no_effect`, `harmed` or `unknown`; helped and harmed lift and
        lower the memory in later recalls (at most ×2, at least ×0.5) and count in procedure
        tallies. Assessing a ref again replaces the earlier assessment. Returns the session's
        retrievals still waiting for feedback.
        """
        return feedback.give_feedback(self._ctx, session_id, retrieval_id, assessments)

    def commit(
        self,
        session_id: str,
        *,
        outcome: str,
        summary: str,
        procedure: Mapping[str, Any] | None = None,
        used: Sequence[str] | None = None,
    ) -> CommitResult:
        """Close the session: write its episode and, when given, capture the procedure.

        Refused while any retrieval of the session lacks feedback (the error lists them).
        `outcome` is `success`, `partial`, `failure` or `unknown`; `procedure` is
        `{goal, summary, context, steps: [...], caveats: [...]}` (goal, summary and context
        default to the task, this summary and the task context); `used` lists the memories
        that shaped the work, each counted as a cite.
        """
        return commit.commit(
            self._ctx, session_id, outcome=outcome, summary=summary, procedure=procedure, used=used
        )

    def end(self, session_id: str, *, summary: str | None = None) -> CommitResult:
        """Close the session without a procedure and without waiting for feedback."""
        return commit.end(self._ctx, session_id, summary=summary)

    def pin(
        self,
        note: str,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        session_id: str | None = None,
    ) -> TraceWrite:
        """Append a working-memory note to the trace; `history` shows it to the next turns.

        Pins are not semantically indexed: remember what should be found days later.
        """
        trace.check_note(self._ctx, note, "note")  # the argument before any session's state
        session = None
        if session_id is not None:
            session = session_for_call(self._ctx, session_id, scope, cwd, self._default_cwd())
        where = session.scope if session is not None else self.scope_for(scope, cwd)
        return trace.pin(self._ctx, note, where, session)

    def log_progress(
        self, session_id: str, text: str, used: Sequence[str] | None = None
    ) -> TraceWrite:
        """A progress line on the session's trace; `used` memories each count a cite."""
        return trace.log_progress(self._ctx, session_id, text, used)

    def episodes(
        self,
        timestamp: str | datetime,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> EpisodesResult:
        """`max_episode_lines` lines of the trace centred on `timestamp` ("YYYY-MM-DD HH:MM:SS",
        UTC when no zone): what was going on around then."""
        return trace.episodes(self._ctx, timestamp, self.scope_for(scope, cwd))

    def history(
        self,
        max_chars: int | None = None,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> HistoryResult:
        """The most recent trace lines (pins included) within `max_chars` characters (default
        `max_history`), oldest first, for the next turn's prompt."""
        return trace.history(self._ctx, max_chars, self.scope_for(scope, cwd))

    def remember_typed(
        self,
        content: str | None = None,
        type: str | None = None,
        *,
        memories: Sequence[Mapping[str, Any]] | None = None,
        scope: str | None = None,
        cwd: str | Path | None = None,
        session_id: str | None = None,
        dedup: bool = True,
        **fields: Any,
    ) -> RememberResult | RememberBatch:
        """remember as the tools define it: `content` and `type` (one claim) or `memories`
        (a batch), never both.

        A batch returns one result per item (`index`, `ok`, `data` or `error` with `code`,
        `message`, `retryable`); items inherit `scope`, `cwd` and `session_id`. Other fields
        (tags, reason, source_ref, occurred_at, used, relates_to, ...) go with the scalar form
        or inside each item.
        """
        outer = {
            "scope": scope,
            "cwd": str(cwd) if cwd is not None else None,
            "session_id": session_id,
        }
        result = typed.remember_typed(
            self._ctx,
            self._default_cwd(),
            content=content,
            mtype=type,
            memories=memories,
            outer={k: v for k, v in outer.items() if v is not None},
            fields=fields,
            dedup=dedup,
        )
        self._wrote()
        return result
