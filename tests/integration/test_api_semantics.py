"""The local cluster's API semantics, asserted on exact responses over real HTTPS."""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.integration

APPLY = {"Content-Type": "application/apply-patch+yaml"}


HOLD = "example.com/hold"


@pytest.fixture(scope="module")
def api(cluster: Any) -> httpx.Client:
    with cluster.http() as client:
        yield client


def eventually(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.05)


def create_ns(api: httpx.Client, name: str) -> None:
    r = api.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert r.status_code == 201, r.text


def cm(name: str, data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": data,
    }


def deployment(name: str, image: str = "nginx:1.29", replicas: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "web", "image": image}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


# --- authentication, discovery, health ------------------------------------------------


def test_request_without_token_is_401_status(cluster: Any) -> None:
    r = httpx.get(
        f"{cluster.server}/api/v1/namespaces",
        verify=ssl.create_default_context(cafile=str(cluster.ca)),
    )
    assert r.status_code == 401
    assert r.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401,
    }  # fmt: skip


def test_wrong_token_is_401(cluster: Any) -> None:
    r = httpx.get(
        f"{cluster.server}/api",
        verify=ssl.create_default_context(cafile=str(cluster.ca)),
        headers={"Authorization": "Bearer nope"},
    )
    assert r.status_code == 401


def test_health_and_version(api: httpx.Client) -> None:
    for path in ("/healthz", "/readyz", "/livez"):
        assert api.get(path).text == "ok"
    # `kubectl get --raw '/readyz?verbose'` lists the checks, by upstream's names.
    verbose = api.get("/readyz?verbose").text.splitlines()
    assert verbose[:3] == ["[+]ping ok", "[+]log ok", "[+]etcd ok"]
    assert verbose[-2:] == ["[+]shutdown ok", "readyz check passed"]
    livez = api.get("/livez?verbose&exclude=etcd").text.splitlines()
    assert "[+]etcd excluded: ok" in livez and livez[-1] == "livez check passed"
    assert api.get("/readyz/etcd").text == "ok"
    assert api.get("/readyz/nothing").status_code == 404
    version = api.get("/version").json()
    assert (version["major"], int(version["minor"])) >= ("1", 32)


