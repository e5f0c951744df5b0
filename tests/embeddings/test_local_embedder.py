"""The real MiniLM: the shipped int8 model, semantics, batch invariance, agreement with fp32,
and the on-demand export of other weights into the machine's cache.

Slow: the export tests run torch into a temporary cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cairn.bench.sentences import sample_sentences
from cairn.embeddings import Embedder
from cairn.embeddings.local import MiniLMFp32, MiniLMInt8
from cairn.embeddings.model_files import SHIPPED_DIR, file_sha256, read_manifest
from cairn.embeddings.onnx_export import cached_model_path, packaged_model_dir

pytestmark = pytest.mark.slow

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def int8() -> MiniLMInt8:
    embedder = MiniLMInt8()  # the shipped model, read in place
    embedder.load()
    return embedder


@pytest.fixture(scope="module")
def exported(cache_dir: Path) -> MiniLMInt8:
    """The packaged source weights exported on demand into a cache (torch, once per module)."""
    embedder = MiniLMInt8(cache_dir, model_dir=packaged_model_dir())
    embedder.load()
    return embedder


@pytest.fixture(scope="module")
def fp32() -> MiniLMFp32:
    return MiniLMFp32()


def _run_python(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_identity_shape_and_unit_norm(int8: MiniLMInt8) -> None:
    assert isinstance(int8, Embedder)
    assert int8.identity == "all-MiniLM-L6-v2-int8/384"
    assert int8.dimensions == 384
    matrix = int8.embed_many(["The deploy failed.", "", "ok"])
    assert matrix.shape == (3, 384)
    assert matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert int8.embed_many([]).shape == (0, 384)


def test_the_shipped_model_is_read_in_place_without_export(int8: MiniLMInt8) -> None:
    assert not int8.exported
    assert int8.model_path == SHIPPED_DIR / "model.onnx"


def test_the_export_lands_once_in_the_cache(exported: MiniLMInt8, cache_dir: Path) -> None:
    assert exported.exported
    path = cached_model_path(cache_dir, packaged_model_dir())
    assert exported.model_path == path
    before = path.stat()
    again = MiniLMInt8(cache_dir, model_dir=packaged_model_dir())
    again.load()
    assert not again.exported
    assert again.model_path == path
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted(p.name for p in cache_dir.glob("*.onnx")) == [path.name]
    assert not list(cache_dir.glob(".export-*"))  # the temporary build dir is gone


def test_the_cached_runtime_never_imports_torch(exported: MiniLMInt8, cache_dir: Path) -> None:
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from cairn.embeddings.local import MiniLMInt8\n"
        "from cairn.embeddings.onnx_export import packaged_model_dir\n"
        f"e = MiniLMInt8(Path({str(cache_dir)!r}), model_dir=packaged_model_dir())\n"
        "v = e.embed_many(['hello world'])\n"
        "names = ('torch', 'transformers', 'sentence_transformers')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(json.dumps({'exported': e.exported, 'heavy': heavy, 'v': v[0].tolist()}))\n"
    )
    out = json.loads(_run_python(code).strip().splitlines()[-1])
    assert out == {"exported": False, "heavy": [], "v": pytest.approx(out["v"])}
    here = exported.embed_many(["hello world"])[0]
    assert float(np.dot(here, np.asarray(out["v"], dtype=np.float32))) > 0.9999


def test_an_export_of_the_packaged_weights_equals_the_shipped_model(
    exported: MiniLMInt8, int8: MiniLMInt8
) -> None:
    """The export is deterministic: re-running it reproduces the shipped file byte for byte."""
    assert exported.model_path is not None
    manifest = read_manifest(SHIPPED_DIR)
    assert file_sha256(exported.model_path) == manifest["sha256"]
    texts = sample_sentences(20)
    assert np.array_equal(exported.embed_many(texts), int8.embed_many(texts))


def test_the_export_script_rebuilds_the_shipped_directory(int8: MiniLMInt8, tmp_path: Path) -> None:
    """`python -m cairn.embeddings.onnx_export --out DIR` is how the shipped files were made."""
    out = tmp_path / "model"
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-m", "cairn.embeddings.onnx_export", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert "quantising to int8" in done.stderr  # progress on stderr
    shipped = read_manifest(SHIPPED_DIR)
    assert done.stdout.split()[-1] == shipped["sha256"]
    for name in ("model.onnx", "tokenizer.json", "sentence_bert_config.json", "LICENSE"):
        assert (out / name).read_bytes() == (SHIPPED_DIR / name).read_bytes(), name
    assert read_manifest(out)["source_sha256"] == shipped["source_sha256"]
    elsewhere = MiniLMInt8(model_dir=out)  # an exported directory is read in place
    texts = sample_sentences(8)
    assert np.array_equal(elsewhere.embed_many(texts), int8.embed_many(texts))
    assert elsewhere.model_path == out / "model.onnx"
    assert not elsewhere.exported


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(int8: MiniLMInt8) -> None:
    a, paraphrase, unrelated = int8.embed_many(
        [
            "The deployment failed because the server ran out of disk space.",
            "Deploying broke since the machine's disk was full.",
            "My grandmother bakes excellent apple pie on Sundays.",
        ]
    )
    assert float(a @ paraphrase) > float(a @ unrelated) + 0.3


def test_a_text_embeds_the_same_alone_and_next_to_long_texts(int8: MiniLMInt8) -> None:
    short = "Rotate the signing keys every ninety days."
    long_texts = [" ".join(sample_sentences(40)[i : i + 8]) for i in (0, 10, 20)]
    alone = int8.embed_many([short])[0]
    batched = int8.embed_many([long_texts[0], short, *long_texts[1:]])
    assert float(alone @ batched[1]) > 0.999
    for i, text in enumerate(long_texts):
        row = batched[0] if i == 0 else batched[i + 1]
        assert float(int8.embed_many([text])[0] @ row) > 0.999


def test_texts_embedded_side_by_side_match_one_at_a_time(int8: MiniLMInt8) -> None:
    texts = sample_sentences(24)
    one_by_one = MiniLMInt8(parallel=1).embed_many(texts)
    side_by_side = MiniLMInt8(parallel=4).embed_many(texts)
    # Same rows in the same order: each run is single-threaded, so the vectors are identical.
    assert np.array_equal(one_by_one, side_by_side)
    assert np.array_equal(int8.embed_many(texts[5:6])[0], side_by_side[5])


def test_texts_are_cut_at_256_tokens_not_at_the_tokenizers_128(int8: MiniLMInt8) -> None:
    words = " ".join(f"topic{i % 7} note" for i in range(60))  # 182 tokens
    shorter = int8.embed_many([words + " apple pie", words + " disk failure"])
    assert float(shorter[0] @ shorter[1]) < 0.9999  # the tails after token 182 still count
    longer = words * 3  # 544 tokens
    cut = int8.embed_many([longer + " apple pie", longer + " disk failure"])
    assert float(cut[0] @ cut[1]) > 0.9999  # the tails fall beyond the limit


def test_int8_agrees_with_sentence_transformers_fp32(int8: MiniLMInt8, fp32: MiniLMFp32) -> None:
    texts = sample_sentences(60)
    assert fp32.identity == "all-MiniLM-L6-v2/384"
    cosines = np.sum(int8.embed_many(texts) * fp32.embed_many(texts), axis=1)
    assert float(cosines.mean()) > 0.98
    assert float(cosines.min()) > 0.95


def test_two_processes_exporting_at_once_share_one_export(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from cairn.embeddings.local import MiniLMInt8\n"
        "from cairn.embeddings.onnx_export import packaged_model_dir\n"
        "e = MiniLMInt8(Path(sys.argv[1]), model_dir=packaged_model_dir())\n"
        "v = e.embed_many(['same text'])[0]\n"
        "print(json.dumps({'exported': e.exported, 'v': v.tolist()}))\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r["exported"] for r in results) == [False, True]
    assert results[0]["v"] == pytest.approx(results[1]["v"], abs=1e-6)
    assert len(list(tmp_path.glob("*.onnx"))) == 1
