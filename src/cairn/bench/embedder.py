"""`cairn bench embedder`: what an embedder costs to import, to load and to run.

Three numbers decide whether an embedder suits a command-line tool that starts a fresh process
per call: the import time of its runtime (measured in a fresh interpreter, because this process
has already imported most things), the time to load the model once its libraries are imported,
and steady throughput. The chosen embedder is measured next to the sentence-transformers float32
baseline in the same run, on the same sentences, and when both are the MiniLM model their vectors
are compared: cosine agreement says what the faster variant gives up.

The machine is shared, so the timed runs of the two embedders alternate (chosen, baseline,
chosen, ...) and each reports its median: a burst of load from a neighbour then hits both alike
instead of whichever happened to run during it. Timings are reported, never asserted.
"""

from __future__ import annotations

import importlib
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cairn.bench.sentences import sample_sentences
from cairn.config import Settings
from cairn.embeddings import make_embedder
from cairn.embeddings.base import Embedder, Matrix
from cairn.embeddings.local import MODEL_NAME, MiniLMFp32, MiniLMInt8
from cairn.embeddings.onnx_export import hub_offline
from cairn.errors import EmbedderUnavailable

# What a fresh process must import before the embedder can run, by embedder class.
_RUNTIME_MODULES = {
    "MiniLMInt8": ("cairn.embeddings.local", "onnxruntime", "tokenizers"),
    "MiniLMFp32": ("cairn.embeddings.local", "sentence_transformers"),
}


def bench_embedder(
    target: Settings | Embedder,
    n: int = 200,
    runs: int = 5,
    import_runs: int = 3,
    baseline: bool = True,
    say: Callable[[str], None] = lambda _message: None,
) -> dict[str, Any]:
    """Measure `target` (and the fp32 baseline unless `baseline=False`) on `n` sentences.

    Returns a JSON-ready dict: `chosen` and `baseline` each hold identity, import_s, load_s,
    sentences_per_s (median of `runs`) and the individual runs; `agreement` holds cosine
    statistics between the two when both are MiniLM; `batch_invariance_min_cos` is the lowest
    cosine between a text embedded alone and the same text embedded inside the full batch.
    """
    embedder = make_embedder(target) if isinstance(target, Settings) else target
    texts = sample_sentences(n)
    report: dict[str, Any] = {
        "sentences": n,
        "mean_chars": round(statistics.fmean(len(t) for t in texts), 1),
        "runs": runs,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    subjects: dict[str, Embedder] = {"chosen": embedder}
    if baseline and not isinstance(embedder, MiniLMFp32):
        subjects["baseline"] = MiniLMFp32()
    for name, subject in subjects.items():
        say(f"embedder: importing and loading {subject.identity} ({name})")
        report[name] = _prepare(subject, import_runs)
        subject.embed_many(texts[:16])  # warm-up: first-call allocations, lazy kernels
    timings: dict[str, list[float]] = {name: [] for name in subjects}
    vectors: dict[str, Matrix] = {}
    for run in range(max(1, runs)):
        say(f"embedder: timed run {run + 1}/{max(1, runs)} on {len(texts)} sentences")
        for name, subject in subjects.items():
            seconds, vectors[name] = _timed_embed(subject, texts)
            timings[name].append(len(texts) / seconds)
    for name, rates in timings.items():
        report[name]["sentences_per_s"] = round(statistics.median(rates), 1)
        report[name]["runs_sentences_per_s"] = [round(r, 1) for r in rates]
    report["chosen"]["batch_invariance_min_cos"] = _batch_invariance(
        embedder, texts, vectors["chosen"]
    )
    if "baseline" in vectors and embedder.identity.startswith(MODEL_NAME):
        report["agreement"] = _agreement(vectors["chosen"], vectors["baseline"])
    return report


def runtime_modules(embedder: Embedder) -> tuple[str, ...]:
    """The modules a fresh process imports before `embedder` can embed."""
    return _RUNTIME_MODULES.get(type(embedder).__name__, (type(embedder).__module__,))


def import_seconds(embedder: Embedder, runs: int = 3) -> float:
    """Median seconds a fresh interpreter spends importing what `embedder` needs to run."""
    statement = "import " + ", ".join(runtime_modules(embedder))
    code = f"import time\nt = time.perf_counter()\n{statement}\nprint(time.perf_counter() - t)\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    samples = []
    for _ in range(max(1, runs)):
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise EmbedderUnavailable(
                f"`{statement}` failed in a fresh interpreter: {done.stderr.strip()[-500:]}; "
                "check that the embedder's packages are installed."
            )
        samples.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def _prepare(embedder: Embedder, import_runs: int) -> dict[str, Any]:
    """Import time (fresh process), one-time export (int8 only) and model load time."""
    result: dict[str, Any] = {
        "identity": embedder.identity,
        "import_s": round(import_seconds(embedder, import_runs), 3),
    }
    if isinstance(embedder, MiniLMInt8):
        # Building the cached ONNX file happens once per install; keep it out of load_s.
        start = time.perf_counter()
        embedder.ensure_exported()
        result["export_s"] = round(time.perf_counter() - start, 3)
        result["exported_now"] = embedder.exported
    # Imports were timed above; load_s is the model alone.
    hub_offline()
    for module in runtime_modules(embedder):
        importlib.import_module(module)
    start = time.perf_counter()
    _load(embedder)
    result["load_s"] = round(time.perf_counter() - start, 3)
    return result


def _timed_embed(embedder: Embedder, texts: list[str]) -> tuple[float, Matrix]:
    start = time.perf_counter()
    vectors = embedder.embed_many(texts)
    return time.perf_counter() - start, vectors


def _load(embedder: Embedder) -> None:
    load = getattr(embedder, "load", None)
    if callable(load):
        load()
    else:
        embedder.embed_many(["load"])


def _batch_invariance(embedder: Embedder, texts: list[str], batched: Matrix, k: int = 12) -> float:
    """Lowest cosine between texts embedded one by one and the same texts in the full batch.

    The sample takes the shortest texts: they are the ones most exposed to padding effects.
    """
    shortest = sorted(range(len(texts)), key=lambda i: len(texts[i]))[:k]
    alone = np.vstack([embedder.embed_many([texts[i]]) for i in shortest])
    cosines = np.sum(alone * batched[shortest], axis=1)
    return round(float(cosines.min()), 6)


def _agreement(a: Matrix, b: Matrix) -> dict[str, float]:
    cosines = np.sum(a * b, axis=1)
    return {
        "cos_mean": round(float(cosines.mean()), 5),
        "cos_min": round(float(cosines.min()), 5),
        "cos_p5": round(float(np.percentile(cosines, 5)), 5),
    }
