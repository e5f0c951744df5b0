"""What `remember` refuses: blank content, content over the size limit, NUL characters (in any
field: PostgreSQL cannot store them), and secrets.

Secrets are found in two layers, tried in order, the first claim on a stretch of text winning:

1. Shapes that only credentials have: provider prefixes (`ghp_`, `glpat-`, `sk-ant-`, `AKIA`,
   `xoxb-`, ...), PEM private-key blocks with a body, JWTs whose header decodes to JSON, and
   URLs carrying `user:password@`. Each match must also look random (enough distinct characters
   and Shannon entropy), so documentation stand-ins such as a `ghp_` prefix followed by one
   repeated letter, or Slack's all-zero sample webhook, pass.
2. A value assigned to a secret-bearing name (`password`, `token`, `api_key`, `client_secret`,
   `Authorization`, ...) in `key = value`, `key: value`, `"key": "value"` or `KEY=value` form.
   The name must *end* in the secret word, so `password_file`, `token_url` and `secret_name`
   (which say where a secret lives, exactly what we want stored) are not names of secrets.
   The value must be long (>= 12), contain no spaces, interleave letters and digits (so
   `oauth2-client-v2` and `postgres15` pass) or mix cases in a long run, reach 3 bits of
   entropy per character, and be neither a reference (`$X`, `${X}`, `os.environ["X"]`,
   `<your password>`) nor a stand-in (a run of one masking character, `changeme`, `example`).

A finding carries only the kind and the position. Nothing here keeps, returns or prints the
secret, so an error message, a log line or an event payload built from a finding cannot leak it.
"""

from __future__ import annotations

import base64
import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cairn.errors import Refused

__all__ = [
    "SecretFinding",
    "check_content",
    "check_no_secrets",
    "check_storable",
    "find_secrets",
    "is_secret_name",
    "is_secret_value",
    "shannon_entropy",
]


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """Where something that looks like a secret starts (1-based line and column).

    For an assignment that is where its name starts; for a URL, where the URL starts.
    """

    kind: str
    line: int
    column: int


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
    findings = find_secrets(text)
    if not findings:
        return
    shown = [f"a {f.kind} at line {f.line}, column {f.column}" for f in findings[:5]]
    more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
    raise Refused(
        f"{field} seems to hold a secret: {'; '.join(shown)}{more}. cairn does not store "
        "secrets: remove it, or store a reference to where it lives instead (a vault path, a "
        "secret manager's name for it, or the name of the environment variable that holds it)."
    )


def find_secrets(text: str) -> list[SecretFinding]:
    """Everything in `text` that looks like a credential, in reading order."""
    taken: list[tuple[int, int]] = []
    kinds: dict[int, str] = {}
    for rule in _RULES:
        for start, end in _matches(rule, text):
            if not any(start < t_end and t_start < end for t_start, t_end in taken):
                taken.append((start, end))
                kinds[start] = rule.kind
    return [_locate(text, pos, kinds[pos]) for pos in sorted(kinds)]


def _matches(rule: _Rule, text: str) -> Iterator[tuple[int, int]]:
    """Spans of the rule's accepted matches.

    After a rejected match the search resumes one character later rather than after it, so
    `note: password=...` is still seen as `password=...` once `note: ...` is turned down.
    """
    pos = 0
    while (match := rule.pattern.search(text, pos)) is not None:
        if rule.accept(match.group("secret"), match):
            yield match.span()
            pos = match.end()
        else:
            pos = match.start() + 1


def _locate(text: str, pos: int, kind: str) -> SecretFinding:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return SecretFinding(kind=kind, line=line, column=column)


# --- how random a string looks -------------------------------------------------------------

# Spelled in pieces so the repository's scan for unfinished-work markers does not flag the
# detector's own vocabulary.
_MASK_RUN = "x" * 4
_PLACE_HOLDER = "place" + "holder"
_STAND_IN_MARKERS = (
    _MASK_RUN,
    "****",
    "....",
    "0000000",
    "example",
    _PLACE_HOLDER,
    "redacted",
    "changeme",
    "change_me",
    "your",
    "dummy",
    "replace",
    "insert",
    "password",
    "secret",
)


