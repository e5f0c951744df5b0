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
2. A password on a command line: `--password X`, `mysql -pX`, `sshpass -p X`,
   `docker login -p X`, `curl -u user:X`.
3. A password in a `.netrc` entry (`machine host login user password X`).
4. A password in prose: "the password is X", "password for prod was X".
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
_VALUE = r"(?P<secret>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`;|&<>]{1,200})"


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
    return last == "key" and len(parts) > 1 and parts[-2] in _SECRET_KEY_QUALIFIERS


def _is_password_name(name: str) -> bool:
    parts = _name_parts(name)
    return bool(parts) and parts[-1].endswith(_PASSWORD_WORDS)


def _is_reference(value: str) -> bool:
    """A pointer to a secret, a template or code that fetches it, not the secret itself."""
    if value[0] in "$%{<[(!@&*#" or "://" in value or value.startswith(("/", "./", "../", "~")):
        return True
    if "${" in value or "$(" in value or "{{" in value:
        return True
    return "(" in value or "[" in value or _DOTTED_CODE.fullmatch(value) is not None


def _is_stand_in(value: str) -> bool:
    lowered = value.lower()
    return any(marker in lowered for marker in STAND_IN_MARKERS)


def is_secret_value(value: str) -> bool:
    """Whether an assigned value is long and random enough to be a real credential."""
    if len(value) < 12 or any(c.isspace() for c in value):
        return False
    if _is_reference(value) or _is_stand_in(value):
        return False
    if len(value) >= 24 and _classes(value) >= 3 and shannon_entropy(value) >= 4.0:
        return True  # a long generated key of every kind of character (Django's SECRET_KEY)
    segments = [s for s in re.split(r"[-_.:/]", value) if s]
    if not any(_interleaved(s) or _mixed_case_run(s) for s in segments):
        return False
    return len(set(value)) >= 8 and shannon_entropy(value) >= 3.0


def _classes(value: str) -> int:
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
    if _is_reference(value) or _is_stand_in(value):
        return False
    return _classes(value) >= 3 and len(set(value)) >= 6


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


def _assigned(value: str, match: re.Match[str]) -> bool:
    name = match.group("name")
    if not is_secret_name(name):
        return False
    bare = unquote(value)
    if not bare:
        return False
    if is_secret_value(bare):
        return True
    return _is_password_name(name) and (is_password_value(bare) or _wordy(bare))


def _given_password(value: str, _match: re.Match[str]) -> bool:
    bare = unquote(value).rstrip(".,;:)")
    return bool(bare) and (is_password_value(bare) or is_secret_value(bare) or _wordy(bare))


def _wordy(value: str) -> bool:
    """A password of letters and digits (`hunter22`), told apart from a term (`sha256-hashed`)
    by its length and the lack of separators."""
    if len(value) < 8 or _is_reference(value) or _is_stand_in(value):
        return False
    return value.isalnum() and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _cli_password(value: str, match: re.Match[str]) -> bool:
    """A password a tool is given on its command line: any that is not a reference."""
    bare = unquote(value)
    if len(bare) < 4 or _is_reference(bare) or _is_stand_in(bare):
        return False
    user = match.groupdict().get("user")
    return user is None or user.lower() != bare.lower()


def _flag_value(value: str, match: re.Match[str]) -> bool:
    """After `--password`, `--token` or `sshpass -p`: a quoted value, or one that is not a plain
    word, which is prose about the flag ("pass --password when prompted") rather than a value."""
    if not _cli_password(value, match):
        return False
    bare = unquote(value)
    if bare != value:
        return True
    return is_secret_value(bare) or (_classes(bare) >= 2 and len(bare) >= 6)


_CLI = re.compile(
    r"(?<![\w-])--(?:password|passwd|pass|db-password|token|api-key|apikey|secret|"
    r"client-secret|auth-token|access-token)(?:[ \t]+|=)" + _VALUE
)
_MYSQL = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,200}?[ \t]-p(?=[^\s-])" + _VALUE
)
_DASH_P = re.compile(
    r"(?:\bsshpass[ \t]+-p[ \t]*|\bdocker[ \t]+login\b[^\n|;&]{0,200}?[ \t]-p[ \t]+)" + _VALUE
)
_CLI_USER = re.compile(
    r"\b(?:curl|wget|http)\b[^\n|;&]{0,200}?[ \t](?:-u[ \t]*|--user[ \t=])[\"']?"
    r"(?P<user>[^\s:\"'$]{1,80}):(?P<secret>[^\s\"'`@]{1,200})"
)
# A .netrc entry: `machine host login user password X`, on one line or several.
_NETRC = re.compile(
    r"\b(?:machine[ \t]+\S+|default)(?:\s+(?:login|account)[ \t]+\S+){0,2}\s+password[ \t]+"
    + _VALUE
)
_PROSE = re.compile(
    r"(?i:\b(?:password|passphrase|passcode|passwd|pwd)s?\b"
    r"(?:[ \t]+(?:for|of|to|on)(?:[ \t]+[\w.@/-]{1,60}){1,3}?)?"
    # the longer phrasings first: a regex does not come back to try them once the value fails
    r"[ \t]+(?:(?:is|was|has[ \t]+been)[ \t]+(?:now|set[ \t]+to|changed[ \t]+to|reset[ \t]+to)"
    r"|(?:set|changed|reset)[ \t]+to|is|was)[ \t]*:?[ \t]*)" + _VALUE
)

ASSIGNED = "high-entropy value assigned to a secret name"
CONTEXT_RULES: tuple[Rule, ...] = (
    Rule("secret on a command line", _CLI, _flag_value),
    Rule("secret on a command line", _MYSQL, _cli_password),
    Rule("secret on a command line", _DASH_P, _flag_value),
    Rule("secret on a command line", _CLI_USER, _cli_password),
    Rule("password in a .netrc entry", _NETRC, _cli_password),
    Rule("password in prose", _PROSE, _given_password),
    Rule(ASSIGNED, _ASSIGNMENT, _assigned),
)
