"""What remember refuses: blank or oversized content, and secrets (without ever echoing them)."""

from __future__ import annotations

import base64
import hashlib
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.errors import Refused
from cairn.refusal import (
    check_content,
    check_no_secrets,
    find_secrets,
    is_secret_name,
    is_secret_value,
    shannon_entropy,
)
from cairn.secretscan import with_article

# --- blank and oversized content ------------------------------------------------------------


@pytest.mark.parametrize("content", ["", " ", "\n\t  \r\n", "\u3000\u00a0"])
def test_blank_content_is_refused(content: str) -> None:
    with pytest.raises(Refused, match="blank") as info:
        check_content(content, max_bytes=100)
    assert info.value.code == "refused"


def test_size_limit_is_inclusive_and_counted_in_bytes() -> None:
    check_content("a" * 100, max_bytes=100)
    with pytest.raises(Refused):
        check_content("a" * 101, max_bytes=100)
    # Four emoji are four characters but sixteen UTF-8 bytes.
    check_content("\U0001f600" * 4, max_bytes=16)
    with pytest.raises(Refused) as info:
        check_content("\U0001f600" * 4, max_bytes=15)
    message = info.value.message
    assert "16 bytes" in message and "limit is 15 bytes" in message
    assert "Split" in message and "summarise" in message and "source_ref" in message


def test_size_message_formats_large_numbers() -> None:
    with pytest.raises(Refused, match=r"40,000 bytes .* limit is 32,768 bytes"):
        check_content("é" * 20_000, max_bytes=32_768)


def test_lone_surrogate_is_refused() -> None:
    with pytest.raises(Refused, match="character 3 is a lone surrogate"):
        check_content("ab\ud800cd", max_bytes=100)


# --- secrets that must be found -------------------------------------------------------------

GH = "ghp_R8aK2mX9vQ4tL7wN3pZ6yB1cE5hJ0sD8fG2k"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwia"
    "WF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
RANDOM = "a8F3kL9qZ2xV7mN1pR4tY6wB0cE5hJ8s"

