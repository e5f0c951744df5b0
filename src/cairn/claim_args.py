"""The arguments of a remember call, checked one by one: each check raises an error that says
what was wrong and what to give instead, before anything is written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.errors import InvalidInput, UnknownType
from cairn.models import DURABILITIES, MEMORY_TYPES, default_durability
from cairn.refusal import check_strings, safe_echo
from cairn.timeutil import parse_when


def validate_type(value: object) -> str:
    name = value.strip().lower() if isinstance(value, str) else ""
    if name not in MEMORY_TYPES:
        raise UnknownType(
            f"type {safe_echo(value)} is not one of the ten memory types: "
            f"{', '.join(MEMORY_TYPES)}. "
            "Pick the closest (a durable truth is a fact; a rule is a constraint)."
        )
    return name


def refuse_secrets_in(args: Mapping[str, Any]) -> None:
    """Every text of the call, as given: before it is stripped, lowercased (tags), collapsed or
    cut (summary), parsed (occurred_at, scope, session_id) or echoed in an error."""
    for name in sorted(args, key=lambda n: (n != "content", n)):
        check_strings(args[name], field=name)


def ref_list(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{name} must be a list of memory refs such as ['mem_12'].")
    return list(value)


def optional_text(args: Mapping[str, Any], name: str) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, got {type(value).__name__}.")
    return value.strip() or None


def weight_of(value: object) -> float:
    if value is None:
        return 0.5
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidInput(f"weight {value!r} is out of range; give a number from 0 to 1.")
    return float(value)


def durability_of(value: object, mtype: str) -> str:
    if value is None:
        return default_durability(mtype)
    if value not in DURABILITIES:
        raise InvalidInput(
            f"durability {safe_echo(value)} is not one of {', '.join(DURABILITIES)}; omit it to "
            f"use the default for {mtype} ({default_durability(mtype)})."
        )
    return str(value)


def occurred_of(value: object) -> datetime | None:
    if value is None or value == "":
        return None
    if not isinstance(value, (str, datetime)):
        raise InvalidInput("occurred_at must be an RFC 3339 timestamp such as 2026-08-26T09:30Z.")
    return parse_when(value, field="occurred_at", end_of_day=False)


def embedding_of(value: object) -> tuple[float, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise InvalidInput("embedding must be a non-empty list of numbers.")
    try:
        return tuple(float(x) for x in value)
    except (TypeError, ValueError):
        raise InvalidInput("embedding must be a list of numbers only.") from None
