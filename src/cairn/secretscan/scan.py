"""Finding secrets in a text, replacing them with a marker, and describing a bad value without
repeating it.

Every rule runs on the text as the reader sees it (`normalise.visible`); the rules then run on
the text with wrapped lines joined, keeping only what spans a join; last, each base64 run that
decodes to text is scanned once more. The first claim on a stretch of text wins, so one secret
is reported once. Positions are always those of the original text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cairn.secretscan.assigned import ASSIGNMENT_RULES
from cairn.secretscan.base import Rule, matches
from cairn.secretscan.commands import CONTEXT_RULES, FALLBACK_RULES
from cairn.secretscan.normalise import base64_runs, joined, visible
from cairn.secretscan.shapes import SHAPES

RULES: tuple[Rule, ...] = (*SHAPES, *CONTEXT_RULES, *ASSIGNMENT_RULES, *FALLBACK_RULES)
BASE64_PREFIX = "base64-encoded "
# Every kind a finding can name (the base64 pass prefixes one of the others).
KINDS: frozenset[str] = frozenset(rule.kind for rule in RULES)
ECHO_LIMIT = 80

Span = tuple[int, int, str]


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """Where something that looks like a secret is (1-based line and column; `start` and `end`
    are character offsets). Only where and what kind: never the text itself.

    For an assignment that is where its name starts; for a URL, where the URL starts.
    """

    kind: str
    line: int
    column: int
    start: int = 0
    end: int = 0

    @property
    def slug(self) -> str:
        return kind_slug(self.kind)


def with_article(kind: str) -> str:
    """`a GitHub token`, `an AWS access key id`, `an npm token`."""
    return f"{'an' if kind[:1].lower() in 'aeion' else 'a'} {kind}"


def kind_slug(kind: str) -> str:
    """`GitHub token` -> `github_token`: the name a redaction marker gives."""
    return re.sub(r"[^a-z0-9]+", "_", kind.lower()).strip("_")


def find_secrets(text: str) -> list[SecretFinding]:
    """Everything in `text` that looks like a credential, in reading order."""
    return [_locate(text, start, end, kind) for start, end, kind in secret_spans(text)]


def redact(text: str) -> str:
    """`text` with every secret replaced by a marker naming its kind: `[secret: github_token]`."""
    out = text
    for start, end, kind in reversed(secret_spans(text)):
        out = f"{out[:start]}[secret: {kind_slug(kind)}]{out[end:]}"
    return out


def safe_echo(value: object, *, limit: int = ECHO_LIMIT) -> str:
    """How an error message may show a bad value: its repr when short and harmless, else a
    description that holds none of it (the kind of secret it seems to hold, or its length)."""
    text = value if isinstance(value, str) else repr(value)
    spans = secret_spans(text)
    if spans:
        return f"(a value holding {with_article(spans[0][2])}, not shown)"
    if len(text) > limit:
        return f"(a {len(text):,}-character value, not shown)"
    return repr(value)


def secret_spans(text: str, *, decode: bool = True) -> list[Span]:
    """(start, end, kind) of every secret in `text`, in reading order."""
    view = visible(text)
    seen = view.text if view is not None else text
    spans = _claim(seen, [])
    wrapped = joined(seen)
    if wrapped is not None:
        for start, end, kind in _claim(wrapped.text, []):
            if wrapped.crosses_break(start, end):
                _take(spans, (*wrapped.span(start, end, len(seen)), kind))
    if decode:
        for start, end, decoded in base64_runs(seen):
            inner = secret_spans(decoded, decode=False)
            if inner:
                _take(spans, (start, end, BASE64_PREFIX + inner[0][2]))
    if view is not None:
        spans = [(*view.span(s, e, len(text)), kind) for s, e, kind in spans]
    return sorted(spans)


def _claim(text: str, spans: list[Span]) -> list[Span]:
    for rule in RULES:
        for start, end in matches(rule, text):
            _take(spans, (start, end, rule.kind))
    return spans


def _take(spans: list[Span], span: Span) -> None:
    start, end, _ = span
    if not any(start < t_end and t_start < end for t_start, t_end, _ in spans):
        spans.append(span)


def _locate(text: str, start: int, end: int, kind: str) -> SecretFinding:
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return SecretFinding(kind=kind, line=line, column=column, start=start, end=end)
