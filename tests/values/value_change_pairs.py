"""Pairs of claims an agent might write one after the other, about the same thing.

`RESTATEMENTS` say the same thing in other words, with the same values: remembering the second
after the first boosts the first. `VALUE_CHANGES` change a value (a version, a number, a name,
an identifier, a date, a negation): remembering the second must store it, never boost.
Every pair is similar enough that an embedding alone would call most of them duplicates.
"""

from __future__ import annotations

# A long preamble both long texts share, longer than the embedder reads (2000 characters).
_PREAMBLE = " ".join(
    f"Step {n}: the deploy pipeline checks out the repository, restores the dependency "
    "cache, builds the container image and runs the smoke tests against the staging stack."
    for n in range(1, 16)
)
assert len(_PREAMBLE) > 2000

LONG_SAME = (
    _PREAMBLE + " Finally the image is promoted and the service listens on port 8080.",
    _PREAMBLE + " Finally the image is promoted, and the service listens on port 8080.",
)
LONG_CHANGED = (
    _PREAMBLE + " Finally the image is promoted and the service listens on port 8080.",
    _PREAMBLE + " Finally the image is promoted and the service listens on port 9090.",
)

RESTATEMENTS: list[tuple[str, str]] = [
    ("Python 3.11 is required for CI.", "Python 3.11 is required for CI!"),
    ("CI requires Python 3.11.", "Python 3.11 is required by CI."),
    ("The primary database is db-blue.", "db-blue is the primary database."),
    ("We use Redis for caching.", "We use Redis as our cache."),
    ("Always run the linter before pushing.", "Always run the linter before you push."),
    ("Never deploy on Fridays.", "Never deploy to production on Fridays."),
    (
        "The API rate limit is 100 requests per minute.",
        "The rate limit of the API is 100 requests per minute.",
    ),
    (
        "Use `retry_with_backoff` for webhook calls.",
        "Webhook calls should use `retry_with_backoff`.",
    ),
    ("Migrations must run with the --lock flag.", "Run migrations with the --lock flag."),
    ("The staging cluster runs Kubernetes 1.29.", "The staging cluster runs on Kubernetes 1.29."),
    (
        "The frontend is built with React and TypeScript.",
        "We build the frontend with React and TypeScript.",
    ),
    ("Secrets live in AWS Secrets Manager.", "We keep secrets in AWS Secrets Manager."),
    ("The release branch is cut every Monday.", "Release branches are cut every Monday."),
    (
        "Don't commit generated files to the repository.",
        "Do not commit generated files to the repository.",
    ),
    (
        "The default timeout for HTTP calls is 30 seconds.",
        "HTTP calls have a default timeout of 30 seconds.",
    ),
    ("Alice owns the billing service.", "The billing service is owned by Alice."),
    ("Use Postgres 16 in production.", "In production, use Postgres 16."),
    ("The nightly backup runs at 02:00 UTC.", "Nightly backups run at 02:00 UTC."),
    ("Feature flags are stored in LaunchDarkly.", "We store feature flags in LaunchDarkly."),
    ("The cache TTL is five minutes.", "The TTL of the cache is five minutes."),
    ("Images are pushed to ghcr.io/acme/api.", "We push images to ghcr.io/acme/api."),
    ("Caching is done with Redis.", "Redis does the caching."),
    LONG_SAME,
]

VALUE_CHANGES: list[tuple[str, str]] = [
    ("Python 3.11 is required for CI.", "Python 3.12 is required for CI."),
    ("The primary database is db-blue.", "The primary database is db-green."),
    ("We use Redis for caching.", "We use Memcached for caching."),
    ("Always squash commits when merging.", "Never squash commits when merging."),
    ("We deploy on Fridays.", "We don't deploy on Fridays."),
    ("Enable the query cache in production.", "Disable the query cache in production."),
    (
        "The API rate limit is 100 requests per minute.",
        "The API rate limit is 200 requests per minute.",
    ),
    (
        "The default timeout for HTTP calls is 30 seconds.",
        "The default timeout for HTTP calls is 60 seconds.",
    ),
    ("The release branch is cut every Monday.", "The release branch is cut every Thursday."),
    ("Alice owns the billing service.", "Bob owns the billing service."),
    ("The nightly backup runs at 02:00 UTC.", "The nightly backup runs at 03:00 UTC."),
    (
        "The billing worker retries failed webhook deliveries five times with backoff.",
        "The billing worker retries failed webhook deliveries six times with backoff.",
    ),
    (
        "The service reads its settings from config.yaml.",
        "The service reads its settings from config.toml.",
    ),
    ("Set max_connections to 100 on the primary.", "Set max_pool_size to 100 on the primary."),
    ("The public launch date is 2026-09-01.", "The public launch date is 2026-10-15."),
    ("Use Postgres 16 in production.", "Use Postgres 17 in production."),
    ("The staging cluster runs Kubernetes 1.29.", "The staging cluster runs Kubernetes 1.30."),
    ("Session tokens expire after 15 minutes.", "Session tokens expire after 2 hours."),
    ("The API is served from api.example.com.", "The API is served from api2.example.com."),
    ("Deploys to staging are manual.", "Deploys to staging are no longer manual."),
    ("Feature flags are stored in LaunchDarkly.", "Feature flags are stored in Unleash."),
    ("The worker pool size is 8.", "The worker pool size is 16."),
    ("Builds run on GitHub Actions.", "Builds run on CircleCI."),
    ("Redis is the session store.", "Memcached is the session store."),
    LONG_CHANGED,
]
