"""ClusterRole aggregation, and the bootstrap RBAC policy a cluster starts with.

As kube-controller-manager's clusterrole-aggregation controller: a ClusterRole with an
`aggregationRule` holds, as its `rules`, the rules of every ClusterRole its selectors
match (so `view` grows when a ClusterRole labelled
`rbac.authorization.k8s.io/aggregate-to-view: "true"` appears, and shrinks when it goes).
As the API server's `rbac/bootstrap-roles` hook: the bootstrap roles and bindings
(`rbac.BOOTSTRAP_CLUSTER_ROLES`) are created at every start where missing, so a cluster
made before they existed gets them too, and ones still marked for auto-update get back
what they lack.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable

from stackwright.localcluster import rbac
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.store import Change

MANAGER = "clusterrole-aggregation-controller"


def ensure_bootstrap_policy(cluster: Cluster) -> None:
    """Create the bootstrap ClusterRoles and ClusterRoleBindings the cluster lacks, and
    reconcile those still annotated `autoupdate: "true"` as upstream does: missing labels,
    annotations, rules and subjects added, nothing a user added taken away."""
    opts = WriteOptions(field_manager="kube-apiserver")
    for plural, obj in rbac.bootstrap_objects():
        rtype = cluster.type_for(rbac.RBAC_GROUP, "v1", plural)
        name = obj["metadata"]["name"]
        current = cluster.store.get(rtype.key, "", name)
        if current is None:
            cluster.create(rtype, "", obj, opts)
            continue
        meta = current["metadata"]
        if (meta.get("annotations") or {}).get(rbac.AUTOUPDATE) != "true":
            continue  # the user took it over, as upstream lets them
        wanted = copy.deepcopy(current)
        for key in ("labels", "annotations"):
            wanted["metadata"][key] = {**obj["metadata"][key], **(meta.get(key) or {})}
        # An aggregated role's rules are the aggregation controller's to fill.
        field = "subjects" if plural == "clusterrolebindings" else "rules"
        if field == "subjects" or not obj.get("aggregationRule"):
            have = list(current.get(field) or [])
            wanted[field] = have + [item for item in obj[field] if item not in have]
        if wanted != current:
            cluster.update(rtype, "", name, wanted, opts)


class ClusterRoleAggregationController(Controller):
    name = "clusterrole-aggregation-controller"

    def keys_for(self, change: Change) -> list[Hashable]:
        if change.key != rbac.CLUSTER_ROLES:
            return []
        # Any ClusterRole's labels or rules may change what an aggregated one holds.
        return self.initial_keys()

    def initial_keys(self) -> list[Hashable]:
        return [
            role["metadata"]["name"]
            for role in self.cluster.store.items(rbac.CLUSTER_ROLES)
            if role.get("aggregationRule")
        ]

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, str)
        role = self.cluster.store.get(rbac.CLUSTER_ROLES, "", key)
        if role is None or not role.get("aggregationRule"):
            return
        rules = rbac.aggregated_rules(self.cluster.store, role)
        if rules == (role.get("rules") or []):
            return
        rtype = self.cluster.type_for(rbac.RBAC_GROUP, "v1", "clusterroles")
        updated = {**role, "rules": rules}
        self.cluster.update(rtype, "", key, updated, WriteOptions(field_manager=MANAGER))
