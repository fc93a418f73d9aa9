"""The OpenAPI documents the local cluster publishes, in kube-apiserver's shapes.

`/openapi/v2` is one Swagger 2.0 document; `/openapi/v3` is an index of one
OpenAPI 3.0 document per served group-version, each addressed by the SHA-512 of
its bytes. kubectl reads them to compute client-side apply patches (the
`x-kubernetes-patch-*` extensions), to check that PATCH accepts
`fieldValidation` (or else it validates with v2 itself), and for `explain`
(the kind's schema found by `x-kubernetes-group-version-kind`). The schemas are
the official definitions `schema.py` loads, rewritten into each format the way
kube-openapi does, plus each custom kind's `openAPIV3Schema` named and wrapped
the way apiextensions-apiserver does.

Documents are built on first request and cached, so start-up never pays for
them. Must never: mutate a schema node (converted nodes are fresh dicts shared
by the cached documents), or publish a `$ref` that its own document cannot
resolve.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from stackwright.localcluster.registry import Registry, ResourceType
from stackwright.localcluster.schema import KUBERNETES_VERSION, Node, builtin_schemas

__all__ = ["OpenAPI", "custom_definition_name"]

JSON = dict[str, Any]

_SOURCE_REF = "#/$defs/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_OBJECT_META = _META + "ObjectMeta"
_LIST_META = _META + "ListMeta"
_STATUS = _META + "Status"
_DELETE_OPTIONS = _META + "DeleteOptions"
_PATCH = _META + "Patch"
_RESOURCE_LIST = _META + "APIResourceList"

#: Subresources whose body is another kind than their parent's, as kube-apiserver registers them.
_SUBRESOURCE_KINDS = {
    "scale": ("autoscaling", "v1", "Scale", "io.k8s.api.autoscaling.v1.Scale"),
    "binding": ("", "v1", "Binding", "io.k8s.api.core.v1.Binding"),
    "eviction": ("policy", "v1", "Eviction", "io.k8s.api.policy.v1.Eviction"),
}

# kubernetes-validate expresses these two as `oneOf` without a description. kube-openapi
# publishes them as plain strings in v2 (kubectl's v2 parser knows no `oneOf`) and as
# `oneOf` in v3, which is also what makes `kubectl explain` print `<IntOrString>`.
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_SCALARS: dict[str, tuple[JSON, JSON]] = {
    _INT_OR_STRING: (
        {"type": "string", "format": "int-or-string"},
        {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    ),
    _QUANTITY: (
        {"type": "string"},
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
    ),
}
_SCALAR_DESCRIPTIONS = {
    _INT_OR_STRING: (
        "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
        "marshalling and unmarshalling, it produces or consumes the inner type.  This allows you "
        "to have, for example, a JSON field that can accept a name or number."
    ),
    _QUANTITY: (
        "Quantity is a fixed-point representation of a number. It provides convenient "
        "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors."
    ),
}

_PATCH_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
# Custom resources take no strategic merge patch; its absence from the v3 PATCH operation
# is what makes kubectl's client-side apply send a JSON merge patch instead.
_CUSTOM_PATCH_TYPES = _PATCH_TYPES[:3]
_MEDIA_TYPES = ("application/json", "application/yaml")

_CODES = {"200": "OK", "201": "Created", "202": "Accepted", "401": "Unauthorized"}


@dataclass(frozen=True)
class _Param:
    name: str
    location: str  # path / query
    type: str
    description: str
    required: bool = False


_PRETTY = _Param("pretty", "query", "string", "If 'true', then the output is pretty printed.")
_NAMESPACE = _Param("namespace", "path", "string", "object name and auth scope, such as for teams and projects", True)  # fmt: skip
_LIST = (
    _Param("allowWatchBookmarks", "query", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."),
    _Param("continue", "query", "string", "The continue option should be set when retrieving more results from the server."),
    _Param("fieldSelector", "query", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
    _Param("labelSelector", "query", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
    _Param("limit", "query", "integer", "limit is a maximum number of responses to return for a list call."),
    _Param("resourceVersion", "query", "string", "resourceVersion sets a constraint on what resource versions a request may be served from."),
    _Param("resourceVersionMatch", "query", "string", "resourceVersionMatch determines how resourceVersion is applied to list calls."),
    _Param("sendInitialEvents", "query", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`."),
    _Param("timeoutSeconds", "query", "integer", "Timeout for the list/watch call."),
    _Param("watch", "query", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications."),
)  # fmt: skip
_DRY_RUN = _Param("dryRun", "query", "string", "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed")  # fmt: skip
_FIELD_MANAGER = _Param("fieldManager", "query", "string", "fieldManager is a name associated with the actor or entity that is making these changes.")  # fmt: skip
_FORCE = _Param("force", "query", "boolean", 'Force is going to "force" Apply requests. It must be unset for non-apply patch requests.')  # fmt: skip
# kubectl looks for this parameter, by name and inline, on the kind's PATCH operations to
# decide that the server validates fields itself (otherwise it validates client-side with v2).
_FIELD_VALIDATION = _Param(
    "fieldValidation", "query", "string",
    "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) "
    "containing unknown or duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict",
)  # fmt: skip
_WRITE = (_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION)
_PATCH_PARAMS = (*_WRITE, _FORCE)
_DELETE = (
    _DRY_RUN,
    _Param("gracePeriodSeconds", "query", "integer", "The duration in seconds before the object should be deleted."),
    _Param("ignoreStoreReadErrorWithClusterBreakingPotential", "query", "boolean", "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error."),
    _Param("orphanDependents", "query", "boolean", "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7."),
    _Param("propagationPolicy", "query", "string", "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'."),
)  # fmt: skip
_LOG = (
    _Param("container", "query", "string", "The container for which to stream logs. Defaults to only container if there is one container in the pod."),
    _Param("follow", "query", "boolean", "Follow the log stream of the pod. Defaults to false."),
    _Param("limitBytes", "query", "integer", "If set, the number of bytes to read from the server before terminating the log output."),
    _Param("previous", "query", "boolean", "Return previous terminated container logs. Defaults to false."),
    _Param("sinceSeconds", "query", "integer", "A relative time in seconds before the current time from which to show logs."),
    _Param("tailLines", "query", "integer", "If set, the number of lines from the end of the logs to show."),
    _Param("timestamps", "query", "boolean", "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output."),
)  # fmt: skip


@dataclass(frozen=True)
class _Operation:
    method: str  # get / post / put / patch / delete
    action: str  # x-kubernetes-action; "" for discovery
    operation_id: str
    tag: str
    description: str
    gvk: JSON | None
    params: tuple[_Param, ...]
    response: str | None  # definition name; None: plain text
    codes: tuple[str, ...] = ("200", "401")
    body: str | None = None  # definition name of the request body
    patch_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Path:
    path: str
    params: tuple[_Param, ...]
    operations: tuple[_Operation, ...]


@dataclass(frozen=True)
class _Built:
    """A serialized document and the resource types it was built from (compared by identity)."""

    types: tuple[ResourceType, ...]
    data: bytes
    hash: str

    def built_from(self, types: tuple[ResourceType, ...]) -> bool:
        return len(types) == len(self.types) and all(
            a is b for a, b in zip(types, self.types, strict=True)
        )


class OpenAPI:
    """The published OpenAPI documents of one registry, built lazily and cached.

    A cached document remembers the resource types it was built from and is rebuilt
    once the registry's types for its scope are no longer those objects, so a CRD
    change shows at the next request; a CRD's group-version changes its hash, which
    is what makes kubectl refetch it. `invalidate()` drops every cached document.
    """

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._lock = threading.Lock()
        self._v2: _Built | None = None
        self._v3: dict[tuple[str, str], _Built] = {}

    def invalidate(self) -> None:
        """Forget every built document (call when CRDs change); the next request rebuilds."""
        with self._lock:
            self._v2 = None
            self._v3.clear()

    def v2(self) -> bytes:
        """The Swagger 2.0 document (`/openapi/v2`), as JSON."""
        types = tuple(self._registry)
        with self._lock:
            if self._v2 is None or not self._v2.built_from(types):
                self._v2 = _serialize(types, _build_v2(types))
            return self._v2.data

    def v3_index(self) -> JSON:
        """The `/openapi/v3` discovery document: each group-version's URL with its hash."""
        paths: JSON = {}
        with self._lock:
            for group, versions in sorted(self._registry.group_versions().items()):
                for version in versions:
                    built = self._v3_built(group, version)
                    if built is not None:
                        gv = _gv_path(group, version)
                        url = f"/openapi/v3/{gv}?hash={built.hash}"
                        paths[gv] = {"serverRelativeURL": url}
        return {"paths": paths}

    def v3_document(self, group: str, version: str) -> bytes | None:
        """The OpenAPI 3.0 document of one group-version ("" is core), or None if not served."""
        with self._lock:
            built = self._v3_built(group, version)
        return built.data if built else None

    def v3_hash(self, group: str, version: str) -> str | None:
        """The hash the index advertises for a group-version (uppercase hex SHA-512 of its bytes)."""
        with self._lock:
            built = self._v3_built(group, version)
        return built.hash if built else None

    def _v3_built(self, group: str, version: str) -> _Built | None:
        types = tuple(self._registry.in_group_version(group, version))
        if not types:
            self._v3.pop((group, version), None)
            return None
        built = self._v3.get((group, version))
        if built is None or not built.built_from(types):
            built = self._v3[(group, version)] = _serialize(types, _build_v3(group, version, types))
        return built


