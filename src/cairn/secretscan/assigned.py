"""Secrets given by their surroundings rather than their shape.

1. A value assigned to a secret-bearing name (`password`, `token`, `api_key`, `client_secret`,
   `Authorization`, ...) in `key = value`, `key: value`, `"key": "value"` or `KEY=value` form.
   The name must *end* in the secret word, so `password_file`, `token_url` and `secret_name`
   (which say where a secret lives, exactly what we want stored) are not names of secrets.
   The value must be long (>= 12), contain no spaces, interleave letters and digits (so
   `oauth2-client-v2` and `postgres15` pass) or mix cases in a long run, reach 3 bits of
   entropy per character, and be neither a reference (`$X`, `${X}`, `os.environ["X"]`,
   `<your password>`) nor a stand-in (a run of one masking character, `changeme`, `example`).
   A *password* (the name ends in password, passwd, pwd or passphrase) may be shorter and made
   of words: 8 characters of at least three classes (`Summer2024Horse!`) are enough.
2. The same pair in XML: `<password>X</password>`, `<add key="ApiKey" value="X"/>`.

Passwords on command lines, in `.netrc` and `.pgpass` files and in prose are in `commands`.
"""

from __future__ import annotations

import itertools
import re

from cairn.secretscan.base import STAND_IN_MARKERS, Rule, shannon_entropy

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
_PASSWORD_WORDS = ("password", "passwd", "pwd", "passphrase", "passcode")
# Short for password only in an environment variable (`DB_PASS`, `SMTP_PW`): elsewhere
# "first pass: ..." is prose.
_PASSWORD_NAMES = frozenset({"pass", "pw"})
# One-word names that end in a secret word: PGPASSWORD, CLIENTSECRET, APITOKEN.
_SECRET_ENDINGS = ("password", "passwd", "secret", "token", "apikey", "accesskey", "secretkey")
_SECRET_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "encryption",
        "master",
        "auth",
        "client",
        "app",
        "account",
        "admin",
        "storage",
        "deploy",
        "hmac",
        "session",
        "shared",
    }
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
VALUE = r"(?P<secret>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`;|&<>]{1,200})"


def _name_parts(name: str) -> list[str]:
    return [p.lower() for p in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub("_", name)) if p]


def is_secret_name(name: str) -> bool:
    """Whether a variable or key named `name` holds a secret (it ends in a secret word)."""
    parts = _name_parts(name)
    if not parts:
        return False
    last = parts[-1]
    if last in _SECRET_WORDS or last.endswith(_SECRET_ENDINGS):
        return True
    if last in _PASSWORD_NAMES:
        return len(parts) > 1 and name.isupper()
    return last == "key" and len(parts) > 1 and parts[-2] in _SECRET_KEY_QUALIFIERS


def _is_password_name(name: str) -> bool:
    parts = _name_parts(name)
    return bool(parts) and (parts[-1].endswith(_PASSWORD_WORDS) or parts[-1] in _PASSWORD_NAMES)


# Where a value only points at a secret: `$X`, `${X}`, `%(x)s`, `{x}`, `<x>`, `[x]`, `(x)`, a
# YAML tag, anchor or alias (`!vault`, `&db`, `*db`), a decorator or a comment (`@x`, `#x`).
_REFERENCE_START = re.compile(r"[$%{<\[(]|[!&*@#][A-Za-z_][\w.-]*$")
# Code that fetches it: a call or a subscript (`os.environ["X"]`, `getenv("X")`,
# `self.token.weight.unsqueeze(0)`), without the symbols that generated keys are made of.
_CODE = re.compile(r"[A-Za-z_][\w.]*[(\[]")
_KEY_SYMBOLS = frozenset("!@#$%^&~|`")


def is_reference(value: str) -> bool:
    """A pointer to a secret, a template or code that fetches it, not the secret itself."""
    if _REFERENCE_START.match(value) or "://" in value:
        return True
    if value.startswith(("/", "./", "../", "~")):
        return True
    if "${" in value or "$(" in value or "{{" in value:
        return True
    if _CODE.match(value) and not _KEY_SYMBOLS.intersection(value):
        return True
    return _DOTTED_CODE.fullmatch(value) is not None


def is_stand_in(value: str) -> bool:
    lowered = value.lower()
    return any(marker in lowered for marker in STAND_IN_MARKERS)


def is_secret_value(value: str) -> bool:
    """Whether an assigned value is long and random enough to be a real credential."""
    if len(value) < 12 or any(c.isspace() for c in value):
        return False
    if is_reference(value) or is_stand_in(value):
        return False
    if len(value) >= 24 and char_classes(value) >= 3 and shannon_entropy(value) >= 4.0:
        return True  # a long generated key of every kind of character (Django's SECRET_KEY)
    segments = [s for s in re.split(r"[-_.:/]", value) if s]
    if not any(_interleaved(s) or _mixed_case_run(s) for s in segments):
        return False
    return len(set(value)) >= 8 and shannon_entropy(value) >= 3.0


def char_classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols `value` uses."""
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            # separators join words and versions (`v2-compatible`), so they do not count
            any(not c.isalnum() and c not in "-_./" for c in value),
        )
    )


def is_password_value(value: str) -> bool:
    """A human-made password: 8+ characters of three classes (`Summer2024Horse!`)."""
    if not 8 <= len(value) <= 128 or any(c.isspace() for c in value):
        return False
    if is_reference(value) or is_stand_in(value):
        return False
    return char_classes(value) >= 3 and len(set(value)) >= 6


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


def unquote(value: str) -> str:
    if value.startswith('\\"'):
        return value[2:-2]
    if value[0] in "\"'`" and len(value) >= 2:
        return value[1:-1]
    return value


def _xml_element(value: str, match: re.Match[str]) -> bool:
    return _assigned_pair(match.group("name"), value)


def _assigned(value: str, match: re.Match[str]) -> bool:
    return _assigned_pair(match.group("name"), value)


def _assigned_pair(name: str, value: str) -> bool:
    if not is_secret_name(name):
        return False
    bare = unquote(value)
    if not bare:
        return False
    if is_secret_value(bare):
        return True
    return _is_password_name(name) and (is_password_value(bare) or wordy(bare))


def wordy(value: str) -> bool:
    """A password of letters and digits (`hunter22`), told apart from a term (`sha256-hashed`)
    by its length and the lack of separators."""
    if len(value) < 8 or is_reference(value) or is_stand_in(value):
        return False
    return value.isalnum() and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_XML_ELEMENT = re.compile(
    r"<(?P<name>[A-Za-z_][\w.:-]{0,79})(?:[ \t][^<>\n]{0,200})?>"
    r"(?P<secret>[^<>\n]{1,300})</(?P=name)>"
)
_XML_KEY_VALUE = re.compile(
    r"\b(?:key|name)=[\"'](?P<name>[A-Za-z_][\w.:-]{0,79})[\"'][ \t]+value="
    r"(?P<secret>\"[^\"\n]{1,300}\"|'[^'\n]{1,300}')"
)

ASSIGNED = "high-entropy value assigned to a secret name"
ASSIGNMENT_RULES: tuple[Rule, ...] = (
    Rule(ASSIGNED, _XML_ELEMENT, _xml_element),
    Rule(ASSIGNED, _XML_KEY_VALUE, _xml_element),
    Rule(ASSIGNED, _ASSIGNMENT, _assigned),
)
