"""The stats page's pictures, drawn on the server as SVG: no chart library, no script.

Every label goes through `escape`, since scope names and types reach here from the store.
Each chart carries a `<title>` and `role="img"` with an `aria-label` that says in words what
it shows, so a screen reader gets the numbers the picture holds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from markupsafe import Markup, escape

from cairn.browse import DayCount

# A calm palette, one colour per memory type (unknown types share the last).
PALETTE = {
    "fact": "#4c78a8",
    "preference": "#f58518",
    "decision": "#54a24b",
    "constraint": "#e45756",
    "instruction": "#72b7b2",
    "warning": "#b279a2",
    "task": "#eeca3b",
    "open_question": "#9d755d",
    "lesson": "#ff9da6",
}
OTHER = "#bab0ac"
CITATION_COLOURS = {"same": "#54a24b", "changed": "#eeca3b", "gone": "#e45756"}
MAX_BARS = 60
MIN_DAYS = 14
WIDTH, HEIGHT, PAD = 640, 220, 32


def timeline(days: Sequence[DayCount]) -> Markup:
    """Stacked bars of memories written per day (per week or month over longer spans)."""
    if not days:
        return _empty("No memories written yet.")
    buckets, unit = _bucketed(days)
    kinds = sorted({d.type for d in days})
    peak = max(sum(b.values()) for _, b in buckets) or 1
    bar = (WIDTH - 2 * PAD) / len(buckets)
    parts: list[str] = []
    for i, (start, counts) in enumerate(buckets):
        y = float(HEIGHT - PAD)
        for kind in kinds:
            n = counts.get(kind, 0)
            if not n:
                continue
            h = (HEIGHT - 2 * PAD) * n / peak
            y -= h
            parts.append(
                f'<rect x="{PAD + i * bar + 1:.1f}" y="{y:.1f}" width="{max(bar - 2, 1):.1f}" '
                f'height="{h:.1f}" fill="{PALETTE.get(kind, OTHER)}">'
                f"<title>{escape(kind)}: {n} ({unit} of {start.isoformat()})</title></rect>"
            )
    total = sum(d.count for d in days)
    axis = (
        f'<text x="{PAD}" y="{HEIGHT - 10}" class="axis">{buckets[0][0].isoformat()}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 10}" class="axis" text-anchor="end">'
        f"{buckets[-1][0].isoformat()}</text>"
        f'<text x="{PAD}" y="{PAD - 10}" class="axis">{peak} per {unit} at most</text>'
    )
    label = f"{total} memories written from {days[0].day} to {days[-1].day}, per {unit}, by type"
    return _svg(label, "".join(parts) + axis, _legend({k: PALETTE.get(k, OTHER) for k in kinds}))


def _bucketed(days: Sequence[DayCount]) -> tuple[list[tuple[date, dict[str, int]]], str]:
    # At least two weeks wide, so one busy day reads as one bar, not as the whole picture.
    last = days[-1].day
    first = min(days[0].day, last - timedelta(days=MIN_DAYS - 1))
    span = (last - first).days + 1
    unit = "day" if span <= MAX_BARS else "week" if span <= MAX_BARS * 7 else "month"
    grouped: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for d in days:
        grouped[_start(d.day, unit)][d.type] += d.count
    starts, cursor = [], _start(first, unit)
    while cursor <= last:
        starts.append(cursor)
        cursor = _next(cursor, unit)
    return [(s, dict(grouped.get(s, {}))) for s in starts], unit


def _start(day: date, unit: str) -> date:
    if unit == "week":
        return day - timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    return day


def _next(day: date, unit: str) -> date:
    if unit == "day":
        return day + timedelta(days=1)
    if unit == "week":
        return day + timedelta(days=7)
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


def rates(recall: Mapping[str, Any]) -> Markup:
    """Hit, used and helped rates as bars from 0 to 100%."""
    rows = [
        ("hit rate", recall.get("hit_rate"), f"{recall.get('with_hits', 0)} of "
         f"{recall.get('recalls', 0)} recalls returned a memory"),
        ("used rate", recall.get("used_rate"), "of those, a returned memory was then used"),
        ("helped rate", recall.get("helped_rate"), f"of {recall.get('with_feedback', 0)} "
         "recalls with feedback, a memory helped"),
    ]  # fmt: skip
    parts, said = [], []
    for i, (name, value, note) in enumerate(rows):
        y = 24 + i * 64
        shown = "no data" if value is None else f"{float(value) * 100:.0f}%"
        said.append(f"{name} {shown}")
        width = 0.0 if value is None else (WIDTH - 2 * PAD) * float(value)
        parts.append(
            f'<text x="{PAD}" y="{y}" class="label">{name}: {shown}</text>'
            f'<rect x="{PAD}" y="{y + 8}" width="{WIDTH - 2 * PAD}" height="16" class="track"/>'
            f'<rect x="{PAD}" y="{y + 8}" width="{width:.1f}" height="16" fill="#4c78a8"/>'
            f'<text x="{PAD}" y="{y + 42}" class="axis">{escape(note)}</text>'
        )
    return _svg("Recall: " + ", ".join(said), "".join(parts), "", height=212)


def citations(health: Mapping[str, Any]) -> Markup:
    """Current citations as one bar split into same, changed and gone (unchecked beside it)."""
    counts = {k: int(health.get(k) or 0) for k in ("same", "changed", "gone")}
    checked = sum(counts.values())
    unchecked = int(health.get("unchecked") or 0)
    label = ", ".join(f"{n} {k}" for k, n in counts.items()) + f"; {unchecked} could not be checked"
    if not checked:
        return _empty(f"No checked citations yet ({unchecked} could not be checked).")
    parts, x = [], float(PAD)
    for kind, n in counts.items():
        w = (WIDTH - 2 * PAD) * n / checked
        if w:
            parts.append(
                f'<rect x="{x:.1f}" y="20" width="{w:.1f}" height="28" '
                f'fill="{CITATION_COLOURS[kind]}"><title>{kind}: {n}</title></rect>'
            )
        x += w
    parts.append(f'<text x="{PAD}" y="72" class="axis">{escape(label)}</text>')
    return _svg("Citation health: " + label, "".join(parts), _legend(CITATION_COLOURS), height=90)


def _legend(colours: Mapping[str, str]) -> str:
    items = "".join(
        f'<li><svg class="swatch" width="12" height="12" aria-hidden="true">'
        f'<rect width="12" height="12" rx="2" fill="{c}"/></svg>{escape(k)}</li>'
        for k, c in colours.items()
    )
    return f'<ul class="legend">{items}</ul>'


def _svg(label: str, body: str, legend: str, *, height: int = HEIGHT) -> Markup:
    title = escape(label)
    return Markup(
        f'<figure class="chart"><svg viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{title}" xmlns="http://www.w3.org/2000/svg"><title>{title}</title>'
        f"{body}</svg>{legend}</figure>"
    )


def _empty(text: str) -> Markup:
    return Markup(f'<p class="empty">{escape(text)}</p>')