def custom_definition_name(group: str, version: str, kind: str) -> str:
    """apiextensions-apiserver's name for a custom kind: `com.example.v1.Widget` for example.com."""
    return ".".join([*reversed(group.split(".")), version, kind])


# --- documents ----------------------------------------------------------------


def _serialize(types: tuple[ResourceType, ...], document: JSON) -> _Built:
    # Sorted keys make the bytes, and so the hash kubectl caches by, stable across builds.
    data = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
    return _Built(types, data, hashlib.sha512(data).hexdigest().upper())


_INFO = {"title": "Kubernetes", "version": f"v{KUBERNETES_VERSION}"}
_BEARER = {
    "BearerToken": {
        "description": "Bearer Token authentication",
        "in": "header",
        "name": "authorization",
        "type": "apiKey",
    }
}


def _build_v2(types: Iterable[ResourceType]) -> JSON:
    custom: dict[str, Node] = {}
    by_gv: dict[tuple[str, str], list[ResourceType]] = {}
    for rtype in types:
        by_gv.setdefault((rtype.group, rtype.version), []).append(rtype)
    paths = [
        path
        for (group, version), members in sorted(by_gv.items())
        for path in _group_version_paths(group, version, members, custom, v3=False)
    ]
    return {
        "swagger": "2.0",
        "info": _INFO,
        "paths": {p.path: _render_path(p, v3=False) for p in paths},
        "definitions": _closure(_referenced(paths), custom, v3=False),
        "securityDefinitions": _BEARER,
        "security": [{"BearerToken": []}],
    }