def test_discovery_lists_builtin_kinds(api: httpx.Client) -> None:
    core = api.get("/api/v1").json()
    pods = next(r for r in core["resources"] if r["name"] == "pods")
    assert pods["namespaced"] is True and pods["kind"] == "Pod" and "po" in pods["shortNames"]
    assert "watch" in pods["verbs"] and "all" in pods["categories"]
    groups = {g["name"]: g for g in api.get("/apis").json()["groups"]}
    for group in ("apps", "batch", "networking.k8s.io", "rbac.authorization.k8s.io", "policy", "autoscaling",
                  "storage.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "apiextensions.k8s.io"):  # fmt: skip
        assert group in groups
    apps = api.get("/apis/apps/v1").json()
    names = {r["name"] for r in apps["resources"]}
    assert {"deployments", "deployments/status", "deployments/scale", "replicasets", "statefulsets",
            "daemonsets", "controllerrevisions"} <= names  # fmt: skip


def test_initial_namespaces_exist(api: httpx.Client) -> None:
    names = {n["metadata"]["name"] for n in api.get("/api/v1/namespaces").json()["items"]}
    assert {"default", "kube-system", "kube-public"} <= names
    default = api.get("/api/v1/namespaces/default").json()
    assert default["metadata"]["labels"]["kubernetes.io/metadata.name"] == "default"
    assert default["status"]["phase"] == "Active"


def test_the_cluster_services_exist_as_kubeadm_makes_them(api: httpx.Client) -> None:
    # Programs read kube-dns (`Service.get("dns", "kube-system/kube-dns")`): its address is
    # the one Pods' resolv.conf names, the tenth of the Service range.
    api_server = api.get("/api/v1/namespaces/default/services/kubernetes").json()
    assert api_server["spec"]["clusterIP"] == "10.96.0.1"
    dns = api.get("/api/v1/namespaces/kube-system/services/kube-dns").json()
    assert dns["spec"]["clusterIP"] == "10.96.0.10"
    assert dns["spec"]["selector"] == {"k8s-app": "kube-dns"}
    assert [(p["name"], p["port"], p["protocol"]) for p in dns["spec"]["ports"]] == [
        ("dns", 53, "UDP"),
        ("dns-tcp", 53, "TCP"),
        ("metrics", 9153, "TCP"),
    ]


def test_every_namespace_gets_default_service_account_and_root_ca(
    api: httpx.Client, cluster: Any
) -> None:
    # kube-controller-manager's serviceaccount and root-ca-cert-publisher controllers.
    create_ns(api, "seeded")
    for ns in ("default", "kube-system", "seeded"):
        sa_path = f"/api/v1/namespaces/{ns}/serviceaccounts/default"
        ca_path = f"/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt"
        eventually(lambda: api.get(sa_path).status_code == 200)  # noqa: B023
        eventually(lambda: api.get(ca_path).status_code == 200)  # noqa: B023
        ca = api.get(ca_path).json()
        assert ca["data"] == {"ca.crt": cluster.ca.read_text()}
        assert ca["metadata"]["annotations"]["kubernetes.io/description"].startswith(
            "Contains a CA bundle that can be used to verify the kube-apiserver"
        )
    # Deleted, both come back; edited, the CA bundle is put back.
    assert api.delete("/api/v1/namespaces/seeded/serviceaccounts/default").status_code == 200
    assert api.delete("/api/v1/namespaces/seeded/configmaps/kube-root-ca.crt").status_code == 200
    eventually(
        lambda: api.get("/api/v1/namespaces/seeded/serviceaccounts/default").status_code == 200
    )
    eventually(
        lambda: api.get("/api/v1/namespaces/seeded/configmaps/kube-root-ca.crt").status_code == 200
    )
    api.patch(
        "/api/v1/namespaces/seeded/configmaps/kube-root-ca.crt",
        json={"data": {"ca.crt": "forged"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    eventually(
        lambda: (
            api.get("/api/v1/namespaces/seeded/configmaps/kube-root-ca.crt").json()["data"]
            == {"ca.crt": cluster.ca.read_text()}
        )
    )


def test_unknown_resource_is_404_status(api: httpx.Client) -> None:
    r = api.get("/api/v1/widgets")
    assert r.status_code == 404
    assert r.json()["reason"] == "NotFound"


# --- create, get, update, metadata ------------------------------------------------------


def test_create_fills_metadata_and_conflicts_on_duplicate(api: httpx.Client) -> None:
    create_ns(api, "meta")
    r = api.post("/api/v1/namespaces/meta/configmaps", json=cm("one", {"a": "1"}))
    assert r.status_code == 201
    meta = r.json()["metadata"]
    assert meta["namespace"] == "meta" and len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z") and int(meta["resourceVersion"]) > 0
    assert "generation" not in meta  # ConfigMaps have no spec, hence no generation
    assert meta["managedFields"][0]["manager"] == "python-httpx"
    assert meta["managedFields"][0]["operation"] == "Update"
    dup = api.post("/api/v1/namespaces/meta/configmaps", json=cm("one", {"a": "1"}))
    assert dup.status_code == 409
    assert dup.json()["reason"] == "AlreadyExists"
    assert dup.json()["message"] == 'configmaps "one" already exists'


def test_generate_name(api: httpx.Client) -> None:
    r = api.post(
        "/api/v1/namespaces/meta/configmaps",
        json={"metadata": {"generateName": "gen-"}, "data": {}},
    )
    assert r.status_code == 201
    name = r.json()["metadata"]["name"]
    assert name.startswith("gen-") and len(name) == len("gen-") + 5


def test_update_with_stale_resource_version_is_409(api: httpx.Client) -> None:
    created = api.post("/api/v1/namespaces/meta/configmaps", json=cm("stale", {"a": "1"})).json()
    first = dict(created, data={"a": "2"})
    assert api.put("/api/v1/namespaces/meta/configmaps/stale", json=first).status_code == 200
    second = dict(created, data={"a": "3"})  # still carries the old resourceVersion
    r = api.put("/api/v1/namespaces/meta/configmaps/stale", json=second)
    assert r.status_code == 409
    assert r.json()["reason"] == "Conflict"
    assert r.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "stale": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_an_update_or_patch_naming_another_uid_changes_nothing(api: httpx.Client) -> None:
    """kube-apiserver takes a PUT body's uid as a precondition (409, before the resourceVersion
    check); a patch carries no precondition, and a uid it changes is an immutable field (422)."""
    path = "/api/v1/namespaces/meta/configmaps/uid-put"
    created = api.post("/api/v1/namespaces/meta/configmaps", json=cm("uid-put", {"a": "1"})).json()
    uid = created["metadata"]["uid"]
    other = "0f0e0d0c-0000-4000-8000-000000000002"
    stale = dict(created, metadata=dict(created["metadata"], uid=other, resourceVersion="1"))
    put = api.put(path, json=dict(stale, data={"a": "2"}))
    assert put.status_code == 409, put.text
    assert put.json()["reason"] == "Conflict"
    assert put.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "uid-put": Precondition failed: '
        f"UID in precondition: {other}, UID in object meta: {uid}"
    )
    merge = {"Content-Type": "application/merge-patch+json"}
    patched = api.patch(
        path, content=json.dumps({"metadata": {"uid": other}, "data": {"a": "3"}}), headers=merge
    )
    assert patched.status_code == 422, patched.text
    assert patched.json()["message"] == (
        f'ConfigMap "uid-put" is invalid: metadata.uid: Invalid value: "{other}": field is '
        "immutable"
    )
    assert api.get(path).json() == created
    same = dict(created, data={"a": "4"})
    assert api.put(path, json=same).status_code == 200


def test_resource_version_is_one_cluster_wide_counter(api: httpx.Client) -> None:
    a = api.post("/api/v1/namespaces/meta/configmaps", json=cm("rv-a", {})).json()
    b = api.post("/apis/apps/v1/namespaces/meta/deployments", json=deployment("rv-b")).json()
    assert int(b["metadata"]["resourceVersion"]) == int(a["metadata"]["resourceVersion"]) + 1


def test_generation_bumps_on_spec_only(api: httpx.Client) -> None:
    d = api.post("/apis/apps/v1/namespaces/meta/deployments", json=deployment("gen")).json()
    assert d["metadata"]["generation"] == 1
    assert d["spec"]["replicas"] == 1 and d["spec"]["strategy"]["type"] == "RollingUpdate"
    container = d["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    merge = {"Content-Type": "application/merge-patch+json"}
    labelled = api.patch(
        "/apis/apps/v1/namespaces/meta/deployments/gen",
        content=b'{"metadata":{"labels":{"x":"y"}}}',
        headers=merge,
    ).json()
    assert labelled["metadata"]["generation"] == 1
    scaled = api.patch(
        "/apis/apps/v1/namespaces/meta/deployments/gen",
        content=b'{"spec":{"replicas":3}}',
        headers=merge,
    ).json()
    assert scaled["metadata"]["generation"] == 2
    status_write = api.patch(
        "/apis/apps/v1/namespaces/meta/deployments/gen/status",
        content=b'{"status":{"observedGeneration":2}}', headers=merge,
    ).json()  # fmt: skip
    assert status_write["metadata"]["generation"] == 2
    assert status_write["status"]["observedGeneration"] == 2


def test_status_is_ignored_on_main_resource(api: httpx.Client) -> None:
    body = deployment("nostatus")
    body["status"] = {"replicas": 7}
    created = api.post("/apis/apps/v1/namespaces/meta/deployments", json=body).json()
    assert "replicas" not in created.get("status", {})


def test_no_op_update_keeps_resource_version(api: httpx.Client) -> None:
    created = api.post("/api/v1/namespaces/meta/configmaps", json=cm("noop", {"a": "1"})).json()
    again = api.put("/api/v1/namespaces/meta/configmaps/noop", json=created).json()
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


# --- validation and defaulting -------------------------------------------------------------


def test_invalid_object_is_422_with_causes(api: httpx.Client) -> None:
    body = deployment("Bad_Name", replicas=-1)
    r = api.post("/apis/apps/v1/namespaces/meta/deployments", json=body)
    assert r.status_code == 422
    status = r.json()
    assert status["reason"] == "Invalid" and status["details"]["kind"] == "Deployment"
    assert status["details"]["group"] == "apps"
    fields = {c["field"]: c for c in status["details"]["causes"]}
    assert fields["metadata.name"]["reason"] == "FieldValueInvalid"
    assert (
        fields["spec.replicas"]["message"]
        == "Invalid value: -1: must be greater than or equal to 0"
    )
    assert status["message"].startswith('Deployment.apps "Bad_Name" is invalid: [')


def test_missing_required_field(api: httpx.Client) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "empty"},
        "spec": {"containers": []},
    }
    r = api.post("/api/v1/namespaces/meta/pods", json=body)
    assert r.status_code == 422
    causes = r.json()["details"]["causes"]
    assert {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.containers",
    } in causes


def test_immutable_selector(api: httpx.Client) -> None:
    d = api.post("/apis/apps/v1/namespaces/meta/deployments", json=deployment("immutable")).json()
    d["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    d["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    # Unconditional: the deployment controller writes status and annotations meanwhile.
    del d["metadata"]["resourceVersion"]
    r = api.put("/apis/apps/v1/namespaces/meta/deployments/immutable", json=d)
    assert r.status_code == 422
    assert any(
        c["field"] == "spec.selector" and "field is immutable" in c["message"]
        for c in r.json()["details"]["causes"]
    )


def test_unknown_fields_strict_warn_ignore(api: httpx.Client) -> None:
    body = cm("unknown", {"a": "1"})
    body["spex"] = {"x": 1}
    strict = api.post("/api/v1/namespaces/meta/configmaps?fieldValidation=Strict", json=body)
    assert strict.status_code == 400
    # A created (or replaced) body is decoded whole: kube-apiserver names the kind, as the
    # `kubectl apply` of a manifest with a typo shows; a patch's error is the bare one.
    assert strict.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: unknown field "spex"'
    )
    api.post("/api/v1/namespaces/meta/configmaps", json=cm("known", {"a": "1"}))
    patched = api.patch(
        "/api/v1/namespaces/meta/configmaps/known?fieldValidation=Strict",
        json={"spex": 1},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.json()["message"] == 'strict decoding error: unknown field "spex"'
    warned = api.post("/api/v1/namespaces/meta/configmaps", json=body)
    assert warned.status_code == 201
    assert (
        'unknown field \\"spex\\"' in warned.headers["warning"]
        or 'unknown field "spex"' in warned.headers["warning"]
    )
    assert "spex" not in warned.json()


@pytest.mark.parametrize("validation", ["", "?fieldValidation=Warn", "?fieldValidation=Ignore"])
def test_server_side_apply_refuses_unknown_fields_whatever_the_validation(
    api: httpx.Client, validation: str
) -> None:
    # A real API server types an apply patch before anything else: a field the schema does
    # not declare fails it (a 500), where a create or update only warns and drops it. This
    # server dropped it with a warning, so a typo in a program was applied without it.
    body = deployment("typo")
    body["spec"]["replicaz"] = 2
    body["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    url = f"/apis/apps/v1/namespaces/meta/deployments/typo{validation}"
    params = "&" if validation else "?"
    r = api.patch(f"{url}{params}fieldManager=t", headers=APPLY, content=json.dumps(body))
    assert r.status_code == 500
    head, *errors = r.json()["message"].split("\n")
    assert (
        head == "failed to create typed patch object (meta/typo; apps/v1, Kind=Deployment): errors:"
    )
    assert sorted(errors) == [
        "  .spec.replicaz: field not declared in schema",
        '  .spec.template.spec.containers[name="web"].imagee: field not declared in schema',
    ]
    assert api.get("/apis/apps/v1/namespaces/meta/deployments/typo").status_code == 404


def test_wrong_type_is_400(api: httpx.Client) -> None:
    body = deployment("typed")
    body["spec"]["replicas"] = "three"
    r = api.post("/apis/apps/v1/namespaces/meta/deployments", json=body)
    assert r.status_code == 400
    assert r.json()["reason"] == "BadRequest"
    assert "replicas" in r.json()["message"]


def test_service_defaults_and_cluster_ip(api: httpx.Client) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}  # fmt: skip
    created = api.post("/api/v1/namespaces/meta/services", json=svc).json()
    spec = created["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
    assert spec["ports"][0]["protocol"] == "TCP" and spec["ports"][0]["targetPort"] == 80
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]]
    # Go prints ServiceStatus' LoadBalancer struct empty: a program's
    # `svc.status.apply(lambda s: s.load_balancer.ingress)` finds no ingress, not no status.
    assert created["status"] == {"loadBalancer": {}}
    spec_ip = spec["clusterIP"]
    created["spec"]["clusterIP"] = "10.96.0.99"
    created["spec"]["clusterIPs"] = ["10.96.0.99"]
    r = api.put("/api/v1/namespaces/meta/services/web", json=created)
    assert r.status_code == 422
    cause = r.json()["details"]["causes"][0]
    assert cause["field"] == "spec.clusterIPs[0]", (spec_ip, r.text)
    assert cause["message"].endswith("may not change once set")


def test_dry_run_changes_nothing(api: httpx.Client) -> None:
    r = api.post("/api/v1/namespaces/meta/configmaps?dryRun=All", json=cm("dry", {"a": "1"}))
    assert r.status_code == 201
    assert api.get("/api/v1/namespaces/meta/configmaps/dry").status_code == 404
    before = api.post("/api/v1/namespaces/meta/configmaps", json=cm("dry2", {"a": "1"})).json()
    r = api.patch(
        "/api/v1/namespaces/meta/configmaps/dry2?dryRun=All",
        content=b'{"data":{"a":"2"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.json()["data"] == {"a": "2"}
    assert api.get("/api/v1/namespaces/meta/configmaps/dry2").json() == before
    assert api.delete("/api/v1/namespaces/meta/configmaps/dry2?dryRun=All").status_code == 200
    assert api.get("/api/v1/namespaces/meta/configmaps/dry2").status_code == 200


# --- patches -------------------------------------------------------------------------------


def test_json_merge_and_strategic_patches(api: httpx.Client) -> None:
    base = "/apis/apps/v1/namespaces/meta/deployments/patched"
    d = deployment("patched")
    side = {"name": "side", "image": "busybox:1", "command": ["sleep", "infinity"]}
    d["spec"]["template"]["spec"]["containers"].append(side)
    api.post("/apis/apps/v1/namespaces/meta/deployments", json=d)
    strategic = {
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.30"}]}}}
    }
    r = api.patch(
        base, json=strategic, headers={"Content-Type": "application/strategic-merge-patch+json"}
    )
    containers = r.json()["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [
        ("web", "nginx:1.30"),
        ("side", "busybox:1"),
    ]
    merge = {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "nginx:1"}]}}}}
    r = api.patch(base, json=merge, headers={"Content-Type": "application/merge-patch+json"})
    assert [c["name"] for c in r.json()["spec"]["template"]["spec"]["containers"]] == ["only"]
    ops = [
        {"op": "replace", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/metadata/labels", "value": {"k": "v"}},
    ]
    r = api.patch(base, json=ops, headers={"Content-Type": "application/json-patch+json"})
    assert r.json()["spec"]["replicas"] == 4 and r.json()["metadata"]["labels"] == {"k": "v"}
    bad = api.patch(
        base,
        json=[{"op": "test", "path": "/spec/replicas", "value": 9}],
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert bad.status_code in (409, 422, 500) and bad.json()["kind"] == "Status"
    unsupported = api.patch(base, content=b"{}", headers={"Content-Type": "text/plain"})
    assert unsupported.status_code == 415


# --- server-side apply -----------------------------------------------------------------------


def ssa(
    api: httpx.Client, path: str, body: dict[str, Any], manager: str, force: bool = False
) -> httpx.Response:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return api.patch(path + query, content=json.dumps(body), headers=APPLY)


def test_apply_creates_then_removes_fields_no_longer_applied(api: httpx.Client) -> None:
    path = "/api/v1/namespaces/meta/configmaps/applied"
    r = ssa(api, path, cm("applied", {"a": "1", "b": "2"}, labels={"team": "x"}), "alice")
    assert r.status_code == 201
    entry = r.json()["metadata"]["managedFields"][0]
    assert entry["manager"] == "alice" and entry["operation"] == "Apply"
    # Apply entries list the applied leaves (no "." for maps), as kube-apiserver records them.
    assert entry["fieldsV1"] == {
        "f:data": {"f:a": {}, "f:b": {}},
        "f:metadata": {"f:labels": {"f:team": {}}},
    }
    r = ssa(api, path, cm("applied", {"a": "1"}), "alice")
    assert r.status_code == 200
    assert r.json()["data"] == {"a": "1"}
    assert "labels" not in r.json()["metadata"]


def test_apply_keeps_field_another_manager_owns(api: httpx.Client) -> None:
    path = "/api/v1/namespaces/meta/configmaps/shared"
    ssa(api, path, cm("shared", {"a": "1", "b": "2"}), "alice")
    ssa(api, path, cm("shared", {"b": "2"}), "bob")  # same value: shared ownership
    r = ssa(api, path, cm("shared", {"a": "1"}), "alice")
    assert r.json()["data"] == {"a": "1", "b": "2"}


def test_apply_conflict_and_force(api: httpx.Client) -> None:
    path = "/api/v1/namespaces/meta/configmaps/contested"
    ssa(api, path, cm("contested", {"a": "1"}), "alice")
    r = ssa(api, path, cm("contested", {"a": "2"}), "bob")
    assert r.status_code == 409
    status = r.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    assert status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "alice"',
            "field": ".data.a",
        }
    ]
    forced = ssa(api, path, cm("contested", {"a": "2"}), "bob", force=True)
    assert forced.status_code == 200 and forced.json()["data"] == {"a": "2"}
    managers = {e["manager"]: e for e in forced.json()["metadata"]["managedFields"]}
    assert "alice" not in managers  # alice owned nothing else
    assert managers["bob"]["fieldsV1"]["f:data"] == {"f:a": {}}


