"""A fake cluster for testing the engine without a Kubernetes API server.

`FakeCluster` implements `ports.Provider` in memory, in the spirit of Pulumi's
function-field fake providers: tests run real programs through
`operations.run` against it and a real state store, then assert what the
cluster was asked to do (`calls`), what it holds (`objects`) and what the
state recorded. It behaves like an API server where the engine's correctness
depends on it — a simplified server-side apply (field ownership, conflicts,
generation and resourceVersion bumps, immutable fields refused), namespaces
that must exist, kinds served only once their CRD is applied — and lets a test
inject a failure into any call (`fail_apply`, `fail_ready`, …), let a write land
and then fail as if its reply were lost (`lose_reply`), or change an object behind
the engine's back (`edit`, `remove`, `put`).

Failure maps are keyed by the object's name or by the resource's logical name
(the last part of the URN the engine stamps), so an auto-named object can be
targeted by the name the program gave it. A value is an exception to raise, or
a message (raised as `FakeApiError`, or `FakeNotReady` for readiness).

Must never: do I/O (its `latency` is event-loop time, zero by default), or be
used outside tests; it ships in the package so that the tests of every layer
above the engine (CLI, automation, operator) can use the same fake.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import datetime
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from stackwright.engine.plan import diff, forcing_rules
from stackwright.engine.ports import Provider, ProviderFactory
from stackwright.errors import ClusterUnreachable, InputsRejected, StackwrightError
from stackwright.model import (
    CLUSTER_SCOPED,
    STACK_ANNOTATION,
    URN_ANNOTATION,
    ClusterIdentity,
    urn_name,
)

__all__ = [
    "CLUSTER_SCOPED",
    "DEFAULT_STATUS",
    "WRITES",
    "Applied",
    "Call",
    "FakeApiError",
    "FakeCluster",
    "FakeNotReady",
    "Key",
]

#: The calls that change the cluster: a no-op run must make none of them.
WRITES = frozenset({"apply", "delete", "ensure_applyset", "remove_applyset", "unmark"})

#: Namespaces a new cluster already has.
_INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

_MANAGER = "stackwright"
_MANAGED_BY = "app.kubernetes.io/managed-by"
#: The labels and annotations `unmark` takes off (the real provider's MARK_LABELS / _ANNOTATIONS).
_MARKS = (("applyset.kubernetes.io/part-of", _MANAGED_BY), (STACK_ANNOTATION, URN_ANNOTATION))
#: Fields of an object the server, not the applier, owns.
_SERVER_META = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")
#: A fixed creation time, so that live objects (and goldens showing them) are stable.
_EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z

Obj = dict[str, Any]
Path = tuple[str, ...]
Failures = dict[str, BaseException | str]
StatusHook = Callable[[Mapping[str, Any]], Mapping[str, Any]]


class Key(NamedTuple):
    """An object's identity in the fake: namespace is None for cluster-scoped kinds."""

    api_version: str
    kind: str
    namespace: str | None
    name: str


class Call(NamedTuple):
    """One call the engine made: `("apply", "ConfigMap", "settings")`.

    `kind` and `name` are "" where the call has none (`close`); for the ApplySet
    calls `kind` is "ApplySet" and `name` the namespace.
    """

    method: str
    kind: str
    name: str


@dataclass(frozen=True)
class Applied:
    """The body of one apply or preview as the engine sent it, and with which options."""

    body: Obj
    force: bool
    dry_run: bool


