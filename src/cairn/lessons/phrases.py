"""Does a memory's text name the command a call runs?

Commands are compared as written, word for word, not stemmed: `npm publish` is a command,
"published" is not. Memory text is read into shell-like tokens (lowercased, a flag keeps its
dashes: "`git push --force`" gives `git`, `push`, `--force`).

What counts, strongest first:

- the program and its subcommand side by side, `npm publish` (0.9), one more word or a flag
  the call also has, `alembic upgrade head`, `git push --force` (0.95). When the memory's
  program and subcommand are followed by a flag the call does *not* have, the memory is about
  that other variant (`git push --force` says nothing about a plain `git push`) and does not
  count;
- a flag written as a verb with the subcommand, `force-push` or "force push" for
  `git push --force` (0.85);
- the program alone (0.65), only where the text marks it as a command, a code span (`npm`)
  or a tag, and not followed there by another subcommand (`npm install` is not about
  `npm ci`); never for programs too general to mean anything alone (`git`, `python`). In
  plain prose a program name is too often an ordinary word.

Programs that only look around (`ls`, `cat`, `grep`, `cd`...) never match by name: a lesson
about them would fire on every call. Their path arguments still count (`cairn.lessons.matching`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cairn.lessons.calls import Invocation
from cairn.ranking.lexical import STOPWORDS

PHRASE = 0.9
PHRASE_PLUS = 0.95
FLAG_VERB = 0.85
PROGRAM = 0.65

# Looking around is not acting: no memory is "about" cat or ls.
NO_COMMAND = frozenset(
    {"cd", "ls", "ll", "cat", "echo", "pwd", "head", "tail", "grep", "egrep", "rg", "ag", "find",
     "fd", "wc", "sort", "uniq", "cut", "tr", "sed", "awk", "xargs", "true", "false", "test",
     "[", "which", "type", "export", "set", "unset", "source", ".", "mkdir", "touch", "cp", "mv",
     "chmod", "sleep", "date", "printf", "tee", "diff", "less", "more", "file", "stat", "du",
     "df", "tree", "clear", "history", "jq", "yq", "basename", "dirname", "realpath",
     "readlink", "whoami", "hostname", "uname", "ps", "kill", "open", "code", "vim", "vi",
     "nano", "man", "help", "exit", "wait", "read", "alias"}
)  # fmt: skip
# Too general to mean anything without a subcommand, even in a code span.
COMMON_PROGRAMS = frozenset(
    {"git", "python", "python3", "node", "bash", "sh", "zsh", "rm", "env", "sudo"}
)  # fmt: skip
# Spelled two ways by people and tools.
_FLAG_ALIASES = {("git", "push", "-f"): "--force", ("git", "push", "--force-with-lease"): "--force"}
_TOKEN = re.compile(r"-{0,2}[a-z0-9_][a-z0-9_.+@:/=-]*")
_SPAN = re.compile(r"`([^`\n]{1,200})`")


@dataclass(frozen=True, slots=True)
class PhraseMatch:
    strength: float
    phrase: str  # what the memory names, as the `why` quotes it
    target: str  # the command the lesson is given for (repeat key)


def tokens(text: str) -> list[str]:
    return [t.rstrip(".,:;!?)'\"") for t in _TOKEN.findall(text.lower())]


def code_spans(text: str) -> list[str]:
    return _SPAN.findall(text)


def call_flags(inv: Invocation) -> set[str]:
    flags = set(inv.flags)
    sub = inv.words[0] if inv.words else ""
    for flag in inv.flags:
        alias = _FLAG_ALIASES.get((inv.program, sub, flag))
        if alias:
            flags.add(alias)
    return flags


def match_command(
    inv: Invocation, text_tokens: Sequence[str], *, marked: bool
) -> PhraseMatch | None:
    """The strongest way `text_tokens` name the invocation; `marked` says the tokens come from
    a code span or a tag, where a program named alone counts."""
    if inv.program in NO_COMMAND:
        return None
    best: PhraseMatch | None = None
    for found in (_subcommand(inv, text_tokens), _flag_verb(inv, text_tokens),
                  _program(inv, text_tokens) if marked else None):  # fmt: skip
        if found is not None and (best is None or found.strength > best.strength):
            best = found
    return best


def _subcommand(inv: Invocation, toks: Sequence[str]) -> PhraseMatch | None:
    if not inv.words:
        return None
    program, sub = inv.program, inv.words[0]
    flags = call_flags(inv)
    best: PhraseMatch | None = None
    for i in range(len(toks) - 1):
        if toks[i] != program or toks[i + 1] != sub:
            continue
        after = toks[i + 2] if i + 2 < len(toks) else ""
        if after.startswith("-") and len(after) > 1 and after.split("=")[0] not in flags:
            continue  # the memory is about a variant this call is not
        phrase, strength = f"{program} {sub}", PHRASE
        if after and (after in flags or (len(inv.words) > 1 and after == inv.words[1])):
            phrase, strength = f"{program} {sub} {after}", PHRASE_PLUS
        if best is None or strength > best.strength:
            best = PhraseMatch(strength, phrase, f"{program} {sub}")
    return best


def _flag_verb(inv: Invocation, toks: Sequence[str]) -> PhraseMatch | None:
    if not inv.words:
        return None
    sub = inv.words[0]
    for flag in sorted(call_flags(inv)):
        if not flag.startswith("--") or len(flag) < 4:
            continue
        verb = flag[2:]
        joined = f"{verb}-{sub}"
        hit = joined in toks or any(
            toks[i] == verb and toks[i + 1] == sub for i in range(len(toks) - 1)
        )
        if hit:
            return PhraseMatch(FLAG_VERB, joined, f"{inv.program} {sub} {flag}")
    return None


def _program(inv: Invocation, toks: Sequence[str]) -> PhraseMatch | None:
    program = inv.program
    if program in COMMON_PROGRAMS or len(program) < 2:
        return None
    sub = inv.words[0] if inv.words else None
    for i, token in enumerate(toks):
        if token != program:
            continue
        after = toks[i + 1] if i + 1 < len(toks) else ""
        # "`npm` is slow" names npm; "`npm install`" names another subcommand than `npm ci`.
        if not after or after in STOPWORDS or after == sub or after.startswith("-"):
            return PhraseMatch(PROGRAM, program, program)
    return None
