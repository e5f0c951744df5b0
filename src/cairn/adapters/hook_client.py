"""`cairn-hook`: the agent hook command, answered by a resident server in a few milliseconds.

    cairn-hook claude-code [--store LOCATION]     # Claude Code's hook JSON on stdin
    cairn-hook stdin [--store LOCATION]           # the generic JSON of `cairn lessons --stdin`

An agent runs its hook as a new process on every tool call. Starting Python and importing
cairn's core costs most of a second, so this module imports only the standard library (and
`cairn`'s lazy package `__init__`): it forwards the raw hook input over a Unix socket to
`cairn hook serve`, which keeps the store open, and prints the server's answer byte for byte.
The server answers exactly what `cairn lessons --hook claude-code` (or `--stdin`) would.

One server per store and configuration: the socket is `<CAIRN_HOME>/hooks/<key>.sock`, where
the key hashes the store location and every `CAIRN_*` variable, so an agent with another
environment never gets answers from a server configured differently. A path too long for a
Unix socket moves to `$TMPDIR/cairn-<uid>/`. Beside the socket, `<key>.lock` is held (flock)
by the live server and holds its pid, and `<key>.log` keeps its last start's stderr.

When no server answers (none yet, or a stale socket left by one that died), the client starts
one, detached in its own session, and waits for it (up to `START_WAIT_SECONDS`) to answer this
call. If the server cannot start (or its folder cannot be made), this call is answered
in-process, the slow way; if it starts but is not ready in time, this one call gets no lessons
(stdout empty). An answer cut off (the server killed mid-call, or no answer within
`ANSWER_TIMEOUT_SECONDS`) also prints nothing: whatever goes wrong, the hook exits 0 with empty
or valid output and never blocks the agent.

Wire format (local, same user only: the directory is 0700 and the socket 0600). Request:
`cairn-hook/1 <kind> <cwd bytes>\\n<cwd><raw stdin>`, then the client shuts down its writing
side. Answer: `<stdout bytes> <stderr bytes>\\n<stdout><stderr>`, then the server closes.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import time

TYPE_CHECKING = False  # typing itself is not imported at run time (see cairn/__init__.py)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from subprocess import Popen

PROTOCOL = b"cairn-hook/1"
KINDS = ("claude-code", "stdin")
CONTROL_KINDS = ("stop",)
CONNECT_TIMEOUT_SECONDS = 1.0
ANSWER_TIMEOUT_SECONDS = 8.0  # below the 10 s timeout `cairn hook claude-code install` writes
START_WAIT_SECONDS = 5.0
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
USAGE = "usage: cairn-hook claude-code|stdin [--store PATH_OR_URL]  (hook JSON on stdin)"
SERVE_CODE = "import sys; from cairn.adapters.cli import main; sys.exit(main())"


class Unanswered(Exception):
    """The server took the call but gave no complete answer (it died, or took too long)."""


class RuntimePaths:
    """Where the server of one store and configuration listens, locks and logs."""

    __slots__ = ("key", "location", "lock", "log", "socket")

    def __init__(self, location: str, key: str, folder: str) -> None:
        self.location = location
        self.key = key
        self.socket = os.path.join(folder, key + ".sock")
        self.lock = os.path.join(folder, key + ".lock")
        self.log = os.path.join(folder, key + ".log")

    @property
    def folder(self) -> str:
        return os.path.dirname(self.socket)


def cairn_home(env: Mapping[str, str]) -> str:
    """CAIRN_HOME as `cairn.config.Settings` reads it (a test keeps the two equal)."""
    if env.get("CAIRN_HOME"):
        return env["CAIRN_HOME"]
    base = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "cairn")


def store_location(env: Mapping[str, str], explicit: str | None) -> str:
    """The store a hook with this environment and `--store` opens (a relative path is made
    absolute here, since the server runs elsewhere)."""
    if explicit:
        return explicit if "://" in explicit else os.path.abspath(explicit)
    return env.get("CAIRN_URL") or os.path.join(cairn_home(env), "memory.db")


def runtime_paths(env: Mapping[str, str], explicit: str | None) -> RuntimePaths:
    location = store_location(env, explicit)
    config = sorted(f"{k}={v}" for k, v in env.items() if k.startswith("CAIRN_"))
    key = hashlib.sha256("\0".join([location, *config]).encode()).hexdigest()[:20]
    folder = os.path.join(cairn_home(env), "hooks")
    if len(os.fsencode(os.path.join(folder, key + ".sock"))) > MAX_SOCKET_PATH:
        tmp = env.get("TMPDIR") or "/tmp"
        folder = os.path.join(tmp, f"cairn-{os.getuid()}")
    return RuntimePaths(location, key, folder)


def private_folder(folder: str) -> None:
    """Create the runtime folder 0700, or refuse one anybody else could write into."""
    os.makedirs(folder, mode=0o700, exist_ok=True)
    found = os.lstat(folder)
    if found.st_uid != os.getuid() or found.st_mode & 0o077 or not os.path.isdir(folder):
        raise PermissionError(
            f"{folder} is not a private directory of this user; remove it or set CAIRN_HOME "
            "to a directory you own."
        )


def request_bytes(kind: str, cwd: str, raw: bytes) -> bytes:
    where = os.fsencode(cwd)
    return b"%s %s %d\n%s%s" % (PROTOCOL, kind.encode(), len(where), where, raw)


def ask(path: str, request: bytes) -> tuple[bytes, bytes] | None:
    """The server's (stdout, stderr), or None when nothing listens on `path` (no server, or
    a stale socket file). Raises `Unanswered` when the call was taken but not answered."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT_SECONDS)
        try:
            conn.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        conn.settimeout(ANSWER_TIMEOUT_SECONDS)
        try:
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
            answer = _read_all(conn)
        except OSError as exc:
            raise Unanswered(f"the hook server dropped the call ({exc})") from None
    finally:
        conn.close()
    return parse_answer(answer)


