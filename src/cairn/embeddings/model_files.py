"""Where the default model's files live: shipped in the package, or in the machine's cache.

The int8 ONNX model, its tokenizer and its sentence-transformers config ship inside the wheel
under `cairn/embeddings/model/` and are read in place: no copy per store, no export, no
network. `manifest.json` beside them records the model file's sha256 and how it was produced
(`python -m cairn.embeddings.onnx_export --out DIR`), so a test can prove the shipped file is
the one the export script makes.

A model that must be prepared on the machine (exported from other weights) goes to one cache
per machine, `Settings.model_cache_dir` (`$CAIRN_CACHE_DIR`, else `$XDG_CACHE_HOME/cairn`, else
`~/.cache/cairn`), never under a store's home.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cairn.errors import EmbedderUnavailable

SHIPPED_DIR = Path(__file__).resolve().parent / "model"
MODEL_FILE = "model.onnx"
MANIFEST_FILE = "manifest.json"
# What the runtime reads besides the model: the tokenizer (its normaliser lowercases) and
# sentence-transformers' config (`max_seq_length`).
TOKENIZER_FILES = ("tokenizer.json", "sentence_bert_config.json")
# Install hint for everything that needs torch: the export and the float32 reference.
EXPORT_EXTRA = "pip install 'cairn-memory[export]'"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(model_dir: Path) -> dict[str, Any]:
    """The manifest of an exported model directory (`EmbedderUnavailable` if unreadable)."""
    path = model_dir / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedderUnavailable(
            f"the model manifest {path} could not be read ({exc}); reinstall cairn-memory or "
            "re-run `python -m cairn.embeddings.onnx_export --out DIR`."
        ) from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("sha256"), str):
        raise EmbedderUnavailable(
            f"the model manifest {path} has no sha256; re-run the export to rewrite it."
        )
    return manifest


def is_exported_dir(model_dir: Path) -> bool:
    """Whether `model_dir` holds a ready ONNX model with its tokenizer (the shipped layout)."""
    names = (MODEL_FILE, *TOKENIZER_FILES)
    return all((model_dir / name).is_file() for name in names)