def test_apply_with_a_uid_changes_that_object_only(api: httpx.Client) -> None:
    # As kube-apiserver (TestCreateOnApplyFailsWithUID; kubernetes#127625): a uid in an apply
    # is a precondition, so that a client never creates an object it meant to change.
    path = "/api/v1/namespaces/meta/configmaps/uid-bound"
    stale = "0f0e0d0c-0000-4000-8000-000000000001"

    def apply(**uid: str) -> httpx.Response:
        return ssa(api, path, cm("uid-bound", {"a": "1"}, **uid), "al")

    absent = apply(uid=stale)
    assert absent.status_code == 409, absent.text
    assert absent.json()["message"] == (
        'Operation cannot be fulfilled on configmaps "uid-bound": uid mismatch: the provided '
        f"object specified uid {stale}, and no existing object was found"
    )
    assert api.get(path).status_code == 404, "an apply with a uid must not create the object"
    uid = apply().json()["metadata"]["uid"]
    other = apply(uid=stale)
    assert other.status_code == 422, other.text
    assert other.json()["message"] == (
        f'ConfigMap "uid-bound" is invalid: metadata.uid: Invalid value: "{stale}": field is '
        "immutable"
    )
    same = ssa(api, path, cm("uid-bound", {"a": "3"}, uid=uid), "al")
    assert same.status_code == 200 and same.json()["data"] == {"a": "3"}
    assert same.json()["metadata"]["uid"] == uid
    # Nobody owns the uid: it is a precondition, not a field.
    (entry,) = same.json()["metadata"]["managedFields"]
    assert "f:metadata" not in entry["fieldsV1"], entry


