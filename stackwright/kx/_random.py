"""`RandomPassword`: a secret made once and kept in the stack's state (Pulumi's `random`).

The engine generates the value when the resource is created or its inputs change
(`stackwright.engine.generated`) and records it as the resource's outputs; every
later run reads it back, so the password stays the same until `length` or the
alphabet changes. Must never: let the value out of an `Output.secret`.
"""

from __future__ import annotations

import string

from stackwright.errors import UsageError
from stackwright.sdk.output import Output
from stackwright.sdk.resource import CustomResource, ResourceOptions

#: The engine's type token for generated passwords (stackwright.engine.generated).
RANDOM_PASSWORD = "stackwright:random:RandomPassword"
DEFAULT_ALPHABET = string.ascii_letters + string.digits


class RandomPassword(CustomResource):
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
        super().__init__(RANDOM_PASSWORD, name, {"length": length, "alphabet": alphabet}, opts)
        self.result: Output[str] = Output.secret(self.output("result"))
