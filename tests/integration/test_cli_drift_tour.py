"""Drift as an SRE meets it, through the CLI against the local cluster: another field
manager (an HPA, a tool applying with --force-conflicts) and hand edits (kubectl patch)
after an `up`, then `refresh`, `preview --refresh` and `up --refresh`.

A field the program lets others change (`ignore_changes`) or never set is no drift;
one it set that someone changed is, named by its path and the manager that changed it.
"""

from __future__ import annotations

import base64
import json
import textwrap
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

DEPLOYMENTS = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.apps.v1.Deployment("ignored", metadata={"name": "ignored", "namespace": NS},
                       spec=app_spec("ignored", replicas=2),
                       opts=sw.ResourceOptions(ignore_changes=["spec.replicas"]))
k8s.apps.v1.Deployment("declared", metadata={"name": "declared", "namespace": NS},
                       spec=app_spec("declared", replicas=2))
"""


#: A Deployment `web` whose container `main` has env [MODE=a, LEVEL=1].
WITH_ENV = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
spec = app_spec("web")
spec["template"]["spec"]["containers"][0]["env"] = [
    {"name": "MODE", "value": "a"}, {"name": "LEVEL", "value": "1"},
]
k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
"""


def scale_as_an_hpa(cluster: LiveCluster, ns: str, name: str) -> None:
    """What an HPA does: take `spec.replicas` over with its own field manager."""
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\n"
        f"metadata: {{name: {name}, namespace: {ns}}}\nspec: {{replicas: 5}}\n"
    )
    cluster.kubectl(
        "apply", "--server-side", "--force-conflicts", "--field-manager=hpa-sim", "-f", "-",
        input=manifest,
    )  # fmt: skip


def test_a_field_under_ignore_changes_that_an_hpa_scales_is_no_drift(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(DEPLOYMENTS)
    p.up()
    for name in ("ignored", "declared"):
        scale_as_an_hpa(cluster, p.ns, name)

    # `refresh` runs no program: the state tells it what the program lets others change.
    seen = p.sw("refresh", "--preview-only", "--json")
    assert [(e["urn"].rpartition("::")[2], e["fields"]) for e in seen.of("drift")] == [
        (
            "declared",
            [{"path": "spec.replicas", "recorded": 2, "live": 5, "manager": "hpa-sim"}],
        )
    ]
    refreshing = p.preview("--refresh")
    assert [e["urn"].rpartition("::")[2] for e in refreshing.of("drift")] == ["declared"]
    assert refreshing.changed() == {"declared": "update"}

    p.up("--refresh")
    assert live(cluster, "deployment", "declared", p.ns)["spec"]["replicas"] == 2
    assert live(cluster, "deployment", "ignored", p.ns)["spec"]["replicas"] == 5
    # The CI drift gate passes: what remains differs only where the program allows it.
    p.sw("refresh", "--yes", "--expect-no-changes")
    p.preview("--refresh", "--expect-no-changes")

    # Told so after the fact (the HPA came later): the up that adds ignore_changes records
    # it, with no call to the cluster, and the next refresh no longer reports the field.
    p.program(
        DEPLOYMENTS.replace(
            "replicas=2))",
            'replicas=2),\n opts=sw.ResourceOptions(ignore_changes=["spec.replicas"]))',
        )
    )
    assert p.up().summary["counts"] == {"same": 3}
    scale_as_an_hpa(cluster, p.ns, "declared")
    assert p.sw("refresh", "--preview-only", "--json").of("drift") == []


def test_list_items_are_found_by_every_key_they_have(
    new_project: Any, cluster: LiveCluster
) -> None:
    """Two mounts of one volume (a ConfigMap's files by subPath) are told apart by their
    mountPaths, and a port renamed by hand is found by its number: the drift is its name."""
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS},
                              data={"a.conf": "a", "b.conf": "b"})
        spec = app_spec("web")
        spec["template"]["spec"]["containers"][0].update(
            ports=[{"containerPort": 80, "name": "http"}],
            volumeMounts=[
                {"name": "cfg", "mountPath": "/etc/a.conf", "subPath": "a.conf"},
                {"name": "cfg", "mountPath": "/etc/b.conf", "subPath": "b.conf"},
            ],
        )
        spec["template"]["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "cfg"}}]
        k8s.apps.v1.Deployment("web", metadata={"name": "web", "namespace": NS}, spec=spec)
        """
    )
    p.up()
    assert p.sw("refresh", "--preview-only", "--json").of("drift") == []
    assert p.preview("--refresh").changed() == {}

    renamed = {"containers": [{"name": "main", "ports": [{"containerPort": 80, "name": "web"}]}]}
    patch = json.dumps({"spec": {"template": {"spec": renamed}}})
    cluster.kubectl("patch", "deployment", "web", "-n", p.ns, "-p", patch)
    (drift,) = p.sw("refresh", "--preview-only", "--json").of("drift")
    assert drift["fields"] == [
        {
            "path": "spec.template.spec.containers[0].ports[0].name",
            "recorded": "http",
            "live": "web",
            "manager": "kubectl-patch",
        }
    ]
    p.up("--refresh")
    assert live(cluster, "deployment", "web", p.ns)["spec"]["template"]["spec"]["containers"][0][
        "ports"
    ] == [{"containerPort": 80, "name": "http", "protocol": "TCP"}]
    assert p.sw("refresh", "--preview-only", "--json").of("drift") == []


def test_an_env_var_removed_by_hand_is_one_drifted_item_that_up_puts_back(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(WITH_ENV)
    p.up()
    removed = '[{"op": "remove", "path": "/spec/template/spec/containers/0/env/1"}]'
    cluster.kubectl("patch", "deployment", "web", "-n", p.ns, "--type=json", "-p", removed)

    env = "spec.template.spec.containers[0].env[1]"
    (drift,) = p.sw("refresh", "--preview-only", "--json").of("drift")
    level = {"name": "LEVEL", "value": "1"}
    assert drift["fields"] == [{"path": env, "recorded": level, "live": None, "manager": ""}]
    said = p.sw("refresh", "--preview-only").out
    assert f'    {env}: {{"name":"LEVEL","value":"1"}} → (removed)\n' in said
    # `preview --refresh` shows it as the item `up --refresh` adds back.
    (step,) = [e for e in p.preview("--refresh").of("step-started") if e["name"] == "web"]
    assert step["changes"] == [{"path": env, "kind": "add", "new": level}]
    p.up("--refresh")
    container = live(cluster, "deployment", "web", p.ns)["spec"]["template"]["spec"]
    assert container["containers"][0]["env"] == [{"name": "MODE", "value": "a"}, level]


def test_a_changed_env_var_names_the_manager_that_changed_it_not_a_sidecars(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A sidecar injector adds a container (first in the list), then `kubectl patch` changes
    an env var of the program's container: the env var's manager is named, not the one
    that owns another item of `containers` (and comes first in managedFields, sorted by
    time, then name)."""
    p = new_project()
    p.program(WITH_ENV)
    p.up()
    sidecar = json.dumps({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "busybox", "command": ["sleep", "infinity"]}]}}}})  # fmt: skip
    cluster.kubectl(
        "patch", "deployment", "web", "-n", p.ns, "--field-manager=add-sidecar", "-p", sidecar
    )  # fmt: skip
    mode = '[{"op":"replace","path":"/spec/template/spec/containers/1/env/0/value","value":"z"}]'
    cluster.kubectl("patch", "deployment", "web", "-n", p.ns, "--type=json", "-p", mode)

    (drift,) = p.sw("refresh", "--preview-only", "--json").of("drift")
    (field,) = drift["fields"]
    assert field["path"] == "spec.template.spec.containers[0].env[0].value"
    assert (field["live"], field["manager"]) == ("z", "kubectl-patch")


