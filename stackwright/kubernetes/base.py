"""The base of every Kubernetes resource class a program declares.

`KubernetesResource` turns keyword arguments (snake_case top-level fields such as
`metadata`, `spec`, `string_data`) into the Kubernetes object the provider
applies, accepting plain dicts in Kubernetes' own camelCase, lightkube model
objects (the typed args), or Outputs anywhere inside. The per-kind classes
(`stackwright.kubernetes.apps.v1.Deployment`, …) are generated subclasses that
only name their kind and fields.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import importlib
import re
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any, ClassVar, Self

from stackwright.errors import UsageError, located
from stackwright.kubernetes.groups import MODULES, VERSIONS
from stackwright.kubernetes.nested import LiveKind, Walk, live_kind
from stackwright.model import FIELD_MANAGER, Unknown
from stackwright.sdk.output import PLAIN_LEAVES, Output, Secret, join_path
from stackwright.sdk.resource import CustomResource, ResourceOptions, _declared_at

#: Type token prefix: `kubernetes:apps/v1:Deployment`, `kubernetes:core/v1:Service`.
TYPE_PREFIX = "kubernetes"
#: What a Patch resource's type token puts after its object's kind, as Pulumi's do:
#: `kubernetes:core/v1:ConfigMapPatch`.
PATCH_SUFFIX = "Patch"
#: The annotation that names a Patch's field manager (else one is made and recorded).
PATCH_FIELD_MANAGER = "stackwright.io/patch-field-manager"
#: The annotation that lets a Patch take fields another manager holds (`"true"`).
PATCH_FORCE = "stackwright.io/patch-force"


def type_token(api_version: str, kind: str) -> str:
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"{TYPE_PREFIX}:{group_version}:{kind}"


@dataclasses.dataclass(frozen=True)
class TypeToken:
    """A Kubernetes type token taken apart: `kubernetes:apps/v1:Deployment`."""

    #: As the token spells it: `apps/v1`, `core/v1` (or `v1`).
    group_version: str
    kind: str

    @property
    def group(self) -> str:
        """The API group; `""` for the core group, spelt `core` or left out."""
        group = self.group_version.rpartition("/")[0]
        return "" if group == "core" else group

    @property
    def version(self) -> str:
        return self.group_version.rpartition("/")[2]

    @property
    def api_version(self) -> str:
        """The objects' `apiVersion`: `apps/v1`, and `v1` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version


def parse_type_token(token: str) -> TypeToken | None:
    """The inverse of `type_token`; None for a token that is not
    `kubernetes:<group>/<version>:<Kind>` (a component's, a provider's, a misspelling). The
    core group may also be left out, as in an apiVersion (`kubernetes:v1:Pod`), which YAML
    programs have always been allowed to write."""
    package, _, rest = token.partition(":")
    group_version, _, kind = rest.partition(":")
    if package != TYPE_PREFIX or not group_version or not kind or ":" in kind:
        return None
    return TypeToken(group_version, kind)


def patched_token(parsed: TypeToken, kind: object = None) -> TypeToken | None:
    """The kind a Patch's type token changes (`kubernetes:core/v1:ConfigMapPatch` →
    `kubernetes:core/v1:ConfigMap`): a built-in one, or the one `kind` (the Patch's own
    `kind:`) names (`kubernetes:example.com/v1:WidgetPatch` of `kind: Widget`, the token
    `CustomObjectPatch` makes, as `is_patch` tells its resources). None for any other token:
    a CRD's own kind may end in `Patch` (`WidgetPatch`, of no `kind:` or that one)."""
    from stackwright.kubernetes.fields import KINDS

    patched = parsed.kind.removesuffix(PATCH_SUFFIX)
    if patched == parsed.kind:
        return None
    if patched != kind and patched not in KINDS.get(parsed.group, {}).get(parsed.version, {}):
        return None
    return TypeToken(parsed.group_version, patched)