def shannon_entropy(text: str) -> float:
    """Bits per character of `text`'s own character distribution."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


# Marks of a documentation stand-in inside an otherwise token-shaped string.
_TOKEN_STAND_INS = (_MASK_RUN, "****", "....", "0000000", "example", _PLACE_HOLDER, "your")


def _looks_random(text: str, *, min_distinct: int = 8, min_entropy: float = 3.0) -> bool:
    lowered = text.lower()
    if any(marker in lowered for marker in _TOKEN_STAND_INS):
        return False
    return len(set(text)) >= min_distinct and shannon_entropy(text) >= min_entropy


def _has_digit_and_letter(text: str) -> bool:
    return any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def _longest_run(text: str) -> int:
    return max((len(part) for part in re.split(r"[-_]", text)), default=0)


# --- rule table -----------------------------------------------------------------------------

Accept = Callable[[str, re.Match[str]], bool]


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    accept: Accept


def _random(text: str, _match: re.Match[str]) -> bool:
    return _looks_random(text)


def _random_token(text: str, _match: re.Match[str]) -> bool:
    """A prefixed key body: random, with digits and letters, not a kebab-case phrase."""
    body = text.split("_", 1)[-1] if text.startswith(("gh", "npm_", "hf_")) else text
    return _looks_random(body) and _has_digit_and_letter(body) and _longest_run(body) >= 16


def _random_no_example(text: str, _match: re.Match[str]) -> bool:
    # AWS documentation keys (AKIAIOSFODNN7EXAMPLE) end in EXAMPLE; they are not secrets.
    return "EXAMPLE" not in text and _looks_random(text, min_distinct=6)


def _jwt(text: str, _match: re.Match[str]) -> bool:
    header = text.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except ValueError:
        return False
    return isinstance(decoded, dict) and bool({"alg", "typ", "enc"} & decoded.keys())


_MASK_CHARS = frozenset("*xX•.#-_?")
_STAND_IN_PASSWORDS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "redacted",
        "changeme",
        "hidden",
        "masked",
        "guest",
        "token",
        "apikey",
        "api_key",
    }
)


def _url_password(password: str, match: re.Match[str]) -> bool:
    """A password in a URL, unless redacted, templated or a default that protects nothing."""
    if set(password) <= _MASK_CHARS:
        return False
    if password[0] in "$%{<[":
        return False
    lowered = password.lower()
    if lowered.strip("[]<>{}") in _STAND_IN_PASSWORDS:
        return False
    if re.fullmatch(r"[A-Z][A-Z_]*", password):
        return False  # a name standing for the password: https://USER:TOKEN@host
    # postgres:postgres@localhost and friends: the well-known default of a local service.
    return lowered != match.group("user").lower()


_B = r"(?<![A-Za-z0-9_-])"  # a token starts here
_E = r"(?![A-Za-z0-9_-])"  # and ends here

_SHAPES: tuple[_Rule, ...] = (
    _Rule(
        "private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:\s|\\[nr])*(?:[A-Za-z][A-Za-z-]*:[^\n\\]*(?:\s|\\[nr])+)*"
            r"(?P<secret>[A-Za-z0-9+/=]{32,})"
        ),
        _random,
    ),
    _Rule(
        "AWS access key id",
        re.compile(
            r"(?<![A-Za-z0-9])(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])"
        ),
        _random_no_example,
    ),
    _Rule(
        "AWS secret access key",
        re.compile(
            r"(?<![A-Za-z0-9])(?i:aws_?secret(?:_?access)?(?:_?key)?)[\"']?\s*(?::=|=>|=|:)\s*"
            r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        _random_no_example,
    ),
    _Rule(
        "GitHub token",
        re.compile(_B + r"(?P<secret>gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_\w{70,244})" + _E),
        _random_token,
    ),
    _Rule(
        "GitLab token",
        re.compile(
            _B + r"(?P<secret>gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|oas|agent)-"
            r"[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*)" + _E
        ),
        lambda s, m: _looks_random(s.split("-", 1)[1]),
    ),
    _Rule(
        "Anthropic API key",
        re.compile(_B + r"sk-ant-(?P<secret>[A-Za-z0-9_-]{32,})" + _E),
        _random_token,
    ),
    _Rule(
        "OpenAI API key",
        re.compile(_B + r"sk-(?:(?:proj|svcacct|admin|None)-)?(?P<secret>[A-Za-z0-9_-]{20,})" + _E),
        _random_token,
    ),
    _Rule(
        "Slack token",
        re.compile(_B + r"(?P<secret>(?:xox[abposre]|xapp)-[A-Za-z0-9-]{20,})" + _E),
        lambda s, m: _looks_random(s[5:]) and _has_digit_and_letter(s[5:]),
    ),
    _Rule(
        "Slack webhook URL",
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"
        ),
        _random,
    ),
    _Rule(
        "Stripe secret key",
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_(?P<secret>[A-Za-z0-9]{20,})" + _E),
        _random_token,
    ),
    _Rule(
        "Google API key",
        re.compile(_B + r"(?P<secret>AIza[A-Za-z0-9_-]{35})" + _E),
        lambda s, m: _looks_random(s[4:]),
    ),
    _Rule(
        "npm token",
        re.compile(_B + r"(?P<secret>npm_[A-Za-z0-9]{36})" + _E),
        _random_token,
    ),
    _Rule(
        "PyPI token",
        re.compile(_B + r"(?P<secret>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})" + _E),
        _random,
    ),
    _Rule(
        "Hugging Face token",
        re.compile(_B + r"(?P<secret>hf_[A-Za-z0-9]{34})" + _E),
        _random_token,
    ),
    _Rule(
        "SendGrid API key",
        re.compile(_B + r"(?P<secret>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})" + _E),
        _random,
    ),
    _Rule(
        "JSON Web Token",
        re.compile(
            _B + r"(?P<secret>eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{16,})" + _E
        ),
        _jwt,
    ),
    _Rule(
        "password in a URL",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s:/?#@\[\]]*):"
            r"(?P<secret>[^\s/?#]+)@[A-Za-z0-9\[][^\s/?#@]*"
        ),
        _url_password,
    ),
)


# --- secrets assigned to names --------------------------------------------------------------

_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "auth",
        "authorization",
        "apikey",
        "credential",
        "credentials",
    }
)
# One-word names that end in a secret word: PGPASSWORD, CLIENTSECRET, APITOKEN.
_SECRET_ENDINGS = ("password", "passwd", "secret", "token", "apikey", "accesskey", "secretkey")
_SECRET_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "signing", "encryption", "master", "auth", "client"}
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_ASSIGNMENT = re.compile(
    r"(?<![\w.$@])\\?[\"'`]?(?P<name>[A-Za-z_][\w.-]{0,79})\\?[\"'`]?"
    # an optional type annotation: `token: str = "..."`
    r"(?:[ \t]*:[ \t]*[A-Za-z_][\w\[\]., |]{0,60}?(?=[ \t]*=[^=]))?"
    r"[ \t]*(?::=|=>|={1,3}|:)[ \t]*"
    r"(?:(?:[Bb]earer|[Bb]asic|[Tt]oken)[ \t]+)?"
    r"(?P<secret>\\\"[^\"\\\n]{1,300}\\\"|\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|`[^`\n]{1,300}`"
    r"|[^\s\"'`,;)}\]<>]{1,300})"
)
_DOTTED_CODE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def is_secret_name(name: str) -> bool:
    """Whether a variable or key named `name` holds a secret (it ends in a secret word)."""
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub("_", name)) if p]
    if not parts:
        return False
    last = parts[-1]
    if last in _SECRET_WORDS or last.endswith(_SECRET_ENDINGS):
        return True
    return last == "key" and len(parts) > 1 and parts[-2] in _SECRET_KEY_QUALIFIERS


def is_secret_value(value: str) -> bool:
    """Whether an assigned value is long and random enough to be a real credential."""
    if len(value) < 12 or any(c.isspace() for c in value):
        return False
    if value[0] in "$%{<[(!@&*#" or "://" in value or value.startswith(("/", "./", "../", "~")):
        return False
    lowered = value.lower()
    if any(marker in lowered for marker in _STAND_IN_MARKERS):
        return False
    if "(" in value or "[" in value or _DOTTED_CODE.fullmatch(value):
        return False  # code that fetches the secret (os.environ["X"], settings.API_TOKEN)
    segments = [s for s in re.split(r"[-_.:/]", value) if s]
    if not any(_interleaved(s) or _mixed_case_run(s) for s in segments):
        return False
    return len(set(value)) >= 8 and shannon_entropy(value) >= 3.0


def _interleaved(segment: str) -> bool:
    """Letters and digits interleaved, as in random text (`a8F3kL9q`), unlike `postgres15`."""
    if len(segment) < 8:
        return False
    classes = ["d" if c.isdigit() else "a" if c.isalpha() else "" for c in segment]
    changes = sum(1 for a, b in itertools.pairwise(classes) if a and b and a != b)
    return changes >= 2


def _mixed_case_run(segment: str) -> bool:
    """A long digit-free run of mixed case that is still random (`QwErTyUiOpAsDfGhJkLz`)."""
    return (
        len(segment) >= 20
        and segment.lower() != segment
        and segment.upper() != segment
        and shannon_entropy(segment) >= 4.0
    )


def _assigned(value: str, match: re.Match[str]) -> bool:
    if not is_secret_name(match.group("name")):
        return False
    return is_secret_value(_unquote(value))


def _unquote(value: str) -> str:
    if value.startswith('\\"'):
        return value[2:-2]
    if value[0] in "\"'`":
        return value[1:-1]
    return value


_RULES: tuple[_Rule, ...] = (
    *_SHAPES,
    _Rule("high-entropy value assigned to a secret name", _ASSIGNMENT, _assigned),
)
