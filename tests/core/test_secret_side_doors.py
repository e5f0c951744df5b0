"""No secret gets in by a side door: recall queries are capped and redacted in the event log,
and scopes, session ids, dates, tags and every other text field are checked as given, with
errors that never repeat a secret. Both backends."""

from __future__ import annotations

import io
import random
import string
from typing import Any

import pytest

from cairn import Cairn, InvalidInput, NotFound, Refused
from cairn.refusal import LOGGED_QUERY_CHARS, MAX_QUERY_BYTES, safe_echo

SCOPE = "project:example/api"
_RNG = random.Random(4242)


def _body(size: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """A random token body, drawn at test time so the repository holds no token literal."""
    while True:
        body = "".join(_RNG.choice(alphabet) for _ in range(size))
        if any(c.isdigit() for c in body) and any(c.isalpha() for c in body):
            return body


GH = "ghp_" + _body(36)
AKIA = "AKIA" + _body(16, string.ascii_uppercase + string.digits)


def _never_echoed(message: str, secret: str) -> None:
    for i in range(len(secret) - 7):
        assert secret[i : i + 8] not in message, message


def _exported(mem: Cairn) -> str:
    out = io.StringIO()
    mem.export(out)
    return out.getvalue()


def _recall_events(mem: Cairn) -> list[dict[str, Any]]:
    return [dict(e.payload) for e in mem.store.iter_events() if e.kind == "recall"]


# --- recall queries -----------------------------------------------------------------------


def test_a_secret_in_a_recall_query_is_replaced_by_a_marker_in_the_log(mem: Cairn) -> None:
    mem.remember("Deploys use the GitHub token from the vault.", type="fact", scope=SCOPE)
    mem.recall(f"why does {GH} fail to push?", scope=SCOPE, also=[f"push with {AKIA}"])
    [payload] = _recall_events(mem)
    assert payload["query"] == "why does [secret: github_token] fail to push?"
    assert payload["also"][0] == "push with [secret: aws_access_key_id]"
    exported = _exported(mem)
    assert GH not in exported and AKIA not in exported


def test_the_logged_query_is_capped(mem: Cairn) -> None:
    query = "how do we deploy " * 200  # 3,400 bytes: under the limit, over the log cap
    mem.recall(query, scope=SCOPE)
    [payload] = _recall_events(mem)
    assert len(payload["query"]) == LOGGED_QUERY_CHARS
    assert payload["query"].endswith("…")


def test_a_query_over_4_kib_is_refused_and_nothing_is_logged(mem: Cairn) -> None:
    mem.recall("x" * MAX_QUERY_BYTES, scope=SCOPE)  # exactly the limit is fine
    for query, also in (("é" * 2049, None), ("deploy", ["ok", "y" * 10_000_000])):
        with pytest.raises(InvalidInput, match=r"limit is 4,096 bytes") as info:
            mem.recall(query, scope=SCOPE, also=also)
        assert len(info.value.message) < 300
    with pytest.raises(InvalidInput, match="4,097 bytes"):
        mem.query("z" * (MAX_QUERY_BYTES + 1), scope=SCOPE)
    assert len(_recall_events(mem)) == 1


# --- scopes, sessions, dates, tags ----------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "extra"),
    [
        ("scope", {"scope": f"user:{GH}"}),
        ("occurred_at", {"occurred_at": f"2026-01-01 {GH}"}),
        ("session_id", {"session_id": GH}),
        ("tags", {"tags": ["deploy", AKIA]}),
        ("summary", {"summary": "word " * 60 + GH}),
        ("source_ref", {"source_ref": f"notes/{GH}.md"}),
        ("reason", {"reason": f"because {AKIA}"}),
        ("diff_files", {"diff_files": [f"a/{GH}.py"]}),
    ],
)
def test_remember_checks_every_field_as_given(
    mem: Cairn, field: str, extra: dict[str, Any]
) -> None:
    extra.setdefault("scope", SCOPE)
    with pytest.raises(Refused) as info:
        mem.remember("A plain claim about deploys.", type="fact", **extra)
    message = info.value.message
    assert message.startswith(f"{field} seems to hold a secret")
    _never_echoed(message, GH)
    _never_echoed(message, AKIA)
    assert list(mem.store.iter_memories()) == []
    assert GH not in _exported(mem)


