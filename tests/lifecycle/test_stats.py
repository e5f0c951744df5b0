"""stats: counts, citation health, recall hit/used/helped rates, store size, index freshness."""

from __future__ import annotations

from pathlib import Path

from cairn import Cairn

SCOPE = "project:example/stats"


def test_recall_rates_from_recalls_cites_and_feedback(mem: Cairn) -> None:
    tea = mem.remember("The office kettle is in the second floor kitchen", type="fact",
                       scope=SCOPE).memory_id  # fmt: skip
    mem.remember("Standup is at ten", type="fact", scope=SCOPE)
    mem.recall("where is the kettle", scope=SCOPE)
    mem.recall("zebra quantum marmalade", scope=SCOPE, types=["task"])  # finds nothing
    mem.remember("Bought a new kettle", type="fact", scope=SCOPE, used=[tea])
    session = mem.activate("Make tea with the office kettle", scope=SCOPE)
    unused = [{"ref": r, "used": False, "effect": "unknown"} for r in session.refs]
    mem.feedback(session.session_id, session.retrieval_id, unused)
    found = mem.recall("kettle kitchen", session_id=session.session_id)
    mem.feedback(session.session_id, found.retrieval_id,
                 [{"ref": r, "used": r == tea, "effect": "helped" if r == tea else "no_effect"}
                  for r in found.refs])  # fmt: skip
    rates = mem.stats(scope=SCOPE)["recall"]
    assert rates["recalls"] == 3 and rates["with_hits"] == 2
    assert rates["hit_rate"] == round(2 / 3, 4)
    assert rates["used_rate"] == 1.0
    assert rates["with_feedback"] == 1 and rates["helped_rate"] == 1.0


def test_rates_are_none_without_recalls(mem: Cairn) -> None:
    rates = mem.stats(scope=SCOPE)["recall"]
    assert rates == {"recalls": 0, "with_hits": 0, "hit_rate": None, "used_rate": None,
                     "helped_rate": None, "with_feedback": 0}  # fmt: skip


def test_citation_health_and_index_freshness(mem: Cairn, checkout: Path) -> None:
    same = mem.remember("run returns one", type="fact", cwd=checkout, source_ref="src/jobs.py:1-2")
    mem.remember("stop is a no-op", type="fact", cwd=checkout, source_ref="src/jobs.py::stop")
    mem.remember("the spec is online", type="fact", cwd=checkout,
                 source_ref="https://example.com/spec")  # fmt: skip
    mem.remember("no citation", type="fact", cwd=checkout)
    (checkout / "src" / "jobs.py").write_text("def run():\n    return 1\n")
    stats = mem.stats(cwd=checkout)
    assert stats["citations"] == {"same": 1, "changed": 0, "gone": 1, "unchecked": 1}
    assert stats["memories"] == 4 and stats["store"]["size_bytes"] > 0
    assert stats["index"]["fresh"] is True and stats["index"]["without_vector"] == 0
    mem.store.delete_vector(int(same.memory_id[4:]))
    index = mem.stats(cwd=checkout)["index"]
    assert index["fresh"] is False and index["without_vector"] == 1
    assert index["newest_write"] is not None
