from __future__ import annotations

import pytest

from cairn import Cairn, InvalidInput, Refused, UnknownType
from cairn.models import MEMORY_TYPES

SCOPE = "project:example/api"
OTHER = "project:example/web"


def counts(mem: Cairn) -> tuple[int, int]:
    return (
        sum(1 for _ in mem.store.iter_memories()),
        sum(1 for _ in mem.store.iter_events()),
    )


def test_remember_creates_a_typed_memory_with_its_source_event(mem: Cairn) -> None:
    result = mem.remember("CI runs on Python 3.11 only.", type="constraint", scope=SCOPE)
    assert result.disposition == "created"
    assert result.memory_id.startswith("mem_")
    assert result.source_event_id.startswith("evt_")
    assert (result.type, result.scope) == ("constraint", SCOPE)
    record = mem.get_memory([result.memory_id], scope=SCOPE).records[0]
    assert record.memory.durability == "permanent"
    assert record.memory.summary == "CI runs on Python 3.11 only."
    assert record.memory.source_event_id == int(result.source_event_id[4:])
    assert record.memory.status == "active"


def test_type_is_canonicalised_and_durability_follows_it(mem: Cairn) -> None:
    task = mem.remember("Port the exporter to JSONL.", type=" Task ", scope=SCOPE)
    fact = mem.remember("The exporter writes UTF-8.", type="fact", scope=SCOPE)
    got = {
        r.ref: r.memory
        for r in mem.get_memory([task.memory_id, fact.memory_id], scope=SCOPE).records
    }
    assert got[task.memory_id].type == "task"
    assert got[task.memory_id].durability == "episodic"
    assert got[fact.memory_id].durability == "semantic"


def test_identical_content_in_the_same_scope_is_matched(mem: Cairn) -> None:
    first = mem.remember("Deploys happen on Tuesdays.", type="fact", scope=SCOPE)
    again = mem.remember("Deploys happen on Tuesdays.", type="fact", scope=SCOPE)
    assert again.disposition == "matched"
    assert again.memory_id == first.memory_id
    assert counts(mem)[0] == 1


def test_near_duplicate_is_boosted_not_duplicated(mem: Cairn) -> None:
    text = "The billing worker retries failed webhook deliveries five times with backoff."
    first = mem.remember(text, type="fact", scope=SCOPE)
    near = mem.remember(text.replace(" with ", " using "), type="fact", scope=SCOPE)
    assert near.disposition == "boosted"
    assert near.memory_id == first.memory_id
    assert near.similarity is not None and near.similarity >= 0.82
    memory = mem.get_memory([first.memory_id], scope=SCOPE).records[0].memory
    assert memory.weight > 0.5
    assert memory.access_count >= 1
    assert counts(mem)[0] == 1


def test_only_a_memory_written_in_a_session_looks_for_its_neighbours(mem: Cairn) -> None:
    # Without a session a memory has no neighbours: remember skips the window queries.
    asked: list[list[int]] = []
    original = mem.store.session_windows

    def noting(memory_ids: list[int], reach: int) -> dict[int, tuple[int, ...]]:
        asked.append(list(memory_ids))
        return original(memory_ids, reach)

    mem.store.session_windows = noting  # type: ignore[method-assign]
    alone = mem.remember("The exporter writes UTF-8.", type="fact", scope=SCOPE)
    assert asked == []
    session = mem.activate("try the ice cream place", scope=SCOPE).session_id
    first = mem.remember("We looked at the ice cream menu.", type="fact", session_id=session)
    second = mem.remember("Super good, rich and creamy!", type="fact", session_id=session)
    assert asked[0] == [int(first.memory_id[4:])]
    assert [int(second.memory_id[4:])] in asked
    assert alone.disposition == "created"


def test_dedup_threshold_is_configurable(
    store_location: str,
    settings,
    embedder,
    clock,
    tmp_path,  # type: ignore[no-untyped-def]
) -> None:
    strict = settings.with_overrides(dedup_threshold=0.9999)
    with Cairn.open(store_location, settings=strict, embedder=embedder, clock=clock) as mem:
        text = "The billing worker retries failed webhook deliveries five times with backoff."
        mem.remember(text, type="fact", scope=SCOPE)
        near = mem.remember(text.replace(" with ", " using "), type="fact", scope=SCOPE)
        assert near.disposition == "created"


