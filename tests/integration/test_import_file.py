"""`stackwright import --file`: an app made with `kubectl apply` adopted from one file (its
manifests, what `kubectl get -o yaml` writes, or Pulumi's import file) in one operation,
printed as one program that, pasted as the program, previews with no change.

Through the CLI against the module's local cluster (tests/conftest.py), as a user migrating
from kubectl or Helm would run it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_cli_lifecycle import STACK, live, one_line
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def app_manifests(ns: str) -> list[dict[str, Any]]:
    """A Namespace, a ConfigMap, a Secret, a Deployment and a Service, as a user's app.yaml
    has them; the Namespace last, where a file often lists it."""
    labels = {"app": "web"}
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web-config", "namespace": ns},
            "data": {"LOG_LEVEL": "info"},
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "web-db", "namespace": ns},
            "stringData": {"password": "s3cret-pw"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 80}]},
        },
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
    ]


def kubectl_apply(cluster: LiveCluster, manifests: list[dict[str, Any]]) -> None:
    """Each object as `kubectl apply -f app.yaml` makes it (the Namespace first, as kubectl
    would need it to be)."""
    for manifest in sorted(manifests, key=lambda m: m["kind"] != "Namespace"):
        cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))


def unmarked(cluster: LiveCluster, kind: str, name: str, ns: str) -> bool:
    labels = live(cluster, kind, name, ns)["metadata"].get("labels") or {}
    return "app.kubernetes.io/managed-by" not in labels


def test_an_app_from_its_manifests_is_one_import_and_one_program(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "import-file")
    p = new_project()
    manifests = app_manifests(p.ns)
    kubectl_apply(cluster, manifests)
    (p.root / "app.yaml").write_text(yaml.safe_dump_all(manifests))
    operations = len(p.history())

    done = p.sw("import", "--file", "app.yaml", "--yes")
    assert (
        done.err
        == f"Imported 5 objects into stack {STACK}; the program that declares them follows.\n"
    )
    program = done.out
    # One operation, of kind import, that adopted all five.
    history = p.history()
    assert len(history) == operations + 1
    assert (history[0]["kind"], history[0]["counts"]) == ("import", {"import": 5})
    # Names: the object's own, with its kind where two share it (Deployment and Service web).
    assert set(p.resources()) == {p.ns, "web-config", "web-db", "web-deployment", "web-service"}
    assert all(r["protect"] for r in p.resources().values())

    # One program: the imports once, one note and one `cfg` for the Secret, Namespace first.
    assert program.startswith("import stackwright as sw\nimport stackwright.kubernetes as k8s\n")
    assert program.count("import stackwright") == 2 and program.count("sw.Config()") == 1
    assert "s3cret-pw" not in program
    assert "#   stackwright config set --secret web-db-password -- <plain value>" in program
    declared = [line.split("(")[0] for line in program.splitlines() if line.startswith("k8s.")]
    assert declared == [
        "k8s.core.v1.Namespace",
        "k8s.core.v1.ConfigMap",
        "k8s.core.v1.Secret",
        "k8s.apps.v1.Deployment",
        "k8s.core.v1.Service",
    ]

    # Pasted as the program, with the secret set as its note says: no change.
    p.sw("config", "set", "--secret", "web-db-password", "--", "s3cret-pw")
    (p.root / "__main__.py").write_text(program)
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 5}


def test_a_pulumi_import_file_written_to_out(new_project: Any, cluster: LiveCluster) -> None:
    """Pulumi's import file, its own type tokens and the keys that mean nothing here
    (`nameTable`, `version`); `--out` writes the program, which previews with no change."""
    p = new_project()
    manifests = app_manifests(p.ns)
    kubectl_apply(cluster, manifests)
    imports = {
        "nameTable": {},
        "resources": [
            {"type": "kubernetes:apps/v1:Deployment", "name": "web", "id": f"{p.ns}/web"},
            {
                "type": "kubernetes:core/v1:ConfigMap",
                "name": "cfg",
                "logicalName": "settings",
                "id": f"{p.ns}/web-config",
                "version": "4.18.0",
            },
            {"type": "kubernetes:core/v1:Namespace", "name": "ns", "id": p.ns},
        ],
    }
    (p.root / "resources.json").write_text(json.dumps(imports, indent="\t"))
    done = p.sw("import", "-f", "resources.json", "--out", "main.py", "--yes", "--no-protect")
    assert done.out == (
        f"Imported 3 objects into stack {STACK}; the program that declares them is in main.py.\n"
    )
    assert set(p.resources()) == {"web", "settings", "ns"}
    assert not any(r["protect"] for r in p.resources().values())
    program = (p.root / "main.py").read_text()
    assert "protect" not in program and "sw.Config" not in program
    assert program.index("k8s.core.v1.Namespace(") < program.index("k8s.apps.v1.Deployment(")
    (p.root / "__main__.py").write_text(program)
    assert p.preview().changed() == {}


def test_a_yaml_project_gets_one_resources_block(new_project: Any, cluster: LiveCluster) -> None:
    """What `kubectl get -o yaml` writes (a `kind: List`) imported into a YAML project: one
    `config:` for the Secret's key, one `resources:`; added to Stackwright.yaml, no change."""
    p = new_project()
    kubectl_apply(cluster, app_manifests(p.ns))
    listed = cluster.kubectl(
        "get", "configmap/web-config", "secret/web-db", "-n", p.ns, "-o", "yaml"
    )
    (p.root / "got.yaml").write_text(listed.stdout)
    project = f"name: {p.name}\nruntime: yaml\n"
    (p.root / "Stackwright.yaml").write_text(project)

    # `resources:` is keyed by name: two objects under one name (a Python program may declare
    # a Deployment and a Service both `web`) would be one entry; refused, nothing adopted.
    web = [
        {"type": f"kubernetes:{kind}", "name": "web", "id": f"{p.ns}/web"}
        for kind in ("apps/v1:Deployment", "core/v1:Service")
    ]
    (p.root / "resources.json").write_text(json.dumps({"resources": web}))
    refused = p.sw("import", "--file", "resources.json", "--yes", rc=2)
    assert one_line(refused) == (
        "error: resources.json entry 2: name 'web' is resources.json entry 1's too: give one "
        "another name (nothing was imported)"
    )
    assert p.resources() == {}

    program = p.sw("import", "--file", "got.yaml", "--yes").out
    assert program.startswith("# Secret values are not printed")
    body = yaml.safe_load(program)
    assert list(body) == ["config", "resources"]
    assert list(body["resources"]) == ["web-config", "web-db"]
    assert body["config"] == {"web-db-password": {"type": "string", "secret": True}}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("STACKWRIGHT_CONFIG_PASSPHRASE", "import-file")
        p.sw("config", "set", "--secret", "web-db-password", "--", "s3cret-pw")
        (p.root / "Stackwright.yaml").write_text(project + program)
        assert p.preview().changed() == {}


