"""The dense cache on disk, beside the SQLite file, so a new process does not reload it row by row.

Reading 100k vectors out of SQLite costs seconds (a Python object per row); a process that
answers one CLI recall cannot afford that. A large cache (`PERSIST_MIN` rows) is therefore also
written to `<store>-dense/`, and the next process maps it (`numpy.load(mmap_mode="r")`) and only
reads from SQLite what changed since, exactly as a warm cache does: rows past the saved
`last_id`, windows past the saved `window_rev`. A saved cache is used only while the store's
`epoch` is the one it was saved at; any other change (a status, a replaced or deleted vector)
moves the epoch and the next process reloads from SQLite and saves afresh.

Layout: each save is a new directory `<key>-<n>/` (the arrays) and then `<key>.json` (the stamp
naming it) is replaced atomically, so a reader never mixes two saves; older directories are
deleted after the stamp moves (a process that mapped one keeps reading its open files).

A large cache's projection (`cairn.store.sqlite.pruned`: `basis.npy`, `head.npy`, `tail.npy`,
`residual.npy`, `head_residual.npy`) is saved in the same directory under the same stamp, so it
is always the projection of exactly the saved rows; a save without it is refitted once and
rewritten.

Purge: the files hold vectors (and their projections), which are images of the text, so
`erase_memories` deletes the whole directory inside the purge (`drop`). A process that was
saving at that moment checks the epoch after its stamp lands and deletes what it wrote if the
store moved on.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.store.sqlite.pruned import head_columns

PERSIST_MIN = 20_000  # rows; smaller caches reload from SQLite in well under 100 ms
_ARRAYS = ("ids", "scope", "status", "mtype", "written", "occurred", "until")
_PRUNED = ("basis", "head", "tail", "residual", "head_residual")


def folder(db_path: str) -> Path | None:
    if db_path == ":memory:" or db_path.startswith("file:"):
        return None
    return Path(f"{db_path}-dense")


def store_epoch(conn: sqlite3.Connection) -> str:
    """The store's identity and `epoch`: what a save must match to be used (a new store made at
    the same path starts at epoch 0 too)."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('store_id', 'epoch')"))
    return f"{meta.get('store_id', '')}/{meta['epoch']}"


def _key(identity: str) -> str:
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]


@dataclass
class Saved:
    """What a save holds: the rows' arrays, the names behind their codes, and its cursors."""

    arrays: dict[str, npt.NDArray[Any]]
    matrix: Any  # a numpy array mapped from disk (load), or a `Matrix` to write (save)
    names: list[str]  # code -> name of the scope, status and type columns
    epoch: str
    window_rev: int
    window_positions: npt.NDArray[np.intp]
    windows: npt.NDArray[np.float32]
    # The projection of a large cache (`cairn.store.sqlite.pruned`): basis, head, tail, residuals.
    pruned: dict[str, Any] | None = None


