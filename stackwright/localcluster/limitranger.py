"""The LimitRanger admission plugin: a namespace's LimitRanges default and bound resources.

As kube-apiserver's plugin/pkg/admission/limitranger: at a Pod's creation each container
without a limit (a request) gets the `default` (`defaultRequest`) of the namespace's
`Container` limits, noted in the `kubernetes.io/limit-ranger` annotation; then `min`,
`max` and `maxLimitRequestRatio` of `Container` and `Pod` limits, and of
`PersistentVolumeClaim` limits on a claim's storage, refuse what is out of bounds with
the plugin's own words, all of them in one Forbidden.

Must never: read more than the namespace's LimitRanges, or change anything when the
namespace has none (the common case pays one dictionary look-up).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from stackwright.localcluster import defaults, status
from stackwright.localcluster.decoding import quantity
from stackwright.localcluster.quota import pod_totals
from stackwright.localcluster.store import Obj, Store

LIMIT_RANGES = ("", "limitranges")
POD_TYPE = ("", "pods")
CLAIM_TYPE = ("", "persistentvolumeclaims")
ANNOTATION = "kubernetes.io/limit-ranger"
#: Quantities as the plugin shows them: the stored (canonical) text.
Resources = dict[str, str]


def admit(store: Store, key: tuple[str, str], old: Obj | None, obj: Obj) -> None:
    """Default and check a Pod (at creation) or a claim (at creation and update), in place."""
    if key == POD_TYPE and old is not None:
        return  # a pod's resources cannot change after creation
    meta = obj["metadata"]
    items = [
        item
        for limit_range in store.items(LIMIT_RANGES, meta.get("namespace", ""))
        for item in ((limit_range.get("spec") or {}).get("limits") or [])
        if isinstance(item, dict)
    ]
    if not items:
        return
    if key == POD_TYPE:
        _default_pod(obj, items)
        errors = pod_errors(obj, items)
    else:
        errors = claim_errors(obj, items)
    if errors:
        raise status.admission_forbidden(key[1], meta, aggregate(errors))


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message bare, several in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# --- defaults ----------------------------------------------------------------------------


def _default_pod(pod: Obj, items: list[Obj]) -> None:
    """mergePodResourceRequirements, with the defaults of every `Container` item."""
    default_limits: Resources = {}
    default_requests: Resources = {}
    for item in items:
        if item.get("type") == "Container":
            default_requests.update(item.get("defaultRequest") or {})
            default_limits.update(item.get("default") or {})
    if not default_limits and not default_requests:
        return
    notes: list[str] = []
    spec = pod.setdefault("spec", {})
    for field, label in (("containers", "container"), ("initContainers", "init container")):
        for container in spec.get(field) or []:
            if isinstance(container, dict):
                notes += _default_container(container, default_limits, default_requests, label)
    if notes:
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)
        pod.setdefault("status", {})["qosClass"] = defaults.qos_class(spec)


def _default_container(
    container: Obj, limits: Resources, requests: Resources, label: str
) -> list[str]:
    resources = container.setdefault("resources", {})
    notes = []
    set_limits = _fill(resources, "limits", limits)
    set_requests = _fill(resources, "requests", requests)
    name = container.get("name", "")
    if set_requests:
        notes.append(f"{', '.join(sorted(set_requests))} request for {label} {name}")
    if set_limits:
        notes.append(f"{', '.join(sorted(set_limits))} limit for {label} {name}")
    return notes


def _fill(resources: Obj, field: str, wanted: Resources) -> list[str]:
    if not wanted:
        return []
    present = resources.get(field)
    if not isinstance(present, dict):
        present = resources[field] = {}
    missing = [name for name in wanted if name not in present]
    for name in missing:
        present[name] = wanted[name]
    return missing


# --- bounds ------------------------------------------------------------------------------


def pod_errors(pod: Obj, items: list[Obj]) -> list[str]:
    """PodValidateLimitFunc: each container against `Container` items, the pod's sums
    (the larger of its containers' and any one init container's) against `Pod` items."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    inits = [c for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    errors: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "Container":
            for container in containers + inits:
                resources = container.get("resources") or {}
                errors += _bounds(
                    "Container", item, resources.get("requests") or {},
                    resources.get("limits") or {},
                )  # fmt: skip
        elif kind == "Pod":
            requests, limits = (
                {name: qty.canonical() for name, qty in pod_totals(spec, field).items()}
                for field in ("requests", "limits")
            )
            errors += _bounds("Pod", item, requests, limits)
    return errors


