"""`cairn bench abstention`: does recall stay silent on absent topics at every store size?

LoCoMo turns are the memories. For a store of `n` memories the bench picks a question of a
conversation whose evidence turns fit, stores those turns and `n` minus that many other turns
(of the same conversation first, then of the others), each remembered on its own (no session,
so no neighbours: the way separate notes arrive), in a scope of its own. Then, with the default
recall (cut, gate, `limit` 8, `kind="memories"`):

- every question of that conversation whose evidence is all in the store is *answerable*: it
  is wrongly left empty when recall returns nothing (`answerable_miss`);
- `absent_per_store(n)` of the bench's absent-topic questions (cairn.bench.locomo.ABSENT,
  taken in turn) should get nothing (`absent_empty`).

The targets (issue 13) hold at every size: absent_empty >= 95 %, answerable_miss <= 2 %.
Stores at one size are `stores(n)`: many for tiny stores (a store of one memory answers few
questions), fewer for large ones.

Every text is embedded once (`_Cached`), so a run costs recall calls, not model calls. For the
gate's calibration (`cairn.bench.abstention_fit`), `features=True` also records what the gate
reads of every candidate that survives the relative cut.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cairn.bench.locomo import (
    ABSENT,
    Conversation,
    Question,
    load_conversations,
    scratch_cairn,
    turn_text,
)
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings import make_embedder
from cairn.embeddings.base import Embedder, Matrix
from cairn.errors import InvalidInput
from cairn.ranking.fusion import RECIPE, max_normalise
from cairn.ranking.recall import RecallQuery, candidates, rerank_pool
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter

SIZES = (1, 5, 10, 20, 49, 200, 1000)
ANSWERABLE_PER_STORE = 20
TARGET_ABSENT_EMPTY = 0.95
TARGET_ANSWERABLE_MISS = 0.02


def stores(size: int) -> int:
    """Stores built at a size: 200 up to 20 memories, down to 10 at 400 and more."""
    return max(10, min(200, 4000 // max(size, 1)))


def absent_per_store(size: int) -> int:
    """Absent-topic questions asked per store: fewer where there are many stores."""
    return 5 if stores(size) >= 100 else 10 if stores(size) >= 40 else len(ABSENT)


@dataclass(frozen=True, slots=True)
class Turn:
    conversation: str
    dia_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Trial:
    size: int
    conversation: str
    turns: tuple[Turn, ...]
    answerable: tuple[Question, ...]
    absent: tuple[str, ...]


@dataclass
class Outcome:
    """One question asked in one store: left empty or not, and the gate's view if recorded."""

    size: int
    conversation: str
    absent: bool
    empty: bool
    candidates: list[dict[str, Any]] = field(default_factory=list)
    # The query terms held by each keyword match that would survive the relative cut if no
    # vector were the current embedder's (every memory then ranks by keywords alone).
    keyword_held: list[list[str]] = field(default_factory=list)
    terms: dict[str, int] = field(default_factory=dict)  # document frequency of each term
    doc_count: int = 0


