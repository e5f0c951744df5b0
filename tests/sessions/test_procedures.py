"""Procedures: captured at commit, recalled like memories, tallied by feedback."""

from __future__ import annotations

from cairn import Cairn

SCOPE = "project:example/api"
OTHER = "project:example/web"
STEPS = [
    "Run the database migrations with --dry-run first",
    "Apply the migrations on staging",
    "Apply the migrations on production",
]
PROCEDURE = {
    "goal": "Apply database migrations safely",
    "summary": "Dry run, then staging, then production.",
    "context": {"database": "postgres", "tool": "alembic"},
    "steps": STEPS,
    "caveats": ["Never skip the dry run: it once dropped the audit table."],
}


def capture(
    mem: Cairn,
    procedure: dict[str, object] | None = None,
    outcome: str = "success",
    scope: str = SCOPE,
) -> str:
    brief = mem.activate("migrate the database", scope=scope)
    if brief.refs:
        mem.feedback(
            brief.session_id,
            brief.retrieval_id,
            [{"ref": r, "used": False, "effect": "unknown"} for r in brief.refs],
        )
    done = mem.commit(
        brief.session_id,
        outcome=outcome,
        summary="Migrated without downtime.",
        procedure=procedure or PROCEDURE,
    )
    assert done.procedure_id is not None
    return done.procedure_id


def test_commit_captures_the_procedure(mem: Cairn) -> None:
    ref = capture(mem)
    [procedure] = mem.store.get_procedures([int(ref.removeprefix("proc_"))])
    assert procedure.goal == "Apply database migrations safely"
    assert procedure.steps == tuple(STEPS)
    assert procedure.caveats == tuple(PROCEDURE["caveats"])  # type: ignore[arg-type]
    assert procedure.context == {"database": "postgres", "tool": "alembic"}
    assert (procedure.outcome, procedure.outcome_summary) == (
        "success",
        "Migrated without downtime.",
    )
    assert procedure.scope == SCOPE
    [contribution] = procedure.contributions
    assert (contribution.contribution, contribution.outcome) == ("captured", "success")


def test_defaults_come_from_the_session(mem: Cairn) -> None:
    brief = mem.activate("rotate the API keys", scope=SCOPE, task_context={"vault": "hashicorp"})
    done = mem.commit(
        brief.session_id,
        outcome="partial",
        summary="Rotated two of three.",
        procedure={"steps": ["Create new keys", "Swap them in"]},
    )
    assert done.procedure_id is not None
    [procedure] = mem.store.get_procedures([int(done.procedure_id.removeprefix("proc_"))])
    assert procedure.goal == "rotate the API keys"
    assert procedure.summary == "Rotated two of three."
    assert procedure.context == {"vault": "hashicorp"}
    assert procedure.outcome == "partial"


def test_procedures_are_recalled_like_memories(mem: Cairn) -> None:
    ref = capture(mem)
    mem.remember("The logo is blue.", type="fact", scope=SCOPE)
    found = mem.recall("how do I apply database migrations?", scope=SCOPE)
    assert [p.procedure_id for p in found.procedures] == [ref]
    hit = found.procedures[0]
    assert hit.steps == tuple(STEPS) and hit.caveats and hit.evidence.used == 0
    assert hit.contributions[0].contribution == "captured"
    unrelated = mem.recall("what colour is the logo", scope=SCOPE)
    assert unrelated.procedures == ()
    elsewhere = mem.recall("how do I apply database migrations?", scope=OTHER)
    assert elsewhere.procedures == (), "procedures stay in their scope"


def test_the_brief_offers_relevant_procedures(mem: Cairn) -> None:
    ref = capture(mem)
    brief = mem.activate("apply the new database migrations", scope=SCOPE)
    assert [p.procedure_id for p in brief.procedures] == [ref]
    assert ref in brief.refs


def test_feedback_names_procedures_and_tallies_them(mem: Cairn) -> None:
    ref = capture(mem)
    brief = mem.activate("apply database migrations", scope=SCOPE)
    found = mem.recall("database migrations steps", session_id=brief.session_id)
    assert ref in [p.procedure_id for p in found.procedures]
    mem.feedback(
        brief.session_id,
        brief.retrieval_id,
        [{"procedure_id": ref, "used": False, "effect": "unknown"}],
    )
    mem.feedback(
        brief.session_id,
        found.retrieval_id,
        [{"procedure_id": ref, "used": True, "effect": "helped"}],
    )
    mem.commit(brief.session_id, outcome="failure", summary="Staging was down.")
    [procedure] = mem.store.get_procedures([int(ref.removeprefix("proc_"))])
    evidence = procedure.evidence
    assert (evidence.used, evidence.not_used, evidence.helped, evidence.unknown) == (1, 1, 1, 1)
    assert (evidence.no_effect, evidence.harmed) == (0, 0)
    newest = procedure.contributions[0]
    assert (newest.effect, newest.contribution, newest.outcome) == ("helped", "used", "failure")
    assert (procedure.outcome, procedure.outcome_summary) == ("failure", "Staging was down.")


def test_only_three_most_recent_contributions_show(mem: Cairn, clock: object) -> None:
    ref = capture(mem)
    for outcome in ("partial", "failure", "success", "unknown"):
        clock.advance(minutes=5)  # type: ignore[attr-defined]
        assert capture(mem, outcome=outcome) == ref, "the same method adds to one procedure"
    [procedure] = mem.store.get_procedures([int(ref.removeprefix("proc_"))])
    assert [c.outcome for c in procedure.contributions] == ["unknown", "success", "failure"]
    assert procedure.outcome == "unknown"


def test_harmful_feedback_lowers_a_procedure(mem: Cairn) -> None:
    good = capture(mem)
    other = dict(
        PROCEDURE,
        goal="Apply database migrations quickly",
        steps=["Apply the migrations on production directly"],
    )
    bad = capture(mem, other)
    assert good != bad
    brief = mem.activate("database migrations", scope=SCOPE)
    mem.feedback(
        brief.session_id,
        brief.retrieval_id,
        [
            {"procedure_id": bad, "used": True, "effect": "harmed"},
            {"procedure_id": good, "used": True, "effect": "helped"},
        ],
    )
    mem.commit(brief.session_id, outcome="success", summary="ok")
    found = mem.recall("apply database migrations", scope=SCOPE, explain=True)
    by_ref = {p.procedure_id: p for p in found.procedures}
    assert by_ref[good].explain is not None and by_ref[good].explain["feedback"] > 1
    assert found.procedures[0].procedure_id == good
    if bad in by_ref:
        assert by_ref[bad].explain is not None and by_ref[bad].explain["feedback"] < 1
