"""The recall pipeline end to end on a real store: fields, fusion, multipliers, cut, gate, weak."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from cairn import Cairn
from cairn.ranking.fusion import RECIPE, FusionRecipe
from cairn.ranking.gate import GATE
from cairn.ranking.recall import Phrasing
from cairn.ranking.signals import RECENCY_GAIN
from cairn.store.base import MemoryFilter
from clocks import FakeClock

SCOPE = "project:example/ranking"
FILLER = [
    "The billing worker retries webhooks three times before giving up.",
    "Our staging cluster runs on two small nodes in Frankfurt.",
    "Release notes are drafted in the docs folder every Friday.",
    "The mobile client caches avatars for a day.",
    "Feature flags live in the flags table and are read at startup.",
    "Search reindexing happens nightly at two in the morning.",
    "The audit log keeps entries for seven years.",
    "Email templates are rendered with Jinja on the worker.",
    "The rate limiter allows sixty requests per minute per token.",
    "Payments go through the Stripe adapter in the billing service.",
]


def fill(mem: Cairn, count: int, scope: str = SCOPE) -> None:
    """Unrelated memories, so a scope reaches the size where the coverage gate applies."""
    items = [
        {"content": f"{FILLER[i % len(FILLER)]} (note {i})", "type": "fact", "scope": scope}
        for i in range(count)
    ]
    mem.remember_many(items, dedup=False)


def test_explain_breaks_each_score_into_its_parts(mem: Cairn) -> None:
    ref = mem.remember("Deploys are refused on Fridays after noon.", type="constraint", scope=SCOPE)
    hit = mem.recall("why was my deploy refused", scope=SCOPE, explain=True, kind="memories").hits[
        0
    ]
    assert hit.ref == ref.memory_id
    parts = hit.explain
    assert parts is not None
    for name in ("lexical", "dense", "fused", "date", "lifecycle", "acts", "resting"):
        assert name in parts
    for name in ("recency", "feedback", "cosine", "coverage"):
        assert name in parts
    assert parts["lexical"] > 0  # "refused" found "refused" and its stem
    product = math.prod(
        parts[k] for k in ("fused", "date", "lifecycle", "acts", "resting", "recency", "feedback")
    )
    assert hit.score == pytest.approx(product, rel=1e-4)


def test_no_explain_no_breakdown(mem: Cairn) -> None:
    mem.remember("Deploys are refused on Fridays.", type="constraint", scope=SCOPE)
    assert mem.recall("deploy refused", scope=SCOPE).hits[0].explain is None


def test_stemming_and_folding_reach_the_lexical_score(mem: Cairn) -> None:
    refusal = mem.remember("The refusal of the merge was logged.", type="fact", scope=SCOPE)
    accented = mem.remember("Le serveur de préproduction est lent.", type="fact", scope=SCOPE)
    by_stem = mem.recall("merge refused", scope=SCOPE, explain=True, cut=False).hits
    assert by_stem[0].ref == refusal.memory_id and by_stem[0].explain["lexical"] > 0  # type: ignore[index]
    folded = mem.recall("PREPRODUCTION", scope=SCOPE, explain=True, cut=False).hits
    assert folded[0].ref == accented.memory_id and folded[0].explain["lexical"] > 0  # type: ignore[index]


def test_fields_weigh_content_then_tags_then_source_ref_then_reason(mem: Cairn) -> None:
    base = "A note about the release train."
    refs = {
        "content": mem.remember(f"{base} zephyr", type="fact", scope=SCOPE),
        "tags": mem.remember(base + " (tags)", type="fact", scope=SCOPE, tags=["zephyr"]),
        "source_ref": mem.remember(
            base + " (source)", type="fact", scope=SCOPE, source_ref="https://x.test/zephyr"
        ),
        "reason": mem.remember(base + " (reason)", type="fact", scope=SCOPE, reason="zephyr"),
    }
    hits = mem.recall("zephyr", scope=SCOPE, explain=True, cut=False, kind="memories").hits
    lexical = {h.ref: h.explain["lexical"] for h in hits}  # type: ignore[index]
    order = [lexical[refs[f].memory_id] for f in ("content", "tags", "source_ref", "reason")]
    assert order == sorted(order, reverse=True)
    assert all(value > 0 for value in order)


def test_a_rarer_query_word_counts_more(mem: Cairn) -> None:
    common = [
        mem.remember(f"The database holds table {i}.", type="fact", scope=SCOPE).memory_id
        for i in range(4)
    ]
    rare = mem.remember("The sqlite file sits next to the app.", type="fact", scope=SCOPE)
    hits = mem.recall("sqlite database", scope=SCOPE, explain=True, cut=False).hits
    lexical = {h.ref: h.explain["lexical"] for h in hits}  # type: ignore[index]
    assert lexical[rare.memory_id] > max(lexical[ref] for ref in common)


def test_a_newer_near_tie_comes_first(mem: Cairn, clock: FakeClock) -> None:
    older = mem.remember(
        "The cache TTL for sessions is ten minutes.",
        type="fact",
        scope=SCOPE,
        occurred_at=clock.now - timedelta(days=60),
    )
    newer = mem.remember(
        "The cache TTL for sessions is ten minutes now.",
        type="fact",
        scope=SCOPE,
        dedup=False,
    )
    hits = mem.recall("session cache TTL", scope=SCOPE, explain=True, cut=False).hits
    assert [h.ref for h in hits[:2]] == [newer.memory_id, older.memory_id]
    recency = {h.ref: h.explain["recency"] for h in hits}  # type: ignore[index]
    assert recency[newer.memory_id] == pytest.approx(1 + RECENCY_GAIN)
    assert 1.0 < recency[older.memory_id] < recency[newer.memory_id]


def test_decay_fades_episodic_memories_but_not_pinned_ones_or_preferences(
    mem: Cairn, clock: FakeClock
) -> None:
    task = mem.remember("Check the flaky upload test.", type="task", scope=SCOPE)
    pinned = mem.remember("Check uploads before release.", type="fact", scope=SCOPE, pinned=True)
    pref = mem.remember("I prefer checking uploads by hand.", type="preference", scope=SCOPE)
    clock.advance(days=30)
    hits = mem.recall("check uploads", scope=SCOPE, explain=True, cut=False).hits
    life = {h.ref: h.explain["lifecycle"] for h in hits}  # type: ignore[index]
    assert life[task.memory_id] < 1.0
    assert life[pinned.memory_id] == pytest.approx(1.0)
    assert life[pref.memory_id] == pytest.approx(1.0)


def test_access_counteracts_decay(mem: Cairn, clock: FakeClock) -> None:
    kept = mem.remember("Rotate the signing key every quarter.", type="fact", scope=SCOPE)
    idle = mem.remember("Rotate the backup disk every quarter.", type="fact", scope=SCOPE)
    clock.advance(days=20)
    for _ in range(5):
        mem.recall("signing key rotation", scope=SCOPE, limit=1, kind="memories")
    hits = mem.recall("rotate every quarter", scope=SCOPE, explain=True, cut=False).hits
    life = {h.ref: h.explain["lifecycle"] for h in hits}  # type: ignore[index]
    assert life[kept.memory_id] > life[idle.memory_id]


def test_acts_multiplier_stays_within_bounds(mem: Cairn) -> None:
    up = mem.remember("Merge queues keep main green.", type="fact", scope=SCOPE)
    down = mem.remember("Merge on red is fine.", type="fact", scope=SCOPE)
    for _ in range(50):
        mem.store.increment(int(up.memory_id[4:]), "confirmed")
        mem.store.increment(int(down.memory_id[4:]), "contradicted")
    hits = mem.recall("merge main", scope=SCOPE, explain=True, cut=False).hits
    acts = {h.ref: h.explain["acts"] * h.explain["feedback"] for h in hits}  # type: ignore[index]
    assert 1.0 < acts[up.memory_id] <= 2.0
    assert 0.5 <= acts[down.memory_id] < 1.0


def test_relative_cut_keeps_the_best_and_near_ties(mem: Cairn) -> None:
    best = mem.remember("The payments service retries failed charges.", type="fact", scope=SCOPE)
    mem.remember("Our office plants need water on Mondays.", type="fact", scope=SCOPE)
    cut = mem.recall("payments service retries", scope=SCOPE, kind="memories").hits
    assert [h.ref for h in cut] == [best.memory_id]
    uncut = mem.recall("payments service retries", scope=SCOPE, cut=False, kind="memories").hits
    assert len(uncut) == 2
    assert uncut[1].score < RECIPE.cut_ratio * uncut[0].score


def test_unanswerable_question_gets_nothing_in_a_large_scope(mem: Cairn) -> None:
    fill(mem, 50)
    answer = mem.recall("What is the boiling point of mercury?", scope=SCOPE, kind="memories")
    assert answer.hits == ()
    found = mem.recall("how many requests does the rate limiter allow", scope=SCOPE)
    assert found.hits and "rate limiter" in found.hits[0].summary
    assert not found.hits[0].weak
    uncut = mem.recall("What is the boiling point of mercury?", scope=SCOPE, cut=False)
    assert len(uncut.hits) == 8 and not any(h.weak for h in uncut.hits)


@pytest.mark.parametrize("size", [1, 2, 10, 28])
def test_small_scopes_return_nothing_for_an_unrelated_question(mem: Cairn, size: int) -> None:
    fill(mem, size)
    for question in ("What is the boiling point of mercury?", "what is the weather on mars"):
        assert mem.recall(question, scope=SCOPE, kind="memories").hits == ()
    found = mem.recall("how many requests does the rate limiter allow", scope=SCOPE).hits
    if size > FILLER.index(next(f for f in FILLER if "rate limiter" in f)):
        assert found and "rate limiter" in found[0].summary


def test_a_single_memory_is_found_by_a_matching_question(mem: Cairn) -> None:
    ref = mem.remember("Tests never touch the network.", type="constraint", scope=SCOPE)
    assert mem.recall("what is the weather on mars", scope=SCOPE).hits == ()
    assert mem.recall("do tests touch the network?", scope=SCOPE).refs == [ref.memory_id]


def test_barely_passing_hits_are_weak(mem: Cairn) -> None:
    fill(mem, 50)
    thin = mem.remember(
        "Somebody mentioned a quokka and a narwhal once, between lunch orders, parking passes, "
        "printer toner, the holiday rota, desk moves, coffee beans and the fire drill schedule.",
        type="fact",
        scope=SCOPE,
    )
    query = "quokka narwhal axolotl"
    hits = mem.recall(query, scope=SCOPE, explain=True).hits
    assert hits[0].ref == thin.memory_id and hits[0].weak
    strong = mem.remember(
        "Quokka, narwhal and axolotl sightings go in the wildlife sheet.", type="fact", scope=SCOPE
    )
    hits = mem.recall(query, scope=SCOPE, explain=True).hits
    assert hits[0].ref == strong.memory_id and not hits[0].weak
    for hit in hits:
        parts = hit.explain or {}
        barely = parts["cosine"] < GATE.weak_cosine and parts["coverage"] < GATE.weak_coverage
        assert hit.weak == barely


def test_also_finds_what_the_first_phrasing_misses(mem: Cairn) -> None:
    target = mem.remember(
        "Invoices are archived to cold storage after a year.", type="fact", scope=SCOPE
    )
    mem.remember("The build uses ccache to speed up compiles.", type="fact", scope=SCOPE)
    first = mem.recall("compiles", scope=SCOPE, kind="memories").refs
    assert target.memory_id not in first
    both = mem.recall("compiles", scope=SCOPE, also=["invoices archived"], cut=False).refs
    assert target.memory_id in both


def test_filters_and_as_of_apply_with_the_whole_pipeline(mem: Cairn, clock: FakeClock) -> None:
    fill(mem, 50)
    old = mem.remember(
        "Backups run at midnight UTC.",
        type="fact",
        scope=SCOPE,
        tags=["ops"],
        occurred_at=clock.now - timedelta(days=10),
    )
    decision = mem.remember("Backups are encrypted with age.", type="decision", scope=SCOPE)
    weekly = mem.remember(
        "Backup restores are tested weekly.",
        type="fact",
        scope=SCOPE,
        occurred_at=clock.now - timedelta(days=10),
    )
    clock.advance(days=1)
    before = clock.now
    clock.advance(days=1)
    new = mem.correct(
        old.memory_id, "Backups run at two in the morning UTC.", reason="moved", scope=SCOPE
    )

    assert mem.recall("backups", scope=SCOPE, types=["decision"]).refs == [decision.memory_id]
    tagged = mem.recall("backups", scope=SCOPE, tags=["ops"], cut=False).refs
    assert tagged == [new.memory_id]
    since = mem.recall("backups run", scope=SCOPE, since=before.date().isoformat(), cut=False).refs
    assert old.memory_id not in since and new.memory_id in since
    until = mem.recall(
        "backup restores", scope=SCOPE, until=(clock.now - timedelta(days=5)).date().isoformat()
    ).refs
    assert until == [weekly.memory_id]
    past = mem.recall("when do backups run", scope=SCOPE, as_of=before.date().isoformat())
    assert past.refs[0] == old.memory_id and new.memory_id not in past.refs
    assert mem.recall("when do backups run", scope=SCOPE).refs[0] == new.memory_id


def test_a_named_date_lifts_what_happened_then(mem: Cairn, clock: FakeClock) -> None:
    march = mem.remember(
        "We rolled back the search deploy.",
        type="fact",
        scope=SCOPE,
        occurred_at="2026-03-03T10:00Z",
    )
    july = mem.remember(
        "We rolled back the search deploy again.",
        type="fact",
        scope=SCOPE,
        occurred_at="2026-07-03T10:00Z",
        dedup=False,
    )
    hits = mem.recall(
        "what did we roll back on 3 March 2026?", scope=SCOPE, explain=True, cut=False
    ).hits
    parts = {h.ref: h.explain for h in hits}
    assert parts[march.memory_id]["date"] == RECIPE.date_lift  # type: ignore[index]
    assert parts[july.memory_id]["date"] == 1.0  # type: ignore[index]
    assert hits[0].ref == march.memory_id


def test_no_score_is_ever_shown_negative(mem: Cairn) -> None:
    fill(mem, 10)
    uncut = mem.recall("zebra quantum marmalade", scope=SCOPE, cut=False, explain=True).hits
    below = [h for h in uncut if (h.explain or {})["fused"] < 0.0]
    assert below, "the unrelated question meets memories of negative cosine"
    assert all(h.score == 0.0 for h in below) and all(h.score >= 0.0 for h in uncut)
    nearest = mem.query("zebra quantum marmalade", scope=SCOPE)
    assert nearest and all(h.score >= 0.0 for h in nearest)


@pytest.mark.parametrize("raw", [-0.0011, -1.0, float("nan")])
def test_a_hit_clamps_its_displayed_score(raw: float) -> None:
    from cairn.models import Hit

    hit = Hit("mem_1", "memory", "s", raw, False, None, "unchecked", None)
    assert hit.score == 0.0
    assert Hit("mem_1", "memory", "s", 0.25, False, None, "unchecked", None).score == 0.25


def test_a_question_naming_one_speaker_lowers_what_the_others_said(mem: Cairn) -> None:
    said = mem.remember("Caroline: I painted the sunrise at the lake.", type="fact", scope=SCOPE)
    other = mem.remember(
        "Melanie: I painted the sunrise at the lake, Caroline.",
        type="fact",
        scope=SCOPE,
        dedup=False,
    )
    plain = mem.remember(
        "The sunrise at the lake was painted in oil.", type="fact", scope=SCOPE, dedup=False
    )
    hits = mem.recall(
        "What did Caroline paint at the lake?", scope=SCOPE, explain=True, cut=False
    ).hits
    parts = {h.ref: h.explain or {} for h in hits}
    assert parts[other.memory_id]["speaker"] == RECIPE.other_speaker
    assert "speaker" not in parts[said.memory_id] and "speaker" not in parts[plain.memory_id]
    assert [h.ref for h in hits].index(said.memory_id) < [h.ref for h in hits].index(
        other.memory_id
    )
    # Naming both speakers (or none) lowers nobody.
    both = mem.recall("What did Caroline and Melanie paint?", scope=SCOPE, explain=True, cut=False)
    assert all("speaker" not in (h.explain or {}) for h in both.hits)


FEEDBACK_QUERY = "how are webhooks retried"


def _feedback_passes(
    mem: Cairn, filler: int
) -> tuple[MemoryFilter, FusionRecipe, Phrasing, Phrasing]:
    """A scope of `filler` unrelated memories and one on topic; the candidates of
    `FEEDBACK_QUERY` without feedback and with feedback at 0.5: (filter, recipe on, off, on)."""
    from dataclasses import replace

    from cairn.ranking.recall import candidates
    from cairn.scope import visible_scopes

    fill(mem, filler)
    mem.remember(
        "The billing worker retries failed webhooks with backoff.", type="fact", scope=SCOPE
    )
    ctx, filt = mem._ctx, MemoryFilter(scopes=visible_scopes(SCOPE))
    off, on = replace(RECIPE, feedback_weight=0.0), replace(RECIPE, feedback_weight=0.5)
    first = candidates(ctx, FEEDBACK_QUERY, filt, ctx.clock(), off)
    second = candidates(ctx, FEEDBACK_QUERY, filt, ctx.clock(), on)
    return filt, on, first, second


def test_feedback_reorders_but_the_gate_reads_the_query_itself(mem: Cairn) -> None:
    from cairn.ranking.recall import RecallQuery, retrieve

    ctx, text = mem._ctx, FEEDBACK_QUERY
    filt, on, first, second = _feedback_passes(mem, 30)
    assert first.lexical.scores == second.lexical.scores
    assert second.dense != first.dense  # the moved query re-scored the pass
    assert first.vector is second.vector or (first.vector == second.vector).all()
    uncut = RecallQuery(text, filt, 10, cut=False)
    assert {s.memory.id for s in retrieve(ctx, uncut, on)} <= set(second.fused)


def test_feedback_rescores_the_first_pass_and_adds_no_candidate(mem: Cairn) -> None:
    """The moved query re-scores the memories the first pass found (its dense pool and keyword
    matches) with their exact window cosines; it runs no second search of the whole store, so
    on a store past the dense pool's size no memory outside the first pass joins."""
    import numpy as np

    from cairn.ranking.dense import DENSE_POOL
    from cairn.ranking.expansion import expanded_query, feedback_ids

    ctx = mem._ctx
    filt, on, first, second = _feedback_passes(mem, DENSE_POOL + 80)
    assert set(second.dense) == set(first.dense)
    top = feedback_ids({i: first.score(i) for i in first.fused}, on.feedback_docs)
    found = ctx.store.get_vectors(top, ctx.embedder.identity)
    moved = expanded_query(first.vector, [found[i] for i in top if i in found], 0.5)
    ids = list(first.dense)
    exact = ctx.store.window_similarities(filt, ctx.embedder.identity, moved, 0, ids)
    assert np.allclose([second.dense[i] for i in ids], [exact[i] for i in ids], atol=1e-6)
    # A search of the whole store with the moved query would have found others.
    searched = ctx.store.window_similarities(filt, ctx.embedder.identity, moved, DENSE_POOL, ())
    assert set(searched) - set(first.dense)
