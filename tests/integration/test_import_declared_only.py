"""`stackwright import` of objects `kubectl apply` made prints what was declared, not what the
API server defaulted: the code a user migrating from kubectl pastes reads as their manifest,
and running it changes nothing.

Client-side `kubectl apply` keeps its declaration in the last-applied annotation;
`kubectl apply --server-side` names its fields in an `Apply` managedFields entry.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_cli_lifecycle import live
from test_cli_lifecycle import new_project as new_project  # the fixture
from test_secrets_lifecycle import passphrase as passphrase  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster


def manifests(ns: str) -> list[dict[str, Any]]:
    labels = {"app": "shop"}
    return [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "shop", "namespace": ns, "labels": {"tier": "web"}},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "nginx:1.29",
                                "ports": [{"containerPort": 8080}],
                                "env": [{"name": "MODE", "value": "fast"}],
                            }
                        ]
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "shop", "namespace": ns},
            "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 8080}]},
        },
    ]


NAMESPACE = 'k8s.core.v1.Namespace("ns", metadata={"name": NS})\n'


def with_namespace(new_project: Any) -> Any:
    """A project whose stack holds its namespace."""
    p = new_project()
    p.program(NAMESPACE)
    p.up()
    return p


def imported(p: Any, token: str, name: str, object_name: str) -> str:
    """The code `stackwright import` prints for an object of the project's namespace."""
    done = p.sw("import", "--yes", token, name, f"{p.ns}/{object_name}")
    code: str = done.out.split("Add this to your program:", 1)[1].strip()
    return code


#: What the API server adds to the manifests above: none of it was declared.
DEFAULTED = (
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "rollingUpdate",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "dnsPolicy",
    "restartPolicy",
    "schedulerName",
    "securityContext",
    "terminationGracePeriodSeconds",
    "protocol",
    "clusterIP",
    "ipFamilies",
    "sessionAffinity",
    "internalTrafficPolicy",
)


@pytest.mark.parametrize("how", [(), ("--server-side",)], ids=["client-side", "server-side"])
def test_kubectl_apply_imported(
    new_project: Any, cluster: LiveCluster, how: tuple[str, ...]
) -> None:
    p = with_namespace(new_project)
    for manifest in manifests(p.ns):
        cluster.kubectl("apply", *how, "-f", "-", input=json.dumps(manifest))
    before = {kind: live(cluster, kind, "shop", p.ns) for kind in ("deployment", "service")}
    assert before["deployment"]["spec"]["revisionHistoryLimit"] == 10, "the server defaults it"

    deployment = imported(p, "kubernetes:apps/v1:Deployment", "shop", "shop")
    service = imported(p, "kubernetes:core/v1:Service", "shop-svc", "shop")
    for field in DEFAULTED:
        assert field not in deployment and field not in service, (field, deployment, service)
    for declared in ("'replicas': 2", "'image': 'nginx:1.29'", "'containerPort': 8080"):
        assert declared in deployment, deployment
    assert "{'name': 'MODE', 'value': 'fast'}" in deployment
    assert "'labels': {'tier': 'web'}" in deployment and f"'namespace': '{p.ns}'" in deployment
    assert "'ports': [{'port': 80, 'targetPort': 8080}]" in service, service
    # What the import recorded and applied is what the code declares.
    recorded = p.resources()
    assert "revisionHistoryLimit" not in json.dumps(recorded["shop"]["inputs"])
    assert "clusterIP" not in json.dumps(recorded["shop-svc"]["inputs"])

    # Pasted into the program, the code is no change, and `up` leaves the objects as they were.
    p.program(NAMESPACE + deployment + "\n" + service + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 3}
    after = {kind: live(cluster, kind, "shop", p.ns) for kind in ("deployment", "service")}
    for kind, obj in after.items():
        assert obj["metadata"]["uid"] == before[kind]["metadata"]["uid"], kind
        assert obj["spec"] == before[kind]["spec"], kind
    generations = (o["metadata"]["generation"] for o in (before["deployment"], after["deployment"]))
    assert len(set(generations)) == 1, "nothing of the Deployment's spec changed"
    # Stackwright owns what the code declares, not the server's defaults.
    ours = [
        m["fieldsV1"]
        for m in after["deployment"]["metadata"]["managedFields"]
        if m["manager"] == "stackwright"
    ]
    assert ours and "f:revisionHistoryLimit" not in json.dumps(ours), ours


