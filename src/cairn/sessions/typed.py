"""The seed-shaped remember: one claim (`content` + `type`) or a batch (`memories`), never both.

This is what the MCP `remember` tool calls. The scalar form returns a `RememberResult`; the
batch form returns a `RememberBatch` whose results carry, per item, `index`, `ok` and either
`data` (the same fields as the scalar result) or `error` (`code`, `message`, `retryable`).
Batch items inherit the call's `scope`, `cwd` and `session_id` and may not name their own; a
bad session refuses the whole call, a bad item fails alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cairn.context import Context
from cairn.errors import InvalidInput
from cairn.models import BatchItem, ItemError, RememberBatch, RememberResult
from cairn.remember import build_claim, claim_vector, remember_batch, store_claim
from cairn.sessions.ledger import session_for_call

MAX_BATCH = 100
_INHERITED = ("scope", "cwd", "session_id")


def remember_typed(
    ctx: Context,
    default_cwd: Path,
    *,
    content: object,
    mtype: object,
    memories: object,
    outer: Mapping[str, Any],
    fields: Mapping[str, Any],
    dedup: bool,
) -> RememberResult | RememberBatch:
    scalar = content is not None or mtype is not None
    if memories is not None and scalar:
        raise InvalidInput(
            "give either content and type (one claim) or memories (a batch of claims), not both."
        )
    if memories is None and not scalar:
        raise InvalidInput(
            "remember needs content and type for one claim, or memories: "
            "[{content, type}, ...] for several."
        )
    if outer.get("session_id") is not None:
        session_for_call(
            ctx, outer["session_id"], outer.get("scope"), outer.get("cwd"), default_cwd
        )
    if scalar:
        if content is None or mtype is None:
            missing = "type" if mtype is None else "content"
            raise InvalidInput(f"{missing} is missing; the scalar form needs content and type.")
        args = {**fields, "content": content, "type": mtype, **outer}
        claim = build_claim(ctx, args, default_cwd)
        return store_claim(ctx, claim, claim_vector(ctx, claim), dedup=dedup)
    if fields:
        raise InvalidInput(
            f"{', '.join(sorted(fields))} belong to one claim; with memories put them in each item."
        )
    return RememberBatch(_batch(ctx, default_cwd, memories, outer, dedup))


def _batch(
    ctx: Context, default_cwd: Path, memories: object, outer: Mapping[str, Any], dedup: bool
) -> tuple[BatchItem, ...]:
    if isinstance(memories, (str, bytes, Mapping)) or not isinstance(memories, Sequence):
        raise InvalidInput("memories must be a list of {content, type} objects.")
    if not memories:
        raise InvalidInput("memories is empty; give at least one {content, type} object.")
    if len(memories) > MAX_BATCH:
        raise InvalidInput(f"memories holds {len(memories)} items; at most {MAX_BATCH} per call.")
    results: dict[int, BatchItem] = {}
    ready: list[tuple[int, dict[str, Any]]] = []
    for index, item in enumerate(memories):
        own = [k for k in _INHERITED if isinstance(item, Mapping) and k in item]
        if not isinstance(item, Mapping):
            results[index] = _failed(index, "is not an object with content and type")
        elif own:
            results[index] = _failed(
                index, f"names {', '.join(own)}; items inherit scope and session from the call"
            )
        else:
            ready.append((index, {**item, **outer}))
    if ready:
        done = remember_batch(ctx, [item for _, item in ready], default_cwd, dedup=dedup)
        for result in done:
            original = ready[result.index][0]
            results[original] = replace(result, index=original)
    return tuple(results[i] for i in sorted(results))


def _failed(index: int, why: str) -> BatchItem:
    message = f"item {index} {why}."
    return BatchItem(index, False, error=ItemError(InvalidInput.code, message, False))
