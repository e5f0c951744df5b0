"""Time: one clock seam, exact storage encoding, and parsing of the dates callers pass."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta

from cairn.errors import InvalidInput
from cairn.refusal import refuse_secrets, safe_echo

Clock = Callable[[], datetime]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def system_clock() -> datetime:
    return datetime.now(UTC)


def to_micros(moment: datetime) -> int:
    """Exact integer microseconds since the epoch (floats would drift on round-trips)."""
    delta = as_utc(moment) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def as_utc(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC, as the tools' contract says."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def parse_when(value: str | date | datetime, *, field: str, end_of_day: bool) -> datetime:
    """Parse a date or datetime a caller gave.

    A bare date means the start of that day, or its very end when `end_of_day` (so `as_of`
    answers from what was believed at the end of that day). No zone means UTC.
    """
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return _day_bound(value, end_of_day)
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a date or datetime as text, e.g. 2026-08-01.")
    refuse_secrets(value, field=field)
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field} is blank; give a date like 2026-08-01 or 2026-08-01T14:00Z.")
    if len(text) == 10:
        try:
            return _day_bound(date.fromisoformat(text), end_of_day)
        except ValueError:
            pass
    try:
        return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T", 1)))
    except ValueError:
        raise InvalidInput(
            f"{field}={safe_echo(value)} is not a date or datetime; use ISO 8601 such as "
            "2026-08-01, 2026-08-01T14:00:00Z or 2026-08-01 14:00:00+02:00."
        ) from None


def _day_bound(day: date, end_of_day: bool) -> datetime:
    if end_of_day:
        return datetime.combine(day, time.max, tzinfo=UTC)
    return datetime.combine(day, time.min, tzinfo=UTC)
