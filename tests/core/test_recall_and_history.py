from __future__ import annotations

import pytest

from cairn import Cairn, Conflict, InvalidInput, NotFound

SCOPE = "project:example/api"
OTHER = "project:example/web"


def seed(mem: Cairn) -> dict[str, str]:
    ids = {}
    for key, mtype, text in [
        ("db", "decision", "We store sessions in PostgreSQL, not Redis."),
        ("ci", "constraint", "CI must pass on Python 3.11 before merge."),
        ("flaky", "lesson", "The checkout test was flaky because of a shared temp directory."),
        ("deploy", "instruction", "Deploy with make release then push the docker image."),
    ]:
        ids[key] = mem.remember(text, type=mtype, scope=SCOPE).memory_id
    return ids


def test_recall_finds_the_relevant_memory_first(mem: Cairn) -> None:
    ids = seed(mem)
    result = mem.recall("where are sessions stored, postgres or redis?", scope=SCOPE)
    assert result.retrieval_id.startswith("ret_")
    assert result.hits[0].ref == ids["db"]
    hit = result.hits[0]
    assert hit.kind == "memory"
    assert hit.citation == "unchecked"
    assert hit.until is None
    assert hit.summary == "We store sessions in PostgreSQL, not Redis."


def test_recall_counts_access_and_records_an_event(mem: Cairn) -> None:
    ids = seed(mem)
    mem.recall("sessions postgres redis", scope=SCOPE)
    m = mem.get_memory([ids["db"]], scope=SCOPE).records[0].memory
    assert m.access_count == 1
    kinds = [e.kind for e in mem.store.iter_events()]
    assert kinds.count("recall") == 1


def test_cut_false_returns_top_limit(mem: Cairn) -> None:
    seed(mem)
    loose = mem.recall("sessions postgres", scope=SCOPE, limit=4, cut=False)
    assert len(loose.hits) == 4
    assert [h.score for h in loose.hits] == sorted((h.score for h in loose.hits), reverse=True)


@pytest.mark.parametrize("limit", [0, 26, -1])
def test_limit_out_of_range_is_an_error(mem: Cairn, limit: int) -> None:
    with pytest.raises(InvalidInput, match="limit"):
        mem.recall("anything", scope=SCOPE, limit=limit)


def test_blank_query_is_an_error(mem: Cairn) -> None:
    with pytest.raises(InvalidInput, match="blank"):
        mem.recall("  ", scope=SCOPE)


def test_filters_types_tags_and_time(mem: Cairn, clock) -> None:  # type: ignore[no-untyped-def]
    mem.remember(
        "Old decision about caching.",
        type="decision",
        scope=SCOPE,
        occurred_at="2026-01-05",
        tags=["cache"],
    )
    newer = mem.remember(
        "New lesson about caching.",
        type="lesson",
        scope=SCOPE,
        occurred_at="2026-07-05",
        tags=["cache", "perf"],
    )
    assert [
        h.ref for h in mem.recall("caching", scope=SCOPE, types=["lesson"], cut=False).hits
    ] == [newer.memory_id]
    assert [h.ref for h in mem.recall("caching", scope=SCOPE, tags=["perf"], cut=False).hits] == [
        newer.memory_id
    ]
    since = mem.recall("caching", scope=SCOPE, since="2026-06-01", cut=False).hits
    assert [h.ref for h in since] == [newer.memory_id]
    until = mem.recall("caching", scope=SCOPE, until="2026-06-01", cut=False).hits
    assert newer.memory_id not in [h.ref for h in until] and len(until) == 1


def test_global_memories_are_visible_from_every_scope(mem: Cairn) -> None:
    g = mem.remember("Never force-push to main.", type="constraint", scope="global")
    hits = mem.recall("force push main", scope=SCOPE).hits
    assert g.memory_id in [h.ref for h in hits]
    assert mem.get_memory([g.memory_id], scope=OTHER).records[0].ref == g.memory_id


def test_nothing_crosses_scopes(mem: Cairn, clock) -> None:  # type: ignore[no-untyped-def]
    secret = mem.remember("The web app feature flag is called moonbeam.", type="fact", scope=OTHER)
    clock.advance(days=1)
    for result in (
        mem.recall("moonbeam feature flag", scope=SCOPE, cut=False),
        mem.recall("moonbeam feature flag", scope=SCOPE, cut=False, as_of="2026-12-31"),
    ):
        assert secret.memory_id not in result.refs
    got = mem.get_memory([secret.memory_id], scope=SCOPE)
    assert got.records == () and got.unknown == (secret.memory_id,)
    with pytest.raises(NotFound):
        mem.correct(secret.memory_id, "x", reason="y", scope=SCOPE)
    with pytest.raises(NotFound):
        mem.forget(secret.memory_id, reason="y", scope=SCOPE)
    with pytest.raises(NotFound):
        mem.purge(secret.memory_id, scope=SCOPE)


def test_get_memory_lists_unknown_refs(mem: Cairn) -> None:
    ids = seed(mem)
    got = mem.get_memory([ids["db"], "mem_9999", "nonsense"], scope=SCOPE)
    assert [r.ref for r in got.records] == [ids["db"]]
    assert got.unknown == ("mem_9999", "nonsense")


