"""When is a Kubernetes object ready? Per-kind rules, as a pure function.

`evaluate(obj, related)` looks at one live object and the objects around it (its
Pods, ReplicaSets, EndpointSlices, StorageClasses, recent Events) and answers a
`Readiness`: a state and a one-line message for the user. It does no I/O; the
waiting loop (`waiting.py`) feeds it from watches and decides when to stop.

States, and what the waiting loop does with them:

    ready     done
    waiting   keep watching; the message says what for
    failing   a failure the cluster keeps retrying (ImagePullBackOff, CrashLoopBackOff,
              CreateContainerConfigError, ReplicaFailure, a controller's FailedCreate, a
              claim's missing StorageClass...):
              fail if it lasts a short grace
    failed    will not recover by itself (Job Failed, Pod Failed, ProgressDeadlineExceeded,
              InvalidImageName, a CRD whose names were refused): fail now

The rules follow `kubectl rollout status` for workloads, Pulumi's documented
await rules for Services and Ingresses, and kstatus for everything else, with the
edge cases users hit elsewhere made to work: a Service without a selector is ready
at once, a PVC whose StorageClass binds on first consumer is ready while Pending
(so its workload can be created), an Ingress is ready once admitted whether or
not its backend Service exists, a service account token Secret once the token
controller has put its token in it (so what reads `data.token` gets it). Annotations tune it per object:
`stackwright.io/skip-await: "true"`, `stackwright.io/timeout-seconds: "N"`,
`stackwright.io/wait-for` (`condition=Ready`, `condition=Available=False`,
`jsonpath={.status.phase}=Running`, or a JSON list of those, all required).
"""

from __future__ import annotations

import difflib
import enum
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from stackwright.model import deletion_propagation

__all__ = [
    "SKIP_AWAIT",
    "TIMEOUT_SECONDS",
    "WAIT_FOR",
    "Readiness",
    "Related",
    "State",
    "WaitCondition",
    "check_annotations",
    "evaluate",
    "needs",
    "parse_wait_for",
    "pod_status",
    "skip_await",
    "timeout_seconds",
    "trivially_ready",
    "waits_for",
]

SKIP_AWAIT = "stackwright.io/skip-await"
TIMEOUT_SECONDS = "stackwright.io/timeout-seconds"
WAIT_FOR = "stackwright.io/wait-for"
#: The annotations that change how an object is waited for (validated before any wait).
_WAIT_ANNOTATIONS = frozenset({SKIP_AWAIT, TIMEOUT_SECONDS, WAIT_FOR})

Obj = Mapping[str, Any]
#: The Secret type whose `data.token` kube-controller-manager fills.
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"


class State(enum.Enum):
    READY = "ready"
    WAITING = "waiting"
    FAILING = "failing"
    FAILED = "failed"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {State.READY: 0, State.WAITING: 1, State.FAILING: 2, State.FAILED: 3}


@dataclass(frozen=True)
class Readiness:
    state: State
    message: str
    #: The Pod (or the object itself) the message is about; its Events may explain more.
    culprit: str = ""

    @property
    def ready(self) -> bool:
        return self.state is State.READY


@dataclass(frozen=True)
class Related:
    """Objects in the same namespace that a rule may look at; unrelated ones are filtered out here."""

    pods: Sequence[Obj] = ()
    replicasets: Sequence[Obj] = ()
    endpointslices: Sequence[Obj] = ()
    endpoints: Sequence[Obj] = ()
    storageclasses: Sequence[Obj] = ()
    #: None when they could not be listed (a 403): nothing is said of an Ingress's class.
    ingressclasses: Sequence[Obj] | None = None
    events: Sequence[Obj] = ()


# Container waiting reasons. The kubelet keeps retrying the first set, so they could
# clear up (a registry hiccup, a ConfigMap created a moment later): "failing", with grace.
_FAILING_REASONS = frozenset(
    {
        "ImagePullBackOff",
        "ErrImagePull",
        "CrashLoopBackOff",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
        "PreCreateHookError",
        "PostStartHookError",
    }
)
# ...and these cannot change without a new Pod spec.
_FAILED_REASONS = frozenset({"InvalidImageName", "ErrImageNeverPull"})


# --- annotations -------------------------------------------------------------------------


def _annotations(obj: Obj) -> Mapping[str, Any]:
    return _map(_map(obj.get("metadata")).get("annotations"))


def _skip_await_text(obj: Obj) -> str | None:
    """The `stackwright.io/skip-await` annotation as it is compared (None: not given)."""
    raw = _annotations(obj).get(SKIP_AWAIT)
    return None if raw is None else str(raw).strip().lower()


def skip_await(obj: Obj) -> bool:
    return _skip_await_text(obj) == "true"


def _check_skip_await(obj: Obj) -> None:
    """Raise ValueError for a `stackwright.io/skip-await` that is neither true nor false: a
    `"yes"` read as false would wait, unasked, for what the user meant not to."""
    if _skip_await_text(obj) not in (None, "true", "false"):
        raw = _annotations(obj)[SKIP_AWAIT]
        raise ValueError(f'annotation {SKIP_AWAIT} must be "true" or "false", got {raw!r}')


