"""An unreachable Ollama falls back to the local model with one warning, instead of failing the
write; the fallback's vectors carry the fallback model's identity. On both backends, against a
loopback port nothing listens on."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn import Cairn
from cairn.config import Settings
from cairn.embeddings import make_embedder
from cairn.embeddings.fallback import FallbackEmbedder
from cairn.embeddings.hashing import HashingEmbedder
from cairn.errors import EmbedderUnavailable, EmbedderUnreachable, InvalidInput


@pytest.fixture
def dead_url() -> Iterator[str]:
    """A loopback port that is bound (so nothing else takes it) but never listens."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


def ollama_settings(tmp_path: Path, url: str, fallback: str) -> Settings:
    return Settings(home=tmp_path / "home", embedder="ollama", ollama_url=url,
                    ollama_fallback=fallback)  # fmt: skip


def test_a_write_goes_on_with_the_fallback_and_its_identity(
    store_location: str, tmp_path: Path, dead_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = ollama_settings(tmp_path, dead_url, "hashing")
    caplog.set_level(logging.WARNING, logger="cairn")
    with Cairn.open(store_location, settings=settings, cwd=tmp_path) as mem:
        first = mem.remember("The deploy runs from the release branch", type="fact",
                             scope="project:acme/api")  # fmt: skip
        second = mem.remember("Invoices are numbered per year", type="fact",
                              scope="project:acme/api")  # fmt: skip
        assert mem.embedder.identity == HashingEmbedder().identity
        identities = mem.store.vector_identities()
        assert identities == {HashingEmbedder().identity: 2}
        found = mem.recall("release branch deploy", scope="project:acme/api")
        assert found.refs[0] == first.memory_id and second.memory_id
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    line = warnings[0].getMessage()
    assert "\n" not in line and "cannot reach Ollama" in line and "hashing model" in line


def test_without_a_fallback_the_write_fails_clearly(
    store_location: str, tmp_path: Path, dead_url: str
) -> None:
    settings = ollama_settings(tmp_path, dead_url, "none")
    with Cairn.open(store_location, settings=settings, cwd=tmp_path) as mem:
        with pytest.raises(EmbedderUnavailable, match="cannot reach Ollama"):
            mem.remember("A fact", type="fact", scope="project:acme/api")
        assert list(mem.store.iter_memories()) == []


def test_only_unreachable_falls_back(tmp_path: Path) -> None:
    class Broken:
        identity = "ollama:m/8"
        dimensions = 8

        def embed_many(self, texts: object) -> object:
            raise EmbedderUnavailable("Ollama answered HTTP 404; pull the model.")

    wrapped = FallbackEmbedder(Broken(), HashingEmbedder, "hashing")  # type: ignore[arg-type]
    with pytest.raises(EmbedderUnavailable, match="404"):
        wrapped.embed_many(["x"])
    assert not wrapped.falling_back

    class Gone(Broken):
        def embed_many(self, texts: object) -> object:
            raise EmbedderUnreachable("cannot reach Ollama at http://127.0.0.1:1")

    switched = FallbackEmbedder(Gone(), HashingEmbedder, "hashing")  # type: ignore[arg-type]
    assert switched.identity == "ollama:m/8"  # known without asking the server
    assert switched.embed_many(["x"]).shape == (1, HashingEmbedder().dimensions)
    assert switched.falling_back and switched.identity == HashingEmbedder().identity


def test_the_fallback_name_is_checked(tmp_path: Path, dead_url: str) -> None:
    with pytest.raises(InvalidInput, match="CAIRN_OLLAMA_FALLBACK"):
        make_embedder(ollama_settings(tmp_path, dead_url, "gpt"))
    assert Settings.from_env({"CAIRN_OLLAMA_FALLBACK": "none"}).ollama_fallback == "none"


@pytest.mark.slow
def test_the_default_fallback_is_the_local_model(tmp_path: Path, dead_url: str) -> None:
    settings = ollama_settings(tmp_path, dead_url, "local")
    with Cairn.open(tmp_path / "memory.db", settings=settings, cwd=tmp_path) as mem:
        mem.remember("Backups run nightly at two", type="fact", scope="project:acme/api")
        (identity,) = mem.store.vector_identities()
    assert identity == make_embedder(Settings(home=tmp_path / "home")).identity
