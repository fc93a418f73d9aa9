"""Every active namespace holds a `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap.

As kube-controller-manager's serviceaccount and root-ca-cert-publisher
controllers: both are created when a namespace appears, created again when
deleted, and the ConfigMap's CA bundle is put back when edited. A Terminating
namespace gets neither (the API refuses creation there).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable

from stackwright.localcluster import status
from stackwright.localcluster.cluster import NAMESPACE_TYPE, Cluster, WriteOptions
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.store import DELETED, Change

SA_MANAGER = "kube-controller-manager"
DEFAULT_ACCOUNT = "default"
ROOT_CA = "kube-root-ca.crt"
ROOT_CA_DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)
_SA_KEY = ("", "serviceaccounts")
_CM_KEY = ("", "configmaps")


class ServiceAccountController(Controller):
    name = "serviceaccount-controller"

    def __init__(self, cluster: Cluster, root_ca: str) -> None:
        super().__init__(cluster)
        self.root_ca = root_ca

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == NAMESPACE_TYPE:
            return [change.name] if change.type != DELETED else []
        if change.key == _SA_KEY and change.type == DELETED and change.name == DEFAULT_ACCOUNT:
            return [change.namespace]
        if change.key == _CM_KEY and change.name == ROOT_CA:
            return [change.namespace]
        return []

    def initial_keys(self) -> list[Hashable]:
        return [ns["metadata"]["name"] for ns in self.cluster.store.items(NAMESPACE_TYPE)]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, str)
        cluster = self.cluster
        namespace = cluster.store.get(NAMESPACE_TYPE, "", key)
        if namespace is None or namespace["metadata"].get("deletionTimestamp"):
            return
        opts = WriteOptions(field_manager=SA_MANAGER)
        try:
            if cluster.store.get(_SA_KEY, key, DEFAULT_ACCOUNT) is None:
                cluster.create(
                    cluster.type_for("", "v1", "serviceaccounts"),
                    key,
                    {"apiVersion": "v1", "kind": "ServiceAccount",
                     "metadata": {"name": DEFAULT_ACCOUNT}},
                    opts,
                )  # fmt: skip
            cm_type = cluster.type_for("", "v1", "configmaps")
            current = cluster.store.get(_CM_KEY, key, ROOT_CA)
            if current is None:
                cluster.create(
                    cm_type,
                    key,
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "name": ROOT_CA,
                            "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION},
                        },
                        "data": {"ca.crt": self.root_ca},
                    },
                    opts,
                )
            elif not current["metadata"].get("deletionTimestamp") and (
                current.get("data") != {"ca.crt": self.root_ca}
            ):
                fixed = copy.deepcopy(current)
                fixed["data"] = {"ca.crt": self.root_ca}
                fixed.pop("binaryData", None)
                cluster.update(cm_type, key, ROOT_CA, fixed, opts)
        except (status.AlreadyExists, status.Conflict, status.NotFound, status.Forbidden):
            # Raced with a client or a namespace going away: the next change says what to do.
            return