def test_a_secret_changed_or_removed_by_hand_is_drift_that_never_shows_its_value(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(
        """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.Secret("db", metadata={"name": "db", "namespace": NS},
                           string_data={"password": "hunter2-topsecret",
                                        "user": "admin-account"})
        """
    )
    p.up()
    by_hand = base64.b64encode(b"changed-by-hand").decode()
    changed = json.dumps({"data": {"user": by_hand}})
    cluster.kubectl("patch", "secret", "db", "-n", p.ns, "--type=merge", "-p", changed)
    removed = '[{"op": "remove", "path": "/data/password"}]'
    cluster.kubectl("patch", "secret", "db", "-n", p.ns, "--type=json", "-p", removed)

    seen = p.sw("refresh", "--preview-only", "--json")
    said = p.sw("refresh", "--preview-only")
    refreshing = p.preview("--refresh", "--diff")
    for run in (seen, said, refreshing):
        for value in ("hunter2-topsecret", "admin-account", "changed-by-hand", by_hand):
            assert value not in run.out + run.err
    (drift,) = seen.of("drift")
    assert {f["path"]: (f["recorded"], f["live"]) for f in drift["fields"]} == {
        "stringData.password": ("[secret]", None),  # gone: no value claimed for it
        "stringData.user": ("[secret]", "[secret]"),
    }
    assert "    stringData.password: [secret] → (removed)\n" in said.out
    (step,) = [e for e in refreshing.of("step-started") if e["name"] == "db"]
    assert step["changes"] == [
        {"path": "stringData.password", "kind": "add", "new": "[secret]"},
        {"path": "stringData.user", "kind": "update", "old": "[secret]", "new": "[secret]"},
    ]
    p.up("--refresh")
    data = live(cluster, "secret", "db", p.ns)["data"]
    assert base64.b64decode(data["password"]) == b"hunter2-topsecret"
    assert base64.b64decode(data["user"]) == b"admin-account"


def test_a_field_another_manager_took_is_a_conflict_without_refresh_and_taken_back_with_it(
    new_project: Any, cluster: LiveCluster
) -> None:
    """`preview` says the conflict `up` meets; `preview --refresh` says what `up --refresh`
    does: take the drifted field back from the manager named (no conflict in either)."""
    p = new_project()
    body = """
        k8s.core.v1.Namespace("ns", metadata={"name": NS})
        k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg", "namespace": NS},
                              data={"x": "1", "y": Y})
        """
    p.program('Y = "1"\n' + textwrap.dedent(body))
    p.up()
    cluster.kubectl(
        "apply", "--server-side", "--force-conflicts", "--field-manager=other", "-f", "-",
        input=f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg, namespace: {p.ns}}}\n"
        "data: {x: '2'}\n",
    )  # fmt: skip
    p.program('Y = "2"\n' + textwrap.dedent(body))
    for run in (p.preview, p.up):
        (failure,) = run(rc=1).summary["failures"]
        assert "conflict on .data.x with manager other" in failure, failure
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"x": "2", "y": "1"}

    refreshing = p.preview("--refresh")
    assert refreshing.changed() == {"cfg": "update"} and refreshing.summary["failures"] == []
    (drift,) = refreshing.of("drift")
    assert [(f["path"], f["manager"]) for f in drift["fields"]] == [("data.x", "other")]
    assert p.up("--refresh").summary["failures"] == []
    assert live(cluster, "configmap", "cfg", p.ns)["data"] == {"x": "1", "y": "2"}
