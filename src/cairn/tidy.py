"""tidy: proposals that keep a store healthy, each accepted or declined by a person.

Five kinds, all computed from what is stored now:

- `update` — a newer claim that looks like an update of an older one: remember stored it beside
  a near-duplicate carrying other values (a `may_update` link, cairn.updates), or two similar
  memories each hold a value the other lacks (`3.11` / `3.12`). Accepting makes the newer one
  the older one's next version (a correction: the older gets `until`, `replaced_by` and the
  status `replaced`; nothing is rewritten).
- `merge` — two memories of the same type saying nearly the same thing (embedding cosine and
  shared words both high, no opposite cue between them); the proposal carries the merged text
  (the richer memory plus the other's sentences it lacks). Accepting writes the merged text as
  a new version of the memory with more evidence and retires the other.
- `retire` — a memory whose citation is `gone` (file, symbol or commit missing). Accepting
  retires it.
- `contradiction` — two memories about the same subject (cosine and shared words) making
  opposite claims: one negates what the other asserts ("never"/"always", "not", "disable"/
  "enable", ...). Accepting keeps the newer claim and retires the older.
- `skill` — lessons that recur (similar lessons, or one restated again and again, three times
  in all) become a skill file: markdown under the repository, at `<skills_dir>/<name>/SKILL.md`
  (the `skills_dir` argument, else `CAIRN_SKILLS_DIR`, else `.claude/skills` so coding agents
  pick it up). Accepting writes the file.

A proposal is keyed by its kind and the memories in it, so a declined proposal is recognised
and never made again; an open one that no longer applies turns `stale`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cairn import history, updates
from cairn.code.citations import check
from cairn.code.records import Proposal, TidyDecision
from cairn.code.sourceref import normalise_path, resolved_inside
from cairn.context import Context
from cairn.errors import Conflict, InvalidInput, NotFound
from cairn.models import Memory, NewEvent
from cairn.ranking.lexical import STOPWORDS
from cairn.records.code import ProposalRow
from cairn.values import value_diff

DEFAULT_SKILLS_DIR = ".claude/skills"
MERGE_SIMILARITY = 0.75
CONTRADICTION_SIMILARITY = 0.5
SHARED_WORDS = 0.5  # Jaccard overlap of content words for "the same subject"
SKILL_SIMILARITY = 0.5
SKILL_RECURRENCE = 3
MAX_MEMORIES = 2000
# A store of near-identical templated memories makes every pair similar: 1000 of them gave
# 77k proposals and 28 s per background run. The closest pairs come first, each memory takes
# part in a few, and the run stops at a reviewable number; the rest come once these are settled.
MAX_PAIRS_PER_MEMORY = 3
MAX_PAIR_PROPOSALS = 200
SKILL_MARKER = "<!-- written by cairn tidy -->"

_WORD = re.compile(r"[a-z0-9_]+(?:'[a-z]+)?")
_NEGATIONS = frozenset(
    (
        "not", "no", "never", "don't", "doesn't", "isn't", "aren't", "wasn't", "won't",
        "can't", "cannot", "shouldn't", "mustn't", "didn't", "without", "avoid", "stop",
        "stopped", "neither", "nor", "nothing", "none", "nobody",
    )
)  # fmt: skip
_OPPOSITES = (
    ("enable", "disable"), ("enabled", "disabled"), ("always", "never"), ("allow", "forbid"),
    ("allowed", "forbidden"), ("true", "false"), ("use", "avoid"), ("add", "remove"),
    ("include", "exclude"), ("sync", "async"), ("required", "optional"), ("on", "off"),
    ("increase", "decrease"), ("accept", "reject"), ("works", "fails"), ("safe", "unsafe"),
    ("before", "after"), ("must", "mustn't"),
)  # fmt: skip
_CUES = _NEGATIONS | {w for pair in _OPPOSITES for w in pair}
_STOP = STOPWORDS - _NEGATIONS
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: str
    memory_ids: tuple[int, ...]
    payload: dict[str, Any]


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold().replace("’", "'"))


def _content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in _STOP and w not in _CUES}


def _overlap(a: str, b: str) -> float:
    left, right = _content_words(a), _content_words(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def opposed(a: str, b: str) -> bool:
    """True when a sentence of one text negates a sentence of the other about the same thing.

    Only sentence pairs sharing most of their content words are compared, so a sentence one
    text adds ("Without it two deploys can race.") is not read as a denial of the other.
    """
    left = [s for s in _SENTENCE.split(a) if s.strip()]
    right = [s for s in _SENTENCE.split(b) if s.strip()]
    return any(
        _overlap(x, y) >= SHARED_WORDS and _opposed_sentences(x, y) for x in left for y in right
    )


def _opposed_sentences(a: str, b: str) -> bool:
    left, right = words(a), words(b)
    if sum(w in _NEGATIONS for w in left) % 2 != sum(w in _NEGATIONS for w in right) % 2:
        return True
    lset, rset = set(left), set(right)
    return any(
        (x in lset and y in rset and y not in lset) or (y in lset and x in rset and x not in lset)
        for x, y in _OPPOSITES
    )


def merged_text(keep: str, other: str) -> str:
    """`keep` plus the sentences of `other` it does not already say."""
    known = [_content_words(s) for s in _SENTENCE.split(keep) if s.strip()]
    extra: list[str] = []
    for sentence in _SENTENCE.split(other):
        said = _content_words(sentence)
        if not sentence.strip() or not said:
            continue
        if any(len(said & k) / len(said) >= 0.8 for k in known):
            continue
        extra.append(sentence.strip())
        known.append(said)
    return keep.rstrip() if not extra else keep.rstrip() + "\n\n" + " ".join(extra)


# Proposing ------------------------------------------------------------------------------------
def propose(
    ctx: Context, scope: str, checkout: Path | None, skills_dir: str | None
) -> list[Proposal]:
    """Compute proposals for `scope`, record new ones, and return every open one."""
    folder = normalise_path(skills_dir or ctx.settings.skills_dir or DEFAULT_SKILLS_DIR)
    memories = ctx.store.current_memories([scope], statuses=("active",), limit=MAX_MEMORIES)
    candidates = [*_gone(ctx, scope, memories, checkout)]
    similar = _similarities(ctx, memories)
    links = updates.links_of(ctx.store, [m.id for m in memories])
    candidates += _updates(memories, similar, links)
    candidates += _pairs(memories, similar, links)
    root = checkout or _known_root(ctx, scope)
    if root is not None:
        candidates += _skills(memories, similar, root, folder)
    now, store = ctx.clock(), ctx.store
    live: set[int] = set()
    for candidate in candidates:
        key = f"{candidate.kind}:" + ",".join(str(i) for i in sorted(candidate.memory_ids))
        row = store.upsert_proposal(
            scope, candidate.kind, key, candidate.memory_ids, candidate.payload, now
        )
        live.add(row.id)
    for row in store.proposals(scope, ["open"]):
        if row.id not in live:
            store.set_proposal_status(row.id, "stale", None)
    return [as_proposal(row) for row in store.proposals(scope, ["open"])]


def _known_root(ctx: Context, scope: str) -> Path | None:
    for root in ctx.store.citation_roots(scope, 5):
        if Path(root).is_dir():
            return Path(root)
    return None


def _gone(
    ctx: Context, scope: str, memories: Sequence[Memory], checkout: Path | None
) -> list[_Candidate]:
    rows = ctx.store.get_citations([m.id for m in memories])
    out: list[_Candidate] = []
    for memory in memories:
        row = rows.get(memory.id)
        if row is None:
            continue
        verdict = check(row, checkout)
        if verdict.status == "gone":
            out.append(_Candidate("retire", (memory.id,), {
                "summary": f"retire {memory.ref}: its citation {memory.source_ref} is gone",
                "source_ref": memory.source_ref, "checked_in": verdict.checked_in,
            }))  # fmt: skip
    return out


def _similarities(ctx: Context, memories: Sequence[Memory]) -> np.ndarray:
    if len(memories) < 2:
        return np.zeros((len(memories), len(memories)), dtype=np.float32)
    vectors = ctx.store.get_vectors([m.id for m in memories], ctx.embedder.identity)
    dims = ctx.embedder.dimensions
    matrix = np.stack([vectors.get(m.id, np.zeros(dims, np.float32)) for m in memories])
    return np.asarray(matrix @ matrix.T, dtype=np.float32)


def _updates(
    memories: Sequence[Memory], similar: np.ndarray, links: updates.Links
) -> list[_Candidate]:
    """Claims remember stored beside an older near-duplicate with other values."""
    index = {m.id: i for i, m in enumerate(memories)}
    out: list[_Candidate] = []
    for newer_id, older_ids in sorted(links.older.items()):
        for older_id in older_ids:
            if newer_id in index and older_id in index:
                i, j = index[older_id], index[newer_id]
                out.append(_update(memories[i], memories[j], float(similar[i, j])))
    return out


def _update(older: Memory, newer: Memory, cosine: float) -> _Candidate:
    changed = value_diff(older.content, newer.content).describe() or "other wording"
    return _Candidate("update", (older.id, newer.id), {
        "summary": f"{newer.ref} looks like an update of {older.ref} ({changed}); accept to "
                   f"make {newer.ref} replace {older.ref}",
        "keep": newer.ref, "replace": older.ref, "changed": changed,
        "similarity": round(cosine, 4),
    })  # fmt: skip


def _pairs(
    memories: Sequence[Memory], similar: np.ndarray, links: updates.Links
) -> list[_Candidate]:
    out: list[_Candidate] = []
    taken: dict[int, int] = {}
    for i, j in _closest_pairs(similar):
        if len(out) >= MAX_PAIR_PROPOSALS:
            break
        a, b = memories[i], memories[j]
        if max(taken.get(a.id, 0), taken.get(b.id, 0)) >= MAX_PAIRS_PER_MEMORY:
            continue
        cosine = float(similar[i, j])
        if b.id in links.partners(a.id) or _overlap(a.content, b.content) < SHARED_WORDS:
            continue  # a linked pair is already proposed as an update
        if opposed(a.content, b.content):
            newer, older = (a, b) if a.id > b.id else (b, a)
            out.append(_take(taken, _Candidate("contradiction", (older.id, newer.id), {
                "summary": f"{older.ref} and {newer.ref} contradict; keep the newer "
                           f"{newer.ref} and retire {older.ref}",
                "keep": newer.ref, "retire": older.ref, "similarity": round(cosine, 4),
            })))  # fmt: skip
        elif cosine >= MERGE_SIMILARITY and value_diff(a.content, b.content).substituted:
            # One value where the other has another: merging would keep only one of them.
            older, newer = (a, b) if a.id < b.id else (b, a)
            out.append(_take(taken, _update(older, newer, cosine)))
        elif cosine >= MERGE_SIMILARITY and a.type == b.type:
            keep, drop = sorted((a, b), key=_strength, reverse=True)
            out.append(_take(taken, _Candidate("merge", (keep.id, drop.id), {
                "summary": f"merge {drop.ref} into {keep.ref} (near-duplicates)",
                "keep": keep.ref, "retire": drop.ref, "similarity": round(cosine, 4),
                "merged_text": merged_text(keep.content, drop.content),
            })))  # fmt: skip
    return out


def _closest_pairs(similar: np.ndarray) -> list[tuple[int, int]]:
    """Index pairs at least `CONTRADICTION_SIMILARITY` alike, the most alike first."""
    rows, cols = np.nonzero(np.triu(similar, k=1) >= CONTRADICTION_SIMILARITY)
    order = np.argsort(-similar[rows, cols], kind="stable")
    return [(int(rows[k]), int(cols[k])) for k in order]


def _take(taken: dict[int, int], candidate: _Candidate) -> _Candidate:
    for memory_id in candidate.memory_ids:
        taken[memory_id] = taken.get(memory_id, 0) + 1
    return candidate


def _strength(memory: Memory) -> tuple[int, int, int]:
    return (memory.confirmed + memory.cited, len(memory.content), -memory.id)


def _skills(
    memories: Sequence[Memory], similar: np.ndarray, root: Path, folder: str
) -> list[_Candidate]:
    lessons = [i for i, m in enumerate(memories) if m.type == "lesson"]
    parent = {i: i for i in lessons}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for x in lessons:
        for y in lessons:
            if x < y and similar[x, y] >= SKILL_SIMILARITY:
                parent[find(x)] = find(y)
    groups: dict[int, list[Memory]] = {}
    for i in lessons:
        groups.setdefault(find(i), []).append(memories[i])
    out: list[_Candidate] = []
    for group in groups.values():
        if sum(_recurrence(m) for m in group) < SKILL_RECURRENCE:
            continue
        group.sort(key=lambda m: m.id)
        name = skill_name(group)
        path = f"{folder}/{name}/SKILL.md"
        out.append(_Candidate("skill", tuple(m.id for m in group), {
            "summary": f"turn {len(group)} recurring lesson(s) into the skill file {path}",
            "path": path, "root": str(root), "name": name,
        }))  # fmt: skip
    return out


def _recurrence(memory: Memory) -> int:
    clients = memory.evidence.get("clients", {})
    restated = sum(int(t.get("restated", 0)) for t in clients.values() if isinstance(t, dict))
    return 1 + restated


def skill_name(lessons: Sequence[Memory]) -> str:
    counts: dict[str, int] = {}
    for memory in lessons:
        for word in set(_content_words(memory.content)) | set(memory.tags):
            if len(word) > 2 and not word.isdigit():
                counts[word] = counts.get(word, 0) + 1
    top = sorted(counts, key=lambda w: (-counts[w], w))[:3]
    slug = re.sub(r"[^a-z0-9]+", "-", "-".join(top).lower()).strip("-")
    return slug or "lessons"


def skill_text(name: str, lessons: Sequence[Memory]) -> str:
    title = name.replace("-", " ").capitalize()
    refs = ", ".join(m.ref for m in lessons)
    lines = [
        "---",
        f"name: {name}",
        f"description: Lessons learned about {name.replace('-', ' ')} in this project "
        f"(collected by cairn from {len(lessons)} recurring lessons).",
        "---",
        SKILL_MARKER,
        f"# {title}",
        "",
        f"Lessons this project learned more than once ({refs}). Read before working on it.",
        "",
    ]
    for memory in lessons:
        body = " ".join(memory.content.split())
        lines.append(f"- {body} ({memory.ref})")
    return "\n".join(lines) + "\n"


def as_proposal(row: ProposalRow) -> Proposal:
    detail = {k: v for k, v in row.payload.items() if k != "summary"}
    return Proposal(
        row.ref, row.kind, tuple(f"mem_{i}" for i in row.memory_ids),
        str(row.payload.get("summary", row.kind)), row.status, detail,
    )  # fmt: skip


# Deciding -------------------------------------------------------------------------------------
def load(ctx: Context, proposal_id: int, scope: str) -> ProposalRow:
    row = ctx.store.get_proposal(proposal_id)
    if row is None or row.scope != scope:
        raise NotFound(
            f"tidy_{proposal_id} names no proposal in scope {scope}; run tidy to list them."
        )
    if row.status != "open":
        raise Conflict(f"{row.ref} is {row.status}; only open proposals can be decided.")
    return row


def decline(ctx: Context, proposal_id: int, scope: str) -> TidyDecision:
    row = load(ctx, proposal_id, scope)
    now = ctx.clock()
    with ctx.store.transaction():
        ctx.store.set_proposal_status(row.id, "declined", now)
        _event(ctx, row, "declined")
    return TidyDecision(row.ref, row.kind, "declined")


def accept(ctx: Context, proposal_id: int, scope: str) -> TidyDecision:
    row = load(ctx, proposal_id, scope)
    memories = {m.id: m for m in ctx.store.get_memories(list(row.memory_ids))}
    stale = [f"mem_{i}" for i in row.memory_ids if not _current(memories.get(i))]
    if stale:
        ctx.store.set_proposal_status(row.id, "stale", None)
        raise Conflict(
            f"{row.ref} is stale: {', '.join(stale)} changed since it was proposed; run tidy "
            "again for fresh proposals."
        )
    changed, path = _apply(ctx, row, memories, scope)
    with ctx.store.transaction():
        ctx.store.set_proposal_status(row.id, "accepted", ctx.clock())
        _event(ctx, row, "accepted")
    return TidyDecision(row.ref, row.kind, "accepted", tuple(changed), path)


def _current(memory: Memory | None) -> bool:
    return memory is not None and memory.until is None and memory.status == "active"


def _apply(
    ctx: Context, row: ProposalRow, memories: dict[int, Memory], scope: str
) -> tuple[list[str], str | None]:
    payload = row.payload
    if row.kind == "retire":
        memory = memories[row.memory_ids[0]]
        reason = f"tidy {row.ref}: its citation {memory.source_ref} is gone"
        history.forget(ctx, memory.ref, reason, scope)
        return [memory.ref], None
    if row.kind == "contradiction":
        history.forget(ctx, str(payload["retire"]), f"tidy {row.ref}: contradicted by "
                       f"{payload['keep']}", scope)  # fmt: skip
        return [str(payload["retire"])], None
    if row.kind == "update":
        reason = f"tidy {row.ref}: updated by {payload['keep']}"
        history.supersede(ctx, str(payload["replace"]), str(payload["keep"]), reason, scope)
        return [str(payload["replace"])], None
    if row.kind == "merge":
        new = history.correct(ctx, str(payload["keep"]), str(payload["merged_text"]),
                              f"tidy {row.ref}: merged {payload['retire']}", scope)  # fmt: skip
        history.forget(ctx, str(payload["retire"]), f"tidy {row.ref}: merged into "
                       f"{new.memory_id}", scope)  # fmt: skip
        return [new.memory_id, str(payload["retire"])], None
    return [], _write_skill(row, [memories[i] for i in row.memory_ids])


def _write_skill(row: ProposalRow, lessons: Sequence[Memory]) -> str:
    root = Path(str(row.payload["root"]))
    relative = normalise_path(str(row.payload["path"]))
    target = root.joinpath(*relative.split("/"))
    if not root.is_dir():
        raise InvalidInput(f"the repository folder {root} is gone; run tidy again from a checkout.")
    # A folder of the checkout may be a link out of it (a hostile repository's `.claude`):
    # the skill is written only where the path really leads inside the checkout.
    if resolved_inside(root, relative) is None:
        raise InvalidInput(
            f"{relative} leads out of the repository {root} through a link; cairn writes "
            "skill files inside the checkout only: pass another skills_dir, then run tidy again."
        )
    if target.exists():
        existing = target.read_text(encoding="utf-8", errors="replace")
        if SKILL_MARKER not in existing:
            raise Conflict(
                f"{target} exists and was not written by cairn; move it or pass another "
                "skills_dir, then run tidy again."
            )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(skill_text(str(row.payload["name"]), lessons), encoding="utf-8")
    return str(target)


def _event(ctx: Context, row: ProposalRow, status: str) -> None:
    ctx.store.add_event(
        NewEvent("tidy", row.scope, None, ctx.clock(), ctx.integration, None,
                 {"proposal": row.ref, "kind": row.kind, "status": status,
                  "refs": [f"mem_{i}" for i in row.memory_ids]})
    )  # fmt: skip