def _read_all(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def parse_answer(answer: bytes) -> tuple[bytes, bytes]:
    head, newline, body = answer.partition(b"\n")
    sizes = head.split(b" ")
    if not newline or len(sizes) != 2 or not all(s.isdigit() for s in sizes):
        raise Unanswered("the hook server's answer was cut off")
    out, err = int(sizes[0]), int(sizes[1])
    if len(body) != out + err:
        raise Unanswered("the hook server's answer was cut off")
    return body[:out], body[out:]


def server_running(paths: RuntimePaths) -> bool:
    """True while a server holds the lock (running, or still starting)."""
    import fcntl

    try:
        handle = os.open(paths.lock, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(handle)
    return False


def start_server(paths: RuntimePaths, explicit: str | None) -> Popen[bytes]:
    """`cairn [--store S] hook serve`, detached: its own session, no terminal, cwd `/`."""
    import subprocess

    private_folder(paths.folder)
    store = ["--store", paths.location] if explicit else []
    with open(os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-c", SERVE_CODE, *store, "hook", "serve"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd="/",
            start_new_session=True, close_fds=True,
        )  # fmt: skip


def _answer(kind: str, raw: bytes, explicit: str | None) -> tuple[bytes, bytes]:
    paths = runtime_paths(os.environ, explicit)
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    request = request_bytes(kind, cwd, raw)
    answer = ask(paths.socket, request)
    if answer is not None:
        return answer
    try:
        server = None if server_running(paths) else start_server(paths, explicit)
    except OSError:
        return _in_process(kind, raw, explicit)  # no runtime folder here: the slow way
    deadline = time.monotonic() + START_WAIT_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.02)
        answer = ask(paths.socket, request)
        if answer is not None:
            return answer
        if server is not None and server.poll() not in (None, 0):
            return _in_process(kind, raw, explicit)  # it cannot start: answer the slow way
    raise Unanswered(f"the hook server did not start within {START_WAIT_SECONDS:.0f} s")


def _in_process(kind: str, raw: bytes, explicit: str | None) -> tuple[bytes, bytes]:
    from cairn.adapters.agent_hooks import answer_in_process

    reply = answer_in_process(kind, raw, explicit)
    return reply.stdout.encode(), reply.stderr.encode()


def _arguments(argv: Sequence[str]) -> tuple[str, str | None]:
    args = list(argv)
    store: str | None = None
    if "--store" in args:
        at = args.index("--store")
        if at + 1 >= len(args):
            raise ValueError(USAGE)
        store = args[at + 1]
        del args[at : at + 2]
    if len(args) != 1 or args[0] not in KINDS:
        raise ValueError(USAGE)
    return args[0], store


def _failure(kind: str, message: str) -> tuple[bytes, bytes]:
    err = f"cairn: lessons hook skipped: {message}\n".encode(errors="replace")
    if kind != "stdin":
        return b"", err
    import json  # only on this rare path: json costs the common one a few milliseconds

    error = {"code": "hook_failed", "message": message}
    return json.dumps({"lessons": [], "text": "", "error": error}).encode() + b"\n", err


def main(argv: Sequence[str] | None = None) -> int:
    """Answer one hook call; always exit status 0."""
    kind = "claude-code"
    try:
        kind, store = _arguments(sys.argv[1:] if argv is None else argv)
        raw = b"" if sys.stdin is None else sys.stdin.buffer.read()
        out, err = _answer(kind, raw, store)
    except Exception as exc:  # noqa: BLE001 - the hook's top level: never block the agent
        out, err = _failure(kind, str(exc) or type(exc).__name__)
    try:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
        sys.stderr.buffer.write(err)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # the agent stopped listening: nothing left to do
    return 0


if __name__ == "__main__":
    sys.exit(main())
