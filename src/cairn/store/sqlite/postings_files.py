"""The postings pool on disk, beside the dense cache in `<store>-dense/`, so a new process maps it
instead of reading every posting out of FTS5 again.

Layout, as the dense cache's (`dense_files`): each save is a new directory `postings-<n>-<pid>/`
holding the arrays (`.npy`, the large ones mapped on load) and the terms (`terms.bin`, their
UTF-8 bytes back to back, and `term_ends.npy`), then `postings.json` (the stamp naming it) is
replaced atomically; older directories go after the stamp moves. A save is used only while the
store's identity and epoch are the ones it was saved at, and only when its arrays fit together:
a missing, truncated or foreign file is ignored (the pool is rebuilt from FTS5), never raised.

Purge: the files hold the store's words, so they live in the folder `dense_files.drop` deletes
inside the purge; a process that was saving at that moment checks the epoch after its stamp
lands and deletes what it wrote if the store moved on (and the purge drops the folder once
more after it commits, `erase.EraseRows.erase_freed`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cairn.store.sqlite import dense_files
from cairn.store.sqlite.postings import Built, Postings, Vocabulary

_STAMP = "postings.json"
_MAPPED = ("docs", "counts", "hits")
_LOADED = ("offsets", "ids", "lengths")


def load(db_path: str, epoch: str) -> Built | None:
    """The saved pool of this store at `epoch`, or None."""
    base = dense_files.folder(db_path)
    if base is None:
        return None
    try:
        stamp = json.loads((base / _STAMP).read_text(encoding="utf-8"))
        if stamp.get("epoch") != epoch:
            return None
        where = base / str(stamp["dir"])
        arrays: dict[str, Any] = {name: np.load(where / f"{name}.npy") for name in _LOADED}
        for name in _MAPPED:
            arrays[name] = np.load(where / f"{name}.npy", mmap_mode="r")
        blob = (where / "terms.bin").read_bytes()
        if hashlib.sha256(blob).hexdigest() != stamp["terms_sha256"]:
            return None
        terms = Vocabulary(blob, np.load(where / "term_ends.npy"))
        postings = Postings(terms=terms, **arrays)
        if not postings.check():
            return None
        if int(stamp["documents"]) != postings.ids.shape[0]:
            return None
        logged = stamp["logged"]
        return Built(
            postings, epoch, int(stamp["seq"]), None if logged is None else str(logged),
            int(stamp["offset"]),
        )  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return None  # missing, partial or foreign: FTS5 is the truth, rebuild from it


def save(db_path: str, built: Built, epoch_now: Callable[[], str]) -> None:
    """Write a save and point the stamp at it; undo it if the store's epoch moved meanwhile."""
    base = dense_files.folder(db_path)
    if base is None:
        return
    postings = built.postings
    try:
        base.mkdir(exist_ok=True)
        # A new directory every time, never files a mapped save is read from (SIGBUS).
        where = base / f"postings-{postings.ids.shape[0]}-{os.getpid()}-{secrets.token_hex(4)}"
        where.mkdir()
        for name in (*_LOADED, *_MAPPED):
            np.save(where / f"{name}.npy", np.ascontiguousarray(getattr(postings, name)))
        (where / "terms.bin").write_bytes(postings.terms.blob)
        np.save(where / "term_ends.npy", postings.terms.ends)
        stamp = {
            "epoch": built.epoch,
            "seq": built.seq,
            "logged": built.logged,
            "offset": built.offset,
            "documents": int(postings.ids.shape[0]),
            "terms_sha256": hashlib.sha256(postings.terms.blob).hexdigest(),
            "dir": where.name,
        }
        temporary = base / f"{_STAMP}.{os.getpid()}"
        temporary.write_text(json.dumps(stamp), encoding="utf-8")
        os.replace(temporary, base / _STAMP)
    except OSError:
        return  # a read-only or full disk: the pool still works, only in memory
    if epoch_now() != built.epoch:
        dense_files.drop(db_path)  # a purge may have landed while these files were written
        return
    _remove_others(base, where)


def _remove_others(base: Path, kept: Path) -> None:
    for old in base.glob("postings-*"):
        if old != kept and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