def test_a_file_with_bad_entries_adopts_nothing(new_project: Any, cluster: LiveCluster) -> None:
    """Every entry is checked before anything changes: one line names each bad one (its
    document), exit 2, the state, the history and the objects as they were."""
    p = new_project()
    manifests = app_manifests(p.ns)
    kubectl_apply(cluster, manifests)
    ghost = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ghost", "namespace": p.ns},
    }
    (p.root / "app.yaml").write_text(yaml.safe_dump_all([*manifests, ghost, manifests[0]]))
    before = (p.state(), p.history())

    refused = p.sw("import", "--file", "app.yaml", "--yes", rc=2)
    assert one_line(refused) == (
        "error: app.yaml document 7: ConfigMap "
        f"{p.ns}/web-config is app.yaml document 1's too (nothing was imported)"
    )
    (p.root / "app.yaml").write_text(yaml.safe_dump_all([*manifests, ghost]))
    refused = p.sw("import", "--file", "app.yaml", "--yes", rc=2)
    assert one_line(refused) == (
        f"error: app.yaml document 6: cannot import {p.ns}/ghost: no ConfigMap of that name "
        "exists in the cluster (nothing was imported)"
    )
    assert (p.state(), p.history()) == before
    assert unmarked(cluster, "configmap", "web-config", p.ns)
    assert unmarked(cluster, "deployment", "web", p.ns)

    # A URN the stack has, and a type that is no Kubernetes type token: each named.
    p.sw("import", "--yes", "kubernetes:core/v1:ConfigMap", "settings", f"{p.ns}/web-config")
    before = (p.state(), p.history())
    imports = {
        "resources": [
            {"type": "kubernetes:core/v1:Service", "name": "web", "id": f"{p.ns}/web"},
            {"type": "kubernetes:core/v1:ConfigMap", "name": "settings", "id": f"{p.ns}/other"},
            {"type": "aws:s3/bucket:Bucket", "name": "b", "id": "b"},
        ]
    }
    (p.root / "resources.json").write_text(json.dumps(imports))
    refused = p.sw("import", "--file", "resources.json", "--yes", rc=2)
    message = one_line(refused)
    assert message.startswith("error: resources.json entry 3: type 'aws:s3/bucket:Bucket'")
    settings = p.urn("kubernetes:core/v1:ConfigMap", "settings")
    del imports["resources"][2]
    (p.root / "resources.json").write_text(json.dumps(imports))
    message = one_line(p.sw("import", "--file", "resources.json", "--yes", rc=2))
    assert message == (
        f"error: resources.json entry 2: {settings} is already in stack {STACK}: pick another "
        "name, or remove it first (nothing was imported)"
    )
    assert (p.state(), p.history()) == before
    assert unmarked(cluster, "service", "web", p.ns)

    # Pulumi's keys that would adopt something else than asked are refused, in one line.
    imports["resources"][0]["provider"] = "urn:pulumi:dev::app::pulumi:providers:kubernetes::k"
    (p.root / "resources.json").write_text(json.dumps(imports))
    message = one_line(p.sw("import", "--file", "resources.json", "--yes", rc=2))
    assert message.startswith("error: resources.json entry 1: 'provider' is not supported")
    # TYPE NAME ID and --file together: refused before anything is read.
    both = p.sw("import", "kubernetes:core/v1:Service", "web", f"{p.ns}/web", "--file", "x", rc=2)
    assert one_line(both) == (
        "error: import: give TYPE NAME ID or --file FILE, not both (a file names its objects)"
    )
    assert (p.state(), p.history()) == before


