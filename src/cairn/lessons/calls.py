"""Tool calls as agents make them, read into what they touch: files, line ranges, commands, URLs.

Claude Code's tools are read by name (`Edit`, `MultiEdit`, `Write`, `NotebookEdit`, `Read`,
`Bash`, `Grep`, `Glob`, `LS`, `WebFetch`); any other tool by its arguments (`path`, `file`,
`file_path`, `files`, `paths`, `command`, `cmd`, `url`, `urls`, and `old_string` for an edit),
with its name hinting at the action (`edit_file`, `run_shell`, `read`...). Parsing is pure: it
never reads the disk (`locate` does), so it is safe on any input.

A shell command is split into simple commands at `;`, `&&`, `||`, `|` and `&`. In each, leading
`NAME=value` assignments and wrappers (`sudo`, `env`, `time`, `nohup`, `npx`, `uv run`,
`poetry run`, `bundle exec`, `python -m X` ...) are skipped to find the program that really
runs; then come its subcommand words (`publish` in `npm publish`, `compose up` in
`docker compose up`), its flags, and its arguments, of which those that look like paths (and
redirection targets, `> out.log`) are files the command touches. `cd DIR` earlier in the line
moves where later relative paths point.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_COMMAND_CHARS = 20_000
MAX_PATHS = 50

_EDIT_TOOLS = {"edit", "multiedit", "str_replace", "str_replace_editor", "replace", "edit_file",
               "apply_patch", "patch", "notebookedit", "notebook_edit", "modify"}  # fmt: skip
_WRITE_TOOLS = {"write", "create", "write_file", "create_file", "save", "save_file"}
_READ_TOOLS = {"read", "view", "read_file", "open", "cat", "open_file", "view_file"}
_RUN_TOOLS = {"bash", "shell", "run", "exec", "execute", "terminal", "run_command",
              "run_shell", "shell_command", "command", "sh", "run_terminal_cmd"}  # fmt: skip
_SEARCH_TOOLS = {"grep", "glob", "ls", "search", "find", "list", "list_files", "list_dir",
                 "search_files", "codebase_search", "file_search"}  # fmt: skip
_FETCH_TOOLS = {"webfetch", "fetch", "http", "browse", "web_fetch", "open_url"}

_PATH_KEYS = ("file_path", "path", "file", "filePath", "filename", "notebook_path", "target")
_PATHS_KEYS = ("files", "paths", "file_paths")
_COMMAND_KEYS = ("command", "cmd", "script")
_URL_KEYS = ("url", "uri")

_OPERATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "\n"})
_REDIRECTS = frozenset({">", ">>", "<", ">|", "&>", "&>>", ">&", "<>"})
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "nice", "exec", "command", "builtin",
                       "xargs", "timeout", "stdbuf", "ionice", "doas", "caffeinate"})  # fmt: skip
_RUNNERS = frozenset({"npx", "pnpx", "bunx"})
_TWO_WORD_RUNNERS = {
    "uv": "run", "poetry": "run", "pipenv": "run", "pdm": "run", "hatch": "run", "rye": "run",
    "bundle": "exec", "pnpm": "exec", "yarn": "dlx", "conda": "run", "mise": "exec",
}  # fmt: skip
# Programs whose plain-word arguments are files too (`rm -rf build`).
_FILE_PROGRAMS = frozenset({"rm", "rmdir", "mv", "cp", "touch", "mkdir", "chmod", "chown", "ln",
                            "truncate", "shred", "unlink", "cat", "less", "head", "tail", "vim",
                            "vi", "nano", "code", "open"})  # fmt: skip
_PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WORD = re.compile(r"^[a-z][a-z0-9_:-]*$")
_FILE_LIKE = re.compile(r"^[\w@+.-]*\.[A-Za-z][A-Za-z0-9]{0,9}$")
_GLOB_CHARS = frozenset("*?[")
# Output redirected into a file; `2>/dev/null` and `2>&1` are not writes to the project.
_WRITES = re.compile(r"(?<![0-9&>])>>?\s*(?![&>])(?!/dev/)\S")


@dataclass(frozen=True, slots=True)
class Invocation:
    """One simple command: the program that runs, its subcommand words, flags and arguments."""

    program: str
    words: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    text: str = ""

    @property
    def phrase(self) -> str:
        return " ".join((self.program, *self.words[:1]))


@dataclass(frozen=True, slots=True)
class RawPath:
    """A path as the call gave it (absolute, or relative to `base` under the call's cwd)."""

    path: str
    base: str = ""  # a directory a `cd` in the command moved to, relative to the cwd
    old_strings: tuple[str, ...] = ()  # text an edit replaces
    replace_all: bool = False
    read_range: tuple[int, int] | None = None
    whole: bool = False  # the call rewrites the whole file
    glob: bool = False


@dataclass(frozen=True, slots=True)
class RawCall:
    tool: str
    action: str  # edit | write | read | run | search | fetch | other
    paths: tuple[RawPath, ...] = ()
    invocations: tuple[Invocation, ...] = ()
    urls: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()  # names an edit defines or redefines
    writes: bool = False  # a shell line redirecting output into a file (`> out.log`)


def parse_call(tool: str, args: Mapping[str, Any] | None) -> RawCall:
    """Read a tool call into what it touches; unknown shapes give an empty call, never an error."""
    given = dict(args or {})
    name = tool.strip()
    key = re.sub(r"[^a-z0-9_]", "", name.lower().rsplit("__", 1)[-1])
    special = _claude_code(name, given)
    if special is not None:
        return special
    return _generic(name, key, given)


def _claude_code(name: str, args: dict[str, Any]) -> RawCall | None:
    path = _text(args.get("file_path")) or _text(args.get("notebook_path"))
    if name in ("Edit", "MultiEdit", "NotebookEdit") and path:
        edits = args.get("edits") if name == "MultiEdit" else [args]
        olds = tuple(
            old
            for item in (edits if isinstance(edits, list) else [])
            if isinstance(item, Mapping) and (old := _text(item.get("old_string")))
        )
        replace_all = bool(args.get("replace_all"))
        symbols = _defined_symbols([*olds, *_new_strings(edits)])
        raw = RawPath(path, old_strings=olds, replace_all=replace_all, whole=name == "NotebookEdit")
        return RawCall(name, "edit", (raw,), symbols=symbols)
    if name == "Write" and path:
        return RawCall(name, "write", (RawPath(path, whole=True),))
    if name == "Read" and path:
        return RawCall(name, "read", (RawPath(path, read_range=_read_range(args)),))
    if name == "Bash":
        return _command_call(name, _text(args.get("command")))
    if name in ("Grep", "Glob", "LS"):
        return RawCall(name, "search", _search_paths(name, args))
    if name == "WebFetch":
        url = _text(args.get("url"))
        return RawCall(name, "fetch", urls=(url,) if url else ())
    return None


def _generic(name: str, key: str, args: dict[str, Any]) -> RawCall:
    command = next((c for k in _COMMAND_KEYS if (c := _text(args.get(k)))), None)
    if command is not None and (key in _RUN_TOOLS or key not in _EDIT_TOOLS | _READ_TOOLS):
        return _command_call(name, command)
    paths = [p for k in _PATH_KEYS if (p := _text(args.get(k)))]
    for k in _PATHS_KEYS:
        value = args.get(k)
        if isinstance(value, list):
            paths.extend(p for item in value if (p := _text(item)))
    urls = tuple(u for k in _URL_KEYS if (u := _text(args.get(k))))
    old = _text(args.get("old_string")) or _text(args.get("old_str"))
    action = _action(key, has_old=old is not None, has_content="content" in args)
    whole = action == "write"
    raws = tuple(
        RawPath(p, old_strings=(old,) if old else (), whole=whole, glob=_is_glob(p))
        for p in dict.fromkeys(paths[:MAX_PATHS])
    )
    return RawCall(name, action, raws, urls=urls)


def _action(key: str, *, has_old: bool, has_content: bool) -> str:
    if has_old or key in _EDIT_TOOLS:
        return "edit"
    for action, names in (("write", _WRITE_TOOLS), ("read", _READ_TOOLS),
                          ("run", _RUN_TOOLS), ("search", _SEARCH_TOOLS),
                          ("fetch", _FETCH_TOOLS)):  # fmt: skip
        if key in names:
            return action
    return "write" if has_content else "other"


def _text(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    stripped = value.strip()
    return stripped or None


def _new_strings(edits: object) -> list[str]:
    items = edits if isinstance(edits, list) else []
    return [
        s for item in items if isinstance(item, Mapping) if (s := _text(item.get("new_string")))
    ]


def _read_range(args: Mapping[str, Any]) -> tuple[int, int] | None:
    offset, limit = args.get("offset"), args.get("limit")
    start = offset if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0 else 1
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        return start, start + limit - 1
    return (start, 10**9) if start > 1 else None


def _search_paths(name: str, args: Mapping[str, Any]) -> tuple[RawPath, ...]:
    base = _text(args.get("path")) or ""
    pattern = _text(args.get("pattern")) if name == "Glob" else _text(args.get("glob"))
    found: list[RawPath] = []
    if pattern:
        joined = (
            f"{base.rstrip('/')}/{pattern}" if base and not pattern.startswith("/") else pattern
        )
        found.append(RawPath(joined, glob=_is_glob(joined)))
    elif base:
        found.append(RawPath(base))
    return tuple(found)


def _is_glob(path: str) -> bool:
    return any(ch in _GLOB_CHARS for ch in path)


_DEFINES = re.compile(
    r"\b(?:def|class|function|func|fn|interface|struct|trait|enum|module|type)\s+([A-Za-z_]\w*)"
)


def _defined_symbols(texts: Sequence[str]) -> tuple[str, ...]:
    names = [name for text in texts for name in _DEFINES.findall(text[:MAX_COMMAND_CHARS])]
    return tuple(dict.fromkeys(names))[:20]


# Shell -----------------------------------------------------------------------------------------
def _command_call(name: str, command: str | None) -> RawCall:
    if not command:
        return RawCall(name, "run")
    invocations, paths, urls = parse_command(command)
    writes = bool(_WRITES.search(command))
    return RawCall(name, "run", paths, invocations, urls, writes=writes)


def parse_command(
    command: str,
) -> tuple[tuple[Invocation, ...], tuple[RawPath, ...], tuple[str, ...]]:
    """The simple commands of a shell line, the paths they touch and the URLs they name."""
    tokens = _tokens(command[:MAX_COMMAND_CHARS])
    invocations: list[Invocation] = []
    paths: list[RawPath] = []
    urls: list[str] = []
    base = ""
    for segment in _segments(tokens):
        words, targets = _split_redirects(segment)
        invocation, moved = _invocation(words)
        if moved is not None:
            base = _join(base, moved)
            continue
        if invocation is not None:
            invocations.append(invocation)
        files = invocation is not None and invocation.program in _FILE_PROGRAMS
        for arg in (*(invocation.args if invocation else ()), *targets):
            if "://" in arg:
                urls.append(arg)
            elif _looks_like_path(arg) or (files and _WORD.match(arg.lower())):
                paths.append(RawPath(arg, base=base, glob=_is_glob(arg)))
    unique = tuple(dict.fromkeys(paths))[:MAX_PATHS]
    return tuple(invocations), unique, tuple(dict.fromkeys(urls))


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        # An unbalanced quote: read it word by word rather than not at all.
        return re.findall(r"[^\s;&|]+|[;&|]+", command)


def _segments(tokens: Sequence[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _OPERATORS or (set(token) <= set(";&|()") and token):
            out.append([])
        else:
            out[-1].append(token)
    return [segment for segment in out if segment]


def _split_redirects(segment: Sequence[str]) -> tuple[list[str], list[str]]:
    words: list[str] = []
    targets: list[str] = []
    skip_next = False
    for index, token in enumerate(segment):
        if skip_next:
            skip_next = False
            continue
        if token in _REDIRECTS or (set(token) <= set("<>&|") and token):
            following = segment[index + 1] if index + 1 < len(segment) else ""
            if following and not following.isdigit() and following != "-":
                targets.append(following)
            skip_next = True
            continue
        if token.isdigit() and index + 1 < len(segment) and segment[index + 1] in _REDIRECTS:
            continue  # the `2` of `2>&1`
        words.append(token)
    return words, targets


def _invocation(words: Sequence[str]) -> tuple[Invocation | None, str | None]:
    """The invocation of one simple command, or the directory of a `cd`."""
    rest = list(words)
    while rest and _ASSIGNMENT.match(rest[0]):
        rest.pop(0)
    rest = _unwrap(rest)
    if not rest:
        return None, None
    program = _program_name(rest[0])
    if program == "cd":
        return None, rest[1] if len(rest) > 1 and not rest[1].startswith("-") else ""
    flags = [t.split("=", 1)[0].lower() for t in rest[1:] if t.startswith("-") and len(t) > 1]
    others = [t for t in rest[1:] if not (t.startswith("-") and len(t) > 1)]
    text = " ".join(words)[:200]
    return Invocation(program, _subcommand(rest[1:]), tuple(dict.fromkeys(flags)), tuple(others),
                      text), None  # fmt: skip


def _subcommand(tokens: Sequence[str]) -> tuple[str, ...]:
    """Up to two bare words after the program (`compose up`); a value before the first one is
    skipped (`alembic -c alembic.ini upgrade`), and a flag ends them (`git push --force x`)."""
    found: list[str] = []
    for token in tokens:
        if token.startswith("-") and len(token) > 1:
            if found:
                break
            continue
        if not _WORD.match(token):
            if found:
                break
            continue
        found.append(token)
        if len(found) == 2:
            break
    return tuple(found)


def _unwrap(tokens: list[str]) -> list[str]:
    """Skip wrappers until the program that really runs."""
    for _ in range(8):
        if not tokens:
            return tokens
        head = _program_name(tokens[0])
        if head in _WRAPPERS or head in _RUNNERS:
            tokens = _drop_flags(tokens[1:])
            while tokens and _ASSIGNMENT.match(tokens[0]):
                tokens.pop(0)
            if head == "timeout" and tokens and tokens[0][:1].isdigit():
                tokens = tokens[1:]
        elif _TWO_WORD_RUNNERS.get(head) == (tokens[1] if len(tokens) > 1 else None):
            tokens = _drop_flags(tokens[2:])
        elif _PYTHONS.match(head) and len(tokens) > 2 and tokens[1] == "-m":
            tokens = tokens[2:]
        else:
            return tokens
    return tokens


def _drop_flags(tokens: list[str]) -> list[str]:
    while tokens and tokens[0].startswith("-"):
        tokens = tokens[1:]
    return tokens


def _program_name(token: str) -> str:
    # `/usr/bin/git` is git; a token that is all slashes (`/`, `//`) has no base name, and is
    # named by what was typed rather than by an empty string.
    return (token.rstrip("/").rsplit("/", 1)[-1] or token).lower()


def _looks_like_path(arg: str) -> bool:
    if not arg or arg.startswith(("$", "-")) or "=" in arg or len(arg) > 500:
        return False
    if any(ch.isspace() for ch in arg):
        return False
    return "/" in arg or arg in (".", "..") or bool(_FILE_LIKE.match(arg))


def _join(base: str, directory: str) -> str:
    if not directory or directory.startswith(("/", "~")):
        return directory if directory.startswith("/") else ""
    return f"{base}/{directory}" if base else directory
