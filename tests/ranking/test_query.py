"""`query`: nearest memories by embedding alone, as the seed skill describes."""

from __future__ import annotations

import pytest

from cairn import Cairn, InvalidInput

SCOPE = "project:example/query"


def test_query_returns_the_nearest_memories_by_embedding(mem: Cairn) -> None:
    near = mem.remember(
        "deployment steps: make release then docker push", type="instruction", scope=SCOPE
    )
    mem.remember("the office plants need water on Mondays", type="fact", scope=SCOPE)
    hits = mem.query("deployment steps", scope=SCOPE)
    assert hits[0].ref == near.memory_id
    assert hits[0].kind == "memory"
    assert hits[0].score > hits[1].score
    assert len(hits) == 2


def test_query_returns_up_to_max_recall_items(mem: Cairn) -> None:
    items = [
        {"content": f"note number {i} about caching", "type": "fact", "scope": SCOPE}
        for i in range(30)
    ]
    mem.remember_many(items, dedup=False)
    assert len(mem.query("caching", scope=SCOPE)) == mem.settings.max_recall_items == 20
    assert len(mem.query("caching", scope=SCOPE, limit=5)) == 5


def test_query_reads_no_keywords_and_cuts_nothing(mem: Cairn) -> None:
    mem.remember("zyxwv", type="fact", scope=SCOPE)
    mem.remember("the billing worker retries webhooks", type="fact", scope=SCOPE)
    # Every memory comes back, however far, nearest first: no relative cut, no gate.
    assert len(mem.query("completely unrelated words", scope=SCOPE)) == 2


def test_query_stays_in_its_scope(mem: Cairn) -> None:
    mem.remember("secret roadmap for the other team", type="fact", scope="project:example/other")
    assert mem.query("roadmap", scope=SCOPE) == []


@pytest.mark.parametrize("limit", [0, 21, True])
def test_query_limit_is_checked(mem: Cairn, limit: int) -> None:
    with pytest.raises(InvalidInput, match="out of range"):
        mem.query("anything", scope=SCOPE, limit=limit)


def test_blank_query_text_is_refused(mem: Cairn) -> None:
    with pytest.raises(InvalidInput, match="blank"):
        mem.query("   ", scope=SCOPE)