def test_apply_conflict_with_update_manager(api: httpx.Client) -> None:
    path = "/apis/apps/v1/namespaces/meta/deployments/ssa-dep"
    ssa(api, path, deployment("ssa-dep", replicas=2), "stackwright")
    scaled = api.patch(
        path + "/scale?fieldManager=autoscaler",
        json={"spec": {"replicas": 5}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert scaled.status_code == 200, scaled.text
    # The scale subresource's writer is recorded as one (so a conflict names it so).
    (entry,) = [
        e for e in api.get(path).json()["metadata"]["managedFields"] if e["manager"] == "autoscaler"
    ]
    assert (entry["operation"], entry.get("subresource")) == ("Update", "scale")
    assert entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    r = ssa(api, path, deployment("ssa-dep", replicas=2), "stackwright")
    assert r.status_code == 409
    (cause,) = r.json()["details"]["causes"]
    assert cause["field"] == ".spec.replicas"
    assert cause["message"] == 'conflict with "autoscaler" with subresource "scale" using apps/v1'


def test_apply_merges_containers_by_name(api: httpx.Client) -> None:
    path = "/apis/apps/v1/namespaces/meta/deployments/two-managers"
    ssa(api, path, deployment("two-managers"), "alice")
    sidecar = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "two-managers"},
               "spec": {"template": {"spec": {"containers": [{"name": "log", "image": "busybox:1",
                                                             "command": ["sleep", "infinity"]}]}}}}  # fmt: skip
    r = ssa(api, path, sidecar, "bob")
    assert r.status_code == 200, r.text
    assert [c["name"] for c in r.json()["spec"]["template"]["spec"]["containers"]] == ["web", "log"]


