"""An object another project's stack manages, that stack holding secrets: creating over it is
refused naming that stack, without this stack trying to open that stack's secrets."""

from __future__ import annotations

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
