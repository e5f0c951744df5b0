from __future__ import annotations

import subprocess
import sys

import cairn


def test_all_names_exist_and_are_sorted() -> None:
    for name in cairn.__all__:
        assert hasattr(cairn, name), name
    assert len(set(cairn.__all__)) == len(cairn.__all__)


def test_public_api_is_exactly_this() -> None:
    assert set(cairn.__all__) == {
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
    }


def test_import_has_no_side_effects() -> None:
    code = (
        "import sys, cairn; "
        "heavy = [m for m in ('torch', 'onnxruntime', 'sentence_transformers', 'psycopg') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
