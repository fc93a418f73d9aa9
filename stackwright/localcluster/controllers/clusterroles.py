"""ClusterRole aggregation, and the bootstrap RBAC policy a cluster starts with.

As kube-controller-manager's clusterrole-aggregation controller: a ClusterRole with an
`aggregationRule` holds, as its `rules`, the rules of every ClusterRole its selectors
match (so `view` grows when a ClusterRole labelled
`rbac.authorization.k8s.io/aggregate-to-view: "true"` appears, and shrinks when it goes).
As the API server's `rbac/bootstrap-roles` hook: the bootstrap roles and bindings
(`rbac.BOOTSTRAP_CLUSTER_ROLES`) are created at every start where missing, so a cluster
made before they existed gets them too; present ones are left as they are.
"""

from __future__ import annotations

from collections.abc import Hashable

from stackwright.localcluster import rbac
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.store import Change

MANAGER = "clusterrole-aggregation-controller"


def ensure_bootstrap_policy(cluster: Cluster) -> None:
    """Create the bootstrap ClusterRoles and ClusterRoleBindings the cluster lacks."""
    opts = WriteOptions(field_manager="kube-apiserver")
    for plural, obj in rbac.bootstrap_objects():
        rtype = cluster.type_for(rbac.RBAC_GROUP, "v1", plural)
        if cluster.store.get(rtype.key, "", obj["metadata"]["name"]) is None:
            cluster.create(rtype, "", obj, opts)


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