@pytest.mark.parametrize("how", [(), ("--server-side",)], ids=["client-side", "server-side"])
def test_hand_edits_imported(new_project: Any, cluster: LiveCluster, how: tuple[str, ...]) -> None:
    """`kubectl set env` / `kubectl scale` after the apply: the last-applied annotation (or the
    Apply entry) does not know them, the live object holds them; the printed code keeps
    them, so pasting it and running `up` changes nothing."""
    p = with_namespace(new_project)
    for manifest in manifests(p.ns):
        cluster.kubectl("apply", *how, "-f", "-", input=json.dumps(manifest))
    cluster.kubectl("set", "env", "deployment/shop", "-n", p.ns, "EXTRA=1")
    cluster.kubectl("scale", "deployment/shop", "-n", p.ns, "--replicas=3")

    deployment = imported(p, "kubernetes:apps/v1:Deployment", "shop", "shop")
    assert "{'name': 'EXTRA', 'value': '1'}" in deployment, deployment
    assert "'replicas': 3" in deployment, deployment
    assert "revisionHistoryLimit" not in deployment, deployment


def test_kubectl_applied_secret_imported(
    new_project: Any, cluster: LiveCluster, passphrase: str
) -> None:
    """A Secret `kubectl apply` wrote as stringData is kept as data: its declared keys are
    still printed (read from configuration), its defaulted `type` is not."""
    p = with_namespace(new_project)
    manifest = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "appsec", "namespace": p.ns},
        "stringData": {"pw": "Appl1ed-Secret-77"},
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(manifest))
    assert live(cluster, "secret", "appsec", p.ns)["type"] == "Opaque", "the server defaults it"
    code = imported(p, "kubernetes:core/v1:Secret", "appsec", "appsec")
    assert "string_data={'pw': cfg.require_secret('appsec-pw')}" in code, code
    assert "Opaque" not in code and "Appl1ed" not in code
    p.sw("config", "set", "--secret", "appsec-pw", "--", "Appl1ed-Secret-77")
    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}


def stackwright_fields(obj: dict[str, Any]) -> str:
    """What Stackwright's field manager owns of `obj`, as text."""
    return json.dumps(
        [m for m in obj["metadata"]["managedFields"] if m["manager"] == "stackwright"]
    )


def pasted_is_no_change(p: Any, cluster: LiveCluster, code: str, adopted: dict[str, Any]) -> str:
    """Paste the printed code of the Deployment `shop` into the program: `preview` and `up`
    change nothing of the object as it was adopted, nor what Stackwright owns of it, which
    is returned (as text)."""
    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 2}
    after = live(cluster, "deployment", "shop", p.ns)
    for field in ("labels", "annotations", "generation"):
        assert after["metadata"][field] == adopted["metadata"][field], field
    assert stackwright_fields(after) == stackwright_fields(adopted)
    for key in ("f:example.com/zone", "f:example.com/scanned"):  # still the other manager's
        assert managers_of(after, key) == ["policy-agent"], key
    return stackwright_fields(after)


