"""Namespace deletion: a Terminating namespace is emptied, then finalized, then removed.

As kube-controller-manager's namespace controller: every namespaced object in it
is deleted (objects held by finalizers keep it Terminating until they go), then
the `kubernetes` finalizer is removed from `spec.finalizers` and the namespace
itself disappears. While objects remain, its status says which
(`NamespaceContentRemaining`) and which finalizers hold them
(`NamespaceFinalizersRemaining`), in the controller's own words.
"""

from __future__ import annotations

import contextlib
import copy
from collections import Counter
from collections.abc import Hashable
from typing import Any

from stackwright.localcluster import status
from stackwright.localcluster.cluster import (
    NAMESPACE_FINALIZER,
    NAMESPACE_TYPE,
    DeleteOptions,
    WriteOptions,
    timestamp,
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
        for rtype in cluster.registry:
            if not rtype.namespaced or not rtype.storage:
                continue
            for obj in cluster.store.items(rtype.key, key):
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    cluster.delete(
                        rtype, key, obj["metadata"]["name"], DeleteOptions(propagation="Background")
                    )
                except status.APIError:
                    # Gone already, or refused (an admission policy): as upstream's deleter,
                    # the rest goes all the same; what stays is reported and retried below.
                    continue
        resources: Counter[str] = Counter()
        finalizers: Counter[str] = Counter()
        for rtype in cluster.registry:
            if rtype.namespaced and rtype.storage:
                for obj in cluster.store.items(rtype.key, key):
                    resources[f"{rtype.plural}.{rtype.group}"] += 1
                    finalizers.update(obj["metadata"].get("finalizers") or ())
        if resources:
            self._report(namespace, resources, finalizers)
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

    def _report(
        self, namespace: dict[str, Any], resources: Counter[str], finalizers: Counter[str]
    ) -> None:
        """Set the conditions kube-controller-manager's namespace controller sets on a
        Namespace whose content has not all gone (its messages, word for word)."""
        remaining = {
            "NamespaceContentRemaining": (
                "SomeResourcesRemain",
                "Some resources are remaining: "
                + ", ".join(f"{r} has {n} resource instances" for r, n in sorted(resources.items())),
            ),
            "NamespaceFinalizersRemaining": (
                ("SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: "
                 + ", ".join(f"{f} in {n} resource instances" for f, n in sorted(finalizers.items())))
                if finalizers
                else ("ContentHasNoFinalizers", "All content-preserving finalizers finished")
            ),
        }  # fmt: skip
        old = {c.get("type"): c for c in (namespace.get("status") or {}).get("conditions") or ()}
        now = timestamp(self.cluster.clock())
        conditions = []
        for kind, (reason, message) in remaining.items():
            state = "True" if reason.startswith("Some") else "False"
            before = old.get(kind) or {}
            since = before.get("lastTransitionTime") if before.get("status") == state else now
            conditions.append(
                {"type": kind, "status": state, "lastTransitionTime": since,
                 "reason": reason, "message": message}
            )  # fmt: skip
        if [old.get(c["type"]) for c in conditions] == conditions:
            return
        written = {
            **namespace,
            "status": {**(namespace.get("status") or {}), "conditions": conditions},
        }
        ns_type = self.cluster.type_for("", "v1", "namespaces")
        with contextlib.suppress(status.NotFound):
            self.cluster.update(
                ns_type, "", namespace["metadata"]["name"], written,
                WriteOptions(field_manager=MANAGER), "status",
            )  # fmt: skip
