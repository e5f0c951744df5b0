"""Carrying out an import plan: every item through the normal remember path, each in its own
transaction together with its ledger event, so a crash leaves whole items and a rerun resumes
where it stopped (the items already written are recognised as unchanged).

Only what the source's import wrote is corrected or retired by it: an item that matched a memory
already stored only maps to it, and leaving the source releases the mapping, never the memory.
A memory two items map to (the same rule in CLAUDE.md and AGENTS.md) is retired only when the
last of them leaves, and an edit of one of them is stored beside it rather than correcting it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from cairn.context import Context
from cairn.embeddings.base import Vector
from cairn.errors import CairnError, Conflict
from cairn.history import current_version, forget, write_correction
from cairn.importers.ledger import ledger_payload, load_entries, plan
from cairn.importers.model import LEDGER_KIND, Batch, Entry, Item, Report, Step
from cairn.models import NewEvent
from cairn.refs import parse_ref
from cairn.remember import (
    Claim,
    Near,
    build_claim,
    dedup_target,
    embed_claims,
    ready,
    store_claim,
)

_DISPOSITIONS = {"created": "create", "matched": "matched", "boosted": "boosted"}


class Importer:
    """One run of one batch against the store of `ctx` (whose integration is the source's)."""

    def __init__(self, ctx: Context, batch: Batch, default_cwd: Path, *, dry_run: bool) -> None:
        self.ctx = ctx
        self.batch = batch
        self.default_cwd = default_cwd
        self.dry_run = dry_run
        self.report = Report(batch.system, batch.scope, dry_run)
        self.report.problems.extend(batch.problems)
        self.keys: dict[str, str] = {}  # item key -> memory ref, for associations
        self.holders: dict[str, set[tuple[str, str]]] = {}  # memory -> (group, origin)s

    def steps(self) -> list[Step]:
        entries = load_entries(self.ctx.store, self.batch)
        for entry in entries:
            self.holders.setdefault(entry.memory, set()).add((entry.group, entry.origin))
        mine = [e for e in entries if e.group == self.batch.group]
        self.keys.update((e.key, e.memory) for e in mine if e.key is not None)
        return plan(self.batch.items, mine)

    def run(self, steps: list[Step], advance: Callable[[], None] | None = None) -> Report:
        for step in steps:
            self.apply(step)
            if advance is not None:
                advance()
        return self.report

    def apply(self, step: Step) -> None:
        if step.action == "unchanged":
            assert step.item is not None and step.entry is not None
            self.report.add("unchanged", _label(step.item))
        elif step.action == "create":
            assert step.item is not None
            self._create(step.item)
        elif step.action == "correct":
            assert step.item is not None and step.entry is not None
            self._correct(step.item, step.entry)
        else:
            assert step.entry is not None
            self._retire(step.entry)

    # create --------------------------------------------------------------------------------
    def _create(self, item: Item, released: Entry | None = None) -> None:
        claim = self._claim(item)
        if claim is None:
            return
        vector = embed_claims(self.ctx, [claim])[0]
        if self.dry_run:
            self._predict(item, claim, vector)
            return
        with self.ctx.store.transaction():
            if released is not None:
                self._ledger(released, released.memory, "released", owned=False)
            result = store_claim(self.ctx, claim, ready(vector), dedup=True)
            owned = result.disposition == "created"
            self._ledger(item, result.memory_id, result.disposition, owned=owned)
        if released is not None:
            self._let_go(released)
        self._hold(item, result.memory_id)
        note = f"may update {result.may_update}" if result.may_update else ""
        self.report.add(_DISPOSITIONS.get(result.disposition, "create"), _label(item), note)

    def _predict(self, item: Item, claim: Claim, vector: Vector) -> None:
        """What remember will do with the claim, as remember decides it, writing nothing."""
        found = dedup_target(self.ctx, claim, ready(vector), self.ctx.embedder.identity)
        if found is None:
            self.report.add("create", _label(item))
        elif isinstance(found, Near):
            self.report.add("create", _label(item), f"may update mem_{found.memory_id}")
        else:
            memory, disposition, _ = found
            self.report.add(disposition, _label(item), memory.ref)

    def _claim(self, item: Item) -> Claim | None:
        """The item as a checked remember call; refused (and reported) when it may not be."""
        args: dict[str, Any] = {
            "content": item.content,
            "type": item.type,
            "scope": self.batch.scope,
            "tags": list(item.tags) or None,
            "source_ref": item.source_ref,
            "reason": item.reason,
            "occurred_at": item.occurred_at,
            "pinned": item.pinned,
            "relates_to": [self.keys[k] for k in item.relates if k in self.keys] or None,
        }
        if self.batch.cwd is not None:
            args["cwd"] = self.batch.cwd
        try:
            return build_claim(self.ctx, {k: v for k, v in args.items() if v}, self.default_cwd)
        except CairnError as exc:
            self.report.add("refused", _label(item), exc.message)
            return None

    # correct -------------------------------------------------------------------------------
    def _correct(self, item: Item, entry: Entry) -> None:
        if not entry.owned or self._shared(entry):
            # The memory was there before the import, or another item still says what it
            # says: the edit is a new claim of the source.
            self._create(item, released=entry)
            return
        try:
            old = current_version(self.ctx, entry.memory, self.batch.scope, "correct")
        except Conflict as exc:
            self.report.add("skipped", _label(item), f"{entry.memory}: {exc.message}")
            return
        claim = self._claim(item)
        if claim is None:
            return
        if self.dry_run:
            self.report.add("correct", _label(item), f"replaces {entry.memory}")
            return
        vector = embed_claims(self.ctx, [claim])[0]
        with self.ctx.store.transaction():
            result = write_correction(
                self.ctx,
                old,
                item.content,
                f"edited in {item.origin}",
                vector,
                source_ref=item.source_ref,
                mtype=claim.type,
            )
            new_id = parse_ref(result.memory_id, kind="mem")
            if claim.citation is not None:
                self.ctx.store.put_citation(
                    claim.citation.row(new_id, self.batch.scope, self.ctx.clock())
                )
            self._ledger(item, result.memory_id, "corrected", owned=True, replaces=entry.memory)
        self._let_go(entry)
        self._hold(item, result.memory_id)
        self.report.add("correct", _label(item), f"replaces {entry.memory}")

    # retire --------------------------------------------------------------------------------
    def _retire(self, entry: Entry) -> None:
        label = f"{entry.memory} from {entry.origin}"
        if not entry.owned or self._shared(entry):
            if not self.dry_run:
                self._ledger(entry, entry.memory, "released", owned=False)
            self._let_go(entry)
            why = "still imported from elsewhere" if entry.owned else "held before the import"
            self.report.add("release", label, f"{why}; kept")
            return
        if self.dry_run:
            self.report.add("retire", label, f"removed from {entry.origin}")
            return
        with self.ctx.store.transaction():
            # Already replaced or forgotten by hand: only the mapping goes.
            with suppress(Conflict):
                forget(self.ctx, entry.memory, f"removed from {entry.origin}", self.batch.scope)
            self._ledger(entry, entry.memory, "retired", owned=True)
        self._let_go(entry)
        self.report.add("retire", label, f"removed from {entry.origin}")

    # ledger --------------------------------------------------------------------------------
    def _ledger(
        self, item: Item | Entry, memory: str, action: str, *, owned: bool, **extra: Any
    ) -> None:
        payload = ledger_payload(self.batch, item, memory, action, owned, **extra)
        self.ctx.store.add_event(
            NewEvent(
                LEDGER_KIND,
                self.batch.scope,
                None,
                self.ctx.clock(),
                self.ctx.integration,
                parse_ref(memory, kind="mem"),
                payload,
            )
        )

    def _hold(self, item: Item, memory: str) -> None:
        self.holders.setdefault(memory, set()).add((self.batch.group, item.origin))
        if item.key is not None:
            self.keys[item.key] = memory

    def _let_go(self, entry: Entry) -> None:
        self.holders.get(entry.memory, set()).discard((entry.group, entry.origin))

    def _shared(self, entry: Entry) -> bool:
        """Whether another item (of any file or group of this source) maps to its memory."""
        return bool(self.holders.get(entry.memory, set()) - {(entry.group, entry.origin)})


def _label(item: Item) -> str:
    where = item.source_ref or item.reason or item.origin
    text = " ".join(item.content.split())
    return f"{where}: {text[:60]}{'…' if len(text) > 60 else ''}"
