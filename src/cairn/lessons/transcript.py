"""What the agent said: the text of its replies, read from Claude Code's session transcript.

Claude Code passes `transcript_path` to every hook: a JSON Lines file, one record per line;
the agent's replies are records `{"type": "assistant", "message": {"content": [{"type":
"text", "text": ...}, {"type": "tool_use", ...}]}}` (content may also be a plain string). Only
the text blocks are replies: a ref inside a tool call's input is an act, not something said.

The path comes with the hook's input, so the file is hostile: it is read only when the path is
absolute, ends in `.jsonl` and names a regular file (not a symlink, FIFO or device), only its
last `MAX_BYTES`
(the replies since the previous Stop are at the end; earlier ones were read then), lines over
`MAX_LINE_BYTES` and lines that are not JSON records are skipped, and at most `MAX_TEXT_CHARS`
of reply text is returned. Nothing here raises: an unreadable transcript has said nothing.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any

MAX_BYTES = 4 * 1024 * 1024
MAX_LINE_BYTES = 1024 * 1024
MAX_TEXT_CHARS = 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def reply_text(path: object) -> str:
    """The agent's reply text in the transcript at `path` (its tail), or "" when unreadable."""
    raw = _tail(path)
    if not raw:
        return ""
    parts: list[str] = []
    size = 0
    for text in _replies(raw):
        parts.append(text)
        size += len(text)
        if size >= MAX_TEXT_CHARS:
            break
    return "\n".join(parts)[:MAX_TEXT_CHARS]


def _tail(path: object) -> bytes:
    if not isinstance(path, str) or "\0" in path or not os.path.isabs(path):
        return b""
    if not path.endswith(".jsonl"):  # a transcript, not any file the hook input names
        return b""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b""
        start = max(0, info.st_size - MAX_BYTES)
        os.lseek(fd, start, os.SEEK_SET)
        chunks: list[bytes] = []
        left = MAX_BYTES
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError:
        return b""
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if start > 0:  # the first line was cut by the seek: not a record
        raw = raw.partition(b"\n")[2]
    return raw


def _replies(raw: bytes) -> Iterator[str]:
    for line in raw.split(b"\n"):
        if not line.strip() or len(line) > MAX_LINE_BYTES:
            continue
        try:
            record = json.loads(line)
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("type") == "assistant":
            yield from _texts(record.get("message"))


def _texts(message: Any) -> Iterator[str]:
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    yield text
