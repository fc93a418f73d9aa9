"""Server-side `Table` rendering: what `kubectl get` shows, computed as kube-apiserver does.

kubectl asks for `application/json;as=Table;v=v1;g=meta.k8s.io` and prints the columns
it gets back, so the local cluster must render the same columns and cells a real
server would. Three sources of columns, as in the API server:

- built-in kinds: the printers of kubernetes/pkg/printers/internalversion, always with
  the wide (priority 1) columns, which kubectl hides unless `-o wide`;
- custom kinds: `Name`, then the CRD version's `additionalPrinterColumns` evaluated with
  `jsonpath` (or a single `Age` column when it declares none);
- everything else: the default convertor's `Name` and `Created At`.

Column descriptions come from the served OpenAPI definitions. Ages are human durations
("5s", "3m2s", "5d") measured against an injectable `now`. This module is pure: it
reads the objects it is given, never mutates them, and never does I/O or reads the
clock unless no `now` is passed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from stackwright.localcluster import jsonpath
from stackwright.localcluster.registry import ResourceType
from stackwright.localcluster.schema import builtin_schemas
from stackwright.localcluster.selectors import label_selector_from_dict
from stackwright.localcluster.status import BadRequest, NotAcceptable

__all__ = ["TABLE_GROUP_VERSIONS", "human_duration", "render_table", "table_columns"]

Obj = Mapping[str, Any]
#: A row function: the object and the render time to (cells, row conditions or None).
RowFn = Callable[[Obj, datetime], tuple[list[Any], list[dict[str, str]] | None]]

#: The group versions a Table can be requested in (asTable refuses any other).
TABLE_GROUP_VERSIONS = ("meta.k8s.io/v1", "meta.k8s.io/v1beta1")

# --------------------------------------------------------------------------------------
# Small readers over plain JSON objects


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# --------------------------------------------------------------------------------------
# Time


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if parsed.year == 1:  # Go's zero time, written by some clients instead of null
        return None
    return parsed


def _trunc_div(a: int, b: int) -> int:
    # Go's integer division truncates toward zero; Python's floors.
    q = abs(a) // b
    return q if a >= 0 else -q


def human_duration(d: timedelta) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration: "45s", "3m2s", "5h", "2d3h", "3y"."""
    micros = (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
    seconds = _trunc_div(micros, 1_000_000)
    # Up to a second in the future is clock skew, not an error.
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _since(value: Any, now: datetime) -> str:
    """translateTimestampSince: the age of a timestamp, "<unknown>" when there is none."""
    when = _parse_time(value)
    return "<unknown>" if when is None else human_duration(now - when)


def _age(obj: Obj, now: datetime) -> str:
    return _since(_get(obj, "metadata", "creationTimestamp"), now)


def _created_at(obj: Obj) -> str:
    """The "Created At" cell: the creation time in UTC, RFC 3339 (Go's zero time if none)."""
    when = _parse_time(_get(obj, "metadata", "creationTimestamp"))
    if when is None:
        return "0001-01-01T00:00:00Z"
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------
# Formatting helpers shared by the printers


def _format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted `k=v` pairs, or "<none>"."""
    pairs = _map(labels)
    return ",".join(f"{k}={pairs[k]}" for k in sorted(pairs)) or "<none>"


def _selector_string(selector: Any, *, invalid: str) -> str:
    try:
        return str(label_selector_from_dict(selector if isinstance(selector, Mapping) else None))
    except BadRequest:
        return invalid


def _format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: "<none>" for an empty or missing selector."""
    return _selector_string(selector, invalid="<error>") or "<none>"


def _containers_and_images(template_spec: Any) -> tuple[str, str]:
    containers = _list(_get(template_spec, "containers"))
    names = ",".join(_str(_get(c, "name")) for c in containers)
    images = ",".join(_str(_get(c, "image")) for c in containers)
    return names, images


def _list_with_more(items: list[str], total: int, limit: int = 3, empty: str = "<unset>") -> str:
    text = ",".join(items[:limit])
    if total > limit:
        return f"{text} + {total - limit} more..."
    return text or empty


# --------------------------------------------------------------------------------------
# Columns. Descriptions are looked up in the served OpenAPI definitions, as the real
# printers take them from the types' SwaggerDoc.

_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_CORE = "io.k8s.api.core.v1."
_APPS = "io.k8s.api.apps.v1."
_BATCH = "io.k8s.api.batch.v1."

# (name, type, format, description, priority); a description given as a tuple is a
# (definition, property) reference into the OpenAPI definitions.
_ColumnSpec = tuple[str, str, str, str | tuple[str, str], int]


@functools.cache
def _doc(definition: str, prop: str) -> str:
    try:
        node = builtin_schemas().definitions.get(definition, {})
    except OSError:  # pragma: no cover - definitions missing: descriptions are optional
        return ""
    return str(_get(node, "properties", prop, "description") or "")


def _column(spec: _ColumnSpec) -> dict[str, Any]:
    name, type_, format_, description, priority = spec
    text = _doc(*description) if isinstance(description, tuple) else description
    return {
        "name": name,
        "type": type_,
        "format": format_,
        "description": text,
        "priority": priority,
    }


def _c(
    name: str,
    description: str | tuple[str, str],
    type_: str = "string",
    *,
    priority: int = 0,
    format_: str = "",
) -> _ColumnSpec:
    return (name, type_, format_, description, priority)


NAME = _c("Name", (_META, "name"), format_="name")
AGE = _c("Age", (_META, "creationTimestamp"))
CREATED_AT = _c("Created At", (_META, "creationTimestamp"), "date")
CONTAINERS = _c("Containers", "Names of each container in the template.", priority=1)
IMAGES = _c("Images", "Images referenced by each container in the template.", priority=1)


# --------------------------------------------------------------------------------------
# Built-in printers (pkg/printers/internalversion/printers.go), one per kind.

_POD_SUCCEEDED = [
    {
        "type": "Completed",
        "status": "True",
        "reason": "Succeeded",
        "message": "The pod has completed successfully.",
    }
]
_POD_FAILED = [
    {"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}
]


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _pod_row(pod: Obj, now: datetime) -> tuple[list[Any], list[dict[str, str]] | None]:
    spec, status = _map(pod.get("spec")), _map(pod.get("status"))
    phase = _str(status.get("phase"))
    reason = _str(status.get("reason")) or phase
    for condition in _list(status.get("conditions")):
        if (
            _get(condition, "type") == "PodScheduled"
            and _get(condition, "reason") == "SchedulingGated"
        ):
            reason = "SchedulingGated"
    conditions = {"Succeeded": _POD_SUCCEEDED, "Failed": _POD_FAILED}.get(phase)

    init_specs = _list(spec.get("initContainers"))
    # Sidecars (init containers that keep running) count among the pod's containers.
    restartable = {_get(c, "name") for c in init_specs if _get(c, "restartPolicy") == "Always"}
    total = len(_list(spec.get("containers"))) + sum(
        1 for c in init_specs if _get(c, "restartPolicy") == "Always"
    )
    ready = restarts = sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None

    initializing = False
    for i, container in enumerate(_list(status.get("initContainerStatuses"))):
        count = _int(_get(container, "restartCount"))
        finished = _parse_time(_get(container, "lastState", "terminated", "finishedAt"))
        restarts += count
        last_restart = _later(last_restart, finished)
        is_sidecar = _get(container, "name") in restartable
        if is_sidecar:
            sidecar_restarts += count
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        terminated = _get(container, "state", "terminated")
        waiting_reason = _str(_get(container, "state", "waiting", "reason"))
        if isinstance(terminated, Mapping) and _int(terminated.get("exitCode")) == 0:
            continue
        if is_sidecar and _get(container, "started") is True:
            if _get(container, "ready") is True:
                ready += 1
            continue
        if isinstance(terminated, Mapping):
            if terminated.get("reason"):
                reason = "Init:" + _str(terminated.get("reason"))
            elif _int(terminated.get("signal")):
                reason = f"Init:Signal:{_int(terminated.get('signal'))}"
            else:
                reason = f"Init:ExitCode:{_int(terminated.get('exitCode'))}"
        elif waiting_reason and waiting_reason != "PodInitializing":
            reason = "Init:" + waiting_reason
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break

    initialized = any(
        _get(c, "type") == "Initialized" and _get(c, "status") == "True"
        for c in _list(status.get("conditions"))
    )
    if not initializing or initialized:
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        for container in reversed(_list(status.get("containerStatuses"))):
            restarts += _int(_get(container, "restartCount"))
            finished = _parse_time(_get(container, "lastState", "terminated", "finishedAt"))
            last_restart = _later(last_restart, finished)
            state = _map(_get(container, "state"))
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, Mapping) and waiting.get("reason"):
                reason = _str(waiting.get("reason"))
            elif isinstance(terminated, Mapping) and terminated.get("reason"):
                reason = _str(terminated.get("reason"))
            elif isinstance(terminated, Mapping):
                signal = _int(terminated.get("signal"))
                reason = (
                    f"Signal:{signal}" if signal else f"ExitCode:{_int(terminated.get('exitCode'))}"
                )
            elif _get(container, "ready") is True and isinstance(state.get("running"), Mapping):
                has_running = True
                ready += 1
        # A container that completed while another still runs does not finish the pod.
        if reason == "Completed" and has_running:
            pod_ready = any(
                _get(c, "type") == "Ready" and _get(c, "status") == "True"
                for c in _list(status.get("conditions"))
            )
            reason = "Running" if pod_ready else "NotReady"

    deleting = _get(pod, "metadata", "deletionTimestamp") is not None
    if deleting and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts and last_restart is not None:
        restarts_cell = f"{restarts} ({human_duration(now - last_restart)} ago)"

    pod_ips = _list(status.get("podIPs"))
    pod_ip = _str(_get(pod_ips[0], "ip")) if pod_ips else _str(status.get("podIP"))
    gates = _list(spec.get("readinessGates"))
    gates_cell = "<none>"
    if gates:
        by_type: dict[Any, Any] = {}
        for condition in _list(status.get("conditions")):
            by_type.setdefault(_get(condition, "type"), _get(condition, "status"))
        true_count = sum(1 for g in gates if by_type.get(_get(g, "conditionType")) == "True")
        gates_cell = f"{true_count}/{len(gates)}"
    cells = [
        _get(pod, "metadata", "name"),
        f"{ready}/{total}",
        reason,
        restarts_cell,
        _age(pod, now),
        pod_ip or "<none>",
        _str(spec.get("nodeName")) or "<none>",
        _str(status.get("nominatedNodeName")) or "<none>",
        gates_cell,
    ]
    return cells, conditions


_POD_COLUMNS = (
    NAME,
    _c("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    _c("Status", "The aggregate status of the containers in this pod."),
    _c(
        "Restarts",
        "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
    ),
    AGE,
    _c("IP", (_CORE + "PodStatus", "podIP"), priority=1),
    _c("Node", (_CORE + "PodSpec", "nodeName"), priority=1),
    _c("Nominated Node", (_CORE + "PodStatus", "nominatedNodeName"), priority=1),
    _c("Readiness Gates", (_CORE + "PodSpec", "readinessGates"), priority=1),
)


def _plain(fn: Callable[[Obj, datetime], list[Any]]) -> RowFn:
    """A row function for kinds whose rows carry no conditions."""
    return lambda obj, now: (fn(obj, now), None)


def _name(obj: Obj) -> Any:
    return _get(obj, "metadata", "name")


def _deployment(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    names, images = _containers_and_images(_get(spec, "template", "spec"))
    return [
        _name(obj),
        f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'), 1)}",
        _int(status.get("updatedReplicas")),
        _int(status.get("availableReplicas")),
        _age(obj, now),
        names,
        images,
        _selector_string(spec.get("selector"), invalid="<invalid>"),
    ]


def _replica_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    names, images = _containers_and_images(_get(spec, "template", "spec"))
    return [
        _name(obj),
        _int(spec.get("replicas"), 1),
        _int(status.get("replicas")),
        _int(status.get("readyReplicas")),
        _age(obj, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]


def _replication_controller(obj: Obj, now: datetime) -> list[Any]:
    cells = _replica_set(obj, now)
    cells[-1] = _format_labels(_get(obj, "spec", "selector"))  # a plain map, not a LabelSelector
    return cells


def _stateful_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    names, images = _containers_and_images(_get(spec, "template", "spec"))
    ready = f"{_int(status.get('readyReplicas'))}/{_int(spec.get('replicas'), 1)}"
    return [_name(obj), ready, _age(obj, now), names, images]


def _daemon_set(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    names, images = _containers_and_images(_get(spec, "template", "spec"))
    return [
        _name(obj),
        _int(status.get("desiredNumberScheduled")),
        _int(status.get("currentNumberScheduled")),
        _int(status.get("numberReady")),
        _int(status.get("updatedNumberScheduled")),
        _int(status.get("numberAvailable")),
        _format_labels(_get(spec, "template", "spec", "nodeSelector")),
        _age(obj, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]


def _has_condition(obj: Obj, type_: str) -> bool:
    return any(
        _get(c, "type") == type_ and _get(c, "status") == "True"
        for c in _list(_get(obj, "status", "conditions"))
    )


def _job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    if _has_condition(obj, "Complete"):
        state = "Complete"
    elif _has_condition(obj, "Failed"):
        state = "Failed"
    elif _get(obj, "metadata", "deletionTimestamp") is not None:
        state = "Terminating"
    elif _has_condition(obj, "Suspended"):
        state = "Suspended"
    elif _has_condition(obj, "FailureTarget"):
        state = "FailureTarget"
    elif _has_condition(obj, "SuccessCriteriaMet"):
        state = "SuccessCriteriaMet"
    else:
        state = "Running"
    succeeded = _int(status.get("succeeded"))
    if isinstance(spec.get("completions"), int):
        completions = f"{succeeded}/{_int(spec.get('completions'))}"
    elif _int(spec.get("parallelism")) > 1:
        completions = f"{succeeded}/1 of {_int(spec.get('parallelism'))}"
    else:
        completions = f"{succeeded}/1"
    started = _parse_time(status.get("startTime"))
    finished = _parse_time(status.get("completionTime"))
    duration = ""
    if started is not None:
        duration = human_duration((finished or now) - started)
    names, images = _containers_and_images(_get(spec, "template", "spec"))
    return [
        _name(obj),
        state,
        completions,
        duration,
        _age(obj, now),
        names,
        images,
        _format_label_selector(spec.get("selector")),
    ]


def _cron_job(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    suspend = spec.get("suspend")
    last = status.get("lastScheduleTime")
    job_spec = _get(spec, "jobTemplate", "spec")
    names, images = _containers_and_images(_get(job_spec, "template", "spec"))
    return [
        _name(obj),
        _str(spec.get("schedule")),
        _str(spec.get("timeZone")) or "<none>",
        "<unset>" if not isinstance(suspend, bool) else ("True" if suspend else "False"),
        len(_list(status.get("active"))),
        "<none>" if last is None else _since(last, now),
        _age(obj, now),
        names,
        images,
        _format_label_selector(_get(job_spec, "selector")),
    ]


def _load_balancer_addresses(status: Any) -> str:
    found = set()
    for ingress in _list(_get(status, "ingress")):
        address = _str(_get(ingress, "ip")) or _str(_get(ingress, "hostname"))
        if address:
            found.add(address)
    # Tables are rendered wide, so the 16-character clipping of narrow output never applies.
    return ",".join(sorted(found))


def _service_external_ip(svc: Obj) -> str:
    spec = _map(svc.get("spec"))
    external = [_str(ip) for ip in _list(spec.get("externalIPs"))]
    kind = spec.get("type")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        lb = _load_balancer_addresses(_get(svc, "status", "loadBalancer"))
        if external:
            return ",".join([*(lb.split(",") if lb else []), *external])
        return lb or "<pending>"
    if kind == "ExternalName":
        return _str(spec.get("externalName"))
    return "<unknown>"


def _service_ports(ports: list[Any]) -> str:
    pieces = []
    for port in ports:
        # The server defaults protocol to TCP, so an absent one can only mean TCP.
        protocol = _str(_get(port, "protocol")) or "TCP"
        number, node_port = _int(_get(port, "port")), _int(_get(port, "nodePort"))
        pieces.append(
            f"{number}:{node_port}/{protocol}" if node_port > 0 else f"{number}/{protocol}"
        )
    return ",".join(pieces)


def _service(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    cluster_ips = _list(spec.get("clusterIPs"))
    internal = _str(cluster_ips[0]) if cluster_ips else _str(spec.get("clusterIP"))
    return [
        _name(obj),
        _str(spec.get("type")),
        internal or "<none>",
        _service_external_ip(obj),
        _service_ports(_list(spec.get("ports"))) or "<none>",
        _age(obj, now),
        _format_labels(spec.get("selector")),
    ]


def _component_status(obj: Obj, now: datetime) -> list[Any]:
    conditions = _list(obj.get("conditions"))
    healthy: Any = next((c for c in conditions if _get(c, "type") == "Healthy"), {})
    state = {"True": "Healthy", "False": "Unhealthy"}.get(_str(_get(healthy, "status")), "Unknown")
    return [_name(obj), state, _str(_get(healthy, "message")), _str(_get(healthy, "error"))]


def _endpoints(obj: Obj, now: datetime) -> list[Any]:
    subsets = _list(obj.get("subsets"))
    if not subsets:
        return [_name(obj), "<none>", _age(obj, now)]
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [_str(_get(a, "ip")) for a in _list(_get(subset, "addresses"))]
        ports = _list(_get(subset, "ports"))
        if not ports:  # a headless service without ports lists bare addresses
            shown.extend(addresses)
            count += len(addresses)
            continue
        for port in ports:
            number = _int(_get(port, "port"))
            for address in addresses:
                shown.append(f"[{address}]:{number}" if ":" in address else f"{address}:{number}")
                count += 1
    text = ",".join(shown[:3])
    return [_name(obj), f"{text} + {count - 3} more..." if count > 3 else text, _age(obj, now)]


def _endpoint_slice(obj: Obj, now: datetime) -> list[Any]:
    ports = []
    for port in _list(obj.get("ports")):
        number = _get(port, "port")
        ports.append(str(number) if isinstance(number, int) else _str(_get(port, "name")) or "*")
    addresses = [_str(a) for e in _list(obj.get("endpoints")) for a in _list(_get(e, "addresses"))]
    return [
        _name(obj),
        _str(obj.get("addressType")),
        _list_with_more(ports, len(ports)),
        _list_with_more(addresses, len(addresses)),
        _age(obj, now),
    ]


def _node(obj: Obj, now: datetime) -> list[Any]:
    status, info = _map(obj.get("status")), _map(_get(obj, "status", "nodeInfo"))
    states = []
    for condition in _list(status.get("conditions")):
        if _get(condition, "type") == "Ready":
            states = ["Ready" if _get(condition, "status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if _get(obj, "spec", "unschedulable") is True:
        states.append("SchedulingDisabled")
    roles = set()
    for key, value in _map(_get(obj, "metadata", "labels")).items():
        if key.startswith("node-role.kubernetes.io/") and key.removeprefix(
            "node-role.kubernetes.io/"
        ):
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))

    def address(kind: str) -> str:
        for entry in _list(status.get("addresses")):
            if _get(entry, "type") == kind:
                return _str(_get(entry, "address"))
        return "<none>"

    return [
        _name(obj),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        _age(obj, now),
        _str(info.get("kubeletVersion")),
        address("InternalIP"),
        address("ExternalIP"),
        _str(info.get("osImage")) or "<unknown>",
        _str(info.get("kernelVersion")) or "<unknown>",
        _str(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


def _event(obj: Obj, now: datetime) -> list[Any]:
    first = _since(obj.get("firstTimestamp"), now)
    if _parse_time(obj.get("firstTimestamp")) is None:
        first = _since(obj.get("eventTime"), now)
    last = _since(obj.get("lastTimestamp"), now) if _parse_time(obj.get("lastTimestamp")) else first
    count = _int(obj.get("count"))
    series = obj.get("series")
    if isinstance(series, Mapping):
        last = _since(series.get("lastObservedTime"), now)
        count = _int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the events.k8s.io API carry no count
    involved = _map(obj.get("involvedObject"))
    kind = _str(involved.get("kind")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    component = _str(_get(obj, "source", "component")) or _str(obj.get("reportingComponent"))
    host = _str(_get(obj, "source", "host")) or _str(obj.get("reportingInstance"))
    return [
        last,
        _str(obj.get("type")),
        _str(obj.get("reason")),
        target,
        _str(involved.get("fieldPath")),
        f"{component}, {host}" if host else component,
        _str(obj.get("message")).strip(),
        first,
        count,
        _name(obj),
    ]


def _ingress(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    rules = _list(spec.get("rules"))
    hosts = [_str(_get(r, "host")) for r in rules[:3] if _get(r, "host")]
    hosts_cell = ",".join(hosts) or "*"
    if len(rules) > 3 and hosts:
        hosts_cell += f" + {len(rules) - 3} more..."
    return [
        _name(obj),
        _str(spec.get("ingressClassName")) or "<none>",
        hosts_cell,
        _load_balancer_addresses(_get(obj, "status", "loadBalancer")),
        "80, 443" if _list(spec.get("tls")) else "80",
        _age(obj, now),
    ]


def _ingress_class(obj: Obj, now: datetime) -> list[Any]:
    params = _get(obj, "spec", "parameters")
    shown = "<none>"
    if isinstance(params, Mapping):
        shown = _str(params.get("kind"))
        if params.get("apiGroup") is not None:
            shown += "." + _str(params.get("apiGroup"))
        shown += "/" + _str(params.get("name"))
    return [_name(obj), _str(_get(obj, "spec", "controller")), shown, _age(obj, now)]


def _access_modes(modes: Any) -> str:
    present = set(_list(modes))
    short = (
        ("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP"),
    )  # fmt: skip
    return ",".join(abbr for mode, abbr in short if mode in present)


def _storage_class_of(obj: Obj) -> str:
    beta = _get(obj, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
    return _str(beta) if beta is not None else _str(_get(obj, "spec", "storageClassName"))


def _persistent_volume(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    claim = spec.get("claimRef")
    claim_cell = f"{_str(_get(claim, 'namespace'))}/{_str(_get(claim, 'name'))}" if claim else ""
    phase = _str(_get(obj, "status", "phase"))
    if _get(obj, "metadata", "deletionTimestamp") is not None:
        phase = "Terminating"
    return [
        _name(obj),
        # Quantities are shown as stored; the real server prints their canonical form.
        _str(_get(spec, "capacity", "storage")) or "0",
        _access_modes(spec.get("accessModes")),
        _str(spec.get("persistentVolumeReclaimPolicy")),
        phase,
        claim_cell,
        _storage_class_of(obj),
        _str(spec.get("volumeAttributesClassName")) or "<unset>",
        _str(_get(obj, "status", "reason")),
        _age(obj, now),
        _str(spec.get("volumeMode")) or "<unset>",
    ]


def _persistent_volume_claim(obj: Obj, now: datetime) -> list[Any]:
    spec, status = _map(obj.get("spec")), _map(obj.get("status"))
    phase = _str(status.get("phase"))
    if _get(obj, "metadata", "deletionTimestamp") is not None:
        phase = "Terminating"
    capacity = access = ""
    if spec.get("volumeName"):  # only a bound claim has a size and modes of its own
        capacity = _str(_get(status, "capacity", "storage")) or "0"
        access = _access_modes(status.get("accessModes"))
    return [
        _name(obj),
        phase,
        _str(spec.get("volumeName")),
        capacity,
        access,
        _storage_class_of(obj),
        _str(spec.get("volumeAttributesClassName")) or "<unset>",
        _age(obj, now),
        _str(spec.get("volumeMode")) or "<unset>",
    ]


def _subjects(obj: Obj) -> list[str]:
    users, groups, service_accounts = [], [], []
    for subject in _list(obj.get("subjects")):
        kind, name = _get(subject, "kind"), _str(_get(subject, "name"))
        if kind == "ServiceAccount":
            service_accounts.append(f"{_str(_get(subject, 'namespace'))}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [", ".join(users), ", ".join(groups), ", ".join(service_accounts)]


def _role_binding(obj: Obj, now: datetime) -> list[Any]:
    role = f"{_str(_get(obj, 'roleRef', 'kind'))}/{_str(_get(obj, 'roleRef', 'name'))}"
    return [_name(obj), role, _age(obj, now), *_subjects(obj)]


def _storage_class(obj: Obj, now: datetime) -> list[Any]:
    annotations = _map(_get(obj, "metadata", "annotations"))
    name = _str(_name(obj))
    if "true" in (
        annotations.get("storageclass.kubernetes.io/is-default-class"),
        annotations.get("storageclass.beta.kubernetes.io/is-default-class"),
    ):
        name += " (default)"
    expansion = obj.get("allowVolumeExpansion")
    return [
        name,
        _str(obj.get("provisioner")),
        _str(obj.get("reclaimPolicy")) or "Delete",
        _str(obj.get("volumeBindingMode")) or "Immediate",
        expansion if isinstance(expansion, bool) else False,
        _age(obj, now),
    ]


def _int_or_string(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "N/A"
    return str(value)


def _controller_revision(obj: Obj, now: datetime) -> list[Any]:
    controller = "<none>"
    for ref in _list(_get(obj, "metadata", "ownerReferences")):
        if _get(ref, "controller") is True:
            group = _str(_get(ref, "apiVersion")).rpartition("/")[0]
            kind = _str(_get(ref, "kind"))
            controller = f"{kind}.{group}".lower() if group else kind.lower()
            controller = (
                f"{controller}/{_str(_get(ref, 'name'))}" if kind else _str(_get(ref, "name"))
            )
            break
    return [_name(obj), controller, _int(obj.get("revision")), _age(obj, now)]


def _resource_quota(obj: Obj, now: datetime) -> list[Any]:
    hard, used = _map(_get(obj, "status", "hard")), _map(_get(obj, "status", "used"))
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        column = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        column.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [_name(obj), _age(obj, now), ", ".join(requests), ", ".join(limits)]


def _hpa_metrics(obj: Obj) -> str:
    spec = _map(obj.get("spec"))
    specs = _list(spec.get("metrics"))
    statuses = _list(_get(obj, "status", "currentMetrics"))
    if not specs and isinstance(spec.get("targetCPUUtilizationPercentage"), int):
        # autoscaling/v1 keeps its one CPU target in dedicated fields.
        current = _get(obj, "status", "currentCPUUtilizationPercentage")
        shown = f"{current}%" if isinstance(current, int) else "<unknown>"
        return f"cpu: {shown}/{spec['targetCPUUtilizationPercentage']}%"
    if not specs:
        return "<none>"
    shown_metrics = []
    for i, metric in enumerate(specs):
        kind = _str(_get(metric, "type"))
        field = {
            "External": "external", "Pods": "pods", "Object": "object",
            "Resource": "resource", "ContainerResource": "containerResource",
        }.get(kind)  # fmt: skip
        if field is None:
            shown_metrics.append("<unknown type>")
            continue
        target = _map(_get(metric, field, "target"))
        current_status = _map(_get(statuses[i], field, "current")) if i < len(statuses) else {}
        has_status = i < len(statuses) and isinstance(_get(statuses[i], field), Mapping)
        if field in ("resource", "containerResource"):
            name = _str(_get(metric, field, "name"))
            if target.get("averageValue") is not None:
                current = current_status.get("averageValue") if has_status else None
                text = f"{current if current is not None else '<unknown>'}/{target['averageValue']}"
            else:
                utilization = current_status.get("averageUtilization")
                current_text = f"{utilization}%" if isinstance(utilization, int) else "<unknown>"
                want = target.get("averageUtilization")
                text = f"{current_text}/{f'{want}%' if isinstance(want, int) else '<auto>'}"
            shown_metrics.append(f"{name}: {text}")
        elif field == "pods" or target.get("averageValue") is not None:
            current = current_status.get("averageValue") if has_status else None
            suffix = " (avg)" if field != "pods" else ""
            shown_metrics.append(
                f"{current if current is not None else '<unknown>'}/{target.get('averageValue')}{suffix}"
            )
        else:
            current = current_status.get("value") if has_status else None
            shown_metrics.append(
                f"{current if current is not None else '<unknown>'}/{target.get('value')}"
            )
    text = ", ".join(shown_metrics[:2])
    return f"{text} + {len(shown_metrics) - 2} more..." if len(shown_metrics) > 2 else text


def _hpa(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    ref = _map(spec.get("scaleTargetRef"))
    min_pods = spec.get("minReplicas")
    return [
        _name(obj),
        f"{_str(ref.get('kind'))}/{_str(ref.get('name'))}",
        _hpa_metrics(obj),
        str(min_pods) if isinstance(min_pods, int) else "<unset>",
        _int(spec.get("maxReplicas")),
        _int(_get(obj, "status", "currentReplicas")),
        _age(obj, now),
    ]


def _pod_template(obj: Obj, now: datetime) -> list[Any]:
    names, images = _containers_and_images(_get(obj, "template", "spec"))
    return [_name(obj), names, images, _format_labels(_get(obj, "template", "metadata", "labels"))]


def _webhook_configuration(obj: Obj, now: datetime) -> list[Any]:
    return [_name(obj), len(_list(obj.get("webhooks"))), _age(obj, now)]


def _admission_policy(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    param = _map(spec.get("paramKind"))
    param_kind = (
        f"{_str(param.get('apiVersion'))}/{_str(param.get('kind'))}" if param else "<unset>"
    )
    return [_name(obj), len(_list(spec.get("validations"))), param_kind, _age(obj, now)]


def _admission_policy_binding(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    ref = _map(spec.get("paramRef"))
    param = "<unset>"
    if _str(ref.get("name")):
        namespace = _str(ref.get("namespace"))
        param = f"{namespace}/{ref['name']}" if namespace else _str(ref["name"])
    elif ref.get("selector") is not None:
        param = f"{_str(ref.get('namespace'))}/" + str(label_selector_from_dict(ref["selector"]))
    return [_name(obj), _str(spec.get("policyName")), param, _age(obj, now)]


def _api_service(obj: Obj, now: datetime) -> list[Any]:
    """kube-aggregator's table convertor: `Local` for APIs the server itself serves."""
    service = _get(obj, "spec", "service")
    where = "Local"
    if isinstance(service, Mapping):
        where = f"{_str(service.get('namespace'))}/{_str(service.get('name'))}"
    available = "Unknown"
    for condition in _list(_get(obj, "status", "conditions")):
        if _get(condition, "type") == "Available":
            state, reason = _str(condition.get("status")), _str(condition.get("reason"))
            available = f"{state} ({reason})" if state != "True" and reason else state
            break
    return [_name(obj), where, available, _age(obj, now)]


def _csi_driver(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    requests = spec.get("tokenRequests")
    audiences = ",".join(_str(_get(t, "audience")) for t in _list(requests))
    modes = ",".join(_str(m) for m in _list(spec.get("volumeLifecycleModes")))
    return [
        _name(obj),
        spec.get("attachRequired") is not False,
        spec.get("podInfoOnMount") is True,
        spec.get("storageCapacity") is True,
        audiences if requests is not None else "<unset>",
        spec.get("requiresRepublish") is True,
        modes or "<none>",
        _age(obj, now),
    ]


def _volume_attachment(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    return [
        _name(obj),
        _str(spec.get("attacher")),
        _str(_get(spec, "source", "persistentVolumeName")),
        _str(spec.get("nodeName")),
        _get(obj, "status", "attached") is True,
        _age(obj, now),
    ]


def _certificate_status(obj: Obj) -> str:
    """extractCSRStatus: the decision, then Failed and Issued as they apply."""
    types = {_get(c, "type") for c in _list(_get(obj, "status", "conditions"))}
    state = "Denied" if "Denied" in types else "Approved" if "Approved" in types else "Pending"
    if "Failed" in types:
        state += ",Failed"
    if _get(obj, "status", "certificate"):
        state += ",Issued"
    return state


def _certificate_signing_request(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    seconds = spec.get("expirationSeconds")
    duration = human_duration(timedelta(seconds=seconds)) if isinstance(seconds, int) else "<none>"
    return [
        _name(obj),
        _age(obj, now),
        _str(spec.get("signerName")),
        _str(spec.get("username")),
        duration,
        _certificate_status(obj),
    ]


def _flow_schema(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    method = _str(_get(spec, "distinguisherMethod", "type")) or "<none>"
    dangling = "?"
    for condition in _list(_get(obj, "status", "conditions")):
        if _get(condition, "type") == "Dangling":
            dangling = _str(condition.get("status"))
    return [
        _name(obj),
        _str(_get(spec, "priorityLevelConfiguration", "name")),
        _int(spec.get("matchingPrecedence")),
        method,
        _age(obj, now),
        dangling,
    ]


def _priority_level(obj: Obj, now: datetime) -> list[Any]:
    spec = _map(obj.get("spec"))
    limited = spec.get("limited")
    cells: list[Any] = ["<none>"] * 4
    if isinstance(limited, Mapping):
        cells[0] = _int(limited.get("nominalConcurrencyShares"))
        queuing = _get(limited, "limitResponse", "queuing")
        if isinstance(queuing, Mapping):
            cells[1:] = [_int(queuing.get(k)) for k in ("queues", "handSize", "queueLengthLimit")]
    return [_name(obj), _str(spec.get("type")), *cells, _age(obj, now)]


_POLICY = "io.k8s.api.policy.v1."
_RBAC = "io.k8s.api.rbac.v1."
_STORAGE = "io.k8s.api.storage.v1."
_ADMISSION = "admissionregistration.k8s.io"
_FLOW = "flowcontrol.apiserver.k8s.io"
_FLOW_DEF = "io.k8s.api.flowcontrol.v1."
_WEBHOOK_COLUMNS = (
    NAME,
    _c(
        "Webhooks",
        "Webhooks indicates the number of webhooks configured in the webhook configuration",
        "integer",
    ),
    AGE,
)

#: (group, kind) -> (columns, row function). Column order and cells follow the real
#: printers; every printer renders its wide columns, as the API server always does.
_PRINTERS: dict[tuple[str, str], tuple[tuple[_ColumnSpec, ...], RowFn]] = {
    ("", "Pod"): (_POD_COLUMNS, _pod_row),
    ("apps", "Deployment"): (
        (
            NAME,
            _c("Ready", "Number of the pod with ready state"),
            _c("Up-to-date", (_APPS + "DeploymentStatus", "updatedReplicas")),
            _c("Available", (_APPS + "DeploymentStatus", "availableReplicas")),
            AGE,
            CONTAINERS,
            IMAGES,
            _c("Selector", (_APPS + "DeploymentSpec", "selector"), priority=1),
        ),
        _plain(_deployment),
    ),
    ("apps", "ReplicaSet"): (
        (
            NAME,
            _c("Desired", (_APPS + "ReplicaSetSpec", "replicas"), "integer"),
            _c("Current", (_APPS + "ReplicaSetStatus", "replicas"), "integer"),
            _c("Ready", (_APPS + "ReplicaSetStatus", "readyReplicas"), "integer"),
            AGE,
            CONTAINERS,
            IMAGES,
            _c("Selector", (_APPS + "ReplicaSetSpec", "selector"), priority=1),
        ),
        _plain(_replica_set),
    ),
    ("", "ReplicationController"): (
        (
            NAME,
            _c("Desired", (_CORE + "ReplicationControllerSpec", "replicas"), "integer"),
            _c("Current", (_CORE + "ReplicationControllerStatus", "replicas"), "integer"),
            _c("Ready", (_CORE + "ReplicationControllerStatus", "readyReplicas"), "integer"),
            AGE,
            CONTAINERS,
            IMAGES,
            _c("Selector", (_CORE + "ReplicationControllerSpec", "selector"), priority=1),
        ),
        _plain(_replication_controller),
    ),
    ("apps", "StatefulSet"): (
        (NAME, _c("Ready", "Number of the pod with ready state"), AGE, CONTAINERS, IMAGES),
        _plain(_stateful_set),
    ),
    ("apps", "DaemonSet"): (
        (
            NAME,
            _c("Desired", (_APPS + "DaemonSetStatus", "desiredNumberScheduled"), "integer"),
            _c("Current", (_APPS + "DaemonSetStatus", "currentNumberScheduled"), "integer"),
            _c("Ready", (_APPS + "DaemonSetStatus", "numberReady"), "integer"),
            _c("Up-to-date", (_APPS + "DaemonSetStatus", "updatedNumberScheduled"), "integer"),
            _c("Available", (_APPS + "DaemonSetStatus", "numberAvailable"), "integer"),
            _c("Node Selector", (_CORE + "PodSpec", "nodeSelector")),
            AGE,
            CONTAINERS,
            IMAGES,
            _c("Selector", (_APPS + "DaemonSetSpec", "selector"), priority=1),
        ),
        _plain(_daemon_set),
    ),
    ("apps", "ControllerRevision"): (
        (
            NAME,
            _c("Controller", "Controller of the object"),
            _c("Revision", (_APPS + "ControllerRevision", "revision")),
            AGE,
        ),
        _plain(_controller_revision),
    ),
    ("batch", "Job"): (
        (
            NAME,
            _c("Status", "Status of the job."),
            _c("Completions", (_BATCH + "JobStatus", "succeeded")),
            _c("Duration", "Time required to complete the job."),
            AGE,
            CONTAINERS,
            IMAGES,
            _c("Selector", (_BATCH + "JobSpec", "selector"), priority=1),
        ),
        _plain(_job),
    ),
    ("batch", "CronJob"): (
        (
            NAME,
            _c("Schedule", (_BATCH + "CronJobSpec", "schedule")),
            _c("Timezone", (_BATCH + "CronJobSpec", "timeZone")),
            _c("Suspend", (_BATCH + "CronJobSpec", "suspend"), "boolean"),
            _c("Active", (_BATCH + "CronJobStatus", "active"), "integer"),
            _c("Last Schedule", (_BATCH + "CronJobStatus", "lastScheduleTime")),
            AGE,
            CONTAINERS,
            IMAGES,
            _c("Selector", (_BATCH + "JobSpec", "selector"), priority=1),
        ),
        _plain(_cron_job),
    ),
    ("", "Service"): (
        (
            NAME,
            _c("Type", (_CORE + "ServiceSpec", "type")),
            _c("Cluster-IP", (_CORE + "ServiceSpec", "clusterIP")),
            _c("External-IP", (_CORE + "ServiceSpec", "externalIPs")),
            _c("Port(s)", (_CORE + "ServiceSpec", "ports")),
            AGE,
            _c("Selector", (_CORE + "ServiceSpec", "selector"), priority=1),
        ),
        _plain(_service),
    ),
    ("", "ComponentStatus"): (
        (
            NAME,
            _c("Status", "Status of the component conditions"),
            _c("Message", "Message of the component conditions"),
            _c("Error", "Error of the component conditions"),
        ),
        _plain(_component_status),
    ),
    ("", "Endpoints"): (
        (NAME, _c("Endpoints", (_CORE + "Endpoints", "subsets")), AGE),
        _plain(_endpoints),
    ),
    ("discovery.k8s.io", "EndpointSlice"): (
        (
            NAME,
            _c("AddressType", ("io.k8s.api.discovery.v1.EndpointSlice", "addressType")),
            _c("Ports", ("io.k8s.api.discovery.v1.EndpointSlice", "ports")),
            _c("Endpoints", ("io.k8s.api.discovery.v1.EndpointSlice", "endpoints")),
            AGE,
        ),
        _plain(_endpoint_slice),
    ),
    ("", "Node"): (
        (
            NAME,
            _c("Status", "The status of the node"),
            _c("Roles", "The roles of the node"),
            AGE,
            _c("Version", (_CORE + "NodeSystemInfo", "kubeletVersion")),
            _c("Internal-IP", (_CORE + "NodeStatus", "addresses"), priority=1),
            _c("External-IP", (_CORE + "NodeStatus", "addresses"), priority=1),
            _c("OS-Image", (_CORE + "NodeSystemInfo", "osImage"), priority=1),
            _c("Kernel-Version", (_CORE + "NodeSystemInfo", "kernelVersion"), priority=1),
            _c(
                "Container-Runtime",
                (_CORE + "NodeSystemInfo", "containerRuntimeVersion"),
                priority=1,
            ),
        ),
        _plain(_node),
    ),
    ("", "Event"): (
        (
            _c("Last Seen", (_CORE + "Event", "lastTimestamp")),
            _c("Type", (_CORE + "Event", "type")),
            _c("Reason", (_CORE + "Event", "reason")),
            _c("Object", (_CORE + "Event", "involvedObject")),
            _c("Subobject", (_CORE + "ObjectReference", "fieldPath"), priority=1),
            _c("Source", (_CORE + "Event", "source"), priority=1),
            _c("Message", (_CORE + "Event", "message")),
            _c("First Seen", (_CORE + "Event", "firstTimestamp"), priority=1),
            _c("Count", (_CORE + "Event", "count"), priority=1),
            _c("Name", (_META, "name"), priority=1, format_="name"),
        ),
        _plain(_event),
    ),
    ("", "Namespace"): (
        (NAME, _c("Status", "The status of the namespace"), AGE),
        _plain(lambda o, now: [_name(o), _str(_get(o, "status", "phase")), _age(o, now)]),
    ),
    ("", "ConfigMap"): (
        (NAME, _c("Data", (_CORE + "ConfigMap", "data")), AGE),
        _plain(
            lambda o, now: [
                _name(o),
                len(_map(o.get("data"))) + len(_map(o.get("binaryData"))),
                _age(o, now),
            ]
        ),
    ),
    ("", "Secret"): (
        (NAME, _c("Type", (_CORE + "Secret", "type")), _c("Data", (_CORE + "Secret", "data")), AGE),
        _plain(
            lambda o, now: [_name(o), _str(o.get("type")), len(_map(o.get("data"))), _age(o, now)]
        ),
    ),
    ("", "ServiceAccount"): (
        (NAME, _c("Secrets", (_CORE + "ServiceAccount", "secrets")), AGE),
        _plain(lambda o, now: [_name(o), len(_list(o.get("secrets"))), _age(o, now)]),
    ),
    ("", "PersistentVolume"): (
        (
            NAME,
            _c("Capacity", (_CORE + "PersistentVolumeSpec", "capacity")),
            _c("Access Modes", (_CORE + "PersistentVolumeSpec", "accessModes")),
            _c("Reclaim Policy", (_CORE + "PersistentVolumeSpec", "persistentVolumeReclaimPolicy")),
            _c("Status", (_CORE + "PersistentVolumeStatus", "phase")),
            _c("Claim", (_CORE + "PersistentVolumeSpec", "claimRef")),
            _c("StorageClass", "StorageClass of the pv"),
            _c("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
            _c("Reason", (_CORE + "PersistentVolumeStatus", "reason")),
            AGE,
            _c("VolumeMode", (_CORE + "PersistentVolumeSpec", "volumeMode"), priority=1),
        ),
        _plain(_persistent_volume),
    ),
    ("", "PersistentVolumeClaim"): (
        (
            NAME,
            _c("Status", (_CORE + "PersistentVolumeClaimStatus", "phase")),
            _c("Volume", (_CORE + "PersistentVolumeClaimSpec", "volumeName")),
            _c("Capacity", (_CORE + "PersistentVolumeClaimStatus", "capacity")),
            _c("Access Modes", (_CORE + "PersistentVolumeClaimStatus", "accessModes")),
            _c("StorageClass", "StorageClass of the pvc"),
            _c("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
            AGE,
            _c("VolumeMode", (_CORE + "PersistentVolumeClaimSpec", "volumeMode"), priority=1),
        ),
        _plain(_persistent_volume_claim),
    ),
    ("", "LimitRange"): ((NAME, CREATED_AT), _plain(lambda o, now: [_name(o), _created_at(o)])),
    ("", "ResourceQuota"): (
        (
            NAME,
            AGE,
            _c(
                "Request",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
            ),
            _c(
                "Limit",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
            ),
        ),
        _plain(_resource_quota),
    ),
    ("networking.k8s.io", "Ingress"): (
        (
            NAME,
            _c(
                "Class",
                "The name of the IngressClass resource that should be used for additional configuration",
            ),
            _c("Hosts", "Hosts that incoming requests are matched against before the ingress rule"),
            _c("Address", "Address is a list containing ingress points for the load-balancer"),
            _c("Ports", "Ports of TLS configurations that open"),
            AGE,
        ),
        _plain(_ingress),
    ),
    ("networking.k8s.io", "IngressClass"): (
        (
            NAME,
            _c("Controller", "Controller that is responsible for handling this class"),
            _c("Parameters", "A reference to a resource with additional parameters"),
            AGE,
        ),
        _plain(_ingress_class),
    ),
    ("networking.k8s.io", "NetworkPolicy"): (
        (
            NAME,
            _c("Pod-Selector", ("io.k8s.api.networking.v1.NetworkPolicySpec", "podSelector")),
            AGE,
        ),
        _plain(
            lambda o, now: [
                _name(o),
                _format_label_selector(_get(o, "spec", "podSelector")),
                _age(o, now),
            ]
        ),
    ),
    ("rbac.authorization.k8s.io", "Role"): (
        (NAME, CREATED_AT),
        _plain(lambda o, now: [_name(o), _created_at(o)]),
    ),
    ("rbac.authorization.k8s.io", "ClusterRole"): (
        (NAME, CREATED_AT),
        _plain(lambda o, now: [_name(o), _created_at(o)]),
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (
        (
            NAME,
            _c("Role", (_RBAC + "RoleBinding", "roleRef")),
            AGE,
            _c("Users", "Users in the roleBinding", priority=1),
            _c("Groups", "Groups in the roleBinding", priority=1),
            _c("ServiceAccounts", "ServiceAccounts in the roleBinding", priority=1),
        ),
        _plain(_role_binding),
    ),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        (
            NAME,
            _c("Role", (_RBAC + "ClusterRoleBinding", "roleRef")),
            AGE,
            _c("Users", "Users in the clusterRoleBinding", priority=1),
            _c("Groups", "Groups in the clusterRoleBinding", priority=1),
            _c("ServiceAccounts", "ServiceAccounts in the clusterRoleBinding", priority=1),
        ),
        _plain(_role_binding),
    ),
    ("policy", "PodDisruptionBudget"): (
        (
            NAME,
            _c("Min Available", "The minimum number of pods that must be available."),
            _c("Max Unavailable", "The maximum number of pods that may be unavailable."),
            _c(
                "Allowed Disruptions",
                "Calculated number of pods that may be disrupted at this time.",
                "integer",
            ),
            AGE,
        ),
        _plain(
            lambda o, now: [
                _name(o),
                _int_or_string(_get(o, "spec", "minAvailable")),
                _int_or_string(_get(o, "spec", "maxUnavailable")),
                _int(_get(o, "status", "disruptionsAllowed")),
                _age(o, now),
            ]
        ),
    ),
    ("autoscaling", "HorizontalPodAutoscaler"): (
        (
            NAME,
            _c(
                "Reference",
                ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "scaleTargetRef"),
            ),
            _c("Targets", ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics")),
            _c("MinPods", ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "minReplicas")),
            _c("MaxPods", ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "maxReplicas")),
            _c(
                "Replicas",
                ("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "currentReplicas"),
            ),
            AGE,
        ),
        _plain(_hpa),
    ),
    ("storage.k8s.io", "StorageClass"): (
        (
            NAME,
            _c("Provisioner", (_STORAGE + "StorageClass", "provisioner")),
            _c("ReclaimPolicy", (_STORAGE + "StorageClass", "reclaimPolicy")),
            _c("VolumeBindingMode", (_STORAGE + "StorageClass", "volumeBindingMode")),
            _c("AllowVolumeExpansion", (_STORAGE + "StorageClass", "allowVolumeExpansion")),
            AGE,
        ),
        _plain(_storage_class),
    ),
    ("coordination.k8s.io", "Lease"): (
        (NAME, _c("Holder", ("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity")), AGE),
        _plain(lambda o, now: [_name(o), _str(_get(o, "spec", "holderIdentity")), _age(o, now)]),
    ),
    ("scheduling.k8s.io", "PriorityClass"): (
        (
            NAME,
            _c("Value", ("io.k8s.api.scheduling.v1.PriorityClass", "value"), "integer"),
            _c(
                "Global-Default",
                ("io.k8s.api.scheduling.v1.PriorityClass", "globalDefault"),
                "boolean",
            ),
            AGE,
            _c("PreemptionPolicy", ("io.k8s.api.scheduling.v1.PriorityClass", "preemptionPolicy")),
        ),
        _plain(
            lambda o, now: [
                _name(o),
                _int(o.get("value")),
                o.get("globalDefault") is True,
                _age(o, now),
                _str(o.get("preemptionPolicy")) or "PreemptLowerPriority",
            ]
        ),
    ),
    ("", "PodTemplate"): (
        (
            NAME,
            _c("Containers", "Names of each container in the template."),
            _c("Images", "Images referenced by each container in the template."),
            _c("Pod Labels", "The labels for the pod template."),
        ),
        _plain(_pod_template),
    ),
    (_ADMISSION, "ValidatingWebhookConfiguration"): (
        _WEBHOOK_COLUMNS,
        _plain(_webhook_configuration),
    ),
    (_ADMISSION, "MutatingWebhookConfiguration"): (
        _WEBHOOK_COLUMNS,
        _plain(_webhook_configuration),
    ),
    (_ADMISSION, "ValidatingAdmissionPolicy"): (
        (
            NAME,
            _c(
                "Validations",
                "Validations indicates the number of validation rules defined in this configuration",
                "integer",
            ),
            _c(
                "ParamKind",
                "ParamKind specifies the kind of resources used to parameterize this policy",
            ),
            AGE,
        ),
        _plain(_admission_policy),
    ),
    (_ADMISSION, "ValidatingAdmissionPolicyBinding"): (
        (
            NAME,
            _c(
                "PolicyName",
                "PolicyName indicates the policy definition which the policy binding binded to",
            ),
            _c(
                "ParamRef",
                "ParamRef indicates the param resource which sets the configration param",
            ),
            AGE,
        ),
        _plain(_admission_policy_binding),
    ),
    ("apiregistration.k8s.io", "APIService"): (
        (
            NAME,
            _c("Service", "The reference to the service that hosts this API endpoint."),
            _c("Available", "Whether this service is available."),
            AGE,
        ),
        _plain(_api_service),
    ),
    ("node.k8s.io", "RuntimeClass"): (
        (NAME, _c("Handler", ("io.k8s.api.node.v1.RuntimeClass", "handler")), AGE),
        _plain(lambda o, now: [_name(o), _str(o.get("handler")), _age(o, now)]),
    ),
    ("storage.k8s.io", "CSIDriver"): (
        (
            NAME,
            _c("AttachRequired", (_STORAGE + "CSIDriverSpec", "attachRequired"), "boolean"),
            _c("PodInfoOnMount", (_STORAGE + "CSIDriverSpec", "podInfoOnMount"), "boolean"),
            _c("StorageCapacity", (_STORAGE + "CSIDriverSpec", "storageCapacity"), "boolean"),
            _c("TokenRequests", (_STORAGE + "CSIDriverSpec", "tokenRequests")),
            _c("RequiresRepublish", (_STORAGE + "CSIDriverSpec", "requiresRepublish"), "boolean"),
            _c("Modes", (_STORAGE + "CSIDriverSpec", "volumeLifecycleModes")),
            AGE,
        ),
        _plain(_csi_driver),
    ),
    ("storage.k8s.io", "CSINode"): (
        (
            NAME,
            _c(
                "Drivers",
                "Drivers indicates the number of CSI drivers registered on the node",
                "integer",
            ),
            AGE,
        ),
        _plain(lambda o, now: [_name(o), len(_list(_get(o, "spec", "drivers"))), _age(o, now)]),
    ),
    ("storage.k8s.io", "VolumeAttachment"): (
        (
            NAME,
            _c("Attacher", (_STORAGE + "VolumeAttachmentSpec", "attacher")),
            _c("PV", (_STORAGE + "VolumeAttachmentSource", "persistentVolumeName")),
            _c("Node", (_STORAGE + "VolumeAttachmentSpec", "nodeName")),
            _c("Attached", (_STORAGE + "VolumeAttachmentStatus", "attached"), "boolean"),
            AGE,
        ),
        _plain(_volume_attachment),
    ),
    ("storage.k8s.io", "CSIStorageCapacity"): (
        (
            NAME,
            _c("StorageClassName", (_STORAGE + "CSIStorageCapacity", "storageClassName")),
            _c("Capacity", (_STORAGE + "CSIStorageCapacity", "capacity")),
        ),
        _plain(lambda o, now: [_name(o), _str(o.get("storageClassName")), _str(o.get("capacity"))]),
    ),
    ("certificates.k8s.io", "CertificateSigningRequest"): (
        (
            NAME,
            AGE,
            _c(
                "SignerName",
                ("io.k8s.api.certificates.v1.CertificateSigningRequestSpec", "signerName"),
            ),
            _c("Requestor", "Request originator"),
            _c(
                "RequestedDuration",
                ("io.k8s.api.certificates.v1.CertificateSigningRequestSpec", "expirationSeconds"),
            ),
            _c("Condition", "State of the request"),
        ),
        _plain(_certificate_signing_request),
    ),
    (_FLOW, "FlowSchema"): (
        (
            NAME,
            _c("PriorityLevel", (_FLOW_DEF + "PriorityLevelConfigurationReference", "name")),
            _c(
                "MatchingPrecedence",
                (_FLOW_DEF + "FlowSchemaSpec", "matchingPrecedence"),
                "integer",
            ),
            _c("DistinguisherMethod", (_FLOW_DEF + "FlowSchemaSpec", "distinguisherMethod")),
            AGE,
            _c("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
        ),
        _plain(_flow_schema),
    ),
    (_FLOW, "PriorityLevelConfiguration"): (
        (
            NAME,
            _c("Type", (_FLOW_DEF + "PriorityLevelConfigurationSpec", "type")),
            _c(
                "NominalConcurrencyShares",
                (_FLOW_DEF + "LimitedPriorityLevelConfiguration", "nominalConcurrencyShares"),
            ),
            _c("Queues", (_FLOW_DEF + "QueuingConfiguration", "queues")),
            _c("HandSize", (_FLOW_DEF + "QueuingConfiguration", "handSize")),
            _c("QueueLengthLimit", (_FLOW_DEF + "QueuingConfiguration", "queueLengthLimit")),
            AGE,
        ),
        _plain(_priority_level),
    ),
}

_DEFAULT_COLUMNS = (NAME, CREATED_AT)


def _default_row(obj: Obj, now: datetime) -> tuple[list[Any], list[dict[str, str]] | None]:
    return [_name(obj), _created_at(obj)], None


# --------------------------------------------------------------------------------------
# Custom resources: Name, then the CRD's additionalPrinterColumns.


def _crd_columns(rtype: ResourceType) -> list[dict[str, Any]]:
    declared = list(rtype.printer_columns)
    if not declared:
        # A version without printer columns is served with an Age column (and only then).
        declared = [
            {
                "name": "Age",
                "type": "date",
                "description": _doc(_META, "creationTimestamp"),
                "jsonPath": ".metadata.creationTimestamp",
            }
        ]
    columns = [_column(NAME)]
    for column in declared:
        path = str(column.get("jsonPath", column.get("JSONPath", "")))
        columns.append(
            {
                "name": str(column.get("name", "")),
                "type": str(column.get("type", "")),
                "format": str(column.get("format", "")),
                "description": str(
                    column.get("description")
                    or f"Custom resource definition column (in JSONPath format): {path}"
                ),
                "priority": _int(column.get("priority")),
                "jsonPath": path,
            }
        )
    return columns


def _json_cell(column_type: str, value: Any, now: datetime) -> Any:
    """tableconvertor.cellForJSONValue: a typed cell, or None when the value does not fit."""
    if value is None:
        return None
    if column_type == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value)
    elif column_type == "number":
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif column_type == "boolean":
        if isinstance(value, bool):
            return value
    elif column_type == "string":
        if isinstance(value, str):
            return value
    elif column_type == "date" and isinstance(value, str):
        when = _parse_time(value)
        return "<invalid>" if when is None else human_duration(now - when)
    return None


def _crd_row_fn(columns: list[dict[str, Any]]) -> RowFn:
    paths: list[jsonpath.JSONPath | None] = []
    for column in columns[1:]:
        try:
            paths.append(jsonpath.parse(column["jsonPath"]))
        except ValueError:
            paths.append(None)  # the CRD would not have been accepted; show nothing

    def row(obj: Obj, now: datetime) -> tuple[list[Any], list[dict[str, str]] | None]:
        cells: list[Any] = [_name(obj)]
        for column, path in zip(columns[1:], paths, strict=True):
            found = path.find(obj) if path is not None else []
            if not found:
                cells.append(None)
            elif column["type"] == "string":
                # String columns print whatever they find, as `-o jsonpath` would;
                # an explicit null reaches Go's printer as an invalid value.
                cells.append("<no value>" if found[0] is None else jsonpath.format_value(found[0]))
            else:
                cells.append(_json_cell(column["type"], found[0], now))
        return cells, None

    return row


# --------------------------------------------------------------------------------------
# Public entry points


def _printer(rtype: ResourceType) -> tuple[list[dict[str, Any]], RowFn]:
    if rtype.crd is not None:
        columns = _crd_columns(rtype)
        row = _crd_row_fn(columns)
        return [{k: v for k, v in c.items() if k != "jsonPath"} for c in columns], row
    specs, row = _PRINTERS.get((rtype.group, rtype.kind), (_DEFAULT_COLUMNS, _default_row))
    return [_column(s) for s in specs], row


def table_columns(rtype: ResourceType) -> list[dict[str, Any]]:
    """The column definitions a Table of `rtype` carries."""
    return _printer(rtype)[0]


_INCLUDE_OBJECT = ("None", "Metadata", "Object", "")


def render_table(
    rtype: ResourceType,
    objects: Sequence[Mapping[str, Any]],
    *,
    list_meta: Mapping[str, Any],
    include_object: str = "Metadata",
    now: datetime | None = None,
    group_version: str = "meta.k8s.io/v1",
    no_headers: bool = False,
) -> dict[str, Any]:
    """A meta.k8s.io Table of `objects`, as the API server answers `as=Table`.

    `list_meta` supplies `resourceVersion`, `continue` and `remainingItemCount` (for a
    single GET, pass the object's resourceVersion). `include_object` is the
    `includeObject` parameter: "Metadata" (the default, also for "") embeds a
    PartialObjectMetadata per row, "Object" the object as given, "None" nothing.
    Raises BadRequest for an unknown `includeObject` and NotAcceptable for a Table
    group version that does not exist.
    """
    if group_version not in TABLE_GROUP_VERSIONS:
        raise NotAcceptable(f"no Table exists in group version {group_version}")
    if include_object not in _INCLUDE_OBJECT:
        raise BadRequest(f"unrecognized includeObject value: {json.dumps(include_object)}")
    when = now if now is not None else datetime.now(UTC)
    columns, row_fn = _printer(rtype)
    rows = []
    for obj in objects:
        cells, conditions = row_fn(obj, when)
        row: dict[str, Any] = {"cells": cells}
        if conditions:
            row["conditions"] = [dict(c) for c in conditions]
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "None":
            row["object"] = None
        else:
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": group_version,
                "metadata": obj.get("metadata") or {},
            }
        rows.append(row)
    metadata: dict[str, Any] = {}
    for key in ("resourceVersion", "continue"):
        if list_meta.get(key):
            metadata[key] = list_meta[key]
    if list_meta.get("remainingItemCount") is not None:
        metadata["remainingItemCount"] = list_meta["remainingItemCount"]
    return {
        "kind": "Table",
        "apiVersion": group_version,
        "metadata": metadata,
        "columnDefinitions": [] if no_headers else columns,
        "rows": rows,
    }
