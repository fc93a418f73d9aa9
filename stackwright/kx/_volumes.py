"""Objects a pod reads from — ConfigMaps, Secrets, PersistentVolumeClaims — as components.

Each is a `ComponentResource` with one Kubernetes object as its child, plus the
one-liners a pod spec needs: `as_env_value(key)` for an `env` entry,
`as_volume()` / `mount(path)` for a volume and its mount. ConfigMaps and Secrets
get content-hashed names (`<name>-<hash of the data>`), so changing the data makes
a new object: the workloads that reference it roll, and the engine deletes the old
one only after (create before delete).

Must never: put a secret value anywhere but the Secret's own data (the name carries
only a short digest of it, as Kustomize's generators do).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stackwright.errors import UsageError, located
from stackwright.kubernetes.core.v1 import ConfigMap as _ConfigMap
from stackwright.kubernetes.core.v1 import PersistentVolumeClaim as _PersistentVolumeClaim
from stackwright.kubernetes.core.v1 import Secret as _Secret
from stackwright.sdk.output import (
    UNKNOWN,
    Output,
    StateReader,
    dependencies_of,
    resolve,
    unwrap_secrets,
)
from stackwright.sdk.resource import (
    ComponentResource,
    CustomResource,
    ResourceOptions,
    _declared_at,
)

if TYPE_CHECKING:
    from stackwright.kubernetes.inputs.core_v1 import PersistentVolumeClaimSpecDict
    from stackwright.kubernetes.inputs.meta_v1 import ObjectMetaDict

#: Hex digits of the data's digest in a hashed name (as many as Kustomize's generators use).
HASH_LENGTH = 10


@dataclass(frozen=True)
class Mount:
    """A volume and where a container mounts it; `PodBuilder` adds the volume to the pod once."""

    volume: Mapping[str, Any]
    mount_path: str
    sub_path: str | None = None
    read_only: bool = False

    def as_volume_mount(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.volume["name"], "mountPath": self.mount_path}
        if self.sub_path is not None:
            entry["subPath"] = self.sub_path
        if self.read_only:
            entry["readOnly"] = True
        return entry


def volume_name(name: str) -> str:
    """A resource's logical name as a pod volume name (a DNS label)."""
    label = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63].rstrip("-")
    return label or "volume"


