"""API versions Kubernetes deprecated or removed, and the version each went away in.

From the Kubernetes deprecated API migration guide
(https://kubernetes.io/docs/reference/using-api/deprecation-guide/). One row per
(apiVersion, kind); `removed` is "" for an API deprecated with no removal scheduled.

Must never: list an API as removed before the release that removed it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ApiVersion:
    deprecated: str
    removed: str
    replacement: str


def parse_version(text: str) -> tuple[int, int]:
    """ "1.29" (or "v1.29.3") → (1, 29); anything unreadable sorts as the newest."""
    parts = text.strip().lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return 999, 0


def _rows(
    api_version: str, kinds: str, deprecated: str, removed: str, replacement: str
) -> dict[tuple[str, str], ApiVersion]:
    return {
        (api_version, kind): ApiVersion(deprecated, removed, replacement.format(kind=kind))
        for kind in kinds.split()
    }


API_VERSIONS: dict[tuple[str, str], ApiVersion] = {
    # 1.16
    **_rows(
        "extensions/v1beta1", "Deployment DaemonSet ReplicaSet", "1.9", "1.16", "apps/v1 {kind}"
    ),
    **_rows(
        "extensions/v1beta1", "NetworkPolicy", "1.9", "1.16", "networking.k8s.io/v1 NetworkPolicy"
    ),
    **_rows("extensions/v1beta1", "PodSecurityPolicy", "1.11", "1.16", "Pod Security admission"),
    **_rows("apps/v1beta1", "Deployment StatefulSet ReplicaSet", "1.9", "1.16", "apps/v1 {kind}"),
    **_rows(
        "apps/v1beta2",
        "Deployment StatefulSet DaemonSet ReplicaSet",
        "1.9",
        "1.16",
        "apps/v1 {kind}",
    ),
    # 1.22
    **_rows("extensions/v1beta1", "Ingress", "1.14", "1.22", "networking.k8s.io/v1 Ingress"),
    **_rows(
        "networking.k8s.io/v1beta1",
        "Ingress IngressClass",
        "1.19",
        "1.22",
        "networking.k8s.io/v1 {kind}",
    ),
    **_rows(
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
        "1.16",
        "1.22",
        "admissionregistration.k8s.io/v1 {kind}",
    ),
    **_rows(
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        "1.16",
        "1.22",
        "apiextensions.k8s.io/v1 CustomResourceDefinition",
    ),
    **_rows(
        "apiregistration.k8s.io/v1beta1",
        "APIService",
        "1.19",
        "1.22",
        "apiregistration.k8s.io/v1 APIService",
    ),
    **_rows(
        "authentication.k8s.io/v1beta1",
        "TokenReview",
        "1.19",
        "1.22",
        "authentication.k8s.io/v1 TokenReview",
    ),
    **_rows(
        "authorization.k8s.io/v1beta1",
        "SubjectAccessReview LocalSubjectAccessReview SelfSubjectAccessReview",
        "1.19",
        "1.22",
        "authorization.k8s.io/v1 {kind}",
    ),
    **_rows(
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest",
        "1.19",
        "1.22",
        "certificates.k8s.io/v1 CertificateSigningRequest",
    ),
    **_rows("coordination.k8s.io/v1beta1", "Lease", "1.19", "1.22", "coordination.k8s.io/v1 Lease"),
    **_rows(
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole ClusterRoleBinding Role RoleBinding",
        "1.17",
        "1.22",
        "rbac.authorization.k8s.io/v1 {kind}",
    ),
    **_rows(
        "scheduling.k8s.io/v1beta1",
        "PriorityClass",
        "1.14",
        "1.22",
        "scheduling.k8s.io/v1 PriorityClass",
    ),
    **_rows(
        "storage.k8s.io/v1beta1",
        "CSIDriver CSINode StorageClass VolumeAttachment",
        "1.19",
        "1.22",
        "storage.k8s.io/v1 {kind}",
    ),
    # 1.25
    **_rows("batch/v1beta1", "CronJob", "1.21", "1.25", "batch/v1 CronJob"),
    **_rows(
        "discovery.k8s.io/v1beta1",
        "EndpointSlice",
        "1.21",
        "1.25",
        "discovery.k8s.io/v1 EndpointSlice",
    ),
    **_rows("events.k8s.io/v1beta1", "Event", "1.19", "1.25", "events.k8s.io/v1 Event"),
    **_rows(
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        "1.22",
        "1.25",
        "autoscaling/v2 HorizontalPodAutoscaler",
    ),
    **_rows(
        "policy/v1beta1", "PodDisruptionBudget", "1.21", "1.25", "policy/v1 PodDisruptionBudget"
    ),
    **_rows("policy/v1beta1", "PodSecurityPolicy", "1.21", "1.25", "Pod Security admission"),
    **_rows("node.k8s.io/v1beta1", "RuntimeClass", "1.20", "1.25", "node.k8s.io/v1 RuntimeClass"),
    # 1.26
    **_rows(
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "FlowSchema PriorityLevelConfiguration",
        "1.23",
        "1.26",
        "flowcontrol.apiserver.k8s.io/v1 {kind}",
    ),
    **_rows(
        "autoscaling/v2beta2",
        "HorizontalPodAutoscaler",
        "1.23",
        "1.26",
        "autoscaling/v2 HorizontalPodAutoscaler",
    ),
    # 1.27
    **_rows(
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        "1.24",
        "1.27",
        "storage.k8s.io/v1 CSIStorageCapacity",
    ),
    # 1.29
    **_rows(
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "FlowSchema PriorityLevelConfiguration",
        "1.26",
        "1.29",
        "flowcontrol.apiserver.k8s.io/v1 {kind}",
    ),
    # 1.32
    **_rows(
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "FlowSchema PriorityLevelConfiguration",
        "1.29",
        "1.32",
        "flowcontrol.apiserver.k8s.io/v1 {kind}",
    ),
    # deprecated, no removal scheduled
    **_rows("v1", "ComponentStatus", "1.19", "", ""),
}