# (kind, text, the secret inside the text)
POSITIVES: list[tuple[str, str, str]] = [
    ("AWS access key id", "key AKIA2E0A8F3B244C9986 here", "AKIA2E0A8F3B244C9986"),
    ("AWS access key id", "ASIAY34FZKBOKMUTVV7A", "ASIAY34FZKBOKMUTVV7A"),
    (
        "AWS secret access key",
        "aws_secret_access_key = kR3m9Xv2Lq8Zt5Wn1Pb7Yc4Hd6Jf0Gs2Ae9Uo3Ti",
        "kR3m9Xv2Lq8Zt5Wn1Pb7Yc4Hd6Jf0Gs2Ae9Uo3Ti",
    ),
    (
        "AWS secret access key",
        'AWS_SECRET_ACCESS_KEY="kR3m9Xv2Lq8Zt5Wn/Pb7Yc4Hd6Jf0Gs2Ae9Uo3Ti"',
        "kR3m9Xv2Lq8Zt5Wn/Pb7Yc4Hd6Jf0Gs2Ae9Uo3Ti",
    ),
    ("GitHub token", f"export GITHUB_TOKEN={GH}", GH),
    (
        "GitHub token",
        "gho_Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
        "Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
    ),
    (
        "GitHub token",
        "ghu_Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
        "Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
    ),
    (
        "GitHub token",
        "ghs_Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
        "Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
    ),
    (
        "GitHub token",
        "ghr_Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
        "Zq8Wm3Xk7Vn2Lp9Rt4Yb6Hc1Jd5Fg0Sa3Ke8N",
    ),
    (
        "GitHub token",
        "github_pat_11ABCDEFG0aB3dE5gH7jK9mN_Qr2Tu4Wx6Za8Cd0Fh2Jk4Mp6Rt8Vx0Zb2De4Gj6Lm8Pr0Tv2Xz4Bc6Ef8"
        "Hk0Nq2Sv",
        "Qr2Tu4Wx6Za8Cd0Fh2Jk4Mp6Rt8Vx0Zb2De4Gj6Lm8Pr0Tv2Xz4Bc6Ef8Hk0Nq2Sv",
    ),
    ("GitLab token", "token glpat-x7Kp2Rm9Tq4Wz8Ys3Vb6N", "x7Kp2Rm9Tq4Wz8Ys3Vb6N"),
    (
        "OpenAI API key",
        "OPENAI_API_KEY=sk-Z3kT9mQ2pX7vL4nR8wB1cF6hJ0sD5gA2eY9uK3oP7iM1tN4q",
        "Z3kT9mQ2pX7vL4nR8wB1cF6hJ0sD5gA2eY9uK3oP7iM1tN4q",
    ),
    (
        "OpenAI API key",
        "use sk-proj-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hj5Lm7Np9Rs1Tu3Wx5Za7Cd9Fg1_x-Y2 for it",
        "Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hj5Lm7Np9Rs1Tu3Wx5Za7Cd9Fg1",
    ),
    (
        "Anthropic API key",
        "ANTHROPIC_API_KEY: sk-ant-api03-Xy7Kp2Rm9Tq4Wz8Ys3Vb6NcLd5Fh1Jg0Ma2Pe4Ri6Uo8Ta3Sk5Dl7Zx9"
        "Cv1Bn3Mq5Wr7Et9Yu1Io3Pa5Sd7Fg9Hj1Kl3AA",
        "Xy7Kp2Rm9Tq4Wz8Ys3Vb6NcLd5Fh1Jg0Ma2Pe4Ri6Uo8Ta3Sk5Dl7Zx9Cv1Bn3Mq5Wr7Et9Yu1Io3Pa5Sd7Fg9Hj1Kl3AA",
    ),
    (
        "Slack token",
        "SLACK_BOT_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "Slack token",
        "xoxp-2184732948-9281736452-8273645123-a3f9c2e7b1d84f6a0c5e9b2d7f1a3c8e",
        "a3f9c2e7b1d84f6a0c5e9b2d7f1a3c8e",
    ),
    (
        "Slack webhook URL",
        "post to https://hooks.slack.com/services/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",
        "aB3dE5gH7jK9mN1pQ3sT5vW7",
    ),
    ("private key", f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA", PEM_BODY),
    ("private key", f"-----BEGIN PRIVATE KEY-----\\n{PEM_BODY}\\n", PEM_BODY),
    (
        "private key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    (
        "private key",
        "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,9F3A\n\n"
        f"{PEM_BODY}\n",
        PEM_BODY,
    ),
    ("JSON Web Token", f"Authorization: Bearer {JWT}", JWT),
    (
        "password in a URL",
        "DATABASE_URL=postgres://app:S3cr3tPa55w0rd@db.internal:5432/app",
        "S3cr3tPa55w0rd",
    ),
    ("password in a URL", "redis://:Kq8zW3mXv7@cache.internal:6379/0", "Kq8zW3mXv7"),
    ("password in a URL", "https://deploy:p%40ss-Wd9!x@git.example.com/a.git", "p%40ss-Wd9!x"),
    ("Stripe secret key", "sk_live_51Hx8KqLm3Np7Rt2Vw9Yz4Bc6", "51Hx8KqLm3Np7Rt2Vw9Yz4Bc6"),
    (
        "Google API key",
        "AIzaSyD3kT9mQ2pX7vL4nR8wB1cF6hJ0sD5gA2e",
        "SyD3kT9mQ2pX7vL4nR8wB1cF6hJ0sD5gA2e",
    ),
]

ASSIGNED = "high-entropy value assigned to a secret name"
ASSIGNMENTS: list[str] = [
    f'api_key = "{RANDOM}"',
    f"API_KEY={RANDOM}",
    f"export DB_PASSWORD='{RANDOM}'",
    f"PGPASSWORD={RANDOM}",
    f'{{"client_secret": "{RANDOM}"}}',
    f'\\"apiKey\\": \\"{RANDOM}\\"',
    f"password: {RANDOM}",
    f"  secret_key: '{RANDOM}'",
    f"X-Api-Key: {RANDOM}",
    f"Authorization: Bearer {RANDOM}",
    f"auth: {RANDOM}",
    f'accessToken := "{RANDOM}"',
    f"'private_key' => '{RANDOM}',",
    f'token: str = "{RANDOM}"',
    f"spring.datasource.password={RANDOM}",
    f"apikey={RANDOM}",
    f"access_key = {RANDOM}",
    f"passwd={RANDOM}",
    f"pwd: {RANDOM}",
    "password = P4ssw0rd!Zq7#Lm",
    "token = 3f786850e387550fdab836ed7e6dc881de23001b",
    "note: password=Qw8eR2tY6uI0oP4aS7dF1g",
]


def _assert_not_echoed(message: str, secret: str) -> None:
    assert secret not in message
    for i in range(len(secret) - 7):
        assert secret[i : i + 8] not in message, secret[i : i + 8]


@pytest.mark.parametrize(("kind", "text", "secret"), POSITIVES)
def test_known_secret_shapes_are_found(kind: str, text: str, secret: str) -> None:
    assert secret in text
    assert [f.kind for f in find_secrets(text)] == [kind]
    with pytest.raises(Refused) as info:
        check_no_secrets(text, field="content")
    message = info.value.message
    assert f"{with_article(kind)} at line 1" in message
    assert message.startswith("content seems to hold a secret")
    assert "remove it" in message and "environment variable" in message and "vault" in message
    _assert_not_echoed(message, secret)
    _assert_not_echoed(message, text.strip())


@pytest.mark.parametrize("text", ASSIGNMENTS)
def test_secrets_assigned_to_secret_names_are_found(text: str) -> None:
    assert [f.kind for f in find_secrets(text)] == [ASSIGNED]
    with pytest.raises(Refused) as info:
        check_no_secrets(text, field="reason")
    message = info.value.message
    assert message.startswith("reason seems to hold a secret")
    value = text.split("=")[-1].split(":")[-1].strip(" \"'\\,}")
    _assert_not_echoed(message, value)


def test_findings_give_line_and_column_in_characters() -> None:
    text = f"first line\n  ünïcödé then {GH}\n\nDB_PASSWORD={RANDOM}\n"
    findings = find_secrets(text)
    assert [(f.kind, f.line, f.column) for f in findings] == [
        ("GitHub token", 2, 16),
        (ASSIGNED, 4, 1),
    ]
    with pytest.raises(Refused) as info:
        check_no_secrets(text, field="diff_text")
    message = info.value.message
    assert "a GitHub token at line 2, column 16" in message
    assert f"a {ASSIGNED} at line 4, column 1" in message
    _assert_not_echoed(message, GH)
    _assert_not_echoed(message, RANDOM)


def test_many_findings_are_summarised() -> None:
    text = "\n".join(f"t{i}: ghp_{i}R8aK2mX9vQ4tL7wN3pZ6yB1cE5hJ0sD8fG2" for i in range(8))
    assert len(find_secrets(text)) == 8
    with pytest.raises(Refused, match="and 3 more"):
        check_no_secrets(text, field="content")


def test_one_secret_is_reported_once_even_when_several_rules_match() -> None:
    text = f"GITHUB_TOKEN={GH} and https://x:{GH}@github.com/a/b"
    assert [f.kind for f in find_secrets(text)] == ["GitHub token", "GitHub token"]
    ant = POSITIVES[13][1]
    assert [f.kind for f in find_secrets(ant)] == ["Anthropic API key"]


# --- things that must not be flagged -------------------------------------------------------

NOT_SECRETS: list[str] = [
    # the brief's placeholders and references
    "password = hunter2",
    "password: <your password>",
    'password: "<your password>"',
    'token = "xxx"',
    'secret = os.environ["X"]',
    "secret: ${SECRET}",
    "API_TOKEN=$API_TOKEN",
    'api_key = os.getenv("OPENAI_API_KEY")',
    "const token = process.env.GITHUB_TOKEN;",
    "SECRET_KEY = settings.SECRET_KEY",
    "password: !vault |",
    "token: {{ secrets.DEPLOY_TOKEN }}",
    "password = '%(db_password)s'",
    "password = changeme12345",
    "api_key = YOUR_API_KEY_HERE_1234",
    'client_secret: "****************"',
    # names that say where a secret lives, or count tokens
    "password_file = /run/secrets/db_password_v2_prod",
    "token_url = https://auth.example.com/oauth2/token",
    "secret_name: prod-db-credentials-v2024x",
    "secretKeyRef: {name: db, key: password}",
    "max_tokens: 4096",
    "token_count = 1234567890123",
    'author = "Jane Doe"',
    "tokenizer: bert-base-uncased-v2",
    "auth_timeout = 30s",
    "secret = my-app-db-creds",
    '"auth": "oauth2-client-credentials-v2"',
    "auth: postgres15-cluster-main",
    "token_type: bearer",
    'password_hash = "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub"',
    'secret: "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf"',
    "self.token = token_bytes(32).hex()",
    # hashes, ids and versions in ordinary text
    "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b (see #42).",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed",
    '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdB'
    'eoGlODJ6+SfaPg=="',
    "sha256: 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "checksum = 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "build: 20240501.1234-rc.7+abc123def",
    # sk- and friends inside words and phrases
    "Add a task-list and a risk-management-framework-2024 to the desk-based-workflow.",
    "sk-learn-compatible-estimator-wrapper",
    "ask-me-anything-about-the-deployment-pipeline",
    "the mask-rcnn-resnet50-fpn-coco-2020 model",
    "ghp_ is the prefix of GitHub personal access tokens",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "sk-proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "xoxb-your-bot-token-here-please",
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    # documentation keys and headers without a body
    "AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Key files start with -----BEGIN OPENSSH PRIVATE KEY----- and must stay in ~/.ssh.",
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    # URLs: user@host is not a password; redacted and templated ones are not secrets
    "clone git@github.com:acme/api.git or ssh://git@github.com:22/acme/api",
    "https://alice@example.com/repo and mailto:alice@example.com",
    "postgres://app:***@db.internal:5432/app",
    "postgres://app:<password>@db.internal/app",
    "postgres://app:${DB_PASSWORD}@db.internal/app",
    "redis://:{password}@cache/0",
    "postgres://postgres:postgres@localhost:5432/test",
    "https://example.com:8080/path?q=a:b@c",
    "git clone https://USERNAME:TOKEN@github.com/acme/api.git",
    "https://user:token@github.com/acme/api",
    # JWT-shaped text whose header is not JSON
    "eyJustKidding1.notatoken.reallynotatokenatall",
    # ordinary prose
    "We decided to keep SQLite as the default store; PostgreSQL is opt-in via CAIRN_URL.",
    "The secret to fast tests is a real in-memory database. Password rules: 12+ characters.",
    "Token budget: keep recall under 8 results. Auth happens in the gateway, not here.",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_false_positives_are_avoided(text: str) -> None:
    assert find_secrets(text) == []
    check_no_secrets(text, field="content")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("password", True),
        ("DB_PASSWORD", True),
        ("PGPASSWORD", True),
        ("clientSecret", True),
        ("x-api-key", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("private_key", True),
        ("Authorization", True),
        ("refresh_token", True),
        ("password_file", False),
        ("token_url", False),
        ("secret_name", False),
        ("max_tokens", False),
        ("author", False),
        ("monkey", False),
        ("key", False),
        ("cache_key", False),
        ("", False),
    ],
)
def test_secret_names(name: str, expected: bool) -> None:
    assert is_secret_name(name) is expected


def test_secret_values_need_length_and_entropy() -> None:
    assert is_secret_value(RANDOM)
    assert not is_secret_value("hunter2")
    assert not is_secret_value("aaaaaaaaaaaa1")
    assert not is_secret_value("correct horse battery staple 42")
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)


