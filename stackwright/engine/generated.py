"""Values the engine makes once and keeps in the state: random passwords (Pulumi's `random`).

A resource of a type listed in `GENERATORS` has nothing in a cluster; when it is
created, or its inputs change, the engine calls its generator and records the result
as the resource's outputs; every later run reads them back from the state, so the
value stays the same until the inputs change. Must never: generate a value twice for
the same inputs, or record one anywhere but the state (its outputs are secret).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

RANDOM_PASSWORD = "stackwright:random:RandomPassword"
DEFAULT_ALPHABET = string.ascii_letters + string.digits


def random_password(inputs: Mapping[str, Any]) -> dict[str, Any]:
    length = int(inputs.get("length") or 24)
    alphabet = str(inputs.get("alphabet") or DEFAULT_ALPHABET)
    import secrets  # with random and hmac (~1 ms), for a program that declares a password

    return {"result": "".join(secrets.choice(alphabet) for _ in range(length))}


#: type token → (generator, the output paths that are secret).
GENERATORS: dict[str, tuple[Callable[[Mapping[str, Any]], dict[str, Any]], tuple[str, ...]]] = {
    RANDOM_PASSWORD: (random_password, ("result",)),
}


def is_generated(type_: str) -> bool:
    return type_ in GENERATORS
