"""Shapes that only credentials have: provider prefixes, key blocks, signed tokens, URLs with a
password, and the few unprefixed secrets whose surroundings give them away (an Azure account
key after `AccountKey=`, a SAS signature after `sig=`, an AWS secret key near its key id).

Each match must also look random, so documentation stand-ins (a prefix followed by one repeated
letter, an all-zero sample) pass.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from urllib.parse import unquote

from cairn.secretscan.base import (
    Accept,
    Rule,
    has_digit_and_letter,
    looks_random,
    random_body,
    random_hex,
    random_token,
)

_B = r"(?<![A-Za-z0-9_-])"  # a token starts here
_E = r"(?![A-Za-z0-9_-])"  # and ends here

# Simple prefixed tokens: (kind, the whole token with its body in a `secret` group, is hex).
# The body is what must look random; the prefix alone says which provider issued it.
_PREFIXED: tuple[tuple[str, str, bool], ...] = (
    ("GitHub token", r"gh[pousr]_(?P<secret>[A-Za-z0-9]{36,251})", False),
    ("GitHub token", r"github_pat_(?P<secret>\w{70,244})", False),
    ("npm token", r"npm_(?P<secret>[A-Za-z0-9]{36})", False),
    ("Hugging Face token", r"hf_(?P<secret>[A-Za-z0-9]{30,40})", False),
    ("Docker access token", r"dckr_pat_(?P<secret>[A-Za-z0-9_-]{24,})", False),
    ("Shopify token", r"shp(?:at|ss|ca|pa)_(?P<secret>[a-fA-F0-9]{32})", True),
    ("DigitalOcean token", r"do[opr]_v1_(?P<secret>[a-f0-9]{64})", True),
    ("Vault token", r"hv[sbr]\.(?P<secret>[A-Za-z0-9_-]{24,})", False),
    ("Atlassian API token", r"ATATT(?P<secret>[A-Za-z0-9_=-]{40,})", False),
    ("Heroku API key", r"HRKU-(?P<secret>[A-Za-z0-9_-]{30,})", False),
    ("Stripe webhook secret", r"whsec_(?P<secret>[A-Za-z0-9+/]{24,})", False),
    ("Google OAuth client secret", r"GOCSPX-(?P<secret>[A-Za-z0-9_-]{24,})", False),
    ("Google OAuth access token", r"ya29\.(?P<secret>[A-Za-z0-9_-]{30,})", False),
    ("Grafana token", r"gl(?:sa|c)_(?P<secret>[A-Za-z0-9_+/]{32,}={0,2})", False),
    ("Linear API key", r"lin_api_(?P<secret>[A-Za-z0-9]{40})", False),
    ("Postman API key", r"PMAK-(?P<secret>[a-f0-9]{24}-[a-f0-9]{34})", True),
    ("New Relic key", r"NR(?:AK|AA|II)-(?P<secret>[A-Z0-9]{27})", False),
    ("Notion token", r"(?:ntn_|secret_)(?P<secret>[A-Za-z0-9]{40,46})", False),
    ("Pulumi token", r"pul-(?P<secret>[a-f0-9]{40})", True),
    ("Doppler token", r"dp\.(?:pt|st|sa|ct|scim)\.(?P<secret>[A-Za-z0-9]{40,44})", False),
    ("Databricks token", r"dapi(?P<secret>[a-f0-9]{32})(?:-\d)?", True),
    ("Supabase token", r"sbp_(?P<secret>[a-f0-9]{40})", True),
    ("Sentry token", r"sntr[ysu]_(?P<secret>[A-Za-z0-9+/=_]{40,})", False),
    ("age secret key", r"AGE-SECRET-KEY-1(?P<secret>[02-9AC-HJ-NP-Z]{58})", False),
    ("Mailgun API key", r"key-(?P<secret>[0-9a-zA-Z]{32})", False),
    ("Twilio key", r"(?:SK|AC)(?P<secret>[0-9a-fA-F]{32})", True),
    ("Mailchimp API key", r"(?P<secret>[0-9a-f]{32})-us\d{1,2}", True),
    ("Square token", r"sq0(?:atp|csp)-(?P<secret>[A-Za-z0-9_-]{22,43})", False),
    (
        "Braintree access token",
        r"access_token\$production\$(?P<secret>[a-z0-9]{16}\$[a-f0-9]{32})",
        False,
    ),
    ("Azure AD client secret", r"[A-Za-z0-9_~.-]{3}\dQ~(?P<secret>[A-Za-z0-9_~.-]{31,34})", False),
)


def _random_mixed(text: str, _match: re.Match[str]) -> bool:
    return looks_random(text) and has_digit_and_letter(text)


def _token(kind: str, body: str, accept: Accept = _random_mixed) -> Rule:
    """A rule for a token standing on its own: `body` bounded by what cannot be part of it."""
    return Rule(kind, re.compile(_B + body + _E), accept)


def _prefixed_rules() -> tuple[Rule, ...]:
    return tuple(
        _token(kind, body, random_hex if is_hex else _random_mixed)
        for kind, body, is_hex in _PREFIXED
    )


def _random_no_example(text: str, _match: re.Match[str]) -> bool:
    # AWS documentation keys (AKIAIOSFODNN7EXAMPLE) end in EXAMPLE; they are not secrets.
    return "EXAMPLE" not in text and looks_random(text, min_distinct=6)


def _jwt(text: str, _match: re.Match[str]) -> bool:
    header = text.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (ValueError, binascii.Error):
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


_AWS_CONTEXT = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|(?i:(?<![a-z])aws(?![a-z]).{0,40}secret|secret.{0,40}(?<![a-z])aws(?![a-z]))",
    re.DOTALL,
)
_AWS_NEAR = 240


def _aws_secret_in_prose(text: str, match: re.Match[str]) -> bool:
    """Forty base64 characters of every class, with an AWS key id or the words nearby."""
    classes = (str.isupper, str.islower, str.isdigit)
    if not all(any(test(c) for c in text) for test in classes):
        return False
    if not _random_no_example(text, match):
        return False
    start, end = match.span()
    around = match.string[max(0, start - _AWS_NEAR) : end + _AWS_NEAR]
    return _AWS_CONTEXT.search(around) is not None


def _sas_signature(text: str, _match: re.Match[str]) -> bool:
    return looks_random(unquote(text))


def _basic_auth(text: str, _match: re.Match[str]) -> bool:
    """`Basic <base64 of user:password>` with a password that is not a stand-in."""
    try:
        decoded = base64.b64decode(text + "=" * (-len(text) % 4), validate=True).decode("utf-8")
    except (ValueError, binascii.Error):
        return False
    user, colon, password = decoded.partition(":")
    if not colon or len(password) < 4 or password.lower() == user.lower():
        return False
    return password[0] not in "$%{<[" and password.lower() not in _STAND_IN_PASSWORDS


SHAPES: tuple[Rule, ...] = (
    Rule(
        "private key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[nr])*"
            # header lines (`Proc-Type: ...`), each ended by one line break, so a line of many
            # `a:` cannot be split into headers in exponentially many ways
            r"(?:[A-Za-z][A-Za-z-]*:[^\n\\]*(?:\n|\\[nr])(?:\s|\\[nr])*)*"
            r"(?P<secret>[A-Za-z0-9+/=]{32,})"
        ),
        random_body,
    ),
    Rule(
        "AWS access key id",
        re.compile(
            r"(?<![A-Za-z0-9])(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])"
        ),
        _random_no_example,
    ),
    Rule(
        "AWS secret access key",
        re.compile(
            r"(?<![A-Za-z0-9])(?i:aws_?secret(?:_?access)?(?:_?key)?)[\"']?\s*(?::=|=>|=|:)\s*"
            r"[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        _random_no_example,
    ),
    _token(
        "GitLab token",
        r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|oas|agent)-"
        r"(?P<secret>[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*)",
        random_body,
    ),
    _token("Anthropic API key", r"sk-ant-(?P<secret>[A-Za-z0-9_-]{32,})", random_token),
    _token(
        "OpenAI API key",
        r"sk-(?:(?:proj|svcacct|admin|None)-)?(?P<secret>[A-Za-z0-9_-]{20,})",
        random_token,
    ),
    _token("Slack token", r"(?:xox[abposre]|xapp)-(?P<secret>[A-Za-z0-9-]{20,})"),
    Rule(
        "Slack webhook URL",
        re.compile(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/-]{20,})"
        ),
        random_body,
    ),
    Rule(
        "Microsoft Teams webhook URL",
        # the Power Automate kind is signed with `sig=`, which the SAS rule finds
        re.compile(r"\.webhook\.office\.com/webhookb2/(?P<secret>[A-Za-z0-9@/-]{40,})"),
        lambda s, m: looks_random(s.replace("-", "")),
    ),
    Rule(
        "Discord webhook URL",
        re.compile(r"discord(?:app)?\.com/api/webhooks/\d{5,}/(?P<secret>[A-Za-z0-9_-]{40,})"),
        random_body,
    ),
    Rule(
        "Stripe secret key",
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_(?P<secret>[A-Za-z0-9]{20,})" + _E),
        random_token,
    ),
    _token("Google API key", r"AIza(?P<secret>[A-Za-z0-9_-]{35})", random_body),
    _token("PyPI token", r"(?P<secret>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})", random_body),
    _token(
        "SendGrid API key", r"(?P<secret>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})", random_body
    ),
    Rule(
        "Telegram bot token",
        re.compile(r"(?:(?<=/bot)|(?<![\w:]))\d{8,10}:(?P<secret>[A-Za-z0-9_-]{35})" + _E),
        _random_mixed,
    ),
    _token(
        "Discord bot token",
        r"(?P<secret>[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})",
    ),
    *_prefixed_rules(),
    _token(
        "JSON Web Token",
        r"(?P<secret>eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{16,})",
        _jwt,
    ),
    Rule(
        "Azure storage account key",
        re.compile(
            r"(?<![A-Za-z0-9])(?i:AccountKey|SharedAccessKey|PrimaryKey|SecondaryKey)\s*=\s*"
            r"(?P<secret>[A-Za-z0-9+/]{30,}={0,2})"
        ),
        random_body,
    ),
    Rule(
        "Azure SAS signature",
        re.compile(r"(?<![A-Za-z0-9_])sig=(?P<secret>(?:[A-Za-z0-9+/]|%[0-9A-Fa-f]{2}){30,})"),
        _sas_signature,
    ),
    Rule(
        "basic auth credentials",
        re.compile(r"(?i:\bBasic)[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        _basic_auth,
    ),
    Rule(
        "password in a URL",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s:/?#@\[\]]*):"
            r"(?P<secret>[^\s/?#]+)@[A-Za-z0-9\[][^\s/?#@]*"
        ),
        _url_password,
    ),
    Rule(
        "AWS secret access key",
        re.compile(r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _aws_secret_in_prose,
    ),
)