# --- properties ---------------------------------------------------------------------------

# Words that look like prose and code, including secret-ish words and prefixes on their own.
WORDS = [
    "the",
    "cache",
    "is",
    "rebuilt",
    "when",
    "config",
    "changes",
    "we",
    "decided",
    "to",
    "use",
    "SQLite",
    "for",
    "tests",
    "because",
    "it",
    "was",
    "flaky",
    "on",
    "CI",
    "password",
    "token",
    "secret",
    "auth",
    "api_key",
    "key",
    "passwords",
    "tokens",
    "task-list",
    "risk-free",
    "desk-top",
    "mask-based",
    "sk",
    "ghp",
    "glpat",
    "xoxb",
    "AKIA",
    "Bearer",
    "JWT",
    "README.md",
    "src/cairn/scope.py",
    "v1.2.3",
    "2024-05-01",
    "10:30",
    "#42",
    "(see",
    "notes)",
    "don't",
    "`code`",
    "-",
    "*",
    "https://example.com/docs/setup",
    "git@github.com:acme/api.git",
    "alice@example.com",
    "café",
    "naïve",
    "日本語",
    "👍",
    "100%",
    "x=1",
    "a:b",
]
SAFE_NAMES = [
    "commit",
    "sha",
    "id",
    "checksum",
    "version",
    "hash",
    "integrity",
    "digest",
    "etag",
    "revision",
    "request_id",
    "trace_id",
    "build",
    "author",
    "path",
    "url",
]
FILE_HASHES = [
    base64.b64encode(hashlib.sha256(w.encode()).digest()).decode() for w in WORDS[:20]
] + [base64.urlsafe_b64encode(hashlib.sha1(w.encode()).digest()).decode() for w in WORDS[:20]]

