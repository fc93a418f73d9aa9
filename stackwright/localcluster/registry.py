"""Which resource types the local cluster serves, and how each is named.

The built-in kinds are a data table (one row per kind, in the API server's own
terms); custom kinds join and leave as their CustomResourceDefinitions become
Established or are deleted. Discovery documents are rendered from here, so what
`kubectl api-resources` lists is exactly what the handlers accept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from stackwright.localcluster.reviews import REVIEW_TYPES
from stackwright.localcluster.schema import Node, builtin_schemas, resolve_inline

Resolver = Callable[[Node | None], Node]

ALL_VERBS = (
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
)  # fmt: skip


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    verbs: tuple[str, ...] = ALL_VERBS
    #: The root schema node; None accepts any object (a CRD without a schema).
    schema: Node | None = None
    resolve: Resolver = resolve_inline
    #: For custom kinds: the defining CRD's name and its scale / printer settings.
    crd: str | None = None
    storage: bool = True
    scale_paths: dict[str, str] = field(default_factory=dict)
    printer_columns: tuple[dict[str, Any], ...] = ()
    selectable_fields: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    @property
    def key(self) -> tuple[str, str]:
        """Storage identity: the group and plural (every version of a kind shares its objects)."""
        return (self.group, self.plural)

    def describe(self) -> str:
        """How messages name the type: `deployments.apps`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


#: Resources kube-apiserver 1.33 serves with a deprecation warning on every request.
_ENDPOINTS_DEPRECATED = (
    "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
)
DEPRECATED = {
    ("", "v1", "endpoints"): _ENDPOINTS_DEPRECATED,
    ("", "v1", "componentstatuses"): "v1 ComponentStatus is deprecated in v1.19+",
}

#: Read-only kinds the server answers itself (get and list, no watch): never stored.
COMPONENT_STATUSES = ("", "componentstatuses")
READ_ONLY = frozenset({COMPONENT_STATUSES})

