"""`cairn bench ...`: benchmarks anyone can rerun; numbers go to docs/benchmarks.md."""

from __future__ import annotations

import json
from pathlib import Path

import click

from cairn.adapters.cli_common import option_group, reports_errors
from cairn.config import Settings


def _print(result: object, as_json: bool) -> None:
    click.echo(json.dumps(result, indent=2 if not as_json else None, ensure_ascii=False))


def _to_stderr(line: str) -> None:
    """A long bench's progress lines, kept off the result on stdout."""
    click.echo(line, err=True)


@click.group()
def bench() -> None:
    """Measure cairn on this machine."""


locomo_data_option = click.option(
    "--data",
    "data",
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder of LoCoMo conversation files (*.json).",
)


# --data (a folder or locomo10.json), --mode and --conversation, for the LoCoMo benches.
locomo_source_options = option_group(
    click.option("--data", "data", required=True, type=click.Path(exists=True, path_type=Path),
                 help="LoCoMo data: a folder of conversation files (*.json) or locomo10.json "
                 "itself."),
    click.option("--mode", type=click.Choice(["turns", "observations"]), default="turns"),
    click.option("--conversation", "conversations", multiple=True,
                 help="Only these (file stems)."),
)  # fmt: skip


@bench.command()
@click.option("--sentences", type=int, default=200, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def embedder(sentences: int, as_json: bool) -> None:
    """Embedder import time, load time and throughput (and the fp32 baseline)."""
    from cairn.adapters.cli_progress import say
    from cairn.bench.embedder import bench_embedder

    _print(bench_embedder(Settings.from_env(), n=sentences, say=say), as_json)


@bench.command()
@click.option(
    "--sizes", default="1000,10000", show_default=True, help="Store sizes, e.g. 1000,100000."
)
@click.option("--ops", type=int, default=200, show_default=True, help="Timed calls per size.")
@click.option(
    "--store",
    "store",
    help="A postgresql:// server to measure on (a database per size is created and dropped); "
    "default: SQLite files in a temporary directory.",
)
@click.option("--pool", type=int, default=2000, show_default=True, help="Claims embedded for real.")
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def scale(sizes: str, ops: int, store: str | None, pool: int, as_json: bool) -> None:
    """recall and remember latency (median, p95), ingest, memory at growing store sizes."""
    from cairn.adapters.cli_progress import progress_bar, say
    from cairn.bench.scale import bench_scale
    from cairn.embeddings import make_embedder

    counts = _sizes(sizes)
    if ops < 1 or pool < 1:
        raise click.UsageError("--ops and --pool must be at least 1.")
    if store is not None and not store.startswith(("postgresql://", "postgres://")):
        raise click.UsageError("--store takes a postgresql:// URL (SQLite is the default).")
    settings = Settings.from_env()
    report = bench_scale(
        make_embedder(settings), counts, ops, say, store=store, progress=progress_bar,
        pool_size=pool, embedder_name=settings.embedder,
    )  # fmt: skip
    _print(report, as_json)


@bench.command()
@locomo_source_options
@click.option("--max-questions", type=int, default=None, help="At most this many per conversation.")
@click.option(
    "--store",
    "store",
    default=None,
    help="An empty store to run in (a path or postgresql:// URL); default a temporary file.",
)
@click.option(
    "--per-question",
    "per_question",
    default=None,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write one JSON line per question (rank list, recall, evidence ranks) here.",
)
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def locomo(
    data: Path,
    mode: str,
    conversations: tuple[str, ...],
    max_questions: int | None,
    store: str | None,
    per_question: Path | None,
    as_json: bool,
) -> None:
    """Evidence recall@k on LoCoMo through remember/recall, with lexical-only and dense-only
    rankings, latency and abstention in the same run; then session-level recall_any/all,
    nDCG@10, R@k with and without category 5, and the figures scored as peers score theirs."""
    from cairn.bench.locomo import LocomoSource, bench_locomo, render

    result = bench_locomo(
        LocomoSource(data, mode, conversations or None, max_questions),
        progress=_to_stderr,
        store=store,
        per_question=per_question,
    )
    if as_json:
        _print(result, True)
    else:
        click.echo(render(result))


@bench.command("locomo-fit")
@locomo_source_options
@click.option(
    "--max-questions",
    type=click.IntRange(min=1),
    default=None,
    help="At most this many per conversation.",
)
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def locomo_fit(
    data: Path, mode: str, conversations: tuple[str, ...], max_questions: int | None, as_json: bool
) -> None:
    """The fusion's constants chosen by leave-one-conversation-out: held-out R@5/R@10 before
    and after the session breadth of list questions, per category, and each fold's choice."""
    from cairn.bench.locomo import LocomoSource
    from cairn.bench.locomo_fit import fit_locomo, render_fit

    source = LocomoSource(data, mode, conversations or None, max_questions)
    result = fit_locomo(source, progress=_to_stderr)
    click.echo(json.dumps(result, ensure_ascii=False) if as_json else render_fit(result))


@bench.command("locomo-diff")
@click.argument("before", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("after", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--k", type=click.Choice(["5", "10"]), default="10", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def locomo_diff(before: Path, after: Path, k: str, as_json: bool) -> None:
    """Questions whose recall@k got better or worse between two --per-question files."""
    from cairn.bench.locomo_questions import diff, read_per_question, render_diff

    result = diff(read_per_question(before), read_per_question(after), int(k))
    click.echo(json.dumps(result, ensure_ascii=False) if as_json else render_diff(result))


@bench.command()
@click.option("--memories", type=int, default=500, show_default=True, help="Store size.")
@click.option("--runs", type=int, default=20, show_default=True, help="Timed runs per call.")
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def hook(memories: int, runs: int, as_json: bool) -> None:
    """Latency of the Claude Code hook per call: `cairn-hook` with its server warm, its first
    call, and the in-process `cairn lessons --hook claude-code` as the baseline."""
    from cairn.bench.hook import bench_hook

    _print(bench_hook(memories=memories, runs=runs), as_json)


@bench.command("migrate")
@click.option(
    "--store", "store", required=True, help="An empty store to copy into (postgresql:// URL)."
)
@click.option("--memories", type=int, default=20_000, show_default=True, help="Store size.")
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def migrate_bench(store: str, memories: int, as_json: bool) -> None:
    """`cairn migrate` of a synthetic store into STORE and back, verification included."""
    from cairn.bench.copy import bench_migrate

    _print(bench_migrate(store, memories=memories), as_json)


@bench.command()
@locomo_data_option
@click.option(
    "--sizes", default="1,5,10,20,49,200,1000", show_default=True, help="Store sizes to measure."
)
@click.option("--seed", type=int, default=13, show_default=True, help="Sampling seed.")
@click.option("--conversation", "conversations", multiple=True, help="Only these (file stems).")
@click.option(
    "--fit", is_flag=True, help="Also choose the gate by leave-one-conversation-out and report it."
)
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def abstention(
    data: Path,
    sizes: str,
    seed: int,
    conversations: tuple[str, ...],
    fit: bool,
    as_json: bool,
) -> None:
    """Share of absent-topic questions left empty and of answerable ones wrongly left empty, in
    stores of LoCoMo turns of each size."""
    from cairn.bench.abstention import bench_abstention, render
    from cairn.bench.abstention_fit import leave_one_out

    counts = _sizes(sizes)
    result, outcomes = bench_abstention(
        data,
        sizes=counts,
        seed=seed,
        conversations=conversations or None,
        features=fit,
        progress=_to_stderr,
    )
    if fit:
        result["fit"] = leave_one_out(outcomes)
    if as_json:
        _print(result, True)
        return
    click.echo(render(result))
    if fit:
        click.echo(json.dumps(result["fit"], indent=2))


def _sizes(text: str) -> list[int]:
    try:
        counts = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: give store sizes such as 1,5,10") from None
    if not counts or any(c < 1 for c in counts):
        raise click.BadParameter(f"{text!r}: give positive store sizes such as 1,5,10")
    return counts


@bench.command("app")
@click.option("--sizes", default="1000,100000", show_default=True, help="Store sizes to measure.")
@click.option("--requests", type=int, default=20, show_default=True, help="Timed requests/page.")
@click.option("--json", "as_json", is_flag=True, help="One line of JSON.")
@reports_errors
def app_bench(sizes: str, requests: int, as_json: bool) -> None:
    """The app's server time per page (list, filtered, searched, card) at growing store sizes,
    on stores filled with pre-computed real vectors."""
    from cairn.adapters.app.bench import bench_app
    from cairn.adapters.cli_progress import say
    from cairn.embeddings import make_embedder

    counts = [int(s) for s in sizes.split(",") if s.strip()]
    _print(bench_app(make_embedder(Settings.from_env()), counts, requests, say), as_json)
