"""`LessonTools`: lessons on tool calls, `confirm`, mute rules, and what agent hooks ask for.

`session_id` names either a cairn session (`ses_...`, from `activate`: it must be open, and its
scope is the call's when none is given) or the agent's own session (Claude Code's
`session_id`), which only keys what was already said. Without one, nothing is remembered
between calls and a lesson may be repeated.

Which checkout answers (to resolve paths and find cited lines): the directory of the call
(`cwd`, else the facade's) when it is a checkout of the scope, else the folder the scope's
memories were written from (`CodeTools._project_root`). With no scope given, the scope is the
checkout's own, found once (git runs a few times per process, not per question).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict, Unpack

from cairn.code.citations import checkout_for, checkout_scope
from cairn.code.tools import CodeTools
from cairn.errors import InvalidInput
from cairn.evidence import record_named_cites
from cairn.lessons.calls import parse_call
from cairn.lessons.confirm import (
    confirm_by_person,
    confirm_memory,
    person_integration,
    unconfirm_by_person,
)
from cairn.lessons.locate import ToolCall, locate
from cairn.lessons.models import ConfirmResult, Lesson, LessonsResult, StartBrief
from cairn.lessons.mutes import check_rule
from cairn.lessons.select import BUDGET_CHARS, given_key, render, select
from cairn.lessons.start import STOP_REMINDER, start_brief
from cairn.models import NewEvent
from cairn.records.lessons import GivenLesson, MuteRule
from cairn.records.sessions import Session
from cairn.refs import parse_ref
from cairn.refusal import loggable, refuse_secrets, safe_echo
from cairn.scope import current_branch, visible_scopes
from cairn.sessions.ledger import session_for_call

MAX_LIMIT = 10
MAX_TOOL_CHARS = 200
_AGENT_SESSION = re.compile(r"^[A-Za-z0-9][\w.:@+-]{0,199}$")
_FRESH_SOURCES = frozenset({"clear", "compact"})


class MuteRuleArgs(TypedDict, total=False):
    """How `mute_lessons` and `unmute_lessons` name a rule: exactly one of a memory type, a tag
    or a path glob, in the scope of `scope` and `cwd`."""

    type: str | None
    tag: str | None
    path: str | None
    scope: str | None
    cwd: str | Path | None


class LessonTools(CodeTools):
    def lessons(
        self,
        tool: str,
        args: Mapping[str, Any] | str | None = None,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        session_id: str | None = None,
        limit: int = 3,
    ) -> LessonsResult:
        """The few memories worth knowing before a tool call, each with its ref and why.

        `tool` and `args` as the agent makes the call: Claude Code's tools (Edit, MultiEdit,
        Write, Read, Bash, Grep, Glob, WebFetch) or any tool with path/file/files/command/url
        arguments (a string `args` is a shell command). Memories citing the files or symbols
        it touches, warnings, constraints, lessons and instructions naming its command or
        files, procedures whose context names them. Empty when nothing is specifically about
        the call. An edit of cited lines asks whether the memory still holds (`question`).
        With `session_id`, a lesson is not repeated in the session for the same file or
        command. Mute rules of the scope apply (`mute_lessons`).
        """
        name, arguments, count = _check_call(tool, args, limit)
        key, session = self._lesson_session(session_id, scope, cwd)
        resolved, checkout = self._where(_call_scope(scope, session), cwd)
        here = Path(cwd) if cwd is not None else self._default_cwd()
        call = locate(parse_call(name, arguments), here, checkout)
        scopes = visible_scopes(resolved)
        store = self._ctx.store
        given = {(g.subject, g.target, g.kind) for g in store.given_lessons(key)} if key else set()
        picked = select(self._ctx, call, scopes, checkout, given=given,
                        rules=store.mute_rules(scopes), limit=count)  # fmt: skip
        text = render(name, picked.lessons)
        self._record(call, resolved, key, session, picked.lessons)
        return LessonsResult(
            tool=name, scope=resolved, lessons=picked.lessons, text=text,
            targets=_targets(call), session_id=key, repeated=picked.repeated,
            muted=picked.muted, budget_chars=BUDGET_CHARS, used_chars=len(text),
        )  # fmt: skip

    def confirm(
        self,
        ref: str,
        *,
        scope: str | None = None,
        cwd: str | Path | None = None,
        session_id: str | None = None,
        person: str | None = None,
    ) -> ConfirmResult:
        """Say that a memory still holds (e.g. after a lesson asked about an edit of its cited
        lines). A confirmation by another client than the writer counts once per session
        (once a day outside sessions), lifts the memory and wakes it; the writer confirming
        itself is an echo and does not count.

        With `person` (a name, or "" for an unnamed person) the person confirms, not this
        client: it always counts, once per person until undone (`unconfirm`), and restores a
        contradicted or resting memory."""
        memory_id = parse_ref(ref, kind="mem")
        if person is not None:
            who = person_integration(person)
            visible = visible_scopes(self.scope_for(scope, cwd))
            return confirm_by_person(self._ctx, memory_id, visible, who)
        key, session = self._lesson_session(session_id, scope, cwd)
        resolved = self.scope_for(_call_scope(scope, session), cwd)
        cairn_session = session.id if session is not None else None
        return confirm_memory(self._ctx, memory_id, visible_scopes(resolved), key, cairn_session)

    def unconfirm(
        self,
        ref: str,
        *,
        person: str = "",
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> ConfirmResult:
        """Take back a person's confirmation of a memory (the undo of `confirm(ref,
        person=...)`): the count goes down and a memory it restored or woke rests again."""
        memory_id = parse_ref(ref, kind="mem")
        who = person_integration(person)
        visible = visible_scopes(self.scope_for(scope, cwd))
        return unconfirm_by_person(self._ctx, memory_id, visible, who)

    # mute rules ---------------------------------------------------------------------------
    def mute_lessons(self, **rule: Unpack[MuteRuleArgs]) -> MuteRule:
        """Silence lessons in the scope by memory type, tag or path glob (exactly one)."""
        resolved, kind, value = self._mute_rule(**rule)
        now = self._ctx.clock()
        made, created = self._ctx.store.add_mute(resolved, kind, value, now, self._ctx.integration)
        if created:
            self._event("lessons_mute", resolved, {"kind": kind, "value": value, "muted": True})
        return made

    def unmute_lessons(self, **rule: Unpack[MuteRuleArgs]) -> bool:
        """Remove a mute rule of the scope; False when there was none."""
        resolved, kind, value = self._mute_rule(**rule)
        removed = self._ctx.store.remove_mute(resolved, kind, value)
        if removed:
            self._event("lessons_mute", resolved, {"kind": kind, "value": value, "muted": False})
        return removed

    def _mute_rule(
        self,
        *,
        type: str | None = None,
        tag: str | None = None,
        path: str | None = None,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> tuple[str, str, str]:
        """The scope and the rule's kind and value: spelled out here, not read off the dict,
        so that a keyword `MuteRuleArgs` lacks is a TypeError as in any other method."""
        given = [(k, v) for k, v in (("type", type), ("tag", tag), ("path", path)) if v is not None]
        if len(given) != 1:
            raise InvalidInput(
                "a mute rule names exactly one of type, tag or path, e.g. --type warning, "
                "--tag flaky or --path 'docs/**'."
            )
        kind, value = check_rule(*given[0])
        return self.scope_for(scope, cwd), kind, value

    def lesson_mutes(
        self, *, scope: str | None = None, cwd: str | Path | None = None
    ) -> list[MuteRule]:
        """The mute rules that apply in the scope (its own and `global`'s)."""
        return self._ctx.store.mute_rules(visible_scopes(self.scope_for(scope, cwd)))

    # agent hooks --------------------------------------------------------------------------
    def agent_start(
        self,
        *,
        cwd: str | Path | None = None,
        scope: str | None = None,
        session_id: str | None = None,
        source: str | None = None,
    ) -> StartBrief:
        """The standing brief for an agent session that starts (no task yet). After a context
        `clear` or `compact`, lessons already given in the session may be given again."""
        key, session = self._lesson_session(session_id, scope, cwd)
        resolved, checkout = self._where(_call_scope(scope, session), cwd)
        if key is not None:
            if source in _FRESH_SOURCES:
                self._ctx.store.forget_given_lessons(key)
            self._ctx.store.touch_lesson_session(key, resolved, self._ctx.clock(), changed=False)
        return start_brief(self._ctx, resolved, visible_scopes(resolved), checkout)

    def agent_stop(self, *, session_id: str) -> str | None:
        """The reminder to `remember` what was learned, once per session, when the session
        changed something and remembered nothing; None otherwise."""
        key = _agent_key(session_id)
        state = self._ctx.store.lesson_session(key)
        if state is None or not state.owes_reminder:
            return None
        self._ctx.store.mark_reminded(key, self._ctx.clock())
        return STOP_REMINDER

    def cite_replies(
        self,
        text: str,
        *,
        session_id: str,
        scope: str | None = None,
        cwd: str | Path | None = None,
    ) -> tuple[str, ...]:
        """Count the memories the agent named (`mem_12`) in its own replies as cites, once per
        session per ref (refs belong in `used`; one written in a reply still counts). Refs that
        name no memory of the scope are ignored. Returns the refs counted now."""
        if not isinstance(text, str):
            raise InvalidInput("text is the agent's reply text, as a string.")
        key, session = self._lesson_session(session_id, scope, cwd)
        assert key is not None  # a session_id was given
        resolved, checkout = self._where(_call_scope(scope, session), cwd)
        branch = session.branch if session else (current_branch(checkout) if checkout else None)
        counted = record_named_cites(self._ctx, text, scope=resolved, branch=branch,
                                     session_id=key)  # fmt: skip
        if counted:
            self._event("reply_cites", resolved, {"refs": list(counted), "session": key})
        return counted

    def agent_remembered(self, *, session_id: str) -> None:
        """The agent session called remember: the Stop hook has nothing to remind it of."""
        self._ctx.store.mark_reminded(_agent_key(session_id), self._ctx.clock())

    # helpers ------------------------------------------------------------------------------
    def _lesson_session(
        self, session_id: str | None, scope: str | None, cwd: str | Path | None
    ) -> tuple[str | None, Session | None]:
        if session_id is None:
            return None, None
        if isinstance(session_id, str) and session_id.startswith("ses_"):
            session = session_for_call(self._ctx, session_id, scope, cwd, self._default_cwd())
            return session.id, session
        return _agent_key(session_id), None

    def _where(self, scope: str | None, cwd: str | Path | None) -> tuple[str, Path | None]:
        if scope is None:
            root = checkout_for(Path(cwd) if cwd is not None else self._default_cwd())
            found = checkout_scope(root) if root is not None else None
            if found is not None:
                return found, root
        resolved = self.scope_for(scope, cwd)
        return resolved, self._project_root(resolved, cwd)

    def _record(
        self,
        call: ToolCall,
        scope: str,
        key: str | None,
        session: Session | None,
        lessons: tuple[Lesson, ...],
    ) -> None:
        store, now = self._ctx.store, self._ctx.clock()
        if key is not None and (lessons or call.changes):
            rows = [GivenLesson(key, *given_key(lesson), scope, now) for lesson in lessons]
            with store.transaction():
                store.add_given_lessons(rows)
                store.touch_lesson_session(key, scope, now, changed=call.changes)
        if lessons:
            # A command line or URL may carry a password: the log keeps it redacted.
            targets = [loggable(target) for target in _targets(call)]
            payload = {"tool": loggable(call.tool), "targets": targets,
                       "refs": [lesson.ref for lesson in lessons], "session": key}  # fmt: skip
            store.add_event(NewEvent("lessons", scope, session.id if session else None, now,
                                     self._ctx.integration, None, payload))  # fmt: skip

    def _event(self, kind: str, scope: str, payload: dict[str, Any]) -> None:
        self._ctx.store.add_event(
            NewEvent(kind, scope, None, self._ctx.clock(), self._ctx.integration, None, payload)
        )


def _check_call(tool: object, args: object, limit: object) -> tuple[str, Mapping[str, Any], int]:
    if not isinstance(tool, str) or not tool.strip() or len(tool) > MAX_TOOL_CHARS:
        raise InvalidInput(
            "tool is the name of the tool about to be called, e.g. 'Edit' or 'Bash' "
            f"(1 to {MAX_TOOL_CHARS} characters)."
        )
    if isinstance(args, str):
        args = {"command": args}
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise InvalidInput(
            'args are the tool\'s arguments as an object, e.g. {"file_path": "src/app.py"} or '
            '{"command": "npm publish"}.'
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit {limit!r} is out of range; give 1 to {MAX_LIMIT} (default 3).")
    return tool.strip(), args, limit


def _agent_key(session_id: object) -> str:
    if isinstance(session_id, str):
        refuse_secrets(session_id, field="session_id")
    text = session_id.strip() if isinstance(session_id, str) else ""
    if not _AGENT_SESSION.match(text):
        raise InvalidInput(
            f"session_id {safe_echo(session_id)} is neither a cairn session (ses_..., from "
            "activate) nor an agent's session id (letters, digits and ._:@+-, at most 200 "
            "characters)."
        )
    return text


def _call_scope(scope: str | None, session: Session | None) -> str | None:
    """The scope a lesson call is in: the one it gives, else its cairn session's."""
    return scope or (session.scope if session else None)


def _targets(call: ToolCall) -> tuple[str, ...]:
    found = [t.path for t in call.targets] + [i.text or i.phrase for i in call.invocations]
    found += list(call.urls)
    return tuple(dict.fromkeys(found))[:20]