def content_hash(data: Any) -> str:
    """The first `HASH_LENGTH` hex digits of SHA-256 over the data as canonical JSON."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def _has_unknown(value: Any) -> bool:
    if value is UNKNOWN:
        return True
    if isinstance(value, Mapping):
        return any(_has_unknown(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_unknown(v) for v in value)
    return False


def hashed_name(name: str, content: Any) -> str | Output[str]:
    """`<name>-<hash of content>`; an Output when the content holds Outputs.

    The name of a Secret is not itself secret: only a digest of the value goes into it,
    so the Output is built by hand rather than with `apply` (which would mark it secret).
    """
    found = _dependencies(content)
    if found is None:
        return f"{name}-{content_hash(content)}"

    def compute(read: StateReader) -> Any:
        value = resolve(content, read)
        if _has_unknown(value):
            return UNKNOWN
        return f"{name}-{content_hash(unwrap_secrets(value)[0])}"

    return Output(compute, found)


def _dependencies(value: Any) -> frozenset[Any] | None:
    """The resources behind Outputs in `value`, or None when it holds no Output at all."""
    outputs: list[Output[Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Output):
            outputs.append(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    if not outputs:
        return None
    return dependencies_of(outputs)


class _Referenced(ComponentResource):
    """A component around one named object that pods refer to by name."""

    _object: CustomResource

    @property
    def object_name(self) -> Output[str]:
        """The object's name in the cluster, once created (an Output, so users depend on it).

        One Output per component, so that two mounts of one volume compare equal.
        """
        cached: Output[str] | None = self.__dict__.get("_object_name")
        if cached is None:
            cached = self.__dict__["_object_name"] = self._object.output("metadata", "name")
        return cached

    @property
    def metadata(self) -> Output[Any]:
        return self._object.output("metadata")

    #: The keys of the object's data (None: not a kind with keys), and its kind in messages.
    _keys: frozenset[str] | None = None
    _type_label = ""

    def _key(self, key: str) -> str:
        """`key`, refused when the data is known and lacks it: a pod reading a missing key
        never starts (CreateContainerConfigError), found only at `up`."""
        if self._keys is not None and key not in self._keys:
            close = difflib.get_close_matches(key, sorted(self._keys), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(
                located(
                    _declared_at(),
                    f"{self._type_label} {self.resource_name!r} has no key {key!r}"
                    f"; {hint}its keys: {', '.join(sorted(self._keys)) or '(none)'}",
                )
            )
        return key

    def as_volume(self) -> dict[str, Any]:
        raise NotImplementedError

    def mount(self, path: str, *, sub_path: str | None = None, read_only: bool = False) -> Mount:
        """This object as a volume, mounted at `path`: `volume_mounts=[settings.mount("/etc/app")]`."""
        return Mount(self.as_volume(), path, sub_path, read_only)


def _keys_of(*parts: Mapping[str, Any] | None) -> frozenset[str]:
    return frozenset(str(key) for part in parts for key in (part or {}))


def _metadata(metadata: ObjectMetaDict | None, name: str | Output[str]) -> ObjectMetaDict:
    return {**(metadata or {}), "name": name}


class ConfigMap(_Referenced):
    """A ConfigMap named `<name>-<hash of its data>`: changing the data rolls its users."""

    _type_label = "kx.ConfigMap"

    def __init__(
        self,
        name: str,
        data: Mapping[str, Any] | None = None,
        *,
        binary_data: Mapping[str, Any] | None = None,
        metadata: ObjectMetaDict | None = None,
        opts: ResourceOptions | None = None,
    ) -> None:
        super().__init__("kx:core:ConfigMap", name, None, opts)
        self._keys = _keys_of(data, binary_data)
        content = {"data": dict(data or {}), "binaryData": dict(binary_data or {})}
        self._object = _ConfigMap(
            name,
            metadata=_metadata(metadata, hashed_name(name, content)),
            data=dict(data) if data is not None else None,
            binary_data=dict(binary_data) if binary_data is not None else None,
            immutable=True,
            opts=ResourceOptions(parent=self),
        )
        self.register_outputs({"name": self.object_name})

    @property
    def config_map(self) -> CustomResource:
        return self._object

    def as_env_value(self, key: str) -> dict[str, Any]:
        """An `env` value reading `key` of this ConfigMap (a `valueFrom` entry)."""
        return {"valueFrom": {"configMapKeyRef": {"name": self.object_name, "key": self._key(key)}}}

    def as_env_from(self) -> dict[str, Any]:
        """An `envFrom` entry: every key of this ConfigMap as an environment variable."""
        return {"configMapRef": {"name": self.object_name}}

    def as_volume(self) -> dict[str, Any]:
        return {"name": volume_name(self.resource_name), "configMap": {"name": self.object_name}}


class Secret(_Referenced):
    """A Secret named `<name>-<hash of its data>`: changing the data rolls its users."""

    _type_label = "kx.Secret"

    def __init__(
        self,
        name: str,
        string_data: Mapping[str, Any] | None = None,
        *,
        data: Mapping[str, Any] | None = None,
        type: str | None = None,
        metadata: ObjectMetaDict | None = None,
        opts: ResourceOptions | None = None,
    ) -> None:
        super().__init__("kx:core:Secret", name, None, opts)
        self._keys = _keys_of(string_data, data)
        content = {"stringData": dict(string_data or {}), "data": dict(data or {}), "type": type}
        self._object = _Secret(
            name,
            metadata=_metadata(metadata, hashed_name(name, content)),
            string_data=dict(string_data) if string_data is not None else None,
            data=dict(data) if data is not None else None,
            type=type,
            immutable=True,
            opts=ResourceOptions(parent=self),
        )
        self.register_outputs({"name": self.object_name})

    @property
    def secret(self) -> CustomResource:
        return self._object

    def as_env_value(self, key: str) -> dict[str, Any]:
        """An `env` value reading `key` of this Secret (a `valueFrom` entry)."""
        return {"valueFrom": {"secretKeyRef": {"name": self.object_name, "key": self._key(key)}}}

    def as_env_from(self) -> dict[str, Any]:
        """An `envFrom` entry: every key of this Secret as an environment variable."""
        return {"secretRef": {"name": self.object_name}}

    def as_volume(self) -> dict[str, Any]:
        return {"name": volume_name(self.resource_name), "secret": {"secretName": self.object_name}}


class PersistentVolumeClaim(_Referenced):
    """A claim of `size` storage, mounted in one line: `volume_mounts=[data.mount("/data")]`."""

    def __init__(
        self,
        name: str,
        size: str = "1Gi",
        *,
        access_modes: Sequence[str] = ("ReadWriteOnce",),
        storage_class: str | None = None,
        metadata: ObjectMetaDict | None = None,
        opts: ResourceOptions | None = None,
    ) -> None:
        super().__init__("kx:core:PersistentVolumeClaim", name, None, opts)
        spec: PersistentVolumeClaimSpecDict = {
            "accessModes": list(access_modes),
            "resources": {"requests": {"storage": size}},
        }
        if storage_class is not None:
            spec["storageClassName"] = storage_class
        self._object = _PersistentVolumeClaim(
            name,
            metadata=metadata or None,
            spec=spec,
            opts=ResourceOptions(parent=self),
        )
        self.register_outputs({"name": self.object_name})

    @property
    def claim(self) -> CustomResource:
        return self._object

    def as_volume(self) -> dict[str, Any]:
        return {
            "name": volume_name(self.resource_name),
            "persistentVolumeClaim": {"claimName": self.object_name},
        }