@pytest.mark.parametrize("how", [(), ("--server-side",)], ids=["client-side", "server-side"])
def test_owned_keys_imported(new_project: Any, cluster: LiveCluster, how: tuple[str, ...]) -> None:
    """Labels and annotations are the owners' keys only: the manifest's and a user's
    `kubectl annotate` / `kubectl label` (hand edits), not a controller's (the Deployment
    controller's revision, another manager's key, `kubectl rollout restart`'s). Declared,
    those would be Stackwright's after `up`, which would write back stale values."""
    p = with_namespace(new_project)
    manifest = manifests(p.ns)[0]
    manifest["metadata"]["annotations"] = {"note": "declared"}
    cluster.kubectl("apply", *how, "-f", "-", input=json.dumps(manifest))
    at = ("deployment/shop", "-n", p.ns)
    cluster.kubectl("annotate", *at, "team=blue")
    cluster.kubectl("label", *at, "owner=ops")
    other = ("--field-manager=policy-agent",)
    cluster.kubectl("annotate", *at, *other, "example.com/scanned=yes")
    cluster.kubectl("label", *at, *other, "example.com/zone=a")
    cluster.kubectl("rollout", "restart", *at)
    cluster.kubectl("rollout", "status", *at, "--timeout=60s")
    before = live(cluster, "deployment", "shop", p.ns)
    assert before["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"

    code = imported(p, "kubernetes:apps/v1:Deployment", "shop", "shop")
    for kept in ("'note': 'declared'", "'team': 'blue'", "'tier': 'web'", "'owner': 'ops'"):
        assert kept in code, (kept, code)
    foreign = ("example.com/", "deployment.kubernetes.io", "last-applied", "restartedAt")
    for key in foreign:
        assert key not in code, (key, code)
    assert not [k for k in foreign if k in json.dumps(p.resources()["shop"]["inputs"])]

    adopted = live(cluster, "deployment", "shop", p.ns)
    for field in ("labels", "annotations"):  # the controllers' keys still there, as they were
        assert adopted["metadata"][field].items() >= before["metadata"][field].items(), field

    ours = pasted_is_no_change(p, cluster, code, adopted)
    # Stackwright owns the declared keys, not the controllers'.
    assert "f:team" in ours and "f:owner" in ours and "f:tier" in ours, ours
    assert not [k for k in foreign if k in ours], ours


def test_a_controllers_status_apply_is_not_the_declaration(
    new_project: Any, cluster: LiveCluster
) -> None:
    """A controller that server-side applies an object's status (an `Apply` entry on the
    status subresource) declared none of its spec or labels: the object `kubectl create`
    made is printed whole, as one only `Update` managers wrote is, not as a bare name."""
    p = with_namespace(new_project)
    cluster.kubectl("create", "-f", "-", input=json.dumps(manifests(p.ns)[0]))
    status = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "shop", "namespace": p.ns},
        "status": {"conditions": [{"type": "Audited", "status": "True"}]},
    }
    applied = ("apply", "--server-side", "--subresource=status", "--field-manager=auditor")
    cluster.kubectl(*applied, "-f", "-", input=json.dumps(status))

    code = imported(p, "kubernetes:apps/v1:Deployment", "shop", "shop")
    for declared in ("'replicas': 2", "'image': 'nginx:1.29'", "'labels': {'tier': 'web'}"):
        assert declared in code, (declared, code)
    assert "Audited" not in code, code
    p.program(NAMESPACE + code + "\n")
    assert p.preview().changed() == {}


def managers_of(obj: dict[str, Any], key: str) -> list[str]:
    """The field managers whose managedFields name `key`."""
    return sorted(m["manager"] for m in obj["metadata"]["managedFields"] if key in json.dumps(m))


