"""Breadth for questions that ask for many things: one session may not fill the answer.

"What books has Tim read?", "Which events has Jon taken part in?", "What pets does Nate have?"
ask for a list whose items were mentioned at different times. The ranking reads a memory with
its session neighbours (cairn.neighbours), so the best session's turns all score alike and a
run of them fills the top ten while the other items, each said in another session, wait below.
On the five LoCoMo conversations, 82 of the 142 multi-hop questions are of this kind and their
evidence spans 2-9 sessions.

So when the query asks for many things (`asks_for_many`), each memory can be multiplied by
`decay ** n`, `n` the number of better-ranked memories of its own session
(`FusionRecipe.session_decay`). It is a soft penalty, not a cap: a session that really holds
most of the answer keeps it. Applied to every query it lost (R@10 0.813 to 0.790 at x0.93): a
question about one thing is usually answered by the best hit's neighbours. Memories without a
session are never touched.

It is off in `RECIPE` (decay 1): with the shipped constants it lifted multi-hop R@10 from 0.517
to 0.551 (all 0.813 to 0.818), but chosen by leave-one-conversation-out (`cairn bench
locomo-fit`, where it is one axis of the grid) the held-out total fell from 0.816 to 0.812, so
the gain does not carry over from four conversations to the fifth. The grid keeps it, so a
larger set of conversations can decide again.

The test is on the question's form only, in English: a question word (what, which, where,
how many) then a plural noun then an auxiliary (has, have, had, does, do, did) - "What
activities does Melanie partake in?". Words ending in "s" that are not plural nouns
(does, has, was, his, this, always, ...) do not count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_QUESTION = re.compile(r"^\s*(?:what|which|where|how\s+many)\b", re.IGNORECASE)
_AUXILIARY = frozenset({"has", "have", "had", "does", "do", "did"})
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# Words ending in "s" that are not plurals, among those a question is likely to hold.
_NOT_PLURAL = frozenset(
    {
        "does", "has", "was", "is", "his", "hers", "its", "this", "thus", "us", "yes", "always",
        "perhaps", "sometimes", "besides", "across", "towards", "afterwards", "unless", "less",
        "whereas", "nowadays", "various", "previous", "famous", "serious", "nervous", "anxious",
        "religious", "curious", "news", "plus", "bus", "gas", "ps",
    }
)  # fmt: skip


def _plural(word: str) -> bool:
    return (
        len(word) >= 4
        and word.endswith("s")
        and not word.endswith(("ss", "us", "'s"))
        and word not in _NOT_PLURAL
    )


def asks_for_many(query: str) -> bool:
    """Whether the question asks for a list: question word, plural noun, then an auxiliary."""
    if not _QUESTION.match(query):
        return False
    words = _WORD.findall(query.lower())
    seen_plural = False
    for word in words[1:]:
        if seen_plural and word in _AUXILIARY:
            return True
        seen_plural = seen_plural or _plural(word)
    return False


def session_spread(order: Sequence[tuple[int, str | None]], decay: float) -> dict[int, float]:
    """Each memory's multiplier, `decay ** n` with `n` the better-ranked memories of its session.

    `order` is (memory id, session id) best first; a memory without a session gets 1.
    """
    seen: dict[str, int] = {}
    factors: dict[int, float] = {}
    for memory_id, session in order:
        if session is None or decay == 1.0:
            factors[memory_id] = 1.0
            continue
        earlier = seen.get(session, 0)
        factors[memory_id] = decay**earlier
        seen[session] = earlier + 1
    return factors
