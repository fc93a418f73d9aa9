"""The seam where secrets in state will be encrypted (issue 7); today it stores them as given.

Every resource passes through an `Encrypter` on its way into a row (`seal`) and
on its way out (`unseal`), so encrypting the values at `ResourceState.secret_paths`
needs no change to the store: issue 7 supplies an Encrypter built from the
stack's passphrase and hands it to `open_backend`. Stack outputs and import /
export documents do not pass through it yet; issue 7 decides what they carry.

An Encrypter must never change anything but the values at `secret_paths`: the
store indexes rows by URN and cluster id and checks references between rows.
"""

from __future__ import annotations

from typing import Protocol

from stackwright.model import ResourceState


class Encrypter(Protocol):
    """Turns a resource's secret values into what is stored, and back."""

    def seal(self, stack: str, resource: ResourceState) -> ResourceState: ...

    def unseal(self, stack: str, resource: ResourceState) -> ResourceState: ...


class PlaintextEncrypter:
    """The default until issue 7: secrets are stored as given (and shown as [secret])."""

    def seal(self, stack: str, resource: ResourceState) -> ResourceState:
        return resource

    def unseal(self, stack: str, resource: ResourceState) -> ResourceState:
        return resource
