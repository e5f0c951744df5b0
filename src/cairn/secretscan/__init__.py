"""Secret detection: what `remember` (and every other write) refuses, and what the event log
redacts. `cairn.refusal` is the public face; these modules hold the rules.

- `shapes`: provider prefixes, key blocks, signed tokens, URLs with a password.
- `assigned`: values assigned to secret names (`KEY=value`, YAML, JSON, XML).
- `commands`: passwords on command lines, in `.netrc` and `.pgpass`, and keys stated in prose.
- `normalise`: the views that undo disguises (invisible characters, wrapped lines, base64).
- `scan`: running the rules, redacting, and describing a value without repeating it.
"""

from cairn.secretscan.assigned import is_password_value, is_secret_name, is_secret_value
from cairn.secretscan.base import shannon_entropy
from cairn.secretscan.scan import (
    KINDS,
    SecretFinding,
    find_secrets,
    kind_slug,
    redact,
    safe_echo,
    secret_spans,
    with_article,
)

__all__ = [
    "KINDS",
    "SecretFinding",
    "find_secrets",
    "is_password_value",
    "is_secret_name",
    "is_secret_value",
    "kind_slug",
    "redact",
    "safe_echo",
    "secret_spans",
    "shannon_entropy",
    "with_article",
]
