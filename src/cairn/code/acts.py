"""Acts: what the user does to the code, read as evidence about the memories behind it.

A branch's sessions cite the memories that shaped their work (`used`, recorded as `cite`
events carrying the branch). What then happens to the branch says whether that advice was good:

- `observe_merge(branch)` confirms the memories the branch's sessions cited;
- `observe_discard(branch)` (deleted unmerged) contradicts them;
- `observe_revert(commit)` contradicts the memories cited on the branch the commit came from —
  found through an earlier merge act that recorded the commit, the merge commit's subject
  ("Merge branch 'x'"), or the branches that contain it — and those citing the commit itself.

Each act is stored with its effects (memory, effect, status before) and shows in the memory's
evidence with its undo; `undo_act` takes every effect back. One act never counts twice for the
same memory: observing the same merge again adds only memories cited since.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cairn import lifecycle
from cairn.code import git
from cairn.code.records import ActResult
from cairn.context import Context
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.models import Memory, NewEvent
from cairn.records.code import ActRow, NewAct
from cairn.refs import memory_ref

ACT_KINDS = ("merge", "revert", "discard")
_EFFECT = {"merge": "confirm", "revert": "contradict", "discard": "contradict"}
_RECENT_ACTS = 500
_MAX_CHAIN = 1000


def observe(ctx: Context, kind: str, subject: str, scope: str, root: Path | None) -> ActResult:
    """Record one act in `scope` and apply it to the memories it is about."""
    subject = _clean_subject(kind, subject)
    if kind == "revert":
        targets, detail = _revert_targets(ctx, subject, scope, root)
        subject = str(detail.get("commit") or subject)
    else:
        targets = ctx.store.cited_on_branch(scope, subject)
        detail = _branch_detail(kind, subject, root)
    fresh = _fresh(ctx, kind, subject, scope, targets)
    if not fresh:
        earlier = _earlier(ctx, kind, subject, scope)
        if earlier is not None:
            # Seen before and nothing new to apply (a hook firing twice, a repeated call).
            return ActResult(earlier.ref, kind, subject, scope, detail=earlier.detail)
    return _record(ctx, kind, subject, scope, fresh, detail)


def _earlier(ctx: Context, kind: str, subject: str, scope: str) -> ActRow | None:
    for act in ctx.store.acts_in(scope, [kind], _RECENT_ACTS):
        if act.subject == subject and act.undone_at is None:
            return act
    return None


def was_merged(ctx: Context, scope: str, branch: str) -> bool:
    """Whether cairn saw `branch` merged (an act that was not undone)."""
    return _earlier(ctx, "merge", branch, scope) is not None


def _clean_subject(kind: str, subject: str) -> str:
    if kind not in ACT_KINDS:
        raise InvalidInput(f"act {kind!r} is not one of {', '.join(ACT_KINDS)}.")
    text = subject.strip() if isinstance(subject, str) else ""
    if not text:
        what = "commit sha" if kind == "revert" else "branch name"
        raise InvalidInput(f"observe_{kind} needs a {what}; got nothing.")
    if kind == "revert":
        text = text.removeprefix("commit:").lower()
        if not all(ch in "0123456789abcdef" for ch in text) or not 4 <= len(text) <= 64:
            raise InvalidInput(
                f"observe_revert needs the sha of the reverted commit (4 to 64 hex digits); "
                f"{subject!r} is not one."
            )
    return text.removeprefix("refs/heads/")


def _branch_detail(kind: str, branch: str, root: Path | None) -> dict[str, Any]:
    detail: dict[str, Any] = {"branch": branch}
    if root is None:
        return detail
    tip = git.resolve_branch(root, branch)
    if tip:
        detail["branch_tip"] = tip
    if kind == "merge":
        head = git.head(root)
        if head and len(git.parents(root, head)) > 1:
            detail["merge_commit"] = head
        elif head and tip == head:
            detail["merge_commit"] = head  # a fast-forward: the branch tip is now HEAD
    return detail


def _revert_targets(
    ctx: Context, sha: str, scope: str, root: Path | None
) -> tuple[list[int], dict[str, Any]]:
    full = (git.resolve_commit(root, sha) if root is not None else None) or sha
    branches = _branches_of_commit(ctx, full, scope, root)
    ids: list[int] = []
    for branch in branches:
        ids.extend(ctx.store.cited_on_branch(scope, branch))
    ids.extend(ctx.store.memories_citing_commit(scope, full))
    return list(dict.fromkeys(ids)), {"commit": full, "branches": branches}


def _branches_of_commit(ctx: Context, sha: str, scope: str, root: Path | None) -> list[str]:
    found: list[str] = []
    for act in ctx.store.acts_in(scope, ["merge"], _RECENT_ACTS):
        marks = (act.detail.get("merge_commit"), act.detail.get("branch_tip"))
        if act.undone_at is None and any(isinstance(m, str) and _same_sha(m, sha) for m in marks):
            found.append(act.subject)
    if root is not None:
        subject = git.subject(root, sha)
        named = git.branch_in_merge_subject(subject) if subject else None
        if named:
            found.append(named)
        if not found:
            current = git.current_branch(root)
            base = git.default_branch(root, current)
            found.extend(b for b in git.branches_containing(root, sha) if b not in (current, base))
    return list(dict.fromkeys(found))


def _same_sha(a: str, b: str) -> bool:
    shorter, longer = sorted((a.lower(), b.lower()), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter)


def _fresh(ctx: Context, kind: str, subject: str, scope: str, ids: Iterable[int]) -> list[Memory]:
    """Current versions of `ids` that this act has not already touched."""
    done: set[int] = set()
    for act in ctx.store.acts_in(scope, [kind], _RECENT_ACTS):
        if act.subject == subject and act.undone_at is None:
            done.update(int(e["memory_id"]) for e in act.effects)
    out: dict[int, Memory] = {}
    for memory_id in ids:
        memory = _current(ctx, memory_id)
        if memory is not None and memory.id not in done and memory.status in ("active", "resting"):
            out[memory.id] = memory
    return list(out.values())


def _current(ctx: Context, memory_id: int) -> Memory | None:
    found = ctx.store.get_memories([memory_id])
    for _ in range(_MAX_CHAIN):
        if not found or found[0].replaced_by is None:
            break
        found = ctx.store.get_memories([found[0].replaced_by])
    return found[0] if found else None


def _record(
    ctx: Context,
    kind: str,
    subject: str,
    scope: str,
    targets: Sequence[Memory],
    detail: dict[str, Any],
) -> ActResult:
    effect = _EFFECT[kind]
    now, store = ctx.clock(), ctx.store
    moved: dict[str, list[str]] = {"rested": [], "restored": []}
    with store.transaction():
        effects = tuple(
            {"memory_id": m.id, "effect": effect, "prior_status": m.status} for m in targets
        )
        act_id = store.add_act(NewAct(scope, kind, subject, now, ctx.integration, effects, detail))
        ref = f"act_{act_id}"
        for memory in targets:
            change = lifecycle.apply_act(
                ctx, memory.id, effect=effect, act_ref=ref, kind=kind, subject=subject
            )
            _note_move(moved, memory.ref, change)
        refs = [m.ref for m in targets]
        store.add_event(
            NewEvent("act", scope, None, now, ctx.integration, None,
                     {"act": ref, "kind": kind, "subject": subject, "refs": refs, **detail})
        )  # fmt: skip
    return ActResult(
        act_id=ref, kind=kind, subject=subject, scope=scope,
        confirmed=tuple(refs) if effect == "confirm" else (),
        contradicted=tuple(refs) if effect == "contradict" else (),
        rested=tuple(moved["rested"]), restored=tuple(moved["restored"]), detail=detail,
    )  # fmt: skip


def _note_move(moved: dict[str, list[str]], ref: str, change: tuple[str, str] | None) -> None:
    if change is None:
        return
    before, after = change
    if before != "resting" and after == "resting":
        moved["rested"].append(ref)
    elif before == "resting" and after != "resting":
        moved["restored"].append(ref)


def undo(ctx: Context, act_id: int, visible: Sequence[str]) -> ActResult:
    """Take back every effect of an act; refused for an act already undone."""
    act = ctx.store.get_act(act_id)
    if act is None or act.scope not in visible:
        raise NotFound(
            f"act_{act_id} names no act in this scope; acts are listed in a memory's evidence "
            "(get_memory) and returned by observe_merge/observe_revert/observe_discard."
        )
    if act.undone_at is not None:
        raise Conflict(f"{act.ref} was already undone at {act.undone_at:%Y-%m-%d %H:%M}Z.")
    now = ctx.clock()
    moved: dict[str, list[str]] = {"rested": [], "restored": []}
    with ctx.store.transaction():
        for effect in act.effects:
            change = lifecycle.undo_act_effect(
                ctx, int(effect["memory_id"]), effect=str(effect["effect"]), act_ref=act.ref,
                prior_status=str(effect.get("prior_status", "active")),
            )  # fmt: skip
            _note_move(moved, memory_ref(int(effect["memory_id"])), change)
        ctx.store.mark_act_undone(act.id, now)
        ctx.store.add_event(
            NewEvent("undo_act", act.scope, None, now, ctx.integration, None,
                     {"act": act.ref, "kind": act.kind, "subject": act.subject})
        )  # fmt: skip
    return _undone_result(act, moved)


def _undone_result(act: ActRow, moved: dict[str, list[str]]) -> ActResult:
    refs = tuple(memory_ref(int(e["memory_id"])) for e in act.effects)
    confirm = _EFFECT.get(act.kind) == "confirm"
    return ActResult(
        act_id=act.ref, kind=act.kind, subject=act.subject, scope=act.scope,
        confirmed=refs if confirm else (), contradicted=() if confirm else refs,
        rested=tuple(moved["rested"]), restored=tuple(moved["restored"]), undone=True,
        detail=act.detail,
    )  # fmt: skip