def test_dedup_never_crosses_scopes(mem: Cairn) -> None:
    a = mem.remember("Deploys happen on Tuesdays.", type="fact", scope=SCOPE)
    b = mem.remember("Deploys happen on Tuesdays.", type="fact", scope=OTHER)
    c = mem.remember("Deploys happen on Tuesdays.", type="fact", scope="global")
    assert len({a.memory_id, b.memory_id, c.memory_id}) == 3
    assert {a.disposition, b.disposition, c.disposition} == {"created"}


def test_dedup_false_stores_anyway(mem: Cairn) -> None:
    mem.remember("Raw record one.", type="fact", scope=SCOPE)
    again = mem.remember("Raw record one.", type="fact", scope=SCOPE, dedup=False)
    assert again.disposition == "created"
    assert counts(mem)[0] == 2


def test_all_optional_fields_round_trip(mem: Cairn) -> None:
    session = mem.activate("tidy the webhook retries", scope=SCOPE).session_id
    result = mem.remember(
        "Use `retry_with_backoff` for webhook calls.",
        type="instruction",
        scope=SCOPE,
        tags=["Webhooks", "retries", "webhooks"],
        reason="Two outages came from naive retries.",
        source_ref="src/hooks.py:10-24",
        summary="Use retry_with_backoff",
        weight=0.9,
        durability="semantic",
        pinned=True,
        occurred_at="2026-07-30T10:00:00Z",
        diff_text="--- a/x\n+++ b/x\n",
        diff_files=["src/hooks.py"],
        error_trace="Traceback: TimeoutError",
        session_id=session,
    )
    m = mem.get_memory([result.memory_id], scope=SCOPE).records[0].memory
    assert m.tags == ("webhooks", "retries")
    assert m.reason == "Two outages came from naive retries."
    assert m.source_ref == "src/hooks.py:10-24"
    assert m.summary == "Use retry_with_backoff"
    assert (m.weight, m.durability, m.pinned) == (0.9, "semantic", True)
    assert m.occurred_at.isoformat() == "2026-07-30T10:00:00+00:00"
    assert m.diff_files == ("src/hooks.py",)
    assert m.error_trace == "Traceback: TimeoutError"
    assert m.session_id == session


def test_tags_are_detected_when_omitted(mem: Cairn) -> None:
    result = mem.remember(
        "The pytest fixture in conftest.py leaks a Postgres connection #flaky",
        type="lesson",
        scope=SCOPE,
    )
    tags = mem.get_memory([result.memory_id], scope=SCOPE).records[0].memory.tags
    assert "flaky" in tags and "conftest.py" in tags and "testing" in tags and "database" in tags


def test_summary_defaults_to_first_200_chars(mem: Cairn) -> None:
    content = "word " * 100
    result = mem.remember(content, type="fact", scope=SCOPE)
    summary = mem.get_memory([result.memory_id], scope=SCOPE).records[0].memory.summary
    assert len(summary) <= 200
    assert summary.startswith("word word")


@pytest.mark.parametrize("content", ["", "   ", "\n\t"])
def test_blank_content_is_refused_and_nothing_stored(mem: Cairn, content: str) -> None:
    with pytest.raises(Refused, match="blank"):
        mem.remember(content, type="fact", scope=SCOPE)
    assert counts(mem) == (0, 0)


def test_unknown_type_lists_the_ten(mem: Cairn) -> None:
    with pytest.raises(UnknownType) as err:
        mem.remember("Something.", type="note", scope=SCOPE)
    for name in MEMORY_TYPES:
        assert name in str(err.value)
    assert counts(mem) == (0, 0)


def test_content_over_limit_is_refused(
    store_location: str,
    settings,
    embedder,
    clock,  # type: ignore[no-untyped-def]
) -> None:
    small = settings.with_overrides(max_content_bytes=100)
    with Cairn.open(store_location, settings=small, embedder=embedder, clock=clock) as mem:
        mem.remember("x" * 100, type="fact", scope=SCOPE)
        with pytest.raises(Refused, match="100"):
            mem.remember("é" * 51, type="fact", scope=SCOPE)  # 102 bytes
        assert counts(mem)[0] == 1


