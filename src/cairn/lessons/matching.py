"""Why a memory or procedure is about a tool call, and how strongly (0 to 1).

A lesson must be specifically about the call, so every way of matching has a fixed strength and
only matches at or above `THRESHOLD` (0.6) are said. The table, strongest first:

    1.0   an edit (or a rewrite) of lines a memory cites, line range or symbol; asks a question
    0.9   a whole-file citation of a file the call edits or writes
    0.85  a warning, constraint, lesson or instruction naming the file's path (text or tag),
          or the command (`npm publish` 0.9-0.95, `force-push` 0.85; see `phrases`)
    0.8   a glob the text names that holds the file; a URL the memory cites (fetch)
    0.75  a citation of a directory (or glob) holding the file; a read of cited lines; the
          text naming a directory holding the file, or a symbol the edit defines
    0.7   a read of a cited file; an edit elsewhere in a file whose lines are cited when the
          edited lines are unknown; a procedure whose context names the file or command
    0.65  a command touching a cited file; a bare file name (not `index.js`) or a program
          alone in a code span or tag; a command (`rm -rf dir/`) over a directory holding a
          cited file
    0.6   a command touching a file whose lines are cited
    <0.6  never said: an edit of other lines than the cited ones (0.55: the memory is about
          those lines, not this edit), a read of other lines (0.4), a search (Grep, Glob)
          over a directory holding cited files (0.45), a file name too common to mean anything

Citations match any type of memory (scaled by `CITATION_TYPE_FACTOR`: a fact citing the file
is worth a little less than a warning); text matches only warnings, constraints, lessons and
instructions, whose whole point is to be said before an action.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cairn.code.records import CitationCheck
from cairn.lessons import phrases
from cairn.lessons.locate import Target, ToolCall
from cairn.lessons.paths import glob_match, is_glob, mentions, under
from cairn.models import Memory
from cairn.records.code import CitationRow
from cairn.records.sessions import Procedure

THRESHOLD = 0.6
LESSON_TYPES: tuple[str, ...] = ("warning", "constraint", "lesson", "instruction")
CITATION_TYPE_FACTOR: Mapping[str, float] = {
    "warning": 1.0, "constraint": 1.0, "lesson": 1.0, "instruction": 1.0, "decision": 0.95,
    "fact": 0.9, "preference": 0.9, "open_question": 0.9, "task": 0.85, "artifact": 0.85,
}  # fmt: skip
# File names that say nothing about which file: every project has several.
GENERIC_BASENAMES = frozenset(
    {"__init__.py", "__main__.py", "main.py", "app.py", "utils.py", "util.py", "helpers.py",
     "config.py", "settings.py", "setup.py", "conftest.py", "models.py", "views.py", "index.js",
     "index.ts", "index.tsx", "index.jsx", "index.html", "main.js", "main.ts", "main.go",
     "main.rs", "lib.rs", "mod.rs", "readme.md", "changelog.md", "package.json",
     "tsconfig.json", "makefile", "dockerfile", "requirements.txt", "pyproject.toml", "e.g",
     "i.e", "etc", "test.py", "tests.py", "types.ts", "utils.ts", "utils.js", "go.mod"}
)  # fmt: skip

# Directories that hold most of a project: naming one says nothing about a file in it.
SOURCE_ROOTS = frozenset({"src", "lib", "app", "source", "pkg", "internal", "packages", "."})

Checker = Callable[[CitationRow], CitationCheck]


@dataclass(frozen=True, slots=True)
class Match:
    strength: float
    why: str
    target: str  # the file or command the lesson is given for
    question: str | None = None
    path: str | None = None  # the file the call touches, for path mute rules
    via: str = "text"  # citation | text | procedure


def best(matches: Iterable[Match | None]) -> Match | None:
    found = [m for m in matches if m is not None]
    return max(found, key=lambda m: (m.strength, m.question is not None)) if found else None


# Citations -------------------------------------------------------------------------------------
def citation_match(call: ToolCall, row: CitationRow, ref: str, checker: Checker) -> Match | None:
    assert row.path is not None
    return best(_against(call, row, ref, target, checker) for target in call.targets)


def _against(
    call: ToolCall, row: CitationRow, ref: str, target: Target, checker: Checker
) -> Match | None:
    cited = row.path or ""
    file_target = not (target.is_dir or target.is_glob)
    if is_glob(cited):
        if file_target and glob_match(cited, target.path):
            return _cite(0.75, f"cites {cited}, which matches {target.path}", target)
        return None
    if file_target and cited == target.path:
        return _same_file(call, row, ref, target, checker)
    if file_target and under(target.path, cited):
        strength = {"edit": 0.75, "write": 0.75, "read": 0.65, "run": 0.6}.get(call.action, 0.45)
        return _cite(strength, f"cites {cited}/, which holds {target.path}", target)
    strength = 0.65 if call.action in ("run", "edit", "write") else 0.45
    if target.is_dir and cited.strip("/") == target.path.strip("/"):
        return _cite(strength, f"cites {cited.strip('/')}/, which this call touches", target)
    if (target.is_dir and under(cited, target.path)) or (
        target.is_glob and glob_match(target.path, cited)
    ):
        return _cite(strength, f"cites {cited}, under {target.path} which this call touches",
                     target, path=cited)  # fmt: skip
    return None


def _cite(strength: float, why: str, target: Target, *, path: str | None = None) -> Match:
    return Match(strength, why, target.path, path=path or target.path, via="citation")


_VERB = {"edit": "edit changes", "write": "call rewrites", "read": "call reads",
         "run": "command touches", "search": "search covers"}  # fmt: skip


def _same_file(
    call: ToolCall, row: CitationRow, ref: str, target: Target, checker: Checker
) -> Match:
    verb = _VERB.get(call.action, "call touches")
    if row.kind not in ("lines", "symbol"):
        strength = {"edit": 0.9, "write": 0.9, "read": 0.7, "run": 0.65}.get(call.action, 0.5)
        return _cite(strength, f"cites {target.path}, which this {verb}", target)
    checked = checker(row)
    span = checked.lines or _stored(row)
    label = _label(row, span)
    changed = " (changed since it was written)" if checked.status == "changed" else ""
    if span is None:
        return _cite(0.65, f"cites {label}{changed} in {target.path}, which this {verb}", target)
    overlap = _overlap(target.lines, span)
    if call.action == "write" or (call.action == "edit" and overlap is not None):
        question = _question(ref, target, span, overlap, label, rewrite=call.action == "write")
        why = f"cites {label}{changed}, which this {verb}"
        return Match(1.0, why, target.path, question, target.path, "citation")
    if call.action == "edit":
        if not target.lines:
            return _cite(0.7, f"cites {label}{changed} in the file this edit changes", target)
        at = _ranges(target.lines)
        return _cite(0.55, f"cites {label}{changed}; this edit is at {at}", target)
    if call.action == "read":
        strength = 0.75 if overlap is not None or not target.lines else 0.4
        return _cite(strength, f"cites {label}{changed}, which this call reads", target)
    strength = 0.6 if call.action == "run" else 0.45
    return _cite(strength, f"cites {label}{changed}, which this {verb}", target)


def _stored(row: CitationRow) -> tuple[int, int] | None:
    if row.start_line is None or row.end_line is None:
        return None
    return row.start_line, row.end_line


def _label(row: CitationRow, span: tuple[int, int] | None) -> str:
    if row.kind == "symbol" and row.symbol:
        return f"{row.path}::{row.symbol}"
    if span is None:
        return str(row.path)
    first, last = span
    return f"{row.path}:{first}" if first == last else f"{row.path}:{first}-{last}"


def _overlap(ranges: tuple[tuple[int, int], ...], span: tuple[int, int]) -> tuple[int, int] | None:
    for first, last in ranges:
        if first <= span[1] and span[0] <= last:
            return first, last
    return None


def _ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges[:3])
    single = len(ranges) == 1 and ranges[0][0] == ranges[0][1]
    return f"line {shown}" if single else f"lines {shown}"


def _question(
    ref: str,
    target: Target,
    span: tuple[int, int],
    edited: tuple[int, int] | None,
    label: str,
    *,
    rewrite: bool,
) -> str:
    if rewrite or edited is None:
        change = f"This call rewrites {target.path}, including {label}, which {ref} cites."
    else:
        lines = f"line {edited[0]}" if edited[0] == edited[1] else f"lines {edited[0]}-{edited[1]}"
        change = f"This edit changes {lines} of {target.path}; {ref} cites {label}."
    return (
        f"{change} Does {ref} still hold after it? If it does, confirm('{ref}'); if not, "
        f"correct('{ref}', <what is true now>, reason=...)."
    )


# Text: paths, symbols, URLs and commands named by a memory -------------------------------------
def text_match(call: ToolCall, memory: Memory) -> Match | None:
    """How `memory`'s content and tags name what the call touches (lesson types only)."""
    if memory.type not in LESSON_TYPES:
        return None
    kind = memory.type
    named = mentions(memory.content)
    found: list[Match | None] = [path_match(call, named, memory.tags, kind)]
    found.append(_symbol_match(call, memory, kind))
    found.append(_url_match(call, memory, kind))
    found.append(command_match(call, memory.content, memory.tags, kind))
    return best(found)


