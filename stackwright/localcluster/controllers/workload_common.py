"""What the workload controllers share: an index of their objects, pod facts, pod making.

`OwnerIndex` keeps the objects the workload controllers read (pods, replica sets,
jobs, controller revisions, …) by namespace and by the uid of their controller
owner, fed synchronously by the store, so a reconcile reads "the pods of this
ReplicaSet" without scanning every pod — the local cluster's informer cache. It is
always exactly the store's state (writes update it before they return), so the
controllers need none of client-go's "expectations".

The rest are small pure functions with upstream's names and rules: pod readiness
and availability (minReadySeconds), controller references, pod templates into
pods, int-or-percent scaling, template hashes, conditions. Durations from specs
(progressDeadlineSeconds, minReadySeconds, TTLs, back-offs) count in simulated
seconds (`SECOND`, the kubelet's), and `Moments` keeps the exact instants behind
whole-second API timestamps so those short durations are judged precisely.

Must never: hand out an object for editing (the index holds the store's own
objects; callers copy before they change anything), or scan every object of a type
on a hot path.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from stackwright.localcluster import selectors
from stackwright.localcluster import status as api_status
from stackwright.localcluster.cluster import Cluster, timestamp
from stackwright.localcluster.controllers.kubelet import KUBELET_SECOND
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.store import DELETED, Change, Obj, TypeKey

POD = ("", "pods")
REPLICA_SET = ("apps", "replicasets")
REPLICATION_CONTROLLER = ("", "replicationcontrollers")
DEPLOYMENT = ("apps", "deployments")
STATEFUL_SET = ("apps", "statefulsets")
DAEMON_SET = ("apps", "daemonsets")
CONTROLLER_REVISION = ("apps", "controllerrevisions")
JOB = ("batch", "jobs")
CRON_JOB = ("batch", "cronjobs")
CLAIM = ("", "persistentvolumeclaims")
NODE = ("", "nodes")
PDB = ("policy", "poddisruptionbudgets")
HPA = ("autoscaling", "horizontalpodautoscalers")

#: The field manager kube-controller-manager's controllers write with.
MANAGER = "kube-controller-manager"

#: Types the index keeps, by namespace and by controller owner.
INDEXED: tuple[TypeKey, ...] = (
    POD,
    REPLICA_SET,
    REPLICATION_CONTROLLER,
    DEPLOYMENT,
    STATEFUL_SET,
    DAEMON_SET,
    CONTROLLER_REVISION,
    JOB,
    CRON_JOB,
    PDB,
    HPA,
)

#: One second of a duration a real controller counts — progressDeadlineSeconds,
#: minReadySeconds, activeDeadlineSeconds, TTLs, back-offs, sync periods — in Pace base
#: seconds: the kubelet's compression (probe delays, grace periods, restart back-offs), so
#: a simulated second is the same length everywhere in the cluster.
SECOND = KUBELET_SECOND

# Characters of generated suffixes and hashes (apimachinery's rand.SafeEncodeString).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


class Moments:
    """The exact instants behind whole-second timestamps, where this process saw them made.

    API timestamps have whole seconds, and a simulated second is a twentieth of one
    (SECOND), so `minReadySeconds` or `progressDeadlineSeconds` judged from the
    stored text alone could be off by twenty simulated seconds. A controller notes
    the instant when it writes a time (or sees one written); a time it did not see
    being made (after a restart) falls back to the text.
    """

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, tuple[str, datetime.datetime]]] = {}

    def note(self, uid: str, what: str, text: str, moment: datetime.datetime) -> None:
        self._seen.setdefault(uid, {})[what] = (text, moment)

    def noted(self, uid: str, what: str) -> str | None:
        """The text of the time last noted for (uid, what)."""
        seen = self._seen.get(uid, {}).get(what)
        return seen[0] if seen is not None else None

    def when(self, uid: str, what: str, text: Any) -> datetime.datetime | None:
        seen = self._seen.get(uid, {}).get(what)
        if seen is not None and seen[0] == text:
            return seen[1]
        return parse_time(text)

    def forget(self, uid: str) -> None:
        self._seen.pop(uid, None)


class OwnerIndex:
    """The workload objects by namespace and by the uid of their controller owner."""

    def __init__(self, cluster: Cluster, types: Iterable[TypeKey] = INDEXED) -> None:
        self._clock = cluster.clock
        self.moments = Moments()
        self._types = frozenset(types)
        self._by_namespace: dict[TypeKey, dict[str, dict[str, Obj]]] = {}
        self._by_owner: dict[TypeKey, dict[str, dict[tuple[str, str], Obj]]] = {}
        self._owner_of: dict[tuple[TypeKey, str, str], str] = {}
        for key in self._types:
            for obj in cluster.store.items(key):
                self._put(key, obj)
        cluster.store.add_listener(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.key not in self._types:
            return
        if change.type == DELETED:
            self._drop(change.key, change.namespace, change.name)
            self.moments.forget(change.obj["metadata"].get("uid", ""))
        else:
            self._put(change.key, change.obj)
            if change.key == POD:
                self._note_ready(change.obj)

    def _note_ready(self, pod: Obj) -> None:
        cond = ready_condition(pod)
        if cond is None or cond.get("status") != "True":
            return
        uid, since = pod["metadata"].get("uid", ""), cond.get("lastTransitionTime")
        if self.moments.noted(uid, "ready") != since:
            self.moments.note(uid, "ready", str(since), self._clock())

    def _put(self, key: TypeKey, obj: Obj) -> None:
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        self._by_namespace.setdefault(key, {}).setdefault(namespace, {})[name] = obj
        ref = controller_ref(obj)
        owner = ref["uid"] if ref else ""
        slot = (key, namespace, name)
        previous = self._owner_of.get(slot)
        if previous is not None and previous != owner:
            self._release(key, previous, namespace, name)
        if owner:
            self._owner_of[slot] = owner
            self._by_owner.setdefault(key, {}).setdefault(owner, {})[(namespace, name)] = obj
        else:
            self._owner_of.pop(slot, None)

    def _drop(self, key: TypeKey, namespace: str, name: str) -> None:
        in_namespace = self._by_namespace.get(key, {}).get(namespace)
        if in_namespace is not None:
            in_namespace.pop(name, None)
            if not in_namespace:
                del self._by_namespace[key][namespace]
        owner = self._owner_of.pop((key, namespace, name), None)
        if owner is not None:
            self._release(key, owner, namespace, name)

    def _release(self, key: TypeKey, owner: str, namespace: str, name: str) -> None:
        owned = self._by_owner.get(key, {}).get(owner)
        if owned is not None:
            owned.pop((namespace, name), None)
            if not owned:
                del self._by_owner[key][owner]

    # --- reads ---------------------------------------------------------------------

    def owned(self, key: TypeKey, owner_uid: str) -> list[Obj]:
        """Objects of `key` whose controller owner has this uid."""
        return list(self._by_owner.get(key, {}).get(owner_uid, {}).values())

    def in_namespace(self, key: TypeKey, namespace: str) -> list[Obj]:
        return list(self._by_namespace.get(key, {}).get(namespace, {}).values())

    def orphans(self, key: TypeKey, namespace: str) -> list[Obj]:
        """Objects in a namespace with no controller owner (candidates for adoption)."""
        return [
            obj
            for obj in self._by_namespace.get(key, {}).get(namespace, {}).values()
            if controller_ref(obj) is None
        ]

    def namespaces(self, key: TypeKey) -> list[str]:
        return list(self._by_namespace.get(key, {}))


# --- owner references -------------------------------------------------------------------


def controller_ref(obj: Obj) -> dict[str, Any] | None:
    """The ownerReference with `controller: true`, if any (metav1.GetControllerOf)."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller") is True:
            return dict(ref)
    return None