class FakeApiError(StackwrightError):
    """What the fake answers where an API server would answer with an error status."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


class FakeImmutable(FakeApiError, InputsRejected):
    """The 422 for a field that cannot change once set: inputs refused, as the provider's
    `ApplyRejected` says it, naming nothing else (`beyond_immutable` is None)."""


class FakeNamespaceMissing(FakeApiError, InputsRejected):
    """The 404 for an object in a namespace the cluster does not have: bad input, as the
    provider's `NamespaceMissing` says it, and a verdict on a new object whatever forces
    its replacement."""

    def __init__(self, message: str, *, namespace: str) -> None:
        super().__init__(message, 404)
        self.missing_namespace = namespace

    def beyond_immutable(self, forcing: Collection[str] = ()) -> str | None:
        return str(self)


class FakeNotReady(StackwrightError):
    """An object that will not become ready (a readiness failure, as the provider reports it)."""


# --- default server behaviour -------------------------------------------------------------


def _deployment_status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec") or {}
    replicas = spec.get("replicas", 1) if isinstance(spec, Mapping) else 1
    generation = (obj.get("metadata") or {}).get("generation", 1)
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "updatedReplicas": replicas,
    }


def _crd_status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return {"conditions": [{"type": "Established", "status": "True"}]}


#: Status a fresh fake writes per kind (as its controllers would once the object is ready).
DEFAULT_STATUS: Mapping[str, StatusHook] = {
    "Deployment": _deployment_status,
    "CustomResourceDefinition": _crd_status,
}


# --- small pure helpers ---------------------------------------------------------------


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _built_in(group: str) -> bool:
    """Whether a group is one of Kubernetes' own (served without a CRD)."""
    return "." not in group or group.endswith(".k8s.io")


def _leaves(value: Any, path: Path = ()) -> dict[Path, Any]:
    """Leaf fields of an object: maps are walked, lists and scalars are atomic (as the
    fake's simplified server-side apply treats them)."""
    if isinstance(value, Mapping) and value:
        out: dict[Path, Any] = {}
        for key, item in value.items():
            out.update(_leaves(item, (*path, str(key))))
        return out
    return {path: value} if path else {}


def _content_leaves(body: Mapping[str, Any]) -> dict[Path, Any]:
    """The fields an apply sets: everything but identity and what the server owns."""
    leaves = _leaves(body)
    skip = {("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace")}
    skip |= {("metadata", m) for m in _SERVER_META}
    return {p: v for p, v in leaves.items() if p not in skip and p[:1] != ("status",)}


def _get(obj: Any, path: Path) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(obj, Mapping) or key not in obj:
            return False, None
        obj = obj[key]
    return True, obj


def _set(obj: Obj, path: Path, value: Any) -> None:
    target = obj
    for key in path[:-1]:
        child = target.get(key)
        if not isinstance(child, dict):
            child = target[key] = {}
        target = child
    target[path[-1]] = copy.deepcopy(value)


def _unset(obj: Obj, path: Path) -> None:
    """Remove the field at `path`, and the maps it leaves empty."""
    trail: list[tuple[Obj, str]] = []
    target: Any = obj
    for key in path[:-1]:
        if not isinstance(target, dict) or not isinstance(target.get(key), dict):
            return
        trail.append((target, key))
        target = target[key]
    if isinstance(target, dict):
        target.pop(path[-1], None)
    for parent, key in reversed(trail):
        if parent[key]:
            break
        del parent[key]


def _overlaps(a: Path, b: Path) -> bool:
    """Whether one path is the other or inside it."""
    return a[: len(b)] == b or b[: len(a)] == a


def _fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        for key in path:
            node = node.setdefault(f"f:{key}", {})
    return tree