def path_match(call: ToolCall, named: list[str], tags: Iterable[str], kind: str) -> Match | None:
    out: list[Match | None] = []
    for target in call.targets:
        for mention in named:
            out.append(_mention(call, target, mention, f"{kind} naming {mention}"))
        for tag in tags:
            if "/" in tag or "." in tag:
                out.append(_mention(call, target, tag, f"{kind} tagged {tag}"))
    return best(out)


def _mention(call: ToolCall, target: Target, mention: str, why: str) -> Match | None:
    if target.is_glob:
        return None
    clean = mention.rstrip("/")
    if is_glob(mention):
        if not target.is_dir and glob_match(mention, target.path):
            return Match(0.8, f"{why}, which matches {target.path}", target.path, path=target.path)
        return None
    if "/" not in mention:
        if target.is_dir or clean.lower() in GENERIC_BASENAMES or clean != target.basename:
            return None
        return Match(0.65, why, target.path, path=target.path)
    padded = "/" + target.path
    if clean == target.path:
        return Match(0.85, why, target.path, path=target.path)
    if padded.endswith("/" + clean) and not mention.endswith("/") and not target.is_dir:
        return Match(0.8, why, target.path, path=target.path)  # named from a subdirectory
    holds = under(target.path, clean) or ("/" in clean and f"/{clean}/" in padded)
    if holds and clean not in SOURCE_ROOTS:
        return Match(0.75, f"{why}, which holds {target.path}", target.path, path=target.path)
    if target.is_dir and under(clean, target.path) and call.action in ("run", "edit", "write"):
        return Match(0.65, f"{why}, under {target.path}/", target.path, path=clean)
    return None


