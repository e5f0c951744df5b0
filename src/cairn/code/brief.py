"""The branch brief: where work on the checked-out branch stands.

`branch_brief(ctx, cwd, scope)` gathers the branch, its goal (set with `cairn branch goal`, else
the task of the newest session on the branch), its open items (tasks and open questions written
on the branch), recent sessions on it and its recent commits from git. `activate` includes it,
and `recall` puts it first when the query is about the branch (`asks_about_branch`): it names
the branch, or asks what is open, left or in progress.
"""

from __future__ import annotations

import re
from pathlib import Path

from cairn.code import git
from cairn.code.records import BranchBrief, BriefItem
from cairn.context import Context
from cairn.records.code import BriefSession
from cairn.scope import visible_scopes

OPEN_TYPES = ("task", "open_question")
OPEN_ITEMS = 10
RECENT_SESSIONS = 5
RECENT_COMMITS = 5

# Branch names that are also ordinary words: they name the branch only next to "branch".
_GENERIC = frozenset({"main", "master", "trunk", "develop", "dev", "release", "next", "test"})
_PROGRESS = re.compile(
    r"\b(?:in[ -]progress|work[ -]in[ -]progress|wip|still open|(?:what'?s|what is|what are)"
    r" (?:still )?open|open (?:items?|tasks?|questions?|issues?|work|points?)|left to do|"
    r"(?:what'?s|what is) left|remaining (?:work|tasks?|items?)|to-?dos?|"
    r"where (?:was i|were we|did (?:i|we) leave off|are we)|"
    r"what (?:am i|are we|was i|were we) (?:working on|doing)|"
    r"current (?:branch|work|task)|this branch|(?:status|state) of (?:the |this |my )?branch)\b",
    re.IGNORECASE,
)


def asks_about_branch(query: str, branch: str) -> bool:
    """True when the query names `branch` or asks what is open or in progress."""
    if _PROGRESS.search(query):
        return True
    text, name = query.casefold(), branch.casefold()
    candidates = [name]
    tail = name.rsplit("/", 1)[-1]
    if tail != name and len(tail) >= 4:
        candidates.append(tail)
    for candidate in candidates:
        if candidate in _GENERIC and not re.search(r"\bbranch(?:es)?\b", text):
            continue
        if re.search(rf"(?<![\w/.-]){re.escape(candidate)}(?![\w/-])", text):
            return True
    return False


def branch_brief(
    ctx: Context, cwd: Path | None, scope: str, *, session_goal: str | None = None
) -> BranchBrief | None:
    """The brief of the branch checked out at `cwd`; None outside git or on a detached HEAD.

    `session_goal` is the goal a caller already knows (the task of the session being opened);
    an explicit `cairn branch goal` wins over it.
    """
    if cwd is None:
        return None
    root = git.toplevel(cwd)
    branch = git.current_branch(cwd) if root is not None else None
    if root is None or branch is None:
        return None
    store = ctx.store
    sessions = tuple(store.branch_sessions(scope, branch, RECENT_SESSIONS))
    goal, source = _goal(ctx, scope, branch, session_goal, sessions)
    items = tuple(
        BriefItem(m.ref, m.type, m.summary, m.written_at)
        for m in store.branch_memories(visible_scopes(scope), branch, OPEN_TYPES, OPEN_ITEMS)
    )
    base = git.default_branch(root, branch)
    commits = tuple(git.recent_commits(root, branch, base=base, limit=RECENT_COMMITS))
    return BranchBrief(branch, scope, goal, source, items, sessions, commits, base)


def _goal(
    ctx: Context,
    scope: str,
    branch: str,
    session_goal: str | None,
    sessions: tuple[BriefSession, ...],
) -> tuple[str | None, str | None]:
    explicit = ctx.store.get_branch_goal(scope, branch)
    if explicit is not None:
        return explicit.goal, "explicit"
    if session_goal:
        return session_goal, "session"
    for session in sessions:
        if session.task and session.task.strip():
            return session.task.strip(), "session"
    return None, None
