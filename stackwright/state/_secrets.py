"""The seam where secrets in state are encrypted.

Every resource passes through an `Encrypter` on its way into a row (`seal`) and
on its way out (`unseal`), and so do stack outputs (`seal_outputs`, whose secret
parts are `model.SecretValue`s). The automation layer supplies an Encrypter built
from the stack's data key (`stackwright.automation.secrets`); sealed values are
`{"@secret": ciphertext}` envelopes, which `stack export` writes as they are
stored and `stack import` keeps.

An Encrypter must never change anything but the values at `secret_paths`: the
store indexes rows by URN and cluster id and checks references between rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from stackwright.model import SECRET_TEXT, ResourceState, map_secrets


class Encrypter(Protocol):
    """Turns a resource's secret values into what is stored, and back."""

    def seal(self, stack: str, resource: ResourceState) -> ResourceState: ...

    def unseal(self, stack: str, resource: ResourceState) -> ResourceState: ...

    def seal_outputs(self, stack: str, outputs: Mapping[str, Any]) -> dict[str, Any]: ...

    def unseal_outputs(self, stack: str, outputs: Mapping[str, Any]) -> dict[str, Any]: ...


class PlaintextEncrypter:
    """Without a stack's key (engine tests, tools): resource secrets stored as given,
    secret stack outputs stored as `[secret]` (their values are dropped, never written)."""

    def seal(self, stack: str, resource: ResourceState) -> ResourceState:
        return resource

    def unseal(self, stack: str, resource: ResourceState) -> ResourceState:
        return resource

    def seal_outputs(self, stack: str, outputs: Mapping[str, Any]) -> dict[str, Any]:
        return {k: map_secrets(v, lambda _: SECRET_TEXT) for k, v in outputs.items()}

    def unseal_outputs(self, stack: str, outputs: Mapping[str, Any]) -> dict[str, Any]:
        return dict(outputs)