def _symbol_match(call: ToolCall, memory: Memory, kind: str) -> Match | None:
    if not call.symbols or call.action != "edit" or not call.targets:
        return None
    spans = phrases.code_spans(memory.content) + list(memory.tags)
    for symbol in call.symbols:
        for span in spans:
            name = span.strip().removesuffix("()")
            if name == symbol or name.endswith("." + symbol):
                why = f"{kind} naming `{name}`, which this edit defines or changes"
                return Match(0.75, why, call.targets[0].path, path=call.targets[0].path)
    return None


def _url_match(call: ToolCall, memory: Memory, kind: str) -> Match | None:
    for url in call.urls:
        ref = memory.source_ref or ""
        if "://" in ref and url.startswith(ref.rstrip("/")):
            return Match(0.8, f"cites {ref}", url, via="citation")
        host = url.split("://", 1)[-1].split("/", 1)[0].lower()
        if "." in host and host in memory.content.lower():
            return Match(0.7, f"{kind} naming {host}", host)
    return None


def command_match(call: ToolCall, content: str, tags: Iterable[str], kind: str) -> Match | None:
    plain = phrases.tokens(content)
    marked = [phrases.tokens(span) for span in phrases.code_spans(content)]
    marked += [phrases.tokens(tag.replace("-", " ")) + phrases.tokens(tag) for tag in tags]
    out: list[Match | None] = []
    for inv in call.invocations:
        for toks, is_marked in ((plain, False), *((m, True) for m in marked)):
            found = phrases.match_command(inv, toks, marked=is_marked)
            if found is not None:
                why = f"{kind} about `{found.phrase}`"
                out.append(Match(found.strength, why, found.target))
    return best(out)


# Procedures --------------------------------------------------------------------------------------
def procedure_match(call: ToolCall, procedure: Procedure) -> Match | None:
    """A procedure whose context names the file or the command (at most 0.7)."""
    text = " ".join(_strings(procedure.context))
    if not text:
        return None
    found = best([path_match(call, mentions(text), (), "procedure"),
                  command_match(call, text, (), "procedure")])  # fmt: skip
    if found is None:
        return None
    why = found.why.replace("procedure naming", "procedure whose context names").replace(
        "procedure about", "procedure whose context names"
    )
    return Match(min(0.7, found.strength), why, found.target, path=found.path, via="procedure")


def _strings(value: Any, depth: int = 0) -> list[str]:
    if depth > 4:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v, depth + 1)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v, depth + 1)]
    return []