def builtin_type_token(kind: str) -> str | None:
    """The type token of the built-in kind spelt `kind` in any case (`configmap` →
    `kubernetes:core/v1:ConfigMap`), in its newest stable version (autoscaling/v2 before
    v1), else a beta's or an alpha's; None for a kind that is not built in."""
    from stackwright.kubernetes.fields import KINDS

    found = [
        (_version_order(version), group, version, name)
        for group, versions in KINDS.items()
        for version, kinds in versions.items()
        for name in kinds
        if name.lower() == kind.lower()
    ]
    if not found:
        return None
    _, group, version, name = min(found)
    return type_token(f"{group}/{version}" if group else version, name)


def _version_order(version: str) -> tuple[bool, bool, int, int]:
    """Sorts stable versions first, newest first, then betas, then alphas, each newest
    first (`v2`, `v1`, `v1beta2`, `v1beta1`, `v1alpha1`)."""
    found = re.fullmatch(r"v(\d+)(?:(?:alpha|beta)(\d+))?", version)
    major, minor = (int(found[1]), int(found[2] or 0)) if found else (0, 0)
    return "alpha" in version, "beta" in version, -major, -minor


def builtin_module(group: str, version: str) -> ModuleType | None:
    """The generated module of a built-in group version (`stackwright.kubernetes.apps.v1`),
    whose `__all__` names its kinds; None for a group version no built-in kind has (a CRD's)."""
    if version not in VERSIONS.get(group, ()):
        return None
    return importlib.import_module(f"stackwright.kubernetes.{MODULES[group]}.{version}")


class _NotJson(Exception):
    """A value no JSON document can hold (`object()`, a file, a class), found by `to_plain`."""

    def __init__(self, value: Any) -> None:
        self.value = value


def to_plain(value: Any) -> Any:
    """Typed args (lightkube models) to plain dicts in Kubernetes' spelling, field by field,
    so that an Output anywhere inside stays the same Output; plain values unchanged.

    Raises `_NotJson` for a value that could not be sent to the API server: `_object`
    says where it is, at the declaring line, rather than the apply failing later."""
    cls = type(value)
    if cls in PLAIN_LEAVES:
        return value
    if cls is dict:
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, Output):
        return value
    if isinstance(value, Mapping):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    fields = _model_fields(type(value))
    if fields is not None:
        found = ((key, getattr(value, attribute)) for attribute, key in fields)
        return {key: to_plain(item) for key, item in found if item is not None}
    if isinstance(value, datetime.datetime):  # meta/v1 Time, as lightkube writes it
        return value.isoformat().replace("+00:00", "Z")
    if not _json_leaf(value):
        raise _NotJson(value)
    return value


def _json_leaf(value: Any) -> bool:
    """Whether a leaf that is not one of the plain types is still JSON when applied (a
    `str` enum, a `uuid`), or one of the SDK's markers. Only unusual leaves reach here."""
    if isinstance(value, Secret | Unknown):
        return True
    import orjson  # what the state and the API request are written with

    try:
        orjson.dumps(value)
    except TypeError:
        return False
    return True


def _path_to(value: Any, leaf: Any, path: str) -> str | None:
    """The path of `leaf` inside `value`, walked as `to_plain` walks it (on an error only)."""
    if value is leaf:
        return path
    items: Any
    if isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    elif (fields := _model_fields(type(value))) is not None:
        items = ((key, getattr(value, attribute)) for attribute, key in fields)
    else:
        return None
    for key, item in items:
        found = _path_to(item, leaf, join_path(path, key))
        if found is not None:
            return found
    return None


_FIELDS: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _model_fields(cls: type) -> tuple[tuple[str, str], ...] | None:
    if cls not in _FIELDS:
        _FIELDS[cls] = _read_model_fields(cls)
    return _FIELDS[cls]


def _read_model_fields(cls: type) -> tuple[tuple[str, str], ...] | None:
    """(attribute, JSON key) of each field of a lightkube model class; None for other classes.

    lightkube's attributes are already camelCase; the exceptions are keys that are not
    Python names (`continue_` → `continue`, `from_`, `except_`, `not_`, `d_ref` → `$ref`,
    `x_kubernetes_list_type` → `x-kubernetes-list-type`), which the model records.
    """
    # lightkube >= 1.0: msgspec Structs, which list the names they encode to.
    attributes = getattr(cls, "__struct_fields__", None)
    if isinstance(attributes, tuple):
        keys = getattr(cls, "__struct_encode_fields__", attributes)
        return tuple(zip(attributes, keys, strict=True))
    # lightkube < 1.0: dataclasses with the JSON key in the field's metadata.
    if dataclasses.is_dataclass(cls):
        return tuple((f.name, f.metadata.get("json", f.name)) for f in dataclasses.fields(cls))
    return None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


