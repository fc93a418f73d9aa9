"""`preview --diff` of a Deployment whose env and ports gain and lose entries, one of them
a secret: the real CLI, a real cluster. Each entry is told by its key, the secret masked
alone, no plain neighbour masked and the secret printed nowhere."""

from __future__ import annotations

from typing import Any

import pytest
from test_cli_lifecycle import LiveCluster, new_project
from test_secrets_lifecycle import PLAIN, assert_nowhere, passphrase

pytestmark = pytest.mark.integration
__all__ = ["new_project", "passphrase"]  # fixtures, used by name

PROGRAM = """
token = sw.Config().require_secret("token")
k8s.core.v1.Namespace("ns", metadata={{"name": NS}})
spec = app_spec("web")
spec["template"]["spec"]["containers"][0]["env"] = {env}
spec["template"]["spec"]["containers"][0]["ports"] = {ports}
k8s.apps.v1.Deployment("web", metadata={{"name": "web", "namespace": NS}}, spec=spec)
"""


def test_env_and_ports_that_gain_and_lose_entries(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = new_project()
    p.sw("config", "set", "--secret", "token", PLAIN)
    p.program(
        PROGRAM.format(
            env='[{"name": "A", "value": "a"}, {"name": "TOKEN", "value": token}, '
            '{"name": "B", "value": "b"}]',
            ports='[{"containerPort": 80}]',
        )
    )
    p.up()
    # A removed before the secret entry (which moves from env[1] to env[0]), C added.
    p.program(
        PROGRAM.format(
            env='[{"name": "TOKEN", "value": token}, {"name": "B", "value": "b2"}, '
            '{"name": "C", "value": "c"}]',
            ports='[{"containerPort": 80}, {"containerPort": 9090, "name": "metrics"}]',
        )
    )
    shown = p.sw("preview", "--diff")
    container = "spec.template.spec.containers[0]"
    assert [line for line in shown.out.splitlines() if container in line] == [
        f'    - {container}.env[name=A]: {{"name":"A","value":"a"}}',
        f'    ~ {container}.env[name=B].value: "b" → "b2"',
        f'    + {container}.env[name=C]: {{"name":"C","value":"c"}}',
        f'    + {container}.ports[containerPort=9090]: {{"containerPort":9090,"name":"metrics"}}',
    ]
    applied = p.sw("up", "--yes", "--diff")
    assert f'    ~ {container}.env[name=B].value: "b" → "b2"' in applied.out
    assert_nowhere(p, cluster, PLAIN, shown, applied)
