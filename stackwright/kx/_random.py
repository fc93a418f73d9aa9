"""`RandomPassword`: a secret that stays the same from one run to the next.

Pulumi keeps a generated password in its state. Stackwright's engine has no place
for a component's own generated values yet, so the password is derived instead:
HMAC-SHA256 over the stack and the resource's URN, keyed by a per-stack secret seed
(config `kx:seed`, set once with `stackwright config set --secret kx:seed …`).
Same seed, same stack, same name: same password; anyone without the seed cannot
compute it. Rotating the seed rotates every password of the stack.

Must never: make a password without a seed (a guessable default would be worse
than an error), or let the value out of an `Output.secret`.
"""

from __future__ import annotations

import hashlib
import hmac
import string

from stackwright.errors import UsageError
from stackwright.sdk.config import Config
from stackwright.sdk.context import current_program
from stackwright.sdk.output import Output
from stackwright.sdk.resource import ComponentResource, ResourceOptions

#: The config key holding the per-stack seed.
SEED_KEY = "kx:seed"
DEFAULT_ALPHABET = string.ascii_letters + string.digits


def derive_password(seed: str, stack: str, urn: str, length: int, alphabet: str) -> str:
    """`length` characters of `alphabet` from HMAC-SHA256(seed, stack, urn, counter) bytes,
    rejecting bytes past the largest multiple of the alphabet's size (no modulo bias)."""
    limit = 256 - 256 % len(alphabet)
    chars: list[str] = []
    counter = 0
    while len(chars) < length:
        message = f"{stack}\0{urn}\0{counter}".encode()
        block = hmac.new(seed.encode(), message, hashlib.sha256).digest()
        chars.extend(alphabet[b % len(alphabet)] for b in block if b < limit)
        counter += 1
    return "".join(chars[:length])


class RandomPassword(ComponentResource):
    """`RandomPassword("db", length=24).result`: a secret Output, stable across runs."""

    def __init__(
        self,
        name: str,
        length: int = 24,
        *,
        alphabet: str = DEFAULT_ALPHABET,
        opts: ResourceOptions | None = None,
    ) -> None:
        if length < 1 or len(set(alphabet)) < 2:
            raise UsageError(
                f"kx.RandomPassword {name!r}: length must be at least 1 and the alphabet "
                "hold at least two different characters"
            )
        super().__init__("kx:random:RandomPassword", name, {"length": length}, opts)
        seed = Config("kx").get("seed")
        if not seed:
            raise UsageError(
                f"kx.RandomPassword {name!r} at {self.declared_at} needs the stack's secret seed "
                f"{SEED_KEY}: run `stackwright config set --secret {SEED_KEY} "
                "\"$(python -c 'import secrets; print(secrets.token_hex(32))')\"` once per stack"
            )
        stack = current_program().stack
        self.result: Output[str] = Output.secret(
            derive_password(seed, stack, self.urn, length, alphabet)
        )
        self.register_outputs({"result": self.result})
