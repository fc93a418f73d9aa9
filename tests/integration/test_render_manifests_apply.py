"""Manifests a rendering provider writes (with no cluster reachable while it runs) are what
`kubectl apply` of its folder accepts, on the real local cluster: CRDs first (`0-crd/`,
as one `kubectl apply` cannot map a kind its own run creates), then the rest."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cli_in_process import run_cli

#: The unit tests' program (tests/unit/test_render_manifests.py).
PROGRAM = (Path(__file__).parent.parent / "data" / "render" / "program.py.txt").read_text()


def test_kubectl_applies_the_rendered_folder(cluster: Any, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "Stackwright.yaml").write_text("name: shop\nruntime: python\n")
    (project / "__main__.py").write_text(PROGRAM.replace("REPLICAS", "2").replace("EXTRA", ""))
    env = {
        **os.environ,
        "STACKWRIGHT_HOME": str(tmp_path / "home"),  # not the cluster's: no local cluster
        "KUBECONFIG": str(tmp_path / "no-such-kubeconfig"),
        "STACKWRIGHT_CONFIG_PASSPHRASE": "pw",
    }
    for args in (["stack", "init", "dev"], ["up", "--yes"]):
        done = run_cli(args, cwd=project, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    out = project / "out"

    cluster.kubectl("apply", "-f", str(out / "0-crd"), "--recursive")
    cluster.kubectl(
        "wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s"
    )
    dry = cluster.kubectl("apply", "--dry-run=client", "-f", str(out), "--recursive").stdout
    assert dry.count("(dry run)") == 4, dry  # each file validated against the cluster's schemas
    cluster.kubectl("apply", "-f", str(out / "1-manifest"), "--recursive")
    namespaces = json.loads(cluster.kubectl("get", "ns", "-o", "json").stdout)["items"]
    (ns,) = [n["metadata"]["name"] for n in namespaces if n["metadata"]["name"].startswith("apps-")]
    deployment = json.loads(cluster.kubectl("get", "deploy", "-n", ns, "-o", "json").stdout)
    (web,) = deployment["items"]
    assert web["metadata"]["name"].startswith("web-")
    assert web["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "stackwright"
    widgets = json.loads(cluster.kubectl("get", "widgets", "-n", ns, "-o", "json").stdout)
    assert [w["spec"] for w in widgets["items"]] == [{"size": 3}]
