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
import json
import uuid
from urllib.parse import quote

from secrets_gen import ALNUM, SEED, Gen, Planted, jwt, pem
from secrets_look_alikes import look_alikes


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
        _more_formats,
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
    block, body = pem("PRIVATE KEY", g, escaped=True)
    sa = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": g.hex(40),
        "private_key": block.replace("\\n", "\n"),
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
        block, first = pem(kind, g)
        bag.add(f"pem {kind.lower()}", "deploy key:\n" + block.replace(first, "{s}"), first)
    block, first = pem("PGP PRIVATE KEY BLOCK", g)
    bag.add(
        "pgp", block.replace("KEY BLOCK-----\n", "KEY BLOCK-----\n\n").replace(first, "{s}"), first
    )
    block, first = pem("ENCRYPTED PRIVATE KEY", g, escaped=True)
    bag.add("pem escaped", '{{"key": "' + block.replace(first, "{s}") + '"}}', first)
    # JWTs
    bag.add("jwt bearer", "Authorization: Bearer {s}", jwt(g))
    bag.add("jwt prose", "the session cookie was {s} when it failed", jwt(g))
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
        g.pick(ALNUM + "!@#%^&*(-_=+)", 50),
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


def _more_formats(g: Gen, bag: Bag) -> None:
    """XML and .NET config, .pgpass, generic keys stated in prose, bearer tokens, and a few
    more prefixed services."""
    bag.add("xml element", "<connection>\n  <password>{s}</password>\n</connection>", g.password())
    bag.add("xml appsettings", '<add key="StripeApiKey" value="{s}" />', g.alnum(32))
    bag.add("pgpass", "db.internal:5432:app:app_user:{s}", g.password())
    bag.add("api key in prose", "the API key is {s} for the staging tenant", g.hex(32))
    bag.add("token in prose", "Our access token was {s}, rotated since", g.url(40))
    bag.add("bearer in prose", "call it with Bearer {s} and it works", g.url(48))
    bag.add("pass name", "DB_PASS={s}", g.password())
    bag.add("mailchimp", "mailchimp key {s}", g.hex(32) + "-us" + str(g.rng.randint(1, 20)))
    bag.add("square", "SQUARE_TOKEN={s}", "sq0atp-" + g.url(22))
    bag.add(
        "teams webhook",
        "notify {s}",
        f"https://acme.webhook.office.com/webhookb2/{uuid.UUID(int=g.rng.getrandbits(128))}"
        f"@{uuid.UUID(int=g.rng.getrandbits(128))}/IncomingWebhook/{g.hex(32)}"
        f"/{uuid.UUID(int=g.rng.getrandbits(128))}",
    )


def build(seed: int = SEED) -> tuple[list[Planted], list[str]]:
    """The planted secrets and the look-alikes, the same for the same seed."""
    g = Gen(seed)
    return _planted(g), look_alikes(g)