def test_apply_requires_field_manager(api: httpx.Client) -> None:
    r = api.patch(
        "/api/v1/namespaces/meta/configmaps/x", content=json.dumps(cm("x", {})), headers=APPLY
    )
    assert r.status_code == 422
    assert r.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )


# --- delete, finalizers, garbage collection ------------------------------------------------


def test_delete_precondition_and_finalizers(api: httpx.Client) -> None:
    created = api.post(
        "/api/v1/namespaces/meta/configmaps", json=cm("held", {}, finalizers=["example.com/hold"])
    ).json()
    wrong = api.request(
        "DELETE", "/api/v1/namespaces/meta/configmaps/held", json={"preconditions": {"uid": "nope"}}
    )
    assert wrong.status_code == 409
    # In the words of kube-apiserver's rest.BeforeDelete, which checks it before its storage.
    assert wrong.json()["reason"] == "Conflict"
    assert wrong.json()["message"] == (
        'Operation cannot be fulfilled on ConfigMap "held": the UID in the precondition (nope) '
        f"does not match the UID in record ({created['metadata']['uid']}). The object might "
        "have been deleted and then recreated"
    )
    assert wrong.json()["details"] == {"name": "held", "group": "", "kind": "ConfigMap"}
    r = api.delete("/api/v1/namespaces/meta/configmaps/held")
    assert r.status_code == 200  # kube-apiserver answers 200 while finalizers hold it, too
    held = api.get("/api/v1/namespaces/meta/configmaps/held").json()
    assert held["metadata"]["deletionTimestamp"]
    held["metadata"]["finalizers"] = []
    assert api.put("/api/v1/namespaces/meta/configmaps/held", json=held).status_code == 200
    assert api.get("/api/v1/namespaces/meta/configmaps/held").status_code == 404
    assert created["metadata"]["uid"]


def owner_ref(owner: dict[str, Any], block: bool = False) -> dict[str, Any]:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def owned(name: str, owner: dict[str, Any], block: bool = False) -> dict[str, Any]:
    return cm(name, {}, ownerReferences=[owner_ref(owner, block)])


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_garbage_collection(api: httpx.Client, policy: str) -> None:
    ns = f"gc-{policy.lower()}"
    create_ns(api, ns)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    owner = api.post(base, json=cm("owner", {})).json()
    child = api.post(base, json=owned("child", owner, block=True)).json()
    api.post(base, json=owned("grandchild", child, block=True))
    r = api.request("DELETE", f"{base}/owner", json={"propagationPolicy": policy})
    if policy == "Background":
        assert r.status_code == 200
        eventually(lambda: api.get(f"{base}/grandchild").status_code == 404)
        assert api.get(f"{base}/child").status_code == 404
    elif policy == "Foreground":
        assert r.status_code == 200
        assert "foregroundDeletion" in r.json()["metadata"]["finalizers"]
        eventually(lambda: api.get(f"{base}/owner").status_code == 404)
        # The owner goes only after its dependents are gone.
        assert api.get(f"{base}/child").status_code == 404
        assert api.get(f"{base}/grandchild").status_code == 404
    else:
        assert r.status_code == 200
        eventually(lambda: api.get(f"{base}/owner").status_code == 404)
        kept = api.get(f"{base}/child").json()
        assert "ownerReferences" not in kept["metadata"]
        assert api.get(f"{base}/grandchild").status_code == 200


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_a_dependent_with_another_owner_loses_only_the_reference(
    api: httpx.Client, policy: str
) -> None:
    """kube-controller-manager's collector keeps a dependent while a solid owner remains:
    it removes the deleted (or foreground-deleting) owner's reference, and deletes the
    dependent only when its last owner goes."""
    ns = f"gc-two-{policy.lower()}"
    create_ns(api, ns)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    first = api.post(base, json=cm("first", {})).json()
    second = api.post(base, json=cm("second", {})).json()
    refs = [owner_ref(first, block=True), owner_ref(second, block=True)]
    api.post(base, json=cm("shared", {}, ownerReferences=refs))
    r = api.request("DELETE", f"{base}/first", json={"propagationPolicy": policy})
    assert r.status_code == 200
    eventually(lambda: api.get(f"{base}/first").status_code == 404)
    kept = eventually(
        lambda: (
            (got := api.get(f"{base}/shared").json())["metadata"].get("ownerReferences")
            == [refs[1]]
            and got
        )
    )
    assert "deletionTimestamp" not in kept["metadata"]
    api.request("DELETE", f"{base}/second", json={"propagationPolicy": policy})
    eventually(lambda: api.get(f"{base}/shared").status_code == 404)


def test_namespace_deletion_removes_contents(api: httpx.Client) -> None:
    create_ns(api, "doomed")
    api.post("/api/v1/namespaces/doomed/configmaps", json=cm("a", {}))
    api.post("/apis/apps/v1/namespaces/doomed/deployments", json=deployment("d"))
    r = api.delete("/api/v1/namespaces/doomed")
    assert r.status_code == 202 or r.status_code == 200
    terminating = api.get("/api/v1/namespaces/doomed")
    if terminating.status_code == 200:
        assert terminating.json()["status"]["phase"] == "Terminating"
    eventually(lambda: api.get("/api/v1/namespaces/doomed").status_code == 404)
    assert api.get("/api/v1/namespaces/doomed/configmaps/a").status_code == 404


