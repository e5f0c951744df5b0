"""A corpus for the secret detector: planted secrets that must be refused and look-alikes that
must pass.

Every secret body is drawn at test time from a seeded RNG, so the repository holds no literal
that looks like a live credential (neither GitHub's push protection nor our own scanners have
anything to find here) and every run sees the same corpus. The formats follow the gitleaks and
detect-secrets rule sets; the disguises (wrapped lines, invisible characters, base64) are the
ones an attacker used against cairn.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass
from urllib.parse import quote

SEED = 1207
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER_DIGITS = string.ascii_uppercase + string.digits


@dataclass(frozen=True, slots=True)
class Planted:
    """A text holding one secret; `secret` is the stretch of `text` a finding must cover."""

    label: str
    text: str
    secret: str


class Gen:
    """Random bodies from one seeded RNG, each with at least one letter and one digit."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, alphabet: str, size: int) -> str:
        while True:
            body = "".join(self.rng.choice(alphabet) for _ in range(size))
            if any(c.isdigit() for c in body) and any(c.isalpha() for c in body):
                return body

    def alnum(self, size: int) -> str:
        return self.pick(ALNUM, size)

    def hex(self, size: int) -> str:
        return self.pick(HEX, size)

    def b64(self, size: int) -> str:
        return self.pick(B64, size)

    def url(self, size: int) -> str:
        return self.pick(B64URL, size)

    def upper(self, size: int) -> str:
        return self.pick(UPPER_DIGITS, size)

    def digits(self, size: int) -> str:
        return str(self.rng.randint(1, 9)) + "".join(
            self.rng.choice(string.digits) for _ in range(size - 1)
        )

    def raw(self, size: int) -> bytes:
        return bytes(self.rng.randrange(256) for _ in range(size))

    def password(self, symbols: str = "!#%&*?@") -> str:
        """A human-made password: two words, digits and a symbol (`Summer2024Horse!`)."""
        words = ["Summer", "Horse", "Maple", "Rocket", "Falcon", "River", "Copper", "Winter"]
        first, second = self.rng.sample(words, 2)
        return f"{first}{self.rng.randint(10, 9999)}{second}{self.rng.choice(symbols)}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(g: Gen) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": g.digits(10), "name": "Deploy Bot", "iat": 1_716_000_000}
    return f"{header}.{_b64url(json.dumps(claims).encode())}.{g.url(43)}"


def _pem(kind: str, g: Gen, *, escaped: bool = False) -> tuple[str, str]:
    body_lines = [g.b64(64) for _ in range(4)]
    newline = "\\n" if escaped else "\n"
    block = newline.join([f"-----BEGIN {kind}-----", *body_lines, f"-----END {kind}-----"])
    return block, body_lines[0]


class Bag:
    """The planted cases, as they are added."""

    def __init__(self) -> None:
        self.items: list[Planted] = []

    def add(self, label: str, template: str, secret: str) -> None:
        self.items.append(Planted(label, template.format(s=secret), secret))


def _planted(g: Gen) -> list[Planted]:
    bag = Bag()
    for family in (
        _cloud,
        _code_hosts,
        _services,
        _more_services,
        _keys_and_commands,
        _passwords,
        _disguised,
        _config_files,
    ):
        family(g, bag)
    return bag.items


