"""The nouns every layer shares: URNs, resource states, steps and their operations.

Plain, immutable data with no I/O, so the engine, the state store, the providers
and the front ends can all depend on it without depending on each other.

URNs follow the DESIGN contract, `urn:sw:<stack>::<project>::<type>::<name>`,
where `<type>` is prefixed by the parent component types, joined with `$`, for
children of components (as Pulumi does): `urn:sw:dev::web::my:Component$kubernetes:apps/v1:Deployment::web`.
"""

from __future__ import annotations

import difflib
import enum
import hashlib
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

URN_PREFIX = "urn:sw:"


class Unknown:
    """The value of an Output that preview cannot know (`stackwright.sdk.output` makes them;
    the engine and the policy evaluator must recognise them, so the marker lives here)."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "(known after apply)"


UNKNOWN = Unknown()

#: Built-in kinds that have no namespace (every other built-in kind is namespaced): a table
#: because discovery is not reachable everywhere it is needed (a program declaring a Helm
#: chart, a policy check of files, the fake cluster).
CLUSTER_SCOPED = frozenset(
    {
        "APIService",
        "CSIDriver",
        "CSINode",
        "CertificateSigningRequest",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "FlowSchema",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "Namespace",
        "Node",
        "PersistentVolume",
        "PriorityClass",
        "PriorityLevelConfiguration",
        "RuntimeClass",
        "StorageClass",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
        "VolumeAttachment",
    }
)

#: The reserved type of the stack's own root resource (parent of top-level resources).
STACK_TYPE = "stackwright:stack:Stack"


def make_urn(
    stack: str, project: str, type_: str, name: str, parent_types: tuple[str, ...] = ()
) -> str:
    qualified = "$".join((*parent_types, type_))
    return f"{URN_PREFIX}{stack}::{project}::{qualified}::{name}"


@dataclass(frozen=True)
class URNParts:
    stack: str
    project: str
    qualified_type: str
    name: str

    @property
    def type(self) -> str:
        """The resource's own type (the last segment of the qualified type)."""
        return self.qualified_type.rsplit("$", 1)[-1]


def parse_urn(urn: str) -> URNParts:
    """Split a URN; raises ValueError naming what is wrong."""
    if not urn.startswith(URN_PREFIX):
        raise ValueError(f"{urn!r} is not a Stackwright URN: it must start with {URN_PREFIX!r}")
    parts = urn[len(URN_PREFIX) :].split("::")
    if len(parts) < 4:
        raise ValueError(
            f"{urn!r} is not a Stackwright URN: expected urn:sw:<stack>::<project>::<type>::<name>"
        )
    stack, project, qualified = parts[0], parts[1], parts[2]
    name = "::".join(parts[3:])  # a name may itself contain "::"
    return URNParts(stack, project, qualified, name)


def urn_name(urn: str) -> str:
    """The resource's logical name in a URN, `web` in `urn:sw:dev::p::<type>::web` (all that
    follows the type: a name may itself contain "::"); the text after the last "::" of
    anything else, and the whole text when it has none."""
    return urn.split("::", 3)[-1]


#: The annotations Stackwright puts on every object it applies: which stack, which resource.
STACK_ANNOTATION = "stackwright.io/stack"
URN_ANNOTATION = "stackwright.io/urn"
#: The server-side-apply field manager Stackwright applies the stack's objects as (a Patch
#: applies as one of its own).
FIELD_MANAGER = "stackwright"

#: The annotation a program sets on an object to say what its delete does to the objects it
#: owns (Pulumi's `pulumi.com/deletionPropagationPolicy`); its values, in any case, name
#: the API's propagation policies. Without it, Background.
DELETION_PROPAGATION = "stackwright.io/deletion-propagation"
PROPAGATION_POLICIES = ("Orphan", "Background", "Foreground")


