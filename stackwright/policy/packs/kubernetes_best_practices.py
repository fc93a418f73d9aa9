"""The built-in pack `kubernetes-best-practices`: the misconfigurations behind most incidents.

Each rule has a stable ID (`SW-K8S-NNN`, never reused), a one-line rationale, the
fix, and the equivalent check of Kyverno / Gatekeeper / Checkov / kube-score /
Polaris where one exists (a reference is left out rather than guessed). Pod rules
see Pods and the pod templates of Deployments, StatefulSets, DaemonSets,
ReplicaSets, Jobs and CronJobs.

Must never: raise on a value not known yet, or fail an object for what it cannot see
(a rule that needs other objects is a stack policy and only sees the set it is given).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from stackwright.model import CLUSTER_SCOPED
from stackwright.policy._core import (
    LONG_RUNNING_KINDS,
    POD_KINDS,
    PolicyPack,
    StackSubject,
    Subject,
    Violation,
    is_unknown,
    items,
    mapping,
    policy,
    stack_policy,
)
from stackwright.policy.packs import _pods
from stackwright.policy.packs._apis import API_VERSIONS, parse_version

NAME = "kubernetes-best-practices"
REPLICATED_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})


@policy(
    "no-naked-pods",
    id="SW-K8S-001",
    patches=False,
    description="Pods are created by a controller, not on their own",
    severity="medium",
    kinds=["Pod"],
    rationale="a Pod on its own is not rescheduled when its node fails or is drained",
    fix="declare a Deployment (or StatefulSet, DaemonSet, Job) with this pod as its template",
)
def no_naked_pods(subject: Subject) -> Violation | None:
    if items(subject.metadata.get("ownerReferences")):
        return None
    return Violation(f"{subject.display} is a Pod without a controller", "kind")


@policy(
    "no-privileged-containers",
    id="SW-K8S-002",
    patches=True,
    description="Containers do not run privileged",
    severity="critical",
    kinds=POD_KINDS,
    rationale="a privileged container has every capability and the node's devices: root on the node",
    fix="remove securityContext.privileged (or set it to false)",
    references={
        "Kyverno": "disallow-privileged-containers",
        "Gatekeeper": "K8sPSPPrivilegedContainer",
        "Checkov": "CKV_K8S_16",
        "kube-score": "container-security-context-privileged",
        "Polaris": "runAsPrivileged",
    },
)
def no_privileged(subject: Subject) -> Iterator[Violation]:
    return _pods.privileged(subject)


@policy(
    "no-privilege-escalation",
    id="SW-K8S-003",
    patches=True,
    description="Containers set allowPrivilegeEscalation: false",
    severity="high",
    kinds=POD_KINDS,
    rationale="setuid binaries can otherwise gain more privileges than the process started with",
    fix="set securityContext.allowPrivilegeEscalation: false on every container",
    references={
        "Kyverno": "disallow-privilege-escalation",
        "Gatekeeper": "K8sPSPAllowPrivilegeEscalationContainer",
        "Checkov": "CKV_K8S_20",
        "Polaris": "privilegeEscalationAllowed",
    },
)
def no_privilege_escalation(subject: Subject) -> Iterator[Violation]:
    return _pods.privilege_escalation(subject)


@policy(
    "run-as-non-root",
    id="SW-K8S-004",
    patches=True,
    description="Containers run as a non-root user",
    severity="high",
    kinds=POD_KINDS,
    rationale="root in a container is root on the node after any container escape",
    fix="set securityContext.runAsNonRoot: true (pod or container) and a non-zero runAsUser",
    references={
        "Kyverno": "require-run-as-nonroot",
        "Gatekeeper": "K8sPSPAllowedUsers",
        "Checkov": "CKV_K8S_23",
        "Polaris": "runAsRootAllowed",
    },
)
def run_as_non_root(subject: Subject) -> Iterator[Violation]:
    yield from _pods.run_as_non_root(subject)
    yield from _pods.run_as_user_not_root(subject)


@policy(
    "read-only-root-filesystem",
    id="SW-K8S-005",
    patches=True,
    description="Containers have a read-only root filesystem",
    severity="medium",
    kinds=POD_KINDS,
    rationale="an attacker cannot drop tools or change binaries in a read-only filesystem",
    fix="set securityContext.readOnlyRootFilesystem: true; mount an emptyDir where the app writes",
    references={
        "Kyverno": "require-ro-rootfs",
        "Gatekeeper": "K8sPSPReadOnlyRootFilesystem",
        "Checkov": "CKV_K8S_22",
        "kube-score": "container-security-context-readonlyrootfilesystem",
        "Polaris": "notReadOnlyRootFilesystem",
    },
)
def read_only_root_filesystem(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        read_only = mapping(container.get("securityContext")).get("readOnlyRootFilesystem")
        if read_only is not True and not subject.left_to_owner(read_only):
            yield Violation(
                f"container {container.get('name')} of {subject.display} has a writable root "
                "filesystem",
                f"{path}.securityContext.readOnlyRootFilesystem",
            )


@policy(
    "drop-all-capabilities",
    id="SW-K8S-006",
    patches=True,
    description="Containers drop ALL Linux capabilities",
    severity="medium",
    kinds=POD_KINDS,
    rationale="the runtime's default capabilities (NET_RAW, CHOWN, …) are more than most apps need",
    fix="set securityContext.capabilities.drop: [ALL] and add back only what the app needs",
    references={
        "Kyverno": "drop-all-capabilities",
        "Gatekeeper": "K8sPSPCapabilities",
        "Checkov": "CKV_K8S_37",
    },
)
def drop_all_capabilities(subject: Subject) -> Iterator[Violation]:
    return _pods.capabilities_dropped(subject)


@policy(
    "no-dangerous-capabilities",
    id="SW-K8S-007",
    patches=True,
    description="Containers add no dangerous capabilities (SYS_ADMIN, NET_RAW, …)",
    severity="high",
    kinds=POD_KINDS,
    rationale="SYS_ADMIN, NET_ADMIN, NET_RAW and the like give a container powers over the node",
    fix="remove the capability from securityContext.capabilities.add",
    references={
        "Kyverno": "disallow-capabilities",
        "Gatekeeper": "K8sPSPCapabilities",
        "Checkov": "CKV_K8S_39",
        "Polaris": "dangerousCapabilities",
    },
    config={
        "capabilities": [
            "ALL",
            "SYS_ADMIN",
            "NET_ADMIN",
            "NET_RAW",
            "SYS_PTRACE",
            "SYS_MODULE",
            "SYS_RAWIO",
            "SYS_BOOT",
            "SYS_TIME",
            "DAC_READ_SEARCH",
            "BPF",
            "PERFMON",
        ]
    },
)
def no_dangerous_capabilities(subject: Subject) -> Iterator[Violation]:
    return _pods.capabilities_added(subject, forbidden=items(subject.config.get("capabilities")))


@policy(
    "no-host-path",
    id="SW-K8S-008",
    patches=True,
    description="Pods mount no hostPath volumes",
    severity="high",
    kinds=POD_KINDS,
    rationale="a hostPath volume exposes the node's filesystem (its credentials, the runtime socket)",
    fix="use a PersistentVolumeClaim, emptyDir, ConfigMap or Secret volume instead",
    references={
        "Kyverno": "disallow-host-path",
        "Gatekeeper": "K8sPSPHostFilesystem",
    },
)
def no_host_path(subject: Subject) -> Iterator[Violation]:
    return _pods.host_path(subject)


@policy(
    "no-host-namespaces",
    id="SW-K8S-009",
    patches=True,
    description="Pods share none of the node's namespaces (hostNetwork, hostPID, hostIPC)",
    severity="high",
    kinds=POD_KINDS,
    rationale="the node's network, processes or IPC let a pod spy on or attack everything on it",
    fix="remove hostNetwork, hostPID and hostIPC (or set them to false)",
    references={
        "Kyverno": "disallow-host-namespaces",
        "Gatekeeper": "K8sPSPHostNamespace",
        "Checkov": "CKV_K8S_17, CKV_K8S_18, CKV_K8S_19",
        "Polaris": "hostIPCSet, hostNetworkSet, hostPIDSet",
    },
)
def no_host_namespaces(subject: Subject) -> Iterator[Violation]:
    return _pods.host_namespaces(subject)


@policy(
    "no-host-ports",
    id="SW-K8S-010",
    patches=True,
    description="Containers bind no host ports",
    severity="medium",
    kinds=POD_KINDS,
    rationale="a hostPort ties the pod to one node per port and bypasses network policy",
    fix="remove ports[].hostPort; expose the port through a Service",
    references={
        "Kyverno": "disallow-host-ports",
        "Gatekeeper": "K8sPSPHostNetworkingPorts",
        "Checkov": "CKV_K8S_26",
        "Polaris": "hostPortSet",
    },
)
def no_host_ports(subject: Subject) -> Iterator[Violation]:
    return _pods.host_ports(subject)


@policy(
    "seccomp-runtime-default",
    id="SW-K8S-011",
    patches=True,
    description="Containers run with the RuntimeDefault (or a Localhost) seccomp profile",
    severity="medium",
    kinds=POD_KINDS,
    rationale="without seccomp every system call is allowed, widening the kernel's attack surface",
    fix="set spec.securityContext.seccompProfile.type: RuntimeDefault on the pod",
    references={
        "Kyverno": "restrict-seccomp-strict",
        "Gatekeeper": "K8sPSPSeccomp",
        "Checkov": "CKV_K8S_31",
    },
)
def seccomp_runtime_default(subject: Subject) -> Iterator[Violation]:
    return _pods.seccomp(subject, ("RuntimeDefault", "Localhost"))


def _image_parts(image: str) -> tuple[str, str, str]:
    """(registry, repository, tag) of an image reference; tag "" when absent, "@" for a digest."""
    name, at, _digest = image.partition("@")
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        registry, repository = first, rest
    else:
        registry, repository = "docker.io", name
    repository, colon, tag = (
        repository.rpartition(":") if ":" in repository else (repository, "", "")
    )
    if at:
        tag = "@"
    return registry, repository, tag if (colon or at) else ""


@policy(
    "image-tag",
    id="SW-K8S-012",
    patches=True,
    description="Images name a tag (or digest) other than latest",
    severity="high",
    kinds=POD_KINDS,
    rationale="`latest` or no tag makes what runs depend on when a node pulled it: no rollback",
    fix="pin the image to a version tag (nginx:1.29) or a digest (nginx@sha256:…)",
    references={
        "Kyverno": "disallow-latest-tag",
        "Gatekeeper": "K8sDisallowedTags",
        "Checkov": "CKV_K8S_14",
        "kube-score": "container-image-tag",
        "Polaris": "tagNotSpecified",
    },
)
def image_tag(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        image = container.get("image")
        if not isinstance(image, str):
            continue
        tag = _image_parts(image)[2]
        if tag in ("", "latest"):
            what = "no tag" if not tag else "the tag latest"
            yield Violation(
                f"container {container.get('name')} of {subject.display} runs image {image} "
                f"with {what}",
                f"{path}.image",
            )


@policy(
    "allowed-registries",
    id="SW-K8S-013",
    patches=True,
    description="Images come from the allowed registries",
    severity="high",
    kinds=POD_KINDS,
    rationale="images from unvetted registries bypass scanning and supply-chain controls",
    fix="pull the image from an allowed registry (setting `registries` of this policy)",
    references={"Kyverno": "restrict-image-registries", "Gatekeeper": "K8sAllowedRepos"},
    config={"registries": []},
)
def allowed_registries(subject: Subject) -> Iterator[Violation]:
    allowed = [str(r).rstrip("/") for r in items(subject.config.get("registries"))]
    if not allowed:
        return  # nothing configured: every registry is allowed
    for path, container in subject.containers():
        image = container.get("image")
        if not isinstance(image, str):
            continue
        registry, repository, _ = _image_parts(image)
        if registry == "docker.io" and "/" not in repository:
            repository = f"library/{repository}"  # Docker Hub's official images: nginx
        full = f"{registry}/{repository}"
        if not any(full == a or full.startswith(a + "/") or registry == a for a in allowed):
            yield Violation(
                f"container {container.get('name')} of {subject.display} pulls {image} from "
                f"{registry}, which is not an allowed registry ({', '.join(allowed)})",
                f"{path}.image",
            )


def _missing_resources(subject: Subject, which: str) -> Iterator[Violation]:
    for path, container in subject.containers():
        if path.rsplit(".", 1)[-1].startswith("ephemeralContainers"):
            continue  # ephemeral containers cannot declare resources
        declared = mapping(mapping(container.get("resources")).get(which))
        missing = [r for r in ("cpu", "memory") if declared.get(r) in (None, "")]
        if missing:
            yield Violation(
                f"container {container.get('name')} of {subject.display} has no "
                f"{' and '.join(missing)} {which}",
                f"{path}.resources.{which}",
            )


@policy(
    "resource-requests",
    id="SW-K8S-014",
    patches=False,
    description="Containers request CPU and memory",
    severity="medium",
    kinds=POD_KINDS,
    rationale="the scheduler places pods by their requests: without them nodes are overcommitted",
    fix="set resources.requests.cpu and resources.requests.memory on every container",
    references={
        "Kyverno": "require-requests-limits",
        "Gatekeeper": "K8sContainerRequests",
        "Checkov": "CKV_K8S_10, CKV_K8S_12",
        "kube-score": "container-resources",
        "Polaris": "cpuRequestsMissing, memoryRequestsMissing",
    },
)
def resource_requests(subject: Subject) -> Iterator[Violation]:
    return _missing_resources(subject, "requests")


@policy(
    "resource-limits",
    id="SW-K8S-015",
    patches=False,
    description="Containers have CPU and memory limits",
    severity="medium",
    kinds=POD_KINDS,
    rationale="a container without limits can starve its neighbours on the node",
    fix="set resources.limits.cpu and resources.limits.memory on every container",
    references={
        "Kyverno": "require-requests-limits",
        "Gatekeeper": "K8sContainerLimits",
        "Checkov": "CKV_K8S_11, CKV_K8S_13",
        "kube-score": "container-resources",
        "Polaris": "cpuLimitsMissing, memoryLimitsMissing",
    },
)
def resource_limits(subject: Subject) -> Iterator[Violation]:
    return _missing_resources(subject, "limits")


@policy(
    "probes",
    id="SW-K8S-016",
    patches=False,
    description="Long-running containers have liveness and readiness probes",
    severity="medium",
    kinds=LONG_RUNNING_KINDS,
    rationale="without probes a hung container keeps getting traffic and is never restarted",
    fix="add livenessProbe and readinessProbe to every container",
    references={
        "Kyverno": "require-pod-probes",
        "Gatekeeper": "K8sRequiredProbes",
        "Checkov": "CKV_K8S_8, CKV_K8S_9",
        "kube-score": "pod-probes",
        "Polaris": "livenessProbeMissing, readinessProbeMissing",
    },
)
def probes(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers(init=False):
        missing = [p for p in ("livenessProbe", "readinessProbe") if container.get(p) is None]
        if missing:
            yield Violation(
                f"container {container.get('name')} of {subject.display} has no "
                f"{' and no '.join(missing)}",
                f"{path}.{missing[0]}",
            )


@policy(
    "no-default-namespace",
    id="SW-K8S-017",
    patches=False,
    description="Objects are not put in the default namespace",
    severity="medium",
    rationale="the default namespace gets no quota, policy or RBAC of its own and mixes teams",
    fix="set metadata.namespace (or the stack's kubernetes:namespace) to the app's namespace",
    references={"Kyverno": "disallow-default-namespace", "Checkov": "CKV_K8S_21"},
)
def no_default_namespace(subject: Subject) -> Violation | None:
    if subject.kind in CLUSTER_SCOPED or subject.namespace != "default":
        return None
    return Violation(f"{subject.display} is in the default namespace", "metadata.namespace")


def _by_namespace(resources: list[Subject], kinds: frozenset[str]) -> dict[str, list[Subject]]:
    found: dict[str, list[Subject]] = {}
    for resource in resources:
        if resource.kind in kinds and resource.namespace:
            found.setdefault(resource.namespace, []).append(resource)
    return found


def _selects(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Whether a label selector (matchLabels and matchExpressions) selects `labels`."""
    for key, value in mapping(selector.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for entry in items(selector.get("matchExpressions")):
        expression = mapping(entry)
        label, operator = str(expression.get("key")), expression.get("operator")
        values = items(expression.get("values"))
        present = label in labels
        if (
            (operator == "In" and labels.get(label) not in values)
            or (operator == "NotIn" and present and labels.get(label) in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


@stack_policy(
    "network-policy-per-namespace",
    id="SW-K8S-018",
    patches=False,
    description="Each namespace with workloads has a NetworkPolicy",
    severity="medium",
    rationale="without a NetworkPolicy every pod accepts traffic from anywhere in the cluster",
    fix="declare a NetworkPolicy in the namespace (a default-deny one, plus the allowed flows)",
    references={"kube-score": "pod-networkpolicy", "Polaris": "missingNetworkPolicy"},
)
def network_policy_per_namespace(stack: StackSubject) -> Iterator[Violation]:
    covered = set(_by_namespace(stack.resources, frozenset({"NetworkPolicy"})))
    namespaces = {r.name: r for r in stack.resources if r.kind == "Namespace"}
    for namespace, workloads in _by_namespace(stack.resources, POD_KINDS).items():
        if namespace not in covered:
            about = namespaces.get(namespace, workloads[0])
            yield Violation(
                f"namespace {namespace} has workloads ({workloads[0].display}…) but no "
                "NetworkPolicy",
                "",
                about,
            )


def _replicas(subject: Subject) -> int | None:
    """The replica count (1 when unset), None when not known yet or a Patch leaves it out."""
    value = subject.spec.get("replicas", None if subject.patch else 1)
    if is_unknown(value) or not isinstance(value, int):
        return None
    return value


def _pdbs_for(workload: Subject, pdbs: list[Subject]) -> list[Subject]:
    labels = workload.pod_template_labels()
    return [
        pdb
        for pdb in pdbs
        if pdb.namespace == workload.namespace
        and isinstance(pdb.spec.get("selector"), Mapping)
        and _selects(pdb.spec["selector"], labels)
    ]


@stack_policy(
    "pod-disruption-budget",
    id="SW-K8S-019",
    patches=False,
    description="Each workload of 2 or more replicas has a PodDisruptionBudget",
    severity="medium",
    rationale="without a budget a node drain may evict every replica at once",
    fix="declare a PodDisruptionBudget selecting the workload's pods (e.g. maxUnavailable: 1)",
    references={
        "kube-score": "deployment-has-poddisruptionbudget, statefulset-has-poddisruptionbudget",
        "Polaris": "missingPodDisruptionBudget",
    },
)
def pod_disruption_budget(stack: StackSubject) -> Iterator[Violation]:
    pdbs = [r for r in stack.resources if r.kind == "PodDisruptionBudget"]
    for workload in stack.resources:
        if workload.kind not in REPLICATED_KINDS or (_replicas(workload) or 0) < 2:
            continue
        if not _pdbs_for(workload, pdbs):
            yield Violation(
                f"{workload.display} has {_replicas(workload)} replicas and no "
                "PodDisruptionBudget selecting its pods",
                "spec.replicas",
                workload,
            )


def _blocks_disruption(pdb: Subject, replicas: int) -> str:
    """Why the budget never allows an eviction of `replicas` pods, or ""."""
    spec = pdb.spec
    if "maxUnavailable" in spec and spec["maxUnavailable"] in (0, "0", "0%"):
        return "maxUnavailable is 0"
    minimum = spec.get("minAvailable")
    if minimum == "100%" or (isinstance(minimum, int) and minimum >= replicas):
        return f"minAvailable {minimum} leaves no pod of {replicas} to evict"
    return ""


@stack_policy(
    "pod-disruption-budget-allows-disruption",
    id="SW-K8S-020",
    patches=False,
    description="PodDisruptionBudgets allow at least one disruption",
    severity="medium",
    rationale="a budget that allows no eviction blocks node drains and cluster upgrades",
    fix="lower minAvailable below the replica count, or set maxUnavailable to 1 or more",
    references={"Gatekeeper": "K8sPodDisruptionBudget", "Polaris": "pdbDisruptionsIsZero"},
)
def pdb_allows_disruption(stack: StackSubject) -> Iterator[Violation]:
    pdbs = [r for r in stack.resources if r.kind == "PodDisruptionBudget"]
    for workload in stack.resources:
        replicas = _replicas(workload) if workload.kind in REPLICATED_KINDS else None
        if replicas is None:
            continue
        for pdb in _pdbs_for(workload, pdbs):
            why = _blocks_disruption(pdb, replicas)
            if why:
                field = "spec.maxUnavailable" if "maxUnavailable" in why else "spec.minAvailable"
                yield Violation(
                    f"{pdb.display} allows no disruption of {workload.display}: {why}",
                    field,
                    pdb,
                )


def _production(subject: Subject | StackSubject) -> bool:
    return subject.tags.get("env") == "production"


@policy(
    "production-replicas",
    id="SW-K8S-021",
    patches=True,
    description="Workloads of production stacks run at least 2 replicas",
    severity="high",
    kinds=REPLICATED_KINDS,
    rationale="one replica means downtime at every rollout, eviction and node failure",
    fix="set spec.replicas to 2 or more (setting `minimum` of this policy)",
    references={"Gatekeeper": "K8sReplicaLimits", "Polaris": "deploymentMissingReplicas"},
    config={"minimum": 2},
)
def production_replicas(subject: Subject) -> Violation | None:
    minimum = subject.config.get("minimum", 2)
    replicas = _replicas(subject)
    if not _production(subject) or replicas is None or replicas >= minimum:
        return None
    return Violation(
        f"{subject.display} runs {replicas} replica(s) in production stack {subject.stack}; "
        f"at least {minimum} are required",
        "spec.replicas",
    )


@policy(
    "no-load-balancer",
    id="SW-K8S-022",
    patches=True,
    description="LoadBalancer Services only in the stacks allowed to have them",
    severity="medium",
    kinds=["Service"],
    rationale="each LoadBalancer is a public entry point and a cloud bill",
    fix="use type ClusterIP behind an Ingress, or add the stack to `stacks` of this policy",
    references={"Gatekeeper": "K8sBlockLoadBalancer"},
    config={"stacks": []},
)
def no_load_balancer(subject: Subject) -> Violation | None:
    if subject.spec.get("type") != "LoadBalancer":
        return None
    allowed = [str(s) for s in items(subject.config.get("stacks"))]
    if subject.stack and subject.stack in allowed:
        return None
    where = f"stack {subject.stack}" if subject.stack else "this check"
    return Violation(
        f"{subject.display} is a LoadBalancer, which {where} may not create "
        f"(allowed stacks: {', '.join(allowed) or 'none'})",
        "spec.type",
    )


@policy(
    "no-node-port",
    id="SW-K8S-023",
    patches=True,
    description="Services are not of type NodePort",
    severity="low",
    kinds=["Service"],
    rationale="a NodePort opens the same port on every node, outside ingress and network policy",
    fix="use type ClusterIP behind an Ingress (or a LoadBalancer where allowed)",
    references={
        "Kyverno": "restrict-nodeport",
        "Gatekeeper": "K8sBlockNodePort",
        "kube-score": "service-type",
    },
)
def no_node_port(subject: Subject) -> Violation | None:
    if subject.spec.get("type") != "NodePort":
        return None
    return Violation(f"{subject.display} is a NodePort Service", "spec.type")


@policy(
    "no-service-account-token",
    id="SW-K8S-024",
    patches=True,
    description="Pods do not mount a service account token unless they need one",
    severity="medium",
    kinds=POD_KINDS,
    rationale="a mounted token lets anyone who breaks into the pod call the Kubernetes API",
    fix="set automountServiceAccountToken: false in the pod spec (exempt pods that call the API)",
    references={
        "Kyverno": "restrict-automount-sa-token",
        "Gatekeeper": "K8sPSPAutomountServiceAccountTokenPod",
        "Checkov": "CKV_K8S_38",
        "Polaris": "automountServiceAccountToken",
    },
)
def no_service_account_token(subject: Subject) -> Violation | None:
    path, spec = subject.pod_spec()
    mounted = spec.get("automountServiceAccountToken")
    if mounted is False or subject.left_to_owner(mounted):
        return None
    return Violation(
        f"the pods of {subject.display} mount a service account token "
        "(automountServiceAccountToken is not false)",
        f"{path}.automountServiceAccountToken",
    )


_SECRET_NAME = re.compile(
    r"PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|PRIVATE_?KEY|CREDENTIAL|ACCESS_?KEY", re.IGNORECASE
)


@policy(
    "no-secrets-in-env",
    id="SW-K8S-025",
    patches=True,
    description="No secret values in plain environment variables",
    severity="high",
    kinds=POD_KINDS,
    rationale="a plain env value is stored in the object, in Git and in every `kubectl get -o yaml`",
    fix="move the value into a Secret and use env[].valueFrom.secretKeyRef",
    references={"Polaris": "sensitiveContainerEnvVar"},
)
def no_secrets_in_env(subject: Subject) -> Iterator[Violation]:
    for path, container in subject.containers():
        for index, variable in enumerate(items(container.get("env"))):
            variable = mapping(variable)
            name, value = variable.get("name"), variable.get("value")
            if (
                isinstance(name, str)
                and isinstance(value, str)
                and value
                and _SECRET_NAME.search(name)
            ):
                yield Violation(
                    f"container {container.get('name')} of {subject.display} sets {name} "
                    "to a plain value",
                    f"{path}.env[{index}].value",
                )


@policy(
    "recommended-labels",
    id="SW-K8S-026",
    patches=False,
    description="Workloads and Services carry the recommended app.kubernetes.io labels",
    severity="low",
    kinds=POD_KINDS | {"Service"},
    rationale="tools (dashboards, cost reports, kubectl) group and find objects by these labels",
    fix="add the labels (setting `labels` of this policy) to metadata.labels",
    references={"Kyverno": "require-labels", "Gatekeeper": "K8sRequiredLabels"},
    config={"labels": ["app.kubernetes.io/name", "app.kubernetes.io/instance"]},
)
def recommended_labels(subject: Subject) -> Violation | None:
    labels = subject.labels
    missing = [str(k) for k in items(subject.config.get("labels")) if k not in labels]
    if not missing:
        return None
    return Violation(
        f"{subject.display} lacks the label(s) {', '.join(missing)}", "metadata.labels"
    )


@policy(
    "no-deprecated-apis",
    id="SW-K8S-027",
    patches=True,
    description="No API versions removed or deprecated in the target Kubernetes version",
    severity="high",
    rationale="a removed apiVersion fails to apply after the cluster's upgrade",
    fix="move the object to the replacement apiVersion the message names",
    references={
        "Kyverno": "check-deprecated-apis",
        "kube-score": "stable-version",
    },
    config={"kubernetes-version": "1.33"},
)
def no_deprecated_apis(subject: Subject) -> Violation | None:
    entry = API_VERSIONS.get((subject.api_version, subject.kind))
    if entry is None:
        return None
    target_text = str(subject.config.get("kubernetes-version", "1.33"))
    target = parse_version(target_text)
    replacement = f"; use {entry.replacement}" if entry.replacement else ""
    if entry.removed and target >= parse_version(entry.removed):
        return Violation(
            f"{subject.display} uses {subject.api_version}, removed in Kubernetes "
            f"{entry.removed} (target {target_text}){replacement}",
            "apiVersion",
        )
    if target >= parse_version(entry.deprecated):
        until = f", removed in {entry.removed}" if entry.removed else ""
        return Violation(
            f"{subject.display} uses {subject.api_version}, deprecated since Kubernetes "
            f"{entry.deprecated}{until} (target {target_text}){replacement}",
            "apiVersion",
        )
    return None


@policy(
    "spread-replicas",
    id="SW-K8S-028",
    patches=False,
    description="Workloads of 2 or more replicas spread them with anti-affinity or topology spread",
    severity="medium",
    kinds=REPLICATED_KINDS,
    rationale="replicas the scheduler puts on one node all go down with it",
    fix="add spec.template.spec.topologySpreadConstraints (or a podAntiAffinity) over hostnames",
    references={
        "kube-score": "deployment-has-host-podantiaffinity, statefulset-has-host-podantiaffinity",
        "Polaris": "topologySpreadConstraint",
    },
)
def spread_replicas(subject: Subject) -> Violation | None:
    replicas = _replicas(subject)
    path, spec = subject.pod_spec()
    if replicas is None or replicas < 2:
        return None
    if items(spec.get("topologySpreadConstraints")):
        return None
    if mapping(spec.get("affinity")).get("podAntiAffinity"):
        return None
    return Violation(
        f"{subject.display} runs {replicas} replicas with neither topologySpreadConstraints "
        "nor podAntiAffinity",
        f"{path}.topologySpreadConstraints",
    )


@stack_policy(
    "production-separation",
    id="SW-K8S-029",
    patches=True,
    description="Production stacks only target production clusters, and only they do",
    severity="critical",
    rationale="a test stack in a production cluster (or the reverse) is how outages start",
    fix="point the stack at a cluster of its environment, or fix `clusters` of this policy",
    config={"clusters": {}},
)
def production_separation(stack: StackSubject) -> Iterator[Violation]:
    environments = mapping(stack.config.get("clusters"))
    production = _production(stack)
    seen: set[str] = set()
    for resource in stack.resources:
        cluster = resource.cluster
        if not cluster or cluster in seen:
            continue
        seen.add(cluster)
        environment = environments.get(cluster)
        if production and environment != "production":
            marked = f"marked {environment}" if environment else "not marked production"
            yield Violation(
                f"production stack {stack.stack} targets cluster {cluster}, which is {marked}",
                "",
                resource,
            )
        elif not production and environment == "production":
            yield Violation(
                f"stack {stack.stack} (env {stack.tags.get('env', 'unset')}) targets the "
                f"production cluster {cluster}",
                "",
                resource,
            )


PACK = PolicyPack(
    NAME,
    [
        no_naked_pods,
        no_privileged,
        no_privilege_escalation,
        run_as_non_root,
        read_only_root_filesystem,
        drop_all_capabilities,
        no_dangerous_capabilities,
        no_host_path,
        no_host_namespaces,
        no_host_ports,
        seccomp_runtime_default,
        image_tag,
        allowed_registries,
        resource_requests,
        resource_limits,
        probes,
        no_default_namespace,
        network_policy_per_namespace,
        pod_disruption_budget,
        pdb_allows_disruption,
        production_replicas,
        no_load_balancer,
        no_node_port,
        no_service_account_token,
        no_secrets_in_env,
        recommended_labels,
        no_deprecated_apis,
        spread_replicas,
        production_separation,
    ],
    description="Kubernetes best practices: security contexts, images, resources, probes, "
    "namespaces, availability and API versions",
    level="advisory",
)