def test_deleting_again_what_is_being_deleted_answers_200_with_it(api: httpx.Client) -> None:
    """A DELETE of a Namespace already Terminating, or of an object finalizers hold, answers
    200 with the object, unchanged: kube-apiserver's namespace storage has returned the
    Namespace there since Kubernetes 1.17 (kubernetes/kubernetes#84122; 409 Conflict "The
    system is ensuring all content is removed…" before), as its generic store always did for
    other objects. Only `orphanDependents: false` on an object not yet gone answers 202."""
    create_ns(api, "again")
    held = "/api/v1/namespaces/again/configmaps/held"
    api.post("/api/v1/namespaces/again/configmaps", json=cm("held", {}, finalizers=[HOLD]))
    first = api.delete("/api/v1/namespaces/again")
    assert first.status_code == 200, first.text
    assert first.json()["status"]["phase"] == "Terminating"
    # The held ConfigMap keeps the namespace's own `kubernetes` finalizer in place.
    eventually(lambda: api.get(held).json()["metadata"].get("deletionTimestamp"))
    # ... and the namespace controller has said so (its status stays put from then on).
    eventually(lambda: api.get("/api/v1/namespaces/again").json()["status"].get("conditions"))
    namespace = api.get("/api/v1/namespaces/again").json()
    assert namespace["spec"]["finalizers"] == ["kubernetes"]
    for path, before in ((held, api.get(held).json()), ("/api/v1/namespaces/again", namespace)):
        for options in ({}, {"propagationPolicy": "Background"}):
            again = api.request("DELETE", path, json=options)
            assert again.status_code == 200, again.text
            assert again.json() == before
    cascade = api.request("DELETE", held, json={"orphanDependents": False})
    assert cascade.status_code == 202, cascade.text
    assert "foregroundDeletion" in cascade.json()["metadata"]["finalizers"]
    released = api.get(held).json()
    released["metadata"]["finalizers"] = []
    assert api.put(held, json=released).status_code == 200
    eventually(lambda: api.get("/api/v1/namespaces/again").status_code == 404)


def test_a_terminating_namespace_says_what_remains_in_it_and_what_holds_it(
    api: httpx.Client,
) -> None:
    """As kube-controller-manager's namespace controller: while content remains, the
    Namespace's conditions say which resources, and which finalizers hold them."""
    create_ns(api, "held-open")
    held = "/api/v1/namespaces/held-open/configmaps/held"
    api.post("/api/v1/namespaces/held-open/configmaps", json=cm("held", {}, finalizers=[HOLD]))
    api.delete("/api/v1/namespaces/held-open")

    def conditions() -> dict[str, Any]:
        found = api.get("/api/v1/namespaces/held-open").json()["status"].get("conditions") or []
        return {c["type"]: c for c in found}

    eventually(lambda: "NamespaceFinalizersRemaining" in conditions())
    found = conditions()
    assert found["NamespaceContentRemaining"]["status"] == "True"
    assert found["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: configmaps. has 1 resource instances"
    )
    assert found["NamespaceFinalizersRemaining"]["reason"] == "SomeFinalizersRemain"
    assert found["NamespaceFinalizersRemaining"]["message"] == (
        f"Some content in the namespace has finalizers remaining: {HOLD} in 1 resource instances"
    )
    released = api.get(held).json()
    released["metadata"]["finalizers"] = []
    assert api.put(held, json=released).status_code == 200
    eventually(lambda: api.get("/api/v1/namespaces/held-open").status_code == 404)


def test_create_in_missing_namespace_is_404(api: httpx.Client) -> None:
    r = api.post("/api/v1/namespaces/nowhere/configmaps", json=cm("x", {}))
    assert r.status_code == 404
    assert r.json()["message"] == 'namespaces "nowhere" not found'


def test_deletecollection_with_selector(api: httpx.Client) -> None:
    create_ns(api, "coll")
    for i in range(4):
        api.post(
            "/api/v1/namespaces/coll/configmaps",
            json=cm(f"c{i}", {}, labels={"keep": "yes" if i % 2 else "no"}),
        )
    r = api.delete("/api/v1/namespaces/coll/configmaps?labelSelector=keep%3Dno")
    assert r.status_code == 200
    left = [
        c["metadata"]["name"] for c in api.get("/api/v1/namespaces/coll/configmaps").json()["items"]
    ]
    assert [n for n in left if n != "kube-root-ca.crt"] == ["c1", "c3"]  # it is in every namespace


# --- list: selectors and paging -----------------------------------------------------------------


def test_label_and_field_selectors(api: httpx.Client) -> None:
    create_ns(api, "sel")
    for name, labels in [
        ("a", {"env": "prod", "tier": "web"}),
        ("b", {"env": "dev"}),
        ("c", {"tier": "db"}),
    ]:
        api.post("/api/v1/namespaces/sel/configmaps", json=cm(name, {}, labels=labels))

    def names(query: str) -> list[str]:
        return [
            i["metadata"]["name"]
            for i in api.get(f"/api/v1/namespaces/sel/configmaps?{query}").json()["items"]
            if i["metadata"]["name"] != "kube-root-ca.crt"  # in every namespace
        ]

    assert names("labelSelector=env%3Dprod") == ["a"]
    assert names("labelSelector=env!%3Dprod") == ["b", "c"]
    assert names("labelSelector=env+in+(prod,dev)") == ["a", "b"]
    assert names("labelSelector=env+notin+(prod)") == ["b", "c"]
    assert names("labelSelector=tier") == ["a", "c"]
    assert names("labelSelector=!tier") == ["b"]
    assert names("fieldSelector=metadata.name%3Db") == ["b"]
    assert names("fieldSelector=metadata.name!%3Db") == ["a", "c"]
    bad = api.get("/api/v1/namespaces/sel/configmaps?fieldSelector=spec.foo%3Dx")
    assert bad.status_code == 400


def test_paging_with_limit_and_continue(api: httpx.Client) -> None:
    create_ns(api, "pages")
    # kube-root-ca.crt is in every namespace; it sorts after the a* pages.
    eventually(
        lambda: api.get("/api/v1/namespaces/pages/configmaps/kube-root-ca.crt").status_code == 200
    )
    for i in range(5):
        api.post("/api/v1/namespaces/pages/configmaps", json=cm(f"a{i}", {}))
    first = api.get("/api/v1/namespaces/pages/configmaps?limit=2").json()
    assert [i["metadata"]["name"] for i in first["items"]] == ["a0", "a1"]
    assert first["metadata"]["remainingItemCount"] == 4
    token = first["metadata"]["continue"]
    second = api.get(f"/api/v1/namespaces/pages/configmaps?limit=2&continue={token}").json()
    assert [i["metadata"]["name"] for i in second["items"]] == ["a2", "a3"]
    third = api.get(
        f"/api/v1/namespaces/pages/configmaps?limit=2&continue={second['metadata']['continue']}"
    ).json()
    assert [i["metadata"]["name"] for i in third["items"]] == ["a4", "kube-root-ca.crt"]
    assert "continue" not in third["metadata"]


