"""The factory, the cheap-import promise, fit_dimensions, and the embedder benchmark's shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.bench.embedder import bench_embedder
from cairn.bench.sentences import sample_sentences
from cairn.config import Settings
from cairn.embeddings import EMBEDDERS, fit_dimensions, make_embedder
from cairn.embeddings.fallback import FallbackEmbedder
from cairn.embeddings.hashing import HashingEmbedder
from cairn.embeddings.local import MiniLMFp32, MiniLMInt8
from cairn.embeddings.ollama import OllamaEmbedder
from cairn.errors import InvalidInput

HEAVY = ("torch", "onnxruntime", "tokenizers", "sentence_transformers", "transformers")


def test_factory_builds_each_named_embedder(tmp_path: Path) -> None:
    base = Settings(home=tmp_path / "home", cache_dir=tmp_path / "cache")
    local = make_embedder(base)
    assert isinstance(local, MiniLMInt8)
    assert local.cache_dir == tmp_path / "cache"  # one cache per machine, not per store
    assert local.identity == "all-MiniLM-L6-v2-int8/384"
    assert isinstance(make_embedder(base.with_overrides(embedder="local-fp32")), MiniLMFp32)
    assert isinstance(make_embedder(base.with_overrides(embedder=" Hashing ")), HashingEmbedder)
    ollama = make_embedder(
        base.with_overrides(
            embedder="ollama", ollama_url="http://10.0.0.5:11434", ollama_model="bge-m3"
        )
    )
    assert isinstance(ollama, FallbackEmbedder)  # Ollama, falling back to the local model
    bare = make_embedder(base.with_overrides(embedder="ollama", ollama_fallback="none"))
    assert isinstance(bare, OllamaEmbedder)
    for name in EMBEDDERS:
        built = make_embedder(base.with_overrides(embedder=name))
        # isinstance(built, Embedder) would read `dimensions`, which for Ollama with unknown
        # dimensions asks the server (Python 3.11 protocols call properties); check the type.
        assert callable(type(built).embed_many)
        assert isinstance(type(built).identity, property)
        assert isinstance(type(built).dimensions, property)


def test_unknown_embedder_names_the_valid_ones(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="local, local-fp32, hashing, ollama"):
        make_embedder(Settings(home=tmp_path, embedder="openai"))


def test_building_embedders_imports_no_model_runtime(tmp_path: Path) -> None:
    """A CLI call that never embeds must not pay for torch or onnxruntime."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from cairn.config import Settings\n"
        "from cairn.embeddings import make_embedder\n"
        f"home = Path({str(tmp_path)!r})\n"
        "for name in ('local', 'local-fp32', 'hashing', 'ollama'):\n"
        "    e = make_embedder(Settings(home=home, embedder=name, cache_dir=home / 'cache'))\n"
        "    if name != 'ollama':\n"
        "        e.identity, e.dimensions\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []
    assert not list(tmp_path.iterdir())  # nothing written (no model, no cache) before an embed


def test_fit_dimensions_pads_with_zeros_and_normalises() -> None:
    vector = fit_dimensions([3.0, 4.0], 4)
    assert vector.dtype == np.float32
    assert vector.tolist() == pytest.approx([0.6, 0.8, 0.0, 0.0])


def test_fit_dimensions_truncates_and_normalises() -> None:
    vector = fit_dimensions([0.0, 2.0, 9.0, 9.0], 2)
    assert vector.tolist() == pytest.approx([0.0, 1.0])


def test_fit_dimensions_rejects_nested_lists() -> None:
    with pytest.raises(ValueError, match="flat list"):
        fit_dimensions([[1.0, 2.0]], 4)  # type: ignore[list-item]


@settings(max_examples=100, deadline=None)
@given(
    # Values this small underflow to a zero norm in float32; real embeddings never hold them.
    st.lists(
        st.one_of(st.just(0.0), st.floats(1e-6, 1e6), st.floats(-1e6, -1e-6)), max_size=50
    ).filter(bool),
    st.integers(1, 64),
)
def test_fit_dimensions_gives_the_right_length_and_unit_or_zero_norm(
    values: list[float], dimensions: int
) -> None:
    vector = fit_dimensions(values, dimensions)
    assert vector.shape == (dimensions,)
    norm = float(np.linalg.norm(vector))
    kept = np.asarray(values[:dimensions], dtype=np.float32)
    if np.any(kept != 0):
        assert norm == pytest.approx(1.0, abs=1e-4)
    else:
        assert norm == 0.0


def test_sample_sentences_are_distinct_and_stable() -> None:
    first = sample_sentences(300)
    assert len(first) == len(set(first)) == 300
    assert first == sample_sentences(300)
    assert sample_sentences(10) == first[:10]


def test_bench_reports_import_load_and_throughput() -> None:
    report = bench_embedder(HashingEmbedder(), n=30, runs=2, import_runs=1, baseline=False)
    assert report["sentences"] == 30
    chosen = report["chosen"]
    assert chosen["identity"] == "hashing-v1/384"
    assert chosen["import_s"] > 0
    assert chosen["load_s"] >= 0
    assert chosen["sentences_per_s"] > 0
    assert len(chosen["runs_sentences_per_s"]) == 2
    assert chosen["batch_invariance_min_cos"] == pytest.approx(1.0, abs=1e-6)
    assert "baseline" not in report
    json.dumps(report)  # ready for `cairn bench embedder --json`
