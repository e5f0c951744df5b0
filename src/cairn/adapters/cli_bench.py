"""`cairn bench ...`: benchmarks anyone can rerun; numbers go to docs/benchmarks.md."""

from __future__ import annotations

import json

import click

from cairn.adapters.cli import reports_errors
from cairn.config import Settings


def _print(result: object, as_json: bool) -> None:
    click.echo(json.dumps(result, indent=2 if not as_json else None, ensure_ascii=False))


@click.group()
def bench() -> None:
    """Measure cairn on this machine."""


@bench.command()
@click.option("--sentences", type=int, default=200, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def embedder(sentences: int, as_json: bool) -> None:
    """Embedder import time, load time and throughput (and the fp32 baseline)."""
    from cairn.bench.embedder import bench_embedder

    _print(bench_embedder(Settings.from_env(), n=sentences), as_json)


@bench.command()
@click.option("--sizes", default="1000,10000", show_default=True, help="Store sizes to measure.")
@click.option("--ops", type=int, default=200, show_default=True, help="Timed calls per size.")
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def scale(sizes: str, ops: int, as_json: bool) -> None:
    """remember and recall latency (median, p95) at growing store sizes."""
    from cairn.bench.scale import bench_scale
    from cairn.embeddings import make_embedder

    counts = [int(s) for s in sizes.split(",") if s.strip()]
    _print(bench_scale(make_embedder(Settings.from_env()), counts, ops), as_json)