# --- watch ----------------------------------------------------------------------------------------


def read_events(api: httpx.Client, path: str, count: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    with api.stream("GET", path) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line:
                events.append(json.loads(line))
            if len(events) == count:
                break
    return events


def test_watch_resumes_from_resource_version(api: httpx.Client) -> None:
    create_ns(api, "watched")
    first = api.post("/api/v1/namespaces/watched/configmaps", json=cm("w", {"v": "1"})).json()
    rv = first["metadata"]["resourceVersion"]
    api.patch(
        "/api/v1/namespaces/watched/configmaps/w",
        content=b'{"data":{"v":"2"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    api.delete("/api/v1/namespaces/watched/configmaps/w")
    events = read_events(
        api, f"/api/v1/namespaces/watched/configmaps?watch=true&resourceVersion={rv}", 2
    )
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["data"] == {"v": "2"}


def test_watch_from_now_sends_existing_as_added(api: httpx.Client) -> None:
    events = read_events(api, "/api/v1/namespaces/default/services?watch=true", 1)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "kubernetes"


def test_watch_initial_events_end_with_bookmark(api: httpx.Client) -> None:
    events = read_events(
        api,
        "/api/v1/namespaces/default/services?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
        2,
    )
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_watch_with_label_selector_sees_objects_leave(api: httpx.Client) -> None:
    create_ns(api, "leaving")
    created = api.post(
        "/api/v1/namespaces/leaving/configmaps", json=cm("l", {}, labels={"on": "yes"})
    ).json()
    rv = created["metadata"]["resourceVersion"]
    api.patch(
        "/api/v1/namespaces/leaving/configmaps/l",
        content=b'{"metadata":{"labels":{"on":"no"}}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    events = read_events(
        api,
        f"/api/v1/namespaces/leaving/configmaps?watch=true&labelSelector=on%3Dyes&resourceVersion={rv}",
        1,
    )
    assert events[0]["type"] == "DELETED"


# --- custom resources -----------------------------------------------------------------------------


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "shortNames": ["wd"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.size",
                        "statusReplicasPath": ".status.size",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "properties": {
                                    "size": {"type": "integer", "minimum": 0, "maximum": 10},
                                    "color": {
                                        "type": "string",
                                        "enum": ["red", "blue"],
                                        "default": "red",
                                    },
                                    "extra": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                    },
                                },
                            },
                            "status": {
                                "type": "object",
                                "properties": {"size": {"type": "integer"}},
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_crd_lifecycle(api: httpx.Client) -> None:
    r = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD)
    assert r.status_code == 201, r.text

    def established() -> bool:
        crd = api.get(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"
        ).json()
        return any(
            c["type"] == "Established" and c["status"] == "True"
            for c in crd.get("status", {}).get("conditions", [])
        )

    eventually(established)
    resources = eventually(lambda: api.get("/apis/example.com/v1").json().get("resources"))
    assert {"widgets", "widgets/status", "widgets/scale"} <= {r["name"] for r in resources}
    create_ns(api, "crs")
    base = "/apis/example.com/v1/namespaces/crs/widgets"
    created = api.post(
        base, json=widget("w1", {"size": 3, "unknown": 1, "extra": {"free": {"form": True}}})
    )
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert spec == {
        "size": 3,
        "color": "red",
        "extra": {"free": {"form": True}},
    }  # pruned and defaulted
    assert created.json()["metadata"]["generation"] == 1
    invalid = api.post(base, json=widget("w2", {"size": 11, "color": "green"}))
    assert invalid.status_code == 422
    causes = {c["field"]: c["message"] for c in invalid.json()["details"]["causes"]}
    assert "spec.size" in causes and "spec.color" in causes
    missing = api.post(base, json=widget("w3", {}))
    assert missing.status_code == 422
    assert missing.json()["details"]["causes"][0]["field"] == "spec.size"
    scale = api.get(f"{base}/w1/scale").json()
    assert scale["spec"]["replicas"] == 3
    r = api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
    assert r.status_code in (200, 202)
    eventually(
        lambda: (
            api.get(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com"
            ).status_code
            == 404
        )
    )
    assert api.get(base).status_code == 404


# --- admission: scoped ResourceQuotas ------------------------------------------------------------

EXCEEDED = "exceeded quota: {}, requested: pods=1, used: pods=1, limited: pods=1"


def quota_pod(name: str, resources: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": "nginx:1.29"}
    if resources:
        container["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [container], "terminationGracePeriodSeconds": 0,
                     **spec}}  # fmt: skip


def post_quota(
    api: httpx.Client, ns: str, name: str, query: str = "", **spec: Any
) -> httpx.Response:
    body = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec}
    return api.post(f"/api/v1/namespaces/{ns}/resourcequotas{query}", json=body)


def pod_answer(api: httpx.Client, ns: str, body: dict[str, Any]) -> tuple[int, str]:
    made = api.post(f"/api/v1/namespaces/{ns}/pods", json=body)
    return made.status_code, made.json().get("message", "")


def quota_used(api: httpx.Client, ns: str, name: str, want: dict[str, str]) -> None:
    path = f"/api/v1/namespaces/{ns}/resourcequotas/{name}"
    eventually(lambda: api.get(path).json().get("status", {}).get("used") == want)


def test_a_best_effort_quota_refuses_a_second_best_effort_pod_only(api: httpx.Client) -> None:
    create_ns(api, "quota-best-effort")
    ns = "quota-best-effort"
    assert post_quota(api, ns, "be", hard={"pods": "1"}, scopes=["BestEffort"]).status_code == 201
    assert pod_answer(api, ns, quota_pod("first"))[0] == 201
    assert pod_answer(api, ns, quota_pod("second")) == (
        403, f'pods "second" is forbidden: {EXCEEDED.format("be")}'
    )  # fmt: skip
    sized = {"requests": {"cpu": "100m", "memory": "64Mi"}}
    assert pod_answer(api, ns, quota_pod("sized", sized))[0] == 201
    quota_used(api, ns, "be", {"pods": "1"})


