"""`cairn bench locomo`: evidence recall on LoCoMo through the product's own API.

LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024) gives long
two-person conversations in dated sessions, and questions whose answers are supported by
`evidence` turns (dia_ids such as `D3:7`). The bench stores a conversation with `remember`
exactly as an agent would and asks every question with `recall`; nothing in the ranking knows
it is being benchmarked.

- Each conversation gets its own scope (`project:locomo/<conversation>`), in a fresh store.
- `turns` mode: one memory per dialog turn, `"<speaker>: <text>"` plus `[image: <caption>]`
  when a picture was shared, `source_ref="locomo://<conversation>/<dia_id>"`, `occurred_at`
  the session's date. Each LoCoMo session is one cairn session (`activate` ... `end`), so
  turns get their session neighbours. Deduplication is off: "Thanks!" said twice is two turns.
- `observations` mode: one memory per observation fact, with the dia_ids it points to in its
  `source_ref` (`locomo://<conversation>/D1:3,D1:5`), grouped in sessions the same way.
- Every question of categories 1-4 (multi-hop, temporal, open-domain, single-hop) with evidence
  is asked with `cut=False`, `limit=20`, `kind="memories"`. R@k is the share of its evidence
  dia_ids found among the top k memories' dia_ids.
- The other questions (category 5, adversarial: its evidence is what the question twists;
  and any without evidence) are then asked the same way by the cairn ranking alone, for the
  labelled groups of `cairn.bench.locomo_report` (session-level recall_any/recall_all, nDCG@10,
  R@k with and without category 5, the ceiling) and the figures scored as peers score theirs
  (`cairn.bench.locomo_published`). They never enter the figures above, nor the latency.
- `data` is a folder of per-conversation files (`26.json`), LoCoMo's own `locomo10.json`, or
  a folder holding it (`cairn.bench.locomo_data`).
- In the same run the lexical-only (BM25F) and dense-only (window cosine) orders of the same
  candidates, and `query` (own-vector cosine alone), are scored for comparison.
- Abstention: every question again with the default cut (`limit=8`): the share of answerable
  questions wrongly left empty, and, for `ABSENT` - questions about things no conversation
  mentions - the share correctly left empty.

Latency is the wall time of each `recall` call, query embedding included.

A recall counts an access on what it returns; access only offsets decay (it never lifts a
memory past its weight, `cairn.ranking.signals.strength`), so earlier questions cannot bias
later ones and the bench asks them in order with no reset.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.bench.locomo_data import CATEGORIES as CATEGORIES
from cairn.bench.locomo_data import Conversation as Conversation
from cairn.bench.locomo_data import Question as Question
from cairn.bench.locomo_data import Session as Session
from cairn.bench.locomo_data import evidence_ids as evidence_ids
from cairn.bench.locomo_data import load_conversations as load_conversations
from cairn.bench.locomo_data import parse_session_date as parse_session_date
from cairn.bench.locomo_published import published, render_published
from cairn.bench.locomo_questions import write_per_question
from cairn.bench.locomo_report import KS, Asked, ceiling, render_groups
from cairn.bench.locomo_report import groups as labelled_groups
from cairn.config import Settings
from cairn.core import Cairn
from cairn.embeddings import make_embedder
from cairn.embeddings.base import Embedder
from cairn.errors import InvalidInput
from cairn.exchange import require_empty
from cairn.models import RecallResult
from cairn.ranking.fusion import ranked
from cairn.ranking.recall import candidates
from cairn.scope import visible_scopes
from cairn.store.base import MemoryFilter
from cairn.timeutil import Clock, system_clock

MODES = ("turns", "observations")
RANKINGS = ("cairn", "lexical", "dense", "query")

# Generic questions about things a casual two-person conversation does not mention: the
# abstention check asks each of them in every conversation.
ABSENT = (
    "What is the capital of Peru?",
    "How do I configure Kubernetes ingress?",
    "What is the boiling point of mercury?",
    "How do I rebase a git branch onto main?",
    "Which port does PostgreSQL listen on by default?",
    "What is the time complexity of quicksort?",
    "How do I set up a Python virtual environment?",
    "Who wrote the Treaty of Westphalia?",
    "What is the population of Mongolia?",
    "How does TCP congestion control work?",
    "What is the exchange rate between the yen and the euro?",
    "How do I fix a segmentation fault in C?",
    "What causes the northern lights?",
    "How many moons does Jupiter have?",
    "What is the syntax for a SQL left join?",
    "How do I rotate TLS certificates in nginx?",
    "What is the half-life of carbon-14?",
    "Which compiler flags enable link-time optimisation?",
    "How do I migrate a Django database schema?",
    "What is the tallest mountain in Africa?",
    "How do vaccines trigger an immune response?",
    "What does the HTTP 418 status code mean?",
    "How do I write a Rust lifetime annotation?",
    "What is the GDP of Norway?",
    "How do I mount an NFS share on Linux?",
    "What is the chemical formula of sulfuric acid?",
    "How are mortgage interest rates calculated?",
    "Which version of OpenSSL fixed Heartbleed?",
    "How do I tune the JVM garbage collector?",
    "What is the speed of sound in water?",
    "How do I debounce an input in React?",
    "What is the difference between TCP and UDP?",
    "Who discovered penicillin?",
    "How do I resolve a merge conflict in a lockfile?",
    "What is the orbital period of Mars?",
    "How does a B-tree index speed up queries?",
    "What are the tax brackets in Germany?",
    "How do I configure a Terraform S3 backend?",
    "What is the melting point of tungsten?",
    "How do I profile memory usage in Go?",
    "Which enzyme breaks down lactose?",
    "How do I set CORS headers in Express?",
    "What is the official language of Mozambique?",
    "How does RAFT leader election work?",
    "What is the wingspan of a Boeing 747?",
    "How do I pin a dependency version in Cargo?",
    "What does the kernel OOM killer do?",
    "How do I deploy a Lambda function with SAM?",
    "What year did the Byzantine Empire fall?",
    "How do I enable WAL mode in SQLite?",
)


@dataclass
class _Tally:
    """Recall@k per ranking and category, latencies and abstention counts of a run."""

    recall: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    answerable_empty: list[bool] = field(default_factory=list)
    absent_empty: list[bool] = field(default_factory=list)
    memories: int = 0
    ingest_seconds: float = 0.0

    def add(self, ranking: str, category: int, values: list[float]) -> None:
        groups = self.recall.setdefault(ranking, {})
        groups.setdefault("all", []).append(values)
        groups.setdefault(CATEGORIES[category], []).append(values)


# ingest -----------------------------------------------------------------------------------
def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [image: {caption}]" if caption else text


def _items(conv: Conversation, session: Session, mode: str) -> list[dict[str, Any]]:
    when = session.occurred_at
    pairs: list[tuple[str, tuple[str, ...]]]
    if mode == "turns":
        pairs = [(turn_text(t), (str(t["dia_id"]),)) for t in session.turns if t.get("text")]
    else:
        pairs = [(fact, ids) for fact, ids in session.observations if ids]
    return [
        {
            "content": content,
            "type": "fact",
            "source_ref": f"locomo://{conv.name}/{','.join(ids)}",
            **({"occurred_at": when} if when is not None else {}),
        }
        for content, ids in pairs
    ]


@contextmanager
def scratch_cairn(
    settings: Settings,
    embedder: Embedder,
    prefix: str,
    *,
    store: str | None = None,
    clock: Clock = system_clock,
) -> Iterator[Cairn]:
    """A Cairn at home in a temporary folder, its store a file there unless `store` names one,
    so a bench never writes to the user's home."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        local = settings.with_overrides(home=Path(tmp))
        location = store or Path(tmp) / "bench.db"
        with Cairn.open(location, settings=local, embedder=embedder, clock=clock) as mem:
            yield mem


