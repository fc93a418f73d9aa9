"""Node maintenance and failure for a running local cluster, through its API.

What `stackwright cluster node cordon|uncordon|drain|fail|recover` does, done as
kubectl does it — over HTTPS with the cluster's CA and token, never by touching
the store: cordon and uncordon patch `spec.unschedulable`; drain cordons, then
evicts every pod on the node except DaemonSet and mirror pods through the
eviction API (retrying while a PodDisruptionBudget answers 429, for a bounded
time) and waits for them to be gone; fail and recover set and remove the
`stackwright.io/simulate: failed` annotation the node lifecycle simulation
reacts to.

Must never: delete a pod directly (a budget must be able to refuse), or wait
without a deadline.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from stackwright.errors import StackwrightError, UsageError
from stackwright.localcluster.controllers.nodes import SIMULATE_ANNOTATION
from stackwright.localcluster.lifecycle import ClusterInfo

MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}
RETRY_EVERY = 0.5  # seconds between eviction attempts a budget refused, as kubectl drain


@dataclass
class DrainReport:
    node: str
    evicted: list[str] = field(default_factory=list)  # namespace/name
    skipped: list[str] = field(default_factory=list)  # DaemonSet and mirror pods


def client_for(info: ClusterInfo) -> httpx.Client:
    """An API client for a running local cluster."""
    if not info.running:
        raise UsageError(
            f"cluster {info.name} is not running: start it with `stackwright cluster start --name {info.name}`"
        )
    token = (info.folder / "token").read_text().strip()
    return httpx.Client(
        base_url=info.server,
        verify=ssl.create_default_context(cafile=str(info.folder / "ca.crt")),
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


class NodeOps:
    """Operations on the nodes of one cluster."""

    def __init__(self, info: ClusterInfo, client: httpx.Client | None = None) -> None:
        self.info = info
        self.client = client or client_for(info)

    def close(self) -> None:
        self.client.close()

    # --- reading -------------------------------------------------------------------

    def _check(self, response: httpx.Response, what: str) -> Any:
        if response.status_code >= 400:
            try:
                message = response.json().get("message", response.text)
            except ValueError:
                message = response.text
            raise StackwrightError(f"{what} failed ({response.status_code}): {message}")
        return response.json()

    def node(self, name: str) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/nodes/{name}")
        if response.status_code == 404:
            names = [
                n["metadata"]["name"]
                for n in self._check(self.client.get("/api/v1/nodes"), "listing nodes")["items"]
            ]
            raise UsageError(
                f'node "{name}" not found in cluster {self.info.name}: its nodes are {", ".join(names) or "none"}'
            )
        node: dict[str, Any] = self._check(response, f"reading node {name}")
        return node

    def _patch_node(self, name: str, patch: dict[str, Any], what: str) -> None:
        self.node(name)  # an unknown node is the user's mistake: one clear line
        self._check(
            self.client.patch(
                f"/api/v1/nodes/{name}",
                content=json.dumps(patch),
                headers=MERGE_PATCH,
                params={"fieldManager": "stackwright"},
            ),
            what,
        )

    # --- operations ------------------------------------------------------------------------

    def cordon(self, name: str) -> None:
        self._patch_node(name, {"spec": {"unschedulable": True}}, f"cordoning node {name}")

    def uncordon(self, name: str) -> None:
        self._patch_node(name, {"spec": {"unschedulable": None}}, f"uncordoning node {name}")

    def fail(self, name: str) -> None:
        self._patch_node(
            name,
            {"metadata": {"annotations": {SIMULATE_ANNOTATION: "failed"}}},
            f"failing node {name}",
        )

    def recover(self, name: str) -> None:
        self._patch_node(
            name,
            {"metadata": {"annotations": {SIMULATE_ANNOTATION: None}}},
            f"recovering node {name}",
        )

    def drain(
        self,
        name: str,
        *,
        timeout: float = 60.0,
        on_evict: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> DrainReport:
        """Cordon, evict the node's pods (retrying budget refusals), wait until they are gone."""
        self.cordon(name)
        report = DrainReport(name)
        deadline = clock() + timeout
        listed = self._check(
            self.client.get("/api/v1/pods", params={"fieldSelector": f"spec.nodeName={name}"}),
            f"listing the pods of node {name}",
        )["items"]
        pending: dict[str, dict[str, Any]] = {}
        for pod in listed:
            meta = pod["metadata"]
            ref = f"{meta['namespace']}/{meta['name']}"
            if _daemon_or_mirror(pod):
                report.skipped.append(ref)
            else:
                pending[ref] = pod
        evicted: dict[str, str] = {}  # ref → uid
        refusal = ""
        while pending:
            for ref, pod in list(pending.items()):
                meta = pod["metadata"]
                response = self.client.post(
                    f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/eviction",
                    json={
                        "apiVersion": "policy/v1",
                        "kind": "Eviction",
                        "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                    },
                )
                if response.status_code == 429:
                    refusal = _message(response)
                    continue
                if response.status_code != 404:
                    self._check(response, f"evicting pod {ref}")
                    evicted[ref] = meta["uid"]
                    report.evicted.append(ref)
                    if on_evict is not None:
                        on_evict(ref)
                del pending[ref]
            if not pending:
                break
            if clock() >= deadline:
                raise StackwrightError(
                    f"draining node {name} timed out after {timeout:g}s: cannot evict "
                    f"{', '.join(sorted(pending))}: {refusal}; the node stays cordoned"
                )
            sleep(RETRY_EVERY)
        for ref, uid in evicted.items():
            namespace, pod_name = ref.split("/", 1)
            while True:
                response = self.client.get(f"/api/v1/namespaces/{namespace}/pods/{pod_name}")
                if response.status_code == 404 or response.json()["metadata"].get("uid") != uid:
                    break
                if clock() >= deadline:
                    raise StackwrightError(
                        f"draining node {name} timed out after {timeout:g}s: pod {ref} is still terminating"
                    )
                sleep(0.05)
        return report


def _daemon_or_mirror(pod: dict[str, Any]) -> bool:
    meta = pod["metadata"]
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return True
    return any(
        o.get("kind") == "DaemonSet" and o.get("controller")
        for o in meta.get("ownerReferences") or []
    )


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text
    causes = (body.get("details") or {}).get("causes") or []
    return str(causes[0].get("message") if causes else body.get("message", ""))
