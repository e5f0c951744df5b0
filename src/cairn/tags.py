"""Tags: normalisation, and detection when a caller gives none.

Detection is deliberately conservative: a tag that fires on everything is noise. It takes
explicit markers (`#hashtags`, `code spans`, file names) and a small vocabulary of subjects a
coding agent's memories are usually about.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cairn.errors import InvalidInput
from cairn.refusal import check_no_secrets, safe_echo

MAX_TAGS = 20
MAX_TAG_CHARS = 64
_AUTO_LIMIT = 6

_HASHTAG = re.compile(r"(?<![\w#])#([A-Za-z][\w-]{1,40})")
_PATH = re.compile(r"\b([\w-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|rb|sql|md|toml|yaml|yml|json|sh))\b")
_TOPICS: dict[str, tuple[str, ...]] = {
    "testing": ("test", "tests", "pytest", "unittest", "flaky", "fixture"),
    "database": ("database", "sql", "sqlite", "postgres", "postgresql", "migration", "schema"),
    "api": ("api", "endpoint", "rest", "graphql", "http"),
    "security": ("security", "secret", "token", "auth", "authentication", "password", "cve"),
    "performance": ("performance", "latency", "slow", "throughput", "benchmark", "memory leak"),
    "deploy": ("deploy", "deployment", "release", "rollout", "production", "staging"),
    "ci": ("ci", "pipeline", "github actions", "workflow"),
    "build": ("build", "compile", "dependency", "dependencies", "package", "lockfile"),
    "docs": ("docs", "documentation", "readme"),
    "git": ("git", "branch", "merge", "rebase", "commit"),
}


def normalise_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags lowercased, whitespace collapsed, duplicates dropped. Each is checked for a secret
    as given: lowercased, a token no longer has the shape that gives it away."""
    out: list[str] = []
    for raw in tags:
        if not isinstance(raw, str):
            raise InvalidInput(f"tag {safe_echo(raw)} is not text; pass tags as a list of strings.")
        check_no_secrets(raw, field="tags")
        tag = " ".join(raw.strip().lower().split())
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInput(
                f"a tag is {len(tag)} characters; keep tags under {MAX_TAG_CHARS} (a word or two)."
            )
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"{len(out)} tags given; use at most {MAX_TAGS}.")
    return tuple(out)


def detect_tags(content: str) -> tuple[str, ...]:
    found: list[str] = []
    found.extend(m.lower() for m in _HASHTAG.findall(content))
    found.extend(m.lower() for m in _PATH.findall(content))
    lowered = f" {content.lower()} "
    words = set(re.findall(r"[a-z0-9]+", lowered))
    for topic, cues in _TOPICS.items():
        if any((cue in words) if " " not in cue else (cue in lowered) for cue in cues):
            found.append(topic)
    return normalise_tags(found)[:_AUTO_LIMIT]
