"""Each ResourceQuota's status: `hard` as its spec says, `used` as what it covers uses it.

As kube-controller-manager's resourcequota controller, but it reads the totals
`quota.Usage` keeps as writes commit (the namespace's, or a scoped quota's pods') instead
of recounting the namespace: a change in a namespace with a quota enqueues the namespace
once, and a burst of them makes one status write per quota. Admission does not wait for
it (it reads the same totals).
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction

from stackwright.localcluster import quota, status
from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.controllers.base import Controller, Retry
from stackwright.localcluster.store import Change

MANAGER = "kube-controller-manager"


class ResourceQuotaController(Controller):
    name = "resourcequota-controller"

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self.quotas = cluster.type_for("", "v1", "resourcequotas")

    def keys_for(self, change: Change) -> list[Hashable]:
        if not self.cluster.quota.tracks(change.namespace):
            return []
        if (
            change.key == quota.QUOTA_TYPE
            and change.old is not None
            and (change.old.get("spec") or {}) == (change.obj.get("spec") or {})
        ):
            return []  # its own status write changes nothing the status is made from
        return [change.namespace]

    def initial_keys(self) -> list[Hashable]:
        return sorted(
            {q["metadata"].get("namespace", "") for q in self.cluster.store.items(quota.QUOTA_TYPE)}
        )

    async def reconcile(self, key: Hashable) -> None:
        assert isinstance(key, str)
        for current in self.cluster.store.items(quota.QUOTA_TYPE, key):
            hard = quota.hard_of(current)
            wanted: dict[str, object] = {"hard": dict(hard)}
            if hard:
                totals = self.cluster.quota.used(current)
                wanted["used"] = {
                    name: quota.shown(totals.get(name, Fraction(0)), limit)
                    for name, limit in hard.items()
                }
            if current.get("status") == wanted:
                continue
            try:
                self.cluster.update(
                    self.quotas, key, current["metadata"]["name"], {**current, "status": wanted},
                    WriteOptions(field_manager=MANAGER), subresource="status",
                )  # fmt: skip
            except status.Conflict:
                raise Retry(0.0) from None
            except status.NotFound:
                continue