@pytest.mark.parametrize(
    "extra",
    [
        {"scope": f"user:{GH}"},
        {"as_of": f"{GH}"},
        {"since": f"2026-01-01 {AKIA}"},
        {"until": GH},
        {"session_id": GH},
        {"tags": [AKIA]},
    ],
)
def test_recall_refuses_secrets_in_its_arguments(mem: Cairn, extra: dict[str, Any]) -> None:
    extra.setdefault("scope", SCOPE)
    with pytest.raises(Refused) as info:
        mem.recall("deploys", **extra)
    _never_echoed(info.value.message, GH)
    _never_echoed(info.value.message, AKIA)
    assert _recall_events(mem) == []


def test_upper_case_shapes_in_tags_are_caught_before_lowercasing(mem: Cairn) -> None:
    # Lowercased, an AWS key id no longer looks like one; the check sees the tag as given.
    with pytest.raises(Refused, match="tags seems to hold a secret: an AWS access key id"):
        mem.remember("Tagged claim.", type="fact", scope=SCOPE, tags=[AKIA])


def test_sessions_lessons_and_goals_check_their_texts(mem: Cairn) -> None:
    with pytest.raises(Refused, match="task seems to hold a secret"):
        mem.activate(f"rotate {GH[:20]}\n{GH[20:]}", scope=SCOPE)  # a token split over lines
    with pytest.raises(Refused) as info:
        mem.pin("a note", scope=SCOPE, session_id=GH)
    _never_echoed(info.value.message, GH)
    with pytest.raises(Refused):
        mem.mute_lessons(tag=AKIA, scope=SCOPE)
    with pytest.raises(Refused):
        mem.lessons("Bash", "ls", scope=SCOPE, session_id=AKIA)
    with pytest.raises(Refused, match="goal seems to hold a secret"):
        mem.set_branch_goal(f"ship it with {GH}", scope=SCOPE, branch="main")
    assert GH not in _exported(mem) and AKIA not in _exported(mem)


def test_errors_echo_harmless_values_and_describe_the_rest(mem: Cairn) -> None:
    with pytest.raises(InvalidInput, match="occurred_at='yesterday' is not a date"):
        mem.remember("Claim.", type="fact", scope=SCOPE, occurred_at="yesterday")
    with pytest.raises(NotFound, match="there is no session 'ses_nope'"):
        mem.pin("a note", scope=SCOPE, session_id="ses_nope")
    long_value = "not-a-date-" * 100
    with pytest.raises(InvalidInput) as info:
        mem.remember("Claim.", type="fact", scope=SCOPE, occurred_at=long_value)
    assert "(a 1,100-character value, not shown)" in info.value.message
    assert long_value[:20] not in info.value.message
    with pytest.raises(InvalidInput) as info:
        mem.remember("Claim.", type="fact", scope="no colon " * 20)
    assert "not shown" in info.value.message


def test_safe_echo() -> None:
    assert safe_echo("2026-13-01") == "'2026-13-01'"
    assert safe_echo(42) == "42"
    assert safe_echo(GH) == "(a value holding a GitHub token, not shown)"
    assert safe_echo(f"2026-01-01 {AKIA}") == "(a value holding an AWS access key id, not shown)"
    assert safe_echo("y" * 81) == "(a 81-character value, not shown)"
    assert safe_echo("y" * 80) == repr("y" * 80)


def test_observed_branches_and_commits_are_checked(mem: Cairn) -> None:
    with pytest.raises(Refused, match="branch seems to hold a secret"):
        mem.observe_merge(f"feature/{GH}", scope=SCOPE)
    with pytest.raises(Refused, match="commit seems to hold a secret"):
        mem.observe_revert(AKIA, scope=SCOPE)
    assert GH not in _exported(mem) and AKIA not in _exported(mem)
