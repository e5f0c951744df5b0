"""LoCoMo data: the conversations, sessions and questions of a data file or folder.

Two layouts are read: our per-conversation files (`../shared/bench/locomo/26.json`: one
conversation, observations beside the sessions) and LoCoMo's own `locomo10.json` (a list of
samples with `sample_id`, `conversation`, `qa`, and `observation` holding the observations).
A sample `conv-26` is named `26`, like the file `26.json`, so runs over either line up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cairn.errors import InvalidInput

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)")
_DATE = re.compile(
    r"(\d{1,2}):(\d\d)\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.IGNORECASE
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]
    index: int = 0  # its place in the data file's `qa` list
    listed: tuple[str, ...] = ()  # the evidence entries as the file lists them


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    occurred_at: datetime | None
    turns: tuple[dict[str, Any], ...]
    observations: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    name: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]  # categories 1-4 with evidence: the bench's own figures
    others: tuple[Question, ...] = ()  # category 5, and any without evidence


def parse_session_date(text: str) -> datetime | None:
    """'1:56 pm on 8 May, 2023' as a UTC datetime; None when the text is not such a date."""
    match = _DATE.search(text or "")
    if match is None:
        return None
    hour, minute, half, day, month, year = match.groups()
    if month[:3].lower() not in _MONTHS:
        return None
    hours = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    month_number = _MONTHS.index(month[:3].lower()) + 1
    try:
        return datetime(int(year), month_number, int(day), hours, int(minute), tzinfo=UTC)
    except ValueError:  # '31 February', '1:75 pm': no such moment
        return None


def evidence_ids(raw: Sequence[str]) -> tuple[str, ...]:
    """dia_ids of a question's evidence ('D8:6; D9:17' and other spellings are split)."""
    found = [d for item in raw for d in _DIA.findall(str(item))]
    return tuple(dict.fromkeys(found))


def load_conversations(data: Path, only: Sequence[str] | None = None) -> list[Conversation]:
    """The conversations of a data file or folder (see the module docstring for layouts)."""
    files = [data] if data.is_file() else sorted(data.glob("*.json"))
    if not files:
        raise InvalidInput(f"no LoCoMo .json files in {data}; pass --data the folder holding them.")
    out: list[Conversation] = []
    for path in files:
        for name, raw in _samples(path):
            if only is not None and name not in only:
                continue
            if any(c.name == name for c in out):
                raise InvalidInput(
                    f"conversation {name} appears twice under {data}; keep one copy of it."
                )
            out.append(_conversation(name, raw))
    return out


def _samples(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(name, sample) pairs of one file: a single conversation, or locomo10.json's list."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidInput(f"cannot read {path} as JSON ({err}); pass LoCoMo data.") from None
    if isinstance(raw, dict):
        return [(path.stem, raw)]
    if isinstance(raw, list) and all(isinstance(item, dict) for item in raw):
        return [(_sample_name(item, path, i), item) for i, item in enumerate(raw)]
    raise InvalidInput(f"{path} holds neither a conversation nor a list of LoCoMo samples.")


def _sample_name(item: dict[str, Any], path: Path, position: int) -> str:
    name = str(item.get("sample_id", f"{path.stem}-{position}"))
    return name.removeprefix("conv-")


def _conversation(name: str, raw: dict[str, Any]) -> Conversation:
    body = raw.get("conversation", raw)
    if not isinstance(body, dict):
        raise InvalidInput(f"conversation {name}: `conversation` is not an object.")
    numbers = sorted(
        int(m.group(1))
        for key in body
        if (m := _SESSION.fullmatch(key)) and isinstance(body[key], list)
    )
    # Observations sit beside the sessions in the shared files, under `observation` in
    # locomo10.json.
    found = raw.get("observation")
    nested: dict[str, Any] = found if isinstance(found, dict) else {}
    sessions = []
    for n in numbers:
        observed = raw.get(f"session_{n}_observation") or nested.get(f"session_{n}_observation")
        date = parse_session_date(str(body.get(f"session_{n}_date_time", "")))
        turns = tuple(
            t
            for t in body[f"session_{n}"]
            if isinstance(t, dict) and {"dia_id", "speaker"} <= t.keys()
        )
        sessions.append(Session(n, date, turns, _observations(observed)))
    asked = _questions(name, raw.get("qa"))
    main = tuple(q for q in asked if q.category in CATEGORIES and q.evidence)
    others = tuple(q for q in asked if not (q.category in CATEGORIES and q.evidence))
    return Conversation(name, tuple(sessions), main, others)


def _observations(observed: object) -> tuple[tuple[str, tuple[str, ...]], ...]:
    facts: list[tuple[str, tuple[str, ...]]] = []
    for items in observed.values() if isinstance(observed, dict) else ():
        for item in items if isinstance(items, list) else ():
            if isinstance(item, list) and len(item) >= 2:
                ids = item[1] if isinstance(item[1], list) else [item[1]]
                facts.append((str(item[0]), evidence_ids([str(i) for i in ids])))
    return tuple(facts)


def _questions(name: str, qa: object) -> list[Question]:
    out = []
    for index, q in enumerate(qa if isinstance(qa, list) else []):
        if not isinstance(q, dict) or not str(q.get("question") or "").strip():
            continue
        try:
            category = int(q.get("category", 0))
        except (TypeError, ValueError, OverflowError):
            raise InvalidInput(f"conversation {name}, question {index}: bad category.") from None
        raw = q.get("evidence") or []
        listed = tuple(str(e) for e in raw) if isinstance(raw, list) else (str(raw),)
        text = str(q["question"])
        out.append(Question(text, category, evidence_ids(listed), index, listed))
    return out
