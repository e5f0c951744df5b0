"""The detector's views (invisible characters, wrapped lines, base64), its positions in the
original text, redaction, and the helpers built on it."""

from __future__ import annotations

import base64
import random
import string

import pytest

from cairn.errors import InvalidInput, Refused
from cairn.refusal import (
    check_query,
    check_strings,
    find_secrets,
    is_password_value,
    loggable,
    redact,
)
from cairn.secretscan import with_article

_RNG = random.Random(77)
BODY = "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(34)) + "7q"
GH = "ghp_" + BODY


@pytest.mark.parametrize("mark", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_invisible_characters_inside_a_token_are_ignored(mark: str) -> None:
    hidden = GH[:10] + mark + GH[10:]
    text = f"é line\nuse {hidden} now"
    [finding] = find_secrets(text)
    assert finding.kind == "GitHub token"
    assert (finding.line, finding.column) == (2, 5)
    assert text[finding.start : finding.end] == hidden  # positions of the original text
    assert redact(text) == "é line\nuse [secret: github_token] now"


def test_full_width_forms_are_folded() -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) for c in GH)
    assert [f.kind for f in find_secrets(f"key {wide}")] == ["GitHub token"]


@pytest.mark.parametrize(
    "wrapped",
    [
        f"{GH[:18]}\n{GH[18:]}",
        f"{GH[:18]}\\\n    {GH[18:]}",
        f'"{GH[:18]}"\n  "{GH[18:]}"',
        f'"{GH[:18]}" +\n  "{GH[18:]}"',
        f"{GH[:18]}\r\n{GH[18:]}",
    ],
)
def test_a_token_wrapped_over_two_lines_is_found(wrapped: str) -> None:
    text = f"token:\n{wrapped}\nend"
    [finding] = find_secrets(text)
    assert finding.kind == "GitHub token" and finding.line == 2
    assert GH[:18] not in redact(text) and GH[18:] not in redact(text)


def test_prose_lines_are_not_joined_into_secrets() -> None:
    text = "The deploy uses sk-\nlearn-compatible-estimator-wrapper-v2 for scoring.\nDone."
    assert find_secrets(text) == []


def test_base64_of_a_token_is_decoded_and_scanned() -> None:
    encoded = base64.b64encode(f"GITHUB_TOKEN={GH}".encode()).decode()
    [finding] = find_secrets(f"blob: {encoded}")
    assert finding.kind == "base64-encoded GitHub token"
    assert redact(f"blob: {encoded}") == "blob: [secret: base64_encoded_github_token]"
    plain = base64.b64encode(b"The quick brown fox jumps over the lazy dog").decode()
    assert find_secrets(f"blob: {plain}") == []


def test_passwords_on_command_lines_and_in_prose() -> None:
    pw = "Maple" + str(_RNG.randint(1000, 9999)) + "Horse!"
    for text in (
        f"mysql -u root -p{pw} shop",
        f"sshpass -p {pw} ssh pi@10.0.0.2",
        f"pg_dump --password {pw}",
        f"curl -u admin:{pw} https://ci.internal",
        f"The staging password is {pw}.",
        f"machine api.acme.io login ci password {pw}",
    ):
        [finding] = find_secrets(text)
        assert pw not in redact(text), text
        assert finding.kind in {
            "secret on a command line",
            "password in prose",
            "password in a .netrc entry",
        }
    for text in (
        "mysql -u root -p shop",
        "docker login -u ci --password-stdin",
        "Pass --password when asked.",
        "The password is stored in Vault.",
        "the password is sha256-hashed",
    ):
        assert find_secrets(text) == [], text


def test_password_values() -> None:
    assert is_password_value("Summer2024Horse!")
    assert not is_password_value("v2-compatible")
    assert not is_password_value("${DB_PASSWORD}")
    assert not is_password_value("Short1!")


def test_with_article() -> None:
    assert with_article("GitHub token") == "a GitHub token"
    assert with_article("AWS access key id") == "an AWS access key id"
    assert with_article("npm token") == "an npm token"


def test_check_strings_walks_lists_and_mappings() -> None:
    check_strings({"steps": ["make test", "make lint"], "n": 3}, field="procedure")
    with pytest.raises(Refused, match=r"procedure\.steps seems to hold a secret"):
        check_strings({"steps": ["make test", f"export T={GH}"]}, field="procedure")
    with pytest.raises(Refused, match="diff_files holds a NUL"):
        check_strings(["a.py", "b\x00.py"], field="diff_files")


def test_query_size_and_what_the_log_keeps() -> None:
    check_query("é" * 2048, field="query")
    with pytest.raises(InvalidInput, match="query is 4,098 bytes"):
        check_query("é" * 2049, field="query")
    with pytest.raises(InvalidInput, match="4,098 bytes"):
        check_query("x" * 4095 + "\ud800", field="query")  # a lone surrogate counts, no crash
    assert loggable(f"why does {GH} fail") == "why does [secret: github_token] fail"
    assert loggable("a\x00b") == "a\ufffdb"
    capped = loggable("word " * 1000)
    assert len(capped) == 500 and capped.endswith("…")


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN PRIVATE KEY-----\n" + "a: " * 5000 + "!",  # was exponential: 25 took 34 s
        "-----BEGIN PRIVATE KEY-----\n" + "Proc-Type: 4\n" * 2000 + "!",
        "https://" + "a:" * 5000 + "@",
        "password for " + "a " * 5000,
        "machine x " + "login y " * 3000,
        "mysql " + "-p " * 5000,
        "abcdefgh\n" * 3000,
    ],
)
def test_hostile_input_is_scanned_in_linear_time(text: str) -> None:
    # No clock here: a pattern that backtracks exponentially makes this test hang, not fail.
    assert find_secrets(text) == []