def owner_reference(owner: Obj) -> dict[str, Any]:
    """A controller reference to `owner` that blocks its foreground deletion (NewControllerRef)."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_key(obj: Obj, kind: str) -> tuple[str, str] | None:
    """(namespace, name) of the object's controller when it is of `kind`."""
    ref = controller_ref(obj)
    if ref is None or ref.get("kind") != kind:
        return None
    return (obj["metadata"].get("namespace", ""), str(ref.get("name", "")))


# --- label selectors ---------------------------------------------------------------------

_SELECTORS: dict[bytes, selectors.LabelSelector] = {}


def claim_owned(
    index: OwnerIndex,
    key: TypeKey,
    owner: Obj,
    owner_selector: selectors.LabelSelector,
    write: Callable[[Obj], Obj],
    *,
    release: bool = True,
    adoptable: Callable[[Obj], bool] = lambda obj: True,
) -> list[Obj]:
    """The objects `owner` controls, as kube-controller-manager's ControllerRefManager
    claims them: owned ones its selector still matches (with `release`, the others are let
    go), plus orphans in its namespace the selector matches (adopted). An owner being
    deleted keeps what it owns and adopts nothing. Writes that fail are skipped: the next
    reconcile tries again."""
    uid = owner["metadata"]["uid"]
    deleting = bool(owner["metadata"].get("deletionTimestamp"))
    claimed: list[Obj] = []
    for obj in index.owned(key, uid):
        if deleting or not release or owner_selector.matches(labels_of(obj)):
            claimed.append(obj)
        elif not is_terminating(obj):
            let_go = copy_obj(obj)
            refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            if refs:
                let_go["metadata"]["ownerReferences"] = refs
            else:
                let_go["metadata"].pop("ownerReferences", None)
            with contextlib.suppress(api_status.APIError):
                write(let_go)
    if deleting:
        return claimed
    for obj in index.orphans(key, owner["metadata"].get("namespace", "")):
        if is_terminating(obj) or not owner_selector.matches(labels_of(obj)) or not adoptable(obj):
            continue
        adopted = copy_obj(obj)
        adopted["metadata"].setdefault("ownerReferences", []).append(owner_reference(owner))
        with contextlib.suppress(api_status.APIError):
            claimed.append(write(adopted))
    return claimed


