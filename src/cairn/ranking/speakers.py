"""Speaker-aware ranking: a question about someone prefers what that someone said.

Transcripts, meeting notes and chat logs are stored one utterance per memory, written as
`"<speaker>: <text>"` ("Caroline: I went to the support group", "alice: we roll back on
Fridays"). A question that names one of the speakers ("What did Caroline paint?") is nearly
always answered by that speaker's own words: on the five LoCoMo conversations 96 % of the
evidence turns of a question naming one speaker are that speaker's. Keywords and the embedding
both miss this: the name is one low-idf word among many, and the other speaker's replies sit in
the same session windows. So when the query names exactly one of the speakers among the
candidates, memories attributed to another speaker are multiplied by `other_speaker`
(`FusionRecipe.other_speaker`, chosen by leave-one-conversation-out: `cairn bench locomo-fit`).

Memories without a speaker prefix (most project memories) are never touched, and neither is
anything when the query names no speaker or several ("What do Jon and Gina have in common?").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from cairn.ranking.lexical import tokenize

# A name of one to three words, then a colon and a space, at the very start. The space keeps
# "https://..." and "10:30" out; the word count keeps a sentence with a colon in it out.
_PREFIX = re.compile(r"^\s*([^\W\d_][\w'’.-]*(?: [^\W\d_][\w'’.-]*){0,2}):\s")
_MAX_PREFIX = 60


def speaker_of(content: str) -> str | None:
    """The folded name a memory is attributed to ("caroline"), or None without a prefix."""
    match = _PREFIX.match(content[:_MAX_PREFIX])
    if match is None:
        return None
    name = " ".join(tokenize(match.group(1)))
    return name or None


def named_speaker(query: str, speakers: Iterable[str]) -> str | None:
    """The one speaker whose every word the query holds; None for none or several."""
    words = set(tokenize(query))
    named = {name for name in speakers if set(name.split()) <= words}
    return named.pop() if len(named) == 1 else None


def speaker_factors(
    query: str, contents: Mapping[int, str], other_speaker: float
) -> dict[int, float]:
    """The multiplier of each memory: `other_speaker` for a memory whose speaker is not the one
    the query names, 1 otherwise (and for every memory when the query names no one speaker)."""
    speakers = {memory_id: speaker_of(text) for memory_id, text in contents.items()}
    named = named_speaker(query, {name for name in speakers.values() if name})
    if named is None or other_speaker == 1.0:
        return dict.fromkeys(contents, 1.0)
    return {
        memory_id: other_speaker if name is not None and name != named else 1.0
        for memory_id, name in speakers.items()
    }