def timeout_seconds(obj: Obj) -> float | None:
    """The `stackwright.io/timeout-seconds` annotation; raises ValueError when it is not a number."""
    raw = _annotations(obj).get(TIMEOUT_SECONDS)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        value = float(str(raw).strip())
    except ValueError:
        raise ValueError(
            f"annotation {TIMEOUT_SECONDS} must be a number of seconds, got {raw!r}"
        ) from None
    # float() reads "nan" and "inf" too: neither is a number of seconds to wait.
    if not math.isfinite(value):
        raise ValueError(f"annotation {TIMEOUT_SECONDS} must be a number of seconds, got {raw!r}")
    if value <= 0:
        raise ValueError(f"annotation {TIMEOUT_SECONDS} must be greater than 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class WaitCondition:
    """One `stackwright.io/wait-for` requirement."""

    text: str  # as written, for messages
    condition: str = ""  # a condition type (condition=...)
    status: str = "True"
    path: tuple[Any, ...] = ()  # a compiled JSONPath (jsonpath=...)
    value: str | None = None  # None: the path only has to select something


def parse_wait_for(raw: str) -> tuple[WaitCondition, ...]:
    """Parse the annotation; raises ValueError saying what is wrong and what is accepted."""
    text = raw.strip()
    if text.startswith("["):
        try:
            items = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise ValueError(
                f"annotation {WAIT_FOR} looks like a JSON list but is not valid JSON"
            ) from None
        if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
            raise ValueError(f"annotation {WAIT_FOR} must be a JSON list of strings")
    else:
        items = [text]
    return tuple(_parse_one(item.strip()) for item in items)


def _parse_one(text: str) -> WaitCondition:
    accepted = "use condition=TYPE, condition=TYPE=STATUS or jsonpath={.path}=VALUE"
    kind, sep, rest = text.partition("=")
    if not sep or not rest:
        raise ValueError(f"annotation {WAIT_FOR} value {text!r} is not understood: {accepted}")
    if kind == "condition":
        name, _, status = rest.partition("=")
        if not name:
            raise ValueError(f"annotation {WAIT_FOR} value {text!r} names no condition: {accepted}")
        if status and status.lower() not in ("true", "false", "unknown"):
            # A condition's status is one of these three: any other would never be met.
            raise ValueError(
                f"annotation {WAIT_FOR} value {text!r}: a condition's status is True, False "
                f"or Unknown, not {status!r}"
            )
        return WaitCondition(text, condition=name, status=status or "True")
    if kind == "jsonpath":
        if not rest.startswith("{") or "}" not in rest:
            raise ValueError(
                f"annotation {WAIT_FOR} value {text!r}: write the path in braces, e.g. jsonpath={{.status.phase}}=Running"
            )
        end = rest.rindex("}")
        expression, tail = rest[: end + 1], rest[end + 1 :]
        if tail and not tail.startswith("="):
            raise ValueError(f"annotation {WAIT_FOR} value {text!r}: expected = after the path")
        # JSONPath (~2 ms to import) only for an object that waits on one.
        from stackwright.providers.kubernetes.jsonpath import compile_path

        try:
            path = compile_path(expression)
        except ValueError as exc:
            raise ValueError(f"annotation {WAIT_FOR}: {exc}") from None
        return WaitCondition(text, path=path, value=tail[1:] if tail else None)
    raise ValueError(f"annotation {WAIT_FOR} value {text!r} is not understood: {accepted}")


def check_annotations(obj: Obj) -> None:
    """Raise ValueError when a Stackwright annotation on `obj` is malformed (for preview):
    those above, and `stackwright.io/deletion-propagation` (whose rule is the model's, as
    the engine records it)."""
    timeout_seconds(obj)
    _check_skip_await(obj)
    deletion_propagation(obj)
    raw = _annotations(obj).get(WAIT_FOR)
    if raw is not None:
        parse_wait_for(str(raw))


# --- helpers ---------------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _name(obj: Obj) -> str:
    return str(_map(obj.get("metadata")).get("name", "")) or "(unnamed)"


def _uid(obj: Obj) -> str:
    return str(_map(obj.get("metadata")).get("uid", ""))


def _conditions(obj: Obj) -> dict[str, Mapping[str, Any]]:
    return {
        str(c.get("type")): c
        for c in _list(_map(obj.get("status")).get("conditions"))
        if isinstance(c, Mapping)
    }


def _is_true(cond: Mapping[str, Any] | None) -> bool:
    return cond is not None and str(cond.get("status", "")) == "True"


def _reason_message(cond: Mapping[str, Any]) -> str:
    reason, message = str(cond.get("reason") or ""), str(cond.get("message") or "")
    if reason and message:
        return f"{reason}: {message}"
    return reason or message


def _group(obj: Obj) -> str:
    api_version = str(obj.get("apiVersion", ""))
    return api_version.rpartition("/")[0]


def _generation_lag(obj: Obj) -> tuple[int, int | None] | None:
    """(generation, observed) when the controller has not yet seen the latest spec."""
    generation = _map(obj.get("metadata")).get("generation")
    observed = _map(obj.get("status")).get("observedGeneration")
    if not isinstance(generation, int):
        return None
    if not isinstance(observed, int):
        return generation, None
    return (generation, observed) if observed < generation else None


def _owned_by(obj: Obj, uid: str) -> bool:
    return any(
        _map(ref).get("uid") == uid
        for ref in _list(_map(obj.get("metadata")).get("ownerReferences"))
    )


def _labels(obj: Obj) -> Mapping[str, Any]:
    return _map(_map(obj.get("metadata")).get("labels"))


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """A LabelSelector (matchLabels + matchExpressions); an empty selector matches nothing here."""
    match_labels = _map(selector.get("matchLabels"))
    expressions = _list(selector.get("matchExpressions"))
    if not match_labels and not expressions:
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for expr in expressions:
        key, op = str(_map(expr).get("key")), str(_map(expr).get("operator"))
        values = [str(v) for v in _list(_map(expr).get("values"))]
        present = key in labels
        if op == "In" and not (present and str(labels[key]) in values):
            return False
        if op == "NotIn" and present and str(labels[key]) in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


def _pods_of(owner: Obj, related: Related) -> list[Obj]:
    """Pods the owner controls: by ownerReference, or by its selector when references are absent."""
    uid = _uid(owner)
    owned = [p for p in related.pods if uid and _owned_by(p, uid)]
    if owned:
        return owned
    selector = _map(_map(owner.get("spec")).get("selector"))
    return [
        p
        for p in related.pods
        if selector_matches(selector, _labels(p))
        and not _map(p.get("metadata")).get("ownerReferences")
    ]


# --- pods ------------------------------------------------------------------------------------------


def pod_status(pod: Obj) -> tuple[State, str]:
    """How one Pod is doing, in kubectl's words: (state, "ImagePullBackOff: Back-off pulling ...")."""
    status = _map(pod.get("status"))
    phase = str(status.get("phase") or "Pending")
    if phase == "Succeeded":
        return State.READY, "Completed"
    if phase == "Failed":
        return State.FAILED, _failed_pod_text(status)
    for prefix, key in (("Init:", "initContainerStatuses"), ("", "containerStatuses")):
        for container in _list(status.get(key)):
            waiting = _map(_map(_map(container).get("state")).get("waiting"))
            reason = str(waiting.get("reason") or "")
            if reason in _FAILED_REASONS or reason in _FAILING_REASONS:
                text = f"{prefix}{reason}"
                if waiting.get("message"):
                    text += f": {waiting['message']}"
                last = _map(_map(_map(container).get("lastState")).get("terminated"))
                if reason == "CrashLoopBackOff" and isinstance(last.get("exitCode"), int):
                    text += f" (last exit code {last['exitCode']})"
                return (State.FAILED if reason in _FAILED_REASONS else State.FAILING), text
    if _map(pod.get("metadata")).get("deletionTimestamp"):
        return State.WAITING, "Terminating"
    conditions = _conditions(pod)
    if _is_true(conditions.get("Ready")):
        return State.READY, "Running"
    scheduled = conditions.get("PodScheduled")
    if scheduled is not None and str(scheduled.get("status")) == "False":
        return State.WAITING, _reason_message(scheduled) or "not scheduled"
    for prefix, key in (("Init:", "initContainerStatuses"), ("", "containerStatuses")):
        for container in _list(status.get(key)):
            waiting = _map(_map(_map(container).get("state")).get("waiting"))
            if waiting.get("reason"):
                text = f"{prefix}{waiting['reason']}"
                return State.WAITING, text + (
                    f": {waiting['message']}" if waiting.get("message") else ""
                )
    if phase == "Running":
        ready = conditions.get("Ready")
        detail = str(ready.get("message") or "") if ready is not None else ""
        return State.WAITING, "Running, not ready" + (f": {detail}" if detail else "")
    return State.WAITING, phase


def _failed_pod_text(status: Mapping[str, Any]) -> str:
    for key in ("containerStatuses", "initContainerStatuses"):
        for container in _list(status.get(key)):
            terminated = _map(_map(_map(container).get("state")).get("terminated"))
            code = terminated.get("exitCode")
            if isinstance(code, int) and code != 0:
                text = f"{terminated.get('reason') or 'Error'} (exit code {code})"
                if terminated.get("message"):
                    text += f": {str(terminated['message']).strip()}"
                return text
    reason, message = str(status.get("reason") or ""), str(status.get("message") or "")
    if reason or message:
        return (
            f"Failed: {reason}: {message}" if reason and message else f"Failed: {reason or message}"
        )
    return "Failed"


@dataclass(frozen=True)
class _PodView:
    state: State
    name: str
    text: str


def _worst(pods: Iterable[Obj], related: Related, *, replaced_when_failed: bool) -> _PodView | None:
    """The not-ready Pod that best explains a wait; None when every Pod is ready.

    `replaced_when_failed`: a controller replaces failed Pods (Deployments, ReplicaSets,
    StatefulSets, DaemonSets), so a Pod in phase Failed is only a reason to wait.
    """
    views: list[_PodView] = []
    for pod in pods:
        state, text = pod_status(pod)
        if state is State.READY:
            continue
        phase = str(_map(pod.get("status")).get("phase") or "")
        if replaced_when_failed and phase == "Failed":
            state = State.WAITING
        views.append(_PodView(state, _name(pod), text))
    # Worst state first; then a Pod whose status says why; then by name, for stable messages.
    worst = min(views, key=lambda v: (-v.state.rank, _informative(v.text), v.name), default=None)
    if worst is not None and worst.state is State.WAITING:
        worst = _PodView(worst.state, worst.name, _explained(worst.text, related, worst.name))
    return worst


def _explained(text: str, related: Related, name: str) -> str:
    """`text` with the latest Warning event about `name` added, unless it only repeats it
    (the scheduler's FailedScheduling event restates the PodScheduled message)."""
    note = _event_note(related.events, name)
    if note and note.partition(": ")[2] not in text:
        return f"{text}; {note}"
    return text


def _informative(text: str) -> int:
    """Prefer a Pod whose status says why over one that only says Pending (lower is better)."""
    return 0 if ":" in text else 1


def _event_note(events: Sequence[Obj], name: str) -> str:
    """The latest Warning event about `name`: "Unhealthy: Readiness probe failed: ..."."""
    latest = _latest(events, name, lambda e: e.get("type") == "Warning")
    return _reason_message(latest) if latest is not None else ""


def _short_of_pods(name: str, head: str, pod: _PodView | None, related: Related) -> Readiness:
    """A controller waiting for pods: the one that best explains it, or with none to blame,
    its own events (the culprit, for the waiting loop to read). Its FailedCreate later than
    any SuccessfulCreate means the API server refuses its pods (a ResourceQuota, a
    LimitRange, a missing ServiceAccount) while it keeps retrying: failing, in its words
    (`FailedCreate: Error creating: pods "batch-" is forbidden: exceeded quota: …`)."""
    if pod is not None:
        return Readiness(State.WAITING, _with_pod(head, pod), pod.name)
    refused = _latest(related.events, name, lambda e: e.get("reason") == "FailedCreate")
    made = _latest(related.events, name, lambda e: e.get("reason") == "SuccessfulCreate")
    if refused is not None and (made is None or _when(refused) > _when(made)):
        return Readiness(State.FAILING, f"{head} — {_reason_message(refused)}", name)
    return Readiness(State.WAITING, head, name)


def _latest(events: Sequence[Obj], name: str, wanted: Callable[[Obj], bool]) -> Obj | None:
    """The latest of the `wanted` events about `name` (the last listed of equal times)."""
    latest: Obj | None = None
    for event in events:
        if _map(event.get("involvedObject")).get("name") != name or not wanted(event):
            continue
        if latest is None or _when(event) >= _when(latest):
            latest = event
    return latest


def _when(event: Obj) -> str:
    return str(
        event.get("lastTimestamp")
        or event.get("eventTime")
        or _map(event.get("metadata")).get("creationTimestamp")
        or ""
    )


def _ready_text(name: str, ready: int, want: int) -> str:
    """`web: 2/3 ready`; while scaling down, `web: 5 ready, scaling down to 2`."""
    if ready > want:
        return f"{name}: {ready} ready, scaling down to {want}"
    return f"{name}: {ready}/{want} ready"


def _with_pod(head: str, pod: _PodView | None) -> str:
    return f"{head} — pod {pod.name}: {pod.text}" if pod is not None else head


# --- per-kind rules ------------------------------------------------------------------------------------


def _deployment(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    if spec.get("paused"):
        return Readiness(State.READY, f"{name}: paused, so no rollout to wait for")
    lag = _generation_lag(obj)
    if lag is not None:
        return Readiness(
            State.WAITING,
            f"{name}: waiting for the Deployment controller to observe generation {lag[0]}",
        )
    want = _int(spec.get("replicas"), 1)
    ready, updated = _int(status.get("readyReplicas")), _int(status.get("updatedReplicas"))
    replicas, available = _int(status.get("replicas")), _int(status.get("availableReplicas"))
    summary = _ready_text(name, ready, want)
    rollout = f"{summary}, {updated}/{want} updated" if updated < want else summary
    if ready > updated:
        # Old pods still serve mid-rollout: "3/3 ready" alone would read as healthy next to
        # a new pod's failure (`kubectl rollout status` counts the new replicas).
        summary = rollout
    conditions = _conditions(obj)
    pod = _worst(_new_pods(obj, related), related, replaced_when_failed=True)
    culprit = pod.name if pod is not None else ""
    progressing = conditions.get("Progressing")
    if progressing is not None and _timed_out(obj, progressing, related):
        deadline = "the rollout exceeded its progress deadline"
        if pod is not None:
            message = f"{_with_pod(summary, pod)}; {deadline}"
        else:
            detail = str(progressing.get("message") or "")
            message = f"{summary} — {deadline}" + (f": {detail}" if detail else "")
        return Readiness(State.FAILED, message, culprit)
    if pod is not None and pod.state in (State.FAILED, State.FAILING):
        return Readiness(pod.state, _with_pod(summary, pod), culprit)
    failure = conditions.get("ReplicaFailure")
    if _is_true(failure):
        assert failure is not None
        return Readiness(State.FAILING, f"{summary} — {_reason_message(failure)}")
    if updated < want:
        return Readiness(State.WAITING, _with_pod(rollout, pod), culprit)
    if replicas > updated:
        old = replicas - updated
        return Readiness(
            State.WAITING,
            f"{summary} — {old} old replica{'s' if old != 1 else ''} pending termination",
        )
    if available < updated:
        if pod is None:
            summary += _not_yet_available(spec, available, updated)
        return Readiness(State.WAITING, _with_pod(summary, pod), culprit)
    if want == 0:
        return Readiness(State.READY, f"{name}: scaled to 0")
    return Readiness(State.READY, summary)


#: The ReplicaSet a Deployment's Progressing condition is about, as the controller words it
#: (`ReplicaSet "web-7c9f" has timed out progressing.`).
_CONDITION_REPLICASET = re.compile(r'^ReplicaSet "([^"]+)"')
_REVISION = "deployment.kubernetes.io/revision"


def _timed_out(deployment: Obj, progressing: Mapping[str, Any], related: Related) -> bool:
    """Whether Progressing says the current rollout exceeded its progress deadline.

    A ProgressDeadlineExceeded of an earlier rollout outlives it when the template goes back
    to a ReplicaSet that exists (a revert, `rollout undo`): kube-controller-manager resets
    the condition only for a ReplicaSet it creates, and keeps it until it sees progress,
    while it already reports the new generation observed. The condition names the
    ReplicaSet that timed out; when that one's revision is no longer the Deployment's, the
    rollout it is about has been superseded, and this one has not timed out.
    """
    if progressing.get("reason") != "ProgressDeadlineExceeded":
        return False
    named = _CONDITION_REPLICASET.match(str(progressing.get("message") or ""))
    uid = _uid(deployment)
    if named is None or not uid:
        return True  # nothing says the condition is of another rollout
    timed_out = next(
        (rs for rs in related.replicasets if _name(rs) == named[1] and _owned_by(rs, uid)), None
    )
    if timed_out is None:
        return True
    wanted = _annotations(deployment).get(_REVISION)
    return wanted is None or _annotations(timed_out).get(_REVISION) == wanted


def _new_pods(deployment: Obj, related: Related) -> list[Obj]:
    """Pods of the Deployment's newest ReplicaSet (the one its revision annotation names)."""
    uid = _uid(deployment)
    owned = [rs for rs in related.replicasets if uid and _owned_by(rs, uid)]
    if not owned:
        return _pods_of(deployment, related)
    wanted = _annotations(deployment).get(_REVISION)

    def revision(rs: Obj) -> int:
        try:
            return int(str(_annotations(rs).get(_REVISION, "0")))
        except ValueError:
            return 0

    newest = next(
        (rs for rs in owned if wanted is not None and _annotations(rs).get(_REVISION) == wanted),
        None,
    )
    if newest is None:
        newest = max(
            owned,
            key=lambda rs: (
                revision(rs),
                str(_map(rs.get("metadata")).get("creationTimestamp", "")),
            ),
        )
    return _pods_of(newest, related)


def _statefulset(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    lag = _generation_lag(obj)
    if lag is not None:
        return Readiness(
            State.WAITING,
            f"{name}: waiting for the StatefulSet controller to observe generation {lag[0]}",
        )
    want = _int(spec.get("replicas"), 1)
    ready, updated = _int(status.get("readyReplicas")), _int(status.get("updatedReplicas"))
    summary = _ready_text(name, ready, want)
    pods = _pods_of(obj, related)
    pod = _worst(pods, related, replaced_when_failed=True)
    culprit = pod.name if pod is not None else ""
    if pod is not None and pod.state in (State.FAILED, State.FAILING):
        message = _with_pod(summary, pod) + _stuck_on_a_revision(obj, pods, pod.name)
        return Readiness(pod.state, message, culprit)
    if ready < want:
        return _short_of_pods(name, summary, pod, related)
    replicas = _int(status.get("replicas"))
    if replicas > want:
        # Scaled down: done once the pods beyond the count are gone (as Pulumi waits for
        # status.replicas to match), so the outputs read after it say the new count.
        return Readiness(State.WAITING, f"{name}: {replicas} pods, scaling down to {want}")
    if _on_delete(obj):
        return Readiness(State.READY, summary + _kept_until_deleted(updated, want))
    strategy = _map(spec.get("updateStrategy"))
    partition = _int(_map(strategy.get("rollingUpdate")).get("partition"))
    if partition > 0:
        if updated < want - partition:
            return Readiness(
                State.WAITING,
                f"{summary}, {updated}/{want - partition} updated (partition {partition})",
            )
        return Readiness(State.READY, summary)
    update_rev, current_rev = status.get("updateRevision"), status.get("currentRevision")
    if update_rev and current_rev and update_rev != current_rev:
        return Readiness(
            State.WAITING, f"{summary} — rolling update to revision {update_rev} in progress"
        )
    return Readiness(State.READY, summary)


def _stuck_on_a_revision(statefulset: Obj, pods: Sequence[Obj], name: str) -> str:
    """Why a failing Pod of an earlier revision stays, and the way out: under OrderedReady
    the StatefulSet controller replaces no Pod until every Pod is ready, so one the update
    would fix is never replaced (kubernetes/kubernetes#67250, "forced rollback")."""
    spec, status = _map(statefulset.get("spec")), _map(statefulset.get("status"))
    if spec.get("podManagementPolicy", "OrderedReady") != "OrderedReady":
        return ""
    if _map(spec.get("updateStrategy")).get("type", "RollingUpdate") != "RollingUpdate":
        return ""
    update = status.get("updateRevision")
    pod = next((p for p in pods if _name(p) == name), None)
    revision = _labels(pod).get("controller-revision-hash") if pod is not None else None
    if not update or not revision or revision == update:
        return ""
    namespace = _map(pod.get("metadata")).get("namespace") if pod is not None else None
    where = f" -n {namespace}" if namespace else ""
    return (
        f"; {name} has an earlier revision's template, and a StatefulSet does not replace a pod "
        f"that is not ready (OrderedReady): delete it (`kubectl delete pod {name}{where}`) "
        "for it to come back with the new one"
    )


def _daemonset(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    status = _map(obj.get("status"))
    lag = _generation_lag(obj)
    if lag is not None:
        return Readiness(
            State.WAITING,
            f"{name}: waiting for the DaemonSet controller to observe generation {lag[0]}",
        )
    desired = _int(status.get("desiredNumberScheduled"))
    updated = _int(status.get("updatedNumberScheduled"))
    available = _int(status.get("numberAvailable"))
    summary = f"{name}: {available}/{desired} available"
    on_delete = _on_delete(obj)
    rollout = f"{summary}, {updated}/{desired} updated" if updated < desired else summary
    pod = _worst(_pods_of(obj, related), related, replaced_when_failed=True)
    culprit = pod.name if pod is not None else ""
    if pod is not None and pod.state in (State.FAILED, State.FAILING):
        # Mid-rollout, old pods still serve: "1/1 available" alone would read as healthy
        # next to the new pod's failure.
        return Readiness(pod.state, _with_pod(summary if on_delete else rollout, pod), culprit)
    if updated < desired and not on_delete:
        return _short_of_pods(name, rollout, pod, related)
    if available < desired:
        return _short_of_pods(name, summary, pod, related)
    return Readiness(
        State.READY, summary + (_kept_until_deleted(updated, desired) if on_delete else "")
    )


def _on_delete(obj: Obj) -> bool:
    """Under the OnDelete update strategy a pod takes a new template only when someone
    deletes it, so the updated count may never catch up: the wait is for ready pods alone
    (Helm counts such a set ready; `kubectl rollout status` refuses to wait on it)."""
    return _map(_map(obj.get("spec")).get("updateStrategy")).get("type") == "OnDelete"


def _kept_until_deleted(updated: int, want: int) -> str:
    """What an OnDelete set's readiness leaves out: its pods still on an earlier template."""
    if updated >= want:
        return ""
    old = want - updated
    return (
        f" — {old} pod{'s' if old != 1 else ''} on an earlier template until deleted "
        "(updateStrategy OnDelete)"
    )


def _replicaset(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    lag = _generation_lag(obj)
    if lag is not None:
        return Readiness(
            State.WAITING,
            f"{name}: waiting for the ReplicaSet controller to observe generation {lag[0]}",
        )
    want = _int(spec.get("replicas"), 1)
    ready, available = _int(status.get("readyReplicas")), _int(status.get("availableReplicas"))
    summary = _ready_text(name, ready, want)
    pod = _worst(_pods_of(obj, related), related, replaced_when_failed=True)
    culprit = pod.name if pod is not None else ""
    if pod is not None and pod.state in (State.FAILED, State.FAILING):
        return Readiness(pod.state, _with_pod(summary, pod), culprit)
    failure = _conditions(obj).get("ReplicaFailure")
    if _is_true(failure):
        assert failure is not None
        return Readiness(State.FAILING, f"{summary} — {_reason_message(failure)}")
    if ready < want or available < want:
        if pod is None:
            summary += _not_yet_available(spec, available, want)
        return Readiness(State.WAITING, _with_pod(summary, pod), culprit)
    return Readiness(State.READY, summary)


def _not_yet_available(spec: Obj, available: int, want: int) -> str:
    """`, 0/2 available (minReadySeconds 30)`: what a wait whose pods are all ready waits
    for, where "2/2 ready" alone would read as done."""
    if available >= want:
        return ""
    min_ready = _int(spec.get("minReadySeconds"))
    return f", {available}/{want} available" + (
        f" (minReadySeconds {min_ready})" if min_ready else ""
    )


def _pod(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    state, text = pod_status(obj)
    if state is State.READY:
        return Readiness(State.READY, f"{name}: {'completed' if text == 'Completed' else 'ready'}")
    if state is State.FAILED:
        return Readiness(State.FAILED, f"{name}: failed — {text}", name)
    if state is State.WAITING:
        text = _explained(text, related, name)
    return Readiness(state, f"{name}: {text}", name)


def _job(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    conditions = _conditions(obj)
    succeeded, active = _int(status.get("succeeded")), _int(status.get("active"))
    completions = _int(spec.get("completions"), 1)
    if _is_true(conditions.get("Complete")) or _is_true(conditions.get("SuccessCriteriaMet")):
        return Readiness(State.READY, f"{name}: complete ({succeeded} succeeded)")
    pods = _pods_of(obj, related)
    failed = next(
        (c for t in ("Failed", "FailureTarget") if _is_true(c := conditions.get(t))), None
    )
    if failed is not None:
        message = f"{name}: failed — {_reason_message(failed) or 'Failed'}"
        pod = _worst(pods, related, replaced_when_failed=False)
        if pod is not None and pod.state is not State.WAITING:
            message += f"; pod {pod.name}: {pod.text}"
        return Readiness(State.FAILED, message, pod.name if pod is not None else "")
    if spec.get("suspend"):
        return Readiness(State.READY, f"{name}: suspended")
    if spec.get("parallelism") == 0 and active == 0:
        # The way to pause a Job before `suspend`: no pod runs until it is raised, so a
        # wait for completion would only run out its timeout.
        return Readiness(State.READY, f"{name}: paused (parallelism 0)")
    summary = f"{name}: {succeeded}/{completions} succeeded, {active} active"
    # A failed Pod of a Job is retried (backoffLimit): the Job's own Failed condition decides.
    pod = _worst(pods, related, replaced_when_failed=True)
    if pod is not None and pod.state in (State.FAILED, State.FAILING):
        return Readiness(pod.state, _with_pod(summary, pod), pod.name)
    return _short_of_pods(name, summary, pod, related)


def _service(obj: Obj, related: Related, fed_later: str = "") -> Readiness:
    """`fed_later`: what makes the Pods it selects, when that waits for the Service (its
    endpoints come after it is done, so they are not waited for)."""
    name = _name(obj)
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    kind = str(spec.get("type") or "ClusterIP")
    if kind == "ExternalName":
        return Readiness(
            State.READY, f"{name}: ExternalName {spec.get('externalName', '')}".rstrip()
        )
    if kind == "LoadBalancer":
        ingress = _list(_map(status.get("loadBalancer")).get("ingress"))
        if not ingress:
            return Readiness(
                State.WAITING,
                f"{name}: waiting for a load balancer address (status.loadBalancer.ingress)",
            )
    selector = _map(spec.get("selector"))
    if not selector:
        return Readiness(State.READY, f"{name}: no selector, so no endpoints to wait for")
    if fed_later:
        return Readiness(
            State.READY,
            f"{name}: endpoints not waited for: its Pods come from {fed_later}, which waits for it",
        )
    if spec.get("clusterIP") == "None":
        return Readiness(State.READY, f"{name}: headless")
    count = _ready_endpoints(name, related, ported=bool(_list(spec.get("ports"))))
    if count > 0:
        address = ""
        if kind == "LoadBalancer":
            first = _map(_list(_map(status.get("loadBalancer")).get("ingress"))[0])
            where = first.get("ip") or first.get("hostname")
            address = f", load balancer {where}" if where else ""
        return Readiness(
            State.READY, f"{name}: {count} ready endpoint{'s' if count != 1 else ''}{address}"
        )
    shown = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    selected = [p for p in related.pods if all(_labels(p).get(k) == v for k, v in selector.items())]
    if not selected:
        return Readiness(
            State.WAITING,
            f"{name}: no ready endpoints — no Pod matches selector {shown}"
            + _nearest_labels(selector, related.pods),
        )
    unnamed = _port_no_pod_declares(spec, selected)
    if unnamed is not None:
        # No endpoint gets a port until a Pod declares it: waiting does not mend it.
        return Readiness(State.FAILING, f"{name}: no ready endpoints — {unnamed}")
    ready = sum(1 for p in selected if pod_status(p)[0] is State.READY)
    pod = _worst(selected, related, replaced_when_failed=True)
    head = f"{name}: no ready endpoints — {ready}/{len(selected)} selected Pods ready"
    state = State.WAITING
    if ready == 0 and pod is not None and pod.state in (State.FAILING, State.FAILED):
        # No endpoint will come without a fix: say why now, as the Pods' workload does.
        state = pod.state
    return Readiness(state, _with_pod(head, pod), pod.name if pod is not None else "")


def _nearest_labels(selector: Mapping[str, Any], pods: Sequence[Obj]) -> str:
    """` (Pod web-7c9f-x2k has app=web)`: the Pod of the namespace whose labels come closest
    to a selector that matches none, by the selector's own keys, so that a misspelt selector
    (or template label) shows while the Service waits, not only after its timeout; "" when
    no Pod has any of its keys. Among Pods alike in those (in a namespace each Pod has an
    `app` label), the one whose values are spelt most like the selector's."""

    def closeness(pod: Obj) -> tuple[int, int, float]:
        labels = _labels(pod)
        return (
            sum(labels.get(k) == v for k, v in selector.items()),
            sum(k in labels for k in selector),
            sum(
                difflib.SequenceMatcher(None, str(labels[k]), str(v)).ratio()
                for k, v in selector.items()
                if k in labels
            ),
        )

    nearest = max(pods, key=closeness, default=None)
    if nearest is None or closeness(nearest)[:2] == (0, 0):
        return ""
    labels = _labels(nearest)
    held = ",".join(f"{k}={labels[k]}" for k in sorted(selector) if k in labels)
    return f" (Pod {_name(nearest)} has {held})"


def _port_no_pod_declares(spec: Obj, pods: Sequence[Obj]) -> str | None:
    """Why no selected Pod gets an endpoint, when each of the Service's ports names
    (`targetPort: http`) a container port that none of them declares (in a container or a
    sidecar) — what the endpoint controllers leave such a Pod out for (podutil.FindPort);
    else None."""
    ports = [_map(p) for p in _list(spec.get("ports"))]
    named = [
        p for p in ports if isinstance(p.get("targetPort"), str) and not p["targetPort"].isdigit()
    ]
    if not ports or len(named) < len(ports):
        return None
    declared = {
        (str(port.get("name")), str(port.get("protocol") or "TCP"))
        for pod in pods
        for container in _serving_containers(_map(pod.get("spec")))
        for port in _list(container.get("ports"))
        if isinstance(port, Mapping) and port.get("name")
    }
    if any((p["targetPort"], str(p.get("protocol") or "TCP")) in declared for p in named):
        return None
    first = named[0]
    target = first["targetPort"]
    return (
        f'targetPort "{target}" (of port {first.get("port")}) is a container port name that '
        f"none of the {len(pods)} Pod{'s' if len(pods) != 1 else ''} it selects declares: "
        f'name a containerPort "{target}" in their template, or give targetPort a number'
    )


def _serving_containers(spec: Obj) -> list[Obj]:
    """The containers of a Pod whose named ports a Service's targetPort finds: its containers
    and its sidecars (init containers with `restartPolicy: Always`), as podutil.FindPort
    looks them up."""
    sidecars = [
        _map(c)
        for c in _list(spec.get("initContainers"))
        if _map(c).get("restartPolicy") == "Always"
    ]
    return [*(_map(c) for c in _list(spec.get("containers"))), *sidecars]


def _ready_endpoints(service: str, related: Related, *, ported: bool) -> int:
    """The ready endpoints of a Service's EndpointSlices (of those that carry a port, for
    a Service with ports: a Pod none of whose ports resolves is put in a slice without
    ports, which serves nothing), else of its Endpoints."""
    slices = [
        s
        for s in related.endpointslices
        if _labels(s).get("kubernetes.io/service-name") == service
        and (_list(s.get("ports")) or not ported)
    ]
    count = 0
    for piece in slices:
        for endpoint in _list(piece.get("endpoints")):
            ready = _map(_map(endpoint).get("conditions")).get("ready")
            if ready is not False and _list(_map(endpoint).get("addresses")):
                count += 1
    if slices:
        return count
    for endpoints in related.endpoints:
        if _name(endpoints) != service:
            continue
        for subset in _list(endpoints.get("subsets")):
            count += len(_list(_map(subset).get("addresses")))
    return count


def _ingress(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    ingress = _list(_map(_map(obj.get("status")).get("loadBalancer")).get("ingress"))
    if ingress:
        first = _map(ingress[0])
        return Readiness(
            State.READY, f"{name}: address {first.get('ip') or first.get('hostname') or '(set)'}"
        )
    cls = _map(obj.get("spec")).get("ingressClassName")
    by = f" for class {cls}" if cls else ""
    waiting = f"{name}: waiting for an ingress controller{by} to admit it"
    classes = related.ingressclasses
    if classes is None or _annotations(obj).get(_LEGACY_INGRESS_CLASS):
        return Readiness(State.WAITING, f"{waiting} (no status.loadBalancer.ingress yet)")
    names = sorted(_name(c) for c in classes)
    has = f"the cluster has {', '.join(names)}" if names else "the cluster has none"
    if cls and names and cls not in names:
        # A misspelt class (`ngnix`) is admitted by no controller: "failing", with grace, as
        # a claim's missing StorageClass is. With no class at all, a cloud's built-in
        # controller may still take it (GKE's takes Ingresses that name none or `gce`).
        return Readiness(
            State.FAILING,
            f"{name}: IngressClass {cls} does not exist ({has}); fix spec.ingressClassName, "
            "or create the class with its ingress controller",
            name,
        )
    if cls and not names:
        # Waits (a cloud's built-in controller may admit it), but says what may be missing:
        # a local cluster, which has no IngressClass until one is made, never admits it.
        return Readiness(
            State.WAITING,
            f"{waiting}, but the cluster has no IngressClass: unless a built-in controller "
            f"(as GKE's) admits it, create IngressClass {cls} with its ingress controller",
        )
    default = [c for c in classes if str(_annotations(c).get(_DEFAULT_INGRESS_CLASS)) == "true"]
    if not cls and not default:
        return Readiness(
            State.WAITING,
            f"{waiting}, but spec.ingressClassName is unset and no IngressClass is the default "
            f"({has}): set spec.ingressClassName, or annotate an IngressClass "
            f'{_DEFAULT_INGRESS_CLASS}: "true"',
        )
    return Readiness(State.WAITING, f"{waiting} (no status.loadBalancer.ingress yet)")


#: The annotation an Ingress named its class by before `spec.ingressClassName` (controllers
#: still honour it), and the one that makes an IngressClass the default for Ingresses
#: naming none.
_LEGACY_INGRESS_CLASS = "kubernetes.io/ingress.class"
_DEFAULT_INGRESS_CLASS = "ingressclass.kubernetes.io/is-default-class"


def _pvc(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    phase = str(_map(obj.get("status")).get("phase") or "Pending")
    volume = _map(obj.get("spec")).get("volumeName")
    if phase == "Bound":
        return Readiness(State.READY, f"{name}: Bound" + (f" to {volume}" if volume else ""))
    if phase == "Lost":
        lost = f"its volume {volume}" if volume else "its volume"
        return Readiness(State.FAILED, f"{name}: Lost — {lost} no longer exists", name)
    cls = _storage_class(obj, related)
    if cls is not None and _map(cls).get("volumeBindingMode") == "WaitForFirstConsumer":
        return Readiness(
            State.READY,
            f"{name}: Pending until its first consumer is scheduled "
            f"(StorageClass {_name(cls)} binds on first consumer)",
        )
    note = _event_note(related.events, name)
    wanted = _map(obj.get("spec")).get("storageClassName")
    if cls is None and wanted and related.storageclasses:
        # The PV controller retries, so a class made a moment later still binds it: "failing",
        # with grace, not a ten-minute wait for a class that may never come.
        return Readiness(
            State.FAILING,
            f"{name}: {phase} — StorageClass {wanted} does not exist (the cluster has "
            f"{', '.join(sorted(_name(c) for c in related.storageclasses))}); create it or fix "
            "spec.storageClassName",
            name,
        )
    return Readiness(State.WAITING, f"{name}: {phase}" + (f" — {note}" if note else ""), name)


def _storage_class(pvc: Obj, related: Related) -> Obj | None:
    spec = _map(pvc.get("spec"))
    wanted = spec.get("storageClassName")
    if wanted == "":
        return None  # explicitly no class: static binding only
    if wanted is None:
        default_key = "storageclass.kubernetes.io/is-default-class"
        return next(
            (c for c in related.storageclasses if str(_annotations(c).get(default_key)) == "true"),
            None,
        )
    return next((c for c in related.storageclasses if _name(c) == wanted), None)


def _crd(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    conditions = _conditions(obj)
    if _is_true(conditions.get("Established")):
        return Readiness(State.READY, f"{name}: Established")
    names = conditions.get("NamesAccepted")
    if names is not None and str(names.get("status")) == "False":
        return Readiness(
            State.FAILED, f"{name}: its names were not accepted — {_reason_message(names)}", name
        )
    return Readiness(State.WAITING, f"{name}: waiting to be Established")


def _namespace(obj: Obj, related: Related) -> Readiness:
    name = _name(obj)
    phase = str(_map(obj.get("status")).get("phase") or "")
    if phase == "Active":
        return Readiness(State.READY, f"{name}: Active")
    if phase == "Terminating":
        return Readiness(
            State.WAITING, f"{name}: Terminating — an earlier deletion has not finished", name
        )
    return Readiness(State.WAITING, f"{name}: waiting for phase Active")


def _secret(obj: Obj, related: Related) -> Readiness:
    """Only a service account token Secret waits: for the token controller to fill it."""
    name = _name(obj)
    if obj.get("type") != SERVICE_ACCOUNT_TOKEN or _map(obj.get("data")).get("token"):
        return Readiness(State.READY, f"{name}: ready")
    account = _map(_map(obj.get("metadata")).get("annotations")).get(
        "kubernetes.io/service-account.name"
    )
    return Readiness(
        State.WAITING,
        f"{name}: waiting for the token controller to fill data.token"
        f" (for service account {account!r})",
    )


def _generic(obj: Obj, related: Related) -> Readiness:
    """kstatus: the controller saw the latest generation; Stalled fails; Ready / Available when present."""
    name = _name(obj)
    lag = _generation_lag(obj)
    if lag is not None and lag[1] is not None:
        return Readiness(
            State.WAITING,
            f"{name}: waiting for its controller to observe generation {lag[0]} (observed {lag[1]})",
        )
    conditions = _conditions(obj)
    stalled = conditions.get("Stalled")
    if _is_true(stalled):
        assert stalled is not None
        detail = _reason_message(stalled)
        return Readiness(
            State.FAILED, f"{name}: Stalled" + (f" — {detail}" if detail else ""), name
        )
    reconciling = conditions.get("Reconciling")
    if _is_true(reconciling):
        assert reconciling is not None
        detail = _reason_message(reconciling)
        message = f"{name}: Reconciling" + (f" — {detail}" if detail else "")
        return Readiness(State.WAITING, message, name)
    for kind in ("Ready", "Available"):
        cond = conditions.get(kind)
        if cond is not None and not _is_true(cond):
            detail = _reason_message(cond)
            return Readiness(
                State.WAITING,
                f"{name}: {kind}={cond.get('status', 'Unknown')}"
                + (f" — {detail}" if detail else ""),
                name,
            )
    return Readiness(State.READY, f"{name}: ready")


_RULES = {
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "ReplicaSet"): _replicaset,
    ("", "Pod"): _pod,
    ("batch", "Job"): _job,
    ("", "Service"): _service,
    ("networking.k8s.io", "Ingress"): _ingress,
    ("", "PersistentVolumeClaim"): _pvc,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _crd,
    ("", "Namespace"): _namespace,
    ("", "Secret"): _secret,
}

# What each rule reads besides the object (names of `Related` fields).
_NEEDS: dict[tuple[str, str], frozenset[str]] = {
    ("apps", "Deployment"): frozenset({"replicasets", "pods"}),
    ("apps", "StatefulSet"): frozenset({"pods"}),
    ("apps", "DaemonSet"): frozenset({"pods"}),
    ("apps", "ReplicaSet"): frozenset({"pods"}),
    ("batch", "Job"): frozenset({"pods"}),
    ("", "Service"): frozenset({"endpointslices", "pods"}),
    ("", "PersistentVolumeClaim"): frozenset({"storageclasses"}),
    ("networking.k8s.io", "Ingress"): frozenset({"ingressclasses"}),
}


def trivially_ready(obj: Obj) -> bool:
    """True for objects with no status, no rule and no waiting annotation (ConfigMaps, RBAC...).

    The common case of a big stack, answered without building any message. The
    marks every managed object carries (`stackwright.io/stack`, `stackwright.io/urn`)
    do not count: only the annotations that tune waiting (`_WAIT_ANNOTATIONS`) do,
    so those still get validated and honoured.
    """
    if "status" in obj:
        return False
    annotations = _annotations(obj)
    if annotations and not _WAIT_ANNOTATIONS.isdisjoint(annotations):
        return False
    key = (_group(obj), str(obj.get("kind", "")))
    if key == ("", "Secret"):  # the one kind whose rule depends on a field
        return obj.get("type") != SERVICE_ACCOUNT_TOKEN
    return key not in _RULES


def waits_for(obj: Obj) -> bool:
    """Whether a `stackwright.io/wait-for` annotation alone decides when `obj` is ready (the
    lists its kind's rule reads then only explain a wait)."""
    return _annotations(obj).get(WAIT_FOR) is not None


def needs(obj: Obj, fed_later: str = "") -> frozenset[str]:
    """Which `Related` lists `evaluate` reads for this object (nothing for kstatus); under
    wait-for, the kind's rule still reads them, for the cause of a wait that lasts."""
    key = (_group(obj), str(obj.get("kind", "")))
    if key == ("", "Service"):
        spec = _map(obj.get("spec"))
        if (
            fed_later
            or spec.get("type") == "ExternalName"
            or not _map(spec.get("selector"))
            or spec.get("clusterIP") == "None"
        ):
            return frozenset()
    return _NEEDS.get(key, frozenset())


def evaluate(obj: Obj, related: Related | None = None, fed_later: str = "") -> Readiness:
    """How ready `obj` is; raises ValueError only for a malformed wait-for annotation.
    `fed_later`: a Service's, see `_service`."""
    related = related or Related()
    rule = _RULES.get((_group(obj), str(obj.get("kind", ""))), _generic)
    verdict = _service(obj, related, fed_later) if rule is _service else rule(obj, related)
    if waits_for(obj):
        return _wait_for(obj, parse_wait_for(str(_annotations(obj)[WAIT_FOR])), verdict)
    return verdict


def _wait_for(obj: Obj, conditions: tuple[WaitCondition, ...], own: Readiness) -> Readiness:
    """The annotation alone decides when `obj` is done (one may wait for a Job to fail);
    what the kind's own rule (`own`) sees going wrong is said while it waits, so a wait
    that lasts names its cause (`pod web-…: ImagePullBackOff`), not only the condition."""
    name = _name(obj)
    for wanted in conditions:
        met, actual = _check(obj, wanted)
        if not met:
            message = f"{name}: waiting for {wanted.text} (now {actual})"
            if own.state in (State.FAILING, State.FAILED):
                message += f" — {own.message.removeprefix(f'{name}: ')}"
            return Readiness(State.WAITING, message, own.culprit or name)
    return Readiness(State.READY, f"{name}: " + ", ".join(c.text for c in conditions))


def _check(obj: Obj, wanted: WaitCondition) -> tuple[bool, str]:
    if wanted.condition:
        generation = _map(obj.get("metadata")).get("generation")
        for cond in _conditions(obj).values():
            if str(cond.get("type", "")).lower() != wanted.condition.lower():
                continue
            status = str(cond.get("status", ""))
            # kubectl wait's rule: the condition's own observedGeneration, else the status's.
            observed = cond.get("observedGeneration")
            if not isinstance(observed, int):
                observed = _map(obj.get("status")).get("observedGeneration")
            if isinstance(observed, int) and isinstance(generation, int) and observed < generation:
                return False, f"{cond.get('type')}={status} for an older generation"
            return status.lower() == wanted.status.lower(), f"{cond.get('type')}={status}"
        return False, f"no {wanted.condition} condition"
    from stackwright.providers.kubernetes.jsonpath import evaluate, format_value

    values = evaluate(wanted.path, obj)
    shown = ",".join(format_value(v) for v in values) or "nothing"
    if wanted.value is None:
        return bool(values) and all(v not in (None, "", [], {}) for v in values), shown
    return bool(values) and all(format_value(v) == wanted.value for v in values), shown