@pytest.mark.parametrize("how", [(), ("--server-side",)], ids=["client-side", "server-side"])
def test_empty_map_declares_no_key(
    new_project: Any, cluster: LiveCluster, how: tuple[str, ...]
) -> None:
    """A manifest's `annotations: {}` in the pod template (and a ConfigMap's `data: {}`)
    declares the map, not the keys others write into it later: `kubectl rollout restart`'s
    restartedAt (manager kubectl-rollout), another manager's key. Printed, `up` would take
    those over; the code declares the empty map (or, server-side, nothing: see below), and
    pasting it changes nothing."""
    p = with_namespace(new_project)
    deployment = manifests(p.ns)[0]
    deployment["spec"]["template"]["metadata"]["annotations"] = {}
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        # A label keeps the applier's entry once the patch below takes `data` from it.
        "metadata": {"name": "filled", "namespace": p.ns, "labels": {"tier": "config"}},
        "data": {},
    }
    for manifest in (deployment, config):
        cluster.kubectl("apply", *how, "-f", "-", input=json.dumps(manifest))
    at = ("deployment/shop", "-n", p.ns)
    cluster.kubectl("rollout", "restart", *at)
    cluster.kubectl("rollout", "status", *at, "--timeout=60s")
    other = ("--field-manager=other-controller", "--type=merge")
    template = {"spec": {"template": {"metadata": {"annotations": {"example.com/seen": "yes"}}}}}
    cluster.kubectl("patch", *at, *other, "-p", json.dumps(template))
    filled = {"data": {"generated": "by-controller"}}
    cluster.kubectl("patch", "configmap/filled", "-n", p.ns, *other, "-p", json.dumps(filled))
    before = live(cluster, "deployment", "shop", p.ns)
    keys = before["spec"]["template"]["metadata"]["annotations"]
    assert {"kubectl.kubernetes.io/restartedAt", "example.com/seen"} <= keys.keys(), keys

    code = imported(p, "kubernetes:apps/v1:Deployment", "shop", "shop")
    data = imported(p, "kubernetes:core/v1:ConfigMap", "filled", "filled")
    for foreign in ("restartedAt", "example.com/seen", "generated"):
        assert foreign not in code + data, (foreign, code, data)
        inputs = [r["inputs"] for r in p.resources().values()]
        assert foreign not in json.dumps(inputs), foreign
    if how:
        # The API server never stored the empty maps (Go's omitempty), so the patches that
        # filled them added them, and took them from the applier (`.` in their entries).
        assert "'template': {'metadata': {'labels': {'app': 'shop'}}" in code, code
        assert " data=" not in data, data
    else:
        # The last-applied annotation still says `annotations: {}` and `data: {}`.
        template = "'template': {'metadata': {'labels': {'app': 'shop'}, 'annotations': {}}"
        assert template in code, code
        assert "data={}" in data, data

    p.program(NAMESPACE + code + "\n" + data + "\n")
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 3}
    after = live(cluster, "deployment", "shop", p.ns)
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert after["spec"]["template"] == before["spec"]["template"]
    assert live(cluster, "configmap", "filled", p.ns)["data"] == {"generated": "by-controller"}
    # The other managers keep their keys: Stackwright owns the map, not them.
    assert managers_of(after, "restartedAt") == ["kubectl-rollout"]
    assert managers_of(after, "example.com/seen") == ["other-controller"]
    cm = live(cluster, "configmap", "filled", p.ns)
    assert managers_of(cm, "f:generated") == ["other-controller"]
    # Nor is it drift: an empty map of others' keys is what was declared.
    assert p.sw("refresh", "--preview-only", "--json").of("drift") == []


@pytest.mark.parametrize("creator", ["kubectl-create", "helm"])
def test_update_made_creators_keys(new_project: Any, cluster: LiveCluster, creator: str) -> None:
    """An object `kubectl create` (or Helm 3, manager `helm`) made has no owner information:
    its spec is printed whole, but of its labels and annotations only the keys the creator's
    entry (the Update manager that wrote its spec) or a hand edit (`kubectl label`) names;
    not those another manager added since (a policy agent's, the Deployment controller's).
    Pasted, the code is no change, and `up` takes none of those keys over."""
    p = with_namespace(new_project)
    manifest = manifests(p.ns)[0]
    manifest["metadata"]["annotations"] = {"note": "declared"}
    made = ("create", f"--field-manager={creator}", "-f", "-")
    cluster.kubectl(*made, input=json.dumps(manifest))
    at = ("deployment/shop", "-n", p.ns)
    other = ("--field-manager=policy-agent",)
    cluster.kubectl("label", *at, *other, "example.com/zone=a")
    cluster.kubectl("annotate", *at, *other, "example.com/scanned=yes")
    cluster.kubectl("label", *at, "owner=ops")
    cluster.kubectl("rollout", "status", *at, "--timeout=60s")
    before = live(cluster, "deployment", "shop", p.ns)
    assert managers_of(before, "f:tier") == [creator]
    assert managers_of(before, "f:example.com/zone") == ["policy-agent"]

    code = imported(p, "kubernetes:apps/v1:Deployment", "shop", "shop")
    for kept in ("'note': 'declared'", "'tier': 'web'", "'owner': 'ops'", "'replicas': 2"):
        assert kept in code, (kept, code)
    foreign = ("example.com/", "deployment.kubernetes.io")
    for key in foreign:
        assert key not in code, (key, code)
    assert not [k for k in foreign if k in json.dumps(p.resources()["shop"]["inputs"])]

    adopted = live(cluster, "deployment", "shop", p.ns)
    ours = pasted_is_no_change(p, cluster, code, adopted)
    assert "f:tier" in ours and "f:owner" in ours and "f:note" in ours, ours
    assert "example.com/" not in ours, ours