@dataclass(frozen=True, slots=True)
class LocomoSource:
    """What a LoCoMo run asks, the same for `cairn bench locomo` and `locomo-fit`: the data,
    how a conversation is stored (`mode`), which conversations (all when None), and at most
    how many questions of each (all when None)."""

    data: Path
    mode: str = "turns"
    conversations: Sequence[str] | None = None
    max_questions: int | None = None

    def load(self) -> list[Conversation]:
        """The conversations a run asks, once `mode` is known to be one `ingest` stores by."""
        if self.mode not in MODES:
            raise InvalidInput(f"mode {self.mode!r} is not one of {', '.join(MODES)}.")
        return load_conversations(Path(self.data), self.conversations)


def ingest(mem: Cairn, conv: Conversation, scope: str, mode: str) -> dict[str, tuple[str, ...]]:
    """Store the conversation; returns each memory ref's dia_ids."""
    refs: dict[str, tuple[str, ...]] = {}
    for session in conv.sessions:
        items = _items(conv, session, mode)
        if not items:
            continue
        opened = mem.activate(
            f"LoCoMo conversation {conv.name}, session {session.number}", scope=scope
        )
        for item in items:
            item["session_id"] = opened.session_id
        for done, item in zip(mem.remember_many(items, dedup=False), items, strict=True):
            if done.ok and done.data is not None:
                refs[done.data.memory_id] = tuple(str(item["source_ref"]).split("/")[-1].split(","))
        mem.end(opened.session_id)
    return refs


