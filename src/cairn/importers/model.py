"""The records every importer shares: the items a source yields, the ledger entries that map
them to memories, and the plan and report of one import."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

LEDGER_KIND = "import"  # the event kind that records which memory an imported item became

# What an import does with one item; the summary counts them in this order.
ACTIONS: tuple[str, ...] = (
    "create",
    "matched",
    "boosted",
    "unchanged",
    "correct",
    "retire",
    "release",
    "refused",
    "skipped",
)


_DONE = {"create": "created", "correct": "corrected", "retire": "retired", "release": "released"}


@dataclass(frozen=True, slots=True)
class Item:
    """One claim read from a source, before it is remembered."""

    origin: str  # the file (or record set) it came from, e.g. "CLAUDE.md"
    section: str  # where in the origin; edits are paired with old items of the same section
    content: str
    type: str
    tags: tuple[str, ...] = ()
    source_ref: str | None = None
    reason: str | None = None
    key: str | None = None  # a stable id the source gives (a mem0 id, an entity's name)
    occurred_at: datetime | None = None
    pinned: bool = False
    relates: tuple[str, ...] = ()  # keys of items of this import to associate it with


@dataclass(frozen=True, slots=True)
class Batch:
    """What one source yielded: its items, and the origins it could not read (and why)."""

    system: str  # the source system, recorded as the memories' integration
    group: str  # the set of origins a run sees whole: an item missing from it was removed
    scope: str
    items: tuple[Item, ...]
    problems: tuple[str, ...] = ()
    cwd: str | None = None  # the checkout source_refs are relative to


@dataclass(frozen=True, slots=True)
class Entry:
    """A ledger entry: an item imported earlier and the memory it is."""

    group: str
    origin: str
    section: str
    key: str | None
    hash: str
    memory: str  # the memory's ref
    owned: bool  # written by this source's import (so the import may correct or retire it)
    content: str = ""  # the memory's current text, to tell an edit from a new item


@dataclass(frozen=True, slots=True)
class Step:
    """One planned action: an item to remember or correct, or an entry to retire."""

    action: str
    item: Item | None = None
    entry: Entry | None = None
    note: str = ""


@dataclass
class Report:
    """What an import did (or, dry, would do): counts per action and a line per notable item."""

    system: str
    scope: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ACTIONS, 0))
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, action: str, what: str, note: str = "") -> None:
        self.counts[action] += 1
        if action != "unchanged":
            self.lines.append(f"{action}: {what}" + (f" ({note})" if note else ""))

    def summary(self) -> str:
        verb = "would import" if self.dry_run else "imported"
        shown = ", ".join(f"{n} {_DONE.get(a, a)}" for a, n in self.counts.items() if n)
        return f"{verb} from {self.system} into {self.scope}: {shown or 'nothing'}"
