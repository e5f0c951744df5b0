"""Random bodies for the secret-detector corpus, from one seeded RNG, and the record of a
planted secret. Nothing here is a literal credential: every body is drawn at test time."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
from dataclasses import dataclass

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


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(g: Gen) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": g.digits(10), "name": "Deploy Bot", "iat": 1_716_000_000}
    return f"{header}.{b64url(json.dumps(claims).encode())}.{g.url(43)}"


def pem(kind: str, g: Gen, *, escaped: bool = False) -> tuple[str, str]:
    body_lines = [g.b64(64) for _ in range(4)]
    newline = "\\n" if escaped else "\n"
    block = newline.join([f"-----BEGIN {kind}-----", *body_lines, f"-----END {kind}-----"])
    return block, body_lines[0]


def hexdigest(word: str, algo: str) -> str:
    return hashlib.new(algo, word.encode()).hexdigest()
