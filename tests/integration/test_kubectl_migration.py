"""Adopting an app deployed with `kubectl apply` and moving it between ways of declaring it:
what the preview says must be what the up does, with nothing that is not a change.

A user's tour, end to end through the CLI against the local cluster: objects made by
`kubectl apply` (field manager `kubectl-client-side-apply`) adopted with `import_`, a
field another manager owns taken over with `--force-conflicts`, and manifests moved from
a ConfigGroup to a Helm chart without deleting an object.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

CONFIG = {"LOG_LEVEL": "info", "FEATURE_X": "true"}


def kubectl_apply(cluster: LiveCluster, ns: str) -> None:
    """A Namespace, a ConfigMap and a Service, as `kubectl apply -f app.yaml` makes them."""
    manifests = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "app-config", "namespace": ns},
            "data": CONFIG,
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "app", "namespace": ns},
            "spec": {"ports": [{"port": 80, "targetPort": 80}]},  # no selector: ready at once
        },
    ]
    for manifest in manifests:
        cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))


ADOPT = """
k8s.core.v1.ConfigMap("app-config", metadata={{"name": "app-config", "namespace": NS}},
                      data={data!r}, opts=sw.ResourceOptions(import_=f"{{NS}}/app-config"))
k8s.core.v1.Service("app", metadata={{"name": "app", "namespace": NS}},
                    spec={{"ports": [{{"port": 80, "targetPort": {target}}}]}},
                    opts=sw.ResourceOptions(import_=f"{{NS}}/app"))
"""


def test_an_import_shows_only_what_it_changes_in_the_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Pulumi shows an import whose inputs match the object with no diff: declared as it
    is, nothing is listed; one field that differs is listed alone, from its live value."""
    p = new_project()
    kubectl_apply(cluster, p.ns)
    p.program(ADOPT.format(data=CONFIG, target=80))
    preview = p.preview("--diff")
    imports = {e["name"]: e.get("changes") for e in preview.of("step-started")}
    assert imports == {"app-config": [], "app": []}, "nothing of the objects changes"
    assert preview.summary["counts"] == {"import": 2}

    p.program(ADOPT.format(data={**CONFIG, "LOG_LEVEL": "debug"}, target=8080))
    changes = {e["name"]: e.get("changes") for e in p.preview(rc=1).of("step-started")}
    assert changes == {
        "app-config": [{"path": "data.LOG_LEVEL", "kind": "update", "old": "info", "new": "debug"}],
        "app": [{"path": "spec.ports[0].targetPort", "kind": "update", "old": 80, "new": 8080}],
    }
    text = p.sw("preview", "--diff", rc=1).out
    assert '~ data.LOG_LEVEL: "info" → "debug"' in text
    assert "+ apiVersion" not in text and "+ metadata" not in text


