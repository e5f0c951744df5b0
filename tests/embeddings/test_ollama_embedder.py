"""OllamaEmbedder against a real loopback HTTP server that answers Ollama's `/api/embed`."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from cairn.embeddings import Embedder
from cairn.embeddings.hashing import HashingEmbedder
from cairn.embeddings.ollama import BATCH, OllamaEmbedder
from cairn.errors import EmbedderUnavailable, InvalidInput


@dataclass
class Behaviour:
    """What the fake server answers; tests change it between calls."""

    dims: int = 16
    status: int = 200
    body: bytes | None = None  # raw reply instead of embeddings
    drop_one: bool = False  # answer one embedding fewer than asked
    delay: float = 0.0
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _handler(behaviour: Behaviour) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            behaviour.requests.append((self.path, request))
            time.sleep(behaviour.delay)
            if self.path != "/api/embed":
                self._reply(404, b"404 page not found")
            elif behaviour.body is not None:
                self._reply(behaviour.status, behaviour.body)
            else:
                vectors = HashingEmbedder(behaviour.dims).embed_many(request["input"]).tolist()
                if behaviour.drop_one:
                    vectors = vectors[1:]
                payload = {"model": request["model"], "embeddings": vectors}
                self._reply(behaviour.status, json.dumps(payload).encode())

        def _reply(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (the timeout test) is expected, not a failure


@pytest.fixture
def server() -> Iterator[tuple[str, Behaviour]]:
    behaviour = Behaviour()
    httpd = QuietServer(("127.0.0.1", 0), _handler(behaviour))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", behaviour
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def test_embeds_through_api_embed(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    embedder = OllamaEmbedder(url, "nomic-embed-text", dimensions=16)
    assert isinstance(embedder, Embedder)
    matrix = embedder.embed_many(["first text", "second text"])
    assert matrix.shape == (2, 16)
    assert matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    expected = HashingEmbedder(16).embed_many(["first text", "second text"])
    assert np.allclose(matrix, expected, atol=1e-6)
    path, request = behaviour.requests[-1]
    assert path == "/api/embed"
    assert request == {"model": "nomic-embed-text", "input": ["first text", "second text"]}
    assert embedder.identity == "ollama:nomic-embed-text/16"


def test_trailing_slash_in_the_url_is_fine(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    OllamaEmbedder(url + "/", "m", dimensions=16).embed_many(["x"])
    assert behaviour.requests[-1][0] == "/api/embed"


def test_dimensions_are_discovered_from_the_first_response(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.dims = 24
    embedder = OllamaEmbedder(url, "mxbai-embed-large")
    assert embedder.embed_many(["hello"]).shape == (1, 24)
    assert embedder.dimensions == 24
    assert embedder.identity == "ollama:mxbai-embed-large/24"
    assert len(behaviour.requests) == 1  # the embed call taught the width; no probe needed


def test_identity_before_any_embedding_probes_once(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.dims = 12
    embedder = OllamaEmbedder(url, "m")
    assert embedder.identity == "ollama:m/12"
    assert embedder.identity == "ollama:m/12"
    assert len(behaviour.requests) == 1
    assert embedder.embed_many([]).shape == (0, 12)
    assert len(behaviour.requests) == 1


def test_large_inputs_are_sent_in_batches(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    texts = [f"text number {i}" for i in range(BATCH + 6)]
    matrix = OllamaEmbedder(url, "m", dimensions=16).embed_many(texts)
    assert matrix.shape == (BATCH + 6, 16)
    assert [len(r["input"]) for _, r in behaviour.requests] == [BATCH, 6]


def test_configured_dimensions_that_disagree_are_an_error(server: tuple[str, Behaviour]) -> None:
    url, _ = server
    with pytest.raises(EmbedderUnavailable, match=r"16-dimensional.*expects 768"):
        OllamaEmbedder(url, "m", dimensions=768).embed_many(["x"])


def test_a_model_that_changes_width_is_an_error(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    embedder = OllamaEmbedder(url, "m")
    embedder.embed_many(["x"])
    behaviour.dims = 32
    with pytest.raises(EmbedderUnavailable, match="reindex"):
        embedder.embed_many(["y"])


def test_server_error_is_embedder_unavailable(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.status, behaviour.body = 500, b'{"error":"llama runner process has terminated"}'
    with pytest.raises(EmbedderUnavailable, match=r"HTTP 500.*runner process") as caught:
        OllamaEmbedder(url, "m", dimensions=16).embed_many(["x"])
    assert caught.value.retryable


def test_unknown_model_says_to_pull_it(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.status, behaviour.body = 404, b'{"error":"model \\"nope\\" not found"}'
    with pytest.raises(EmbedderUnavailable, match="ollama pull nope"):
        OllamaEmbedder(url, "nope", dimensions=16).embed_many(["x"])


def test_a_reply_that_is_not_json_is_embedder_unavailable(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.body = b"<html>a different service</html>"
    with pytest.raises(EmbedderUnavailable, match="not JSON"):
        OllamaEmbedder(url, "m", dimensions=16).embed_many(["x"])


@pytest.mark.parametrize(
    "body",
    [
        b'{"embedding": [0.1, 0.2]}',  # the old /api/embeddings shape
        b'{"embeddings": [[0.1, 0.2], [0.3]]}',
        b'{"embeddings": [["a", "b"]]}',
        b'{"embeddings": [[NaN, 1.0]]}',
        b"[]",
    ],
)
def test_malformed_embeddings_are_embedder_unavailable(
    server: tuple[str, Behaviour], body: bytes
) -> None:
    url, behaviour = server
    behaviour.body = body
    with pytest.raises(EmbedderUnavailable):
        OllamaEmbedder(url, "m").embed_many(["x"])


def test_too_few_embeddings_is_embedder_unavailable(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.drop_one = True
    with pytest.raises(EmbedderUnavailable, match="1 embeddings for 2 texts"):
        OllamaEmbedder(url, "m").embed_many(["a", "b"])


def test_connection_refused_is_embedder_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Nothing listens on the port now.
    with pytest.raises(EmbedderUnavailable, match=r"cannot reach Ollama.*ollama serve"):
        OllamaEmbedder(f"http://127.0.0.1:{port}", "m", dimensions=16).embed_many(["x"])


def test_a_slow_server_times_out_as_embedder_unavailable(server: tuple[str, Behaviour]) -> None:
    url, behaviour = server
    behaviour.delay = 1.0
    with pytest.raises(EmbedderUnavailable, match="cannot reach Ollama"):
        OllamaEmbedder(url, "m", dimensions=16, timeout=0.2).embed_many(["x"])


def test_proxy_settings_are_ignored(
    server: tuple[str, Behaviour], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, behaviour = server
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    OllamaEmbedder(url, "m", dimensions=16).embed_many(["x"])
    assert len(behaviour.requests) == 1


@pytest.mark.parametrize(
    ("url", "model"),
    [("ftp://host/x", "m"), ("127.0.0.1:11434", "m"), ("http://127.0.0.1:11434", "  ")],
)
def test_bad_configuration_is_invalid_input(url: str, model: str) -> None:
    with pytest.raises(InvalidInput):
        OllamaEmbedder(url, model)


def test_non_positive_dimensions_are_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="positive"):
        OllamaEmbedder("http://127.0.0.1:11434", "m", dimensions=0)