# questions --------------------------------------------------------------------------------
def _recall_at(found: Sequence[tuple[str, ...]], evidence: Sequence[str]) -> list[float]:
    wanted = set(evidence)
    out = []
    for k in KS:
        seen = {d for ids in found[:k] for d in ids}
        out.append(len(wanted & seen) / len(wanted))
    return out


@dataclass(frozen=True, slots=True)
class _Stored:
    """A conversation as stored: its scope, each memory ref's dia_ids, and all those ids."""

    name: str
    scope: str
    refs: dict[str, tuple[str, ...]]
    ids: frozenset[str]


def _asked(stored: _Stored, q: Question, answer: RecallResult) -> Asked:
    top = answer.hits[: max(KS)]
    return Asked(
        conversation=stored.name,
        index=q.index,
        category=q.category,
        question=q.text,
        evidence=q.evidence,
        listed=q.listed,
        found=tuple(stored.refs.get(h.ref, ()) for h in top),
        scores=tuple(h.score for h in top),
        stored=tuple(d for d in q.evidence if d in stored.ids),
    )


def _ask_other(mem: Cairn, stored: _Stored, q: Question) -> Asked:
    """A question outside the bench's own figures: the cairn ranking only, untimed."""
    answer = mem.recall(q.text, scope=stored.scope, limit=max(KS), cut=False, kind="memories")
    return _asked(stored, q, answer)


def _ask(mem: Cairn, stored: _Stored, q: Question, tally: _Tally) -> Asked:
    scope, refs = stored.scope, stored.refs

    def dia(ref_list: Sequence[str]) -> list[tuple[str, ...]]:
        return [refs.get(r, ()) for r in ref_list]

    start = time.perf_counter()
    answer = mem.recall(q.text, scope=scope, limit=max(KS), cut=False, kind="memories")
    tally.latencies.append(time.perf_counter() - start)
    tally.add("cairn", q.category, _recall_at(dia(answer.refs), q.evidence))
    ctx = mem._ctx  # the bench reads the same candidates the product fused
    phrasing = candidates(ctx, q.text, MemoryFilter(scopes=visible_scopes(scope)), ctx.clock())
    for name, scores in (("lexical", phrasing.lexical.scores), ("dense", phrasing.dense)):
        order = [f"mem_{i}" for i, _ in ranked(scores)[: max(KS)]]
        tally.add(name, q.category, _recall_at(dia(order), q.evidence))
    nearest = mem.query(q.text, scope=scope, limit=max(KS))
    tally.add("query", q.category, _recall_at(dia([h.ref for h in nearest]), q.evidence))
    cut = mem.recall(q.text, scope=scope, kind="memories")
    tally.answerable_empty.append(not cut.hits)
    return _asked(stored, q, answer)


# run --------------------------------------------------------------------------------------
def bench_locomo(
    source: LocomoSource,
    *,
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    absent: Sequence[str] = ABSENT,
    progress: Callable[[str], None] | None = None,
    store: str | None = None,
    per_question: Path | None = None,
    clock: Clock = system_clock,
) -> dict[str, Any]:
    """Run the bench; `embedder` defaults to the settings' (the local model). `store` (a path
    or `postgresql://` URL of an empty store) runs it there instead of a temporary file.
    `per_question` names a file to write one JSON line per question to."""
    convs = source.load()
    tally, rows = _Tally(), list[Asked]()
    base = settings or Settings.from_env()
    # The embedder comes from the real home, so its model cache is the user's (a temporary home
    # would export the model again on every run), and is warmed before ingest is timed.
    embedder = embedder or make_embedder(base)
    embedder.embed_many(["warm up"])
    with scratch_cairn(base, embedder, "cairn-locomo-", store=store, clock=clock) as mem:
        require_empty(mem.store, "the LoCoMo bench", "point --store")
        for conv in convs:
            stored = _run_conversation(mem, conv, source, tally, rows, absent)
            if progress is not None:
                progress(f"conversation {conv.name}: {len(stored.refs)} memories")
        identity = mem.embedder.identity
        backend = mem.store.backend
    if per_question is not None:
        write_per_question(rows, per_question)
    result = _summary(tally, source.mode, identity, [c.name for c in convs])
    return {
        **result,
        "backend": backend,
        "ceiling": ceiling([r for r in rows if r.category in CATEGORIES and r.evidence]),
        "metrics": labelled_groups(rows),
        "published": published(rows),
    }