class _Cached:
    """An embedder that remembers every text it embedded (same identity, same vectors)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._seen: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}

    @property
    def identity(self) -> str:
        return self._inner.identity

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        missing = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if missing:
            for text, row in zip(missing, self._inner.embed_many(missing), strict=True):
                self._seen[text] = row
        return np.stack([self._seen[t] for t in texts]).astype(np.float32)


# trials -----------------------------------------------------------------------------------
def build_trials(
    convs: Sequence[Conversation], sizes: Sequence[int], seed: int, absent: Sequence[str]
) -> list[Trial]:
    rng = random.Random(seed)
    turns = {c.name: _turns(c) for c in convs}
    trials: list[Trial] = []
    asked = 0
    for size in sizes:
        for number in range(stores(size)):
            conv = convs[number % len(convs)]
            trial = _trial(rng, conv, turns, size, absent, asked)
            if trial is not None:
                trials.append(trial)
                asked += len(trial.absent)
    return trials


def _turns(conv: Conversation) -> dict[str, Turn]:
    return {
        str(t["dia_id"]): Turn(conv.name, str(t["dia_id"]), turn_text(t))
        for session in conv.sessions
        for t in session.turns
        if t.get("text")
    }


def _trial(
    rng: random.Random,
    conv: Conversation,
    turns: dict[str, dict[str, Turn]],
    size: int,
    absent: Sequence[str],
    asked: int,
) -> Trial | None:
    own = turns[conv.name]
    fitting = [
        q for q in conv.questions if len(q.evidence) <= size and all(d in own for d in q.evidence)
    ]
    if not fitting:
        return None
    seed_question = rng.choice(fitting)
    chosen = dict.fromkeys(seed_question.evidence)
    others = [d for d in own if d not in chosen]
    rng.shuffle(others)
    picked = [own[d] for d in chosen] + [own[d] for d in others[: size - len(chosen)]]
    if len(picked) < size:
        rest = [t for name, table in turns.items() if name != conv.name for t in table.values()]
        picked += rng.sample(rest, min(size - len(picked), len(rest)))
    held = {t.dia_id for t in picked if t.conversation == conv.name}
    answerable = [q for q in conv.questions if all(d in held for d in q.evidence)]
    rng.shuffle(answerable)
    ordered = [seed_question, *(q for q in answerable if q is not seed_question)]
    texts = tuple(
        absent[(asked + i) % len(absent)] for i in range(min(absent_per_store(size), len(absent)))
    )
    return Trial(size, conv.name, tuple(picked), tuple(ordered[:ANSWERABLE_PER_STORE]), texts)


# run --------------------------------------------------------------------------------------
def run_trial(mem: Cairn, trial: Trial, scope: str, *, features: bool) -> list[Outcome]:
    items = [{"content": t.text, "type": "fact", "scope": scope} for t in trial.turns]
    for done in mem.remember_many(items, dedup=False):
        if not done.ok:
            raise InvalidInput(f"the bench could not store a turn: {done.error}")
    outcomes = []
    asked = [(q.text, False) for q in trial.answerable] + [(t, True) for t in trial.absent]
    for text, is_absent in asked:
        answer = mem.recall(text, scope=scope, kind="memories")
        outcome = Outcome(trial.size, trial.conversation, is_absent, not answer.hits)
        if features:
            _record_features(mem, scope, text, outcome)
        outcomes.append(outcome)
    return outcomes


def _record_features(mem: Cairn, scope: str, text: str, outcome: Outcome) -> None:
    """What the gate reads of each candidate surviving the relative cut (signals left out:
    fresh memories of one age multiply alike)."""
    ctx = mem._ctx  # the bench reads the same candidates the product fused
    filt = MemoryFilter(scopes=visible_scopes(scope))
    phrasing = candidates(ctx, text, filt, ctx.clock())
    query = RecallQuery(text, filt, 8)
    lexical = max_normalise(phrasing.lexical.scores)
    by_keywords = sorted(lexical, key=lambda i: -lexical[i])[: rerank_pool(query.limit)]
    outcome.keyword_held = [
        sorted(phrasing.lexical.held(i)) for i in by_keywords if lexical[i] >= RECIPE.cut_ratio
    ]
    order = sorted(phrasing.fused, key=lambda i: -phrasing.score(i))[: rerank_pool(query.limit)]
    if not order:
        return
    floor = RECIPE.cut_ratio * phrasing.score(order[0])
    kept = [i for i in order if phrasing.score(i) >= floor or i == order[0]]
    vectors = ctx.store.get_vectors(kept, ctx.embedder.identity)
    query_vector = np.asarray(phrasing.vector, dtype=np.float32)
    terms = list(phrasing.lexical.idf)
    stats = ctx.store.lexical_stats(filt, terms)
    outcome.terms = {t: int(stats.document_frequency.get(t, 0)) for t in terms}
    outcome.doc_count = stats.doc_count
    for memory_id in kept:
        own = vectors.get(memory_id)
        outcome.candidates.append(
            {
                "cosine": float(own @ query_vector) if own is not None else 0.0,
                "held": sorted(phrasing.lexical.held(memory_id)),
            }
        )


def bench_abstention(
    data: Path,
    *,
    sizes: Sequence[int] = SIZES,
    seed: int = 13,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    conversations: Sequence[str] | None = None,
    absent: Sequence[str] = ABSENT,
    features: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], list[Outcome]]:
    """Run the bench; returns the summary and every outcome (with features when asked)."""
    if not sizes or any(s < 1 for s in sizes):
        raise InvalidInput("sizes must be positive store sizes, e.g. 1,5,10,20,49,200,1000.")
    convs = load_conversations(Path(data), conversations)
    base = settings or Settings.from_env()
    cached = _Cached(embedder or make_embedder(base))
    trials = build_trials(convs, sizes, seed, absent)
    texts = {t.text for trial in trials for t in trial.turns}
    asked = {q.text for trial in trials for q in trial.answerable} | set(absent)
    cached.embed_many(sorted(texts | asked))
    outcomes: list[Outcome] = []
    with scratch_cairn(base, cached, "cairn-abstention-") as mem:
        for number, trial in enumerate(trials):
            scope = f"project:abstention/{trial.size}-{number}"
            outcomes += run_trial(mem, trial, scope, features=features)
            if progress is not None and (number + 1) % 50 == 0:
                progress(f"{number + 1} of {len(trials)} stores")
        identity = mem.embedder.identity
    return summarise(outcomes, identity, [c.name for c in convs]), outcomes


def summarise(outcomes: Sequence[Outcome], identity: str, names: list[str]) -> dict[str, Any]:
    rows = []
    for size in sorted({o.size for o in outcomes}):
        at = [o for o in outcomes if o.size == size]
        absent = [o.empty for o in at if o.absent]
        answerable = [o.empty for o in at if not o.absent]
        rows.append(
            {
                "size": size,
                "absent": len(absent),
                "absent_empty": _share(absent),
                "answerable": len(answerable),
                "answerable_miss": _share(answerable),
            }
        )
    met = all(
        (r["absent_empty"] or 0) >= TARGET_ABSENT_EMPTY
        and (r["answerable_miss"] or 0) <= TARGET_ANSWERABLE_MISS
        for r in rows
    )
    return {"embedder": identity, "conversations": names, "sizes": rows, "targets_met": met}


def _share(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def render(result: dict[str, Any]) -> str:
    lines = [
        f"abstention by store size, embedder {result['embedder']}, "
        f"conversations {', '.join(result['conversations'])}",
        "",
        "| memories | absent-topic questions | get nothing | answerable questions "
        "| wrongly get nothing |",
        "|---|---|---|---|---|",
    ]
    for r in result["sizes"]:
        lines.append(
            f"| {r['size']} | {r['absent']} | {_pct(r['absent_empty'])} | {r['answerable']} | "
            f"{_pct(r['answerable_miss'])} |"
        )
    lines += ["", f"targets (>= 95 % / <= 2 % at every size) met: {result['targets_met']}"]
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"
