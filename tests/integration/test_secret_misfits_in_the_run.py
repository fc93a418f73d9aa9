"""A YAML program's function whose arguments become secret only in the run (a Secret's
data, read back from the cluster) and do not fit it: the failure names the function's line
without what the secret holds, through the CLI against a real cluster — masking the
remembered value does not cover a short one (an index) or a byte of one."""

from __future__ import annotations

import base64
import textwrap
from typing import Any

import pytest
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_crd_yaml_program import HEAD
from test_secrets_lifecycle import assert_nowhere
from test_secrets_lifecycle import passphrase as passphrase  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

PLAIN = "hunter2-notjson"
BYTES = base64.b64encode(b"\xe9" + PLAIN.encode()).decode()

PROGRAM = (
    HEAD
    + """  sec:
    type: kubernetes:core/v1:Secret
    properties:
      metadata: {{name: sec, namespace: "${{ns.metadata.name}}"}}
      stringData: {{pw: {plain}, idx: "7", bytes: "{bytes}"}}
outputs:
  text: {{fn::select: [0, "${{sec.stringData.pw}}"]}}
  index: {{fn::select: ["${{sec.stringData.idx}}", [a, b]]}}
  decoded: {{fn::fromBase64: "${{sec.stringData.bytes}}"}}
"""
)

#: A resource's property of the same, added in the second run.
CONFIG_MAP = """
  cm:
    type: kubernetes:core/v1:ConfigMap
    properties:
      metadata: {name: cm, namespace: "${ns.metadata.name}"}
      data:
        decoded: {fn::fromBase64: "${sec.stringData.bytes}"}
"""


def test_a_function_of_a_secret_read_in_the_run_does_not_show_it(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    p = new_project(process=True)
    text = textwrap.dedent(PROGRAM.format(name=p.name, ns=p.ns, plain=PLAIN, bytes=BYTES))
    program = p.root / "Stackwright.yaml"
    results = []
    for source, lines in (
        (text, (14, 15, 16)),
        (text.replace("outputs:", CONFIG_MAP[1:] + "outputs:"), (18, 20, 21, 22)),
    ):
        program.write_text(source.lstrip())
        results += [p.sw("up", "--yes", rc=1), p.up(rc=1)]
        failures = results[-1].summary["failures"]
        assert sorted(f.split(": ", 1)[1].split(": fn::")[0] for f in failures) == [
            f"{program.name}:{line}" for line in lines
        ], failures
        for failure in failures:
            assert "what they hold is not shown" in failure, failure
    for result in results:
        said = result.out + result.err
        assert "index 7" not in said and "0xe9" not in said, said
    program.write_text(text.replace(PLAIN, "as-written"))  # it holds it: not what is checked
    assert_nowhere(p, cluster, PLAIN, *results)