def _cloud(g: Gen, bag: Bag) -> None:
    """Cloud providers: AWS, Google, Azure."""
    # AWS
    akia = "AKIA" + g.upper(16)
    bag.add("aws id", "aws_access_key_id = {s}", akia)
    bag.add("aws id prose", "The CI user's key id is {s}, rotate it in May.", "ASIA" + g.upper(16))
    bag.add("aws secret env", "AWS_SECRET_ACCESS_KEY={s}", g.b64(40))
    bag.add("aws secret ini", "[default]\naws_secret_access_key = {s}\n", g.b64(40))
    bag.add("aws secret near id", f"keys for deploy: {'AKIA' + g.upper(16)} / {{s}}", g.b64(40))
    bag.add("aws secret near words", "our aws secret key is {s} (rotate monthly)", g.b64(40))
    bag.add("aws secret near words 2", "Secret for AWS prod account:\n  {s}\n", g.b64(40))
    # Google
    pem, body = _pem("PRIVATE KEY", g, escaped=True)
    sa = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": g.hex(40),
        "private_key": pem.replace("\\n", "\n"),
        "client_email": "ci@acme-prod.iam.gserviceaccount.com",
    }
    bag.add(
        "gcp service account",
        json.dumps(sa, indent=2).replace("{", "{{").replace("}", "}}").replace(body, "{s}"),
        body,
    )
    bag.add("google api key", "maps key: {s}", "AIza" + g.url(35))
    bag.add("google api key env", "GOOGLE_API_KEY={s}", "AIza" + g.url(35))
    bag.add("google oauth secret", '"client_secret": "{s}"', "GOCSPX-" + g.url(28))
    bag.add("google access token", "curl -H 'Authorization: Bearer {s}' ...", "ya29." + g.url(60))
    # Azure
    account_key = g.b64(86) + "=="
    bag.add(
        "azure conn string",
        "DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={s};EndpointSuffix=core.windows.net",
        account_key,
    )
    bag.add("azure conn string prose", "Storage: AccountKey={s} (prod)", g.b64(86) + "==")
    sig = quote(base64.b64encode(g.raw(32)).decode(), safe="")
    bag.add(
        "azure sas url",
        "https://acme.blob.core.windows.net/logs?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01&sig={s}",
        sig,
    )
    sig2 = quote(base64.b64encode(g.raw(32)).decode(), safe="")
    bag.add("azure sas token", "SAS token: ?sv=2021-06-08&sr=c&sig={s}&se=2025-12-31", sig2)
    bag.add("azure ad secret", "AZURE_CLIENT_SECRET={s}", g.alnum(3) + "8Q~" + g.url(34))


def _code_hosts(g: Gen, bag: Bag) -> None:
    """Code hosts and chat: GitHub, GitLab, Slack."""
    # GitHub
    bag.add("github classic", "export GITHUB_TOKEN={s}", "ghp_" + g.alnum(36))
    bag.add("github classic prose", "I used {s} to push the tag", "ghp_" + g.alnum(36))
    bag.add("github oauth", "token: {s}", "gho_" + g.alnum(36))
    bag.add("github app", "installation token {s}", "ghs_" + g.alnum(36))
    bag.add(
        "github fine grained", "GH_TOKEN={s}", "github_pat_11" + g.upper(20) + "_" + g.alnum(59)
    )
    bag.add(
        "github fine grained prose",
        "the PAT is {s}",
        "github_pat_11" + g.upper(20) + "_" + g.alnum(59),
    )
    # GitLab
    bag.add("gitlab pat", "glab auth login --token {s}", "glpat-" + g.url(20))
    bag.add("gitlab runner", "runner token {s}", "glrt-" + g.url(20))
    bag.add("gitlab deploy", "deploy token: {s}", "gldt-" + g.url(24))
    # Slack
    bag.add("slack bot", "SLACK_BOT_TOKEN={s}", f"xoxb-{g.digits(12)}-{g.digits(13)}-{g.alnum(24)}")
    bag.add(
        "slack user",
        "use {s} for the export",
        f"xoxp-{g.digits(11)}-{g.digits(11)}-{g.digits(13)}-{g.hex(32)}",
    )
    bag.add("slack app", "app-level token {s}", f"xapp-1-A{g.upper(10)}-{g.digits(13)}-{g.hex(64)}")
    bag.add(
        "slack webhook",
        "post to {s}",
        f"https://hooks.slack.com/services/T{g.upper(8)}/B{g.upper(10)}/{g.alnum(24)}",
    )
    bag.add(
        "slack webhook yaml",
        "webhook_url: {s}",
        f"https://hooks.slack.com/services/T{g.upper(10)}/B{g.upper(10)}/{g.alnum(24)}",
    )