prose_word = st.tuples(st.sampled_from(WORDS), st.sampled_from(["", ",", ".", ";", "!", "?"])).map(
    "".join
)
hex_value = st.text("0123456789abcdef", min_size=7, max_size=64)
safe_value = st.one_of(
    hex_value,
    st.uuids().map(str),
    st.integers().map(str),
    st.sampled_from(FILE_HASHES),
    st.sampled_from(WORDS),
)
safe_line = st.one_of(
    st.lists(prose_word, min_size=1, max_size=25).map(" ".join),
    st.tuples(
        st.sampled_from(SAFE_NAMES), st.sampled_from([": ", " = ", "=", '": "']), safe_value
    ).map("".join),
    hex_value.map(lambda h: f"commit {h} fixed it"),
    st.uuids().map(lambda u: f"see ticket {u}"),
)


@given(st.lists(safe_line, min_size=1, max_size=12).map("\n".join))
@settings(deadline=None)
def test_prose_and_code_without_secrets_is_not_refused(text: str) -> None:
    assert find_secrets(text) == []
    check_no_secrets(text, field="content")


@given(st.text(max_size=2000))
@settings(deadline=None)
def test_scanning_arbitrary_text_never_crashes(text: str) -> None:
    try:
        check_no_secrets(text, field="content")
    except Refused as exc:
        if "\x00" in text:
            assert "holds a NUL character" in exc.message
        else:
            assert "seems to hold a secret" in exc.message


