"""The API verbs of the local cluster, with kube-apiserver semantics and no HTTP.

`Cluster` is what a request reaches once the URL is parsed: get, list, watch,
create, update, patch (JSON, merge, strategic, server-side apply), delete and
deletecollection, each running the same pipeline a real API server runs —
decode check, defaulting, admission (name generation, IP allocation, initial
status), validation, managed fields, generation, resourceVersion — before the
store commits it. In-process controllers call the same methods, so they are
subject to the same rules as every client.

Must never: write to the store from anywhere but `_commit` / `_remove`, mutate
an object it has handed out, or block the event loop on anything but SQLite.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime
import ipaddress
import random
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from stackwright.localcluster import (
    admissionpolicy,
    certificates,
    decoding,
    defaults,
    limitranger,
    patch,
    priority,
    quota,
    rbac,
    selectors,
    status,
    validation,
)
from stackwright.localcluster import apply as ssa
from stackwright.localcluster.registry import Registry, ResourceType
from stackwright.localcluster.store import ADDED, DELETED, MODIFIED, Change, Obj, Store, TooOld

Clock = Callable[[], datetime.datetime]

NAMESPACE_TYPE = ("", "namespaces")
CRD_TYPE = ("apiextensions.k8s.io", "customresourcedefinitions")
JOB_TYPE = ("batch", "jobs")
POD_TYPE = ("", "pods")
EPHEMERAL_CONTAINERS = "ephemeralcontainers"  # the pods subresource `kubectl debug` writes
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
NAMESPACE_FINALIZER = "kubernetes"
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
PVC_PROTECTION = "kubernetes.io/pvc-protection"
SERVICE_ACCOUNT_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
NODE_PORT_RANGE = (30000, 32767)
INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
#: The namespaces the API server refuses to delete (NamespaceLifecycle's immortal ones): a
#: cluster's identity is kube-system's uid, which must outlive anything a user does.
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})

# Characters of generateName suffixes, as apimachinery's rand.String: no vowels,
# no look-alikes, so generated names never spell words.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def timestamp(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool = False
    field_manager: str | None = None
    field_validation: str = "Warn"  # Strict / Warn / Ignore, as the query parameter
    force: bool = False
    user_agent: str = ""
    #: A writer RBAC restricts (None: the administrator, or the cluster's own controllers).
    requester: rbac.User | None = None
    #: Who writes, whoever it is (None: the cluster's own controllers).
    user: rbac.User | None = None

    def manager(self) -> str:
        return self.field_manager or ssa.default_manager(self.user_agent)


@dataclass(frozen=True)
class DeleteOptions:
    dry_run: bool = False
    propagation: str | None = None  # Foreground / Background / Orphan
    grace_period_seconds: int | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    # The deprecated `orphanDependents: false`; the one case a real server answers 202.
    cascade_requested: bool = False
    #: Who deletes (None: the cluster's own controllers), as admission policies see it.
    user: rbac.User | None = None


@dataclass
class Written:
    obj: Obj
    created: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ListResult:
    items: list[Obj]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED / MODIFIED / DELETED / BOOKMARK / ERROR
    obj: Obj


class Cluster:
    """The local cluster's API, over a `Store` and a `Registry`."""

    def __init__(
        self,
        store: Store,
        registry: Registry | None = None,
        *,
        clock: Clock = utc_now,
        service_cidr: str = "10.96.0.0/12",
        bookmark_interval: float = 5.0,
    ) -> None:
        self.store = store
        self.registry = registry or Registry()
        self.clock = clock
        self.bookmark_interval = bookmark_interval
        self._service_net = ipaddress.ip_network(service_cidr)
        self._hooks: list[Callable[[Change], None]] = []
        #: What each namespace with a ResourceQuota uses, kept as writes commit.
        self.quota = quota.Usage(store)
        #: The Priority admission plugin, with the globalDefault PriorityClasses it keeps.
        self.priorities = priority.Priorities(store)
        #: The ValidatingAdmissionPolicies and bindings, compiled as they are written.
        self.policies = admissionpolicy.Policies(store, self.registry)
        self._bootstrap()

    # --- bootstrap -----------------------------------------------------------

    def _bootstrap(self) -> None:
        """The namespaces, the system PriorityClasses and the Services every cluster starts
        with: `default/kubernetes`, and `kube-system/kube-dns` as kubeadm and kind make it
        (its address is what Pods' resolv.conf names; programs read it,
        `Service.get("dns", "kube-system/kube-dns")`)."""
        ns_type = self._builtin("", "v1", "namespaces")
        for name in INITIAL_NAMESPACES:
            if self.store.get(NAMESPACE_TYPE, "", name) is None:
                self.create(
                    ns_type,
                    "",
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                    WriteOptions(field_manager="kube-apiserver"),
                )
        class_type = self._builtin("scheduling.k8s.io", "v1", "priorityclasses")
        for klass in priority.SYSTEM_CLASSES:  # a cluster older than them gets them too
            if self.store.get(class_type.key, "", klass["metadata"]["name"]) is None:
                self.create(class_type, "", klass, WriteOptions(field_manager="kube-apiserver"))
        svc_type = self._builtin("", "v1", "services")
        if self.store.get(svc_type.key, "default", "kubernetes") is None:
            self.create(
                svc_type,
                "default",
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {
                        "name": "kubernetes",
                        "labels": {"component": "apiserver", "provider": "kubernetes"},
                    },
                    "spec": {
                        "clusterIP": str(self._service_net.network_address + 1),
                        "ports": [
                            {"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}
                        ],
                    },
                },
                WriteOptions(field_manager="kube-apiserver"),
            )
        dns_ip = str(self._service_net.network_address + 10)
        # Made when missing (a cluster older than it, or one it was deleted from), unless
        # its address is taken: a DNS Service of the user's own there (a CoreDNS chart's
        # `clusterIP: 10.96.0.10`) would otherwise stop the cluster from starting.
        if (
            self.store.get(svc_type.key, "kube-system", "kube-dns") is None
            and dns_ip not in self._used_cluster_ips()
        ):
            dns = {"k8s-app": "kube-dns"}
            self.create(
                svc_type,
                "kube-system",
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {
                        "name": "kube-dns",
                        "labels": {
                            **dns,
                            "kubernetes.io/cluster-service": "true",
                            "kubernetes.io/name": "CoreDNS",
                        },
                    },
                    "spec": {
                        "clusterIP": dns_ip,
                        "selector": dns,
                        "ports": [
                            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                            {
                                "name": "metrics",
                                "port": 9153,
                                "protocol": "TCP",
                                "targetPort": 9153,
                            },
                        ],
                    },
                },
                WriteOptions(field_manager="kubeadm"),
            )

    def _builtin(self, group: str, version: str, plural: str) -> ResourceType:
        rtype = self.registry.by_plural(group, version, plural)
        assert rtype is not None, plural
        return rtype

    def type_for(self, group: str, version: str, plural: str) -> ResourceType:
        rtype = self.registry.by_plural(group, version, plural)
        if rtype is None:
            gv = f"{group}/{version}" if group else version
            raise status.NotFound(
                f"the server could not find the requested resource ({plural}.{gv})" if group else
                "the server could not find the requested resource",
                details={"group": group, "kind": plural},
            )  # fmt: skip
        return rtype

    # --- reads -----------------------------------------------------------------

    def get(self, rtype: ResourceType, namespace: str, name: str) -> Obj:
        obj = self.store.get(rtype.key, namespace if rtype.namespaced else "", name)
        if obj is None:
            raise status.not_found(rtype.plural, rtype.group, name)
        return self._as_version(rtype, obj)

    def list_objects(
        self,
        rtype: ResourceType,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
    ) -> ListResult:
        matches = self.matcher(rtype, label_selector, field_selector)
        start = ""
        list_rv = str(self.store.resource_version)
        if continue_token:
            start, list_rv = _decode_continue(continue_token)
        items = self.store.items(rtype.key, namespace if rtype.namespaced else None)
        selected: list[Obj] = []
        remaining = 0
        token = ""
        for obj in items:
            meta = obj["metadata"]
            position = f"{meta.get('namespace', '')}/{meta['name']}"
            if start and position <= start:
                continue
            if not matches(obj):
                continue
            if limit and len(selected) == limit:
                remaining += 1
                continue
            selected.append(self._as_version(rtype, obj))
            token = position
        if not remaining:
            token = ""
        return ListResult(
            items=selected,
            resource_version=list_rv,
            continue_token=_encode_continue(token, list_rv) if token else "",
            remaining=remaining if remaining else None,
        )

    def matcher(
        self, rtype: ResourceType, label_selector: str, field_selector: str
    ) -> Callable[[Obj], bool]:
        """Whether an object of `rtype` is selected; BadRequest for a selector it refuses."""
        labels = selectors.parse_label_selector(label_selector) if label_selector else None
        fields = selectors.parse_field_selector(field_selector) if field_selector else None
        if fields is not None:
            selectors.check_field_selector(
                fields,
                rtype.group,
                rtype.kind,
                selectable_fields=rtype.selectable_fields if rtype.crd else None,
                namespaced=rtype.namespaced,
            )

        def matches(obj: Obj) -> bool:
            if labels is not None and not labels.matches(obj["metadata"].get("labels")):
                return False
            return fields is None or fields.matches(obj)

        return matches

    async def watch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        *,
        resource_version: str = "",
        label_selector: str = "",
        field_selector: str = "",
        bookmarks: bool = False,
        send_initial_events: bool = False,
        timeout: float | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Events from `resource_version` on; from now (after synthetic ADDEDs) when it is "" or "0"."""
        matches = self.matcher(rtype, label_selector, field_selector)
        scope = namespace if rtype.namespaced else None

        def in_scope(obj: Obj | None) -> bool:
            if obj is None:
                return False
            if scope is not None and obj["metadata"].get("namespace", "") != scope:
                return False
            return matches(obj)

        subscription = self.store.subscribe(rtype.key)
        try:
            backlog: list[Change] = []
            initial = resource_version in ("", "0") or send_initial_events
            if initial:
                since = self.store.resource_version
                for obj in self.store.items(rtype.key, scope):
                    if matches(obj):
                        yield WatchEvent(ADDED, self._as_version(rtype, obj))
                if send_initial_events:
                    yield self._bookmark(rtype, since, initial_events_end=True)
            else:
                try:
                    since = int(resource_version)
                except ValueError:
                    raise status.BadRequest(
                        f'invalid resource version "{resource_version}"'
                    ) from None
                try:
                    backlog = self.store.changes_since(since)
                except TooOld as exc:
                    yield WatchEvent("ERROR", status.Expired(str(exc)).to_status())
                    return
            last = since
            for change in backlog:
                last = change.rv
                if change.key != rtype.key:
                    continue  # the change log holds every type; this watch wants one
                event = self._event_for(rtype, change, in_scope)
                if event:
                    yield event
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout if timeout else None
            while True:
                wait = self.bookmark_interval if bookmarks else None
                if deadline is not None:
                    left = deadline - loop.time()
                    if left <= 0:
                        return
                    wait = left if wait is None else min(wait, left)
                try:
                    # Not `asyncio.wait_for`: on Python 3.11 it drops a cancellation that
                    # comes as a change arrives, and the watch of a client gone lived on.
                    async with asyncio.timeout(wait):
                        change = await subscription.queue.get()
                except TimeoutError:
                    if bookmarks:
                        yield self._bookmark(rtype, max(last, self.store.resource_version))
                    continue
                if change.rv <= last:
                    continue
                last = change.rv
                event = self._event_for(rtype, change, in_scope)
                if event:
                    yield event
        finally:
            subscription.close()

    def _event_for(
        self, rtype: ResourceType, change: Change, in_scope: Callable[[Obj | None], bool]
    ) -> WatchEvent | None:
        """The event a filtered watcher sees: objects entering or leaving the filter appear or vanish."""
        now_in = change.type != DELETED and in_scope(change.obj)
        was_in = in_scope(change.old) if change.type != ADDED else False
        if change.type == DELETED:
            return (
                WatchEvent(DELETED, self._as_version(rtype, change.obj))
                if in_scope(change.obj)
                else None
            )
        if now_in and was_in:
            return WatchEvent(MODIFIED, self._as_version(rtype, change.obj))
        if now_in:
            return WatchEvent(ADDED, self._as_version(rtype, change.obj))
        if was_in:
            return WatchEvent(DELETED, self._as_version(rtype, change.obj))
        return None

    def _bookmark(
        self, rtype: ResourceType, rv: int, *, initial_events_end: bool = False
    ) -> WatchEvent:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_events_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return WatchEvent(
            "BOOKMARK", {"kind": rtype.kind, "apiVersion": rtype.api_version, "metadata": meta}
        )

    def _as_version(self, rtype: ResourceType, obj: Obj) -> Obj:
        """The object as the requested version shows it (custom kinds convert with strategy None)."""
        if obj.get("apiVersion") == rtype.api_version:
            return obj
        return {**obj, "apiVersion": rtype.api_version}

    # --- create ----------------------------------------------------------------

    def create(self, rtype: ResourceType, namespace: str, body: Any, opts: WriteOptions) -> Written:
        obj = self._decode(rtype, body)
        meta = obj.setdefault("metadata", {})
        self._settle_namespace(rtype, meta, namespace)
        prefix = "" if meta.get("name") else meta.get("generateName")
        if not meta.get("name") and not prefix:
            raise status.invalid_object(
                rtype.kind,
                rtype.group,
                "",
                [status.required("metadata.name", "name or generateName is required")],
            )
        if not prefix:
            self._check_absent(rtype, meta)
        if rtype.namespaced:
            self._check_namespace_open(meta["namespace"])
        obj, warnings = self._check_fields(rtype, obj, opts, whole_body=True)
        meta = obj["metadata"]
        if "status" in rtype.subresources:
            obj.pop("status", None)
        # Admission runs before the name is generated, as the API server's does: its
        # refusals name the object by its generateName (`pods "web-6c8f-" is forbidden`).
        self._admit(rtype, None, obj, opts)
        if prefix:
            meta["name"] = prefix + "".join(random.choices(_NAME_ALPHABET, k=5))
            self._check_absent(rtype, meta)
        now = timestamp(self.clock())
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now
        if rtype.key == JOB_TYPE:
            defaults.default_job_selector(obj)  # the generated selector is keyed by the new uid
        meta.pop("resourceVersion", None)
        meta.pop("deletionTimestamp", None)
        meta.pop("deletionGracePeriodSeconds", None)
        if _has_generation(rtype):
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        self._validate(rtype, obj, None)
        warnings += self._validating_admission("CREATE", rtype, None, obj, opts)
        ssa.track_update(
            None, obj, manager=opts.manager(), root=rtype.schema, resolve=rtype.resolve,
            api_version=rtype.api_version, now=now,
        )  # fmt: skip
        return Written(
            self._commit(rtype, None, obj, opts.dry_run), created=True, warnings=warnings
        )

    def _check_absent(self, rtype: ResourceType, meta: dict[str, Any]) -> None:
        if self.store.get(rtype.key, meta.get("namespace", ""), meta["name"]) is not None:
            raise status.already_exists(rtype.plural, rtype.group, meta["name"])

    def _settle_namespace(self, rtype: ResourceType, meta: dict[str, Any], namespace: str) -> None:
        if not rtype.namespaced:
            meta.pop("namespace", None)
            return
        given = meta.get("namespace")
        if given and namespace and given != namespace:
            raise status.BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        meta["namespace"] = given or namespace or "default"

    def _check_namespace_open(self, namespace: str) -> None:
        ns = self.store.get(NAMESPACE_TYPE, "", namespace)
        if ns is None:
            raise status.not_found("namespaces", "", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise status.Forbidden(
                f"unable to create new content in namespace {namespace} because it is being terminated",
                details={"name": namespace, "kind": "namespaces"},
            )

    # --- update ----------------------------------------------------------------

    def update(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Written:
        obj = self._decode(rtype, body)
        meta = obj.setdefault("metadata", {})
        _settle_name(meta, name)
        self._settle_namespace(rtype, meta, namespace)
        old = self.store.get(rtype.key, meta.get("namespace", ""), name)
        if old is None:
            raise status.not_found(rtype.plural, rtype.group, name)
        # kube-apiserver takes an update's uid as a precondition, checked before the version.
        _check_uid_precondition(rtype, name, meta.get("uid"), old)
        _check_resource_version(rtype, name, meta, old)
        obj, warnings = self._check_fields(rtype, obj, opts, whole_body=True)
        meta = obj["metadata"]
        return self._update(rtype, old, obj, opts, subresource, warnings=warnings)

    def _update(
        self,
        rtype: ResourceType,
        old: Obj,
        new: Obj,
        opts: WriteOptions,
        subresource: str,
        *,
        operation: str = "Update",
        warnings: list[str] | None = None,
    ) -> Written:
        """The shared tail of update and patch: subresource rules, admission, validation, commit."""
        new = self._confine_to_subresource(rtype, old, new, subresource)
        meta = new["metadata"]
        old_meta = old["metadata"]
        for preserved in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if preserved in old_meta:
                meta[preserved] = old_meta[preserved]
            else:
                meta.pop(preserved, None)
        if meta.get("namespace", "") != old_meta.get("namespace", ""):
            raise status.BadRequest("the namespace of the object cannot be changed")
        self._admit(rtype, old, new, opts, subresource)
        if subresource == EPHEMERAL_CONTAINERS:
            causes = validation.validate_ephemeral_containers_update(new, old)
            if causes:
                raise status.invalid_object(rtype.kind, rtype.group, meta["name"], causes)
        else:
            self._validate(rtype, new, old)
        warnings = [
            *(warnings or []),
            *self._validating_admission("UPDATE", rtype, old, new, opts, subresource),
        ]
        now = timestamp(self.clock())
        if operation == "Update":
            ssa.track_update(
                old, new, manager=opts.manager(), root=rtype.schema, resolve=rtype.resolve,
                api_version=rtype.api_version, now=now, subresource=subresource,
            )  # fmt: skip
        # A status write never moves the generation (the status strategy's), also where
        # defaulting adds to the spec a schema default the stored object predates.
        if _has_generation(rtype) and subresource != "status" and _spec_changed(old, new):
            meta["generation"] = int(old_meta.get("generation", 1)) + 1
        if _same_object(old, new):
            # A no-op write changes nothing, not even the resourceVersion (as etcd3's
            # GuaranteedUpdate short-circuits): watchers see nothing.
            return Written(self._as_version(rtype, old), warnings=warnings or [])
        if meta.get("deletionTimestamp") and not _held(new):
            written = self._commit(rtype, old, new, opts.dry_run)
            if not opts.dry_run:
                self._remove(rtype, written)
            return Written(written, warnings=warnings or [])
        return Written(self._commit(rtype, old, new, opts.dry_run), warnings=warnings or [])

    def _confine_to_subresource(
        self, rtype: ResourceType, old: Obj, new: Obj, subresource: str
    ) -> Obj:
        """A write to /status changes only status; a write to the main resource never does."""
        if rtype.key == certificates.CSR_TYPE:
            return certificates.confine_update(old, new, subresource, timestamp(self.clock()))
        if subresource == "status":
            # Admission edits the merged object in place (defaulting included): a copy
            # sharing the stored object's spec or metadata would change what is stored,
            # with no new resourceVersion and no watch event.
            merged = _private_copy(old)
            # Status writers may move resourceVersion forward and edit metadata the
            # controller owns (as the apiserver lets a status update carry metadata
            # changes only for managedFields); everything else keeps its old value.
            if "managedFields" in new["metadata"]:
                merged["metadata"]["managedFields"] = new["metadata"]["managedFields"]
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            return merged
        if subresource == EPHEMERAL_CONTAINERS and rtype.key == POD_TYPE:
            # The pod as it was but for its debug containers (dropNonEphemeralContainerUpdates).
            merged = _with_spec_field(old, new, "ephemeralContainers")
            if "managedFields" in new["metadata"]:
                merged["metadata"]["managedFields"] = new["metadata"]["managedFields"]
            return merged
        if subresource == "finalize":
            # Namespace finalization changes spec.finalizers and nothing else.
            return _with_spec_field(old, new, "finalizers")
        # A Scale write (scale.py) has changed the replicas alone: as a main-resource write.
        if subresource and not (subresource == "scale" and "scale" in rtype.subresources):
            raise status.NotFound(
                f'{rtype.plural} "{old["metadata"]["name"]}" has no subresource {subresource}'
            )
        if "status" in rtype.subresources:
            if "status" in old:
                new["status"] = _private_copy(old["status"])  # admission may edit it
            else:
                new.pop("status", None)
        return new

    # --- patch -----------------------------------------------------------------

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        content_type: str,
        body: bytes,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Written:
        ns = namespace if rtype.namespaced else ""
        old = self.store.get(rtype.key, ns, name)
        if content_type.startswith("application/apply-patch"):
            return self._apply(rtype, ns, name, old, body, opts, subresource)
        if old is None:
            raise status.not_found(rtype.plural, rtype.group, name)
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise status.BadRequest(f"error decoding patch: {exc}") from None
        patched = patch.apply_patch(
            content_type, self._as_version(rtype, old), document, rtype.schema, rtype.resolve
        )
        if not isinstance(patched, dict):
            raise status.BadRequest("the patch did not produce an object")
        meta = patched.setdefault("metadata", {})
        _settle_name(meta, name)
        _check_resource_version(rtype, name, meta, old)
        _check_applied_uid(rtype, name, meta, old)
        patched, warnings = self._check_fields(rtype, patched, opts)
        patched = self._decode(rtype, patched)
        return self._update(rtype, old, patched, opts, subresource, warnings=warnings)

    def _apply(
        self, rtype: ResourceType, namespace: str, name: str, old: Obj | None, body: bytes,
        opts: WriteOptions, subresource: str,
    ) -> Written:  # fmt: skip
        applied = parse_apply_body(body)
        applied = self._decode(rtype, applied)
        meta = applied.setdefault("metadata", {})
        _settle_name(meta, name)
        if rtype.namespaced:
            self._settle_namespace(rtype, meta, namespace)
        applied, warnings = self._check_fields(rtype, applied, opts, apply=True)
        meta = applied["metadata"]
        _check_applied_uid(rtype, name, meta, old)
        if old is not None:
            _check_resource_version(rtype, name, meta, old)
        meta.pop("resourceVersion", None)
        if subresource == "status":
            applied = {
                k: v
                for k, v in applied.items()
                if k in ("apiVersion", "kind", "metadata", "status")
            }
            applied["metadata"] = {k: v for k, v in meta.items() if k in ("name", "namespace")}
        elif "status" in rtype.subresources:
            applied.pop("status", None)
        now = timestamp(self.clock())
        merged = ssa.server_side_apply(
            self._as_version(rtype, old) if old is not None else None,
            applied,
            manager=opts.field_manager or "",
            force=opts.force,
            root=rtype.schema,
            resolve=rtype.resolve,
            api_version=rtype.api_version,
            now=now,
            subresource=subresource,
        )
        # The merge shares unchanged subtrees with the stored object; admission edits
        # in place, so it gets a private copy.
        merged = _private_copy(merged)
        if old is None:
            if subresource:
                raise status.not_found(rtype.plural, rtype.group, name)
            written = self._create_applied(rtype, merged, opts)
            written.warnings[:0] = warnings
            return written
        return self._update(
            rtype, old, merged, opts, subresource, operation="Apply", warnings=warnings
        )

    def _create_applied(self, rtype: ResourceType, obj: Obj, opts: WriteOptions) -> Written:
        """Create from a server-side apply: like create, but the managed fields are the apply's."""
        meta = obj["metadata"]
        if rtype.namespaced:
            self._check_namespace_open(meta["namespace"])
        self._admit(rtype, None, obj, opts)
        now = timestamp(self.clock())
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now
        if rtype.key == JOB_TYPE:
            defaults.default_job_selector(obj)
        if _has_generation(rtype):
            meta["generation"] = 1
        self._validate(rtype, obj, None)
        warnings = self._validating_admission("CREATE", rtype, None, obj, opts)
        return Written(
            self._commit(rtype, None, obj, opts.dry_run), created=True, warnings=warnings
        )

    # --- delete ------------------------------------------------------------------

    def delete(
        self, rtype: ResourceType, namespace: str, name: str, opts: DeleteOptions,
        warnings: list[str] | None = None, *, collection: bool = False,
    ) -> tuple[Obj, bool]:  # fmt: skip
        """Delete an object; returns (object, gone) — gone is False while finalizers hold it.
        `warnings` gets what admission policies warn of. A system PriorityClass is refused
        unless a DELETE of the `collection` reaches it: upstream's deletecollection calls
        the generic store's Delete, not the one of the PriorityClass storage that guards
        them (they come back at the cluster's next start, as at kube-apiserver's)."""
        ns = namespace if rtype.namespaced else ""
        obj = self.store.get(rtype.key, ns, name)
        if obj is None:
            raise status.not_found(rtype.plural, rtype.group, name)
        if rtype.key == NAMESPACE_TYPE and name in IMMORTAL_NAMESPACES:
            raise status.Forbidden(
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                details={"name": name, "kind": "namespaces"},
            )
        if rtype.key == priority.CLASS_TYPE and not collection:
            refusal = priority.system_class_deleted(name)
            if refusal is not None:
                raise refusal
        meta = obj["metadata"]
        if rtype.key == NAMESPACE_TYPE:  # its own storage checks it, in the storage's words
            _check_uid_precondition(rtype, name, opts.precondition_uid, obj)
        else:
            _check_delete_uid_precondition(rtype, name, opts.precondition_uid, obj)
        if opts.precondition_rv and opts.precondition_rv != meta.get("resourceVersion"):
            raise status.conflict(
                rtype.plural, rtype.group, name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{opts.precondition_rv}, ResourceVersion in object meta: {meta.get('resourceVersion')}",
            )  # fmt: skip
        if opts.propagation not in (None, "Foreground", "Background", "Orphan"):
            raise status.invalid_object(
                "DeleteOptions", "meta.k8s.io", "",
                [status.not_supported("propagationPolicy", opts.propagation, ["Foreground", "Background", "Orphan"])],
            )  # fmt: skip
        if warnings is None:
            warnings = []
        warnings += self._validating_admission(
            "DELETE", rtype, obj, None, WriteOptions(dry_run=opts.dry_run, user=opts.user)
        )
        finalizers = list(meta.get("finalizers") or [])
        if opts.propagation is not None:
            # As kube-apiserver's deletionFinalizersForGarbageCollection: the policy asked
            # for replaces the collector's finalizer (a second DELETE may switch it, never
            # to both); without one, the finalizer there stays.
            finalizers = [f for f in finalizers if f not in (FOREGROUND, ORPHAN)]
            if opts.propagation == "Foreground":
                finalizers.append(FOREGROUND)
            elif opts.propagation == "Orphan":
                finalizers.append(ORPHAN)
        if rtype.key == CRD_TYPE and CRD_CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CRD_CLEANUP_FINALIZER)
        grace = _pod_grace_period(obj, opts.grace_period_seconds) if rtype.key == POD_TYPE else 0
        marked_finalizers = {
            **obj,
            "metadata": {**meta, "finalizers": finalizers, "deletionGracePeriodSeconds": grace},
        }
        graceful = _held(marked_finalizers)
        if opts.dry_run:
            return self._as_version(rtype, obj), not graceful
        if not graceful:
            return self._remove(rtype, obj), True
        if (
            meta.get("deletionTimestamp")
            and finalizers == list(meta.get("finalizers") or [])
            and grace == int(meta.get("deletionGracePeriodSeconds") or 0)
        ):
            return self._as_version(rtype, obj), False
        now = self.clock()
        deletion = meta.get("deletionTimestamp")
        if grace and (not deletion or grace < int(meta.get("deletionGracePeriodSeconds") or 0)):
            # The time by which the kubelet must have stopped the pod's containers.
            deletion = timestamp(now + datetime.timedelta(seconds=grace))
        marked = copy.copy(obj)
        marked["metadata"] = {
            **meta,
            "finalizers": finalizers,
            "deletionTimestamp": deletion or timestamp(now),
            "deletionGracePeriodSeconds": grace,
        }
        if not finalizers:
            del marked["metadata"]["finalizers"]
        if rtype.key == NAMESPACE_TYPE:
            marked["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
        return self._commit(rtype, obj, marked, False), False

    def delete_collection(
        self,
        rtype: ResourceType,
        namespace: str | None,
        opts: DeleteOptions,
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> ListResult:
        listed = self.list_objects(
            rtype, namespace, label_selector=label_selector, field_selector=field_selector
        )
        for obj in listed.items:
            meta = obj["metadata"]
            try:
                self.delete(rtype, meta.get("namespace", ""), meta["name"], opts, collection=True)
            except status.NotFound:
                continue
        return listed

    # --- pods/binding ----------------------------------------------------------------

    def bind(self, namespace: str, name: str, body: Any, opts: WriteOptions) -> Obj:
        """POST pods/NAME/binding: assign a pod to a node, as kube-scheduler does.

        The one write that may set `spec.nodeName` of an existing pod (pod updates
        may not), once, together with the PodScheduled=True condition. Returns the
        `Status` a real server answers.
        """
        rtype = self._builtin("", "v1", "pods")
        if not isinstance(body, dict):
            raise status.BadRequest("the body of the request was in an unknown format")
        target = body.get("target")
        node = str(target.get("name") or "") if isinstance(target, dict) else ""
        if not node:
            raise status.invalid_object("Binding", "", name, [status.required("target.name", "")])
        given = (body.get("metadata") or {}).get("name")
        if given and given != name:
            raise status.BadRequest(
                f"the name of the object ({given}) does not match the name on the URL ({name})"
            )
        pod = self.store.get(rtype.key, namespace, name)
        if pod is None:
            raise status.not_found(rtype.plural, rtype.group, name)
        if pod["metadata"].get("deletionTimestamp"):
            raise status.conflict(
                "pods/binding",
                "",
                name,
                f"pod {name} is being deleted, cannot be assigned to a host",
            )
        assigned = (pod.get("spec") or {}).get("nodeName")
        if assigned:
            raise status.conflict(
                "pods/binding", "", name, f'pod {name} is already assigned to node "{assigned}"'
            )
        bound: Obj = _private_copy(pod)
        bound["spec"]["nodeName"] = node
        annotations = (body.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict) and annotations:
            bound["metadata"]["annotations"] = {
                **(bound["metadata"].get("annotations") or {}),
                **annotations,
            }
        pod_status = bound.setdefault("status", {})
        conditions = [
            c for c in pod_status.get("conditions") or [] if c.get("type") != "PodScheduled"
        ]
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": timestamp(self.clock()),
            }
        )
        pod_status["conditions"] = conditions
        self._commit(rtype, pod, bound, opts.dry_run)
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }

    # --- the pipeline's stages ---------------------------------------------------

    def _decode(self, rtype: ResourceType, body: Any) -> Obj:
        """Check the body is an object of this type; returns a private copy to work on."""
        if not isinstance(body, dict):
            raise status.BadRequest(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
            )
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if kind is not None and kind != rtype.kind:
            raise status.BadRequest(
                f"the object provided is unrecognized ({kind}) for {rtype.describe()}: expected {rtype.kind}"
            )
        if api_version is not None and api_version != rtype.api_version:
            other = self.registry.by_api_version(str(api_version), rtype.kind)
            if other is None or other.key != rtype.key:
                raise status.BadRequest(
                    f"the API version in the data ({api_version}) does not match the expected API version ({rtype.api_version})"
                )
        obj: Obj = _private_copy(body)
        obj["apiVersion"] = rtype.api_version
        obj["kind"] = rtype.kind
        if not isinstance(obj.get("metadata", {}), dict):
            raise status.BadRequest("metadata must be an object")
        return obj

    def _check_fields(
        self, rtype: ResourceType, obj: Obj, opts: WriteOptions, *, apply: bool = False,
        whole_body: bool = False,
    ) -> tuple[Obj, list[str]]:  # fmt: skip
        """Type errors stop the request (400); unknown fields per fieldValidation.

        A create's or an update's body is decoded whole, so its strict error names the kind
        (`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error:
        …`); a patched object's is the bare decoding error, as kube-apiserver words them.

        Returns the object without unknown fields (custom kinds: pruned and defaulted)
        and the warnings to send. A server-side `apply` keeps them, whatever fieldValidation
        says: typing the patch refuses them (a 500 naming the field), as a real API server's
        structured merge does.
        """
        if rtype.schema is None:
            return obj, []
        if rtype.crd is not None:
            pruned = validation.prune_custom(obj, rtype.schema)
            unknown = validation.pruned_paths(obj, pruned)
            if apply and unknown:
                return obj, []
            obj = pruned
        else:
            report = decoding.decode_check(obj, rtype.schema, rtype.resolve)
            if report.type_errors:
                raise status.BadRequest(report.type_errors[0])
            unknown = report.unknown_fields
            if apply and unknown:
                return obj, []
            if unknown:
                obj = decoding.drop_unknown(obj, rtype.schema, rtype.resolve)
        if not unknown or opts.field_validation == "Ignore":
            return obj, []
        if opts.field_validation == "Strict":
            fields = ", ".join(f'unknown field "{f}"' for f in unknown)
            error = f"strict decoding error: {fields}"
            raise status.BadRequest(decoding.undecodable(obj, error) if whole_body else error)
        return obj, [f'unknown field "{f}"' for f in unknown]

    def _admit(
        self, rtype: ResourceType, old: Obj | None, obj: Obj, opts: WriteOptions,
        subresource: str = "",
    ) -> None:  # fmt: skip
        """Defaulting and the built-in admission a real API server runs before validation,
        RBAC's escalation check of a role or binding a restricted writer writes, and the
        CSR admission plugins (certificates.admit)."""
        if opts.requester is not None:
            rbac.guard_write(self.store, opts.requester, rtype.group, rtype.plural, obj)
        # Defaulting runs on the object about to be stored (after any merge), so an
        # applier never owns a default it did not send.
        if rtype.crd is None:
            defaults.apply_defaults(obj, rtype.group, rtype.kind)
            if rtype.schema is not None:
                ssa.drop_empty_fields(obj, rtype.schema, rtype.resolve)
        else:
            if rtype.schema is not None:
                validation.default_custom(obj, rtype.schema)
            ssa.drop_empty_metadata_fields(obj, rtype.resolve)
        admit = _ADMISSION.get(rtype.key)
        if admit is not None:
            admit(self, old, obj)
        if rtype.namespaced and not subresource:
            # LimitRanger and Priority mutate, then ResourceQuota checks what they made
            # (their order in kube-apiserver's plugin chain).
            if rtype.key in (limitranger.POD_TYPE, limitranger.CLAIM_TYPE):
                limitranger.admit(self.store, rtype.key, old, obj)
            if rtype.key == POD_TYPE:
                self.priorities.admit_pod(old, obj)
            self.quota.admit(rtype.key, old, obj)
        if rtype.key == certificates.CSR_TYPE:
            certificates.admit(self.store, obj, old, subresource, opts.user, opts.requester)

    def _validating_admission(
        self, operation: str, rtype: ResourceType, old: Obj | None, obj: Obj | None,
        opts: WriteOptions, subresource: str = "",
    ) -> list[str]:  # fmt: skip
        """Validating admission, after validation as in the API server: Priority's check of
        a PriorityClass, then the ValidatingAdmissionPolicies' verdict (admissionpolicy.py),
        their warnings or the refusal."""
        if rtype.key == priority.CLASS_TYPE and obj is not None:
            self.priorities.validate_class(old, obj)
        if not self.policies.active:
            return []
        meta = (obj if obj is not None else old or {})["metadata"]
        name = meta.get("name", "")
        return self.policies.admit(
            admissionpolicy.Request(
                operation, rtype, subresource,
                name if rtype.key == NAMESPACE_TYPE else meta.get("namespace", ""),
                name, obj, old, opts.user, opts.dry_run,
            )
        )  # fmt: skip

    def _validate(self, rtype: ResourceType, obj: Obj, old: Obj | None) -> None:
        name = obj["metadata"].get("name", "")
        if rtype.crd is not None:
            causes = (
                validation.validate_custom(obj, rtype.schema, old)
                if rtype.schema is not None
                else []
            )
            causes = _metadata_causes(obj) + causes
        elif rtype.key == CRD_TYPE:
            causes = validation.validate_builtin(
                obj, old, rtype.group, rtype.kind
            ) + validation.validate_crd(obj, old)
        elif rtype.key == admissionpolicy.POLICY_TYPE:
            causes = validation.validate_builtin(
                obj, old, rtype.group, rtype.kind
            ) + admissionpolicy.compile_causes(obj)
        else:
            causes = validation.validate_builtin(obj, old, rtype.group, rtype.kind)
        if causes:
            raise status.invalid_object(rtype.kind, rtype.group, name, causes)

    def _commit(self, rtype: ResourceType, old: Obj | None, obj: Obj, dry_run: bool) -> Obj:
        if dry_run:
            return obj
        obj["metadata"]["resourceVersion"] = str(self.store.next_resource_version())
        self.store.put(rtype.key, obj, old)
        return obj

    def _remove(self, rtype: ResourceType, obj: Obj) -> Obj:
        final = copy.copy(obj)
        final["metadata"] = {
            **obj["metadata"],
            "resourceVersion": str(self.store.next_resource_version()),
        }
        self.store.remove(rtype.key, final)
        return final

    # --- built-in admission -------------------------------------------------------

    def _admit_namespace(self, old: Obj | None, obj: Obj) -> None:
        if old is None:
            obj["status"] = {"phase": "Active"}
            obj.setdefault("spec", {}).setdefault("finalizers", [NAMESPACE_FINALIZER])

    def _admit_pod(self, old: Obj | None, obj: Obj) -> None:
        """The ServiceAccount admission plugin: the `default` account when none is named, an
        existing account required, and the API access token volume mounted everywhere."""
        if old is not None:
            return
        spec = obj.setdefault("spec", {})
        account_name = spec.get("serviceAccountName") or "default"
        spec["serviceAccountName"] = spec["serviceAccount"] = account_name
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        account = self.store.get(("", "serviceaccounts"), namespace, account_name)
        # A real server waits a moment for the service account controller to create
        # `default`; the local one creates it as the namespace appears.
        if account is None and account_name != "default":
            raise status.admission_forbidden(
                "pods", meta,
                f"error looking up service account {namespace}/{account_name}: "
                f'serviceaccount "{account_name}" not found',
            )  # fmt: skip
        automount = spec.get("automountServiceAccountToken")
        if automount is None:
            automount = (account or {}).get("automountServiceAccountToken", True)
        if not automount:
            return
        containers = [
            c
            for key in ("initContainers", "containers")
            for c in spec.get(key) or []
            if isinstance(c, dict)
        ]
        if any(
            m.get("mountPath") == SERVICE_ACCOUNT_MOUNT
            for c in containers
            for m in c.get("volumeMounts") or []
            if isinstance(m, dict)
        ):
            return  # the pod mounts its own credentials there
        volume = "kube-api-access-" + "".join(random.choices(_NAME_ALPHABET, k=5))
        spec.setdefault("volumes", []).append(
            {
                "name": volume,
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt",
                                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                                                                 "fieldPath": "metadata.namespace"},
                                                    "path": "namespace"}]}},
                    ],
                },
            }
        )  # fmt: skip
        for container in containers:
            container.setdefault("volumeMounts", []).append(
                {"name": volume, "readOnly": True, "mountPath": SERVICE_ACCOUNT_MOUNT}
            )

    def _admit_service(self, old: Obj | None, obj: Obj) -> None:
        _drop_type_dependent_fields(old, obj)
        self._admit_cluster_ip(old, obj)
        self._admit_node_ports(old, obj)

    def _admit_cluster_ip(self, old: Obj | None, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("type") == "ExternalName":
            # An ExternalName service has no cluster IP; switching to it releases one.
            for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                spec.pop(field, None)
            return
        if old is not None:
            old_ip = old.get("spec", {}).get("clusterIP")
            if old_ip and not spec.get("clusterIP"):
                # An update that leaves the IP out keeps it, as the API server does.
                spec["clusterIP"] = old_ip
                spec["clusterIPs"] = old.get("spec", {}).get("clusterIPs", [old_ip])
            return
        wanted = spec.get("clusterIP")
        if wanted == "None":
            spec["clusterIPs"] = ["None"]
            return
        if wanted:
            self._check_cluster_ip(wanted)
            spec["clusterIPs"] = [wanted]
            return
        spec["clusterIP"] = self._allocate_cluster_ip()
        spec["clusterIPs"] = [spec["clusterIP"]]

    def _used_cluster_ips(self) -> set[str]:
        return {s.get("spec", {}).get("clusterIP", "") for s in self.store.items(("", "services"))}

    def _check_cluster_ip(self, wanted: str) -> None:
        try:
            address = ipaddress.ip_address(wanted)
        except ValueError:
            return  # validation reports the malformed address
        if address not in self._service_net:
            raise status.invalid_object(
                "Service", "", "",
                [status.invalid("spec.clusterIPs", wanted, f"failed to allocate IP {wanted}: the provided IP ({wanted}) is not in the valid range. The range of valid IPs is {self._service_net}")],
            )  # fmt: skip
        if wanted in self._used_cluster_ips():
            raise status.invalid_object(
                "Service", "", "",
                [status.invalid("spec.clusterIPs", [wanted], f"failed to allocate IP {wanted}: provided IP is already allocated")],
            )  # fmt: skip

    def _allocate_cluster_ip(self) -> str:
        used = self._used_cluster_ips()
        net = self._service_net
        # Start past the apiserver's own (.1) and DNS's conventional (.10) addresses.
        for offset in range(11, net.num_addresses - 1):
            candidate = str(net.network_address + offset)
            if candidate not in used:
                return candidate
        raise status.InternalError("failed to allocate a serviceIP: range is full")

    def _admit_node_ports(self, old: Obj | None, obj: Obj) -> None:
        """Node ports for NodePort and LoadBalancer services, as the service REST layer
        allocates them: a port the user asks for must be free and in range; an update
        that leaves a port's nodePort out keeps the one it had; a service that stops
        needing node ports gives them back."""
        spec = obj["spec"]
        kind = spec.get("type")
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        old_spec = (old or {}).get("spec") or {}
        old_ports = {
            (p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
            for p in old_spec.get("ports") or []
            if isinstance(p, dict) and p.get("nodePort")
        }
        needs = kind in ("NodePort", "LoadBalancer") and not (
            kind == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is False
        )
        if not needs:
            # dropTypeDependentFields: node ports the user did not change go with the type.
            if old_spec.get("type") in ("NodePort", "LoadBalancer"):
                for port in ports:
                    key = (port.get("port"), port.get("protocol", "TCP"))
                    if port.get("nodePort") and old_ports.get(key) == port["nodePort"]:
                        del port["nodePort"]
                if spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
                    spec.pop("healthCheckNodePort", None)
            return
        kept = set(old_ports.values())
        if old_spec.get("healthCheckNodePort"):
            kept.add(old_spec["healthCheckNodePort"])
        used = self._used_node_ports(obj) - kept
        for index, port in enumerate(ports):
            wanted = port.get("nodePort") or old_ports.get(
                (port.get("port"), port.get("protocol", "TCP"))
            )
            port["nodePort"] = self._node_port(wanted, used, f"spec.ports[{index}].nodePort")
            used.add(port["nodePort"])
        if kind == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local":
            wanted = spec.get("healthCheckNodePort") or old_spec.get("healthCheckNodePort")
            spec["healthCheckNodePort"] = self._node_port(wanted, used, "spec.healthCheckNodePort")

    def _used_node_ports(self, obj: Obj) -> set[int]:
        meta = obj["metadata"]
        me = (meta.get("namespace", ""), meta.get("name"))
        used: set[int] = set()
        for svc in self.store.items(("", "services")):
            svc_meta = svc["metadata"]
            if (svc_meta.get("namespace", ""), svc_meta["name"]) == me:
                continue
            spec = svc.get("spec") or {}
            used.update(p["nodePort"] for p in spec.get("ports") or [] if p.get("nodePort"))
            if spec.get("healthCheckNodePort"):
                used.add(spec["healthCheckNodePort"])
        return used

    def _node_port(self, wanted: Any, used: set[int], path: str) -> int:
        low, high = NODE_PORT_RANGE
        if wanted:
            if not isinstance(wanted, int) or not low <= wanted <= high:
                raise status.invalid_object(
                    "Service", "", "",
                    [status.invalid(path, wanted, f"provided port is not in the valid range. The range of valid ports is {low}-{high}")],
                )  # fmt: skip
            if wanted in used:
                raise status.invalid_object(
                    "Service", "", "",
                    [status.invalid(path, wanted, "provided port is already allocated")],
                )  # fmt: skip
            return wanted
        free = high - low + 1 - len(used)
        if free <= 0:
            raise status.InternalError("failed to allocate a nodePort: range is full")
        # Random, as the real allocator: a port freed is not handed straight to the next service.
        while True:
            candidate = random.randint(low, high)
            if candidate not in used:
                return candidate

    def _admit_claim(self, old: Obj | None, obj: Obj) -> None:
        """DefaultStorageClass and StorageObjectInUseProtection, at create only."""
        if old is not None:
            return
        spec = obj.setdefault("spec", {})
        if spec.get("storageClassName") is None:
            default = self._default_storage_class()
            if default is not None:
                spec["storageClassName"] = default
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if PVC_PROTECTION not in finalizers:
            meta["finalizers"] = [*finalizers, PVC_PROTECTION]

    def _default_storage_class(self) -> str | None:
        """The class annotated as default; the newest wins when several are."""
        best: tuple[str, str] | None = None
        for sc in self.store.items(("storage.k8s.io", "storageclasses")):
            meta = sc["metadata"]
            annotations = meta.get("annotations") or {}
            if annotations.get(DEFAULT_CLASS_ANNOTATION) != "true":
                continue
            rank = (meta.get("creationTimestamp", ""), meta["name"])
            if best is None or rank > best:
                best = rank
        return best[1] if best else None


def _drop_type_dependent_fields(old: Obj | None, obj: Obj) -> None:
    """The service REST layer's dropTypeDependentFields for what defaulting filled in: a
    Service leaving LoadBalancer (or external access) loses the fields only that type
    takes and its load balancer status, unless the update itself changed them (then
    validation speaks). Without it, applying a LoadBalancer Service as ClusterIP failed on
    its defaulted allocateLoadBalancerNodePorts and externalTrafficPolicy."""
    if old is None:
        return
    spec, before = obj.setdefault("spec", {}), old.get("spec") or {}
    if before.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        for key in ("allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if key in spec and spec[key] == before.get(key):
                del spec[key]
        if isinstance(obj.get("status"), dict):
            obj["status"]["loadBalancer"] = {}
    if (
        _externally_accessible(before)
        and not _externally_accessible(spec)
        and spec.get("externalTrafficPolicy") == before.get("externalTrafficPolicy")
    ):
        spec.pop("externalTrafficPolicy", None)


def _externally_accessible(spec: Obj) -> bool:
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (
        kind == "ClusterIP" and bool(spec.get("externalIPs"))
    )


#: Built-in admission per type: what the API server itself fills in before validation.
_ADMISSION: dict[tuple[str, str], Callable[[Cluster, Obj | None, Obj], None]] = {
    NAMESPACE_TYPE: Cluster._admit_namespace,  # phase Active and the `kubernetes` finalizer
    ("", "pods"): Cluster._admit_pod,  # service account and its token volume
    ("", "services"): Cluster._admit_service,  # clusterIP and node port allocation
    ("", "persistentvolumeclaims"): Cluster._admit_claim,  # default class, in-use protection
}


def parse_apply_body(body: bytes) -> Any:
    """An apply body is YAML; JSON (what kubectl and lightkube send) takes the fast path."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(body, Loader=loader)
    except yaml.YAMLError as exc:
        raise status.BadRequest(f"error decoding YAML: {exc}") from None


def _check_resource_version(rtype: ResourceType, name: str, meta: dict[str, Any], old: Obj) -> None:
    """A write that names a resourceVersion succeeds only against that version (optimistic concurrency)."""
    given = meta.get("resourceVersion")
    if given and given != old["metadata"]["resourceVersion"]:
        raise status.conflict(
            rtype.plural, rtype.group, name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )  # fmt: skip


def _with_spec_field(old: Obj, new: Obj, key: str) -> Obj:
    """A copy of `old` with `new`'s `spec.KEY` (none when `new`'s is absent or empty): what
    a subresource that writes one field of the spec keeps of a write."""
    merged = _private_copy(old)
    value = (new.get("spec") or {}).get(key)
    if value:
        merged.setdefault("spec", {})[key] = value
    else:
        merged.get("spec", {}).pop(key, None)
    return merged


def _check_uid_precondition(rtype: ResourceType, name: str, given: str | None, old: Obj) -> None:
    """An update's `metadata.uid`, or a Namespace delete's `preconditions.uid`, must name
    the stored object: otherwise a 409, in kube-apiserver's storage words."""
    stored = old["metadata"].get("uid")
    if given and given != stored:
        raise status.conflict(
            rtype.plural, rtype.group, name,
            f"Precondition failed: UID in precondition: {given}, UID in object meta: {stored}",
        )  # fmt: skip


def _check_delete_uid_precondition(
    rtype: ResourceType, name: str, given: str | None, old: Obj
) -> None:
    """A delete's `preconditions.uid` must name the stored object: otherwise a 409 in the
    words of kube-apiserver's `rest.BeforeDelete`, which checks it before its storage does
    and names the resource by its kind (`ConfigMap`, `Deployment.apps`)."""
    stored = old["metadata"].get("uid")
    if given and given != stored:
        raise status.conflict(
            rtype.kind, rtype.group, name,
            f"the UID in the precondition ({given}) does not match the UID in record "
            f"({stored}). The object might have been deleted and then recreated",
        )  # fmt: skip


def _check_applied_uid(
    rtype: ResourceType, name: str, meta: dict[str, Any], old: Obj | None
) -> None:
    """An apply or a patch that names a uid changes that object only, as kube-apiserver's
    patcher answers: none there is a 409 (an apply would create one), another one's uid a
    422 (the uid is immutable), so that a client can apply to the object it read and never
    make a new one."""
    given = meta.get("uid")
    if not given:
        return
    if old is None:
        raise status.conflict(
            rtype.plural, rtype.group, name,
            f"uid mismatch: the provided object specified uid {given}, and no existing object "
            "was found",
        )  # fmt: skip
    if given != old["metadata"].get("uid"):
        raise status.invalid_object(
            rtype.kind,
            rtype.group,
            name,
            [status.invalid("metadata.uid", given, "field is immutable")],
        )


def _settle_name(meta: dict[str, Any], name: str) -> None:
    if meta.get("name") and meta["name"] != name:
        raise status.BadRequest(
            f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
        )
    meta["name"] = name


def _held(obj: Obj) -> bool:
    """Whether an object marked for deletion must stay: finalizers (a namespace's spec ones
    too), or a pod's grace period while its kubelet stops the containers."""
    if obj["metadata"].get("finalizers"):
        return True
    if obj.get("kind") == "Pod" and int(obj["metadata"].get("deletionGracePeriodSeconds") or 0) > 0:
        return True
    return obj.get("kind") == "Namespace" and bool((obj.get("spec") or {}).get("finalizers"))


def _pod_grace_period(pod: Obj, requested: int | None) -> int:
    """The pod strategy's CheckGracefulDelete: how long the kubelet gets to stop the pod.

    An unscheduled or finished pod has no running containers, so it goes at once;
    otherwise the request's period, else the pod's terminationGracePeriodSeconds.
    Grace only ever shortens: a period already under way is never extended.
    """
    if not (pod.get("spec") or {}).get("nodeName"):
        return 0
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return 0
    grace = requested
    if grace is None:
        grace = int((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30) or 0)
    grace = max(grace, 0)
    current = pod["metadata"].get("deletionGracePeriodSeconds")
    if pod["metadata"].get("deletionTimestamp") and current is not None:
        grace = min(grace, int(current))
    return grace


def _has_generation(rtype: ResourceType) -> bool:
    """Kinds with a spec track generation; ConfigMaps and the like have none, as on a real server."""
    if rtype.crd is not None:
        return True
    props = rtype.resolve(rtype.schema).get("properties", {}) if rtype.schema else {}
    return "spec" in props


_Doc = TypeVar("_Doc")


def _private_copy(obj: _Doc) -> _Doc:
    """A deep copy of a JSON document, sharing nothing with it: what a write edits in
    place, never the stored object (a JSON round trip costs a fraction of copy.deepcopy)."""
    copied: _Doc = orjson.loads(orjson.dumps(obj))
    return copied


def _spec_changed(old: Obj, new: Obj) -> bool:
    """Generation counts changes to anything but metadata and status."""
    keys = (set(old) | set(new)) - {"metadata", "status", "apiVersion", "kind"}
    return any(old.get(k) != new.get(k) for k in keys)


def _same_object(old: Obj, new: Obj) -> bool:
    """Equal apart from resourceVersion and the times in managedFields."""
    if old.keys() != new.keys():
        return False
    for key in old:
        if key == "metadata":
            continue
        if old[key] != new[key]:
            return False
    old_meta, new_meta = old["metadata"], new["metadata"]
    skip = {"resourceVersion", "managedFields"}
    if {k: v for k, v in old_meta.items() if k not in skip} != {
        k: v for k, v in new_meta.items() if k not in skip
    }:
        return False
    return _fields_only(old_meta.get("managedFields")) == _fields_only(
        new_meta.get("managedFields")
    )


def _fields_only(entries: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "time"} for e in entries or []]


def _metadata_causes(obj: Obj) -> list[status.Cause]:
    """Name checks every object gets, custom kinds included."""
    causes: list[status.Cause] = validation.validate_object_meta(obj)
    return causes


def _encode_continue(position: str, list_rv: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": int(list_rv), "start": position})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[str, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = orjson.loads(base64.urlsafe_b64decode(padded))
        return str(data["start"]), str(data["rv"])
    except (ValueError, KeyError, TypeError):
        raise status.BadRequest(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        ) from None
