"""An object another project's stack manages, that stack holding secrets: creating over it is
refused naming that stack, without this stack trying to open that stack's secrets."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stackwright.automation import Workspace

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's, which a module cannot import by name

OWNER = """
import stackwright as sw
import stackwright.kubernetes as k8s

ns = k8s.core.v1.Namespace("shop", metadata={"name": "taken-shop"})
k8s.core.v1.Secret("db", metadata={"namespace": ns.metadata["name"]},
                   string_data={"password": sw.Config().require_secret("password")})
"""

TAKER = """
import stackwright.kubernetes as k8s

k8s.core.v1.Namespace("team", metadata={"name": "taken-shop"})
"""


def _project(root: Path, name: str, program: str, kubeconfig: Path) -> Workspace:
    root.mkdir()
    (root / "Stackwright.yaml").write_text(f"name: {name}\nruntime: python\n")
    (root / "__main__.py").write_text(textwrap.dedent(program))
    ws = Workspace.create_or_select(root, "dev")  # both stacks named dev: each has its own key
    ws.config.set("kubernetes:kubeconfig", str(kubeconfig))
    return ws


def test_an_object_of_another_projects_stack_is_refused_by_name(
    tmp_path: Path, cluster: LiveCluster
) -> None:
    with _project(tmp_path / "owner", "owner", OWNER, cluster.kubeconfig) as owner:
        owner.config.set("password", "hunter22", secret=True)
        assert owner.up(None).ok
    with _project(tmp_path / "taker", "taker", TAKER, cluster.kubeconfig) as taker:
        for run in (taker.preview, taker.up):
            summary = run(None)
            assert not summary.ok
            (failure,) = summary.failures
            assert "stack dev of project owner manages it as " in failure, failure
            assert "urn:sw:dev::owner::kubernetes:core/v1:Namespace::shop" in failure
    namespace = cluster.kubectl("get", "namespace", "taken-shop", "-o", "name").stdout
    assert namespace.strip() == "namespace/taken-shop"


KEEPER = """
import stackwright as sw
import stackwright.kubernetes as k8s

ns = k8s.core.v1.Namespace("ns", metadata={"name": "claimed-twice"})
a = k8s.core.v1.ConfigMap("a", metadata={"name": A_NAME, "namespace": "claimed-twice"},
                          data={"k": "v"}, opts=sw.ResourceOptions(depends_on=[ns]))
"""

#: b names a's object by an Output (the checks before the run cannot see it): its step is refused.
CLAIMER = (
    KEEPER
    + """
b = k8s.core.v1.ConfigMap("b", metadata={"name": a.metadata["name"], "namespace": "claimed-twice"},
                          data={"k": "w"})
"""
)

#: c adopts the object a, still declared (under a new name), manages: its step is refused.
ADOPTER = (
    KEEPER
    + """
c = k8s.core.v1.ConfigMap("c", metadata={"name": "shared", "namespace": "claimed-twice"},
                          opts=sw.ResourceOptions(import_="claimed-twice/shared"))
"""
)


def _line(program: str, start: str) -> int:
    """The line of `program` (as `_project` writes it) that starts with `start`."""
    lines = textwrap.dedent(program).splitlines()
    return 1 + next(i for i, text in enumerate(lines) if text.startswith(start))


def test_a_step_refused_for_the_programs_own_declaration_names_its_line(
    tmp_path: Path, cluster: LiveCluster
) -> None:
    """Refusals found only in a step (an object another resource holds, an import of another
    resource's object) start with the refused resource's FILE:LINE, as the checks before a
    run do, and name the other resource's line beside it."""
    keeper = KEEPER.replace("A_NAME", '"shared"')
    with _project(tmp_path / "lines", "lines", keeper, cluster.kubeconfig) as ws:
        assert ws.up(None).ok
        main = tmp_path / "lines" / "__main__.py"
        a_line = _line(keeper, "a = ")
        cm = "kubernetes:core/v1:ConfigMap"

        claimer = CLAIMER.replace("A_NAME", '"shared"')
        main.write_text(textwrap.dedent(claimer))
        for run in (ws.preview, ws.up):
            summary = run(None)
            assert summary.failures == [
                f"{main}:{_line(claimer, 'b = ')}: {cm} b: ConfigMap claimed-twice/shared is the "
                f"object {cm} a holds ({main}:{a_line}): each would overwrite the other's fields; "
                "give one of them another metadata.name"
            ], summary.failures

        adopter = ADOPTER.replace("A_NAME", '"moved"')
        main.write_text(textwrap.dedent(adopter))
        summary = ws.up(None)
        assert summary.failures[0] == (
            f"{main}:{_line(adopter, 'c = ')}: {cm} c: cannot import claimed-twice/shared: "
            f"{cm} a ({main}:{a_line}), which the program still declares, manages it; drop that "
            "resource from the program to pass the object on (its delete then keeps it), or "
            "import another object"
        ), summary.failures
    shared = cluster.kubectl("get", "configmap", "shared", "-n", "claimed-twice", "-o", "json")
    assert json.loads(shared.stdout)["data"] == {"k": "v"}, "left as a made it"
