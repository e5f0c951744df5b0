"""scripts/scale_plot.py: the recall-vs-size plot of docs/benchmarks.md, from bench reports."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "scale_plot.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scale_plot", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _report(backend: str, factor: float) -> dict[str, object]:
    def timing(ms: float) -> dict[str, float]:
        return {"median_ms": ms, "p95_ms": 1.5 * ms, "n": 3}

    runs = [
        {"memories": n, "recall": timing(factor * n**0.3), "numpy_exact_floor": timing(n / 1e4)}
        for n in (1000, 10000, 100000)
    ]
    return {"backend": backend, "runs": runs}


def test_the_plot_is_written_as_a_png(tmp_path: Path) -> None:
    out = _script().draw([_report("sqlite", 1.0), _report("postgres", 2.0)], tmp_path / "s.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_reports_of_one_backend_merge_into_one_series() -> None:
    merged = _script()._merged([_report("sqlite", 1.0), _report("sqlite", 9.0)])
    (only,) = merged
    assert sorted(run["memories"] for run in only["runs"]) == [1000, 10000, 100000]
    assert only["runs"][0]["recall"]["median_ms"] == pytest.approx(1000**0.3)  # first one kept


def test_no_report_is_a_usage_line() -> None:
    with pytest.raises(SystemExit, match="usage"):
        _script().main([])
