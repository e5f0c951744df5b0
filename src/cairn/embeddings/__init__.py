"""Embedders and the one factory that picks among them from `Settings`.

Importing this package is cheap: each embedder module is imported only when the factory builds
that embedder, and the model runtimes (onnxruntime, tokenizers, torch) only when an embedder
first embeds. A command-line call that never embeds pays for none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cairn.embeddings.base import Embedder, fit_dimensions, normalise_rows
from cairn.errors import InvalidInput

if TYPE_CHECKING:
    from cairn.config import Settings

__all__ = ["EMBEDDERS", "Embedder", "fit_dimensions", "make_embedder", "normalise_rows"]

# name -> what it is; the names CAIRN_EMBEDDER accepts.
EMBEDDERS = {
    "local": "all-MiniLM-L6-v2 quantised to int8 on onnxruntime (default, offline)",
    "local-fp32": "all-MiniLM-L6-v2 in float32 on sentence-transformers (extra [fp32], reference)",
    "hashing": "deterministic feature hashing, no model (tests, minimal installs)",
    "ollama": "an Ollama server's /api/embed (CAIRN_OLLAMA_URL, CAIRN_OLLAMA_MODEL)",
}


# What an unreachable Ollama falls back to (CAIRN_OLLAMA_FALLBACK; "none" fails instead).
FALLBACKS = ("local", "local-fp32", "hashing")


def make_embedder(settings: Settings) -> Embedder:
    """Build the embedder `settings.embedder` names (the local model ships in the package)."""
    name = settings.embedder.strip().lower()
    if name == "local":
        from cairn.embeddings.local import MiniLMInt8

        return MiniLMInt8(cache_dir=settings.model_cache_dir)
    if name == "local-fp32":
        from cairn.embeddings.local import MiniLMFp32

        return MiniLMFp32()
    if name == "hashing":
        from cairn.embeddings.hashing import HashingEmbedder

        return HashingEmbedder()
    if name == "ollama":
        return _ollama(settings)
    valid = ", ".join(EMBEDDERS)
    raise InvalidInput(
        f"unknown embedder {settings.embedder!r}; set CAIRN_EMBEDDER to one of: {valid}."
    )


def _ollama(settings: Settings) -> Embedder:
    """Ollama, falling back to `settings.ollama_fallback` when the server cannot be reached."""
    from cairn.embeddings.fallback import FallbackEmbedder
    from cairn.embeddings.ollama import OllamaEmbedder

    primary = OllamaEmbedder(settings.ollama_url, settings.ollama_model)
    name = settings.ollama_fallback.strip().lower()
    if name == "none":
        return primary
    if name not in FALLBACKS:
        raise InvalidInput(
            f"unknown Ollama fallback {settings.ollama_fallback!r}; set CAIRN_OLLAMA_FALLBACK to "
            f"one of: {', '.join(FALLBACKS)}, or none to fail when Ollama is unreachable."
        )
    return FallbackEmbedder(
        primary, lambda: make_embedder(settings.with_overrides(embedder=name)), name
    )