def test_secret_is_refused_without_echo_and_nothing_stored(mem: Cairn) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with pytest.raises(Refused) as err:
        mem.remember(f"The deploy bot uses token {secret} for pushes.", type="fact", scope=SCOPE)
    assert "GitHub" in str(err.value)
    assert secret not in str(err.value)
    assert secret[4:16] not in str(err.value)
    assert counts(mem) == (0, 0)


def test_secret_in_reason_is_refused_too(mem: Cairn) -> None:
    with pytest.raises(Refused, match="reason"):
        mem.remember(
            "The staging database is reachable from CI.",
            type="fact",
            scope=SCOPE,
            reason="seen at postgres://admin:Zx8vQ2mLp9Rt@db.internal:5432/app",
        )
    assert counts(mem) == (0, 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [("weight", 1.5), ("weight", -0.1), ("durability", "forever"), ("occurred_at", "yesterday")],
)
def test_bad_optional_values_are_refused(mem: Cairn, field: str, value: object) -> None:
    with pytest.raises(InvalidInput, match=field):
        mem.remember("A claim.", type="fact", scope=SCOPE, **{field: value})  # type: ignore[arg-type]
    assert counts(mem) == (0, 0)


def test_bad_scope_is_refused(mem: Cairn) -> None:
    with pytest.raises(InvalidInput, match="scope"):
        mem.remember("A claim.", type="fact", scope="no colon here")


def test_precomputed_embedding_is_fitted_to_the_store(mem: Cairn) -> None:
    short = mem.remember("Vector given, short.", type="fact", scope=SCOPE, embedding=[0.5, 0.5])
    long = mem.remember("Vector given, long.", type="fact", scope=SCOPE, embedding=[0.1] * 2000)
    vectors = mem.store.get_vectors(
        [int(short.memory_id[4:]), int(long.memory_id[4:])], mem.embedder.identity
    )
    for vector in vectors.values():
        assert vector.shape == (mem.embedder.dimensions,)
        assert abs(float((vector**2).sum()) - 1.0) < 1e-5


def test_used_counts_a_cite(mem: Cairn, clock) -> None:  # type: ignore[no-untyped-def]
    first = mem.remember("The cache TTL is 60 seconds.", type="fact", scope=SCOPE)
    mem.remember("Raised the TTL experiment.", type="lesson", scope=SCOPE, used=[first.memory_id])
    m = mem.get_memory([first.memory_id], scope=SCOPE).records[0].memory
    assert m.cited == 1
    assert m.last_cited_at == clock.now


def test_used_naming_another_scope_is_refused(mem: Cairn) -> None:
    other = mem.remember("Web uses Vite.", type="fact", scope=OTHER)
    with pytest.raises(InvalidInput, match=other.memory_id):
        mem.remember("API note.", type="fact", scope=SCOPE, used=[other.memory_id])
    assert counts(mem)[0] == 1


def test_remember_many_isolates_bad_items(mem: Cairn) -> None:
    results = mem.remember_many(
        [
            {"content": "Good one.", "type": "fact", "scope": SCOPE},
            {"content": "", "type": "fact", "scope": SCOPE},
            {"content": "Bad type.", "type": "musing", "scope": SCOPE},
            {"content": "Good two.", "type": "decision", "scope": SCOPE},
            "not an object",  # type: ignore[list-item]
        ]
    )
    assert [r.index for r in results] == [0, 1, 2, 3, 4]
    assert [r.ok for r in results] == [True, False, False, True, False]
    assert results[1].error is not None and results[1].error.code == "refused"
    assert results[2].error is not None and results[2].error.code == "unknown_type"
    assert results[2].error.retryable is False
    assert results[3].data is not None and results[3].data.type == "decision"
    assert counts(mem)[0] == 2


def test_remember_many_needs_items(mem: Cairn) -> None:
    with pytest.raises(InvalidInput):
        mem.remember_many([])
