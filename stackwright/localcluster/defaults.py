"""The defaults kube-apiserver 1.33 fills into built-in objects before validating them.

`apply_defaults` mirrors the `SetDefaults_*` functions of `pkg/apis/*/v1`, plus the few
things a real server writes at the same stage that users see in every object (a Pod's
initial status and QoS class, Secret `stringData` folded into `data`, quantities in their
canonical form). Which kind gets which defaults is the `_DEFAULTERS` table below.

It changes only the object it is given, only by adding what is missing (a JSON null
counts as missing) — never by overwriting what the user set — and it never does I/O:
namespace settling, generated names, cluster IPs, node ports and admission plugins
(service accounts, priorities, default tolerations) belong to the caller. So does a Job's
generated selector, which needs the uid: `default_job_selector` does it once one exists.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from stackwright.localcluster.validation import Quantity, parse_quantity

__all__ = ["apply_defaults", "canonical_quantity", "default_job_selector", "qos_class"]

Obj = dict[str, Any]
Defaulter = Callable[[Obj], None]


def apply_defaults(obj: dict[str, Any], group: str, kind: str) -> None:
    """Fill in what the API server defaults for `group`/`kind`, in place."""
    for step in _DEFAULTERS.get((group, kind), ()):
        step(obj)


def canonical_quantity(value: Any) -> Any:
    """A quantity as the server writes it back (`0.5` → `"500m"`); unparseable values unchanged."""
    qty = _parse(value)
    return qty.canonical() if qty is not None else value


def default_job_selector(job: dict[str, Any]) -> None:
    """The selector and pod labels a Job gets from its uid, unless `manualSelector` is true.

    The Job strategy does this at creation, after the uid is assigned; call it then.
    """
    spec = _obj(job, "spec")
    uid = (job.get("metadata") or {}).get("uid")
    name = (job.get("metadata") or {}).get("name", "")
    if spec.get("manualSelector") is True or not uid:
        return
    template = _obj(spec, "template")
    labels = _obj(_obj(template, "metadata"), "labels")
    generated = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    }
    for key, value in generated.items():
        _set(labels, key, value)
    if spec.get("selector") is None:
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


# --- helpers ------------------------------------------------------------------------


def _set(target: Obj, key: str, value: Any) -> None:
    """Default one field: absent or null becomes `value` (a fresh copy of it)."""
    if target.get(key) is None:
        target[key] = _copy(value)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _obj(parent: Obj, key: str) -> Obj:
    """The object at `parent[key]`, created when absent (as Go's non-pointer structs are)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = parent[key] = {}
    return value


def _child(parent: Any, key: str) -> Obj | None:
    """The object at `parent[key]` when there is one; never creates it."""
    if not isinstance(parent, dict):
        return None
    value = parent.get(key)
    return value if isinstance(value, dict) else None


def _items(parent: Any, key: str) -> list[Obj]:
    if not isinstance(parent, dict):
        return []
    value = parent.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _parse(value: Any) -> Quantity | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = value.strip() if isinstance(value, str) else _number(value)
    try:
        return parse_quantity(text)
    except ValueError:
        return None


def _number(value: float) -> str:
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _canonical_map(resources: Any) -> None:
    if isinstance(resources, dict):
        for key, value in resources.items():
            resources[key] = canonical_quantity(value)


# --- pods and pod templates (core/v1 SetDefaults_PodSpec, _Container, _Probe, _Volume) -


def _image_pull_policy(image: str) -> str:
    """Always for `:latest` or an untagged image (no digest either), else IfNotPresent."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2] if ":" in last else ""
    if not tag and not digest:
        tag = "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _handler(handler: Obj | None) -> None:
    if handler is None:
        return
    http = _child(handler, "httpGet")
    if http is not None:
        _set(http, "path", "/")
        _set(http, "scheme", "HTTP")


def _probe(probe: Obj | None) -> None:
    if probe is None:
        return
    _set(probe, "timeoutSeconds", 1)
    _set(probe, "periodSeconds", 10)
    _set(probe, "successThreshold", 1)
    _set(probe, "failureThreshold", 3)
    _handler(probe)


def _container(container: Obj) -> None:
    if container.get("imagePullPolicy") is None:
        container["imagePullPolicy"] = _image_pull_policy(str(container.get("image") or ""))
    _set(container, "terminationMessagePath", "/dev/termination-log")
    _set(container, "terminationMessagePolicy", "File")
    resources = _obj(container, "resources")  # a struct in Go: always written, `{}` when empty
    _canonical_map(resources.get("limits"))
    _canonical_map(resources.get("requests"))
    for port in _items(container, "ports"):
        _set(port, "protocol", "TCP")
    for var in _items(container, "env"):
        field_ref = _child(_child(var, "valueFrom"), "fieldRef")
        if field_ref is not None:
            _set(field_ref, "apiVersion", "v1")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(_child(container, kind))
    lifecycle = _child(container, "lifecycle")
    for hook in ("postStart", "preStop"):
        _handler(_child(lifecycle, hook))


# Volume sources a volume may name; a volume naming none becomes an emptyDir.
_VOLUME_SOURCES = frozenset(
    {
        "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret", "nfs",
        "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs", "quobyte",
        "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume",
        "photonPersistentDisk", "portworxVolume", "azureDisk", "storageos", "projected", "scaleIO",
        "csi", "ephemeral", "image",
    }
)  # fmt: skip
_DEFAULT_MODE = 0o644  # 420: files readable by all, writable by the owner


def _volume(volume: Obj) -> None:
    if not any(volume.get(key) is not None for key in _VOLUME_SOURCES):
        volume["emptyDir"] = {}
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = _child(volume, key)
        if source is not None:
            _set(source, "defaultMode", _DEFAULT_MODE)
    for item in _items(_child(volume, "downwardAPI"), "items"):
        field_ref = _child(item, "fieldRef")
        if field_ref is not None:
            _set(field_ref, "apiVersion", "v1")
    host_path = _child(volume, "hostPath")
    if host_path is not None:
        _set(host_path, "type", "")  # HostPathUnset: written out as ""
    empty_dir = _child(volume, "emptyDir")
    if empty_dir is not None and empty_dir.get("sizeLimit") is not None:
        empty_dir["sizeLimit"] = canonical_quantity(empty_dir["sizeLimit"])
    for source in _items(_child(volume, "projected"), "sources"):
        token = _child(source, "serviceAccountToken")
        if token is not None:
            _set(token, "expirationSeconds", 3600)
        for item in _items(_child(source, "downwardAPI"), "items"):
            field_ref = _child(item, "fieldRef")
            if field_ref is not None:
                _set(field_ref, "apiVersion", "v1")
    claim_spec = _child(_child(_child(volume, "ephemeral"), "volumeClaimTemplate"), "spec")
    if claim_spec is not None:
        _claim_spec(claim_spec)


def _pod_spec(spec: Obj) -> None:
    """SetDefaults_PodSpec: what every pod spec gets, in a Pod or in a template."""
    _set(spec, "dnsPolicy", "ClusterFirst")
    _set(spec, "restartPolicy", "Always")
    _set(spec, "terminationGracePeriodSeconds", 30)
    _set(spec, "securityContext", {})
    _set(spec, "schedulerName", "default-scheduler")
    # v1 keeps the deprecated serviceAccount in step with serviceAccountName (conversion).
    if spec.get("serviceAccountName") and not spec.get("serviceAccount"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    elif spec.get("serviceAccount") and not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    for volume in _items(spec, "volumes"):
        _volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _items(spec, key):
            _container(container)


def _pod_template(template: Obj | None) -> None:
    if template is not None:
        _pod_spec(_obj(template, "spec"))


def _pod(pod: Obj) -> None:
    """SetDefaults_Pod (pod-only defaults) and the Pod strategy's initial status."""
    spec = _obj(pod, "spec")
    _pod_spec(spec)
    for key in ("initContainers", "containers"):
        for container in _items(spec, key):
            resources = _obj(container, "resources")
            limits = resources.get("limits")
            if isinstance(limits, dict) and limits:
                requests = _obj(resources, "requests")
                for name, value in limits.items():  # requests default to limits, for Pods only
                    _set(requests, name, value)
            if spec.get("hostNetwork") is True:
                for port in _items(container, "ports"):
                    _set(port, "hostPort", port.get("containerPort"))
    _set(spec, "enableServiceLinks", True)
    status = _obj(pod, "status")
    _set(status, "phase", "Pending")
    _set(status, "qosClass", qos_class(spec))


def qos_class(spec: Obj) -> str:
    """ComputePodQOS over cpu and memory of all init and regular containers."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for key in ("initContainers", "containers"):
        for container in _items(spec, key):
            resources = _child(container, "resources") or {}
            for name, value in (_child(resources, "requests") or {}).items():
                qty = _parse(value)
                if name in ("cpu", "memory") and qty is not None and qty.value != 0:
                    requests[name] = requests.get(name, 0) + qty.value
            found = set()
            for name, value in (_child(resources, "limits") or {}).items():
                qty = _parse(value)
                if name in ("cpu", "memory") and qty is not None and qty.value != 0:
                    limits[name] = limits.get(name, 0) + qty.value
                    found.add(name)
            if found != {"cpu", "memory"}:
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matched = all(limits.get(name) == value for name, value in requests.items())
    if guaranteed and matched and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


# --- workloads (apps/v1, batch/v1) ----------------------------------------------------


def _deployment(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "replicas", 1)
    strategy = _obj(spec, "strategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _obj(strategy, "rollingUpdate")
        _set(rolling, "maxUnavailable", "25%")
        _set(rolling, "maxSurge", "25%")
    _set(spec, "revisionHistoryLimit", 10)
    _set(spec, "progressDeadlineSeconds", 600)
    _pod_template(_child(spec, "template"))


def _replica_set(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "replicas", 1)
    _pod_template(_child(spec, "template"))


def _stateful_set(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "podManagementPolicy", "OrderedReady")
    strategy = _obj(spec, "updateStrategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        _set(strategy, "rollingUpdate", {"partition": 0})
        _set(strategy["rollingUpdate"], "partition", 0)
    _set(spec, "replicas", 1)
    _set(spec, "revisionHistoryLimit", 10)
    retention = _obj(spec, "persistentVolumeClaimRetentionPolicy")  # StatefulSetAutoDeletePVC: GA
    _set(retention, "whenDeleted", "Retain")
    _set(retention, "whenScaled", "Retain")
    for claim in _items(spec, "volumeClaimTemplates"):
        _set(claim, "apiVersion", "v1")
        _set(claim, "kind", "PersistentVolumeClaim")
        _persistent_volume_claim(claim)
    _pod_template(_child(spec, "template"))


def _daemon_set(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    strategy = _obj(spec, "updateStrategy")
    _set(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = _obj(strategy, "rollingUpdate")
        _set(rolling, "maxUnavailable", 1)
        _set(rolling, "maxSurge", 0)
    _set(spec, "revisionHistoryLimit", 10)
    _pod_template(_child(spec, "template"))


def _job(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1  # a plain one-pod job
    _set(spec, "parallelism", 1)
    _set(spec, "backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6)
    template = _child(spec, "template")
    template_labels = (_child(template, "metadata") or {}).get("labels")
    meta = _obj(obj, "metadata")
    if isinstance(template_labels, dict) and not meta.get("labels"):
        meta["labels"] = _copy(template_labels)
    _set(spec, "completionMode", "NonIndexed")
    _set(spec, "suspend", False)
    failure_policy = _child(spec, "podFailurePolicy")
    for rule in _items(failure_policy, "rules"):
        for pattern in _items(rule, "onPodConditions"):
            _set(pattern, "status", "True")
    _set(
        spec,
        "podReplacementPolicy",
        "Failed" if failure_policy is not None else "TerminatingOrFailed",
    )
    _pod_template(template)


def _cron_job(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "concurrencyPolicy", "Allow")
    _set(spec, "suspend", False)
    _set(spec, "successfulJobsHistoryLimit", 3)
    _set(spec, "failedJobsHistoryLimit", 1)
    # The job template's JobSpec is not defaulted (SetDefaults_Job is for Jobs); its pod
    # template is.
    _pod_template(_child(_child(_child(spec, "jobTemplate"), "spec"), "template"))


def _replication_controller(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    template = _child(spec, "template")
    labels = (_child(template, "metadata") or {}).get("labels")
    if isinstance(labels, dict) and labels:
        if not spec.get("selector"):
            spec["selector"] = _copy(labels)
        meta = _obj(obj, "metadata")
        if not meta.get("labels"):
            meta["labels"] = _copy(labels)
    _set(spec, "replicas", 1)
    _pod_template(template)


# --- core/v1 other kinds -------------------------------------------------------------


def _service(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "sessionAffinity", "None")
    _set(spec, "type", "ClusterIP")
    kind = spec["type"]
    for port in _items(spec, "ports"):
        _set(port, "protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if kind in ("NodePort", "LoadBalancer"):
        _set(spec, "externalTrafficPolicy", "Cluster")
    if kind != "ExternalName":
        _set(spec, "internalTrafficPolicy", "Cluster")
        # The IP-family fields come from the allocator in the REST layer; a single-stack
        # IPv4 cluster's answer, except that selector-less headless services ask for both.
        headless_without_selector = spec.get("clusterIP") == "None" and not spec.get("selector")
        _set(
            spec,
            "ipFamilyPolicy",
            "RequireDualStack" if headless_without_selector else "SingleStack",
        )
        _set(spec, "ipFamilies", ["IPv4", "IPv6"] if headless_without_selector else ["IPv4"])
    if kind == "LoadBalancer":
        _set(spec, "allocateLoadBalancerNodePorts", True)
    if spec.get("sessionAffinity") == "ClientIP":
        config = _obj(_obj(spec, "sessionAffinityConfig"), "clientIP")
        _set(config, "timeoutSeconds", 10800)
    # Not a default but Go's printing: ServiceStatus.LoadBalancer is a struct, which
    # `omitempty` keeps, so every Service reads `status: {loadBalancer: {}}` (a ClusterIP
    # one's `status.loadBalancer.ingress` is absent, not its status).
    _set(_obj(obj, "status"), "loadBalancer", {})


def _ingress(obj: Obj) -> None:
    # As a Service's (above): IngressStatus.LoadBalancer is a struct Go prints empty.
    _set(_obj(obj, "status"), "loadBalancer", {})


def _secret(obj: Obj) -> None:
    _set(obj, "type", "Opaque")
    # stringData is write-only: v1 conversion folds it into data, overriding equal keys.
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = _obj(obj, "data")
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value if value is not None else "").encode()).decode()


def _namespace(obj: Obj) -> None:
    meta = _obj(obj, "metadata")
    name = meta.get("name")
    if name:
        _obj(meta, "labels")["kubernetes.io/metadata.name"] = (
            name  # always the namespace's own name
        )
    # spec.finalizers ["kubernetes"] is set at creation (the namespace strategy's
    # PrepareForCreate), not by defaulting: defaulting it would undo finalization.
    _set(_obj(obj, "status"), "phase", "Active")


def _claim_spec(spec: Obj) -> None:
    _set(spec, "volumeMode", "Filesystem")
    resources = _child(spec, "resources")
    if resources is not None:
        _canonical_map(resources.get("requests"))
        _canonical_map(resources.get("limits"))


def _persistent_volume_claim(obj: Obj) -> None:
    _claim_spec(_obj(obj, "spec"))
    _set(_obj(obj, "status"), "phase", "Pending")


def _persistent_volume(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "persistentVolumeReclaimPolicy", "Retain")
    _set(spec, "volumeMode", "Filesystem")
    _canonical_map(spec.get("capacity"))
    _set(_obj(obj, "status"), "phase", "Pending")


def _endpoints(obj: Obj) -> None:
    for subset in _items(obj, "subsets"):
        for port in _items(subset, "ports"):
            _set(port, "protocol", "TCP")


def _node(obj: Obj) -> None:
    status = _child(obj, "status")
    if (
        status is not None
        and status.get("allocatable") is None
        and isinstance(status.get("capacity"), dict)
    ):
        status["allocatable"] = _copy(status["capacity"])


def _limit_range(obj: Obj) -> None:
    for item in _items(_child(obj, "spec"), "limits"):
        for key in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            _canonical_map(item.get(key))
        if item.get("type") != "Container":
            continue
        # An unset default limit is the max; an unset default request is the default
        # limit, else the min. Empty maps stay out (omitempty).
        defaults = dict(item.get("default") or {})
        for name, value in (item.get("max") or {}).items():
            defaults.setdefault(name, value)
        requests = dict(item.get("defaultRequest") or {})
        for name, value in defaults.items():
            requests.setdefault(name, value)
        for name, value in (item.get("min") or {}).items():
            requests.setdefault(name, value)
        if defaults:
            item["default"] = defaults
        if requests:
            item["defaultRequest"] = requests


def _resource_quota(obj: Obj) -> None:
    spec = _child(obj, "spec")
    if spec is not None:
        _canonical_map(spec.get("hard"))


# --- other groups ----------------------------------------------------------------------


def _network_policy(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    for direction in ("ingress", "egress"):
        for rule in _items(spec, direction):
            for port in _items(rule, "ports"):
                _set(port, "protocol", "TCP")
    if not spec.get("policyTypes"):
        # Every policy isolates ingress; egress only when it lists egress rules.
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]


_RBAC_GROUP = "rbac.authorization.k8s.io"


def _binding(obj: Obj) -> None:
    role_ref = _child(obj, "roleRef")
    if role_ref is not None and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = _RBAC_GROUP
    for subject in _items(obj, "subjects"):
        if not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = _RBAC_GROUP


_SCALE_UP = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
_SCALE_DOWN = {
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def _horizontal_pod_autoscaler(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
    behavior = _child(spec, "behavior")
    if behavior is None:
        return  # scaling rules are filled in only when a behavior is given
    for key, rules in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
        target = _obj(behavior, key)
        for field, value in rules.items():
            _set(target, field, value)


def _storage_class(obj: Obj) -> None:
    _set(obj, "reclaimPolicy", "Delete")
    _set(obj, "volumeBindingMode", "Immediate")


def _priority_class(obj: Obj) -> None:
    _set(obj, "preemptionPolicy", "PreemptLowerPriority")


def _endpoint_slice(obj: Obj) -> None:
    for port in _items(obj, "ports"):
        _set(port, "name", "")
        _set(port, "protocol", "TCP")


def _custom_resource_definition(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    names = _obj(spec, "names")
    kind = names.get("kind")
    if isinstance(kind, str) and kind:
        _set(names, "singular", kind.lower())
        _set(names, "listKind", kind + "List")
    conversion = _obj(spec, "conversion")
    _set(conversion, "strategy", "None")
    _service_port(_child(_child(conversion, "webhook"), "clientConfig"))
    for version in _items(spec, "versions"):
        _service_port(_child(version, "webhook"))
    # The CRD strategy records the storage version when the definition is created.
    storage = [v.get("name") for v in _items(spec, "versions") if v.get("storage") is True]
    if len(storage) == 1:
        _set(_obj(obj, "status"), "storedVersions", storage)


def _pod_template_object(obj: Obj) -> None:
    _pod_template(_child(obj, "template"))


def _service_port(holder: Obj | None) -> None:
    """SetDefaults_ServiceReference: a webhook's or an APIService's Service is called on 443."""
    service = _child(holder, "service")
    if service is not None:
        _set(service, "port", 443)


def _rule_scopes(holder: Any, key: str) -> None:
    for rule in _items(holder, key):
        _set(rule, "scope", "*")


def _match_resources(match: Obj | None) -> None:
    """SetDefaults_MatchResources (admission policies and their bindings)."""
    if match is None:
        return
    _set(match, "matchPolicy", "Equivalent")
    _set(match, "namespaceSelector", {})
    _set(match, "objectSelector", {})
    _rule_scopes(match, "resourceRules")
    _rule_scopes(match, "excludeResourceRules")


def _webhooks(obj: Obj, *, mutating: bool) -> None:
    for hook in _items(obj, "webhooks"):
        _set(hook, "failurePolicy", "Fail")
        _set(hook, "matchPolicy", "Equivalent")
        _set(hook, "namespaceSelector", {})
        _set(hook, "objectSelector", {})
        _set(hook, "timeoutSeconds", 10)
        if mutating:
            _set(hook, "reinvocationPolicy", "Never")
        _rule_scopes(hook, "rules")
        _service_port(_child(hook, "clientConfig"))


def _validating_webhook_configuration(obj: Obj) -> None:
    _webhooks(obj, mutating=False)


def _mutating_webhook_configuration(obj: Obj) -> None:
    _webhooks(obj, mutating=True)


def _validating_admission_policy(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "failurePolicy", "Fail")
    _match_resources(_child(spec, "matchConstraints"))


def _validating_admission_policy_binding(obj: Obj) -> None:
    _match_resources(_child(_child(obj, "spec"), "matchResources"))


def _api_service(obj: Obj) -> None:
    _service_port(_child(obj, "spec"))


def _csi_driver(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    _set(spec, "attachRequired", True)
    _set(spec, "podInfoOnMount", False)
    _set(spec, "storageCapacity", False)
    _set(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]
    _set(spec, "requiresRepublish", False)
    # SELinuxMountReadWriteOncePod is beta and on by default in 1.33.
    _set(spec, "seLinuxMount", False)


def _flow_schema(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    if not spec.get("matchingPrecedence"):  # Go's zero value counts as unset here
        spec["matchingPrecedence"] = 1000


def _priority_level_configuration(obj: Obj) -> None:
    spec = _obj(obj, "spec")
    exempt = _child(spec, "exempt")
    if exempt is not None:
        _set(exempt, "nominalConcurrencyShares", 0)
        _set(exempt, "lendablePercent", 0)
    limited = _child(spec, "limited")
    if limited is None:
        return
    _set(limited, "nominalConcurrencyShares", 30)
    _set(limited, "lendablePercent", 0)
    queuing = _child(_child(limited, "limitResponse"), "queuing")
    if queuing is not None:
        for key, value in (("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)):
            if not queuing.get(key):
                queuing[key] = value


_RBAC = "rbac.authorization.k8s.io"
_ADMISSION = "admissionregistration.k8s.io"

# Which kinds get which defaults. Kinds not listed (ConfigMap, ServiceAccount,
# IngressClass, PodDisruptionBudget, Role, ClusterRole, Lease, Event, ControllerRevision,
# RuntimeClass, CSINode, VolumeAttachment, CSIStorageCapacity) have no server-side
# defaults; a CertificateSigningRequest's condition status is defaulted where its
# timestamps are (certificates.py).
_DEFAULTERS: dict[tuple[str, str], tuple[Defaulter, ...]] = {
    ("", "Pod"): (_pod,),
    ("", "Service"): (_service,),
    ("", "Secret"): (_secret,),
    # The metadata.name label lets selectors pick namespaces by name.
    ("", "Namespace"): (_namespace,),
    ("", "PersistentVolumeClaim"): (_persistent_volume_claim,),
    ("", "PersistentVolume"): (_persistent_volume,),
    ("", "Endpoints"): (_endpoints,),
    ("", "Node"): (_node,),
    ("", "LimitRange"): (_limit_range,),
    ("", "ResourceQuota"): (_resource_quota,),
    # Selector and labels come from the template, as they did before apps/v1 made them explicit.
    ("", "ReplicationController"): (_replication_controller,),
    ("apps", "Deployment"): (_deployment,),
    ("apps", "ReplicaSet"): (_replica_set,),
    ("apps", "StatefulSet"): (_stateful_set,),
    ("apps", "DaemonSet"): (_daemon_set,),
    ("batch", "Job"): (_job,),
    ("batch", "CronJob"): (_cron_job,),
    ("networking.k8s.io", "NetworkPolicy"): (_network_policy,),
    ("networking.k8s.io", "Ingress"): (_ingress,),
    (_RBAC, "RoleBinding"): (_binding,),
    (_RBAC, "ClusterRoleBinding"): (_binding,),
    ("autoscaling", "HorizontalPodAutoscaler"): (_horizontal_pod_autoscaler,),
    ("storage.k8s.io", "StorageClass"): (_storage_class,),
    ("scheduling.k8s.io", "PriorityClass"): (_priority_class,),
    ("discovery.k8s.io", "EndpointSlice"): (_endpoint_slice,),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): (_custom_resource_definition,),
    ("", "PodTemplate"): (_pod_template_object,),
    (_ADMISSION, "ValidatingWebhookConfiguration"): (_validating_webhook_configuration,),
    (_ADMISSION, "MutatingWebhookConfiguration"): (_mutating_webhook_configuration,),
    (_ADMISSION, "ValidatingAdmissionPolicy"): (_validating_admission_policy,),
    (_ADMISSION, "ValidatingAdmissionPolicyBinding"): (_validating_admission_policy_binding,),
    ("apiregistration.k8s.io", "APIService"): (_api_service,),
    ("storage.k8s.io", "CSIDriver"): (_csi_driver,),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"): (_flow_schema,),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"): (
        _priority_level_configuration,
    ),
}
