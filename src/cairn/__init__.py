"""cairn: local-first long-term memory for AI agents.

    from cairn import Cairn
    mem = Cairn.open()                      # embedded SQLite under CAIRN_HOME
    mem.remember("CI needs Python 3.11", type="constraint", scope="project:acme/api")
    mem.recall("which python does CI use", scope="project:acme/api")

Importing this package does nothing else: no model loads, no file opens, no network. It does
not even import the core: each public name is imported on first use (module `__getattr__`), so
a process that only needs a light module, like the agent hook client `cairn-hook`, which
answers each tool call in a few tens of milliseconds, never pays for numpy, SQLite or the
ranking code. The `TYPE_CHECKING` block gives type checkers and IDEs the same names statically.
"""

from __future__ import annotations

from importlib import import_module

# Not `typing.TYPE_CHECKING`: importing typing alone costs the hook client a few milliseconds.
# Type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
        StoreCorrupt,
        StoreError,
        StoreForeign,
        StoreFull,
        StoreReadOnly,
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

_ERRORS = (
    "CairnError", "Conflict", "EmbedderUnavailable", "InvalidInput", "InvalidRef",
    "InvalidScope", "NotFound", "Refused", "StoreBusy", "StoreCorrupt", "StoreError",
    "StoreForeign", "StoreFull", "StoreReadOnly", "UnknownType",
)  # fmt: skip
_MODELS = (
    "MEMORY_TYPES", "BatchItem", "GetResult", "Hit", "Memory", "MemoryRecord", "RecallResult",
    "RememberResult",
)  # fmt: skip
_HOMES: dict[str, str] = {
    "Cairn": "cairn.core",
    "Settings": "cairn.config",
    **dict.fromkeys(_ERRORS, "cairn.errors"),
    **dict.fromkeys(_MODELS, "cairn.models"),
}

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
    "StoreCorrupt",
    "StoreError",
    "StoreForeign",
    "StoreFull",
    "StoreReadOnly",
    "UnknownType",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cairn' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