def _run_conversation(
    mem: Cairn,
    conv: Conversation,
    source: LocomoSource,
    tally: _Tally,
    rows: list[Asked],
    absent: Sequence[str],
) -> _Stored:
    """Store one conversation and ask its questions: the bench's own, the absent-topic ones,
    then the others (last, so the accesses their recalls count cannot move the figures)."""
    scope = f"project:locomo/{conv.name}"
    start = time.perf_counter()
    refs = ingest(mem, conv, scope, source.mode)
    tally.ingest_seconds += time.perf_counter() - start
    tally.memories += len(refs)
    stored = _Stored(conv.name, scope, refs, frozenset(d for ids in refs.values() for d in ids))
    rows.extend(_ask(mem, stored, q, tally) for q in conv.questions[: source.max_questions])
    for text in absent:
        answer = mem.recall(text, scope=scope, kind="memories")
        tally.absent_empty.append(not answer.hits)
    rows.extend(_ask_other(mem, stored, q) for q in conv.others[: source.max_questions])
    return stored


def _summary(tally: _Tally, mode: str, identity: str, names: list[str]) -> dict[str, Any]:
    def mean_at(rows: list[list[float]]) -> dict[str, float]:
        return {f"R@{k}": round(statistics.fmean(r[i] for r in rows), 4) for i, k in enumerate(KS)}

    latencies = sorted(tally.latencies)
    return {
        "mode": mode,
        "embedder": identity,
        "conversations": names,
        "memories": tally.memories,
        "questions": len(tally.recall.get("cairn", {}).get("all", [])),
        "ingest_memories_per_second": round(tally.memories / max(tally.ingest_seconds, 1e-9), 1),
        "recall_ms": {
            "median": round(1000 * statistics.median(latencies), 2) if latencies else None,
            "p95": round(1000 * latencies[int(0.95 * (len(latencies) - 1))], 2)
            if latencies
            else None,
        },
        "recall": {
            ranking: {group: mean_at(rows) for group, rows in groups.items()}
            for ranking, groups in tally.recall.items()
        },
        "abstention": {
            "absent_questions": len(tally.absent_empty),
            "absent_empty": _share(tally.absent_empty),
            "answerable_empty": _share(tally.answerable_empty),
        },
    }


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def render(result: dict[str, Any]) -> str:
    """The run as Markdown tables (what docs/benchmarks.md shows)."""
    lines = [
        f"LoCoMo {result['mode']} mode, {len(result['conversations'])} conversations, "
        f"{result['memories']} memories, {result['questions']} questions, "
        f"embedder {result['embedder']}, {result.get('backend', 'sqlite')} store",
        "",
        "| ranking | group | R@1 | R@5 | R@10 | R@20 |",
        "|---|---|---|---|---|---|",
    ]
    for ranking, groups in result["recall"].items():
        for group in ("all", *CATEGORIES.values()):
            if group in groups:
                r = groups[group]
                lines.append(
                    f"| {ranking} | {group} | {r['R@1']:.3f} | {r['R@5']:.3f} | "
                    f"{r['R@10']:.3f} | {r['R@20']:.3f} |"
                )
    ab, ms = result["abstention"], result["recall_ms"]
    lines += [
        "",
        f"ingest: {result['ingest_memories_per_second']} memories/s; recall latency median "
        f"{ms['median']} ms, p95 {ms['p95']} ms",
        f"abstention: {ab['absent_empty']} of {ab['absent_questions']} absent-topic questions "
        f"get nothing; {ab['answerable_empty']} of answerable questions wrongly get nothing",
    ]
    top = result.get("ceiling") or {}
    if top.get("evidence_turns_stored") is not None:
        lines.append(
            f"ceiling ({result['mode']}): {top['evidence_turns_stored']:.3f} of the evidence turns "
            f"have a stored memory pointing to them; the best R@k any ranking could reach is "
            f"{top['best_recall']:.3f} (R@10 here "
            f"{result['recall']['cairn']['all']['R@10']:.3f})"
        )
    lines += render_groups(result)
    lines += render_published(result.get("published") or {})
    return "\n".join(lines)
