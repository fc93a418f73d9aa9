"""Fields under ignore_changes that another manager changed, in updates made of same steps.

A rename by an alias (applied again for its new marks) and drift taken back after a
refresh are updates too: an ignored field is sent as the object has it, as in every other
update, not as recorded (which took it back from its manager, or conflicted with it).
Found by `test_lifecycle_model.py` (seed 62).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from crash_run import LiveCluster, Project

pytestmark = pytest.mark.integration

STACK = "dev"

IGNORING = """
import os
import stackwright as sw
import stackwright.kubernetes as k8s

k8s.core.v1.Namespace("ns", metadata={{"name": "ignoring"}})
k8s.core.v1.ConfigMap(
    os.environ.get("LOGICAL", "cm"),
    metadata={{"name": "c", "namespace": "ignoring"}},
    data={{"k1": "a", "k2": "b"}},
    opts=sw.ResourceOptions(ignore_changes=["data.k2"], aliases=[sw.Alias(name="cm")]),
)
"""


def test_an_update_made_of_a_same_step_sends_ignored_fields_as_the_object_has_them(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    """A rename by an alias (applied again for its marks) and drift taken back are updates
    too: a field under ignore_changes another manager changed is sent as the object has it,
    not as recorded, which conflicted with that manager (seed 62)."""
    project = Project(tmp_path / "p", cluster, name="ignoring", stack=STACK, program="")
    (project.folder / "__main__.py").write_text(IGNORING.format())
    project.sw("stack", "init", STACK)
    project.sw("up", "--yes")
    path = "/api/v1/namespaces/ignoring/configmaps/c"

    def drift(data: dict[str, str]) -> None:
        with cluster.http() as http:
            response = http.patch(
                path,
                params={"fieldManager": "drifter"},
                content=json.dumps({"data": data}),
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert response.status_code == 200, response.text

    def live_data() -> Any:
        with cluster.http() as http:
            return http.get(path).json()["data"]

    drift({"k2": "theirs", "k1": "drifted"})
    project.sw("refresh", "--yes")
    project.sw("up", "--yes")  # k1 taken back, k2 left as it is
    assert live_data() == {"k1": "a", "k2": "theirs"}
    drift({"k2": "theirs again"})
    project.env["LOGICAL"] = "renamed"
    project.sw("up", "--yes")
    assert live_data() == {"k1": "a", "k2": "theirs again"}
    project.sw("preview", "--expect-no-changes")
    project.sw("destroy", "--yes")
