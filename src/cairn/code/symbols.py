"""Where a symbol lives in a file: `Billing.charge` → lines 40–58.

Python files are read with `ast`, which knows exactly where a function, class, method or
top-level assignment starts (decorators included) and ends. Every other file, and Python that
does not parse (a file mid-edit), goes through a language-agnostic reader: a definition is a
line naming the symbol after a keyword such as `def`, `class`, `function`, `fn`, `func`,
`struct`, `interface`, `type`, `enum`, `trait` or `impl` (or `const name =`); its extent is
the matching closing brace when the definition opens one, else the block of lines indented
deeper than it. A dotted name is found one part at a time, each inside the previous part's
extent; Go methods (`func (s *Server) Handle`) are found by receiver type.

The reader is deliberately forgiving (braces inside strings can fool it); the fingerprint, not
the extent, decides whether a citation still holds, so a slightly wrong extent costs a
`changed` at worst, never a false `same`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

_KEYWORDS = (
    "def|class|function|fn|func|struct|interface|type|enum|trait|impl|module|object|record|"
    "protocol|extension|union|namespace|macro_rules!"
)
_MODIFIERS = (
    r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|async|"
    r"abstract|final|override|virtual|unsafe|extern|open|data|sealed|inline|declare|"
    r"partial)\s+)*"
)
_SIGNATURE_LINES = 8  # how far a definition's opening brace may sit below its first line
_STRING = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`[^`]*`")


@dataclass(frozen=True, slots=True)
class Extent:
    """Lines `start`..`end`, counted from 1, both included."""

    start: int
    end: int


def find_symbol(path: str, text: str, symbol: str) -> Extent | None:
    """The extent of `symbol` in `text` (the contents of `path`), or None when it is not there."""
    if path.endswith((".py", ".pyi")):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None:
            return _python_symbol(tree, symbol.split("."))
    return generic_symbol(text.splitlines(), symbol)


# Python -------------------------------------------------------------------------------------
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _python_symbol(tree: ast.Module, parts: Sequence[str]) -> Extent | None:
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        node = _python_member(body, part, allow_assign=last)
        if node is None:
            return None
        body = node.body if isinstance(node, _DEFS) else []
    if node is None:
        return None
    decorators = node.decorator_list if isinstance(node, _DEFS) else []
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return Extent(start, node.end_lineno or node.lineno)


def _python_member(body: Sequence[ast.stmt], name: str, *, allow_assign: bool) -> ast.stmt | None:
    for stmt in body:
        if isinstance(stmt, _DEFS) and stmt.name == name:
            return stmt
        if allow_assign and _assigns(stmt, name):
            return stmt
    # Definitions guarded by `if TYPE_CHECKING:`, `try: ... except ImportError:` and the like.
    for stmt in body:
        for nested in _blocks(stmt):
            found = _python_member(nested, name, allow_assign=allow_assign)
            if found is not None:
                return found
    return None


def _assigns(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return isinstance(stmt.target, ast.Name) and stmt.target.id == name
    return False


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody]
    return []


# Any language -------------------------------------------------------------------------------
def generic_symbol(lines: Sequence[str], symbol: str) -> Extent | None:
    """Find a dotted symbol by definition keywords and brace or indentation extents."""
    parts = symbol.split(".")
    lo, hi = 0, len(lines)
    found: Extent | None = None
    for index, part in enumerate(parts):
        line = _definition_line(lines, part, lo, hi, nested=index > 0)
        if line is None:
            if index == 1 and len(parts) == 2:
                return _go_method(lines, parts[0], parts[1])
            return None
        found = Extent(line + 1, _extent_end(lines, line) + 1)
        lo, hi = line + 1, found.end
    return found


def _definition_patterns(name: str, *, nested: bool) -> list[re.Pattern[str]]:
    word = re.escape(name)
    patterns = [
        rf"^\s*{_MODIFIERS}(?:{_KEYWORDS})\s+(?:\([^)]*\)\s*)?{word}\b",
        rf"^\s*{_MODIFIERS}(?:const|let|var|val)\s+{word}\s*[:=]",
    ]
    if nested:
        # Methods inside a class body (JavaScript, TypeScript, Java, C#, Kotlin...).
        patterns.append(rf"^\s*{_MODIFIERS}(?:get\s+|set\s+|\w+[\w<>\[\],.? ]*\s+)?{word}\s*\(")
        patterns.append(rf"^\s*{word}\s*[:=]\s*(?:async\s+)?(?:function\b|\()")
    return [re.compile(p) for p in patterns]


def _definition_line(
    lines: Sequence[str], name: str, lo: int, hi: int, *, nested: bool
) -> int | None:
    for pattern in _definition_patterns(name, nested=nested):
        for number in range(lo, hi):
            if pattern.search(lines[number]):
                return number
    return None


def _go_method(lines: Sequence[str], receiver: str, name: str) -> Extent | None:
    pattern = re.compile(
        rf"^func\s*\(\s*\w*\s*\*?\s*{re.escape(receiver)}\b[^)]*\)\s*{re.escape(name)}\b"
    )
    for number, line in enumerate(lines):
        if pattern.search(line):
            return Extent(number + 1, _extent_end(lines, number) + 1)
    return None


def _extent_end(lines: Sequence[str], first: int) -> int:
    """The last line (0-based) of the definition starting at `first`."""
    opened = _brace_block_end(lines, first)
    if opened is not None:
        return opened
    return _indent_block_end(lines, first)


def _brace_block_end(lines: Sequence[str], first: int) -> int | None:
    depth = 0
    seen_brace = False
    last = min(len(lines), first + _SIGNATURE_LINES)
    number = first
    while number < len(lines):
        code = _code_part(lines[number])
        for ch in code:
            if ch == "{":
                depth += 1
                seen_brace = True
            elif ch == "}" and seen_brace:
                depth -= 1
                if depth == 0:
                    return number
            elif ch == ";" and not seen_brace:
                return number  # a one-line declaration: `type Id = string;`
        if not seen_brace and (number + 1 >= last or code.rstrip().endswith(":")):
            return None
        number += 1
    return len(lines) - 1 if seen_brace else None


def _code_part(line: str) -> str:
    """The line without string literals and `//` or `#` comments, so their braces do not count."""
    code = _STRING.sub('""', line)
    for marker in ("//", " #"):
        cut = code.find(marker)
        if cut >= 0:
            code = code[:cut]
    return code


def _indent_block_end(lines: Sequence[str], first: int) -> int:
    base = _indent(lines[first])
    end = first
    for number in range(first + 1, len(lines)):
        line = lines[number]
        if not line.strip():
            continue
        if _indent(line) <= base:
            break
        end = number
    return end


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())
