"""A fixed, varied set of sentences for embedding benchmarks and agreement checks.

Mostly single sentences of the kind agents remember (decisions, bugs, conventions), mixed with
general-knowledge sentences, code, paths, stack traces, non-Latin scripts and a few short
paragraphs, so throughput and model agreement are measured on realistic lengths, not on one
repeated string. Generated from a seeded RNG: every run and every machine sees the same list.
"""

from __future__ import annotations

import random

_PLAIN = (
    "The deploy script failed because the staging database ran out of disk space.",
    "We decided to keep SQLite as the default store and offer PostgreSQL for teams.",
    "Always run the migrations before starting the web server in production.",
    "The cat slept on the warm windowsill all afternoon.",
    "Quarterly revenue grew by twelve percent despite the supply chain issues.",
    "Use a file lock so two processes exporting the model at once do not corrupt it.",
    "The flaky test was caused by a race between the writer thread and the checkpoint.",
    "Mount Everest is the highest mountain above sea level.",
    "She prefers tabs over spaces, but the project style guide says four spaces.",
    "Bump the timeout to thirty seconds when the CI runner is under heavy load.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The API returns 429 when the client exceeds one hundred requests per minute.",
    "Remember to rotate the signing keys every ninety days.",
    "A binary search tree keeps its keys in sorted order for fast lookup.",
    "The recipe calls for two cups of flour and a pinch of salt.",
    "Our retry policy uses exponential backoff with full jitter.",
    "The user reported that the dark mode toggle resets after a page reload.",
    "Memory usage spikes when the importer loads the whole JSON file at once.",
    "The violin concerto was premiered in Leipzig in 1845.",
    "Git rebase rewrites history, so never rebase a branch others have pulled.",
    "The embedding model maps each sentence to a 384-dimensional vector.",
    "Tokyo hosted the Summer Olympics that were postponed by a year.",
    "Set HF_HUB_OFFLINE so the model never reaches the network.",
    "The login form should trim whitespace from the email address.",
    "Coffee consumption has been linked to lower rates of liver disease.",
    "Refactor the parser so it reports the line and column of every error.",
    "The bridge was closed for repairs after the storm damaged its supports.",
    "Postgres uses MVCC, so readers never block writers.",
    "Children learn languages faster when they are immersed early.",
    "The cache key includes the model identity so vectors never mix.",
)
_ODD = (
    "def fit(x: np.ndarray) -> float: return float(x.mean())",
    "SELECT id, body FROM memories WHERE scope = ? ORDER BY created_at DESC LIMIT 20;",
    "src/cairn/embeddings/local.py:42-57",
    "Ünïcödé naïve café façade — déjà vu",
    "東京の天気は明日雨になるでしょう。",
    "Привет, как дела? Всё хорошо.",
    "🚀 shipped v2.1.0 🎉",
    "ok",
    "Shopping list: milk, eggs, bread",
    "Traceback (most recent call last): File \"app.py\", line 3, in <module> KeyError: 'user'",
)
_SUBJECTS = (
    "the scheduler", "our billing service", "the mobile app", "a junior developer",
    "the search index", "the nightly backup", "the payment gateway", "the team lead",
    "the garden hose", "the old library", "the weather station", "a migrating bird",
)  # fmt: skip
_VERBS = (
    "crashed while processing", "quietly ignored", "was rewritten to handle", "now caches",
    "keeps timing out on", "depends on", "was blamed for", "silently corrupts",
    "was photographed near", "struggled with",
)  # fmt: skip
_OBJECTS = (
    "large CSV uploads", "timezone conversions", "unicode file names", "the retry queue",
    "expired certificates", "the east river", "leap years", "concurrent writes",
    "a broken sprinkler", "feature flags", "cold winter mornings", "the login page",
)  # fmt: skip
_TAILS = (
    "", " last Tuesday", " after the upgrade", " according to the logs",
    " (see issue #4521)", " in about 3% of cases", " as reported by two users",
)  # fmt: skip


def sample_sentences(n: int = 200, seed: int = 7) -> list[str]:
    """`n` distinct texts: the fixed ones first, then seeded template sentences and paragraphs."""
    rng = random.Random(seed)
    out = list(_PLAIN) + list(_ODD)
    seen = set(out)
    while len(out) < n:
        if rng.random() < 0.9:
            text = (
                f"{rng.choice(_SUBJECTS).capitalize()} {rng.choice(_VERBS)} "
                f"{rng.choice(_OBJECTS)}{rng.choice(_TAILS)}."
            )
        else:
            text = " ".join(rng.sample(_PLAIN, rng.randint(2, 5)))
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out[:n]