def test_two_secrets_reading_one_configuration_key_are_refused(
    new_project: Any, cluster: LiveCluster
) -> None:
    """The printed program reads each secret value from `<name>-<item>`: Secret `db`'s item
    `a-b` and Secret `db-a`'s item `b` would read one key, so one of them would get the
    other's value. Refused before anything is adopted."""
    p = new_project()
    secrets = [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": p.ns},
         "stringData": {item: f"{name}-value"}}
        for name, item in (("one", "a-b"), ("two", "b"))
    ]  # fmt: skip
    kubectl_apply(
        cluster, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": p.ns}}, *secrets]
    )
    imports = {
        "resources": [
            {"type": "kubernetes:core/v1:Secret", "name": "db", "id": f"{p.ns}/one"},
            {"type": "kubernetes:core/v1:Secret", "name": "db-a", "id": f"{p.ns}/two"},
        ]
    }
    (p.root / "resources.json").write_text(json.dumps(imports))
    before = (p.state(), p.history())
    message = one_line(p.sw("import", "--file", "resources.json", "--yes", rc=2))
    assert message == (
        "error: resources.json entry 2: its secret value would be read from configuration key "
        "'db-a-b', as one of resources.json entry 1's is: import it under another name "
        "(nothing was imported)"
    )
    assert (p.state(), p.history()) == before
    assert unmarked(cluster, "secret", "one", p.ns)


def test_json_events_of_an_import_file(new_project: Any, cluster: LiveCluster) -> None:
    p = new_project()
    kubectl_apply(cluster, app_manifests(p.ns))
    (p.root / "app.yaml").write_text(
        textwrap.dedent(
            f"""\
            apiVersion: v1
            kind: List
            items:
              - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: web-config, namespace: {p.ns}}}}}
              - {{apiVersion: v1, kind: Service, metadata: {{name: web, namespace: {p.ns}}}}}
            """
        )
    )
    done = p.sw("import", "--file", "app.yaml", "--yes", "--json")
    configmap = p.urn("kubernetes:core/v1:ConfigMap", "web-config")
    service = p.urn("kubernetes:core/v1:Service", "web")
    *imported, program = done.events
    assert imported == [
        {"event": "imported", "urn": configmap, "id": f"{p.ns}/web-config",
         "source": "app.yaml document 1 item 1"},
        {"event": "imported", "urn": service, "id": f"{p.ns}/web",
         "source": "app.yaml document 1 item 2"},
    ]  # fmt: skip
    assert program["event"] == "program" and program["file"] is None
    assert program["code"].count("k8s.core.v1.") == 2
    # Without --yes, --json is refused (as the single import is) before the cluster is read.
    refused = p.sw("import", "--file", "app.yaml", "--json", rc=2)
    assert json.loads(refused.out.splitlines()[-1]) == {
        "event": "error",
        "message": "`stackwright import` asks for confirmation: pass --yes to run it without "
        "a terminal",
        "exitCode": 2,
    }


