"""Namespace deletion: a Terminating namespace is emptied, then finalized, then removed.

As kube-controller-manager's namespace controller: every namespaced object in it
is deleted (objects held by finalizers keep it Terminating until they go), then
the `kubernetes` finalizer is removed from `spec.finalizers` and the namespace
itself disappears.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable

from stackwright.localcluster import status
from stackwright.localcluster.cluster import (
    NAMESPACE_FINALIZER,
    NAMESPACE_TYPE,
    DeleteOptions,
    WriteOptions,
)
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.store import DELETED, Change

MANAGER = "namespace-controller"


class NamespaceController(Controller):
    name = "namespace-controller"

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key == NAMESPACE_TYPE:
            if change.type != DELETED and change.obj["metadata"].get("deletionTimestamp"):
                return [change.name]
            return []
        if change.type == DELETED and change.namespace:
            ns = self.cluster.store.get(NAMESPACE_TYPE, "", change.namespace)
            if ns is not None and ns["metadata"].get("deletionTimestamp"):
                return [change.namespace]
        return []

    def initial_keys(self) -> list[Hashable]:
        return [
            ns["metadata"]["name"]
            for ns in self.cluster.store.items(NAMESPACE_TYPE)
            if ns["metadata"].get("deletionTimestamp")
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, str)
        cluster = self.cluster
        namespace = cluster.store.get(NAMESPACE_TYPE, "", key)
        if namespace is None or not namespace["metadata"].get("deletionTimestamp"):
            return
        remaining = 0
        for rtype in cluster.registry:
            if not rtype.namespaced or not rtype.storage:
                continue
            for obj in cluster.store.items(rtype.key, key):
                remaining += 1
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    cluster.delete(
                        rtype, key, obj["metadata"]["name"], DeleteOptions(propagation="Background")
                    )
                except status.NotFound:
                    remaining -= 1
        if any(
            cluster.store.items(rtype.key, key) for rtype in cluster.registry if rtype.namespaced
        ):
            raise Retry(0.2)  # re-queued sooner as each object goes
        ns_type = cluster.type_for("", "v1", "namespaces")
        finalized = copy.deepcopy(namespace)
        spec_finalizers = [
            f for f in finalized.get("spec", {}).get("finalizers", []) if f != NAMESPACE_FINALIZER
        ]
        finalized.setdefault("spec", {})["finalizers"] = spec_finalizers
        if not spec_finalizers:
            del finalized["spec"]["finalizers"]
        cluster.update(ns_type, "", key, finalized, WriteOptions(field_manager=MANAGER), "finalize")
