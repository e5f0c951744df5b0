"""cairn: local-first long-term memory for AI agents.

    from cairn import Cairn
    mem = Cairn.open()                      # embedded SQLite under CAIRN_HOME
    mem.remember("CI needs Python 3.11", type="constraint", scope="project:acme/api")
    mem.recall("which python does CI use", scope="project:acme/api")

Importing this package does nothing else: no model loads, no file opens, no network.
"""

from __future__ import annotations

from cairn.config import Settings
from cairn.core import Cairn
from cairn.errors import (
    CairnError,
    Conflict,
    EmbedderUnavailable,
    InvalidInput,
    InvalidRef,
    InvalidScope,
    NotFound,
    Refused,
    StoreBusy,
    StoreError,
    UnknownType,
)
from cairn.models import (
    MEMORY_TYPES,
    BatchItem,
    GetResult,
    Hit,
    Memory,
    MemoryRecord,
    RecallResult,
    RememberResult,
)

__all__ = [
    "MEMORY_TYPES",
    "BatchItem",
    "Cairn",
    "CairnError",
    "Conflict",
    "EmbedderUnavailable",
    "GetResult",
    "Hit",
    "InvalidInput",
    "InvalidRef",
    "InvalidScope",
    "Memory",
    "MemoryRecord",
    "NotFound",
    "RecallResult",
    "Refused",
    "RememberResult",
    "Settings",
    "StoreBusy",
    "StoreError",
    "UnknownType",
]
