"""The controllers that run inside the local cluster's server process.

API machinery controllers (garbage collection, namespace lifecycle, CRD
establishment) live here; each reacts to store changes and acts through the
same `Cluster` verbs clients use.
"""

from __future__ import annotations

import asyncio
from typing import Any

from stackwright.localcluster.cluster import Cluster
from stackwright.localcluster.controllers.base import Controller
from stackwright.localcluster.controllers.crds import CRDController
from stackwright.localcluster.controllers.garbage import GarbageCollector
from stackwright.localcluster.controllers.namespaces import NamespaceController
from stackwright.localcluster.controllers.pace import Pace

__all__ = ["start_controllers"]


def build_controllers(
    cluster: Cluster, app: Any = None, *, nodes: int = 1, pace: Pace | None = None
) -> list[Controller]:
    """Create the controllers (registering their store listeners) without running them."""
    pace = pace or Pace()

    def types_changed() -> None:
        if app is not None:
            app.invalidate_openapi()

    return [
        CRDController(cluster, types_changed),
        GarbageCollector(cluster),
        NamespaceController(cluster),
    ]


def start_controllers(
    cluster: Cluster, app: Any = None, *, nodes: int = 1, speed: float = 1.0
) -> list[asyncio.Task[None]]:
    """Run every controller as a task of the current event loop."""
    controllers = build_controllers(cluster, app, nodes=nodes, pace=Pace(speed))
    return [asyncio.ensure_future(c.run()) for c in controllers]