def pod_owner_keys(
    change: Change,
    kind: str,
    candidates: Iterable[Obj],
    selector_of: Any,
    *,
    adopt_orphans: bool = True,
) -> list[tuple[str, str]]:
    """The sets of `kind` a pod change concerns: its controller (before and after the
    change), or, for an orphan, every set in `candidates` whose selector matches it
    (they may adopt it)."""
    keys: list[tuple[str, str]] = []
    for obj in (change.obj, change.old):
        key = controller_key(obj, kind) if obj is not None else None
        if key is not None and key not in keys:
            keys.append(key)
    orphan = not keys and change.type != DELETED and controller_ref(change.obj) is None
    if orphan and adopt_orphans:
        pod_labels = labels_of(change.obj)
        for owner in candidates:
            if selector_of(owner).matches(pod_labels):
                keys.append((change.namespace, owner["metadata"]["name"]))
    return keys


def selector(spec_selector: Mapping[str, Any] | None) -> selectors.LabelSelector:
    """A metav1.LabelSelector parsed once: workloads' selectors are immutable, and few."""
    if spec_selector is None:
        return selectors.NOTHING
    raw = orjson.dumps(spec_selector, option=orjson.OPT_SORT_KEYS)
    parsed = _SELECTORS.get(raw)
    if parsed is None:
        try:
            parsed = selectors.label_selector_from_dict(spec_selector)
        except Exception:  # an invalid stored selector selects nothing, as upstream
            parsed = selectors.NOTHING
        if len(_SELECTORS) > 10_000:
            _SELECTORS.clear()
        _SELECTORS[raw] = parsed
    return parsed


def map_selector(labels: Mapping[str, Any] | None) -> selectors.LabelSelector:
    """A ReplicationController's (or Service's) map selector; empty selects nothing here."""
    if not labels:
        return selectors.NOTHING
    return selector({"matchLabels": dict(labels)})


def labels_of(obj: Obj) -> dict[str, str]:
    labels: dict[str, str] = obj["metadata"].get("labels") or {}
    return labels


