"""Secrets a tool is given, or a person states, rather than assigned to a name.

1. A password on a command line: `--password X`, `mysql -pX`, `sshpass -p X`,
   `docker login -p X`, `curl -u user:X`. A flag followed by a plain word is prose about the
   flag ("pass --password when prompted"), not a value.
2. A password in a `.netrc` entry (`machine host login user password X`) or a `.pgpass` line
   (`host:port:database:user:password`).
3. A password in prose: "the password is X", "password for prod was X"; and a key or token in
   prose ("the API key is X") when X is random enough to be one.
"""

from __future__ import annotations

import re

from cairn.secretscan.assigned import (
    VALUE,
    char_classes,
    is_password_value,
    is_reference,
    is_secret_value,
    is_stand_in,
    unquote,
    wordy,
)
from cairn.secretscan.base import Rule


def _given_password(value: str, _match: re.Match[str]) -> bool:
    bare = unquote(value).rstrip(".,;:)")
    return bool(bare) and (is_password_value(bare) or is_secret_value(bare) or wordy(bare))


def _cli_password(value: str, match: re.Match[str]) -> bool:
    """A password a tool is given on its command line: any that is not a reference."""
    bare = unquote(value)
    if len(bare) < 4 or is_reference(bare) or is_stand_in(bare):
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
    return is_secret_value(bare) or (char_classes(bare) >= 2 and len(bare) >= 6)


_CLI = re.compile(
    r"(?<![\w-])--(?:password|passwd|pass|db-password|token|api-key|apikey|secret|"
    r"client-secret|auth-token|access-token)(?:[ \t]+|=)" + VALUE
)
_MYSQL = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,200}?[ \t]-p(?=[^\s-])" + VALUE
)
_DASH_P = re.compile(
    r"(?:\bsshpass[ \t]+-p[ \t]*|\bdocker[ \t]+login\b[^\n|;&]{0,200}?[ \t]-p[ \t]+)" + VALUE
)
_CLI_USER = re.compile(
    r"\b(?:curl|wget|http)\b[^\n|;&]{0,200}?[ \t](?:-u[ \t]*|--user[ \t=])[\"']?"
    r"(?P<user>[^\s:\"'$]{1,80}):(?P<secret>[^\s\"'`@]{1,200})"
)
# A .netrc entry: `machine host login user password X`, on one line or several.
_NETRC = re.compile(
    r"\b(?:machine[ \t]+\S+|default)(?:\s+(?:login|account)[ \t]+\S+){0,2}\s+password[ \t]+" + VALUE
)
_PROSE = re.compile(
    r"(?i:\b(?:password|passphrase|passcode|passwd|pwd)s?\b"
    r"(?:[ \t]+(?:for|of|to|on)(?:[ \t]+[\w.@/-]{1,60}){1,3}?)?"
    # the longer phrasings first: a regex does not come back to try them once the value fails
    r"[ \t]+(?:(?:is|was|has[ \t]+been)[ \t]+(?:now|set[ \t]+to|changed[ \t]+to|reset[ \t]+to)"
    r"|(?:set|changed|reset)[ \t]+to|is|was)[ \t]*:?[ \t]*)" + VALUE
)
# A .pgpass line: host:port:database:user:password, the first four possibly `*`.
_PGPASS = re.compile(
    r"(?m)^[ \t]*[\w.*-]{1,253}:(?:\d{1,5}|\*):[\w.*-]{1,63}:[\w.@*-]{1,63}:"
    r"(?P<secret>[^\s:]{4,200})[ \t]*$"
)
_KEY_PROSE = re.compile(
    r"(?i:\b(?:api|access|secret|auth|client|bearer|bot|private|signing)[ _-]?(?:key|token|secret)"
    r"|\b(?:token|secret)\b)"
    r"[ \t]+(?:(?:is|was)[ \t]+(?:now[ \t]+)?|(?:set|changed)[ \t]+to[ \t]+)[ \t]*:?[ \t]*" + VALUE
)
_BEARER = re.compile(r"\b[Bb]earer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)")


def _pgpass(value: str, match: re.Match[str]) -> bool:
    """Not `*`, and not a short word (`fe80:0:0:0:abcd` is an address, not a .pgpass line)."""
    if value == "*" or not _cli_password(value, match):
        return False
    return char_classes(value) >= 2 or len(value) >= 8


def _random_value(value: str, _match: re.Match[str]) -> bool:
    bare = unquote(value).rstrip(".,;:)")
    return bool(bare) and is_secret_value(bare)


CONTEXT_RULES: tuple[Rule, ...] = (
    Rule("secret on a command line", _CLI, _flag_value),
    Rule("secret on a command line", _MYSQL, _cli_password),
    Rule("secret on a command line", _DASH_P, _flag_value),
    Rule("secret on a command line", _CLI_USER, _cli_password),
    Rule("password in a .netrc entry", _NETRC, _cli_password),
    Rule("password in a .pgpass line", _PGPASS, _pgpass),
    Rule("password in prose", _PROSE, _given_password),
    Rule("key or token in prose", _KEY_PROSE, _random_value),
)
# After the assignments, so `Authorization: Bearer X` keeps the assignment's kind.
FALLBACK_RULES: tuple[Rule, ...] = (Rule("bearer token", _BEARER, _random_value),)
