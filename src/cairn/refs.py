"""Refs name records outside the core: `mem_12`, `evt_40`, `ret_40`, `ses_...`."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cairn.errors import InvalidRef
from cairn.refusal import safe_echo

_REF = re.compile(r"^(mem|evt|ret|ep|proc|doc|act|tidy)_(\d{1,18})$")


def parse_ref(ref: str, *, kind: str) -> int:
    """The number of a ref of the given kind; InvalidRef (saying the expected form) otherwise."""
    match = _REF.match(ref.strip()) if isinstance(ref, str) else None
    if not match or match[1] != kind:
        raise InvalidRef(
            f"{safe_echo(ref)} is not a {kind} ref; {kind} refs look like {kind}_12 (as returned "
            "by remember and recall)."
        )
    return int(match[2])


def try_parse_ref(ref: str, *, kind: str) -> int | None:
    try:
        return parse_ref(ref, kind=kind)
    except InvalidRef:
        return None


def memory_ref(memory_id: int) -> str:
    return f"mem_{memory_id}"


def event_ref(event_id: int) -> str:
    return f"evt_{event_id}"


def parse_memory_refs(refs: Iterable[str]) -> list[int]:
    return [parse_ref(ref, kind="mem") for ref in refs]
