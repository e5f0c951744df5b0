"""Scopes: the isolation boundary of every read and write.

A scope is `kind:id` (`project:github.com/acme/api`, `user:alice`) or the literal `global`.
Kinds are an open vocabulary of lowercase words so teams can add `team:`, `org:` or `agent:`
scopes without a schema change; a typo makes a new, empty scope, never a wider one.

When a call names no scope, a `.cairn.toml` committed at the checkout's root names it
(`scope = "project:acme/api"`, see `cairn.scope_file`); else it is detected from the working
directory, most stable first:

1. the repository's `origin` remote, normalised so every spelling of one repository gives one
   scope: `git@github.com:Acme/API.git`, `ssh://git@github.com:22/acme/api`,
   `https://user:token@github.com/acme/api.git/` all give `project:github.com/acme/api`.
   Credentials, ports and a trailing `.git` or `/` are dropped and the host is lowercased. The
   path keeps its case, except on hosts known to treat it case-insensitively (github.com,
   gitlab.com, bitbucket.org, codeberg.org), where it is lowercased too; a self-hosted server
   may well be case-sensitive, so two repositories there differing only by case stay apart.
   An `origin` that is a local path (a clone of a repository on this machine) takes that
   repository's scope, so a local clone shares memory with its source.
2. else the repository's common git dir, which all its worktrees share:
   `project:local/<name>-<hash>`.
3. else the resolved directory itself: `project:path/<name>-<hash>`.

The name in 2 and 3 is only there to be readable; the hash of the resolved path is what makes
the scope unique. `git` runs with a timeout and with the repository-location variables
(`GIT_DIR` and friends, set inside git hooks) removed, so the answer depends on `cwd` alone. A
repository git refuses to read (another user's checkout, "dubious ownership") counts as
no repository.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from cairn.errors import InvalidInput, InvalidScope
from cairn.gitproc import git_process
from cairn.refusal import refuse_secrets, safe_echo
from cairn.scope_file import configured_scope

__all__ = [
    "GLOBAL",
    "current_branch",
    "parse_scope",
    "resolve_scope",
    "scope_from_cwd",
    "scope_from_remote",
    "visible_scopes",
]

GLOBAL = "global"
MAX_ID_LENGTH = 200
GIT_TIMEOUT_SECONDS = 10.0

_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")
# Unicode categories that cannot appear in an id: controls, format characters (zero-width and
# bidi overrides, which make two different ids look alike), surrogates, private use, unassigned
# and every kind of separator.
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
_EXPECTED = (
    "Use `kind:id` with a lowercase kind and an id without spaces, e.g. "
    "`project:github.com/acme/api`, `user:alice`, `team:platform`, or the literal `global`; "
    "omit scope to detect it from cwd."
)

# Hosts that serve the same repository whatever the case of its path, and the aliases they
# answer ssh on, so `ssh.github.com:443` and `github.com` are one host.
_CASE_INSENSITIVE_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org", "codeberg.org"})
_HOST_ALIASES = {
    "ssh.github.com": "github.com",
    "www.github.com": "github.com",
    "altssh.gitlab.com": "gitlab.com",
    "altssh.bitbucket.org": "bitbucket.org",
}
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)", re.DOTALL)
_SCP = re.compile(r"(?:[^@/]*@)?(?P<host>\[[^\]/]*\]|[^:/@\[]+):(?P<path>.*)", re.DOTALL)
_HELPER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*::(?P<address>.+)", re.DOTALL)
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:[\\/]")
# A local clone's origin is followed this many times, which also ends origin cycles.
_MAX_LOCAL_HOPS = 3


def parse_scope(text: str) -> str:
    """Validate a scope and return its canonical form (kind lowercased, outer blanks stripped).

    A scope is stored with every memory and event and echoed in answers, so it is checked for
    secrets first, as given (`user:ghp_...` is refused, not stored)."""
    if not isinstance(text, str):
        raise InvalidScope(f"scope must be a string, not {type(text).__name__}. {_EXPECTED}")
    refuse_secrets(text, field="scope")
    stripped = text.strip()
    shown = _show(text)
    if stripped.lower() == GLOBAL:
        return GLOBAL
    if not stripped:
        raise InvalidScope(f"scope is blank. {_EXPECTED}")
    kind_raw, colon, ident = stripped.partition(":")
    if not colon:
        raise InvalidScope(f"scope {shown} has no `:` between kind and id. {_EXPECTED}")
    kind = kind_raw.lower()
    if not kind_raw.isascii() or not _KIND.fullmatch(kind):
        raise InvalidScope(
            f"scope {shown} has kind {_show(kind_raw)}; a kind is a lowercase word of letters, "
            f"digits, `_` or `-` (at most 32 characters) starting with a letter. {_EXPECTED}"
        )
    if kind == GLOBAL:
        raise InvalidScope(f"scope {shown}: `global` takes no id; write just `global`.")
    if not ident:
        raise InvalidScope(f"scope {shown} has an empty id. {_EXPECTED}")
    bad = next((ch for ch in ident if _is_bad_id_char(ch)), None)
    if bad is not None:
        raise InvalidScope(
            f"scope {shown} has a space or invisible character ({_codepoint(bad)}) in its id. "
            f"{_EXPECTED}"
        )
    ident = unicodedata.normalize("NFC", ident)
    if len(ident) > MAX_ID_LENGTH:
        raise InvalidScope(
            f"scope id is {len(ident)} characters long; the limit is {MAX_ID_LENGTH}. "
            "Use a shorter id."
        )
    return f"{kind}:{ident}"


def visible_scopes(scope: str) -> tuple[str, ...]:
    """The scopes a reader in `scope` sees: its own and `global`."""
    canonical = parse_scope(scope)
    return (GLOBAL,) if canonical == GLOBAL else (canonical, GLOBAL)


def resolve_scope(scope: str | None, cwd: str | Path | None, *, default_cwd: str | Path) -> str:
    """An explicit scope (validated) wins; else the scope detected from cwd, else default_cwd."""
    if scope is not None:
        return parse_scope(scope)
    return scope_from_cwd(cwd if cwd is not None else default_cwd)


def scope_from_cwd(cwd: str | Path) -> str:
    """The project scope of the repository (or plain directory) that holds `cwd`: the one
    its committed `.cairn.toml` names, else the one detected from git or the path."""
    directory = _existing_dir(cwd)
    return configured_scope(directory, parse_scope) or _detect(directory, hops=0)


def current_branch(cwd: str | Path) -> str | None:
    """The branch checked out at `cwd`; None when HEAD is detached or cwd is not a repository."""
    directory = _existing_dir(cwd)
    try:
        return _git(directory, "symbolic-ref", "--quiet", "--short", "HEAD")
    except InvalidScope:
        # The branch is a note on a memory; a git that hangs must not block the write.
        return None


def scope_from_remote(url: str, *, base: Path | None = None) -> str | None:
    """The scope an `origin` URL names, or None when it names no host and path cairn can use.

    A local-path remote names the directory it points at (`project:path/...`); `base` is what
    a relative one is resolved against, and without it a relative one names nothing.
    """
    raw = _local_remote(url)
    if raw is not None:
        local = _resolve_local(raw, base)
        return None if local is None else f"project:path/{_path_id(local)}"
    host_path = _host_and_path(url)
    if host_path is None:
        return None
    host, path = host_path
    return f"project:{_fit(f'{host}/{path}')}"


def _detect(directory: Path, *, hops: int) -> str:
    common = _git(directory, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common is None:
        return f"project:path/{_path_id(directory)}"
    # Older gits echo an option they do not know before the answer; the answer comes last.
    common_dir = (directory / common.splitlines()[-1]).resolve()
    main_dir = common_dir.parent if common_dir.name == ".git" else common_dir
    origin = _git(directory, "remote", "get-url", "origin")
    if origin:
        raw = _local_remote(origin)
        if raw is None:
            scope = scope_from_remote(origin)
            if scope is not None:
                return scope
        else:
            # A relative path is resolved against the main worktree, not this one, so every
            # worktree of the repository agrees.
            local = _resolve_local(raw, main_dir)
            if local is not None and local not in (directory, main_dir, common_dir):
                if os.path.isdir(local) and hops < _MAX_LOCAL_HOPS:
                    return _detect(local, hops=hops + 1)
                return f"project:path/{_path_id(local)}"
    return f"project:local/{_named_hash(main_dir.name, common_dir)}"


def _git(directory: Path, *args: str) -> str | None:
    """git's trimmed output, or None when git is missing or fails (e.g. not a repository)."""
    try:
        proc = git_process(directory, args, GIT_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise InvalidScope(
            f"git did not answer within {GIT_TIMEOUT_SECONDS:g} s in {str(directory)!r}, so the "
            "scope cannot be detected; pass scope explicitly (e.g. `project:github.com/acme/api`)."
        ) from None
    except OSError:
        # No git binary (or it cannot run): the directory is treated as a plain directory.
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def _existing_dir(cwd: str | Path) -> Path:
    try:
        path = Path(cwd).expanduser().resolve()
        exists, is_dir = path.exists(), path.is_dir()
    except (OSError, RuntimeError, ValueError) as exc:
        raise InvalidInput(
            f"cwd {safe_echo(str(cwd))} cannot be used ({exc}); pass an existing directory or an "
            "explicit scope such as `project:github.com/acme/api`."
        ) from None
    if not exists:
        raise InvalidInput(
            f"cwd {safe_echo(str(cwd))} does not exist; pass the directory you are working in, "
            "or an explicit scope such as `project:github.com/acme/api`."
        )
    if not is_dir:
        raise InvalidInput(
            f"cwd {safe_echo(str(cwd))} is a file, not a directory; pass the directory that "
            "holds it."
        )
    return path


def _local_remote(url: str) -> str | None:
    """The path text of a remote that lives on this machine; None for a network remote."""
    text = url.strip()
    if helper := _HELPER.fullmatch(text):
        text = helper.group("address").strip()
    if text.lower().startswith("file://"):
        raw = unquote(text[len("file://") :])
        # file://host/path: only the path matters on this machine.
        return raw if raw.startswith("/") else "/" + raw.partition("/")[2]
    if _URL.fullmatch(text) or (_SCP.fullmatch(text) and not _WINDOWS_DRIVE.match(text)):
        return None
    return text or None


def _resolve_local(raw: str, base: Path | None) -> Path | None:
    try:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            if base is None:
                return None
            path = base / path
        path = Path(os.path.normpath(path))
        if path.name == ".git":
            path = path.parent
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _host_and_path(url: str) -> tuple[str, str] | None:
    """(host, path) of a network remote, normalised; None when either part is missing."""
    text = url.strip()
    if helper := _HELPER.fullmatch(text):
        text = helper.group("address").strip()
    if match := _URL.fullmatch(text):
        authority, _, path = match.group("rest").partition("/")
        path = re.split(r"[?#]", path, maxsplit=1)[0]
        host = authority.rpartition("@")[2]
    elif match := _SCP.fullmatch(text):
        host, path = match.group("host"), match.group("path")
    else:
        return None
    host = _strip_port(host).lower().rstrip(".")
    host = _HOST_ALIASES.get(host, host)
    path = unquote(path).replace("\\", "/")
    path = re.sub(r"/{2,}", "/", path).strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if host in _CASE_INSENSITIVE_HOSTS:
        path = path.lower()
    host, path = _encode(host), _encode(path)
    if not host or not path:
        return None
    return host, path


def _strip_port(host: str) -> str:
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.partition(":")[0]


def _encode(text: str) -> str:
    """Percent-encode what an id may not hold (and `%` itself, so encoding stays one-to-one)."""
    out: list[str] = []
    for ch in text:
        if ch == "%" or _is_bad_id_char(ch):
            raw = ch.encode("utf-8", "surrogateescape")
            out.append("".join(f"%{b:02X}" for b in raw))
        else:
            out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _fit(ident: str) -> str:
    """Shorten an over-long id to a prefix plus a hash of the whole, keeping it unique."""
    if len(ident) <= MAX_ID_LENGTH:
        return ident
    digest = hashlib.sha256(ident.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"{ident[: MAX_ID_LENGTH - 17]}~{digest}"


def _path_id(path: Path) -> str:
    return _named_hash(path.name, path)


def _named_hash(name: str, path: Path) -> str:
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:16]
    lowered = name.lower().removesuffix(".git")
    slug = re.sub(r"[^a-z0-9._-]+", "-", lowered).strip("-.")[:40].strip("-.")
    return f"{slug or 'root'}-{digest}"


def _is_bad_id_char(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) in _BAD_CATEGORIES


def _codepoint(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def _show(text: str) -> str:
    return safe_echo(text)
