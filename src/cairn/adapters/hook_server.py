"""`cairn hook serve`: the resident process that answers agent hooks (`cairn-hook`) quickly.

It keeps the store open and the code imported, and answers each hook call through the same
`answer_hook` as `cairn lessons --hook claude-code`, so the answers are the same byte for
byte; only the start-up is skipped. Paths, wire format and the client's side are described in
`cairn.adapters.hook_client`.

- One server per socket: the server holds an exclusive `flock` on `<key>.lock` for its whole
  life (the kernel drops it when the process dies, however it dies), so a second server, e.g.
  started by two hooks at once, sees the lock taken and exits 0; the holder of the lock may
  remove a stale socket file left by a dead server and bind anew.
- Concurrent calls: each connection is read and answered on its own thread (a slow or stuck
  client cannot hold the others up for more than `READ_TIMEOUT_SECONDS`), but all store work
  runs on one worker thread, one at a time, with one connection: calls of one agent session
  cannot race on what was already said, and no thread-local connection is left behind.
- Other processes' writes are seen: the SQLite store runs in autocommit and WAL mode, so every
  query reads the latest committed state (PostgreSQL reads the tables on every query). The
  store is reopened when its file was replaced or removed (a new inode), and after any failure
  of cairn's own (a dropped PostgreSQL connection, a locked or broken file).
- Each call runs in the hook's own directory (the server `chdir`s there on the worker thread)
  and with the same settings as the command: a different `CAIRN_*` environment has its own
  server.
- It exits after `idle_seconds` without a call (30 minutes by default), on `cairn hook stop`,
  on SIGTERM or SIGINT, or when its socket file was removed or replaced, and removes its
  socket file on the way out.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from cairn.adapters.agent_hooks import HookReply, answer_hook, open_for_hook
from cairn.adapters.hook_client import (
    CONTROL_KINDS,
    KINDS,
    PROTOCOL,
    RuntimePaths,
    private_folder,
)
from cairn.config import Settings
from cairn.core import Cairn

DEFAULT_IDLE_SECONDS = 30 * 60
READ_TIMEOUT_SECONDS = 5.0
MAX_REQUEST_BYTES = 64 * 1024 * 1024  # a Write of a large file carries its whole content
TICK_SECONDS = 0.5
MAX_OPEN = 8  # Cairns kept open, one per integration (client) name


class HookServer:
    def __init__(
        self,
        location: str,
        settings: Settings,
        paths: RuntimePaths,
        *,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
    ) -> None:
        self._location = location
        self._settings = settings
        self._paths = paths
        self._idle = idle_seconds
        self._mems: dict[str, Cairn] = {}
        self._identity: tuple[int, int] | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cairn-hook")
        self._stop = threading.Event()
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._last_call = time.monotonic()

    def run(self) -> bool:
        """Serve until idle or stopped; False at once when another server holds the socket."""
        private_folder(self._paths.folder)
        lock = os.open(self._paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            os.ftruncate(lock, 0)
            os.write(lock, f"{os.getpid()}\n".encode())
            with self._listening() as listener:
                # Open the store now, so the first call is as quick as the others.
                self._worker.submit(self._mem_for_warm_up).result()
                self._serve(listener)
            return True
        finally:
            self._worker.shutdown(wait=True)
            self._close_all()
            os.close(lock)

    def stop(self) -> None:
        self._stop.set()

    @contextlib.contextmanager
    def _listening(self) -> Iterator[socket.socket]:
        path = self._paths.socket
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # stale: its server is gone, or we would not hold the lock
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        before = os.umask(0o177)  # the socket is born 0600: nobody else may even connect
        try:
            listener.bind(path)
        finally:
            os.umask(before)
        inode = os.stat(path).st_ino
        try:
            listener.listen(64)
            listener.settimeout(TICK_SECONDS)
            yield listener
        finally:
            listener.close()
            with contextlib.suppress(FileNotFoundError):
                if os.stat(path).st_ino == inode:
                    os.unlink(path)

    def _serve(self, listener: socket.socket) -> None:
        inode = os.stat(self._paths.socket).st_ino
        while not self._stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if self._should_exit(inode):
                    return
                continue
            with self._busy_lock:
                self._busy += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _should_exit(self, inode: int) -> bool:
        with self._busy_lock:
            idle = self._busy == 0 and time.monotonic() - self._last_call > self._idle
        try:
            moved = os.stat(self._paths.socket).st_ino != inode
        except FileNotFoundError:
            moved = True
        return idle or moved

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(READ_TIMEOUT_SECONDS)
                out, err = self._reply(_read_request(conn))
                conn.sendall(b"%d %d\n%s%s" % (len(out), len(err), out, err))
        except (OSError, ValueError):
            pass  # the client went away or spoke nonsense: it exits 0 on its own
        finally:
            with self._busy_lock:
                self._busy -= 1
                self._last_call = time.monotonic()

    def _reply(self, request: tuple[str, str, bytes]) -> tuple[bytes, bytes]:
        kind, cwd, raw = request
        if kind == "stop":
            self.stop()
            return f"stopped the hook server (pid {os.getpid()})\n".encode(), b""
        reply = self._worker.submit(self._answer, kind, cwd, raw).result()
        return reply.stdout.encode(), reply.stderr.encode()

    # the worker thread ----------------------------------------------------------------------
    def _answer(self, kind: str, cwd: str, raw: bytes) -> HookReply:
        try:
            os.chdir(cwd)  # relative paths and the default scope, as for a hook process there
        except OSError as exc:
            return HookReply("", f"cairn: lessons hook skipped: cannot enter {cwd}: {exc}\n")
        reply = answer_hook(kind, self._mem_for, raw)
        if reply.failed:
            self._close_all()  # whatever broke, the next call starts from a fresh open
        return reply

    @contextlib.contextmanager
    def _mem_for(self, integration: str) -> Iterator[Cairn]:
        if self._identity != _file_identity(self._location):
            self._close_all()
        mem = self._mems.get(integration)
        if mem is None:
            if len(self._mems) >= MAX_OPEN:
                self._close_all()
            mem = open_for_hook(self._location, self._settings, integration)
            self._mems[integration] = mem
            self._identity = _file_identity(self._location)
        yield mem

    def _mem_for_warm_up(self) -> None:
        from cairn.adapters.agent_hooks import CLAUDE_CODE

        try:
            with self._mem_for(CLAUDE_CODE):
                pass
        except Exception:  # noqa: BLE001 - reported on the first call instead, by its reply
            self._close_all()

    def _close_all(self) -> None:
        mems, self._mems = list(self._mems.values()), {}
        for mem in mems:
            with contextlib.suppress(Exception):
                mem.close()


def _file_identity(location: str) -> tuple[int, int] | None:
    if "://" in location:
        return None
    try:
        found = os.stat(location)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _read_request(conn: socket.socket) -> tuple[str, str, bytes]:
    data = bytearray()
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError("request too large")
    head, newline, rest = bytes(data).partition(b"\n")
    parts = head.split(b" ")
    if not newline or len(parts) != 3 or parts[0] != PROTOCOL or not parts[2].isdigit():
        raise ValueError("not a cairn-hook request")
    kind, size = parts[1].decode("ascii", errors="replace"), int(parts[2])
    if kind not in KINDS and kind not in CONTROL_KINDS:
        raise ValueError(f"unknown hook kind {kind!r}")
    return kind, os.fsdecode(rest[:size]), rest[size:]


def serve(location: str, settings: Settings, paths: RuntimePaths, idle_seconds: float) -> bool:
    """Run a server in this process (SIGTERM and SIGINT stop it cleanly)."""
    server = HookServer(location, settings, paths, idle_seconds=idle_seconds)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        server.stop()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    return server.run()
