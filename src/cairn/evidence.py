"""Evidence counters: cites, recorded when a caller says a memory shaped its work (`used`), or
when an agent names a memory's ref in its own replies (the reference documents' "a session
named its ref in its own replies"; refs belong in `used`, but one written in a reply anyway
still counts).

A ref named in replies (an agent's transcript, read by its Stop/SessionEnd hook, or a
`commit` summary) counts once per session: `record_named_cites` skips the memories already
cited in the session, and only counts refs that name a memory visible from the scope. Free text
is not an argument, so a ref naming nothing there is ignored, not refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cairn.context import Context
from cairn.errors import InvalidRef
from cairn.lifecycle import note_restatement
from cairn.refs import memory_ref, parse_ref
from cairn.scope import visible_scopes
from cairn.store.base import Store

# `mem_12` standing alone (not `xmem_12`, `mem_12a`, or inside a longer word).
_NAMED_REF = re.compile(r"(?<![\w-])mem_(\d{1,12})(?![\w])")
MAX_NAMED_REFS = 200  # refs counted from one text: a reply naming thousands is not citing


def refs_named_in(text: str) -> list[int]:
    """The memory ids `mem_N` refs in free text name, in order of first mention, each once."""
    found = dict.fromkeys(int(m[1]) for m in _NAMED_REF.finditer(text))
    return list(found)[:MAX_NAMED_REFS]


def record_named_cites(
    ctx: Context,
    text: str,
    *,
    scope: str,
    branch: str | None,
    session_id: str,
    exclude: Sequence[int] = (),
) -> tuple[str, ...]:
    """Count a cite of each visible memory `text` names that the session has not cited yet
    (nor `exclude`, counted by the caller); returns the refs counted."""
    named = refs_named_in(text)
    if not named:
        return ()
    visible = set(visible_scopes(scope))
    with ctx.store.transaction():
        seen = set(ctx.store.cited_in_session(session_id)) | set(exclude)
        found = {m.id for m in ctx.store.get_memories(named)
                 if m.scope in visible and m.status != "purged"}  # fmt: skip
        fresh = [i for i in named if i in found and i not in seen]
        record_cites(ctx, fresh, scope=scope, branch=branch, session_id=session_id)
    return tuple(memory_ref(i) for i in fresh)


def visible_memory_ids(
    store: Store, refs: Sequence[str], scope: str
) -> tuple[list[int], list[str]]:
    """The memory ids `refs` name, and the refs among them naming nothing visible from
    `scope` (which the caller refuses in the words of its own argument)."""
    ids = [parse_ref(ref, kind="mem") for ref in refs]
    visible = set(visible_scopes(scope))
    found = {m.id for m in store.get_memories(ids) if m.scope in visible}
    return ids, [ref for ref, mid in zip(refs, ids, strict=True) if mid not in found]


def check_cites(ctx: Context, refs: Sequence[str], scope: str) -> list[int]:
    """The memory ids named by `used`, refusing refs that name nothing visible from `scope`."""
    ids, missing = visible_memory_ids(ctx.store, refs, scope)
    if missing:
        raise InvalidRef(
            f"used names memories that do not exist in scope {scope}: {', '.join(missing)}. "
            "List only refs that recall or remember returned in this scope."
        )
    return list(dict.fromkeys(ids))


def record_cites(
    ctx: Context,
    memory_ids: Sequence[int],
    *,
    scope: str | None = None,
    branch: str | None = None,
    session_id: str | None = None,
) -> None:
    """Count a cite of each memory: the counter, the last-cited time, the cite itself with the
    branch and session it was made on (acts find a branch's cites by them), and the calling
    client's evidence (`lifecycle.note_restatement`: another client's cite confirms)."""
    now = ctx.clock()
    with ctx.store.transaction():
        for memory_id in memory_ids:
            ctx.store.increment(memory_id, "cited")
            ctx.store.update_memory(memory_id, {"last_cited_at": now})
            ctx.store.add_cite(
                memory_id, scope=scope, branch=branch, session_id=session_id,
                integration=ctx.integration, at=now,
            )  # fmt: skip
            note_restatement(ctx, memory_id, session_id, via="cite")
