"""The controllers that run inside the local cluster's server process.

API machinery controllers (garbage collection, namespace lifecycle, each
namespace's default ServiceAccount and root CA ConfigMap, ResourceQuota status, legacy service account token
Secrets, CRD establishment, ClusterRole aggregation), the simulated nodes (registration and lifecycle, scheduler,
kubelets), the services and storage controllers and the workload controllers
(Deployment … CronJob, HPA and PDB status) live here; each reacts to store
changes and acts through the same `Cluster` verbs clients use.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stackwright.localcluster.cluster import Cluster
from stackwright.localcluster.controllers.autoscaling import HorizontalPodAutoscalerController
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.certificates import CertificateSigningController
from stackwright.localcluster.controllers.clusterroles import ClusterRoleAggregationController
from stackwright.localcluster.controllers.crds import CRDController
from stackwright.localcluster.controllers.cronjobs import CronJobController
from stackwright.localcluster.controllers.daemonsets import DaemonSetController
from stackwright.localcluster.controllers.deployments import DeploymentController
from stackwright.localcluster.controllers.disruption import DisruptionController
from stackwright.localcluster.controllers.garbage import GarbageCollector
from stackwright.localcluster.controllers.jobs import JobController
from stackwright.localcluster.controllers.kubelet import Kubelet
from stackwright.localcluster.controllers.namespaces import NamespaceController
from stackwright.localcluster.controllers.nodes import NodeController
from stackwright.localcluster.controllers.pace import Pace
from stackwright.localcluster.controllers.quotas import ResourceQuotaController
from stackwright.localcluster.controllers.replicasets import (
    ReplicaSetController,
    ReplicationControllerController,
)
from stackwright.localcluster.controllers.scheduler import Scheduler
from stackwright.localcluster.controllers.serviceaccounts import ServiceAccountController
from stackwright.localcluster.controllers.services import ServiceController
from stackwright.localcluster.controllers.statefulsets import StatefulSetController
from stackwright.localcluster.controllers.tokens import TokensController
from stackwright.localcluster.controllers.volumes import VolumeController
from stackwright.localcluster.controllers.workload_common import OwnerIndex
from stackwright.localcluster.credentials import Credentials

__all__ = ["start_controllers"]


def build_controllers(
    cluster: Cluster,
    app: Any = None,
    *,
    nodes: int = 1,
    pace: Pace | None = None,
    root_ca: str = "",
    token_key: bytes = b"",
    credentials: Credentials | None = None,
) -> list[Controller]:
    """Create the controllers (registering their store listeners) without running them.

    `root_ca` (PEM) is what every namespace's `kube-root-ca.crt` ConfigMap publishes, and
    `token_key` what signs the tokens put in service account token Secrets (none: no
    token controller), and `credentials` hold the client CA the CSR signer signs with (none: no
    signer).
    """
    pace = pace or Pace()
    # Workload objects by owner, kept by the store before any controller hears of a change.
    owned = OwnerIndex(cluster)

    def types_changed() -> None:
        if app is not None:
            app.invalidate_openapi()

    return [
        CRDController(cluster, types_changed),
        GarbageCollector(cluster),
        NamespaceController(cluster),
        ServiceAccountController(cluster, root_ca),
        ResourceQuotaController(cluster),
        *([TokensController(cluster, token_key, root_ca)] if token_key else []),
        ClusterRoleAggregationController(cluster),
        *([CertificateSigningController(cluster, credentials)] if credentials else []),
        # Simulated nodes first: the scheduler and the kubelets start from the nodes
        # (and the default storage classes) registered here.
        NodeController(cluster, nodes=nodes, pace=pace),
        VolumeController(cluster, pace),
        Scheduler(cluster),
        Kubelet(cluster, pace),
        ServiceController(cluster, pace),
        # Workload controllers, as kube-controller-manager runs them.
        DeploymentController(cluster, owned, pace),
        ReplicaSetController(cluster, owned, pace),
        ReplicationControllerController(cluster, owned, pace),
        StatefulSetController(cluster, owned, pace),
        DaemonSetController(cluster, owned, pace),
        JobController(cluster, owned, pace),
        CronJobController(cluster, owned),
        HorizontalPodAutoscalerController(cluster, owned, pace),
        DisruptionController(cluster, owned, pace),
    ]


def start_controllers(
    cluster: Cluster,
    app: Any = None,
    *,
    nodes: int = 1,
    speed: float = 1.0,
    root_ca: str = "",
    token_key: bytes = b"",
    credentials: Credentials | None = None,
) -> list[asyncio.Task[None]]:
    """Run every controller as a task of the current event loop."""
    controllers = build_controllers(
        cluster, app, nodes=nodes, pace=Pace(speed), root_ca=root_ca, token_key=token_key,
        credentials=credentials,
    )  # fmt: skip
    return [asyncio.ensure_future(c.run()) for c in controllers]
