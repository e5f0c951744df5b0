"""Run in a child process by test_page_safety: recall and stats in a hostile checkout.

A child, so that a regression (a FIFO that blocks `open`, `/dev/zero` read to the end) fails
the test by a timeout or a memory error instead of hanging or exhausting the test runner.
Usage: python recall_child.py STORE HOME REPO QUERY; prints JSON on stdout.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

# Reading /dev/zero to the end must fail fast with MemoryError, not take the machine down.
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

from cairn import Cairn  # noqa: E402 (after the limit, so the import is limited too)
from cairn.config import Settings  # noqa: E402
from cairn.embeddings.hashing import HashingEmbedder  # noqa: E402


def main() -> None:
    store, home, repo, query = sys.argv[1:5]
    settings = Settings(home=Path(home), embedder="hashing")
    with Cairn.open(store, settings=settings, embedder=HashingEmbedder(), cwd=repo) as mem:
        default = mem.recall(query)  # kind "all", the default every agent call makes
        only_pages = mem.recall(query, kind="pages")
        install = mem.recall("install pipx", kind="pages")
        stats = mem.stats()
    print(
        json.dumps(
            {
                "default": [h.source_ref for h in default.hits if h.kind == "page"],
                "pages": [h.source_ref for h in only_pages.hits],
                "install": [h.source_ref for h in install.hits],
                "stats": stats["pages"],
            }
        )
    )


if __name__ == "__main__":
    main()
