"""What `remember` refuses: blank content, content over the size limit, NUL characters (in any
field: PostgreSQL cannot store them), lone surrogates (`check_text`: what Python makes of bytes
that were not UTF-8, which no store can encode), and secrets.

The detector lives in `cairn.secretscan` (its module docstrings list the rules); this module is
its public face. In short, secrets are found in two layers, the first claim on a stretch of
text winning:

1. Shapes that only credentials have: provider prefixes (`ghp_`, `glpat-`, `sk-ant-`, `AKIA`,
   `xoxb-`, `shpat_`, `hvs.`, ...), PEM private-key blocks with a body, JWTs whose header
   decodes to JSON, URLs carrying `user:password@`, Azure `AccountKey=` and SAS `sig=`, and
   forty-character AWS secret keys near an AWS key id. Each must also look random, so
   documentation stand-ins pass.
2. Values given by their surroundings: assigned to a secret-bearing name (`password`,
   `api_key`, `client_secret`, ...; `password_file` and `token_url` are not such names) in
   code, config or XML, passed on a command line (`--password X`, `mysql -pX`,
   `sshpass -p X`, `curl -u user:X`), written in `.netrc` or `.pgpass`, or stated in prose
   ("the password is X", "the API key is X").

Before matching, invisible characters are removed and full-width forms folded; then wrapped
lines are joined, and base64 runs that decode to text are scanned too.

A finding carries only the kind and the position. Nothing here keeps, returns or prints the
secret, so an error message, a log line or an event payload built from a finding cannot leak it.
Every text a caller gives is checked before it is normalised in any way (lowercased, stripped,
whitespace collapsed, truncated), so normalising cannot hide a secret from the check.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath

from cairn.errors import InvalidInput, Refused
from cairn.secretscan import (
    KINDS,
    SecretFinding,
    find_secrets,
    is_password_value,
    is_secret_name,
    is_secret_value,
    redact,
    safe_echo,
    shannon_entropy,
    with_article,
)

__all__ = [
    "KINDS",
    "LOGGED_QUERY_CHARS",
    "MAX_QUERY_BYTES",
    "SecretFinding",
    "check_content",
    "check_no_secrets",
    "check_query",
    "check_storable",
    "check_strings",
    "find_secrets",
    "is_password_value",
    "is_secret_name",
    "is_secret_value",
    "loggable",
    "redact",
    "refuse_secrets",
    "safe_echo",
    "shannon_entropy",
]


def check_content(content: str, *, max_bytes: int) -> None:
    """Refuse blank content, NUL characters, and content longer than `max_bytes` once encoded
    as UTF-8."""
    if not content.strip():
        raise Refused(
            "content is blank (empty or only whitespace); write the claim itself, as one or "
            "more self-contained sentences."
        )
    check_storable(content, field="content")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise Refused(
            f"content is not valid Unicode: character {exc.start + 1} is a lone surrogate "
            f"(U+{ord(content[exc.start]):04X}), which cannot be stored; send the text as UTF-8."
        ) from None
    if size > max_bytes:
        raise Refused(
            f"content is {size:,} bytes (UTF-8) and the limit is {max_bytes:,} bytes. Split it "
            "into several self-contained memories, or summarise it and cite the file it comes "
            "from with source_ref instead of pasting it."
        )


def check_storable(text: str, *, field: str) -> None:
    """Refuse text holding a NUL character. PostgreSQL text cannot hold one, so neither
    backend accepts it and a store can always move to the other."""
    position = text.find("\x00")
    if position >= 0:
        raise Refused(
            f"{field} holds a NUL character (U+0000) at position {position + 1}, which cannot be "
            "stored; remove it (it usually comes from pasting binary data)."
        )


def check_no_secrets(text: str, *, field: str) -> None:
    """Refuse `text` if it holds a NUL character or seems to hold a secret; the message never
    repeats the secret. Every text a caller gives passes through here."""
    check_storable(text, field=field)
    refuse_secrets(text, field=field)


def refuse_secrets(text: str, *, field: str) -> None:
    """The secret half of `check_no_secrets`, for fields that handle control characters in
    their own validation (a scope, a date, an id)."""
    findings = find_secrets(text)
    if not findings:
        return
    shown = [f"{with_article(f.kind)} at line {f.line}, column {f.column}" for f in findings[:5]]
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    raise Refused(
        f"{field} seems to hold a secret: {'; '.join(shown)}{more}. cairn does not store "
        "secrets: remove it, or store a reference to where it lives instead (a vault path, a "
        "secret manager's name for it, or the name of the environment variable that holds it)."
    )


def check_strings(value: object, *, field: str) -> None:
    """`check_no_secrets` on every text in `value`: a text, or a list or mapping of them (tags,
    diff_files, a procedure's steps). Other values are left to their own validation."""
    if isinstance(value, str):
        check_no_secrets(value, field=field)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(key, field=field)
            check_strings(item, field=f"{field}.{key}" if isinstance(key, str) else field)
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_strings(item, field=field)


MAX_QUERY_BYTES = 4096
LOGGED_QUERY_CHARS = 500


def check_query(text: str, *, field: str) -> None:
    """Refuse a search phrasing over `MAX_QUERY_BYTES` (UTF-8): a query is a question, not a
    document, and every recall keeps its query in the event log."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_QUERY_BYTES:
        raise InvalidInput(
            f"{field} is {size:,} bytes (UTF-8) and the limit is {MAX_QUERY_BYTES:,} bytes; ask "
            "a short question (a sentence or a few keywords), not a pasted document."
        )


def loggable(text: str, *, limit: int = LOGGED_QUERY_CHARS) -> str:
    """What the event log keeps of a caller's query: every secret replaced by a marker naming
    its kind (`[secret: github_token]`), NULs made visible, at most `limit` characters."""
    masked = redact(text).replace("\x00", "\ufffd")
    return masked if len(masked) <= limit else masked[: limit - 1] + "…"


# Stop walking a pathological argument there; the callee refuses it anyway.
_MAX_ITEMS = 100_000


def surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in `text`, if any."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def check_text(name: str, value: object) -> None:
    """Refuse `value` (a string, or containers of them) if any string holds a lone surrogate."""
    stack: list[tuple[str, object]] = [(name, value)]
    seen = 0
    while stack and seen < _MAX_ITEMS:
        where, item = stack.pop()
        seen += 1
        if isinstance(item, PurePath):
            item = str(item)
        if isinstance(item, str):
            index = surrogate_at(item)
            if index is not None:
                raise InvalidInput(
                    f"{where} is not valid Unicode: character {index + 1} is a lone surrogate "
                    f"(U+{ord(item[index]):04X}), which cannot be stored; send the text as UTF-8."
                )
        elif isinstance(item, Mapping):
            for key, nested in item.items():
                stack.append((f"{where} key", key))
                stack.append((f"{where}[{key!r}]", nested))
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((f"{where}[{i}]", nested) for i, nested in enumerate(item))