def _content(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object without what the server owns (metadata bookkeeping and status)."""
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in _meta(obj).items() if k not in _SERVER_META}
    if meta:
        out["metadata"] = meta
    return out


def _spec_like(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a change of bumps `metadata.generation`: anything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def _unversioned(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {**obj, "metadata": {k: v for k, v in _meta(obj).items() if k != "resourceVersion"}}


def _timestamp(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the fake -------------------------------------------------------------------------------


class FakeCluster:
    """An in-memory cluster that implements `ports.Provider`, recording every call.

    `objects` maps each object's `Key` to its live object. `calls` lists the calls
    in the order the engine made them (`stamp`, a pure function in the real
    provider too, is not a call); `applied` the bodies of applies and previews.
    `status` adds per-kind status hooks to `DEFAULT_STATUS` (map a kind to None
    to write no status for it). `latency` is how long each call takes, in
    event-loop seconds (0 still yields once, so concurrent steps interleave);
    `max_in_flight` is the most applies, previews and deletes that were ever under
    way at once (what `--parallel` bounds). `clock` gives creation timestamps.
    A new fake holds the namespaces a new cluster has (default, kube-system, …).
    """

    def __init__(
        self,
        *,
        namespace: str = "default",
        status: Mapping[str, StatusHook | None] | None = None,
        fail_apply: Mapping[str, BaseException | str] | None = None,
        fail_preview: Mapping[str, BaseException | str] | None = None,
        fail_ready: Mapping[str, BaseException | str] | None = None,
        fail_read: Mapping[str, BaseException | str] | None = None,
        fail_delete: Mapping[str, BaseException | str] | None = None,
        lose_reply: Mapping[str, BaseException | str] | None = None,
        latency: float = 0.0,
        clock: Callable[[], float] = lambda: _EPOCH,
        name: str = "fake",
    ) -> None:
        self.name = name
        self._namespace = namespace
        hooks: dict[str, StatusHook | None] = {**DEFAULT_STATUS, **(status or {})}
        self.status_hooks: dict[str, StatusHook] = {
            kind: hook for kind, hook in hooks.items() if hook is not None
        }
        self.fail_apply: Failures = dict(fail_apply or {})
        self.fail_preview: Failures = dict(fail_preview or {})
        self.fail_ready: Failures = dict(fail_ready or {})
        self.fail_read: Failures = dict(fail_read or {})
        self.fail_delete: Failures = dict(fail_delete or {})
        #: An apply, delete or unmark that lands, then fails as if its reply were lost (a reset
        #: connection, a timeout, Ctrl-C): the caller cannot tell whether it happened.
        self.lose_reply: Failures = dict(lose_reply or {})
        #: Why the "API server" has never answered (refused, no such host), "" while it
        #: answers: every call fails at once with it, as the real provider's do then.
        self.unreachable = ""
        #: Object name → the warnings the "API server" sends back with its applies.
        self.warnings: dict[str, list[str]] = {}
        self.latency = latency
        self.clock = clock
        self.objects: dict[Key, Obj] = {}
        self.calls: list[Call] = []
        #: What each Service awaited was told its Pods come from (`await_ready`'s fed_later).
        self.fed_later: dict[str, str] = {}
        #: (name, timeout) of each delete (a release's uninstall too), in order: how long the
        #: engine let it wait.
        self.delete_timeouts: list[tuple[str, float | None]] = []
        #: (name, timeout) of each release install or upgrade: how long the engine let it wait.
        self.release_timeouts: list[tuple[str, float | None]] = []
        #: (name, reusing_name) of every delete: whether a new object takes the name next.
        self.deletes_reusing_name: list[tuple[str, bool]] = []
        #: (name, propagation) of every delete: the policy the engine asked for.
        self.delete_propagations: list[tuple[str, str | None]] = []
        self.applied: list[Applied] = []
        self.applysets: set[tuple[str, str]] = set()
        #: Each object's fields by the field manager that set them last.
        self.owners: dict[Key, dict[str, set[Path]]] = {}
        #: Kinds served by applied CRDs: (group, kind) → namespaced.
        self.served: dict[tuple[str, str], bool] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        #: Helm releases (`helm.Release`): (namespace, name) → {"spec", "revision", "status"}.
        self.releases: dict[tuple[str, str], dict[str, Any]] = {}
        #: How many times `close` was called (once per provider a run made).
        self.closed = 0
        self._version = 0
        self._uids = 0
        self._cluster_ips = 0
        for ns in _INITIAL_NAMESPACES:
            self.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

    # --- wiring -----------------------------------------------------------------------------

    def factory(
        self, others: Mapping[str, FakeCluster] | None = None, *, key: str = "context"
    ) -> ProviderFactory:
        """A provider factory: this fake for the stack's default provider and for any
        settings, except settings whose `key` (a provider resource's `context`) names one
        of `others`, for tests with several clusters."""
        chosen = dict(others or {})

        def make(settings: Mapping[str, Any] | None) -> Provider:
            if settings is not None and chosen:
                other = chosen.get(str(settings.get(key, "")))
                if other is not None:
                    return other
            return self

        return make

    # --- what tests read --------------------------------------------------------------------

    def writes(self) -> list[Call]:
        """The calls that changed (or could have changed) the cluster."""
        return [c for c in self.calls if c.method in WRITES]

    def calls_to(self, *methods: str) -> list[Call]:
        return [c for c in self.calls if c.method in methods]

    def find(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """The live object of `kind` named `name` (in `namespace` when given), if any."""
        for key, obj in self.objects.items():
            if key.kind == kind and key.name == name and namespace in (None, key.namespace):
                return obj
        return None

    def names(self, kind: str) -> list[str]:
        """Names of the objects of `kind`, sorted (`namespace/name` for namespaced kinds)."""
        return sorted(
            f"{k.namespace}/{k.name}" if k.namespace else k.name
            for k in self.objects
            if k.kind == kind
        )

    # --- what tests do behind the engine's back -----------------------------------------------

    async def unmark(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        dry_run: bool = False,
    ) -> None:
        self.calls.append(Call("unmark", kind, name))
        if dry_run:
            return
        key = self._existing_key(api_version, kind, namespace, name)
        found = self.objects.get(key) if key is not None else None
        if found is not None:
            meta = found.setdefault("metadata", {})
            for field, keys in (("labels", _MARKS[0]), ("annotations", _MARKS[1])):
                for mark in keys:
                    (meta.get(field) or {}).pop(mark, None)
        self._fail(self.lose_reply, found or {"metadata": {"name": name}})

    async def _received(
        self,
        desired: Mapping[str, Any],
        force: bool,
        warn: Callable[[str], None] | None,
        *,
        dry_run: bool,
    ) -> tuple[Key, Obj]:
        """An apply or its dry run, as far as both go: recorded, warned of, checked."""
        body = copy.deepcopy(dict(desired))
        name = _meta(body).get("name", "")
        for text in self.warnings.get(name, ()):
            if warn is not None:
                warn(text)
        method = "preview" if dry_run else "apply"
        self.calls.append(Call(method, str(body.get("kind", "")), name))
        self._reach(name)
        self.applied.append(Applied(body, force, dry_run))
        await self._pause()
        self._fail(self.fail_preview if dry_run else self.fail_apply, body)
        return self._validate(body), body

    def put(self, obj: Mapping[str, Any], *, manager: str = _MANAGER) -> Obj:
        """Store an object as if `manager` had applied it (not recorded as a call)."""
        body = copy.deepcopy(dict(obj))
        key = self._key_for(body, self._scope_or_default(body))
        live, owners = self._merge(key, body, manager=manager, force=True)
        self._store(key, live, owners)
        return copy.deepcopy(live)

    def edit(
        self,
        kind: str,
        name: str,
        changes: Mapping[str, Any],
        *,
        namespace: str | None = None,
        manager: str = "kubectl-edit",
    ) -> Obj:
        """Change fields (dotted paths of map keys) as another field manager would."""
        key = self._find_key(kind, name, namespace)
        live = copy.deepcopy(self.objects[key])
        owners = self.owners.setdefault(key, {})
        for dotted, value in changes.items():
            path = tuple(dotted.split("."))
            _set(live, path, value)
            for paths in owners.values():
                paths -= {p for p in paths if _overlaps(p, path)}
            owners.setdefault(manager, set()).add(path)
        self._store(key, self._bookkeep(key, self.objects[key], live, owners), owners)
        return copy.deepcopy(live)

    def remove(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Delete an object outside Stackwright (not recorded as a call)."""
        self._drop(self._find_key(kind, name, namespace))

    # --- ports.Provider -----------------------------------------------------------------------

    @property
    def default_namespace(self) -> str:
        return self._namespace

    @property
    def cluster(self) -> str:
        return self.name

    async def identity(self) -> ClusterIdentity | None:
        """kube-system's uid, as the real provider reads it (one GET)."""
        self.calls.append(Call("identity", "Namespace", "kube-system"))
        self._reach("kube-system")
        uid = self.kube_system_uid()
        return ClusterIdentity(uid, self.name, self.name) if uid else None

    def kube_system_uid(self) -> str:
        """The fake's cluster id ("" when its kube-system is gone); every fake numbers its
        uids alike, so its name tells two fakes apart."""
        kube_system = self.objects.get(Key("v1", "Namespace", None, "kube-system"))
        uid = (kube_system or {}).get("metadata", {}).get("uid")
        return f"{self.name}/{uid}" if uid else ""

    async def namespaced(self, api_version: str, kind: str) -> bool:
        self.calls.append(Call("namespaced", kind, ""))
        self._reach(f"discovery of {api_version}")
        await asyncio.sleep(0)
        return self._scope(api_version, kind)

    def stamp(
        self, obj: Mapping[str, Any], *, stack: str, urn: str, namespace: str | None
    ) -> dict[str, Any]:
        meta = dict(obj.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), _MANAGED_BY: "stackwright"}
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            STACK_ANNOTATION: stack,
            URN_ANNOTATION: urn,
        }
        return {**obj, "metadata": meta}

    async def ensure_applyset(self, stack: str, namespace: str, group_kinds: Iterable[str]) -> None:
        self.calls.append(Call("ensure_applyset", "ApplySet", namespace))
        await asyncio.sleep(self.latency)
        self._require_namespace(namespace, "")  # as the real wiring says it: the member's
        self.applysets.add((stack, namespace))

    async def check_applyset(self, stack: str, namespace: str) -> None:
        self.calls.append(Call("check_applyset", "ApplySet", namespace))
        await asyncio.sleep(self.latency)

    async def applyset_namespaces(self, stack: str) -> list[str]:
        self.calls.append(Call("applyset_namespaces", "ApplySet", ""))
        await asyncio.sleep(self.latency)
        return sorted(ns for name, ns in self.applysets if name == stack)

    async def remove_applyset(self, stack: str, namespace: str) -> None:
        self.calls.append(Call("remove_applyset", "ApplySet", namespace))
        await asyncio.sleep(self.latency)
        self.applysets.discard((stack, namespace))

    async def preview(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        key, body = await self._received(desired, force, warn, dry_run=True)
        counters = (self._version, self._uids, self._cluster_ips)
        try:
            live, _ = self._merge(key, body, manager=field_manager or _MANAGER, force=force)
        finally:  # a dry run allocates nothing for good
            self._version, self._uids, self._cluster_ips = counters
        return live

    async def apply(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
        adopting: bool = False,
    ) -> dict[str, Any]:
        key, body = await self._received(desired, force, warn, dry_run=False)
        live, owners = self._merge(key, body, manager=field_manager or _MANAGER, force=force)
        self._store(key, live, owners)
        self._fail(self.lose_reply, body)
        return copy.deepcopy(live)

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        fed_later: str = "",
    ) -> dict[str, Any]:
        name = str(_meta(obj).get("name", ""))
        self.calls.append(Call("await_ready", str(obj.get("kind", "")), name))
        if fed_later:
            self.fed_later[name] = fed_later
        await asyncio.sleep(0)
        failure = self._failure(self.fail_ready, obj)
        if failure is not None:
            error = FakeNotReady(failure) if isinstance(failure, str) else failure
            if on_status is not None:
                on_status(str(error))
            raise error
        key = self._key_for(obj, self._scope_or_default(obj))
        live = self.objects.get(key)
        if live is None:
            raise FakeApiError(f"{obj.get('kind')} {name} not found", 404)
        if on_status is not None:
            on_status(f"{name}: ready")
        return copy.deepcopy(live)

    async def read(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        self.calls.append(Call("read", kind, name))
        self._reach(name)
        await asyncio.sleep(0)
        key = self._existing_key(api_version, kind, namespace, name)
        stored = self.objects.get(key) if key is not None else None
        self._fail(self.fail_read, stored or {"metadata": {"name": name}})
        return copy.deepcopy(stored) if stored is not None else None

    async def list(
        self, api_version: str, kind: str, namespace: str | None
    ) -> list[dict[str, Any]]:
        self.calls.append(Call("list", kind, namespace or ""))
        await asyncio.sleep(0)
        if not self._scope(api_version, kind):
            namespace = None
        elif namespace is None:
            namespace = self._namespace
        return [
            copy.deepcopy(obj)
            for key, obj in self.objects.items()
            if (key.api_version, key.kind, key.namespace) == (api_version, kind, namespace)
        ]

    async def list_page(
        self, api_version: str, kind: str, *, limit: int
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        self.calls.append(Call("list", kind, ""))
        await asyncio.sleep(0)
        self._scope(api_version, kind)  # raises, as the server answers, for a kind not served
        found = [
            copy.deepcopy(obj)
            for key, obj in self.objects.items()
            if (key.api_version, key.kind) == (api_version, kind)
        ]
        return found[:limit], max(0, len(found) - limit)

    async def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        reusing_name: bool = False,
        propagation: str | None = None,
        uid: str | None = None,
    ) -> dict[str, Any] | None:
        self.calls.append(Call("delete", kind, name))
        self._reach(name)
        self.delete_timeouts.append((name, timeout))
        self.deletes_reusing_name.append((name, reusing_name))
        self.delete_propagations.append((name, propagation))
        await self._pause()
        key = self._existing_key(api_version, kind, namespace, name)
        stored = self.objects.get(key) if key is not None else None
        self._fail(self.fail_delete, stored or {"metadata": {"name": name}})
        if uid and stored is not None and _meta(stored).get("uid") != uid:
            return copy.deepcopy(stored)  # the precondition failed: another object, left
        if key is not None and stored is not None:
            self._drop(key)
        self._fail(self.lose_reply, stored or {"metadata": {"name": name}})
        return None

    async def await_deleted(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
        reusing_name: bool = False,
    ) -> None:
        """Nothing to wait for: a delete here removes its object at once."""
        self.calls.append(Call("await_deleted", kind, name))
        await asyncio.sleep(0)

    async def release_apply(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Install (revision 1) or upgrade (the next revision) a release, in memory."""
        name, namespace = str(spec["name"]), str(spec["namespace"])
        self.calls.append(Call("release_apply", "Release", name))
        self.release_timeouts.append((name, timeout))
        await self._pause()
        self._fail(self.fail_apply, {"kind": "Release", "metadata": {"name": name}})
        old = self.releases.get((namespace, name))
        revision = old["revision"] + 1 if old is not None else 1
        self.releases[(namespace, name)] = {
            "spec": copy.deepcopy(dict(spec)),
            "revision": revision,
            "status": "deployed",
        }
        return self._release_outputs(namespace, name)

    async def release_preview(self, spec: Mapping[str, Any]) -> None:
        name = str(spec["name"])
        self.calls.append(Call("release_preview", "Release", name))
        await self._pause()
        self._fail(self.fail_preview, {"kind": "Release", "metadata": {"name": name}})

    async def release_uninstall(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        name, namespace = str(spec["name"]), str(spec["namespace"])
        self.calls.append(Call("release_uninstall", "Release", name))
        self.delete_timeouts.append((name, timeout))
        await self._pause()
        self._fail(self.fail_delete, {"kind": "Release", "metadata": {"name": name}})
        self.releases.pop((namespace, name), None)

    async def release_read(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        name, namespace = str(spec["name"]), str(spec["namespace"])
        self.calls.append(Call("release_read", "Release", name))
        await asyncio.sleep(0)
        if (namespace, name) not in self.releases:
            return None
        return self._release_outputs(namespace, name)

    def _release_outputs(self, namespace: str, name: str) -> dict[str, Any]:
        release = self.releases[(namespace, name)]
        return {
            "name": name,
            "namespace": namespace,
            "status": {"status": release["status"], "revision": release["revision"]},
        }

    async def close(self) -> None:
        self.calls.append(Call("close", "", ""))
        self.closed += 1

    # --- internals ------------------------------------------------------------------------

    def _reach(self, what: str) -> None:
        if self.unreachable:
            # as a refused connection: nothing of the call reached the cluster
            raise ClusterUnreachable(f"{what}: {self.unreachable}", self.unreachable, sent=False)

    async def _pause(self) -> None:
        """Take `latency`, counting the calls in flight (applies, previews and deletes)."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1

    def _failure(self, failures: Failures, obj: Mapping[str, Any]) -> BaseException | str | None:
        if not failures:
            return None
        meta = _meta(obj)
        name = str(meta.get("name", ""))
        urn = str((meta.get("annotations") or {}).get(URN_ANNOTATION, ""))
        logical = urn_name(urn)
        for candidate in (name, logical):
            if candidate and candidate in failures:
                return failures[candidate]
        return None

    def _fail(self, failures: Failures, obj: Mapping[str, Any]) -> None:
        failure = self._failure(failures, obj)
        if isinstance(failure, str):
            raise FakeApiError(failure)
        if failure is not None:
            raise failure

    def _scope(self, api_version: str, kind: str) -> bool:
        group = _group(api_version)
        served = self.served.get((group, kind))
        if served is not None:
            return served
        if not _built_in(group):
            raise FakeApiError(
                f"the server doesn't have a resource type {kind} in {api_version}: "
                "is its CustomResourceDefinition applied?",
                404,
            )
        return kind not in CLUSTER_SCOPED

    def _scope_or_default(self, obj: Mapping[str, Any]) -> bool:
        try:
            return self._scope(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        except FakeApiError:
            return bool(_meta(obj).get("namespace"))

    def _key_for(self, obj: Mapping[str, Any], namespaced: bool) -> Key:
        meta = _meta(obj)
        namespace = (meta.get("namespace") or self._namespace) if namespaced else None
        return Key(
            str(obj.get("apiVersion", "")), str(obj.get("kind", "")), namespace, meta["name"]
        )

    def _existing_key(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> Key | None:
        try:
            namespaced = self._scope(api_version, kind)
        except FakeApiError:
            return None  # a kind no longer served: none of its objects exist
        return Key(api_version, kind, (namespace or self._namespace) if namespaced else None, name)

    def _find_key(self, kind: str, name: str, namespace: str | None) -> Key:
        for key in self.objects:
            if key.kind == kind and key.name == name and namespace in (None, key.namespace):
                return key
        raise KeyError(f"the fake cluster holds no {kind} {name}")

    def _require_namespace(self, namespace: str, what: str) -> None:
        if Key("v1", "Namespace", None, namespace) not in self.objects:
            missing = f'namespaces "{namespace}" not found'
            raise FakeNamespaceMissing(
                f"{what}: {missing}" if what else missing, namespace=namespace
            )

    def _validate(self, body: Mapping[str, Any]) -> Key:
        """What the API server checks before a (dry-run) apply; the object's key."""
        meta = _meta(body)
        name = meta.get("name")
        if not body.get("apiVersion") or not body.get("kind"):
            raise FakeApiError(f"{name or '(unnamed)'}: the object needs apiVersion and kind", 400)
        if not isinstance(name, str) or not name:
            raise FakeApiError(f"{body['kind']} without metadata.name", 422)
        namespaced = self._scope(str(body["apiVersion"]), str(body["kind"]))
        if not namespaced and meta.get("namespace"):
            raise FakeApiError(f"{body['kind']} {name} is cluster-scoped: it has no namespace", 422)
        key = self._key_for(body, namespaced)
        if key.namespace is not None:
            self._require_namespace(key.namespace, f"{key.kind} {name}")
        return key

    def _merge(
        self, key: Key, body: Mapping[str, Any], *, manager: str, force: bool
    ) -> tuple[Obj, dict[str, set[Path]]]:
        """The object after `manager` applies `body`, and who then owns which fields: a
        simplified server-side apply.

        The fields the body sets become `manager`'s; fields `manager` set before and no
        longer sets are removed (unless another manager owns them too); setting a field
        another manager owns to another value is a conflict unless `force`, which takes
        the field over. Changing an immutable field is refused, as the API server does.
        """
        before = self.objects.get(key)
        given_uid = _meta(body).get("uid")  # a precondition, as the API server takes it
        if given_uid and before is None:
            raise FakeApiError(f"{key.kind} {key.name}: uid mismatch: no existing object", 409)
        if given_uid and given_uid != _meta(before or {}).get("uid"):
            raise FakeImmutable(f"{key.kind} {key.name}: metadata.uid: field is immutable", 422)
        live: Obj = copy.deepcopy(before) if before is not None else {}
        owners = {m: set(p) for m, p in self.owners.get(key, {}).items()}
        fields = _content_leaves(body)
        conflicts: list[str] = []
        for other, paths in owners.items():
            if other == manager:
                continue
            taken = {
                owned
                for owned in paths
                for path, value in fields.items()
                if _overlaps(owned, path) and _get(live, path) != (True, value)
            }
            conflicts += [f'.{".".join(p)} (owned by "{other}")' for p in sorted(taken)]
            if force:
                paths -= taken
        if conflicts and not force:
            raise FakeApiError(
                f"Apply failed with {len(conflicts)} conflict(s): {', '.join(conflicts)}", 409
            )
        others_own = set().union(*(p for m, p in owners.items() if m != manager))
        for gone in owners.get(manager, set()) - set(fields):
            if not any(_overlaps(gone, p) for p in others_own):
                _unset(live, gone)
        for path, value in fields.items():
            _set(live, path, value)
        live["apiVersion"], live["kind"] = body["apiVersion"], body["kind"]
        meta = live.setdefault("metadata", {})
        meta["name"] = key.name
        if key.namespace is not None:
            meta["namespace"] = key.namespace
        owners[manager] = set(fields)
        if before is not None:
            rules = forcing_rules(diff(_content(before), _content(live)), live, (), before)
            if rules:
                raise FakeImmutable(
                    f"{key.kind} {key.name} is invalid: {rules[0].line} (field is immutable)", 422
                )
        return self._bookkeep(key, before, live, owners), owners

    def _bookkeep(
        self, key: Key, before: Mapping[str, Any] | None, live: Obj, owners: Mapping[str, set[Path]]
    ) -> Obj:
        """`live` with the server's fields: uid, generation, resourceVersion, status."""
        meta = live.setdefault("metadata", {})
        if before is None:
            self._uids += 1
            meta["uid"] = f"00000000-0000-4000-8000-{self._uids:012d}"
            meta["creationTimestamp"] = _timestamp(self.clock())
            meta["generation"] = 1
            if key.kind == "Service" and key.api_version == "v1":
                self._allocate_cluster_ip(live)
        elif _spec_like(before) != _spec_like(live):
            meta["generation"] = int(_meta(before).get("generation", 1)) + 1
        meta["managedFields"] = [
            {
                "manager": manager,
                "operation": "Apply" if manager == _MANAGER else "Update",
                "fieldsType": "FieldsV1",
                "fieldsV1": _fields_v1(sorted(paths)),
            }
            for manager, paths in sorted(owners.items())
            if paths
        ]
        hook = self.status_hooks.get(key.kind)
        if hook is not None:
            live["status"] = dict(hook(live))
        if before is not None and _unversioned(before) == _unversioned(live):
            meta["resourceVersion"] = _meta(before).get("resourceVersion")  # a no-op write
        else:
            self._version += 1
            meta["resourceVersion"] = str(self._version)
        return live

    def _allocate_cluster_ip(self, service: Obj) -> None:
        spec = service.setdefault("spec", {})
        if "clusterIP" not in spec and spec.get("type") != "ExternalName":
            self._cluster_ips += 1
            spec["clusterIP"] = f"10.96.{self._cluster_ips // 250}.{self._cluster_ips % 250 + 1}"

    def _store(self, key: Key, live: Obj, owners: dict[str, set[Path]]) -> None:
        self.objects[key] = live
        self.owners[key] = owners
        if key.kind == "CustomResourceDefinition":
            spec = live.get("spec") or {}
            group = str(spec.get("group", ""))
            kind = str((spec.get("names") or {}).get("kind", ""))
            self.served[(group, kind)] = spec.get("scope", "Namespaced") != "Cluster"

    def _drop(self, key: Key) -> None:
        live = self.objects.pop(key)
        self.owners.pop(key, None)
        if key.kind == "Namespace":
            # The namespace controller deletes what the namespace held.
            for inner in [k for k in self.objects if k.namespace == key.name]:
                self._drop(inner)
        elif key.kind == "CustomResourceDefinition":
            spec = live.get("spec") or {}
            served = (str(spec.get("group", "")), str((spec.get("names") or {}).get("kind", "")))
            self.served.pop(served, None)
            for inner in [k for k in self.objects if (_group(k.api_version), k.kind) == served]:
                self._drop(inner)