# (group, version, kind, plural, namespaced, short names, categories, subresources)
# Short names and categories are those a real kube-apiserver 1.33 advertises, so that
# `kubectl get deploy` or `kubectl get all` behave as users expect.
_BUILTINS: tuple[tuple[str, str, str, str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    ("", "v1", "Namespace", "namespaces", False, ("ns",), (), ("status",)),
    ("", "v1", "ComponentStatus", "componentstatuses", False, ("cs",), (), ()),
    ("", "v1", "ConfigMap", "configmaps", True, ("cm",), (), ()),
    ("", "v1", "Secret", "secrets", True, (), (), ()),
    ("", "v1", "Service", "services", True, ("svc",), ("all",), ("status", "proxy")),
    ("", "v1", "Pod", "pods", True, ("po",), ("all",), ("status", "ephemeralcontainers", "log", "binding", "eviction", "exec", "attach", "portforward", "proxy")),
    ("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",), (), ("token",)),
    ("", "v1", "PersistentVolume", "persistentvolumes", False, ("pv",), (), ("status",)),
    ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",), (), ("status",)),
    ("", "v1", "Endpoints", "endpoints", True, ("ep",), (), ()),
    ("", "v1", "Event", "events", True, ("ev",), (), ()),
    ("", "v1", "Node", "nodes", False, ("no",), (), ("status", "proxy")),
    ("", "v1", "LimitRange", "limitranges", True, ("limits",), (), ()),
    ("", "v1", "ResourceQuota", "resourcequotas", True, ("quota",), (), ("status",)),
    ("", "v1", "ReplicationController", "replicationcontrollers", True, ("rc",), ("all",), ("status", "scale")),
    ("apps", "v1", "Deployment", "deployments", True, ("deploy",), ("all",), ("status", "scale")),
    ("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",), ("all",), ("status", "scale")),
    ("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",), ("all",), ("status", "scale")),
    ("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",), ("all",), ("status",)),
    ("apps", "v1", "ControllerRevision", "controllerrevisions", True, (), (), ()),
    ("batch", "v1", "Job", "jobs", True, (), ("all",), ("status",)),
    ("batch", "v1", "CronJob", "cronjobs", True, ("cj",), ("all",), ("status",)),
    ("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("ing",), (), ("status",)),
    ("networking.k8s.io", "v1", "IngressClass", "ingressclasses", False, (), (), ()),
    ("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ("netpol",), (), ()),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", True, (), (), ()),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, (), (), ()),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, (), (), ()),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False, (), (), ()),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), (), ("status",)),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), ("all",), ("status",)),
    ("autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), ("all",), ("status",)),
    ("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ("sc",), (), ()),
    ("coordination.k8s.io", "v1", "Lease", "leases", True, (), (), ()),
    ("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True, (), (), ()),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False, ("crd", "crds"), ("api-extensions",), ("status",)),
    ("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",), (), ()),
    ("", "v1", "PodTemplate", "podtemplates", True, (), (), ()),
    ("events.k8s.io", "v1", "Event", "events", True, ("ev",), (), ()),
    # Webhook configurations and admission policies are stored, never called or evaluated.
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", False, (), ("api-extensions",), ()),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False, (), ("api-extensions",), ()),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", False, (), ("api-extensions",), ("status",)),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", False, (), ("api-extensions",), ()),
    # Stored, not proxied: no aggregated API server is reached through an APIService.
    ("apiregistration.k8s.io", "v1", "APIService", "apiservices", False, (), ("api-extensions",), ("status",)),
    ("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False, (), (), ()),
    ("storage.k8s.io", "v1", "CSIDriver", "csidrivers", False, (), (), ()),
    ("storage.k8s.io", "v1", "CSINode", "csinodes", False, (), (), ()),
    ("storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", False, (), (), ("status",)),
    ("storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", True, (), (), ()),
    ("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", False, ("csr",), (), ("status", "approval")),
    ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", "flowschemas", False, (), (), ("status",)),
    ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations", False, (), (), ("status",)),
)  # fmt: skip

#: The version each group prefers in discovery, where a group serves several.
PREFERRED: dict[str, str] = {"autoscaling": "v2"}

#: Versions served by conversion (stackwright/localcluster/versions.py), not stored.
CONVERTED_VERSIONS = frozenset(
    {("autoscaling", "v1", "HorizontalPodAutoscaler"), ("events.k8s.io", "v1", "Event")}
)


def builtin_types() -> list[ResourceType]:
    schemas = builtin_schemas()
    types = []
    for group, version, kind, plural, namespaced, short, categories, subs in _BUILTINS:
        root = schemas.root(group, version, kind)
        if root is None:  # pragma: no cover - the table and the schema version disagree
            raise RuntimeError(f"no schema for {group}/{version} {kind}")
        types.append(
            ResourceType(
                group=group,
                version=version,
                kind=kind,
                plural=plural,
                namespaced=namespaced,
                short_names=short,
                categories=categories,
                subresources=frozenset(subs),
                verbs=("get", "list") if (group, plural) in READ_ONLY else ALL_VERBS,
                schema=root,
                resolve=schemas.resolve,
                storage=(group, version, kind) not in CONVERTED_VERSIONS,
            )
        )
    for group, version, kind, plural, namespaced in REVIEW_TYPES:
        types.append(
            ResourceType(
                group=group,
                version=version,
                kind=kind,
                plural=plural,
                namespaced=namespaced,
                verbs=("create",),
                schema=schemas.root(group, version, kind),
                resolve=schemas.resolve,
            )
        )
    return types


class Registry:
    """The served resource types, by (group, version, plural) and by (group, version, kind)."""

    def __init__(self, types: list[ResourceType] | None = None) -> None:
        self._by_plural: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str, str], ResourceType] = {}
        for rtype in types if types is not None else builtin_types():
            self.add(rtype)

    def add(self, rtype: ResourceType) -> None:
        self._by_plural[(rtype.group, rtype.version, rtype.plural)] = rtype
        self._by_kind[(rtype.group, rtype.version, rtype.kind)] = rtype

    def remove_crd(self, crd_name: str) -> list[ResourceType]:
        gone = [t for t in self._by_plural.values() if t.crd == crd_name]
        for rtype in gone:
            del self._by_plural[(rtype.group, rtype.version, rtype.plural)]
            del self._by_kind[(rtype.group, rtype.version, rtype.kind)]
        return gone

    def by_plural(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_plural.get((group, version, plural))

    def by_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((group, version, kind))

    def by_api_version(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        return self._by_kind.get((group, version, kind))

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(list(self._by_plural.values()))

    def group_versions(self) -> dict[str, list[str]]:
        """Each group (core is "") and its served versions, preferred first."""
        groups: dict[str, list[str]] = {}
        for rtype in self._by_plural.values():
            versions = groups.setdefault(rtype.group, [])
            if rtype.version not in versions:
                versions.append(rtype.version)
        for group, versions in groups.items():
            preferred = PREFERRED.get(group)
            versions.sort(key=lambda v, p=preferred: (v != p, _version_rank(v)))  # type: ignore[misc]
        return groups

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self._by_plural.values() if t.group == group and t.version == version]


def _version_rank(version: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA before beta before alpha, higher numbers first."""
    import re

    match = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not match:
        return (3, 0, 0)
    major, stage, minor = match.groups()
    stage_rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (stage_rank, -int(major), -int(minor or 0))
