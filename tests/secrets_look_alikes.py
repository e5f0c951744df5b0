"""Look-alikes for the secret-detector corpus: text that resembles a credential, or talks
about one, and must be stored as it is (hashes, ids, public keys, stand-ins, references,
structured text, prose, and code that handles secrets without holding one)."""

from __future__ import annotations

import base64
import hashlib
import uuid

from secrets_gen import Gen, hexdigest


def look_alikes(g: Gen) -> list[str]:
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
            out.append(f"{algo}({word}) = {hexdigest(word, algo)}")
    for word in words[:4]:
        out.append(f"Fixed in commit {hexdigest(word, 'sha1')} (see #{g.rng.randint(10, 999)}).")
    out.append(f"git cherry-pick {hexdigest('x', 'sha1')[:12]} {hexdigest('y', 'sha1')[:7]}")
    out.append(f"checksum = {hexdigest('release', 'sha256')}")
    sri = base64.b64encode(hashlib.sha512(b"lodash").digest()).decode()
    out.append(f'"integrity": "sha512-{sri}"')
    out.append(f"sha256: {base64.b64encode(hashlib.sha256(b'x').digest()).decode()}")
    out.append(f"image: ghcr.io/acme/api@sha256:{hexdigest('image', 'sha256')}")
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
        f"password_hash: {hexdigest('hunter2', 'md5')}",
        f"token_sha256 = {hexdigest('token', 'sha256')}",
        "    needs_password: bool = False\n    used_password: bool = False\n    used_gssapi: bool",
        "try:\n    import pwd\nexcept ImportError:\n    pwd = None\ntry:\n    import grp",
        "<password>${DB_PASSWORD}</password>",
        "<token>{{ deploy_token }}</token>",
        '<add key="Environment" value="Production2024" />',
        "<passwordPolicy>min-length-12</passwordPolicy>",
        "localhost:5432:*:postgres:*",
        "Bearer authentication is required for every endpoint of the API.",
        "the secret is out: we ship on Friday",
        "The API key is read from STRIPE_API_KEY at startup.",
        "If the token is expired, refresh it with the refresh token.",
        "bypass: true",
        "12:30:45:99:ok",
        "fe80:0:0:0:abcd",
        "presence_token = self.presence_token.weight.unsqueeze(0).expand(b, -1, -1)",
        "self.cross_attn_image_to_token = Sam3TrackerAttention(config)",
        "password: Annotated[str, typer.Option(prompt=True, hide_input=True)]",
        "self.session.auth = HTTPKerberosAuth(**self.kerb_kwargs)",
        "# First pass: decided_mask==0, every element is undecided",
    ]