def test_correct_writes_a_new_version_and_as_of_sees_history(
    mem: Cairn,
    clock,  # type: ignore[no-untyped-def]
) -> None:
    old = mem.remember("Sessions live in Redis.", type="decision", scope=SCOPE)
    clock.advance(days=2)  # 2026-08-03
    new = mem.correct(
        old.memory_id, "Sessions live in PostgreSQL.", reason="Moved off Redis.", scope=SCOPE
    )
    assert new.memory_id != old.memory_id

    current = mem.recall("where do sessions live", scope=SCOPE, cut=False).refs
    assert new.memory_id in current and old.memory_id not in current

    then = mem.recall("where do sessions live", scope=SCOPE, as_of="2026-08-01", cut=False)
    assert then.refs == [old.memory_id]
    assert then.hits[0].until == clock.now  # replaced since, and says when

    got = mem.get_memory([old.memory_id, new.memory_id], scope=SCOPE)
    old_rec, new_rec = got.records
    assert old_rec.memory.replaced_by == int(new.memory_id[4:])
    assert old_rec.memory.until == clock.now
    assert [e.ref for e in old_rec.replaced_by_chain] == [new.memory_id]
    assert [e.ref for e in new_rec.replaced] == [old.memory_id]
    assert new_rec.memory.reason == "Moved off Redis."


def test_history_chain_order(mem: Cairn, clock) -> None:  # type: ignore[no-untyped-def]
    v1 = mem.remember("Timeout is 10s.", type="fact", scope=SCOPE).memory_id
    clock.advance(days=1)
    v2 = mem.correct(v1, "Timeout is 20s.", reason="raised", scope=SCOPE).memory_id
    clock.advance(days=1)
    v3 = mem.correct(v2, "Timeout is 30s.", reason="raised again", scope=SCOPE).memory_id
    r1, r3 = mem.get_memory([v1, v3], scope=SCOPE).records
    assert [e.ref for e in r3.replaced] == [v2, v1]  # newest first
    assert [e.ref for e in r1.replaced_by_chain] == [v2, v3]  # oldest first
    with pytest.raises(Conflict, match=v2):
        mem.correct(v1, "Timeout is 40s.", reason="stale", scope=SCOPE)


def test_as_of_a_day_before_anything_is_empty(mem: Cairn) -> None:
    seed(mem)
    assert mem.recall("sessions", scope=SCOPE, as_of="2026-07-31", cut=False).hits == ()


def test_as_of_does_not_count_access(mem: Cairn) -> None:
    ids = seed(mem)
    mem.recall("sessions postgres", scope=SCOPE, as_of="2026-08-01")
    assert mem.get_memory([ids["db"]], scope=SCOPE).records[0].memory.access_count == 0


def test_forget_retires_but_as_of_before_still_answers(
    mem: Cairn,
    clock,  # type: ignore[no-untyped-def]
) -> None:
    ids = seed(mem)
    clock.advance(days=3)
    mem.forget(ids["db"], reason="Not true any more.", scope=SCOPE)
    assert ids["db"] not in mem.recall("sessions postgres redis", scope=SCOPE, cut=False).refs
    then = mem.recall("sessions postgres redis", scope=SCOPE, as_of="2026-08-02", cut=False)
    assert ids["db"] in then.refs
    record = mem.get_memory([ids["db"]], scope=SCOPE).records[0]
    assert record.memory.status == "retired"
    with pytest.raises(Conflict):
        mem.forget(ids["db"], reason="again", scope=SCOPE)


def test_forget_and_correct_need_a_reason(mem: Cairn) -> None:
    ids = seed(mem)
    with pytest.raises(InvalidInput, match="reason"):
        mem.forget(ids["db"], reason=" ", scope=SCOPE)
    with pytest.raises(InvalidInput, match="reason"):
        mem.correct(ids["db"], "New text.", reason="", scope=SCOPE)


def test_purge_erases_content_everywhere_and_keeps_a_tombstone(mem: Cairn) -> None:
    leaked = mem.remember("The staging host is build-7.internal.", type="fact", scope=SCOPE)
    mid = int(leaked.memory_id[4:])
    tombstone = mem.purge(leaked.memory_id, scope=SCOPE)
    m = mem.get_memory([leaked.memory_id], scope=SCOPE).records[0].memory
    assert m.status == "purged" and m.content == "" and m.reason is None
    assert mem.store.get_vectors([mid], mem.embedder.identity) == {}
    for event in mem.store.iter_events():
        assert "build-7" not in str(event.payload)
    assert tombstone in [e.ref for e in mem.store.iter_events() if e.kind == "purge"]
    assert leaked.memory_id not in mem.recall("staging host", scope=SCOPE, cut=False).refs
    assert (
        leaked.memory_id
        not in mem.recall("staging host", scope=SCOPE, cut=False, as_of="2026-08-01").refs
    )
    with pytest.raises(Conflict):
        mem.purge(leaked.memory_id, scope=SCOPE)


def test_remember_after_forget_creates_anew(mem: Cairn) -> None:
    first = mem.remember("Feature X is on.", type="fact", scope=SCOPE)
    mem.forget(first.memory_id, reason="off now", scope=SCOPE)
    again = mem.remember("Feature X is on.", type="fact", scope=SCOPE)
    assert again.disposition == "created" and again.memory_id != first.memory_id


def test_also_merges_other_phrasings(mem: Cairn) -> None:
    ids = seed(mem)
    result = mem.recall("flaky checkout test", scope=SCOPE, also=["how to deploy"], cut=False)
    assert ids["flaky"] in result.refs and ids["deploy"] in result.refs
    with pytest.raises(InvalidInput, match="at most 3"):
        mem.recall("x", scope=SCOPE, also=["a", "b", "c", "d"])


def test_recall_with_cwd_detects_the_scope(mem: Cairn, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "plain"
    folder.mkdir()
    written = mem.remember("Plain folder memory.", type="fact", cwd=folder)
    assert written.scope.startswith("project:")
    assert written.memory_id in mem.recall("plain folder memory", cwd=folder, cut=False).refs
    assert written.memory_id not in mem.recall("plain folder memory", scope=SCOPE, cut=False).refs