def _build_v3(group: str, version: str, types: Iterable[ResourceType]) -> JSON:
    custom: dict[str, Node] = {}
    paths = _group_version_paths(group, version, types, custom, v3=True)
    return {
        "openapi": "3.0.0",
        "info": _INFO,
        "paths": {p.path: _render_path(p, v3=True) for p in paths},
        "components": {
            "schemas": _closure(_referenced(paths), custom, v3=True),
            "securitySchemes": _BEARER,
        },
        "security": [{"BearerToken": []}],
    }


def _group_version_paths(
    group: str, version: str, types: Iterable[ResourceType], custom: dict[str, Node], *, v3: bool
) -> list[_Path]:
    paths = [_resources_path(group, version)]
    for rtype in sorted(types, key=lambda t: t.plural):
        paths.extend(_paths(rtype, _names(rtype, custom, v3=v3)))
    return paths


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _referenced(paths: Iterable[_Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        for op in path.operations:
            names.update(n for n in (op.response, op.body) if n)
    return names


def _names(rtype: ResourceType, custom: dict[str, Node], *, v3: bool) -> _Names:
    """The definition names of a type's kind and list; a custom kind's schemas go into `custom`."""
    schemas = builtin_schemas()
    if rtype.crd is None:
        kind = schemas.definition_name(rtype.group, rtype.version, rtype.kind)
        if kind is not None:
            listed = schemas.definition_name(rtype.group, rtype.version, rtype.list_kind)
            return _Names(kind, listed or kind, custom=False)
    kind = custom_definition_name(rtype.group, rtype.version, rtype.kind)
    listed = custom_definition_name(rtype.group, rtype.version, rtype.list_kind)
    custom[kind] = _custom_kind(rtype, v3=v3)
    custom[listed] = _custom_list(rtype, kind)
    return _Names(kind, listed, custom=True)


def _type_meta(kind: str, field: str) -> Any:
    """A TypeMeta / ObjectMeta field as built-in kinds describe it, for custom kinds to share."""
    return builtin_schemas().definitions[kind]["properties"][field]


def _custom_kind(rtype: ResourceType, *, v3: bool) -> Node:
    """The kind's schema as apiextensions-apiserver publishes it: TypeMeta and ObjectMeta added."""
    gvk = [{"group": rtype.group, "kind": rtype.kind, "version": rtype.version}]
    schema = rtype.schema
    if schema is None or (not v3 and schema.get("x-kubernetes-preserve-unknown-fields")):
        # Not even TypeMeta / ObjectMeta: kubectl's v2 validation would then reject every
        # other field, as if additionalProperties were false.
        return {"type": "object", "x-kubernetes-group-version-kind": gvk}
    deployment = "io.k8s.api.apps.v1.Deployment"
    properties = dict(schema.get("properties") or {})
    properties["apiVersion"] = _without_enum(_type_meta(deployment, "apiVersion"))
    properties["kind"] = _without_enum(_type_meta(deployment, "kind"))
    properties["metadata"] = {
        "$ref": _SOURCE_REF + _OBJECT_META,
        "description": _type_meta(deployment, "metadata")["description"],
    }
    return {
        **schema,
        "type": "object",
        "properties": properties,
        "x-kubernetes-group-version-kind": gvk,
    }


def _custom_list(rtype: ResourceType, kind_name: str) -> Node:
    deployments = "io.k8s.api.apps.v1.DeploymentList"
    return {
        "description": f"{rtype.list_kind} is a list of {rtype.kind}",
        "properties": {
            "apiVersion": _without_enum(_type_meta(deployments, "apiVersion")),
            "items": {
                "description": f"List of {rtype.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
                "items": {"$ref": _SOURCE_REF + kind_name},
                "type": "array",
            },
            "kind": _without_enum(_type_meta(deployments, "kind")),
            "metadata": {
                "$ref": _SOURCE_REF + _LIST_META,
                "description": _type_meta(deployments, "metadata")["description"],
            },
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [
            {"group": rtype.group, "kind": rtype.list_kind, "version": rtype.version}
        ],
    }


def _without_enum(node: Node) -> JSON:
    # kubernetes-validate pins apiVersion / kind with an enum; the apiserver does not.
    return {k: v for k, v in node.items() if k != "enum"}


# --- paths ----------------------------------------------------------------------


def _camel_group(group: str) -> str:
    """The group as operation ids and tags spell it: `rbacAuthorization`, `core`."""
    if not group:
        return "core"
    parts = group.removesuffix(".k8s.io").replace("-", ".").split(".")
    return parts[0] + "".join(_capital(p) for p in parts[1:])


def _capital(word: str) -> str:
    return word[:1].upper() + word[1:]


def _prefix(group: str, version: str) -> str:
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def _resources_path(group: str, version: str) -> _Path:
    gv = _capital(_camel_group(group)) + _capital(version)
    tag = f"{_camel_group(group)}_{version}"
    op = _Operation(
        "get", "", f"get{gv}APIResources", tag, "get available resources", None, (), _RESOURCE_LIST
    )
    return _Path(_prefix(group, version) + "/", (), (op,))


@dataclass(frozen=True)
class _Names:
    kind: str  # definition name of the kind
    list: str  # definition name of its list
    custom: bool


_OK = ("200", "401")
_CREATED = ("200", "201", "401")
_ACCEPTED = ("200", "201", "202", "401")


class _Operations:
    """The operations on one resource type, named and described as kube-apiserver does.

    Every operation on the kind carries its GVK: `kubectl explain` finds a resource's
    kind through them, and kubectl's apply and field-validation checks read the PATCH
    operations' request body types and parameters.
    """

    def __init__(self, rtype: ResourceType, names: _Names) -> None:
        self.names = names
        self.kind = rtype.kind
        self.gv = _capital(_camel_group(rtype.group)) + _capital(rtype.version)
        self.tag = f"{_camel_group(rtype.group)}_{rtype.version}"
        self.scope = "Namespaced" if rtype.namespaced else ""
        self.gvk: JSON = {"group": rtype.group, "kind": rtype.kind, "version": rtype.version}
        self.patch_types = _CUSTOM_PATCH_TYPES if names.custom else _PATCH_TYPES

    def _op(
        self, method: str, action: str, operation_id: str, description: str,
        params: tuple[_Param, ...], response: str | None, *, codes: tuple[str, ...] = _OK,
        body: str | None = None, sub: str = "", patch_types: tuple[str, ...] = (),
    ) -> _Operation:  # fmt: skip
        gvk = self.gvk
        if sub in _SUBRESOURCE_KINDS:
            group, version, kind, _ = _SUBRESOURCE_KINDS[sub]
            gvk = {"group": group, "kind": kind, "version": version}
        return _Operation(method, action, operation_id, self.tag, description, gvk, params,
                          response, codes, body, patch_types)  # fmt: skip

    def _id(self, verb: str, sub: str = "") -> str:
        return f"{verb}{self.gv}{self.scope}{self.kind}{_capital(sub)}"

    def _target(self, sub: str) -> str:
        """The definition a subresource reads and writes."""
        return _SUBRESOURCE_KINDS[sub][3] if sub in _SUBRESOURCE_KINDS else self.names.kind

    def list(self, *, all_namespaces: bool = False) -> _Operation:
        op_id = f"list{self.gv}{self.kind}ForAllNamespaces" if all_namespaces else self._id("list")
        description = f"list or watch objects of kind {self.kind}"
        return self._op("get", "list", op_id, description, _LIST, self.names.list)

    def create(self, sub: str = "") -> _Operation:
        target = self._target(sub)
        description = f"create {sub} of a {self.kind}" if sub else f"create a {self.kind}"
        return self._op("post", "post", self._id("create", sub), description, _WRITE, target,
                        codes=_ACCEPTED, body=target, sub=sub)  # fmt: skip

    def delete_collection(self) -> _Operation:
        op_id = f"delete{self.gv}Collection{self.scope}{self.kind}"
        return self._op("delete", "deletecollection", op_id, f"delete collection of {self.kind}",
                        _DELETE + _LIST, _STATUS, body=_DELETE_OPTIONS)  # fmt: skip

    def read(self, sub: str = "") -> _Operation:
        what = f"{sub} of the specified {self.kind}" if sub else f"the specified {self.kind}"
        params, response = (_LOG, None) if sub == "log" else ((), self._target(sub))
        return self._op(
            "get", "get", self._id("read", sub), f"read {what}", params, response, sub=sub
        )

    def replace(self, sub: str = "") -> _Operation:
        what = f"{sub} of the specified {self.kind}" if sub else f"the specified {self.kind}"
        target = self._target(sub)
        return self._op("put", "put", self._id("replace", sub), f"replace {what}", _WRITE, target,
                        codes=_CREATED, body=target, sub=sub)  # fmt: skip

    def patch(self, sub: str = "") -> _Operation:
        what = f"{sub} of the specified {self.kind}" if sub else f"the specified {self.kind}"
        return self._op("patch", "patch", self._id("patch", sub), f"partially update {what}",
                        _PATCH_PARAMS, self._target(sub), codes=_CREATED, body=_PATCH, sub=sub,
                        patch_types=self.patch_types)  # fmt: skip

    def delete(self) -> _Operation:
        return self._op("delete", "delete", self._id("delete"), f"delete a {self.kind}", _DELETE,
                        _STATUS, codes=("200", "202", "401"), body=_DELETE_OPTIONS)  # fmt: skip


def _paths(rtype: ResourceType, names: _Names) -> list[_Path]:
    """kube-apiserver's paths for one resource type (less the deprecated /watch/ ones)."""
    ops = _Operations(rtype, names)
    verbs = set(rtype.verbs)
    prefix = _prefix(rtype.group, rtype.version)
    scope: tuple[_Param, ...] = (_NAMESPACE,) if rtype.namespaced else ()
    collection = f"{prefix}/{rtype.plural}"
    if rtype.namespaced:
        collection = f"{prefix}/namespaces/{{namespace}}/{rtype.plural}"
    listing = bool(verbs & {"list", "watch"})
    out: list[_Path] = []
    if rtype.namespaced and listing:
        out.append(_Path(f"{prefix}/{rtype.plural}", (_PRETTY,), (ops.list(all_namespaces=True),)))

    on_collection = [
        *([ops.list()] if listing else []),
        *([ops.create()] if "create" in verbs else []),
        *([ops.delete_collection()] if "deletecollection" in verbs else []),
    ]
    if on_collection:
        out.append(_Path(collection, (*scope, _PRETTY), tuple(on_collection)))

    item = f"{collection}/{{name}}"
    on_item = [
        *([ops.read()] if "get" in verbs else []),
        *([ops.replace()] if "update" in verbs else []),
        *([ops.patch()] if "patch" in verbs else []),
        *([ops.delete()] if "delete" in verbs else []),
    ]
    if on_item:
        out.append(_Path(item, (_name_param(rtype.kind), *scope, _PRETTY), tuple(on_item)))

    for sub in sorted(rtype.subresources):
        on_sub: tuple[_Operation, ...]
        if sub in ("status", "scale", "ephemeralcontainers"):
            on_sub = (ops.read(sub), ops.replace(sub), ops.patch(sub))
        elif sub == "log":
            on_sub = (ops.read(sub),)
        elif sub in ("binding", "eviction"):
            on_sub = (ops.create(sub),)
        else:  # no other subresource is served (exec, attach, portforward are refused)
            continue
        name_of = _SUBRESOURCE_KINDS[sub][2] if sub in _SUBRESOURCE_KINDS else rtype.kind
        out.append(_Path(f"{item}/{sub}", (_name_param(name_of), *scope, _PRETTY), on_sub))
    return out


def _name_param(kind: str) -> _Param:
    return _Param("name", "path", "string", f"name of the {kind}", True)


def _render_path(path: _Path, *, v3: bool) -> JSON:
    item: JSON = {op.method: _render_operation(op, v3=v3) for op in path.operations}
    if path.params:
        item["parameters"] = [_render_param(p, v3=v3) for p in path.params]
    return item


def _render_param(param: _Param, *, v3: bool) -> JSON:
    out: JSON = {"name": param.name, "in": param.location, "description": param.description}
    if param.required:
        out["required"] = True
    if v3:
        out["schema"] = {"type": param.type, "uniqueItems": True}
    else:
        out.update(type=param.type, uniqueItems=True)
    return out


def _render_operation(op: _Operation, *, v3: bool) -> JSON:
    out: JSON = {"description": op.description, "operationId": op.operation_id, "tags": [op.tag]}
    if op.action:
        out["x-kubernetes-action"] = op.action
    if op.gvk is not None:
        out["x-kubernetes-group-version-kind"] = op.gvk
    params = [_render_param(p, v3=v3) for p in op.params]
    ref = _V3_REF if v3 else _V2_REF
    media = ("text/plain", *_MEDIA_TYPES) if op.response is None else _MEDIA_TYPES
    response_schema: JSON = (
        {"type": "string"} if op.response is None else {"$ref": ref + op.response}
    )
    responses: JSON = {}
    for code in op.codes:
        response: JSON = {"description": _CODES[code]}
        if code != "401":
            if v3:
                response["content"] = {m: {"schema": response_schema} for m in media}
            else:
                response["schema"] = response_schema
        responses[code] = response
    out["responses"] = responses
    body_types = op.patch_types or ("*/*",)
    if v3:
        if op.body is not None:
            out["requestBody"] = {
                "content": {m: {"schema": {"$ref": ref + op.body}} for m in body_types},
                "required": op.method != "delete",
            }
    else:
        if op.body is not None:
            body: JSON = {"in": "body", "name": "body", "schema": {"$ref": ref + op.body}}
            if op.method != "delete":
                body["required"] = True
            params.insert(0, body)
        out.update(consumes=list(body_types), produces=list(media), schemes=["https"])
    if params:
        out["parameters"] = params
    return out


# --- schemas --------------------------------------------------------------------

_V2_REF = "#/definitions/"
_V3_REF = "#/components/schemas/"
#: A converted schema and the definition names it refers to.
_Converted = tuple[JSON, frozenset[str]]


def _closure(roots: Iterable[str], custom: Mapping[str, Node], *, v3: bool) -> JSON:
    """The named definitions and every definition they reach, converted."""
    out: JSON = {}
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in out:
            continue
        if name in custom:
            refs: set[str] = set()
            node = _convert(custom[name], v3, refs)
            if v3:
                _default_metadata(node)
            converted: _Converted = (node, frozenset(refs))
        else:
            converted = _builtin(name, v3)
        out[name] = converted[0]
        pending.extend(r for r in converted[1] if r not in out)
    return out


@functools.cache
def _builtin(name: str, v3: bool) -> _Converted:
    """One official definition in v2 or v3 form; cached for the process (they never change)."""
    definitions = builtin_schemas().definitions
    if name not in definitions:
        raise RuntimeError(
            f"OpenAPI: no definition named {name!r} in the Kubernetes {KUBERNETES_VERSION} schemas"
        )
    if name in _SCALARS:
        return {"description": _SCALAR_DESCRIPTIONS[name], **_SCALARS[name][v3]}, frozenset()
    refs: set[str] = set()
    node = _convert(definitions[name], v3, refs)
    properties = node.get("properties", {})
    for field in ("apiVersion", "kind"):
        if field in properties and "x-kubernetes-group-version-kind" in node:
            properties[field].pop("enum", None)
    if v3:
        _default_metadata(node)
    return node, frozenset(refs)


def _default_metadata(node: JSON) -> None:
    # kube-openapi gives non-pointer struct fields `default: {}` in v3; a kind's
    # metadata is the one kubectl users see in every `explain`.
    metadata = node.get("properties", {}).get("metadata")
    if metadata is not None and "x-kubernetes-group-version-kind" in node and "allOf" in metadata:
        metadata["default"] = {}


def _convert(node: Node, v3: bool, refs: set[str]) -> JSON:
    """A schema node in v2 or v3 form: single `type`, refs renamed, v3 refs with siblings in `allOf`.

    v2 also follows apiextensions-apiserver's v2 rules for custom schemas, which kubectl's
    v2 parser needs: no `oneOf`/`anyOf`/`allOf`/`not`/`nullable`; nullable values untyped;
    no properties or items under nullable or preserve-unknown-fields values; arrays without
    items untyped; nullable fields not required.
    """
    out: JSON = {}
    nullable = bool(node.get("nullable"))
    opaque = not v3 and (nullable or bool(node.get("x-kubernetes-preserve-unknown-fields")))
    for key, value in node.items():
        if key == "$ref":
            name = value.removeprefix(_SOURCE_REF)
            refs.add(name)
            out[key] = (_V3_REF if v3 else _V2_REF) + name
        elif key == "type":
            single = _single_type(value)
            if single is not None and (v3 or not nullable):
                out[key] = single
        elif key == "properties":
            if not opaque:
                out[key] = {field: _convert(sub, v3, refs) for field, sub in value.items()}
        elif key == "items":
            if not opaque:
                out[key] = _convert(value, v3, refs) if isinstance(value, Mapping) else value
        elif key in ("additionalProperties", "not"):
            if v3 or key == "additionalProperties":
                out[key] = _convert(value, v3, refs) if isinstance(value, Mapping) else value
        elif key in ("allOf", "anyOf", "oneOf"):
            if v3:
                out[key] = [_convert(sub, v3, refs) for sub in value]
        elif key != "nullable" or v3:
            out[key] = value
    if not v3:
        if out.get("type") == "array" and "items" not in out:
            del out["type"]
        if "required" in out:
            props = node.get("properties") or {}
            required = [f for f in out["required"] if not (props.get(f) or {}).get("nullable")]
            if required:
                out["required"] = required
            else:
                del out["required"]
    elif "$ref" in out and len(out) > 1:
        # A $ref's siblings are ignored by OpenAPI 3.0 readers; kube-openapi moves the ref
        # into allOf so the description (and default) stay (kubernetes#106387).
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return out


def _single_type(declared: Any) -> str | None:
    if isinstance(declared, str):
        return declared
    for candidate in declared:
        if candidate != "null":
            return str(candidate)
    return None
