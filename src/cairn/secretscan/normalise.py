"""Views of a text that undo the ways a secret is disguised, each with a map back to the text.

- `visible`: invisible and format characters removed (zero-width space and joiners, word
  joiner, byte-order mark, soft hyphen, bidi controls, variation selectors, ...) and
  compatibility forms folded (full-width `ｇｈｐ＿` is `ghp_`), so a token with a zero-width
  space inside is still one token.
- `joined`: a line break after half a token (ten token characters or more, with a digit or
  both cases) removed, with a trailing `\\` or the quotes and `+` of a string literal split
  over two lines, so a token wrapped over two lines is one token again.
- `base64_runs`: the runs that decode to text, with their decoded text, so a token that was
  base64-encoded is scanned as well.

A map gives, for every character of the view, the index in the original text it came from.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

# Not in category Cf but still invisible inside a word.
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")


@dataclass(frozen=True, slots=True)
class View:
    """A transformed text and, per character, the index of the original it came from."""

    text: str
    origin: tuple[int, ...]
    breaks: tuple[int, ...] = ()  # view indices where something was removed

    def span(self, start: int, end: int, length: int) -> tuple[int, int]:
        """The original span of view[start:end]."""
        first = self.origin[start] if start < len(self.origin) else length
        last = self.origin[end - 1] + 1 if end > 0 else first
        return first, max(first, last)

    def crosses_break(self, start: int, end: int) -> bool:
        return any(start < b < end for b in self.breaks)


def _is_invisible(ch: str) -> bool:
    if ch in _INVISIBLE_EXTRA:
        return True
    category = unicodedata.category(ch)
    # Format characters, and variation selectors (combining marks that change nothing visible).
    return category == "Cf" or ("\ufe00" <= ch <= "\ufe0f") or ("\U000e0100" <= ch <= "\U000e01ef")


def visible(text: str) -> View | None:
    """The text without invisible characters and with compatibility forms folded; None when
    that changes nothing (plain ASCII, the usual case)."""
    if text.isascii():
        return None
    out: list[str] = []
    origin: list[int] = []
    changed = False
    for index, ch in enumerate(text):
        if ch.isascii():
            out.append(ch)
            origin.append(index)
            continue
        if _is_invisible(ch):
            changed = True
            continue
        folded = unicodedata.normalize("NFKC", ch)
        # Only foldings to ASCII matter here (full-width letters, ligatures of letters).
        if folded != ch and folded.isascii() and folded.isprintable():
            changed = True
            out.extend(folded)
            origin.extend([index] * len(folded))
        else:
            out.append(ch)
            origin.append(index)
    return View("".join(out), tuple(origin)) if changed else None


# Half a token: a run of ten or more token characters with a digit or both cases in it. A line
# that ends in a word (`False`, `used_password`), a full stop or `=` (the end of a base64 value)
# is not cut in the middle of a token, so it is not joined to the next.
_WRAP = re.compile(
    r"(?<![A-Za-z0-9_+/-])(?P<head>[A-Za-z0-9_+/-]{10,})"
    r"(?P<gap>(?:[\"'][ \t]*\+?)?[ \t]*\\?\r?\n[ \t]*(?:\+[ \t]*)?[\"']?)"
    r"(?=[A-Za-z0-9_+/=.-]{4})"
)


def _half_token(head: str) -> bool:
    if any(c.isdigit() for c in head):
        return True
    return any(c.isupper() for c in head) and any(c.islower() for c in head)


def joined(text: str) -> View | None:
    """The text with wrapped token lines joined; None when no line ends in half a token."""
    if "\n" not in text:
        return None
    out: list[str] = []
    origin: list[int] = []
    breaks: list[int] = []
    pos = 0
    for match in _WRAP.finditer(text):
        if not _half_token(match.group("head")):
            continue
        start, end = match.span("gap")
        out.append(text[pos:start])
        origin.extend(range(pos, start))
        breaks.append(len(origin))
        pos = end
    if not breaks:
        return None
    out.append(text[pos:])
    origin.extend(range(pos, len(text)))
    return View("".join(out), tuple(origin), tuple(breaks))


_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_MIN_DECODED = 12


def base64_runs(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, decoded) for each base64 run that decodes to readable text."""
    for match in _BASE64_RUN.finditer(text):
        decoded = _decode(match.group())
        if decoded is not None:
            yield match.start(), match.end(), decoded


def _decode(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            if "+" in body or "/" in body:
                return None
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded, validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, binascii.Error):
        return None
    if len(decoded) < _MIN_DECODED:
        return None
    readable = sum(1 for c in decoded if c.isprintable() or c in "\n\r\t")
    return decoded if readable >= 0.95 * len(decoded) else None
