"""The built-in policy packs, by name: `kubernetes-best-practices` and `pod-security-restricted`.

Must never: import a pack's module before it is asked for by name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackwright.policy._core import PolicyPack

#: Built-in pack name → the module that defines it as `PACK`.
BUILT_IN = {
    "kubernetes-best-practices": "stackwright.policy.packs.kubernetes_best_practices",
    "pod-security-restricted": "stackwright.policy.packs.pod_security_restricted",
}


def built_in(name: str) -> PolicyPack | None:
    """The built-in pack of that name, or None."""
    module = BUILT_IN.get(name)
    if module is None:
        return None
    pack: PolicyPack = importlib.import_module(module).PACK
    return pack


__all__ = ["BUILT_IN", "built_in"]