# --- pods ----------------------------------------------------------------------------------


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: Obj) -> bool:
    """controller.IsPodActive: not finished and not being deleted."""
    return not is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def ready_condition(pod: Obj) -> dict[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return dict(cond)
    return None


def is_ready(pod: Obj) -> bool:
    cond = ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def parse_time(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def available_in(
    pod: Obj, min_ready: float, now: datetime.datetime, moments: Moments | None = None
) -> float | None:
    """Seconds until a ready pod counts as available: 0 when it is, None when it is not ready.

    podutil.IsPodAvailable: Ready for at least minReadySeconds (already in wall-clock
    seconds), judged by the Ready condition's lastTransitionTime — its exact instant
    when `moments` saw it made.
    """
    cond = ready_condition(pod)
    if cond is None or cond.get("status") != "True":
        return None
    if min_ready <= 0:
        return 0.0
    text = cond.get("lastTransitionTime")
    since = (
        moments.when(pod["metadata"].get("uid", ""), "ready", text)
        if moments is not None
        else parse_time(text)
    )
    if since is None:
        return 0.0
    left = (since - now).total_seconds() + min_ready
    return max(left, 0.0)


def is_available(pod: Obj, min_ready: float, now: datetime.datetime) -> bool:
    return available_in(pod, min_ready, now) == 0.0


def restart_count(pod: Obj) -> int:
    status = pod.get("status") or {}
    return sum(
        int(c.get("restartCount") or 0)
        for key in ("initContainerStatuses", "containerStatuses")
        for c in status.get(key) or ()
    )


def deletion_rank(pod: Obj) -> tuple[Any, ...]:
    """Sort key putting the pods to delete first (controller.ActivePodsWithRanks).

    Unassigned before assigned, Pending before Unknown before Running, not ready
    before ready, lower pod-deletion-cost first, ready for less time first, more
    restarts first, newer first.
    """
    status = pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase", ""), 0)
    ready = is_ready(pod)
    annotations = pod["metadata"].get("annotations") or {}
    try:
        cost = int(annotations.get("controller.kubernetes.io/pod-deletion-cost", 0))
    except (TypeError, ValueError):
        cost = 0
    cond = ready_condition(pod) or {}
    ready_since = str(cond.get("lastTransitionTime") or "") if ready else ""
    created = str(pod["metadata"].get("creationTimestamp") or "")
    return (
        1 if (pod.get("spec") or {}).get("nodeName") else 0,
        phase_rank,
        1 if ready else 0,
        cost,
        _descending(ready_since),
        -restart_count(pod),
        _descending(created),
    )


def _descending(text: str) -> tuple[int, ...]:
    """A key that sorts strings (RFC 3339 times here) newest first."""
    return tuple(-ord(c) for c in text)


def pod_from_template(
    template: Obj,
    owner: Obj,
    *,
    name: str = "",
    generate_name: str = "",
    extra_labels: Mapping[str, str] | None = None,
) -> Obj:
    """A pod for `owner` from its template (controller.GetPodFromTemplate)."""
    copied: Obj = orjson.loads(orjson.dumps(template))
    tmeta = copied.get("metadata") or {}
    meta: dict[str, Any] = {
        "namespace": owner["metadata"].get("namespace", ""),
        "labels": {**(tmeta.get("labels") or {}), **(extra_labels or {})},
        "ownerReferences": [owner_reference(owner)],
    }
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = generate_name or f"{owner['metadata']['name']}-"
    if tmeta.get("annotations"):
        meta["annotations"] = tmeta["annotations"]
    if tmeta.get("finalizers"):
        meta["finalizers"] = tmeta["finalizers"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copied.get("spec") or {}}


# --- arithmetic ---------------------------------------------------------------------------


class BadIntOrPercent(ValueError):
    pass


def scaled_value(value: Any, total: int, *, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int, or a percent of `total`, rounded."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise BadIntOrPercent(f"invalid value for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise BadIntOrPercent(
            f"invalid value for IntOrString: invalid type: string is not a percentage ({text!r})"
        )
    try:
        percent = int(text[:-1])
    except ValueError:
        raise BadIntOrPercent(f"invalid value {text!r}: must be an integer percentage") from None
    scaled = percent * total
    # Integer arithmetic, so 33% of 3 is exactly 0.99 rounded, never 0.9899999.
    return -(-scaled // 100) if round_up else scaled // 100


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """deploymentutil.ResolveFenceposts: surge rounds up, unavailable down, never both 0."""
    surge = scaled_value(max_surge, desired, round_up=True)
    unavailable = scaled_value(max_unavailable, desired, round_up=False)
    if surge == 0 and unavailable == 0:
        # A rollout could make no step at all; upstream allows one unavailable pod.
        unavailable = 1
    return surge, unavailable


# --- hashes -----------------------------------------------------------------------------------


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: map each character onto the no-vowel alphabet."""
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in text)


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def fnv32(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = (h * 0x01000193) & 0xFFFFFFFF
        h ^= byte
    return h


def template_hash(template: Any, collision_count: int | None = None) -> str:
    """controller.ComputeHash: a short stable name part for a pod template.

    Upstream hashes Go's printed form of the struct; this hashes canonical JSON, so
    the values differ from a real cluster's but have the same shape and properties
    (same template → same hash; a collision count perturbs it).
    """
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += (collision_count & 0xFFFFFFFF).to_bytes(8, "little")
    return safe_encode(str(fnv32a(data)))


def revision_hash(data: Any, collision_count: int | None = None) -> str:
    """history.HashControllerRevision over a revision's data."""
    raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv32(raw)))


# --- conditions and status -----------------------------------------------------------------


def find_condition(
    conditions: Iterable[Mapping[str, Any]] | None, kind: str
) -> dict[str, Any] | None:
    for cond in conditions or ():
        if cond.get("type") == kind:
            return dict(cond)
    return None


def set_condition(
    conditions: list[dict[str, Any]],
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: str,
    *,
    update_time: bool = False,
    probe_time: bool = False,
) -> bool:
    """Set a condition in place; the transition time moves only when the status changes.

    Returns whether anything changed. `update_time` adds `lastUpdateTime` (the
    Deployment's conditions carry one); `probe_time` adds `lastProbeTime` (Jobs').
    """
    for index, cond in enumerate(conditions):
        if cond.get("type") != kind:
            continue
        if (
            cond.get("status") == status
            and cond.get("reason") == reason
            and cond.get("message") == message
        ):
            return False
        new = _condition(kind, status, reason, message, now, update_time, probe_time)
        if cond.get("status") == status:
            new["lastTransitionTime"] = cond.get("lastTransitionTime", now)
        conditions[index] = new
        return True
    conditions.append(_condition(kind, status, reason, message, now, update_time, probe_time))
    return True


def _condition(
    kind: str, status: str, reason: str, message: str, now: str, update_time: bool, probe_time: bool
) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": kind, "status": status}
    if probe_time:
        cond["lastProbeTime"] = now
    if update_time:
        cond["lastUpdateTime"] = now
    cond["lastTransitionTime"] = now
    cond["reason"] = reason
    cond["message"] = message
    return cond


def remove_condition(conditions: list[dict[str, Any]], kind: str) -> bool:
    before = len(conditions)
    conditions[:] = [c for c in conditions if c.get("type") != kind]
    return len(conditions) != before


def omit_zero(status: dict[str, Any], *keys: str) -> dict[str, Any]:
    """Drop int fields that are 0, as Go's `omitempty` does in the real API's JSON."""
    for key in keys:
        if not status.get(key):
            status.pop(key, None)
    return status


def spec_seconds(pace: Pace, seconds: float) -> float:
    """Wall-clock seconds of `seconds` simulated seconds (see SECOND), at the cluster's speed."""
    return pace.seconds(seconds * SECOND)


def now_text(cluster: Cluster) -> str:
    return timestamp(cluster.clock())


def copy_obj(obj: Obj) -> Obj:
    """A private deep copy of a stored object (a JSON round trip: fast, and exact for JSON)."""
    copied: Obj = orjson.loads(orjson.dumps(obj))
    return copied
