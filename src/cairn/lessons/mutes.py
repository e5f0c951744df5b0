"""Mute rules: per-scope silences for lessons, by memory type, tag or path.

`cairn lessons mute --type warning` stops warnings arriving as lessons in the scope;
`--tag flaky` stops memories tagged `flaky`; `--path 'docs/**'` stops lessons on calls that
touch a path under `docs/` (and lessons about memories citing one). A rule made in `global`
applies in every scope. Rules only silence lessons: recall, the brief and everything else
still show the memories. `activate`'s brief lists the rules that apply, so an agent knows what
it will not be told.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cairn.errors import InvalidInput
from cairn.lessons.models import MUTE_KINDS
from cairn.lessons.paths import glob_match
from cairn.models import MEMORY_TYPES
from cairn.records.lessons import MuteRule
from cairn.refusal import check_no_secrets, safe_echo
from cairn.tags import normalise_tags

MUTABLE_TYPES: tuple[str, ...] = (*MEMORY_TYPES, "procedure")
MAX_PATH_CHARS = 300


def check_rule(kind: str, value: object) -> tuple[str, str]:
    """The rule's kind and normalised value, or InvalidInput saying how to write one."""
    if kind not in MUTE_KINDS:
        raise InvalidInput(f"a mute rule is by {', '.join(MUTE_KINDS)}; {kind!r} is none of them.")
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"a mute rule by {kind} needs a value, e.g. {_example(kind)}.")
    check_no_secrets(value, field=kind)  # the rule is stored and listed
    text = value.strip()
    if kind == "type":
        lowered = text.lower()
        if lowered not in MUTABLE_TYPES:
            raise InvalidInput(
                f"{safe_echo(text)} is not a memory type; mute one of {', '.join(MUTABLE_TYPES)}."
            )
        return kind, lowered
    if kind == "tag":
        return kind, normalise_tags([text])[0]
    return kind, _check_path(text)


def _check_path(text: str) -> str:
    path = text.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    if path.startswith(("/", "~")) or len(path) > MAX_PATH_CHARS or ".." in path.split("/"):
        raise InvalidInput(
            f"mute path {safe_echo(text)} must be a path or glob relative to the repository root, "
            "e.g. 'docs/**' or 'migrations/*.sql'."
        )
    return path


def _example(kind: str) -> str:
    return {"type": "--type warning", "tag": "--tag flaky", "path": "--path 'docs/**'"}[kind]


def muting_rule(
    rules: Sequence[MuteRule], *, type: str, tags: Iterable[str], paths: Iterable[str | None]
) -> MuteRule | None:
    """The first rule that silences a lesson of this type, with these tags, on these paths."""
    tag_set = set(tags)
    path_list = [p for p in paths if p]
    for rule in rules:
        if rule.kind == "type" and rule.value == type:
            return rule
        if rule.kind == "tag" and rule.value in tag_set:
            return rule
        if rule.kind == "path" and any(glob_match(rule.value, p) for p in path_list):
            return rule
    return None
