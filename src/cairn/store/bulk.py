"""Loading many new memories at once, with vectors the caller already has.

`remember` stores one memory per write transaction, with its deduplication check, its event
and its neighbours: right for an agent, too slow to build a store of a million memories for a
benchmark or an import of pre-embedded data. `cairn.store.bulk_load.bulk_add` writes the same
rows (memory, its `remember` event, vector, lexical entry, tags) for a batch of memories in one
transaction per call, with the backend's fastest insert path. It does not deduplicate and does
not link session neighbours, so it refuses memories that belong to a session: their context and
window vectors would be missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.embeddings.base import Vector
from cairn.models import NewMemory
from cairn.store.base import LexicalDoc


@dataclass(frozen=True, slots=True)
class BulkMemory:
    memory: NewMemory
    vector: Vector
    lexical: LexicalDoc
    event: Mapping[str, Any]  # the payload of the memory's `remember` event
