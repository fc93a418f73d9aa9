"""`destroy` of a stack whose Namespace someone else already deleted (`kubectl delete ns`)
and that is still Terminating: the destroy's DELETE of it is answered 200 with the
Namespace as it is (as kube-apiserver has answered since Kubernetes 1.17), and the destroy
waits for it to go, as after its own first DELETE, then ends with nothing left and an empty
state. A finalizer of the test's own keeps the Namespace Terminating for ~1 s (the local
cluster empties one in ~0.1 s).
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from crash_run import LiveCluster, Project, check_agrees, live_objects

pytestmark = pytest.mark.integration

HOLD = "example.com/hold"
NAME = "gone-ns"

PROGRAM = f"""
import stackwright.kubernetes as k8s

ns = k8s.core.v1.Namespace("ns", metadata={{"name": "{NAME}"}})
k8s.core.v1.ConfigMap("settings", metadata={{"namespace": ns.metadata["name"]}}, data={{"k": "v"}})
"""


def test_destroy_waits_for_a_namespace_someone_else_deleted(
    tmp_path_factory: pytest.TempPathFactory, cluster: LiveCluster
) -> None:
    project = Project(
        tmp_path_factory.mktemp(NAME), cluster, name=NAME, stack="dev", program=PROGRAM
    )
    project.sw("stack", "init", "dev")
    assert project.up(0).returncode == 0
    hold = json.dumps({"metadata": {"finalizers": [HOLD]}})
    cluster.kubectl("patch", "namespace", NAME, "--type=merge", "-p", hold)
    for _ in range(2):  # kubectl, too, deletes a Terminating Namespace again without error
        deleted = cluster.kubectl("delete", "namespace", NAME, "--wait=false")
        assert f'namespace "{NAME}" deleted' in deleted.stdout
    phase = cluster.kubectl("get", "namespace", NAME, "-o", "jsonpath={.status.phase}").stdout
    assert phase == "Terminating"

    def release() -> None:
        time.sleep(1.0)
        cluster.kubectl(
            "patch", "namespace", NAME, "--type=merge", "-p", '{"metadata":{"finalizers":null}}'
        )

    releaser = threading.Thread(target=release)
    releaser.start()
    run = project.destroy()
    releaser.join()
    assert run.returncode == 0, run.failure()
    assert run.elapsed >= 1.0, "the destroy ended before the Namespace was gone"
    assert cluster.kubectl("get", "namespace", NAME, check=False).returncode != 0
    left = live_objects(cluster, f"urn:sw:{project.stack}::{project.name}::")
    assert left == [], f"objects of the stack left after destroy: {left}"
    recorded, _ = check_agrees(project, "destroy of a Namespace someone else deleted")
    assert recorded == {}, f"the state still records {sorted(recorded)}"