def deletion_propagation(obj: Mapping[str, Any]) -> str | None:
    """The propagation policy `obj`'s `stackwright.io/deletion-propagation` annotation names
    (`Orphan`, `Background` or `Foreground`), None when it has none; raises ValueError
    naming the values allowed when it names none of them."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    raw = annotations.get(DELETION_PROPAGATION) if isinstance(annotations, Mapping) else None
    if raw is None:
        return None
    for policy in PROPAGATION_POLICIES:
        if str(raw).strip().lower() == policy.lower():
            return policy
    allowed = " | ".join(p.lower() for p in PROPAGATION_POLICIES)
    raise ValueError(f"annotation {DELETION_PROPAGATION} must be one of {allowed}, got {raw!r}")


#: The kubeconfig context of local cluster N is `stackwright-N` (DESIGN's contract).
LOCAL_CONTEXT_PREFIX = "stackwright-"

#: The keys Stackwright reads in its own namespaces: the stack's default provider's
#: settings (`kubernetes:`) and the environments map (`stackwright:`). Any other key there
#: is a slip that nothing would notice — `kubernetes:clustr` leaves the stack on the ambient
#: kubeconfig's cluster, `stackwright:enviroments` its production guard off — so it is
#: refused, as Pulumi refuses a key its provider does not take.
CONFIG_SETTINGS: Mapping[str, tuple[str, ...]] = {
    "kubernetes": ("cluster", "context", "kubeconfig", "namespace", "timeout"),
    "stackwright": ("environments",),
}


#: Settings of Pulumi's Kubernetes provider (a ported stack's `kubernetes:<key>`) that
#: Stackwright does not take, and what it does instead: refused as a slip is, but told as
#: what it is, not as a misspelling to correct.
PULUMI_PROVIDER_SETTINGS: Mapping[str, str] = {
    "enableServerSideApply": "it always applies server-side",
    "enableConfigMapMutable": "it updates a ConfigMap in place (replace_on_changes replaces one)",
    "renderYamlToDirectory": "the stack's default provider applies to a cluster; a provider "
    "declared with render_yaml_to_directory (YAML programs: renderYamlToDirectory) writes "
    "files instead",
    "deleteUnreachable": "`stackwright refresh` forgets objects that are gone",
    "skipUpdateUnreachable": "it has no such option",
    "strictMode": "it has no such option",
    "suppressDeprecationWarnings": "it has no such option",
    "suppressHelmHookWarnings": "it has no such option",
}


def pulumi_setting(full: str) -> str | None:
    """What Stackwright does in place of the Pulumi provider setting `full`
    (`kubernetes:enableServerSideApply`), or None when it is none of those."""
    namespace, _, name = full.partition(":")
    return PULUMI_PROVIDER_SETTINGS.get(name) if namespace == "kubernetes" else None


def unknown_setting(full: str, project: str) -> str | None:
    """Why `full` (`namespace:name`) is no key of a namespace of CONFIG_SETTINGS, or None
    (another namespace, the project's own included, takes any key); it ends in "; " or
    "? ", for the caller's way on."""
    namespace, _, name = full.partition(":")
    known = CONFIG_SETTINGS.get(namespace, ()) if namespace != project else ()
    if not known or name in known:
        return None
    instead = pulumi_setting(full)
    if instead is not None:
        return (
            f"configuration {full} is a setting of Pulumi's Kubernetes provider, which "
            f"Stackwright does not take ({instead}); "
        )
    close = difflib.get_close_matches(name, known, n=1)
    return (
        f"configuration {full} is no setting of Stackwright's {namespace} namespace, which "
        f"takes {', '.join(known)}; " + (f"did you mean {namespace}:{close[0]}? " if close else "")
    )


#: A project's, stack's or tag's name: it is part of URNs, file names (`Stackwright.<stack>.yaml`)
#: and the state store's keys, so one rule for every place that takes or checks one.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def name_problem(what: str, name: str) -> str | None:
    """Why `name` cannot be a `what` (project, stack, tag) name, or None."""
    if _NAME.fullmatch(name):
        return None
    return (
        f"{what} name {name!r} is not valid: use letters, digits, '-', '_' and '.', "
        "starting with a letter or digit, at most 100 characters"
    )


#: A namespace's name, as the API server takes it (RFC 1123 label).
_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def bad_setting_value(full: str, value: Any) -> str | None:
    """Why `value` cannot be the Stackwright setting `full`, or None: a `kubernetes:timeout`
    that is no positive number of seconds would fail every operation at its first wait (or
    with a traceback where it is read), long after `config set` took it; a
    `kubernetes:namespace` no namespace can be named (`Bad_NS`) failed every object with
    advice to declare that namespace, which the API server refuses too."""
    if is_sealed(value):
        return None
    if full == "kubernetes:namespace":
        if isinstance(value, str) and _NAMESPACE_NAME.fullmatch(value):
            return None
        return (
            f"configuration {full} must be a namespace's name (lowercase letters, digits and "
            f"'-', at most 63), not {str(value)!r}: set it with "
            f"`stackwright config set {full} my-app`"
        )
    if full != "kubernetes:timeout":
        return None
    try:
        seconds = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if 0 < seconds < math.inf:
        return None
    return (
        f"configuration {full} must be a positive number of seconds, not {str(value)!r}: "
        f"set it with `stackwright config set {full} 600`"
    )


#: The key of a stored secret's envelope: `{"@secret": "<base64 nonce + AES-GCM ciphertext>"}`.
#: State rows, stack outputs and export documents hold secrets only in this form.
SECRET_SIG = "@secret"
#: How a secret value is shown anywhere a person or a log may see it.
SECRET_TEXT = "[secret]"


def always_secret(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields of an object that are secret whatever a program says (as in Pulumi): a
    v1 Secret's `data` and `stringData`, both (the live object returns `stringData` as
    `data`)."""
    if obj.get("kind") == "Secret" and obj.get("apiVersion") == "v1":
        return ("data", "stringData")
    return ()


def is_sealed(value: Any) -> bool:
    """Whether `value` is a stored secret's envelope (ciphertext, never the plain value)."""
    return isinstance(value, dict) and len(value) == 1 and SECRET_SIG in value


@dataclass(frozen=True)
class SecretValue:
    """A secret stack output (or part of one), decrypted: shown as [secret], stored sealed."""

    value: Any

    def __repr__(self) -> str:
        return "SecretValue([secret])"


def map_secrets(value: Any, change: Callable[[SecretValue], Any]) -> Any:
    """A copy of a JSON-like `value` with each SecretValue in it replaced by `change(it)`."""
    if isinstance(value, SecretValue):
        return change(value)
    if isinstance(value, dict):
        return {k: map_secrets(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [map_secrets(v, change) for v in value]
    return value


#: How a value preview cannot know yet (`UNKNOWN`) is shown.
UNKNOWN_TEXT = "(known after apply)"


#: Exact types of the values `shown` returns as they are: most of a diff's leaves, which
#: skip the checks for unknowns and secrets (a 1,000-object `up` shows ~15,000 values).
_SHOWN_AS_IS = frozenset({str, int, float, bool, type(None)})


def shown(value: Any) -> Any:
    """A value as a display shows it: unknowns spelled out, structures copied."""
    if type(value) in _SHOWN_AS_IS:
        return value
    if value is UNKNOWN:
        return UNKNOWN_TEXT
    if isinstance(value, SecretValue):
        return SECRET_TEXT
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


def masked(
    value: Any, paths: Iterable[str], secret: Callable[[Any], Any] = lambda _: SECRET_TEXT
) -> Any:
    """A copy of `value` with what lies at `paths` — relative paths as `join_path` writes
    them (`data.pw`, `env[1].value`, "" for the value itself) — replaced by `secret(it)`."""
    paths = list(paths)
    if "" in paths:
        return secret(value)
    if not paths:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = dict(value)
        for key in out:
            inner = paths_below(paths, key)
            if inner:
                out[key] = masked(out[key], inner, secret)
        return out
    if isinstance(value, list):
        return [
            masked(item, inner, secret) if (inner := paths_below(paths, f"[{index}]")) else item
            for index, item in enumerate(value)
        ]
    return value


def paths_below(paths: list[str], head: str) -> list[str]:
    """The paths that start with the segment `head` (a key or `[i]`), relative to it."""
    out = []
    for path in paths:
        if path == head:
            out.append("")
        elif path.startswith(head) and path[len(head)] in ".[":
            rest = path[len(head) :]
            out.append(rest[1:] if rest[0] == "." else rest)
    return out


def outermost(paths: tuple[str, ...]) -> list[str]:
    """Secret paths not inside another one (the outer one seals what is within it)."""
    unique = list(dict.fromkeys(paths))
    return [
        p
        for p in unique
        if not any(q != p and (p.startswith((q + ".", q + "[")) or q == "") for q in unique)
    ]


def transform_at(value: Any, path: str, change: Callable[[Any], Any]) -> Any:
    """A copy of `value` with `change` applied at a dotted path (`data.password`,
    `spec.containers[0].env[1].value`); keys may hold dots, so the longest key that
    matches is taken. A path that names nothing leaves `value` as it is."""
    if path == "":
        return change(value)
    if isinstance(value, dict):
        # A copy of the same kind: a preview's partly known map stays one (what it lacks is
        # unknown, not absent) wherever a secret inside it is marked.
        made = dict if type(value) is dict else type(value)
        if dict.__contains__(value, path):  # the whole path is a key: none longer can match
            return made({**value, path: change(value[path])})
        for key in sorted(value, key=lambda k: len(str(k)), reverse=True):
            text = str(key)
            if path == text:
                return made({**value, key: change(value[key])})
            if path.startswith(text + "."):
                rest = path[len(text) + 1 :]
            elif path.startswith(text + "["):
                rest = path[len(text) :]
            else:
                continue
            return made({**value, key: transform_at(value[key], rest, change)})
        return value
    if isinstance(value, list) and path.startswith("["):
        index, _, rest = path[1:].partition("]")
        rest = rest[1:] if rest.startswith(".") else rest
        if index.isdigit() and int(index) < len(value):
            copy = list(value)
            copy[int(index)] = transform_at(value[int(index)], rest, change)
            return copy
    return value


class Op(enum.Enum):
    """What a step does; its value is the word the display uses."""

    SAME = "same"
    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"  # the logical replacement (its halves are the two below)
    CREATE_REPLACEMENT = "create-replacement"
    DELETE_REPLACED = "delete-replaced"
    DELETE = "delete"
    READ = "read"
    #: A read resource leaving the state (dropped from the program, or a destroy): the
    #: record goes, its object stays in the cluster (Pulumi's "discard").
    DISCARD = "discard"
    IMPORT = "import"
    REFRESH = "refresh"

    @property
    def mutates(self) -> bool:
        return self not in (Op.SAME, Op.READ, Op.REFRESH)


@dataclass(frozen=True)
class ResourceState:
    """What the state store records about one resource after a successful step.

    `inputs` are the desired object exactly as last sent to the provider (after
    auto-naming); `outputs` the live object the provider returned. `id` names the
    object in its cluster (`namespace/name`, or `name` when cluster-scoped).
    """

    urn: str
    type: str
    id: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    parent: str = ""
    dependencies: tuple[str, ...] = ()
    provider: str = ""  # URN of an explicit provider resource; "" is the stack's default
    custom: bool = True  # False for components (nothing in a cluster)
    protect: bool = False
    retain_on_delete: bool = False
    #: The URN of the resource whose deletion removes this one's object (`deleted_with`).
    deleted_with: str = ""
    #: Paths of `inputs`/`outputs` that hold secrets (`data.password`); shown as [secret].
    secret_paths: tuple[str, ...] = ()
    #: Set when a replacement left this old object to delete after its successor was made.
    delete_pending: bool = False
    #: Why the object never became ready when it was last applied; the next `up`
    #: applies and waits for it again even when its inputs did not change.
    init_errors: tuple[str, ...] = ()
    #: Read, not managed (`ResourceOptions(id=...)`, Pulumi's `get`): the object is
    #: someone else's; the stack records what it read and never writes or deletes it.
    external: bool = False
    #: The program's `ignore_changes` paths: others may change them, so a `refresh`, which
    #: runs no program, reports no drift there either.
    ignore_changes: tuple[str, ...] = ()
    #: The program's `custom_timeouts.delete` in seconds (None: the provider's default):
    #: recorded so that a resource taken out of the program, or a `destroy`, which runs
    #: no program, still waits for its delete as long as the program said.
    delete_timeout: float | None = None
    #: The policy the program's `stackwright.io/deletion-propagation` annotation names
    #: (None: not annotated, Background): recorded, as `delete_timeout` is, so that a
    #: delete without the program, or of a replaced object, still uses it.
    deletion_propagation: str | None = None

    def changed(self, **changes: Any) -> ResourceState:
        """A copy with `changes` made: `dataclasses.replace` without its walk of the fields
        and the frozen `__init__` (0.7 µs against 7; a step copies its state two to four
        times, ~2% of an `up`'s CPU). Right while every attribute of a state is a field that
        `__init__` stores as given: no `__post_init__`, no cached property (a test checks)."""
        unknown = changes.keys() - _STATE_FIELDS
        if unknown:
            raise TypeError(f"ResourceState has no field {min(unknown)!r}")
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    def to_dict(self) -> dict[str, Any]:
        # `deleteTimeout` and `deletionPropagation` only when set: a record without them is
        # one an older Stackwright wrote and reads (an export of such records stays a
        # document it imports).
        optional = {
            key: value
            for key, value in (
                ("deleteTimeout", self.delete_timeout),
                ("deletionPropagation", self.deletion_propagation),
            )
            if value is not None
        }
        return {
            "urn": self.urn,
            "type": self.type,
            "id": self.id,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "parent": self.parent,
            "dependencies": list(self.dependencies),
            "provider": self.provider,
            "custom": self.custom,
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "deletedWith": self.deleted_with,
            "secretPaths": list(self.secret_paths),
            "deletePending": self.delete_pending,
            "initErrors": list(self.init_errors),
            "external": self.external,
            "ignoreChanges": list(self.ignore_changes),
            **optional,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResourceState:
        return cls(
            urn=data["urn"],
            type=data["type"],
            id=data.get("id", ""),
            inputs=data.get("inputs") or {},
            outputs=data.get("outputs") or {},
            parent=data.get("parent", ""),
            dependencies=tuple(data.get("dependencies") or ()),
            provider=data.get("provider", ""),
            custom=data.get("custom", True),
            protect=data.get("protect", False),
            retain_on_delete=data.get("retainOnDelete", False),
            deleted_with=data.get("deletedWith", ""),
            secret_paths=tuple(data.get("secretPaths") or ()),
            delete_pending=data.get("deletePending", False),
            init_errors=tuple(data.get("initErrors") or ()),
            external=data.get("external", False),
            ignore_changes=tuple(data.get("ignoreChanges") or ()),
            delete_timeout=_seconds_or_none(data.get("deleteTimeout")),
            deletion_propagation=data.get("deletionPropagation"),
        )


_STATE_FIELDS = frozenset(f.name for f in fields(ResourceState))


def _auto_name_base(logical: str) -> str:
    """The part of an auto-name before its suffix: the logical name made DNS-1123-safe,
    short enough that the suffix still fits in a name's 253 characters."""
    base = (
        "".join(c if c.isalnum() or c in "-." else "-" for c in logical.lower()).strip("-.")
        or "resource"
    )
    return base[:244]


def auto_name(logical: str, urn: str, previous: str = "", released: Collection[str] = ()) -> str:
    """`<logical name>-<8 hex digits>`, made a valid DNS-1123 name.

    The suffix is derived from the URN (which holds the stack), the name it replaces and
    the auto-names the state let go of for that URN (`Snapshot.released_names`: objects
    left in the cluster by `retain_on_delete` or `state delete`), so a preview shows the
    name `up` will use, a run that crashed mid-create finds its object under the same
    name, a replacement gets a new one, and a resource declared again after its object
    was let go gets a fresh one, as Pulumi's random suffix would. Without released names
    the suffix is what it always was: recorded and pending names stay valid.
    """
    seed = f"{urn}\0{previous}"
    if released:
        seed += "\0" + "\0".join(sorted(released))
    while True:
        name = f"{_auto_name_base(logical)}-{hashlib.sha256(seed.encode()).hexdigest()[:8]}"
        if name not in released:
            return name
        seed += "\0"  # a 32-bit suffix can collide: never give a released name back


_SUFFIX = re.compile(r"-[0-9a-f]{8}")


def released_auto_name(state: ResourceState) -> str | None:
    """The auto-name a record lets go of when the state forgets it with its object left in
    the cluster, or None: its `metadata.name` shaped as its URN's auto-name (the state does
    not record how a name was given; a name a user wrote in that shape only keeps later
    auto-names of the URN off it). Read and non-object records have none."""
    if not state.custom or state.external:
        return None
    meta = state.inputs.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str):
        return None
    base = _auto_name_base(urn_name(state.urn))
    shaped = name.startswith(base) and _SUFFIX.fullmatch(name, len(base)) is not None
    return name if shaped else None


def _seconds_or_none(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class PendingOperation:
    """A step journaled as begun but not yet ended: what a crash may have left half-done.

    `resource` is what the step was about to make true (for a create: the new
    state with the name it would create; for a delete: the state being deleted).
    """

    op: Op
    resource: ResourceState


@dataclass(frozen=True)
class ClusterIdentity:
    """Which cluster a provider talked to: the uid of its `kube-system` Namespace (the
    usual cluster id: it outlives restarts, and no two clusters share it), with the API
    server's URL and the kubeconfig context, for messages only. Recorded in the state for
    each provider its objects went through, so a run that finds the provider reaching
    another cluster says so before it changes anything."""

    uid: str
    server: str = ""
    context: str = ""

    def describe(self) -> str:
        """`https://h:6443 (context "prod")`: the phrase messages name a cluster with."""
        where = self.server or f"uid {self.uid}"
        return f"{where} (context {self.context!r})" if self.context else where

    def to_dict(self) -> dict[str, str]:
        return {"uid": self.uid, "server": self.server, "context": self.context}

    @classmethod
    def from_dict(cls, raw: Any) -> ClusterIdentity:
        """Raises ValueError when `raw` is not what `to_dict` writes."""
        if not isinstance(raw, Mapping) or not isinstance(raw.get("uid"), str) or not raw["uid"]:
            raise ValueError("must be an object with a non-empty string 'uid'")
        extra = sorted(set(raw) - {"uid", "server", "context"})
        if extra:
            raise ValueError(f"has an unknown field {extra[0]!r} (fields: uid, server, context)")
        for key in ("server", "context"):
            if not isinstance(raw.get(key, ""), str):
                raise ValueError(f"its {key!r} must be a string")
        return cls(raw["uid"], raw.get("server", ""), raw.get("context", ""))