def load(conn: sqlite3.Connection, db_path: str, identity: str, epoch: str) -> Saved | None:
    """The saved cache of `identity`, if one was saved at this `epoch` and its first and last
    rows still hold what the store holds (a file restored from an older backup does not)."""
    base = folder(db_path)
    if base is None:
        return None
    try:
        stamp = json.loads((base / f"{_key(identity)}.json").read_text(encoding="utf-8"))
        if stamp.get("epoch") != epoch or stamp.get("identity") != identity:
            return None
        where = base / str(stamp["dir"])
        arrays = {name: np.load(where / f"{name}.npy") for name in _ARRAYS}
        matrix = np.load(where / "matrix.npy", mmap_mode="r")
        if not _agrees(conn, identity, arrays["ids"], matrix):
            return None
        return Saved(
            arrays=arrays,
            matrix=matrix,
            names=[str(name) for name in stamp["names"]],
            epoch=epoch,
            window_rev=int(stamp["window_rev"]),
            window_positions=np.load(where / "window_positions.npy"),
            windows=np.load(where / "windows.npy"),
            pruned=_load_pruned(where, int(arrays["ids"].shape[0]), int(matrix.shape[1])),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, partial or foreign: SQLite is the truth, reload from it


def _load_pruned(where: Path, count: int, dims: int) -> dict[str, Any] | None:
    """The saved projection, if this save has one for all its rows (else it is refitted: a save
    of the single `reduced.npy` written before the projection was split is refitted too)."""
    if not all((where / f"{name}.npy").exists() for name in _PRUNED):
        return None
    found = {name: np.load(where / f"{name}.npy", mmap_mode="r") for name in _PRUNED}
    shapes = {name: found[name].shape for name in _PRUNED}
    if any(len(shapes[name]) != 2 for name in ("basis", "head", "tail")):
        return None
    if len(shapes["residual"]) != 1 or len(shapes["head_residual"]) != 1:
        return None
    if shapes["basis"][0] != dims:
        return None
    if any(shapes[name][0] != count for name in _PRUNED if name != "basis"):
        return None
    columns = shapes["basis"][1]
    if (
        shapes["head"][1] != head_columns(columns)
        or shapes["tail"][1] != columns - shapes["head"][1]
    ):
        return None
    return found | {"basis": np.array(found["basis"])}


def _agrees(
    conn: sqlite3.Connection, identity: str, ids: npt.NDArray[Any], matrix: npt.NDArray[Any]
) -> bool:
    if ids.shape[0] == 0 or ids.shape[0] != matrix.shape[0]:
        return False
    for position in (0, ids.shape[0] - 1):
        row = conn.execute(
            "SELECT vector FROM vectors WHERE memory_id = ? AND identity = ?",
            (int(ids[position]), identity),
        ).fetchone()
        if row is None or bytes(row[0]) != np.asarray(matrix[position], "<f4").tobytes():
            return False
    return True


def save(conn: sqlite3.Connection, db_path: str, identity: str, saved: Saved) -> None:
    """Write a save and point the stamp at it; undo it if the store's epoch moved meanwhile."""
    base = folder(db_path)
    if base is None:
        return
    key = _key(identity)
    count = int(saved.arrays["ids"].shape[0])
    try:
        base.mkdir(exist_ok=True)
        # A new directory every time: rewriting files in place that this process (or an
        # earlier one of the same pid, whose save it loaded) has mapped would kill it (SIGBUS).
        where = base / f"{key}-{count}-{os.getpid()}-{secrets.token_hex(4)}"
        where.mkdir()
        for name, array in saved.arrays.items():
            np.save(where / f"{name}.npy", np.ascontiguousarray(array))
        with open(where / "matrix.npy", "wb") as out:
            saved.matrix.write_npy(out)
        np.save(where / "window_positions.npy", saved.window_positions)
        np.save(where / "windows.npy", saved.windows)
        if saved.pruned is not None:
            for name in ("basis", "residual", "head_residual"):
                np.save(where / f"{name}.npy", saved.pruned[name])
            for name in ("head", "tail"):
                with open(where / f"{name}.npy", "wb") as out:
                    saved.pruned[name].write_npy(out)
        stamp = {
            "identity": identity,
            "epoch": saved.epoch,
            "window_rev": saved.window_rev,
            "names": saved.names,
            "dir": where.name,
        }
        temporary = base / f"{key}.json.{os.getpid()}"
        temporary.write_text(json.dumps(stamp), encoding="utf-8")
        os.replace(temporary, base / f"{key}.json")
    except OSError:
        return  # a read-only or full disk: the cache still works, only in memory
    if store_epoch(conn) != saved.epoch:
        drop(db_path)  # a purge may have landed while these files were written
        return
    for old in base.glob(f"{key}-*"):
        if old != where:
            shutil.rmtree(old, ignore_errors=True)


def drop(db_path: str) -> None:
    """Delete every saved cache of the store (purge: no file may keep a purged vector)."""
    base = folder(db_path)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)
