"""An embedder that asks an Ollama server: POST `{url}/api/embed`.

Request `{"model": ..., "input": [...]}`, response `{"embeddings": [[...], ...]}`. Only the
standard library is used. The URL is whatever the user configured (Ollama may run on another
host of their LAN); this is the one request cairn makes beyond loopback, and only when the user
chose this embedder. Proxy variables from the environment are ignored on purpose: the vectors go
straight to the configured host, never through a third party.

If `dimensions` is not given it is learned from the first response (or from a one-word probe
when the identity is needed before any text was embedded); after that every response must keep
that length, because vectors of different lengths cannot share a store.

A server that cannot be reached at all raises `EmbedderUnreachable`; the factory wraps this
embedder in `FallbackEmbedder`, so a write then goes on with the local model instead of failing.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from cairn.embeddings.base import MAX_EMBED_CHARS, Matrix, normalise_rows
from cairn.errors import EmbedderUnavailable, EmbedderUnreachable, InvalidInput

# Texts per request: bounds the request size without one round trip per text.
BATCH = 64
_PROBE = "dimension probe"


class OllamaEmbedder:
    """Embeds through Ollama's `/api/embed`; identity `ollama:<model>/<dimensions>`."""

    def __init__(
        self,
        url: str,
        model: str,
        dimensions: int | None = None,
        timeout: float = 60.0,
    ) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in {"http", "https"} or not parsed.netloc:
            raise InvalidInput(
                f"the Ollama URL {url!r} is not an http(s) URL; set CAIRN_OLLAMA_URL to e.g. "
                "http://127.0.0.1:11434."
            )
        if not model.strip():
            raise InvalidInput(
                "the Ollama model name is empty; set CAIRN_OLLAMA_MODEL, e.g. nomic-embed-text."
            )
        if dimensions is not None and dimensions <= 0:
            raise InvalidInput(
                f"embedding dimensions must be positive, got {dimensions}; leave it unset to "
                "learn it from the server."
            )
        self._endpoint = url.rstrip("/") + "/api/embed"
        self._url = url
        self._model = model
        self._dimensions = dimensions
        self._timeout = timeout
        self._lock = threading.Lock()
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    @property
    def identity(self) -> str:
        return f"ollama:{self._model}/{self.dimensions}"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            return int(self._embed_batch([_PROBE]).shape[1])  # also records the width
        return self._dimensions

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        rows: list[Matrix] = []
        for start in range(0, len(texts), BATCH):
            batch = [t[:MAX_EMBED_CHARS] for t in texts[start : start + BATCH]]
            rows.append(self._embed_batch(batch))
        return normalise_rows(np.vstack(rows))

    def _embed_batch(self, texts: list[str]) -> Matrix:
        payload = self._post({"model": self._model, "input": texts})
        vectors = _vectors(payload, len(texts), self._where())
        width = vectors.shape[1]
        with self._lock:
            if self._dimensions is None:
                self._dimensions = width
        if width != self._dimensions:
            raise EmbedderUnavailable(
                f"{self._where()} returned {width}-dimensional vectors, but this store expects "
                f"{self._dimensions}; configure the model that built the store, or run "
                "`cairn reindex` after changing models."
            )
        return vectors

    def _post(self, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            self._endpoint,
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise EmbedderUnavailable(_http_error_message(exc, self._where(), self._model)) from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EmbedderUnreachable(
                f"cannot reach Ollama at {self._url} ({reason}); check that it is running "
                "(`ollama serve`) and that CAIRN_OLLAMA_URL points at it."
            ) from exc
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise EmbedderUnavailable(
                f"{self._where()} answered with something that is not JSON ({exc}); check that "
                "CAIRN_OLLAMA_URL points at an Ollama server, not another service."
            ) from exc

    def _where(self) -> str:
        return f"Ollama at {self._url} (model {self._model!r})"


def _http_error_message(exc: urllib.error.HTTPError, where: str, model: str) -> str:
    try:
        detail = exc.read(500).decode("utf-8", "replace").strip()
    except OSError:
        detail = ""
    hint = (
        f"pull the model with `ollama pull {model}` or set CAIRN_OLLAMA_MODEL"
        if exc.code == 404
        else "check the Ollama server's log"
    )
    suffix = f": {detail}" if detail else ""
    return f"{where} answered HTTP {exc.code}{suffix}; {hint}."


def _vectors(payload: Any, expected: int, where: str) -> Matrix:
    """Validate an `/api/embed` response and return its vectors as a float32 matrix."""
    embeddings = payload.get("embeddings") if isinstance(payload, dict) else None
    if not isinstance(embeddings, list) or len(embeddings) != expected:
        got = len(embeddings) if isinstance(embeddings, list) else "no"
        raise EmbedderUnavailable(
            f"{where} returned {got} embeddings for {expected} texts; check that the server "
            "speaks Ollama's /api/embed and that the model is an embedding model."
        )
    widths = {len(v) if isinstance(v, list) else -1 for v in embeddings}
    if len(widths) != 1 or min(widths) <= 0:
        raise EmbedderUnavailable(
            f"{where} returned malformed or ragged embeddings; check that the model is an "
            "embedding model."
        )
    try:
        matrix = np.asarray(embeddings, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbedderUnavailable(
            f"{where} returned embeddings that are not numbers ({exc}); check the server."
        ) from exc
    if not np.isfinite(matrix).all():
        raise EmbedderUnavailable(
            f"{where} returned NaN or infinite values; check the model with `ollama show`."
        )
    return matrix