def test_nul_characters_are_refused_in_any_field_with_where_they_are() -> None:
    with pytest.raises(Refused, match=r"summary holds a NUL character \(U\+0000\) at position 4"):
        check_no_secrets("abc\x00def", field="summary")
    with pytest.raises(Refused, match="content holds a NUL"):
        check_content("a\x00", max_bytes=100)
    check_no_secrets("no nul here, only \\x00 spelled out", field="reason")


# Random-looking bodies built from distinct characters, so they are random by construction:
# log2(n) bits of entropy, a digit and letters present, and (without "r" or any repeated
# letter) none of the placeholder words such as "your", "insert" or "example".
_BODY_CHARS = [c for c in string.ascii_letters + string.digits if c not in "r7kQ"]


def _body(size: int) -> st.SearchStrategy[str]:
    return st.lists(
        st.sampled_from(_BODY_CHARS), min_size=size - 3, max_size=size - 3, unique=True
    ).map(lambda chars: "".join([*chars[:5], "7", *chars[5:], "k", "Q"]))


@given(body=_body(36), before=prose_word, after=prose_word)
@settings(deadline=None)
def test_any_github_token_is_found_and_never_echoed(body: str, before: str, after: str) -> None:
    token = f"ghp_{body}"
    with pytest.raises(Refused) as info:
        check_no_secrets(f"{before} {token} {after}", field="content")
    assert "GitHub token" in info.value.message
    _assert_not_echoed(info.value.message, token)


@given(body=_body(48), name=st.sampled_from(["OPENAI_API_KEY", "api_key", "password", "token"]))
@settings(deadline=None)
def test_any_openai_key_or_assigned_secret_is_found(body: str, name: str) -> None:
    for text, kind in ((f"{name}=sk-{body}", "OpenAI API key"), (f"{name}: {body[:24]}", ASSIGNED)):
        with pytest.raises(Refused) as info:
            check_no_secrets(text, field="summary")
        assert kind in info.value.message
        _assert_not_echoed(info.value.message, body[:24])


@given(
    st.lists(
        st.sampled_from(string.ascii_uppercase + "234567"), min_size=16, max_size=16, unique=True
    )
)
@settings(deadline=None)
def test_any_aws_access_key_id_is_found(chars: list[str]) -> None:
    key = "AKIA" + "".join(chars)
    findings = find_secrets(f"aws_access_key_id = {key}")
    assert [f.kind for f in findings] == ["AWS access key id"]
