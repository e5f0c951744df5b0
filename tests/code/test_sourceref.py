"""source_ref forms and the path rules: relative to the repository root, never out of it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.code.sourceref import normalise_path, parse_source_ref
from cairn.errors import InvalidInput


@pytest.mark.parametrize(
    ("text", "kind", "path", "start", "end", "symbol"),
    [
        ("src/app.py", "file", "src/app.py", None, None, None),
        ("src/app.py:10-24", "lines", "src/app.py", 10, 24, None),
        ("src/app.py:7", "lines", "src/app.py", 7, 7, None),
        ("src/app.py#L10-L24", "lines", "src/app.py", 10, 24, None),
        ("src/app.py#L3", "lines", "src/app.py", 3, 3, None),
        ("src/app.py::Billing.charge", "symbol", "src/app.py", None, None, "Billing.charge"),
        ("web/ui.ts::render", "symbol", "web/ui.ts", None, None, "render"),
        ("./src//lib/../app.py", "file", "src/app.py", None, None, None),
        ("src\\win\\path.py:1-2", "lines", "src/win/path.py", 1, 2, None),
        ("src/billing/", "directory", "src/billing", None, None, None),
        ("src\\billing\\", "directory", "src/billing", None, None, None),
        # A glob reads as a path here; the checkout decides at write (see test_citations).
        ("src/**/*.py", "file", "src/**/*.py", None, None, None),
    ],
)
def test_path_forms(
    text: str, kind: str, path: str, start: int | None, end: int | None, symbol: str | None
) -> None:
    ref = parse_source_ref(text)
    assert (ref.kind, ref.path, ref.start, ref.end, ref.symbol) == (kind, path, start, end, symbol)
    assert ref.text == text
    assert ref.checkable


def test_commit_and_url_forms() -> None:
    commit = parse_source_ref("commit:3F2C9AB")
    assert (commit.kind, commit.commit, commit.path) == ("commit", "3f2c9ab", None)
    url = parse_source_ref("https://example.com/spec#section-2")
    assert url.kind == "url" and not url.checkable


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("/etc/passwd", "absolute"),
        ("~/notes.md", "absolute"),
        ("C:\\code\\app.py", "absolute"),
        ("../outside.py", "climbs out"),
        ("src/../../outside.py:1-3", "climbs out"),
        ("src/..", "root itself"),
        ("src/app.py:0-3", "count from 1"),
        ("src/app.py:9-3", "backwards"),
        ("src/app.py::not a symbol", "identifier"),
        ("src/app.py::", "identifier"),
        ("commit:xyz", "4 to 64 hex"),
        ("commit:", "4 to 64 hex"),
        ("   ", "blank"),
        ("src/\x00app.py", "control character"),
    ],
)
def test_refusals_say_what_to_do(text: str, fragment: str) -> None:
    with pytest.raises(InvalidInput, match=fragment) as caught:
        parse_source_ref(text)
    assert (
        "relative" in caught.value.message
        or "e.g." in caught.value.message
        or ("cite" in caught.value.message or "write" in caught.value.message)
    )


def test_over_long_ref_is_refused() -> None:
    with pytest.raises(InvalidInput, match="limit"):
        parse_source_ref("a/" * 600 + "x.py")


segment = st.sampled_from(["src", "lib", "..", ".", "", "a.py", "b", "é", "x y"])


@given(st.lists(segment, min_size=1, max_size=8))
def test_normalised_paths_never_leave_the_root(parts: list[str]) -> None:
    raw = "/".join(parts)
    try:
        path = normalise_path(raw)
    except InvalidInput:
        return
    pieces = path.split("/")
    assert not path.startswith("/")
    assert all(piece not in ("", ".", "..") for piece in pieces)
    # Folding `..` by hand from the left must never have gone above the root.
    depth = 0
    for part in parts:
        if part == "..":
            depth -= 1
        elif part not in ("", "."):
            depth += 1
        assert depth >= 0