def test_an_import_stopped_midway_is_settled_by_the_next_run(
    new_project: Any, cluster: LiveCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each object is journaled before it is marked: when the second's apply lands but its
    reply is lost, the first is recorded, the second pending, and a refresh records it."""
    from stackwright.automation.import_file import read_import_file
    from stackwright.automation.stack import Workspace
    from stackwright.providers.kubernetes.provider import KubernetesProvider

    p = new_project()
    manifests = app_manifests(p.ns)
    kubectl_apply(cluster, manifests)
    (p.root / "app.yaml").write_text(yaml.safe_dump_all(manifests[:1] + manifests[3:4]))
    real = KubernetesProvider.apply

    async def lands_then_resets(self: Any, desired: Any, **options: Any) -> Any:
        applied = await real(self, desired, **options)
        if desired["kind"] != "Service":
            return applied
        raise ConnectionResetError("connection reset by peer")

    monkeypatch.setattr(KubernetesProvider, "apply", lands_then_resets)
    with pytest.raises(ConnectionResetError):
        Workspace.open(p.root, STACK).import_objects(read_import_file(Path(p.root / "app.yaml")))
    monkeypatch.undo()
    service = p.urn("kubernetes:core/v1:Service", "web")
    assert list(p.resources()) == ["web-config"]
    assert [(x["op"], x["resource"]["urn"]) for x in p.state()["pending"]] == [("import", service)]
    assert p.history()[0]["kind"] == "import"

    p.sw("refresh", "--yes", "--json")
    assert p.state()["pending"] == []
    assert set(p.resources()) == {"web-config", "web"}


def test_one_object_and_unknown_kinds_are_said_as_they_are(
    new_project: Any, cluster: LiveCluster
) -> None:
    """One object is "it", not "them"; a kind the cluster does not serve gets a kubectl
    command that lists its group's kinds: the core group's by its empty name, spelt so a
    shell passes it (`--api-group=''`), a named group's by that name."""
    p = new_project()
    kubectl_apply(cluster, app_manifests(p.ns))
    service = {"type": "kubernetes:core/v1:Service", "name": "web", "id": f"{p.ns}/web"}
    (p.root / "one.json").write_text(json.dumps({"resources": [service]}))
    done = p.sw("import", "--file", "one.json", "--out", "main.py", "--yes")
    assert done.out == (
        f"Imported 1 object into stack {STACK}; the program that declares it is in main.py.\n"
    )
    p.sw("state", "delete", "--yes", "--force", p.urn(service["type"], "web"))
    done = p.sw("import", "--file", "one.json", "--yes")
    assert done.err == (
        f"Imported 1 object into stack {STACK}; the program that declares it follows.\n"
    )

    server = cluster.server
    for type_, says in (
        (
            "kubernetes:core/v1:ConfigMapp",
            f"ConfigMapp (v1) is not served by the cluster at {server}: did you mean ConfigMap, "
            "which it serves? No CustomResourceDefinition adds a kind to the core group; "
            "`kubectl api-resources --api-group=''` lists the kinds it has",
        ),
        (
            "kubernetes:apps/v1:Deploymnt",
            f"Deploymnt (apps/v1) is not served by the cluster at {server}: did you mean "
            "Deployment, which it serves? Otherwise, if it is a custom resource, its "
            "CustomResourceDefinition may be missing or not yet Established; check "
            "`kubectl api-resources --api-group=apps`",
        ),
    ):
        entry = {"type": type_, "name": "x", "id": f"{p.ns}/web-config"}
        (p.root / "bad.json").write_text(json.dumps({"resources": [entry]}))
        message = one_line(p.sw("import", "--file", "bad.json", "--yes", rc=2))
        assert message == (
            f"error: bad.json entry 1: cannot import {p.ns}/web-config: {says} "
            "(nothing was imported)"
        )
        # The command works as printed (a shell passes '' as the empty name).
        group = says.rpartition("--api-group=")[2].split("`")[0].replace("''", "")
        listed = cluster.kubectl("api-resources", f"--api-group={group}").stdout
        meant = says.split("did you mean ")[1].split(",")[0]
        assert f" {meant}\n" in listed
