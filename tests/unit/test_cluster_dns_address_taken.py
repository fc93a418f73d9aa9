"""The local cluster makes kube-system/kube-dns at 10.96.0.10 when it starts without one,
unless a Service of the user's own holds that address: the cluster still starts, and keeps
that Service."""

from __future__ import annotations

from pathlib import Path

from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions
from stackwright.localcluster.store import Store


def test_a_cluster_whose_dns_address_is_taken_still_starts(tmp_path: Path) -> None:
    path = str(tmp_path / "cluster.db")
    store = Store(path)
    cluster = Cluster(store)
    services = cluster._builtin("", "v1", "services")
    assert cluster.store.get(services.key, "kube-system", "kube-dns") is not None
    # The user replaces it with their own DNS at the same address (as a CoreDNS chart can).
    cluster.delete(services, "kube-system", "kube-dns", DeleteOptions())
    own = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "coredns"},
        "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 53, "protocol": "UDP"}]},
    }
    cluster.create(services, "kube-system", own, WriteOptions(field_manager="helm"))
    store.close()
    restarted = Cluster(Store(path))
    assert restarted.store.get(services.key, "kube-system", "kube-dns") is None
    kept = restarted.store.get(services.key, "kube-system", "coredns")
    assert kept is not None and kept["spec"]["clusterIP"] == "10.96.0.10"
    restarted.store.close()