#: Fields that are objects in every kind that has them.
_OBJECT_FIELDS = ("metadata", "spec", "data", "stringData", "binaryData")


def _object(
    api_version: str, kind: str, fields: Mapping[str, Any], name: str = ""
) -> dict[str, Any]:
    """The Kubernetes object for snake_case keyword arguments (`string_data` → `stringData`)."""
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    for key, value in fields.items():
        if value is None:
            continue
        try:
            obj[_camel(key)] = to_plain(value)
        except _NotJson as bad:
            path = _path_to(value, bad.value, key) or key
            what = type(bad.value).__name__
            article = "an" if what[:1].lower() in "aeiou" else "a"
            raise UsageError(
                located(
                    _declared_at(),
                    f"{kind} {name!r}: {path} holds {article} {what}, which is "
                    "not JSON; pass a str, number, bool, None, list or dict there (or an Output of "
                    "one)",
                )
            ) from None
    for field in _OBJECT_FIELDS:
        value = obj.get(field)
        if value is not None and not isinstance(value, Mapping | Output | Secret | Unknown):
            raise UsageError(
                located(
                    _declared_at(),
                    f"{kind} {name!r}: {field} must be a dict (or an Output of "
                    f"one), not {type(value).__name__} {value!r:.40}",
                )
            )
    return obj


class KubernetesResource(CustomResource):
    """One Kubernetes object; `props` is the object the provider applies."""

    api_version: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    #: What the type token puts after the kind: nothing for an object, `Patch` for a Patch.
    _token_suffix: ClassVar[str] = ""

    def __init__(
        self,
        resource_name: str,
        opts: ResourceOptions | None = None,
        /,
        **fields: Any,
    ) -> None:
        opts = fields.pop("opts", opts)
        cls = type(self)
        self._check_options(cls.kind, resource_name, opts)
        _nothing_declared(cls.kind, resource_name, opts, fields)
        obj = _object(cls.api_version, cls.kind, fields, resource_name)
        _check_keys(cls.api_version, cls.kind, resource_name, obj)
        self._check_declared(cls.kind, resource_name, obj)
        token = type_token(cls.api_version, cls.kind) + cls._token_suffix
        super().__init__(token, resource_name, obj, opts)

    def _check_options(self, kind: str, name: str, opts: ResourceOptions | None) -> None:
        """Options the resource cannot take, refused at its line (a Patch: a read or an
        import)."""

    def _check_declared(self, kind: str, name: str, obj: Mapping[str, Any]) -> None:
        """What else a declaration must give, refused at its line (a Patch: a name)."""

    _readable = True

    @classmethod
    def get(cls, resource_name: str, id: str, opts: ResourceOptions | None = None) -> Self:
        """The existing object `id` (`namespace/name`, or `name` for a cluster-scoped kind or
        one in the provider's default namespace), read, not managed — Pulumi's `get`:
        `k8s.core.v1.Service.get("dns", "kube-system/kube-dns").spec["clusterIP"]`. Each
        preview and up reads it again; nothing is written to it, and dropping it from the
        program (or a destroy) only forgets it."""
        return cls(resource_name, ResourceOptions.merge(opts, ResourceOptions(id=id)))

    def __getattr__(self, name: str) -> Output[Any]:
        # A built-in kind has a property per field: any other name is a mistake (`svc.sepc`),
        # which Pulumi's classes also refuse, rather than a field that reads as null.
        cls = type(self)
        if cls.kind and not name.startswith("_"):
            fields = sorted(
                attr
                for klass in cls.__mro__[: cls.__mro__.index(KubernetesResource)]
                for attr, value in vars(klass).items()
                if isinstance(value, property)
            )
            raise AttributeError(
                f"{cls.kind} has no field {name!r}; its fields: {', '.join(fields)}"
            )
        return super().__getattr__(name)

    def _schema(self) -> LiveKind | None:
        # A built-in kind's class: its definition (a custom resource's class has no `kind`,
        # and its objects are free: any name reads, absent ones as None).
        cls = type(self)
        return _live_kind(cls.api_version, cls.kind) if cls.kind else None

    @property
    def id(self) -> Output[str]:
        """The object's ID as Pulumi's Kubernetes provider gives it: `namespace/name`, or the
        name of a cluster-scoped object. In a preview, unknown until the namespace is known
        (one the server fills in is known after apply)."""
        return Output.all(
            self.output("metadata", "namespace"), self.output("metadata", "name")
        )._derived(lambda found: f"{found[0]}/{found[1]}" if found[0] else str(found[1]))


