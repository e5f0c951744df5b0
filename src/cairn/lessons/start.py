"""What an agent is told when its session starts (Claude Code `SessionStart`), and the Stop
reminder.

At the start there is no task yet, so this is the *standing* brief of the scope: pinned
memories, constraints, warnings, instructions and preferences (each section by importance, as
`activate` orders them), the branch and its last commits, and the lesson mute rules that apply.
It opens no cairn session: `activate` with the task gives the task's brief. Bounded by
`START_BUDGET_CHARS` (about 1,000 tokens).

The Stop reminder asks the agent to `remember` what it learned, but only when the session
changed something (an edit, a write, a command) since the last reminder: a turn that only read
or answered is not interrupted, and a reminder is never given twice for the same changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cairn.context import Context
from cairn.lessons.models import StartBrief
from cairn.lessons.select import eligible
from cairn.models import STANDING_SECTIONS, Memory
from cairn.records.lessons import MuteRule
from cairn.sessions.branch import branch_brief

START_BUDGET_CHARS = 4_000
SECTION_LIMIT = 6
SUMMARY_CHARS = 200
GUIDE = (
    "cairn gives lessons before tool calls that touch what a memory is about. When a lesson "
    "asks whether a memory still holds, answer with confirm(ref) or correct(ref, ...). Call "
    "activate with your task and standing: false (what is above is not repeated) for its "
    "brief, and remember durable lessons as you learn them."
)
STOP_REMINDER = (
    "Before you finish: this session changed the project. If it taught you something durable "
    "about this codebase (a decision, a constraint, a pitfall, a command that must or must not "
    "be run), save it with cairn's remember: type lesson, warning, decision or constraint, "
    "source_ref the file or file:lines it is about, and used the refs of memories that helped. "
    "Skip what memory already holds or what was true only for this task. If nothing is worth "
    "keeping, just stop."
)


def start_brief(
    ctx: Context, scope: str, scopes: Sequence[str], checkout: Path | None
) -> StartBrief:
    left = START_BUDGET_CHARS
    lines = [f"cairn memory for {scope} (session start)."]
    refs: list[str] = []
    for name, types, pinned in STANDING_SECTIONS:
        found = ctx.store.select_memories(
            scopes, types=types, pinned_only=pinned, limit=SECTION_LIMIT * 2
        )
        items = [_line(m) for m in found if eligible(m) and m.ref not in refs][:SECTION_LIMIT]
        section: list[str] = []
        for ref, line in items:
            if len(line) + 1 > left:
                break
            section.append(line)
            refs.append(ref)
            left -= len(line) + 1
        if section:
            lines += [f"{name.capitalize()}:", *section]
    branch = _branch(checkout)
    if branch and len(branch) < left:
        lines.append(branch)
        left -= len(branch)
    mutes = tuple(ctx.store.mute_rules(scopes))
    lines += _mute_lines(mutes)
    lines.append(GUIDE)
    return StartBrief(scope, "\n".join(lines), tuple(refs), mutes)


def _line(memory: Memory) -> tuple[str, str]:
    flat = " ".join(memory.summary.split())
    text = flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1] + "…"
    return memory.ref, f"- {memory.ref} [{memory.type}] {text}"


def _branch(checkout: Path | None) -> str | None:
    found = branch_brief(checkout, commits=3)
    if found.branch is None and not found.commits:
        return None
    commits = "; ".join(f"{c.sha} {c.subject[:80]}" for c in found.commits)
    head = f"Branch: {found.branch or '(detached)'}"
    return f"{head}. Recent commits: {commits}" if commits else head


def _mute_lines(mutes: Sequence[MuteRule]) -> list[str]:
    if not mutes:
        return []
    rules = "; ".join(f"{r.kind} {r.value} ({r.scope})" for r in mutes)
    return [f"Lessons are muted for: {rules}."]
