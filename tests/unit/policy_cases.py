"""Every built-in policy rule, a manifest that violates it and one that passes.

Shared by the evaluator tests (tests/unit/test_policy_rules.py), `policy check` on files
and through a Helm chart (the same file), and preview against a local cluster
(tests/integration/test_policy_cli.py). Each case puts its objects in a namespace of
its own, starting from `good(ns)` — a Namespace, NetworkPolicy, Deployment,
PodDisruptionBudget and Service that pass both built-in packs — and changes one thing.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Objects = list[dict[str, Any]]
Mutate = Callable[[Objects], None]

#: The stack settings every case runs with (`policy:` keys of a stack's config).
CONFIG: dict[str, Any] = {
    "policy:env": "production",
    "policy:policies": {
        "allowed-registries": {"registries": ["ghcr.io/acme"]},
        "production-separation": {
            "clusters": {"stackwright-prod": "production", "stackwright-test": "development"}
        },
    },
}
#: The cluster (kubeconfig context) the objects go to, unless a case says otherwise.
CLUSTER = "stackwright-prod"


def good(ns: str) -> Objects:
    labels = {"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": ns}
    container = {
        "name": "web",
        "image": "ghcr.io/acme/web:1.2.3",
        "ports": [{"containerPort": 8080}],
        "env": [{"name": "LOG_LEVEL", "value": "info"}],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "500m", "memory": "256Mi"},
        },
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
    }
    pod = {
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 1000,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
        "containers": [container],
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "default-deny", "namespace": ns},
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns, "labels": dict(labels)},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web", **labels}}, "spec": pod},
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": ns, "labels": dict(labels)},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
        },
    ]


# --- where things are in good(ns) -----------------------------------------------------------

NAMESPACE, NETPOL, DEPLOY, PDB, SERVICE = range(5)
POD = "spec.template.spec"
C0 = f"{POD}.containers[0]"


def deploy(objs: Objects) -> dict[str, Any]:
    return objs[DEPLOY]


def pod(objs: Objects) -> dict[str, Any]:
    spec: dict[str, Any] = objs[DEPLOY]["spec"]["template"]["spec"]
    return spec


def container(objs: Objects) -> dict[str, Any]:
    first: dict[str, Any] = pod(objs)["containers"][0]
    return first


def security(objs: Objects) -> dict[str, Any]:
    context: dict[str, Any] = container(objs)["securityContext"]
    return context


APPARMOR_WEB = "container.apparmor.security.beta.kubernetes.io/web"


def pod_template_metadata(objs: Objects) -> dict[str, Any]:
    metadata: dict[str, Any] = objs[DEPLOY]["spec"]["template"]["metadata"]
    return metadata


def pod_security(objs: Objects) -> dict[str, Any]:
    context: dict[str, Any] = pod(objs)["securityContext"]
    return context


def naked_pod(objs: Objects, owned: bool) -> None:
    meta: dict[str, Any] = {
        "name": "debug",
        "namespace": objs[DEPLOY]["metadata"]["namespace"],
        "labels": dict(objs[DEPLOY]["metadata"]["labels"]),
    }
    if owned:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web-1",
                "uid": "u1",
                "controller": True,
            }
        ]
    objs.append(
        {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(pod(objs))}
    )


def nothing(objs: Objects) -> None:
    """The passing variant of most cases: good(ns) as it is."""


@dataclass(frozen=True)
class Case:
    key: str  # "<rule ID>/<what>"
    violate: Mutate
    kind: str  # kind of the object the violation is about
    path: str
    message: str  # a fragment of the message
    severity: str
    passing: Mutate = nothing
    #: Per-case additions to CONFIG (evaluator only: files and charts run with CONFIG).
    config: dict[str, Any] = field(default_factory=dict)
    cluster: str = CLUSTER  # where the violating objects go (the passing ones: CLUSTER)
    #: Whether `policy check` (no cluster, one config for all) can show this case.
    offline: bool = True

    @property
    def rule(self) -> str:
        return self.key.split("/")[0]

    @property
    def namespace(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.key.lower()).strip("-")

    def objects(self, violating: bool) -> Objects:
        objs = good(self.namespace)
        (self.violate if violating else self.passing)(objs)
        return objs

    def located(self) -> str:
        """Where the violating object is: its namespace, or its name if cluster-scoped."""
        return "default" if self.key.startswith("SW-K8S-017") else self.namespace


def _set(path: Callable[[Objects], dict[str, Any]], key: str, value: Any) -> Mutate:
    def mutate(objs: Objects) -> None:
        path(objs)[key] = value

    return mutate


def _drop(path: Callable[[Objects], dict[str, Any]], key: str) -> Mutate:
    def mutate(objs: Objects) -> None:
        del path(objs)[key]

    return mutate


def _remove(index: int) -> Mutate:
    def mutate(objs: Objects) -> None:
        del objs[index]

    return mutate


def _caps(add: list[str] | None = None, drop: list[str] | None = None) -> Mutate:
    def mutate(objs: Objects) -> None:
        capabilities = security(objs)["capabilities"]
        if add is not None:
            capabilities["add"] = add
        if drop is not None:
            capabilities["drop"] = drop

    return mutate


def _volume(volume: dict[str, Any]) -> Mutate:
    return _set(pod, "volumes", [{"name": "data", **volume}])


def _move_to_default(objs: Objects) -> None:
    objs[DEPLOY]["metadata"]["namespace"] = "default"


def _deprecated_pdb(objs: Objects) -> None:
    objs[PDB]["apiVersion"] = "policy/v1beta1"


def _env_password(secret_ref: bool) -> Mutate:
    def mutate(objs: Objects) -> None:
        value: dict[str, Any] = (
            {"valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}
            if secret_ref
            else {"value": "hunter2"}
        )
        container(objs)["env"].append({"name": "DB_PASSWORD", **value})

    return mutate


def _anti_affinity(objs: Objects) -> None:
    del pod(objs)["topologySpreadConstraints"]
    pod(objs)["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ]
        }
    }


def _pdb_expressions(objs: Objects) -> None:
    objs[PDB]["spec"]["selector"] = {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]
    }


def _pdb(**spec: Any) -> Mutate:
    def mutate(objs: Objects) -> None:
        objs[PDB]["spec"] = {"selector": {"matchLabels": {"app": "web"}}, **spec}

    return mutate


def _image(image: str) -> Mutate:
    return _set(container, "image", image)


def _deprecated_cronjob(objs: Objects) -> None:
    objs.append(
        {
            "apiVersion": "batch/v1beta1",
            "kind": "CronJob",
            "metadata": {"name": "report", "namespace": objs[DEPLOY]["metadata"]["namespace"]},
            "spec": {
                "schedule": "0 * * * *",
                "jobTemplate": {
                    "spec": {"template": copy.deepcopy(objs[DEPLOY]["spec"]["template"])}
                },
            },
        }
    )
    objs[-1]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    objs[-1]["metadata"]["labels"] = dict(objs[DEPLOY]["metadata"]["labels"])


DIGEST = "ghcr.io/acme/web@sha256:" + "a" * 64

CASES: list[Case] = [
    # --- kubernetes-best-practices --------------------------------------------------------
    Case("SW-K8S-001/naked", lambda o: naked_pod(o, False), "Pod", "kind",
         "is a Pod without a controller", "medium", lambda o: naked_pod(o, True)),
    Case("SW-K8S-002/privileged", _set(security, "privileged", True), "Deployment",
         f"{C0}.securityContext.privileged", "runs privileged", "critical",
         _set(security, "privileged", False)),
    Case("SW-K8S-003/escalation", _set(security, "allowPrivilegeEscalation", True), "Deployment",
         f"{C0}.securityContext.allowPrivilegeEscalation", "may escalate privileges", "high"),
    Case("SW-K8S-004/non-root", _set(pod_security, "runAsNonRoot", False), "Deployment",
         f"{POD}.securityContext.runAsNonRoot", "may run as root (runAsNonRoot is not true)",
         "high"),
    Case("SW-K8S-004/uid-0", _set(security, "runAsUser", 0), "Deployment",
         f"{C0}.securityContext.runAsUser", "runs as user 0 (root)", "high",
         _set(security, "runAsUser", 1001)),
    Case("SW-K8S-005/rootfs", _set(security, "readOnlyRootFilesystem", False), "Deployment",
         f"{C0}.securityContext.readOnlyRootFilesystem", "has a writable root filesystem",
         "medium"),
    Case("SW-K8S-006/drop", _caps(drop=["NET_RAW"]), "Deployment",
         f"{C0}.securityContext.capabilities.drop", "does not drop ALL capabilities", "medium"),
    Case("SW-K8S-007/sys-admin", _caps(add=["SYS_ADMIN"]), "Deployment",
         f"{C0}.securityContext.capabilities.add[0]", "adds capability SYS_ADMIN", "high",
         _caps(add=["NET_BIND_SERVICE"])),
    Case("SW-K8S-008/host-path", _volume({"hostPath": {"path": "/var/run"}}), "Deployment",
         f"{POD}.volumes[0].hostPath", "mounts a path of the node (hostPath)", "high",
         _volume({"emptyDir": {}})),
    Case("SW-K8S-009/host-network", _set(pod, "hostNetwork", True), "Deployment",
         f"{POD}.hostNetwork", "share the node's namespaces (hostNetwork: true)", "high",
         _set(pod, "hostNetwork", False)),
    Case("SW-K8S-010/host-port", lambda o: container(o)["ports"][0].update(hostPort=8080),
         "Deployment", f"{C0}.ports[0].hostPort", "binds host port 8080", "medium"),
    Case("SW-K8S-011/unconfined", _set(pod_security, "seccompProfile", {"type": "Unconfined"}),
         "Deployment", f"{POD}.securityContext.seccompProfile.type",
         "the pods of Deployment sw-k8s-011-unconfined/web use seccomp profile Unconfined",
         "medium",
         _set(pod_security, "seccompProfile", {"type": "Localhost", "localhostProfile": "p.json"})),
    Case("SW-K8S-012/latest", _image("ghcr.io/acme/web:latest"), "Deployment", f"{C0}.image",
         "runs image ghcr.io/acme/web:latest with the tag latest", "high", _image(DIGEST)),
    Case("SW-K8S-012/untagged", _image("ghcr.io/acme/web"), "Deployment", f"{C0}.image",
         "runs image ghcr.io/acme/web with no tag", "high", _image("ghcr.io/acme/web:2.0")),
    Case("SW-K8S-013/registry", _image("docker.io/library/nginx:1.29"), "Deployment",
         f"{C0}.image", "pulls docker.io/library/nginx:1.29 from docker.io, which is not an "
         "allowed registry (ghcr.io/acme)", "high", _image("ghcr.io/acme/tools/web:1.0")),
    Case("SW-K8S-014/requests", lambda o: container(o)["resources"].pop("requests"),
         "Deployment", f"{C0}.resources.requests", "has no cpu and memory requests", "medium"),
    Case("SW-K8S-014/memory", lambda o: container(o)["resources"]["requests"].pop("memory"),
         "Deployment", f"{C0}.resources.requests", "has no memory requests", "medium"),
    Case("SW-K8S-015/limits", lambda o: container(o)["resources"].pop("limits"), "Deployment",
         f"{C0}.resources.limits", "has no cpu and memory limits", "medium"),
    Case("SW-K8S-016/readiness", _drop(container, "readinessProbe"), "Deployment",
         f"{C0}.readinessProbe", "has no readinessProbe", "medium"),
    Case("SW-K8S-017/default", _move_to_default, "Deployment", "metadata.namespace",
         "Deployment default/web is in the default namespace", "medium"),
    Case("SW-K8S-018/netpol", _remove(NETPOL), "Namespace", "",
         "has workloads (Deployment sw-k8s-018-netpol/web…) but no NetworkPolicy", "medium"),
    Case("SW-K8S-019/pdb", _remove(PDB), "Deployment", "spec.replicas",
         "has 2 replicas and no PodDisruptionBudget selecting its pods", "medium",
         _pdb_expressions),
    Case("SW-K8S-020/max-unavailable", _pdb(maxUnavailable=0), "PodDisruptionBudget",
         "spec.maxUnavailable", "maxUnavailable is 0", "medium", _pdb(minAvailable=1)),
    Case("SW-K8S-020/min-available", _pdb(minAvailable=2), "PodDisruptionBudget",
         "spec.minAvailable", "minAvailable 2 leaves no pod of 2 to evict", "medium",
         _pdb(maxUnavailable="50%")),
    Case("SW-K8S-021/replicas", lambda o: o[DEPLOY]["spec"].update(replicas=1), "Deployment",
         "spec.replicas", "runs 1 replica(s) in production stack", "high",
         lambda o: o[DEPLOY]["spec"].update(replicas=3)),
    Case("SW-K8S-022/load-balancer", lambda o: o[SERVICE]["spec"].update(type="LoadBalancer"),
         "Service", "spec.type", "is a LoadBalancer", "medium"),
    Case("SW-K8S-023/node-port", lambda o: o[SERVICE]["spec"].update(type="NodePort"),
         "Service", "spec.type", "is a NodePort Service", "low",
         lambda o: o[SERVICE]["spec"].update(type="ClusterIP")),
    Case("SW-K8S-024/token", _drop(pod, "automountServiceAccountToken"), "Deployment",
         f"{POD}.automountServiceAccountToken", "mount a service account token", "medium"),
    Case("SW-K8S-025/env", _env_password(False), "Deployment", f"{C0}.env[1].value",
         "sets DB_PASSWORD to a plain value", "high", _env_password(True)),
    Case("SW-K8S-026/labels",
         lambda o: o[DEPLOY]["metadata"]["labels"].pop("app.kubernetes.io/instance"),
         "Deployment", "metadata.labels", "lacks the label(s) app.kubernetes.io/instance", "low"),
    Case("SW-K8S-027/removed", _deprecated_pdb, "PodDisruptionBudget", "apiVersion",
         "uses policy/v1beta1, removed in Kubernetes 1.25 (target 1.33); use policy/v1 "
         "PodDisruptionBudget", "high"),
    Case("SW-K8S-027/deprecated", _deprecated_cronjob, "CronJob", "apiVersion",
         "uses batch/v1beta1, deprecated since Kubernetes 1.21, removed in 1.25 (target 1.22)",
         "high", config={"policy:policies": {"no-deprecated-apis": {"kubernetes-version": "1.22"}}},
         offline=False),
    Case("SW-K8S-028/spread", _drop(pod, "topologySpreadConstraints"), "Deployment",
         f"{POD}.topologySpreadConstraints", "neither topologySpreadConstraints nor "
         "podAntiAffinity", "medium", _anti_affinity),
    Case("SW-K8S-029/separation", nothing, "Namespace", "",
         "targets cluster stackwright-test, which is marked development", "critical",
         cluster="stackwright-test", offline=False),
    # --- pod-security-restricted ----------------------------------------------------------
    Case("SW-PSS-001/host-process",
         _set(pod_security, "windowsOptions", {"hostProcess": True}), "Deployment",
         f"{POD}.securityContext.windowsOptions.hostProcess", "runs a Windows HostProcess",
         "high"),
    Case("SW-PSS-002/host-pid", _set(pod, "hostPID", True), "Deployment", f"{POD}.hostPID",
         "(hostPID: true)", "high"),
    Case("SW-PSS-003/privileged", _set(security, "privileged", True), "Deployment",
         f"{C0}.securityContext.privileged", "runs privileged", "high"),
    Case("SW-PSS-004/sys-time", _caps(add=["SYS_TIME"]), "Deployment",
         f"{C0}.securityContext.capabilities.add[0]", "adds capability SYS_TIME", "high",
         _caps(add=["NET_BIND_SERVICE"])),
    Case("SW-PSS-005/host-path", _volume({"hostPath": {"path": "/"}}), "Deployment",
         f"{POD}.volumes[0].hostPath", "(hostPath)", "high"),
    Case("SW-PSS-006/host-port", lambda o: container(o)["ports"][0].update(hostPort=80),
         "Deployment", f"{C0}.ports[0].hostPort", "binds host port 80", "high"),
    Case("SW-PSS-007/apparmor", _set(security, "appArmorProfile", {"type": "Unconfined"}),
         "Deployment", f"{C0}.securityContext.appArmorProfile.type",
         "sets AppArmor profile Unconfined", "high",
         _set(security, "appArmorProfile", {"type": "RuntimeDefault"})),
    # The annotation older clusters read, on a workload's pod template (Pod Security
    # admission judges the pods the Deployment makes).
    Case("SW-PSS-007/apparmor-annotation",
         _set(pod_template_metadata, "annotations", {APPARMOR_WEB: "unconfined"}),
         "Deployment", f"spec.template.metadata.annotations.{APPARMOR_WEB}",
         "sets AppArmor profile unconfined by annotation", "high",
         _set(pod_template_metadata, "annotations", {APPARMOR_WEB: "runtime/default"})),
    Case("SW-PSS-008/selinux", _set(pod_security, "seLinuxOptions", {"type": "spc_t"}),
         "Deployment", f"{POD}.securityContext.seLinuxOptions.type", "sets SELinux type spc_t",
         "high", _set(pod_security, "seLinuxOptions", {"type": "container_t", "level": "s0"})),
    Case("SW-PSS-009/proc-mount", _set(security, "procMount", "Unmasked"), "Deployment",
         f"{C0}.securityContext.procMount", "sets procMount Unmasked", "high",
         _set(security, "procMount", "Default")),
    Case("SW-PSS-010/unconfined", _set(security, "seccompProfile", {"type": "Unconfined"}),
         "Deployment", f"{C0}.securityContext.seccompProfile.type",
         "uses seccomp profile Unconfined", "high",
         _set(security, "seccompProfile", {"type": "RuntimeDefault"})),
    Case("SW-PSS-011/sysctl",
         _set(pod_security, "sysctls", [{"name": "kernel.msgmax", "value": "65536"}]),
         "Deployment", f"{POD}.securityContext.sysctls[0].name",
         "sets the unsafe sysctl kernel.msgmax", "high",
         _set(pod_security, "sysctls", [{"name": "net.ipv4.tcp_syncookies", "value": "1"}])),
    Case("SW-PSS-012/nfs", _volume({"nfs": {"server": "nfs.local", "path": "/data"}}),
         "Deployment", f"{POD}.volumes[0].nfs", "volume data of Deployment sw-pss-012-nfs/web "
         "is of type nfs", "high", _volume({"configMap": {"name": "settings"}})),
    Case("SW-PSS-013/escalation", _drop(security, "allowPrivilegeEscalation"), "Deployment",
         f"{C0}.securityContext.allowPrivilegeEscalation", "may escalate privileges", "high"),
    Case("SW-PSS-014/non-root", _drop(pod_security, "runAsNonRoot"), "Deployment",
         f"{POD}.securityContext.runAsNonRoot", "may run as root", "high",
         lambda o: security(o).update(runAsNonRoot=True)),
    Case("SW-PSS-015/uid-0", _set(pod_security, "runAsUser", 0), "Deployment",
         f"{POD}.securityContext.runAsUser", "run as user 0 (root)", "high"),
    Case("SW-PSS-016/seccomp", _drop(pod_security, "seccompProfile"), "Deployment",
         f"{POD}.securityContext.seccompProfile.type", "has no seccomp profile", "high",
         lambda o: security(o).update(seccompProfile={"type": "RuntimeDefault"})),
    Case("SW-PSS-017/drop", _caps(drop=[]), "Deployment",
         f"{C0}.securityContext.capabilities.drop", "does not drop ALL capabilities", "high"),
    Case("SW-PSS-017/add", _caps(add=["CHOWN"]), "Deployment",
         f"{C0}.securityContext.capabilities.add[0]", "adds capability CHOWN", "high",
         _caps(add=["NET_BIND_SERVICE"])),
    Case("SW-PSS-018/probe-host",
         lambda o: container(o)["livenessProbe"]["httpGet"].update(host="10.0.0.1"),
         "Deployment", f"{C0}.livenessProbe.httpGet.host",
         "points its livenessProbe at host 10.0.0.1", "high",
         lambda o: container(o)["livenessProbe"]["httpGet"].update(host="")),
]  # fmt: skip

#: Every rule ID of the built-in packs (a case must exist for each).
RULES = sorted({case.rule for case in CASES})
OFFLINE = [case for case in CASES if case.offline]


def all_objects(cases: list[Case], violating: bool) -> Objects:
    """The objects of `cases`, each case in its own namespace."""
    return [obj for case in cases for obj in case.objects(violating)]
