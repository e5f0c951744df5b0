"""Evidence counters: cites (`used`), recorded when a caller says a memory shaped its work."""

from __future__ import annotations

from collections.abc import Sequence

from cairn.context import Context
from cairn.errors import InvalidRef
from cairn.lifecycle import note_restatement
from cairn.refs import parse_ref
from cairn.scope import visible_scopes


def check_cites(ctx: Context, refs: Sequence[str], scope: str) -> list[int]:
    """The memory ids named by `used`, refusing refs that name nothing visible from `scope`."""
    ids = [parse_ref(ref, kind="mem") for ref in refs]
    visible = set(visible_scopes(scope))
    found = {m.id for m in ctx.store.get_memories(ids) if m.scope in visible}
    missing = [ref for ref, mid in zip(refs, ids, strict=True) if mid not in found]
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