def test_a_priority_class_scope_selector_counts_that_class_only(api: httpx.Client) -> None:
    create_ns(api, "quota-priority")
    ns = "quota-priority"
    made = api.post("/apis/scheduling.k8s.io/v1/priorityclasses", json={
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "quota-high"}, "value": 1000})  # fmt: skip
    assert made.status_code == 201, made.text
    selector = {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["quota-high"]}]}  # fmt: skip
    made = post_quota(api, ns, "high", hard={"pods": "1", "requests.cpu": "1"},
                      scopeSelector=selector)  # fmt: skip
    assert made.status_code == 201, made.text
    sized = {"requests": {"cpu": "200m"}}
    assert pod_answer(api, ns, quota_pod("h1", sized, priorityClassName="quota-high"))[0] == 201
    assert pod_answer(api, ns, quota_pod("h2", sized, priorityClassName="quota-high")) == (
        403, f'pods "h2" is forbidden: {EXCEEDED.format("high")}'
    )  # fmt: skip
    # No class: outside the scope, so it need not state the requests.cpu the quota tracks.
    assert pod_answer(api, ns, quota_pod("plain"))[0] == 201
    quota_used(api, ns, "high", {"pods": "1", "requests.cpu": "200m"})


CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


def test_priority_admission_resolves_a_pods_class_and_refuses_a_missing_one(
    api: httpx.Client,
) -> None:
    """kube-apiserver's Priority plugin: the class's value and preemption policy in the
    pod's spec, the system classes there from the start, a missing class refused (dry
    runs too) with the plugin's 403 Status."""
    create_ns(api, "priority-admission")
    ns = "priority-admission"
    listed = {c["metadata"]["name"]: c["value"] for c in api.get(CLASSES).json()["items"]}
    assert listed["system-node-critical"] == 2000001000
    assert listed["system-cluster-critical"] == 2000000000
    made = api.post(CLASSES, json={
        "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "admission-batch"}, "value": 50, "preemptionPolicy": "Never"})  # fmt: skip
    assert made.status_code == 201, made.text
    made = api.post(f"/api/v1/namespaces/{ns}/pods",
                    json=quota_pod("job", priorityClassName="admission-batch"))  # fmt: skip
    assert made.status_code == 201, made.text
    assert (made.json()["spec"]["priority"], made.json()["spec"]["preemptionPolicy"]) == (
        50,
        "Never",
    )
    plain = api.post(f"/api/v1/namespaces/{ns}/pods", json=quota_pod("plain")).json()["spec"]
    assert (plain["priority"], plain["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    for query in ("?dryRun=All", ""):
        refused = api.post(f"/api/v1/namespaces/{ns}/pods{query}",
                           json=quota_pod("web", priorityClassName="ghost"))  # fmt: skip
        assert refused.status_code == 403
        assert refused.json() == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'pods "web" is forbidden: no PriorityClass with name ghost was found',
            "reason": "Forbidden", "details": {"name": "web", "kind": "pods"}, "code": 403,
        }  # fmt: skip
    assert api.get(f"/api/v1/namespaces/{ns}/pods/web").status_code == 404
    stated = api.post(f"/api/v1/namespaces/{ns}/pods", json=quota_pod("stated", priority=9))
    assert stated.status_code == 403
    assert stated.json()["message"] == (
        'pods "stated" is forbidden: the integer value of priority (9) must not be provided in '
        "pod spec; priority admission controller computed 0 from the given PriorityClass name"
    )
    deleted = api.delete(f"{CLASSES}/system-cluster-critical")
    assert deleted.status_code == 403
    assert deleted.json()["message"] == (
        'priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: this is a '
        "system priority class and cannot be deleted"
    )


def test_one_priority_class_at_most_is_the_global_default(api: httpx.Client) -> None:
    """The default class names itself into a pod naming none; a second default is refused."""
    create_ns(api, "priority-default")
    ns = "priority-default"

    def post_class(name: str, value: int) -> httpx.Response:
        return api.post(CLASSES, json={
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, "globalDefault": True})  # fmt: skip

    assert post_class("usual-default", 7).status_code == 201
    try:
        second = post_class("other-default", 8)
        assert second.status_code == 403
        assert second.json()["message"] == (
            'priorityclasses.scheduling.k8s.io "other-default" is forbidden: PriorityClass '
            "usual-default is already marked as default. Only one default can exist"
        )
        made = api.post(f"/api/v1/namespaces/{ns}/pods", json=quota_pod("plain")).json()
        assert (made["spec"]["priorityClassName"], made["spec"]["priority"]) == ("usual-default", 7)
    finally:  # the module's other tests share the cluster
        assert api.delete(f"{CLASSES}/usual-default").status_code == 200


def test_a_terminating_quota_counts_pods_with_an_active_deadline(api: httpx.Client) -> None:
    create_ns(api, "quota-terminating")
    ns = "quota-terminating"
    assert (
        post_quota(api, ns, "batch", hard={"pods": "1"}, scopes=["Terminating"]).status_code == 201
    )
    assert pod_answer(api, ns, quota_pod("job1", activeDeadlineSeconds=3600))[0] == 201
    assert pod_answer(api, ns, quota_pod("job2", activeDeadlineSeconds=3600)) == (
        403, f'pods "job2" is forbidden: {EXCEEDED.format("batch")}'
    )  # fmt: skip
    assert pod_answer(api, ns, quota_pod("server"))[0] == 201
    quota_used(api, ns, "batch", {"pods": "1"})


def test_a_quota_its_scopes_cannot_track_is_refused_on_a_dry_run_too(api: httpx.Client) -> None:
    create_ns(api, "quota-invalid")
    ns = "quota-invalid"
    for query in ("", "?dryRun=All"):
        made = post_quota(api, ns, "wrong", query, hard={"pods": "1", "requests.cpu": "1"},
                          scopes=["BestEffort"])  # fmt: skip
        assert made.status_code == 422, made.text
        assert made.json()["message"] == (
            'ResourceQuota "wrong" is invalid: spec.scopes: Invalid value: ["BestEffort"]: '
            "unsupported scope applied to resource"
        )
    made = post_quota(api, ns, "pair", hard={"pods": "1"}, scopes=["Terminating", "NotTerminating"])
    assert made.status_code == 422, made.text
    assert made.json()["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.scopes",
        "message": 'Invalid value: ["Terminating","NotTerminating"]: conflicting scopes',
    }]  # fmt: skip