@functools.cache
def _live_kind(api_version: str, kind: str) -> LiveKind | None:
    group, _, version = api_version.rpartition("/")
    return live_kind(group, version, kind)


def _plain_pairs(value: Any) -> Iterable[tuple[str, str, Any]]:
    return ((k, k, v) for k, v in value.items()) if type(value) is dict else ()


def _plain_items(value: Any) -> Iterable[Any]:
    return value if type(value) is list else ()


#: A Python program's inputs as `to_plain` leaves them (dicts, lists, and Outputs, whose
#: value is not known until applied and is not looked into), walked for a key that is no
#: field: the check a YAML program's properties get.
_PLAIN: Walk[str, Any] = Walk(_plain_pairs, _plain_items)


def _check_keys(api_version: str, kind: str, name: str, obj: Mapping[str, Any]) -> None:
    """Refuse, at the declaring line, a key inside a built-in kind's inputs that is no field
    of the object it is in (`containers=[{"imagee": …}]`), before the API server would."""
    group, _, version = api_version.rpartition("/")
    found = _PLAIN.unknown(group, version, kind, obj.items())
    if found is None:
        return
    # Not a slip of the keys: perhaps a field newer than the definitions, which a cluster of
    # a later Kubernetes takes (often an older field's name extended: `hostnameOverride`);
    # the class for any kind sends it unchecked.
    newer = found.way_through(
        f"declare the object as k8s.apiextensions.CustomResource({name!r}, "
        f"api_version={api_version!r}, kind={kind!r}, …)"
    )
    raise UsageError(located(_declared_at(), f"{kind} {name!r}: {found.problem}{newer}"))


def _nothing_declared(
    kind: str, name: str, opts: ResourceOptions | None, fields: Mapping[str, Any]
) -> None:
    """A read (`id=`) declares no field: what it has is the live object's."""
    read = opts.id if isinstance(opts, ResourceOptions) else None
    given = [key for key, value in fields.items() if value is not None]
    if read is not None and given:
        raise UsageError(
            located(
                _declared_at(),
                f"{kind} {name!r} is read (id={read!r}), so it declares "
                f"nothing: drop {given[0]}= (or drop id= to manage the object)",
            )
        )


def _custom_kind(resource_name: str, fields: dict[str, Any]) -> tuple[str, str]:
    """(apiVersion, kind) of a custom object, popped from its keyword arguments."""
    api_version = fields.pop("api_version", None)
    kind = fields.pop("kind", None)
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        missing = " and ".join(
            f"{name}= (e.g. {example})"
            for name, given, example in (
                ("api_version", api_version, '"example.com/v1"'),
                ("kind", kind, '"Widget"'),
            )
            if not isinstance(given, str) or not given
        )
        raise UsageError(
            located(_declared_at(), f"custom resource {resource_name!r} needs {missing}")
        )
    return api_version, kind


