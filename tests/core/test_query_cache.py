"""A recall embeds each query text once, however many parts of the pipeline need its vector."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cairn import Cairn
from cairn.embeddings.base import Matrix
from cairn.embeddings.hashing import HashingEmbedder

SCOPE = "project:example/cache"


class CountingEmbedder(HashingEmbedder):
    """The real deterministic embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed_many(texts)


def test_query_vectors_are_reused_across_memories_procedures_and_repeats(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    with Cairn.open(tmp_path / "m.db", embedder=embedder, cwd=tmp_path) as mem:
        mem.remember("Rotate the signing keys every quarter.", type="instruction", scope=SCOPE)
        brief = mem.activate("rotate the signing keys", scope=SCOPE)
        mem.feedback(
            brief.session_id,
            brief.retrieval_id,
            [{"ref": ref, "used": True, "effect": "helped"} for ref in brief.refs],
        )
        mem.commit(
            brief.session_id,
            outcome="success",
            summary="Rotated the keys.",
            procedure={"goal": "rotate signing keys", "steps": ["generate", "publish"]},
        )
        embedder.texts.clear()
        first = mem.recall("how do we rotate keys", scope=SCOPE)
        assert first.procedures, "the recall ranked procedures too"
        mem.recall("how do we rotate keys", scope=SCOPE)
        mem.query("how do we rotate keys", scope=SCOPE)
        assert embedder.texts == ["how do we rotate keys"]