def _services(g: Gen, bag: Bag) -> None:
    """Payments, messaging, AI and package registries."""
    # Stripe
    bag.add("stripe live", "STRIPE_SECRET_KEY={s}", "sk_live_" + g.alnum(99))
    bag.add("stripe restricted", "restricted key {s}", "rk_live_" + g.alnum(99))
    bag.add("stripe test", "stripe.api_key = '{s}'", "sk_test_" + g.alnum(24))
    bag.add("stripe webhook", "signing secret {s}", "whsec_" + g.alnum(32))
    # Twilio, SendGrid, Mailgun
    bag.add("twilio api key prose", "Twilio API key {s} was created for staging.", "SK" + g.hex(32))
    bag.add("twilio sid prose", "account {s} on the Twilio console", "AC" + g.hex(32))
    bag.add("twilio auth token", "TWILIO_AUTH_TOKEN={s}", g.hex(32))
    bag.add("sendgrid", "SENDGRID_API_KEY={s}", f"SG.{g.url(22)}.{g.url(43)}")
    bag.add("sendgrid prose", "mail goes out with {s}", f"SG.{g.url(22)}.{g.url(43)}")
    bag.add("mailgun prose", "the Mailgun key is {s} for now", "key-" + g.hex(32))
    bag.add(
        "mailgun curl", "curl -s --user 'api:{s}' https://api.mailgun.net/v3", "key-" + g.alnum(32)
    )
    # OpenAI, Anthropic
    bag.add("openai", "OPENAI_API_KEY={s}", "sk-" + g.alnum(48))
    bag.add("openai project", "use {s} in the notebook", "sk-proj-" + g.url(120))
    bag.add("openai service account", "key: {s}", "sk-svcacct-" + g.url(100))
    bag.add("anthropic", "ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + g.url(93) + "AA")
    bag.add(
        "anthropic prose",
        "Claude key {s} belongs to the eval team",
        "sk-ant-api03-" + g.url(93) + "AA",
    )
    # Package registries and containers
    bag.add("hugging face", "HF_TOKEN={s}", "hf_" + g.alnum(34))
    bag.add("hugging face cli", "huggingface-cli login --token {s}", "hf_" + g.alnum(34))
    bag.add("npm", "//registry.npmjs.org/:_authToken={s}", "npm_" + g.alnum(36))
    bag.add("npm prose", "publish with {s}", "npm_" + g.alnum(36))
    bag.add("pypi", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + g.url(120))
    bag.add("pypi prose", "twine upload -u __token__ -p {s}", "pypi-AgEIcHlwaS5vcmc" + g.url(80))
    bag.add("docker", "docker login -u acme -p {s}", "dckr_pat_" + g.url(27))
    bag.add("docker prose", "Docker Hub PAT {s}", "dckr_pat_" + g.url(27))
    # Heroku, Datadog
    bag.add("heroku uuid", "HEROKU_API_KEY={s}", str(uuid.UUID(int=g.rng.getrandbits(128))))
    bag.add("heroku new", "heroku token {s}", "HRKU-AA" + g.url(58))
    bag.add("datadog api", "DD_API_KEY={s}", g.hex(32))
    bag.add("datadog app", "datadog_app_key: {s}", g.hex(40))


def _more_services(g: Gen, bag: Bag) -> None:
    """Chat bots, hosting, vaults and other prefixed tokens."""
    # Discord, Telegram
    bag.add("discord bot", "bot token {s}", f"M{g.url(25)}.{g.url(6)}.{g.url(38)}")
    bag.add(
        "discord webhook",
        "alerts: {s}",
        f"https://discord.com/api/webhooks/{g.digits(18)}/{g.url(68)}",
    )
    bag.add("telegram prose", "the bot token is {s}, keep it safe", f"{g.digits(10)}:AA{g.url(33)}")
    bag.add(
        "telegram url",
        "curl {s}/sendMessage",
        f"https://api.telegram.org/bot{g.digits(9)}:AA{g.url(33)}",
    )
    bag.add("telegram env", "TELEGRAM_BOT_TOKEN={s}", f"{g.digits(9)}:AA{g.url(33)}")
    # Shopify, DigitalOcean, Vault, Atlassian
    bag.add("shopify", "SHOPIFY_ACCESS_TOKEN={s}", "shpat_" + g.hex(32))
    bag.add("shopify prose", "the app uses {s} for the admin API", "shpat_" + g.hex(32))
    bag.add("shopify shared secret", "shared secret {s}", "shpss_" + g.hex(32))
    bag.add("digitalocean", "doctl auth init -t {s}", "dop_v1_" + g.hex(64))
    bag.add("digitalocean prose", "DO token {s}", "dop_v1_" + g.hex(64))
    bag.add("vault", "VAULT_TOKEN={s}", "hvs." + g.url(24))
    bag.add("vault prose", "root token {s} (revoke after setup)", "hvs.CAES" + g.url(90))
    bag.add("atlassian", "JIRA_API_TOKEN={s}", "ATATT3xFfGF0" + g.url(180) + "=" + g.hex(8).upper())
    bag.add("atlassian prose", "jira token {s}", "ATATT3xFfGF0" + g.url(180))
    # Other prefixed services
    bag.add("linear", "LINEAR_API_KEY={s}", "lin_api_" + g.alnum(40))
    bag.add("postman", "postman key {s}", f"PMAK-{g.hex(24)}-{g.hex(34)}")
    bag.add("new relic", "NEW_RELIC_API_KEY={s}", "NRAK-" + g.upper(27))
    bag.add("notion", "notion: {s}", "ntn_" + g.alnum(46))
    bag.add("doppler", "DOPPLER_TOKEN={s}", "dp.pt." + g.alnum(43))
    bag.add("databricks", "databricks token {s}", "dapi" + g.hex(32))
    bag.add(
        "age", "age key {s}", "AGE-SECRET-KEY-1" + g.pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
    )
    bag.add("grafana", "GRAFANA_TOKEN={s}", f"glsa_{g.alnum(32)}_{g.hex(8)}")
    bag.add("supabase", "supabase access token {s}", "sbp_" + g.hex(40))


def _keys_and_commands(g: Gen, bag: Bag) -> None:
    """Key blocks, signed tokens, URLs with passwords, command lines."""
    # Private keys
    for kind in ("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"):
        block, first = _pem(kind, g)
        bag.add(f"pem {kind.lower()}", "deploy key:\n" + block.replace(first, "{s}"), first)
    block, first = _pem("PGP PRIVATE KEY BLOCK", g)
    bag.add(
        "pgp", block.replace("KEY BLOCK-----\n", "KEY BLOCK-----\n\n").replace(first, "{s}"), first
    )
    block, first = _pem("ENCRYPTED PRIVATE KEY", g, escaped=True)
    bag.add("pem escaped", '{{"key": "' + block.replace(first, "{s}") + '"}}', first)
    # JWTs
    bag.add("jwt bearer", "Authorization: Bearer {s}", _jwt(g))
    bag.add("jwt prose", "the session cookie was {s} when it failed", _jwt(g))
    # URLs with passwords
    bag.add("postgres url", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", g.alnum(20))
    bag.add("mysql url", "mysql://root:{s}@10.0.0.5/shop", g.password("!*-_."))
    bag.add(
        "mongo url", "MONGO_URI=mongodb+srv://svc:{s}@cluster0.ab1cd.mongodb.net/prod", g.alnum(16)
    )
    bag.add("redis url", "redis://:{s}@cache.internal:6379/0", g.alnum(24))
    bag.add("amqp url", "broker: amqp://worker:{s}@rabbit:5672//", g.password("!*-_."))
    # Basic auth and command lines
    creds = base64.b64encode(f"deploy:{g.alnum(18)}".encode()).decode()
    bag.add("basic auth header", "Authorization: Basic {s}", creds)
    creds2 = base64.b64encode(f"admin:{g.password()}".encode()).decode()
    bag.add("basic auth curl", "curl -H 'Authorization: Basic {s}' https://ci.internal", creds2)
    bag.add("curl user", "curl -u admin:{s} https://jenkins.internal/api", g.password())
    bag.add("mysql -p", "mysql -u root -p{s} shop", g.password())
    bag.add("mysqldump -p", "mysqldump -h db -uadmin -p{s} --all-databases", g.alnum(14))
    bag.add("sshpass", "sshpass -p {s} ssh deploy@10.0.0.9", g.password())
    bag.add("sshpass quoted", "sshpass -p '{s}' scp dump.sql host:", g.alnum(12))
    bag.add("--password", "pg_dumpall --password {s} > dump.sql", g.password())
    bag.add("--password=", "./manage.py createsuperuser --password={s}", g.alnum(16))
    bag.add("--token", "gh-release --token {s} v1.2", g.alnum(40))
    bag.add("docker login -p", "docker login registry.acme.io -u ci -p {s}", g.password())


def _passwords(g: Gen, bag: Bag) -> None:
    """Passwords in prose and config, and random values assigned to secret names."""
    # Prose passwords
    bag.add("prose password", "The staging DB password is {s} until Friday.", g.password())
    bag.add("prose password for", "password for the admin account was {s}", g.password())
    bag.add("prose password now", "FYI the wifi password is now {s}", g.password())
    bag.add("prose passphrase", "The GPG passphrase is `{s}`.", g.password())
    bag.add("prose password changed", "root password changed to {s} yesterday", g.alnum(14))
    # .env passwords made of words and digits
    bag.add("env password", "DB_PASSWORD={s}", g.password())
    bag.add("env password quoted", 'POSTGRES_PASSWORD="{s}"', g.password())
    bag.add("yaml password", "  password: {s}", g.password())
    bag.add("json password", '{{"user": "svc", "password": "{s}"}}', g.password())
    bag.add("ini passwd", "passwd = {s}", g.password())
    bag.add("compose password", "      - MYSQL_ROOT_PASSWORD={s}", g.password())
    # Generic assignments of random values
    bag.add("api_key", 'api_key = "{s}"', g.alnum(32))
    bag.add("client_secret yaml", "client_secret: {s}", g.url(40))
    bag.add(
        "secret_key django",
        "SECRET_KEY = '{s}'",
        g.pick(ALNUM + "!@#%^&*(-_=+)", 50).replace("(", "-"),
    )
    bag.add(
        "k8s secret data",
        "data:\n  password: {s}\n",
        base64.b64encode(g.alnum(16).encode()).decode(),
    )
    bag.add("auth token header", "X-Auth-Token: {s}", g.alnum(40))


def _disguised(g: Gen, bag: Bag) -> None:
    """Secrets wrapped over two lines, with invisible characters inside, or base64-encoded."""
    # Wrapped over two lines
    tok = "ghp_" + g.alnum(36)
    bag.items.append(Planted("wrapped github", f"token: {tok[:20]}\n{tok[20:]}", tok[:20]))
    tok = "sk-ant-api03-" + g.url(93) + "AA"
    bag.items.append(
        Planted("wrapped anthropic", f'key = "{tok[:50]}"\n      "{tok[50:]}"', tok[:50])
    )
    tok = "xoxb-" + g.digits(12) + "-" + g.digits(13) + "-" + g.alnum(24)
    bag.items.append(
        Planted("wrapped slack backslash", f"SLACK={tok[:30]}\\\n{tok[30:]}", tok[:30])
    )
    tok = "glpat-" + g.url(20)
    bag.items.append(Planted("wrapped gitlab", f"use {tok[:12]}\n   {tok[12:]} to clone", tok[:12]))
    tok = g.alnum(32)
    bag.items.append(Planted("wrapped assignment", f"API_KEY={tok[:10]}\n{tok[10:]}", tok[:10]))
    # Invisible characters inside
    for label, mark in (
        ("zwsp", "\u200b"),
        ("zwj", "\u200d"),
        ("soft hyphen", "\u00ad"),
        ("word joiner", "\u2060"),
        ("bom", "\ufeff"),
        ("zwnj", "\u200c"),
    ):
        tok = "ghp_" + g.alnum(36) if label != "soft hyphen" else "sk-ant-api03-" + g.url(60)
        cut = g.rng.randint(6, 20)
        hidden = tok[:cut] + mark + tok[cut:]
        bag.items.append(Planted(f"invisible {label}", f"token {hidden} here", hidden))
    full = "".join(chr(ord(c) + 0xFEE0) for c in "ghp_" + g.alnum(36))
    bag.items.append(Planted("full width", f"key: {full}", full))
    # Base64 of a token
    for label, inner in (
        ("base64 github", "ghp_" + g.alnum(36)),
        ("base64 env line", f"OPENAI_API_KEY=sk-proj-{g.url(60)}"),
        ("base64 url password", f"postgres://app:{g.alnum(20)}@db:5432/app"),
        ("base64 aws pair", f"{'AKIA' + g.upper(16)}:{g.b64(40)}"),
    ):
        encoded = base64.b64encode(inner.encode()).decode()
        bag.items.append(Planted(label, f"config blob: {encoded}", encoded))


def _config_files(g: Gen, bag: Bag) -> None:
    """Credentials in the files tools read them from: .netrc, JDBC and ADO.NET connection
    strings, Docker and npm auth, tfvars, HTTP headers."""
    bag.add("netrc", "machine api.heroku.com login ops@acme.io password {s}", g.alnum(24))
    bag.add(
        "netrc multi-line", "machine github.com\n  login ci-bot\n  password {s}\n", g.password()
    )
    bag.add(
        "jdbc url",
        "jdbc:postgresql://db:5432/app?user=app&password={s}&ssl=true",
        g.alnum(18),
    )
    bag.add(
        "ado.net",
        "Server=tcp:acme.database.windows.net,1433;Database=app;User ID=admin;Password={s};",
        g.password(),
    )
    auth = base64.b64encode(f"ci:{g.alnum(20)}".encode()).decode()
    bag.add("docker config", '{{"auths": {{"ghcr.io": {{"auth": "{s}"}}}}}}', auth)
    npm_auth = base64.b64encode(f"deploy:{g.password()}".encode()).decode()
    bag.add("npmrc _auth", "_auth={s}", npm_auth)
    bag.add("tfvars", 'db_password = "{s}"', g.password())
    bag.add("cookie secret", "COOKIE_SECRET={s}", g.hex(64))
    bag.add("webhook secret", "webhook_secret: {s}", g.url(32))
    bag.add("env password letters and digits", "DB_PASSWORD={s}", "horse" + g.digits(4) + "x")
    bag.add("sshpass quoted word", "sshpass -p '{s}' ssh pi@raspberrypi", "MyPass")
    bag.add(
        "prose password letters and digits", "the router password is {s}", "hunter" + g.digits(3)
    )
    bag.add("aws secret prose underscore", "aws_secret_access_key is {s}", g.b64(40))
    bag.add(
        "private token header",
        "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.acme.io",
        "glpat-" + g.url(20),
    )


def _hash(word: str, algo: str) -> str:
    return hashlib.new(algo, word.encode()).hexdigest()


def _look_alikes(g: Gen) -> list[str]:
    return [
        text
        for family in (
            _ids_and_public_keys,
            _stand_ins,
            _references,
            _structured,
            _prose,
            _code_and_docs,
        )
        for text in family(g)
    ]


def _ids_and_public_keys(g: Gen) -> list[str]:
    """Hashes, ids, public keys and publishable keys."""
    out: list[str] = []
    words = ["cairn", "memory", "deploy", "release", "parser", "tests", "docs", "cache"]
    # Hashes and ids
    for algo in ("md5", "sha1", "sha256"):
        for word in words[:3]:
            out.append(f"{algo}({word}) = {_hash(word, algo)}")
    for word in words[:4]:
        out.append(f"Fixed in commit {_hash(word, 'sha1')} (see #{g.rng.randint(10, 999)}).")
    out.append(f"git cherry-pick {_hash('x', 'sha1')[:12]} {_hash('y', 'sha1')[:7]}")
    out.append(f"checksum = {_hash('release', 'sha256')}")
    sri = base64.b64encode(hashlib.sha512(b"lodash").digest()).decode()
    out.append(f'"integrity": "sha512-{sri}"')
    out.append(f"sha256: {base64.b64encode(hashlib.sha256(b'x').digest()).decode()}")
    out.append(f"image: ghcr.io/acme/api@sha256:{_hash('image', 'sha256')}")
    for _ in range(4):
        out.append(f"request id {uuid.UUID(int=g.rng.getrandbits(128))} failed with 502")
    out.append(f"trace_id={g.hex(32)} span_id={g.hex(16)}")
    out.append(f'etag: W/"{g.hex(40)}"')
    # Public keys and certificates
    out.append(f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{g.b64(300)} alice@laptop")
    out.append(f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.b64(43)} ci@acme")
    out.append(f"authorized_keys holds ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.b64(43)}")
    for kind in ("PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE", "CERTIFICATE REQUEST"):
        body = "\n".join(g.b64(64) for _ in range(4))
        out.append(f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----")
    out.append(f"age public key age1{g.pick('qpzry9x8gf2tvdw0s3jn54khce6mua7l', 58)}")
    # Publishable keys are meant to be public
    out.append(f"STRIPE_PUBLISHABLE_KEY=pk_live_{g.alnum(99)}")
    out.append(f"stripe.js uses pk_test_{g.alnum(24)}")
    out.append(f"NEXT_PUBLIC_STRIPE_KEY=pk_live_{g.alnum(24)}")
    return out


def _stand_ins(g: Gen) -> list[str]:
    """Placeholders and documentation stand-ins."""
    out: list[str] = []
    # Placeholders and stand-ins
    out.extend(
        [
            "GITHUB_TOKEN=<token>",
            "export OPENAI_API_KEY=sk-...",
            "OPENAI_API_KEY=sk-your-key-here",
            "api_key: your-api-key-here",
            "token = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
            "ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
            "ghp_************************************",
            "AWS_ACCESS_KEY_ID=AKIA................",
            "password: ********",
            "password = <your password>",
            "DB_PASSWORD=changeme",
            "DB_PASSWORD=REPLACE_ME_WITH_REAL_PASSWORD",
            "SLACK_WEBHOOK=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
            "AKIAIOSFODNN7EXAMPLE",
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "hvs.XXXXXXXXXXXXXXXXXXXXXXXX",
            "SENDGRID_API_KEY=SG.xxxxxxxx.yyyyyyyy",
            "mysql://user:password@localhost/db",
            "postgres://postgres:postgres@localhost:5432/test",
            "https://user:<password>@registry.acme.io",
        ]
    )
    return out


def _references(g: Gen) -> list[str]:
    """References to where a secret lives, and commands that read one."""
    out: list[str] = []
    # References to where a secret lives
    out.extend(
        [
            "password: ${DB_PASSWORD}",
            "API_TOKEN=$API_TOKEN",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "api_key = os.environ['OPENAI_API_KEY']",
            "const key = process.env.STRIPE_SECRET_KEY;",
            "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password",
            "password_file: /run/secrets/db_password",
            "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password",
            "token_url: https://oauth2.googleapis.com/token",
            "secret_name = 'prod/db/credentials-v2'",
            "vault kv get -field=password secret/prod/db",
            "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
            "aws secretsmanager get-secret-value --secret-id prod/api-key",
            "DATABASE_URL=postgres://app:${DB_PASSWORD}@db.internal/app",
            'curl -u "$JENKINS_USER:$JENKINS_TOKEN" https://ci.internal',
            "docker login -u ci --password-stdin < token.txt",
            "sshpass -f ~/.ssh/pass.txt ssh deploy@10.0.0.9",
            "mysql -u root -p shop",
            "mysql -u root -p",
            "pg_dump --password-file=/etc/pgpass app",
            "gh auth login --with-token < token.txt",
        ]
    )
    return out


def _structured(g: Gen) -> list[str]:
    """Base64 of ordinary text, long identifiers, versions and other structured text."""
    out: list[str] = []
    # Base64 of ordinary text
    for text in (
        "The quick brown fox jumps over the lazy dog",
        "hello world, this is a config blob",
        "password=hunter2",
        '{"user": "alice", "role": "admin"}',
        "apiVersion: v1\nkind: ConfigMap",
    ):
        out.append(f"blob: {base64.b64encode(text.encode()).decode()}")
    # Long identifiers, versions, colours and other structured text
    out.extend(
        [
            "AbstractSingletonProxyFactoryBeanConfigurationManager2",
            "test_recall_returns_memories_in_scope_and_global_only_v2",
            "class HttpRequestRetryPolicyWithExponentialBackoff2024:",
            "io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2ConnectionHandler",
            "com.amazonaws.services.secretsmanager.AWSSecretsManagerClientBuilder",
            "color: #3fa9f5; background: #1b1f23; border-color: #e1e4e8;",
            "--primary: rgb(63, 169, 245); --accent: hsl(210 50% 40%);",
            "version 1.24.3-rc.2+build.20240501.abc123def",
            "numpy==2.1.3 torch==2.5.1+cu121 transformers>=4.46.0",
            "Released v3.2.0 on 2024-05-01T14:32:08Z",
            "node:20.11.1-alpine3.19",
            "listening on 0.0.0.0:8080 and [::1]:8443",
            "10.0.0.5:5432 -> 10.0.0.6:6432",
            "https://docs.acme.io/guides/auth#refresh-tokens",
            "git@github.com:acme/api.git",
            "ssh://git@gitlab.com:22/acme/infra.git",
            "https://alice@bitbucket.org/acme/web.git",
            "mailto:security@acme.io",
            "/home/alice/.config/gh/hosts.yml",
            "C:\\Users\\alice\\AppData\\Roaming\\npm\\node_modules",
            "0 3 * * 1-5 /usr/local/bin/backup.sh",
            r"^(?P<user>[a-z_][a-z0-9_-]{0,31}):(?P<rest>.*)$",
            "SELECT id, token_count FROM usage WHERE created_at > now() - interval '7 days';",
            "UPDATE users SET password_hash = $1 WHERE id = $2",
            'File "/app/cairn/core.py", line 212, in recall',
            "KeyError: 'api_key' in settings.py:88",
            "max_tokens: 4096",
            "tokenizer: bert-base-uncased",
            "auth_timeout = 30s",
            "token_type: bearer",
            "self.token = token_bytes(32).hex()",
            "def rotate_api_key(client_id: str) -> None:",
            "eyJustKidding1.notatoken.reallynotatokenatall",
            "sk-learn-compatible-estimator-wrapper",
            "ask-me-anything-about-the-deployment-pipeline",
            "key-value-store-implementation-notes-2024-draft",
            "build 2024050112:abcdefghijklmnopqrstuvwxyzabcdefghi",
            "meeting at 10:30, then 14:45:00 standup",
            "ACME-1234: fix login redirect",
            f"trace {g.b64(40)} in the span exporter",
        ]
    )
    return out


def _prose(g: Gen) -> list[str]:
    """Prose about passwords and tokens, without any."""
    out: list[str] = []
    # Prose about passwords and tokens, without any
    out.extend(
        [
            "The password is stored in Vault under prod/db.",
            "The password was rotated yesterday; ask Alice for access.",
            "Password is required and must be at least 12 characters.",
            "the password is wrong, check caps lock",
            "Password rules: 12+ characters, one digit, one symbol.",
            "If the token is expired, the API returns 401 and we refresh it.",
            "We never log the API key; it is read from the environment at startup.",
            "Rotate the AWS secret key every 90 days (see runbook).",
            "The aws secret lives in 1Password, vault 'Infra', item 'prod deploy'.",
            "Use a passphrase, not a password: four random words are enough.",
            "Auth happens in the gateway; services trust the X-User header.",
            "The secret to fast tests is a real in-memory database.",
            "Token budget: keep recall under 8 results.",
            "passwords are hashed with argon2id (m=65536, t=3, p=4)",
            "Telegram bots are created with @BotFather; the token goes in TELEGRAM_BOT_TOKEN.",
            "Set MYSQL_ROOT_PASSWORD in .env (not committed).",
            "Twilio Account SIDs start with AC and API keys with SK.",
            "Mailgun keys used to start with key- followed by 32 characters.",
            "Shopify admin tokens start with shpat_ and DigitalOcean ones with dop_v1_.",
            "Vault tokens start with hvs. and Atlassian API tokens with ATATT.",
        ]
    )
    return out


def _code_and_docs(g: Gen) -> list[str]:
    """Code that handles secrets without holding one, and documentation about flags."""
    return [
        "password = getpass.getpass('DB password: ')",
        'token = request.headers["Authorization"]',
        "client = Client(api_key=api_key, timeout=30)",
        "def login(username: str, password: str) -> Session:",
        "self.password = password",
        "password=form.cleaned_data['password']",
        "if password != confirm_password: raise ValueError",
        'password: "{{ vault_db_password }}"',
        "password: !secret mqtt_password",
        "token: ENC[AES256_GCM,data:Zm9vYmFy,iv:abc,tag:def,type:str]",
        "password = var.db_password",
        "password = random_password.db.result",
        "auth: required",
        "token: null",
        "password: ''",
        "secret: true",
        "export PGPASSWORD",
        'read -s -p "Password: " PASSWORD',
        "echo $CR_PAT | docker login ghcr.io -u USERNAME --password-stdin",
        "mysql -h db -P3306 -uroot -p",
        'mysql -uroot -p"$(cat /run/secrets/mysql_root)"',
        "mysql -u root -p$MYSQL_ROOT_PASSWORD shop",
        "ssh -p 2222 deploy@10.0.0.9",
        "psql -h db -p 5432 -U app",
        "Pass --password when the server asks for one, or --token to use a token.",
        "sshpass -p is insecure: the password shows up in ps; use sshpass -e instead.",
        "curl -u username:password https://api.example.com",
        "curl -u admin:admin http://localhost:8080/manage",
        "curl -u api:YOUR_API_KEY https://api.mailgun.net/v3/domains",
        "The password is hashed with bcrypt before it is stored.",
        "The password was never committed; see SECURITY.md.",
        "the password is sha256-hashed and salted",
        "Our password is v2-compatible with the old client.",
        "Remove leaked token from history (it was rotated the same day).",
        f"data:image/png;base64,{base64.b64encode(g.raw(300)).decode()}",
        f"kind: Secret\ndata:\n  username: {base64.b64encode(b'admin').decode()}",
        f"client_id: {uuid.UUID(int=g.rng.getrandbits(128))}",
        f"tenant_id = {uuid.UUID(int=g.rng.getrandbits(128))}",
        f"password_hash: {_hash('hunter2', 'md5')}",
        f"token_sha256 = {_hash('token', 'sha256')}",
    ]


def build(seed: int = SEED) -> tuple[list[Planted], list[str]]:
    """The planted secrets and the look-alikes, the same for the same seed."""
    g = Gen(seed)
    return _planted(g), _look_alikes(g)