class CustomObject(KubernetesResource):
    """An object of any kind, e.g. of a CRD: `CustomObject("w", api_version="example.com/v1", kind="Widget", spec=...)`."""

    def __init__(
        self, resource_name: str, opts: ResourceOptions | None = None, /, **fields: Any
    ) -> None:
        api_version, kind = _custom_kind(resource_name, fields)
        opts = fields.pop("opts", opts)
        self._check_options(kind, resource_name, opts)
        _nothing_declared(kind, resource_name, opts, fields)
        obj = _object(api_version, kind, fields, resource_name)
        self._check_declared(kind, resource_name, obj)
        token = type_token(api_version, kind) + type(self)._token_suffix
        CustomResource.__init__(self, token, resource_name, obj, opts)

    @classmethod
    def get(
        cls,
        resource_name: str,
        id: str,
        opts: ResourceOptions | None = None,
        *,
        api_version: str = "",
        kind: str = "",
    ) -> Self:
        """The existing object `id` of any kind (a CRD's), read, not managed:
        `CustomObject.get("w", "default/w1", api_version="example.com/v1", kind="Widget")`."""
        return cls(
            resource_name,
            ResourceOptions.merge(opts, ResourceOptions(id=id)),
            api_version=api_version,
            kind=kind,
        )


class KubernetesPatch(KubernetesResource):
    """Fields of an existing object, applied by server-side apply under a field manager of
    this resource's own — Pulumi's `<Kind>Patch`: `k8s.core.v1.ConfigMapPatch("p",
    metadata={"name": "existing"}, data={"k": "v"})`. Only `metadata.name` is required; the
    object is not created, claimed or deleted: dropping the Patch gives its fields up. Each
    kind's Patch class is its class with this one after it (`ConfigMapPatch(ConfigMap,
    KubernetesPatch)`), so that it has the kind's fields and properties."""

    _token_suffix = PATCH_SUFFIX

    def _check_options(self, kind: str, name: str, opts: ResourceOptions | None) -> None:
        # Fields of an object, not an object: nothing to read (`id=`) or adopt (`import_=`).
        if not isinstance(opts, ResourceOptions):
            return
        if opts.import_ is not None:
            raise UsageError(
                located(
                    _declared_at(),
                    f"{kind}{PATCH_SUFFIX} {name!r} cannot be imported: a Patch "
                    "has no object of its own; drop the import option (the Patch changes the "
                    f"object it names as it is), or import the whole object as a {kind}",
                )
            )
        if opts.id is not None:
            raise UsageError(
                located(
                    _declared_at(),
                    f"{kind}{PATCH_SUFFIX} {name!r} cannot be read: a Patch has "
                    f"no object of its own; drop the id option, or read the object as a {kind}",
                )
            )

    def _check_declared(self, kind: str, name: str, obj: Mapping[str, Any]) -> None:
        # A Patch names the object it changes: it is never auto-named (it creates nothing).
        meta = obj.get("metadata")
        given = meta.get("name") if isinstance(meta, Mapping) else meta
        if given is None or given == "":
            raise UsageError(
                located(
                    _declared_at(),
                    f"{kind}{PATCH_SUFFIX} {name!r} needs metadata.name: a "
                    f'Patch changes an existing object, so name it (metadata={{"name": "…"}})',
                )
            )
        annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
        manager = annotations.get(PATCH_FIELD_MANAGER) if isinstance(annotations, Mapping) else None
        if manager == FIELD_MANAGER:
            raise UsageError(
                located(
                    _declared_at(),
                    f"{kind}{PATCH_SUFFIX} {name!r}: {PATCH_FIELD_MANAGER} "
                    f"names {FIELD_MANAGER}, the field manager of the stack's own objects, whose "
                    "fields giving the Patch up would drop; name another (or none: each Patch has "
                    "a manager of its own)",
                )
            )

    @classmethod
    def get(cls, resource_name: str, id: str, opts: ResourceOptions | None = None) -> Self:
        """A Patch is fields of an object, not one to read: read the object itself."""
        reader = cls.kind or "k8s.apiextensions.CustomResource"
        raise UsageError(
            located(
                _declared_at(),
                f"{cls.__name__}.get({resource_name!r}, {id!r}): a Patch has "
                f"no object of its own to read; read it with {reader}.get({resource_name!r}, "
                f"{id!r})",
            )
        )


class CustomObjectPatch(CustomObject, KubernetesPatch):
    """A Patch of an object of any kind, e.g. of a CRD: `CustomObjectPatch("p",
    api_version="example.com/v1", kind="Widget", metadata={"name": "w1"}, spec={...})`."""

    get = KubernetesPatch.get  # type: ignore[assignment]
