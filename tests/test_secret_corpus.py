"""The detector against a corpus of planted secrets and look-alikes: recall and false refusals,
and properties that hold for any text (it never raises, a finding never carries text)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.errors import Refused
from cairn.refusal import KINDS, check_no_secrets, find_secrets, redact, safe_echo
from cairn.secretscan.scan import BASE64_PREFIX
from secrets_corpus import Planted, build

PLANTED, LOOK_ALIKES = build()
MIN_RECALL = 0.95
MAX_FALSE_REFUSALS = 0.01


def _caught(case: Planted) -> bool:
    """A finding covers the planted secret (not merely something else in the text)."""
    where = case.text.find(case.secret)
    assert where >= 0, case.label
    end = where + len(case.secret)
    return any(f.start < end and where < f.end for f in find_secrets(case.text))


def test_corpus_is_large_enough() -> None:
    assert len(PLANTED) >= 130
    assert len(LOOK_ALIKES) >= 130
    assert len({case.label for case in PLANTED}) == len(PLANTED)


def test_the_corpus_is_the_same_for_the_same_seed() -> None:
    again, looks = build()
    assert again == PLANTED and looks == LOOK_ALIKES
    other, _ = build(seed=99)
    assert [c.text for c in other] != [c.text for c in PLANTED]


def test_recall_on_planted_secrets() -> None:
    missed = [case.label for case in PLANTED if not _caught(case)]
    recall = 1 - len(missed) / len(PLANTED)
    assert recall >= MIN_RECALL, (
        f"recall {recall:.1%} ({len(PLANTED) - len(missed)}/{len(PLANTED)}); missed: {missed}"
    )


def test_false_refusals_on_look_alikes() -> None:
    refused = [text for text in LOOK_ALIKES if find_secrets(text)]
    rate = len(refused) / len(LOOK_ALIKES)
    assert rate <= MAX_FALSE_REFUSALS, (
        f"false refusals {rate:.1%} ({len(refused)}/{len(LOOK_ALIKES)}): {refused}"
    )


@pytest.mark.parametrize("case", PLANTED, ids=[c.label for c in PLANTED])
def test_refusal_never_echoes_a_planted_secret(case: Planted) -> None:
    if not find_secrets(case.text):
        pytest.skip("missed (counted by the recall test)")
    with pytest.raises(Refused) as info:
        check_no_secrets(case.text, field="content")
    message = info.value.message
    for i in range(len(case.secret) - 7):
        assert case.secret[i : i + 8] not in message
    assert case.secret not in redact(case.text)
    assert "[secret: " in redact(case.text)
    assert case.secret[:12] not in safe_echo(case.text)


@pytest.mark.parametrize("text", LOOK_ALIKES[:40])
def test_look_alikes_are_kept_as_they_are(text: str) -> None:
    assert redact(text) == text
    if len(text) <= 80:
        assert safe_echo(text) == repr(text)


# --- properties -------------------------------------------------------------------------

_PIECES = ["\u200b", "\u00ad", "\ufeff", "\n", "\\\n", "=", ":", "ghp_", "sk-", "AKIA", "eyJ"]
_hostile = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(_PIECES),
    max_size=20,
).map("".join)


def _planted_text() -> st.SearchStrategy[str]:
    return st.sampled_from(PLANTED).map(lambda case: case.text)


@given(st.one_of(_hostile, _planted_text(), st.tuples(_hostile, _planted_text()).map("".join)))
@settings(deadline=None, max_examples=300)
def test_find_secrets_never_raises_and_findings_hold_no_text(text: str) -> None:
    findings = find_secrets(text)
    for finding in findings:
        assert finding.kind.removeprefix(BASE64_PREFIX) in KINDS
        others = [f for f in dataclasses.fields(finding) if f.name != "kind"]
        assert all(isinstance(getattr(finding, f.name), int) for f in others)
        assert 0 <= finding.start < finding.end <= len(text)
        assert finding.line >= 1 and finding.column >= 1
    masked = redact(text)
    for finding in findings:
        secret = text[finding.start : finding.end]
        if len(secret) >= 12:
            assert secret not in masked
    echoed = safe_echo(text)
    assert len(echoed) <= 90 or echoed == repr(text)
