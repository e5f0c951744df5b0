"""Date awareness: a query that names a time lifts the memories that occurred then.

"What did we decide on 3 March 2026?", "the outage in July 2025", "what changed last week":
the words that name the time rarely appear in the memory itself ("we rolled back the deploy"),
so neither BM25 nor the embedding can use them. The memory's `occurred_at` can. A query's time
expressions are turned into UTC day ranges and a memory whose `occurred_at` falls inside one
(or up to `GRACE` after it: a memory is often written a few days after the event it records -
"last Friday we ...") gets the recipe's `date_lift` (×1.25). It is a lift, not a filter: a
memory from another day can still win on relevance, and `since`/`until` remain the way to
filter.

Understood, in English, case-insensitive:

- a day: `2026-03-03`, `3 March 2026`, `3rd of March, 2026`, `March 3, 2026`;
- a month: `2026-03`, `March 2026`, and a month on its own after a preposition ("in June",
  "since March") - every such month of the last ten years, since the year is left open;
- a year: `2025`;
- relative to now: today, yesterday, this/last week, this/last month, this/last year.

Measured on LoCoMo (85 of 760 questions name a date), the lift moved recall@10 from 0.792 to
0.805 with no loss elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

GRACE = timedelta(days=7)
OPEN_MONTH_YEARS = 10

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" + (
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"
_PATTERNS_DAY = (
    re.compile(rf"\b{_YEAR}-(\d\d)-(\d\d)\b"),
    re.compile(rf"\b{_DAY}(?: of)? {_MONTH}\.?,? {_YEAR}\b"),
    re.compile(rf"\b{_MONTH}\.? {_DAY},? {_YEAR}\b"),
)
_ISO_MONTH = re.compile(rf"\b{_YEAR}-(\d\d)\b(?!-\d)")
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\.?,? {_YEAR}\b")
_OPEN_MONTH = re.compile(
    rf"\b(?:in|during|since|until|before|after|of|early|late|mid|last|past) {_MONTH}\b"
    rf"(?!\.?,? (?:\d{{1,2}}\b|{_YEAR[1:-1]}))"
)
_YEAR_ALONE = re.compile(rf"(?<![\d.-]){_YEAR}(?![\d-]|\.\d)")
_RELATIVE = re.compile(r"\b(today|yesterday|(?:this|last|past) (?:week|month|year))\b")

DayRange = tuple[date, date]


def query_ranges(text: str, now: datetime) -> list[DayRange]:
    """The day ranges (inclusive) a query names, most specific kind first; [] for none."""
    lowered = " ".join(text.lower().split())
    days = _days(lowered)
    if days:
        return days
    months = _months(lowered, now)
    if months:
        return months
    years = [(date(int(y), 1, 1), date(int(y), 12, 31)) for y in _YEAR_ALONE.findall(lowered)]
    return years + _relative(lowered, now)


def occurred_within(occurred_at: datetime, ranges: Sequence[DayRange]) -> bool:
    """Whether `occurred_at` falls in one of the ranges, or at most `GRACE` after it."""
    day = occurred_at.astimezone(UTC).date()
    return any(start <= day <= end + GRACE for start, end in ranges)


def _month_number(name: str) -> int:
    return _MONTHS.index(name[:3]) + 1


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _month_range(year: int, month: int) -> DayRange:
    following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return date(year, month, 1), following - timedelta(days=1)


def _days(text: str) -> list[DayRange]:
    found: list[date | None] = []
    iso, day_month, month_day = _PATTERNS_DAY
    found += [_valid(int(y), int(m), int(d)) for y, m, d in iso.findall(text)]
    found += [_valid(int(y), _month_number(m), int(d)) for d, m, y in day_month.findall(text)]
    found += [_valid(int(y), _month_number(m), int(d)) for m, d, y in month_day.findall(text)]
    return [(day, day) for day in dict.fromkeys(found) if day is not None]


def _months(text: str, now: datetime) -> list[DayRange]:
    ranges = [
        _month_range(int(y), int(m)) for y, m in _ISO_MONTH.findall(text) if 1 <= int(m) <= 12
    ]
    ranges += [_month_range(int(y), _month_number(m)) for m, y in _MONTH_YEAR.findall(text)]
    for name in _OPEN_MONTH.findall(text):
        month = _month_number(name)
        ranges += [_month_range(now.year - back, month) for back in range(OPEN_MONTH_YEARS + 1)]
    return list(dict.fromkeys(ranges))


def _relative(text: str, now: datetime) -> list[DayRange]:
    today = now.astimezone(UTC).date()
    out: list[DayRange] = []
    for phrase in _RELATIVE.findall(text):
        if phrase == "today":
            out.append((today, today))
        elif phrase == "yesterday":
            out.append((today - timedelta(days=1), today - timedelta(days=1)))
        elif phrase.endswith("week"):
            monday = today - timedelta(days=today.weekday())
            start = monday if phrase.startswith("this") else monday - timedelta(days=7)
            out.append((start, start + timedelta(days=6)))
        elif phrase.endswith("month"):
            year, month = today.year, today.month
            if not phrase.startswith("this"):
                year, month = (year - 1, 12) if month == 1 else (year, month - 1)
            out.append(_month_range(year, month))
        else:
            year = today.year if phrase.startswith("this") else today.year - 1
            out.append((date(year, 1, 1), date(year, 12, 31)))
    return out
