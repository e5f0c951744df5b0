"""`cairn bench locomo --per-question FILE` and `cairn bench locomo-diff A B`.

One JSON line per question asked, ordered by conversation and the question's index in the
data file's `qa` list, so two runs line up and `diff` (or `locomo-diff`) shows what moved.
Memories are named by the dia_ids they point to, not by their refs, which differ per run.
Scores are rounded to 4 places: recency is measured from the wall clock, so the same ranking
run minutes apart moves scores in the sixth place.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cairn.bench.locomo_metrics import evidence_ranks, turn_recall
from cairn.bench.locomo_report import Asked
from cairn.errors import InvalidInput

FIELDS = (
    "conversation",
    "index",
    "category",
    "question",
    "evidence",
    "retrieved",
    "recall@5",
    "recall@10",
    "evidence_rank",
)


def question_line(row: Asked) -> dict[str, Any]:
    """The record of one question (recall and ranks are null when it has no evidence)."""
    has = bool(row.evidence)
    return {
        "conversation": row.conversation,
        "index": row.index,
        "category": row.category,
        "question": row.question,
        "evidence": list(row.evidence),
        "retrieved": [
            {"ids": list(ids), "score": round(score, 4)}
            for ids, score in zip(row.found, row.scores, strict=True)
        ],
        "recall@5": round(turn_recall(row.found, row.evidence, 5), 4) if has else None,
        "recall@10": round(turn_recall(row.found, row.evidence, 10), 4) if has else None,
        "evidence_rank": evidence_ranks(row.found, row.evidence),
    }


def _order(row: Asked) -> tuple[int, str, int]:
    # Numeric conversation names ("26", "30") sort as numbers, any other name after them.
    name = row.conversation
    return (0, f"{int(name):012d}", row.index) if name.isdigit() else (1, name, row.index)


def write_per_question(rows: Sequence[Asked], path: Path) -> None:
    lines = [json.dumps(question_line(r), ensure_ascii=False) for r in sorted(rows, key=_order)]
    try:
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    except OSError as err:
        raise InvalidInput(f"cannot write {path}: {err.strerror}; pass a writable path.") from None


def read_per_question(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """A --per-question file by (conversation, index); refuses anything else."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidInput(f"cannot read {path}: {err}; pass a --per-question file.") from None
    out: dict[tuple[str, int], dict[str, Any]] = {}
    # Split on newlines only: a question may hold U+0085 or U+2028, which splitlines() breaks.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if not isinstance(record, dict) or any(f not in record for f in FIELDS):
            raise InvalidInput(
                f"{path} line {number} is not a --per-question record; "
                "pass files written by `cairn bench locomo --per-question`."
            )
        key = (str(record["conversation"]), _index(record["index"], path, number))
        if key in out:
            raise InvalidInput(f"{path} line {number} repeats question {key[0]}#{key[1]}.")
        out[key] = record
    return out


def _index(value: object, path: Path, number: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{path} line {number}: index must be an integer.")
    return value


def _recall(record: dict[str, Any], k: int) -> float | None:
    value = record.get(f"recall@{k}")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def diff(
    before: dict[tuple[str, int], dict[str, Any]],
    after: dict[tuple[str, int], dict[str, Any]],
    k: int = 10,
) -> dict[str, Any]:
    """Questions whose recall@k rose or fell from `before` to `after`, biggest move first."""
    if k not in (5, 10):
        raise InvalidInput(f"k={k}: the per-question files hold recall@5 and recall@10.")
    moved: list[dict[str, Any]] = []
    for key in sorted(before.keys() & after.keys()):
        old, new = _recall(before[key], k), _recall(after[key], k)
        if old is None or new is None or old == new:
            continue
        moved.append(
            {
                "conversation": key[0],
                "index": key[1],
                "category": after[key]["category"],
                "question": after[key]["question"],
                "before": old,
                "after": new,
            }
        )
    moved.sort(key=lambda m: (-abs(m["after"] - m["before"]), m["conversation"], m["index"]))
    return {
        "k": k,
        "compared": len(before.keys() & after.keys()),
        "better": [m for m in moved if m["after"] > m["before"]],
        "worse": [m for m in moved if m["after"] < m["before"]],
        "only_before": [f"{c}#{i}" for c, i in sorted(before.keys() - after.keys())],
        "only_after": [f"{c}#{i}" for c, i in sorted(after.keys() - before.keys())],
    }


def render_diff(result: dict[str, Any]) -> str:
    k = result["k"]
    lines = [
        f"{result['compared']} questions in both files; recall@{k} better for "
        f"{len(result['better'])}, worse for {len(result['worse'])}"
    ]
    for title in ("better", "worse"):
        if result[title]:
            lines += ["", f"{title}:"]
            lines += [
                f"  {m['conversation']}#{m['index']} (category {m['category']}) "
                f"{m['before']:.2f} -> {m['after']:.2f}  {m['question']}"
                for m in result[title]
            ]
    for title in ("only_before", "only_after"):
        if result[title]:
            lines += ["", f"{title.replace('_', ' ')}: {', '.join(result[title])}"]
    return "\n".join(lines)
