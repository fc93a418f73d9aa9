"""What `import` adopts: the entries asked for (`ImportEntry`), each checked for form
(`ImportRequest`), and the objects adopted (`Imported`), with their records.

Apart from `stack`, which imports these as an `import` runs (their classes were ~2 ms of
every operation's start). Must never: read or write a cluster or the state.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from stackwright.engine.records import with_outputs
from stackwright.model import ResourceState, always_secret


@dataclass(frozen=True)
class ImportEntry:
    """One object `import` adopts: its type token, its logical name in the program, its ID
    (`NAMESPACE/NAME`, or NAME for a cluster-scoped kind) and where it was asked for
    (`resources.json entry 3`), which a message about it starts with ("" for the
    command line's TYPE NAME ID); `parent`, the URN of the resource of the stack that
    declares it (a ConfigFile, ConfigGroup or Chart of its manifests), whose child it is
    adopted as (Pulumi's `import --parent`), or "" for the top of the stack."""

    type_token: str
    name: str
    object_id: str
    where: str = ""
    parent: str = ""


@dataclass(frozen=True)
class Imported:
    """An object adopted (or, from a preview, that would be): its entry, URN and record."""

    entry: ImportEntry
    state: ResourceState

    @property
    def urn(self) -> str:
        return self.state.urn


@dataclass(frozen=True)
class ImportRequest:
    """An entry checked for form: the object it names and the URN it is adopted under."""

    entry: ImportEntry
    urn: str
    api_version: str
    kind: str
    object_name: str

    @property
    def group_kind(self) -> str:
        """`Deployment.apps`, `ConfigMap`: the kind as an ApplySet parent lists it."""
        group = self.api_version.rpartition("/")[0]
        return f"{self.kind}.{group}" if group else self.kind

    def id_of(self, live: dict[str, Any]) -> str:
        """The id of the object read (`namespace/name`, a namespace the entry's id may have
        left to the provider's default)."""
        ns = (live.get("metadata") or {}).get("namespace")
        return f"{ns}/{self.object_name}" if ns else self.object_name

    def imported(self, live: dict[str, Any], declared: dict[str, Any], protect: bool) -> Imported:
        """The record of the object as `live` has it, declaring `declared` (its
        `declared_fields`, as read before Stackwright's apply: what the code printed says)."""
        record = ResourceState(
            urn=self.urn,
            type=self.entry.type_token,
            id=self.id_of(live),
            inputs=as_string_data(declared),
            secret_paths=always_secret(live),
            protect=protect,
            parent=self.entry.parent,
        )
        # Its secret values wherever else the live object holds them (kubectl's
        # last-applied annotation) are secret too.
        return Imported(self.entry, with_outputs(record, live))


def as_string_data(fields: dict[str, Any]) -> dict[str, Any]:
    """A Secret's fields with its text `data` as `stringData`, as the printed code declares
    it (plain values from the configuration): recorded so, the pasted code is no change.
    Binary values stay `data`, base64 as the cluster holds them."""
    data = fields.get("data")
    if not always_secret(fields) or not isinstance(data, dict) or "stringData" in fields:
        return fields
    try:
        text = {k: base64.b64decode(v, validate=True).decode() for k, v in data.items()}
    except (TypeError, ValueError, UnicodeDecodeError):
        return fields
    return {
        ("stringData" if k == "data" else k): (text if k == "data" else v)
        for k, v in fields.items()
    }