def claim_errors(claim: Obj, items: list[Obj]) -> list[str]:
    """PersistentVolumeClaimValidateLimitFunc: the claim's storage request in min..max."""
    resources = (claim.get("spec") or {}).get("resources") or {}
    requests = resources.get("requests") or {}
    errors: list[str] = []
    for item in items:
        if item.get("type") != "PersistentVolumeClaim":
            continue
        for name, bound in (item.get("min") or {}).items():
            errors += _min("PersistentVolumeClaim", name, bound, requests, {})
        for name, bound in (item.get("max") or {}).items():
            errors += _max_request("PersistentVolumeClaim", name, bound, requests)
    return errors


def _bounds(kind: str, item: Obj, requests: Resources, limits: Resources) -> list[str]:
    errors: list[str] = []
    for name, bound in (item.get("min") or {}).items():
        errors += _min(kind, name, bound, requests, limits)
    for name, bound in (item.get("max") or {}).items():
        errors += _max(kind, name, bound, requests, limits)
    for name, bound in (item.get("maxLimitRequestRatio") or {}).items():
        errors += _ratio(kind, name, bound, requests, limits)
    return errors


def _value(value: Any) -> Fraction | None:
    qty = quantity(value)
    return qty.value if qty is not None else None


def _min(kind: str, name: str, bound: str, requests: Resources, limits: Resources) -> list[str]:
    """minConstraint: a request is required, neither it nor a limit below the bound."""
    return _outside(kind, name, bound, -1, [("request", requests, True), ("limit", limits, False)])


def _max(kind: str, name: str, bound: str, requests: Resources, limits: Resources) -> list[str]:
    """maxConstraint: a limit is required, neither it nor a request above the bound."""
    return _outside(kind, name, bound, 1, [("limit", limits, True), ("request", requests, False)])


def _max_request(kind: str, name: str, bound: str, requests: Resources) -> list[str]:
    """maxRequestConstraint (claims): a request is required, not above the bound."""
    return _outside(kind, name, bound, 1, [("request", requests, True)])


def _outside(
    kind: str, name: str, bound: str, side: int, checked: list[tuple[str, Resources, bool]]
) -> list[str]:
    """The first of `checked` (what, its amounts, whether required) past `bound` on
    `side` (-1: below a minimum, 1: above a maximum)."""
    edge = _value(bound)
    if edge is None:
        return []
    prefix = f"{'minimum' if side < 0 else 'maximum'} {name} usage per {kind} is {bound}"
    for what, amounts, required in checked:
        if name not in amounts:
            if required:
                return [f"{prefix}.  No {what} is specified"]
            continue
        amount = _value(amounts[name])
        if amount is not None and (amount - edge) * side > 0:
            return [f"{prefix}, but {what} is {amounts[name]}"]
    return []


def _ratio(kind: str, name: str, bound: str, requests: Resources, limits: Resources) -> list[str]:
    most = _value(bound)
    if most is None:
        return []
    prefix = f"{name} max limit to request ratio per {kind} is {bound}"
    request = _value(requests.get(name))
    if not request:
        return [f"{prefix}, but no request is specified or request is 0"]
    limit = _value(limits.get(name))
    if not limit:
        return [f"{prefix}, but no limit is specified or limit is 0"]
    ratio = limit / request
    if ratio > most:
        return [f"{prefix}, but provided ratio is {float(ratio):f}"]
    return []
