"""Keeping a memory's lexical index entry in step with its text.

Analysis (folding, stemming) is done here, once, so every backend indexes the same terms and
BM25 statistics mean the same thing on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.ranking.lexical import analyze
from cairn.store.base import LexicalDoc, Store


def lexical_doc(
    content: str, tags: Sequence[str], source_ref: str | None, reason: str | None
) -> LexicalDoc:
    return LexicalDoc(
        content=" ".join(analyze(content)),
        tags=" ".join(analyze(" ".join(tags))),
        source_ref=" ".join(analyze(source_ref or "")),
        reason=" ".join(analyze(reason or "")),
    )


def index_memory(
    store: Store,
    memory_id: int,
    content: str,
    tags: Sequence[str],
    source_ref: str | None,
    reason: str | None,
) -> None:
    store.put_lexical(memory_id, lexical_doc(content, tags, source_ref, reason))
