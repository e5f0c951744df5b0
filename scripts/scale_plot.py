"""Draw docs/scale.png from `cairn bench scale --json` reports: recall latency against store size.

    python scripts/scale_plot.py sqlite.json postgres.json [more.json ...]

Each backend's recall median (p95 as a bar) at each size, reports of one backend merged; the
numpy exact nearest-10 over the same vectors, timed in the same run, is drawn as the floor. Log
axes on both sides, so a flat line is a cost that does not grow with the store.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: write the file only
import matplotlib.pyplot as plt

OUT = Path(__file__).resolve().parent.parent / "docs" / "scale.png"
LABELS = {"sqlite": "cairn on SQLite", "postgres": "cairn on PostgreSQL + pgvector"}


def _merged(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One report per backend: a later report adds the sizes the earlier ones lack (a 1M run
    beside a 1k-100k run)."""
    found: dict[str, dict[int, dict[str, Any]]] = {}
    for report in reports:
        runs = found.setdefault(report["backend"], {})
        for run in report["runs"]:
            runs.setdefault(int(run["memories"]), run)
    return [{"backend": name, "runs": list(runs.values())} for name, runs in found.items()]


def _series(report: dict[str, Any], part: str) -> tuple[list[int], list[float], list[float]]:
    runs = sorted(report["runs"], key=lambda run: run["memories"])
    sizes = [int(run["memories"]) for run in runs]
    medians = [float(run[part]["median_ms"]) for run in runs]
    p95 = [float(run[part]["p95_ms"]) for run in runs]
    return sizes, medians, p95


def draw(reports: list[dict[str, Any]], out: Path = OUT) -> Path:
    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=120)
    floors: dict[int, float] = {}
    for report in _merged(reports):
        sizes, medians, p95 = _series(report, "recall")
        errors = [[0.0] * len(sizes), [high - mid for mid, high in zip(medians, p95, strict=True)]]
        label = LABELS.get(report["backend"], report["backend"])
        axes.errorbar(sizes, medians, yerr=errors, marker="o", capsize=3, label=label)
        for size, floor in zip(*_series(report, "numpy_exact_floor")[:2], strict=True):
            floors[size] = min(floor, floors.get(size, floor))
    if floors:
        sizes = sorted(floors)
        axes.plot(sizes, [floors[s] for s in sizes], "k--", marker=".", label="numpy exact floor")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("memories in the store")
    axes.set_ylabel("recall latency, ms (median; bar to p95)")
    axes.set_title("recall latency against store size (query embedding included)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(out)
    plt.close(figure)
    return out


def main(paths: list[str]) -> None:
    if not paths:
        raise SystemExit("usage: python scripts/scale_plot.py REPORT.json [REPORT.json ...]")
    reports = [json.loads(Path(path).read_text(encoding="utf-8")) for path in paths]
    print(f"wrote {draw(reports)}")


if __name__ == "__main__":
    main(sys.argv[1:])