def test_force_conflicts_reaches_the_preview_that_up_runs_first(
    new_project: Any,
    cluster: LiveCluster,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A conflict with `kubectl`'s fields says to re-run with --force-conflicts: `preview`
    takes it, and `up --force-conflicts` in a terminal previews with it, rather than
    failing on the very conflict it was asked to take over."""
    from stackwright.cli.main import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    p = new_project()
    kubectl_apply(cluster, p.ns)
    p.program(ADOPT.format(data={**CONFIG, "LOG_LEVEL": "debug"}, target=80))
    refused = p.preview(rc=1)
    assert "re-run with --force-conflicts" in refused.summary["failures"][0]
    forced = p.preview("--force-conflicts")
    assert forced.summary["ok"] and forced.summary["counts"] == {"import": 2}

    monkeypatch.chdir(p.root)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    capsys.readouterr()
    main(["up", "--force-conflicts"])
    assert "imported  app-config" in capsys.readouterr().out
    cm = live(cluster, "configmap", "app-config", p.ns)
    assert cm["data"]["LOG_LEVEL"] == "debug"
    assert cm["metadata"]["annotations"]["stackwright.io/urn"].endswith("::app-config")


CHART = {
    "Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    "values.yaml": "logLevel: info\n",
    "templates/config.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n"
        "data:\n  LOG_LEVEL: {{ .Values.logLevel | quote }}\n"
    ),
}


def test_a_preview_says_which_deletes_keep_their_object(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Moving manifests from a ConfigGroup to a Chart gives their objects new URNs: the
    old records are deleted but the objects kept, as the new resources hold them. `up`
    says so on each delete; its preview must too, not only `- delete Deployment …`."""
    p = new_project()
    for path, text in CHART.items():
        (p.root / "charts" / "app" / path).parent.mkdir(parents=True, exist_ok=True)
        (p.root / "charts" / "app" / path).write_text(text)
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.yaml.ConfigGroup("app", objs=[{"apiVersion": "v1", "kind": "ConfigMap",
                                           "metadata": {"name": "app-config", "namespace": NS},
                                           "data": {"LOG_LEVEL": "info"}}])
        """
    )
    p.up()
    uid = live(cluster, "configmap", "app-config", p.ns)["metadata"]["uid"]
    p.program(
        """
        ns = k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.helm.Chart("app", chart="charts/app", namespace=NS)
        """
    )
    kept = (
        f"kept {p.ns}/app-config: kubernetes:core/v1:ConfigMap ConfigMap:{p.ns}/app-config "
        "holds that object now; only the old record is removed"
    )

    def notes(result: Any) -> list[str]:
        return [d["message"] for d in result.of("diagnostic") if d["severity"] == "info"]

    assert kept in notes(p.preview())
    assert kept in notes(p.up())
    assert live(cluster, "configmap", "app-config", p.ns)["metadata"]["uid"] == uid


def test_an_object_another_stack_imported_is_released_by_the_command_the_refusal_names(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`stackwright import` protects what it adopts; another stack's import of the object
    is refused, naming how to release it. That command, run as written, must work: the
    stack named and `--force` for the protected record (a bare `state delete` refuses)."""
    p = new_project()
    kubectl_apply(cluster, p.ns)
    (p.root / "Stackwright.prod.yaml").write_text((p.root / "Stackwright.dev.yaml").read_text())
    p.sw("stack", "init", "prod")
    cm = "kubernetes:core/v1:ConfigMap"
    p.sw("import", "--yes", cm, "app-config", f"{p.ns}/app-config")  # prod's, protected
    p.sw("stack", "select", "dev")
    refused = p.sw("import", "--yes", cm, "app-config", f"{p.ns}/app-config", rc=2)
    message = refused.err.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    command = message.split("(`", 1)[1].split("`", 1)[0]
    prod_urn = f"urn:sw:prod::{p.name}::{cm}::app-config"
    assert command == f"stackwright state delete {prod_urn} --stack prod --force"
    p.sw(*command.split()[1:], "--yes")
    p.sw("import", "--yes", cm, "app-config", f"{p.ns}/app-config")
    assert p.resources()["app-config"]["protect"] is True


def test_an_import_not_done_is_reported_as_an_import(
    new_project: Any, cluster: LiveCluster
) -> None:
    """An import_ whose dependency failed is skipped as the import it is, not as a create
    (which, to a reader of the events, would make a second object)."""
    p = new_project()
    kubectl_apply(cluster, p.ns)
    p.program(
        """
        ghost = k8s.core.v1.ConfigMap("ghost", metadata={"name": "ghost", "namespace": NS},
                                      opts=sw.ResourceOptions(import_=f"{NS}/ghost"))
        k8s.core.v1.ConfigMap("app-config", metadata={"name": "app-config", "namespace": NS},
                              data=DATA, opts=sw.ResourceOptions(import_=f"{NS}/app-config",
                                                                 depends_on=[ghost]))
        """.replace("DATA", repr(CONFIG))
    )
    for result in (p.preview(rc=1), p.up(rc=1)):
        assert [(e["name"], e["op"]) for e in result.of("step-skipped")] == [
            ("app-config", "import")
        ]


def test_importing_a_cluster_scoped_object_under_a_namespace_is_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`x/NAME` names no Namespace: the server ignores the namespace of a cluster-scoped
    read, so it used to be adopted under an ID that is no object's. Bad input: one line,
    exit 2, nothing recorded."""
    p = new_project()
    kubectl_apply(cluster, p.ns)
    before = p.history()
    refused = p.sw("import", "--yes", "kubernetes:core/v1:Namespace", "ns", f"x/{p.ns}", rc=2)
    assert refused.err == (
        f"error: cannot import x/{p.ns}: Namespace is cluster-scoped, so its ID is its name "
        f"alone: `{p.ns}`\n"
    )
    assert p.resources() == {} and p.history() == before
    assert "labels" not in live(cluster, "namespace", p.ns)["metadata"] or (
        "app.kubernetes.io/managed-by" not in live(cluster, "namespace", p.ns)["metadata"]["labels"]
    )
    p.sw("import", "--yes", "kubernetes:core/v1:Namespace", "ns", p.ns)
    assert p.resources()["ns"]["id"] == p.ns
