"""`--json` for CI: a preview whose Deployment's inputs the cluster refuses (a name
Kubernetes does not allow, a 422 to its dry run; a value of the wrong type is refused from
the schema before the run) says where to fix it in the failing step's own event, as the
summary does, and the summary says the exit code (2, bad input) the process ends with."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import PRELUDE_LINES
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

NAMESPACE = 'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'
DEPLOYMENT = (
    'k8s.apps.v1.Deployment("web", metadata={"name": "Not_A_Name", "namespace": NS},\n'
    '                       spec=app_spec("web"))\n'
)


def test_a_refused_deployment_fails_its_step_at_its_program_line(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(NAMESPACE)
    p.up()
    p.program(NAMESPACE + DEPLOYMENT)
    done = p.sw("preview", "--json", rc=2, process=True)  # the process's own exit code
    (failed,) = [e for e in done.of("step-done") if not e["ok"]]
    assert failed["name"] == "web"
    where = f"__main__.py:{PRELUDE_LINES + 2}: "
    assert failed["error"].startswith(where), failed["error"]
    assert "Not_A_Name" in failed["error"], failed["error"]
    assert done.summary["failures"] == [failed["error"]]
    assert (done.summary["ok"], done.summary["exitCode"]) == (False, 2)
    assert done.events[-1] == done.summary  # the last line: no error event after it
