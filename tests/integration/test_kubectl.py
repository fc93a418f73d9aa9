"""kubectl, the reference client, against the local cluster."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from typing import Any

import pytest

pytestmark = pytest.mark.integration

MANIFEST = textwrap.dedent(
    """
    apiVersion: v1
    kind: Namespace
    metadata:
      name: kc
    ---
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      namespace: kc
    data:
      color: blue
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
      namespace: kc
    spec:
      replicas: 2
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
          - name: web
            image: nginx:1.29
            ports:
            - containerPort: 80
    """
)


EVENTS_V1 = textwrap.dedent(
    """
    apiVersion: events.k8s.io/v1
    kind: Event
    metadata: {name: by-v1, namespace: default}
    regarding: {kind: ConfigMap, name: evented, namespace: default, apiVersion: v1}
    note: made through v1
    reason: Noticed
    type: Normal
    action: Notice
    eventTime: "2026-01-01T00:00:00.000000Z"
    reportingController: tests/kubectl
    reportingInstance: tests
    """
)


def test_api_resources(cluster: Any) -> None:
    out = cluster.kubectl("api-resources").stdout
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert (
        "deployments" in lines
        and "deploy" in lines["deployments"]
        and "apps/v1" in lines["deployments"]
    )
    assert "customresourcedefinitions" in lines
    assert "namespaces" in lines and "false" in lines["namespaces"].lower()
    assert "events.k8s.io/v1" in out  # served over core Events' storage, as kube-apiserver does
    cluster.kubectl("create", "configmap", "evented")
    cluster.kubectl("create", "-f", "-", input=EVENTS_V1)
    core = json.loads(cluster.kubectl("get", "events", "by-v1", "-o", "json").stdout)
    assert (core["involvedObject"]["name"], core["message"]) == ("evented", "made through v1")
    listed = cluster.kubectl("get", "events.v1.events.k8s.io", "-A", "-o", "json").stdout
    (new,) = [e for e in json.loads(listed)["items"] if e["metadata"]["name"] == "by-v1"]
    assert (new["apiVersion"], new["note"]) == ("events.k8s.io/v1", "made through v1")
    regarding = ["get", "events.v1.events.k8s.io", "--field-selector=regarding.name=evented"]
    assert cluster.kubectl(*regarding, "-o", "name").stdout.split() == ["event.events.k8s.io/by-v1"]
    assert "made through v1" in cluster.kubectl("events", "--for", "configmap/evented").stdout
    # A node's joining events, its kubelet's (by the node's name for uid) and the node
    # controller's, as `kubectl describe node` finds them.
    described = cluster.kubectl("describe", "node", "node-1").stdout.partition("Events:")[2]
    reasons = [line.split()[1] for line in described.splitlines()[3:] if line.strip()]
    assert {"Starting", "NodeHasSufficientMemory", "NodeReady", "RegisteredNode"} <= set(reasons)


def test_get_namespaces(cluster: Any) -> None:
    out = cluster.kubectl("get", "namespaces").stdout
    assert out.split()[:3] == ["NAME", "STATUS", "AGE"]
    assert "default" in out and "kube-system" in out and "Active" in out
    names = json.loads(cluster.kubectl("get", "ns", "-o", "json").stdout)
    assert {"default", "kube-system", "kube-public"} <= {
        i["metadata"]["name"] for i in names["items"]
    }


def test_server_side_apply_then_get_diff_delete(cluster: Any) -> None:
    out = cluster.kubectl("apply", "--server-side", "-f", "-", input=MANIFEST).stdout
    assert "namespace/kc serverside-applied" in out
    assert "deployment.apps/web serverside-applied" in out
    deployment = json.loads(
        cluster.kubectl(
            "get", "deploy", "web", "-n", "kc", "-o", "json", "--show-managed-fields"
        ).stdout
    )
    assert deployment["spec"]["replicas"] == 2
    assert deployment["metadata"]["managedFields"][0]["manager"] == "kubectl"
    assert deployment["metadata"]["managedFields"][0]["operation"] == "Apply"

    # Re-applying the same manifest changes nothing (once the controllers are done with it).
    cluster.kubectl("rollout", "status", "deployment/web", "-n", "kc", "--timeout=30s")
    deployment = json.loads(
        cluster.kubectl("get", "deploy", "web", "-n", "kc", "-o", "json").stdout
    )
    rv = deployment["metadata"]["resourceVersion"]
    cluster.kubectl("apply", "--server-side", "-f", "-", input=MANIFEST)
    again = json.loads(cluster.kubectl("get", "deploy", "web", "-n", "kc", "-o", "json").stdout)
    assert again["metadata"]["resourceVersion"] == rv

    changed = MANIFEST.replace("replicas: 2", "replicas: 4")
    diff = cluster.kubectl("diff", "--server-side", "-f", "-", input=changed, check=False)
    assert diff.returncode == 1, diff.stderr  # 1 means "differences found"
    assert "-  replicas: 2" in diff.stdout and "+  replicas: 4" in diff.stdout

    dry = cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=changed).stdout
    assert "(server dry run)" in dry
    assert (
        json.loads(cluster.kubectl("get", "deploy", "web", "-n", "kc", "-o", "json").stdout)[
            "spec"
        ]["replicas"]
        == 2
    )

    out = cluster.kubectl("delete", "configmap", "settings", "-n", "kc").stdout
    assert 'configmap "settings" deleted' in out
    missing = cluster.kubectl("get", "configmap", "settings", "-n", "kc", check=False)
    assert missing.returncode == 1 and 'configmaps "settings" not found' in missing.stderr


def test_client_side_apply_uses_strategic_merge(cluster: Any) -> None:
    manifest = MANIFEST.replace("name: kc", "name: kc-csa").replace(
        "namespace: kc", "namespace: kc-csa"
    )
    cluster.kubectl("apply", "-f", "-", input=manifest)
    changed = manifest.replace("image: nginx:1.29", "image: nginx:1.30")
    out = cluster.kubectl("apply", "-f", "-", input=changed).stdout
    assert "deployment.apps/web configured" in out
    image = cluster.kubectl(
        "get",
        "deploy",
        "web",
        "-n",
        "kc-csa",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ).stdout
    assert image == "nginx:1.30"


def test_validation_error_reaches_kubectl(cluster: Any) -> None:
    bad = (
        MANIFEST.replace("replicas: 2", "replicas: -3")
        .replace("name: kc", "name: kc-bad")
        .replace("namespace: kc", "namespace: kc-bad")
    )
    result = cluster.kubectl("apply", "--server-side", "-f", "-", input=bad, check=False)
    assert result.returncode != 0
    assert "spec.replicas: Invalid value: -3: must be greater than or equal to 0" in result.stderr
    # A typo in a manifest: kubectl asks for strict field validation, and shows the server's
    # words, which name the kind as kube-apiserver's do.
    typo = MANIFEST.replace("replicas: 2", "replica: 2").replace("name: kc", "name: kc-typo")
    typo = typo.replace("namespace: kc", "namespace: kc-typo")
    result = cluster.kubectl("apply", "-f", "-", input=typo, check=False)
    assert (
        'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" '
        'cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica"'
    ) in result.stderr


def test_a_kind_no_crd_defines_gets_kubectls_own_message(cluster: Any) -> None:
    """kubectl falls back to /openapi/v2 in protobuf for a kind /openapi/v3 lacks (a custom
    object applied in one file with its CRD), then leaves the answer to the server."""
    thing = "apiVersion: nope.example.com/v1\nkind: Thing\nmetadata:\n  name: x\n"
    result = cluster.kubectl("apply", "-f", "-", input=thing, check=False)
    assert result.returncode != 0
    assert 'no matches for kind "Thing" in version "nope.example.com/v1"' in result.stderr
    assert "ensure CRDs are installed first" in result.stderr


def test_wait_for_condition_on_crd(cluster: Any) -> None:
    crd = textwrap.dedent(
        """
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata:
          name: gadgets.example.org
        spec:
          group: example.org
          scope: Cluster
          names: {plural: gadgets, singular: gadget, kind: Gadget}
          versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec:
                    type: object
                    properties:
                      size: {type: integer}
        """
    )
    cluster.kubectl("apply", "--server-side", "-f", "-", input=crd)
    out = cluster.kubectl(
        "wait", "--for=condition=Established", "crd/gadgets.example.org", "--timeout=30s"
    ).stdout
    assert "condition met" in out
    gadget = "apiVersion: example.org/v1\nkind: Gadget\nmetadata: {name: g1}\nspec: {size: 2}\n"
    cluster.kubectl("apply", "--server-side", "-f", "-", input=gadget)
    assert cluster.kubectl("get", "gadgets", "g1", "-o", "jsonpath={.spec.size}").stdout == "2"


def test_explain(cluster: Any) -> None:
    out = cluster.kubectl("explain", "deployment.spec.replicas").stdout
    assert "KIND:" in out and "Deployment" in out
    assert "replicas" in out and "integer" in out


def test_typed_create_subcommands_send_protobuf_and_work(cluster: Any) -> None:
    # kubectl's `create configmap / secret / namespace / serviceaccount` write protobuf bodies.
    cluster.kubectl("create", "namespace", "pb")
    cluster.kubectl("create", "configmap", "settings", "-n", "pb", "--from-literal=mode=prod")
    cluster.kubectl("create", "secret", "generic", "creds", "-n", "pb", "--from-literal=pw=hunter2")
    cluster.kubectl("create", "serviceaccount", "runner", "-n", "pb")
    settings = json.loads(
        cluster.kubectl("get", "configmap", "settings", "-n", "pb", "-o", "json").stdout
    )
    assert (settings["metadata"]["namespace"], settings["data"]) == ("pb", {"mode": "prod"})
    creds = json.loads(cluster.kubectl("get", "secret", "creds", "-n", "pb", "-o", "json").stdout)
    assert (creds["type"], creds["data"]) == ("Opaque", {"pw": "aHVudGVyMg=="})
    namespace = json.loads(cluster.kubectl("get", "namespace", "pb", "-o", "json").stdout)
    assert namespace["spec"] == {"finalizers": ["kubernetes"]}
    assert cluster.kubectl(
        "get", "serviceaccount", "runner", "-n", "pb", "-o", "name"
    ).stdout.strip() == ("serviceaccount/runner")


def test_a_protobuf_body_of_an_unsupported_kind_is_refused_with_415(cluster: Any) -> None:
    # No kubectl command sends a CustomResourceDefinition as protobuf; a Go client could.
    def field(number: int, data: bytes) -> bytes:  # a length-delimited field, short data
        return bytes([number << 3 | 2, len(data)]) + data

    type_meta = field(1, b"apiextensions.k8s.io/v1") + field(2, b"CustomResourceDefinition")
    with cluster.http() as api:
        r = api.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            content=b"k8s\x00" + field(1, type_meta) + field(2, b""),
            headers={"Content-Type": "application/vnd.kubernetes.protobuf"},
        )
    assert r.status_code == 415
    assert "only for the built-in kinds of v1, apps/v1" in r.json()["message"]
    assert (
        "not CustomResourceDefinition (apiextensions.k8s.io/v1); send JSON" in r.json()["message"]
    )


def test_auth_can_i_and_whoami(cluster: Any) -> None:
    # The local cluster's one credential is a cluster administrator (system:masters).
    assert cluster.kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    assert cluster.kubectl("auth", "can-i", "delete", "nodes", "-A").stdout.strip() == "yes"
    listed = cluster.kubectl("auth", "can-i", "--list").stdout.splitlines()
    assert listed[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert listed[1].split() == ["*.*", "[]", "[]", "[*]"]
    who = json.loads(cluster.kubectl("auth", "whoami", "-o", "json").stdout)
    assert who["kind"] == "SelfSubjectReview"
    assert who["status"]["userInfo"]["groups"] == ["system:masters", "system:authenticated"]
    with cluster.http() as api:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "secrets"}},
        }
        r = api.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review)
        assert r.status_code == 201
        assert r.json()["status"] == {"allowed": True}
        assert r.json()["spec"] == review["spec"]
        listing = api.get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        assert listing.status_code == 405


def test_exec_attach_and_port_forward_fail_at_once_with_a_clear_message(cluster: Any) -> None:
    # Simulated pods run no processes: these fail fast, saying why (and never hang).
    cluster.kubectl("run", "shell", "--image=nginx:1.29")
    cluster.kubectl("wait", "--for=condition=Ready", "pod/shell", "--timeout=30s")
    reason = "the local cluster's pods are simulated: no container process runs"
    execd = cluster.kubectl("exec", "shell", "--", "ls", check=False)
    assert execd.returncode != 0
    assert f'Error from server (BadRequest): cannot exec in pod "shell": {reason}' in execd.stderr
    forwarded = cluster.kubectl("port-forward", "pod/shell", "0:80", check=False)
    assert forwarded.returncode != 0
    assert f'cannot port-forward to pod "shell": {reason}' in forwarded.stderr
    attached = cluster.kubectl("attach", "shell", check=False)
    assert attached.returncode != 0 and "cannot attach to pod" in attached.stderr
    missing = cluster.kubectl("exec", "nobody", "--", "ls", check=False)
    assert 'pods "nobody" not found' in missing.stderr
    # The API server's proxy (`kubectl proxy`, the CoreDNS URL `kubectl cluster-info` prints):
    # a 503 saying the same, for a pod, a service (by `[scheme:]name[:port]`) and a node.
    for path, what in [
        ("namespaces/default/pods/shell:80/proxy/", 'pod "shell:80"'),
        ("namespaces/kube-system/services/kube-dns:dns/proxy/", 'service "kube-dns:dns"'),
    ]:
        proxied = cluster.kubectl("get", "--raw", f"/api/v1/{path}", check=False)
        assert f"Error from server (ServiceUnavailable): cannot proxy to {what}: {reason}" in (
            proxied.stderr
        )
    node = cluster.kubectl("get", "--raw", "/api/v1/nodes/node-1/proxy/metrics", check=False)
    assert "nodes are simulated: no kubelet serves" in node.stderr
    gone = cluster.kubectl(
        "get", "--raw", "/api/v1/namespaces/default/services/no/proxy/", check=False
    )
    assert 'services "no" not found' in gone.stderr
    pods = {
        r["name"]: r
        for r in json.loads(cluster.kubectl("get", "--raw", "/api/v1").stdout)["resources"]
    }
    assert pods["pods/exec"]["verbs"] == ["create", "get"]
    assert pods["pods/portforward"]["verbs"] == ["create", "get"]
    assert pods["pods/proxy"]["verbs"] == ["create", "delete", "get", "patch", "update"]
    # The upgrades kubectl tried (WebSocket, then SPDY) left no ERROR in the server's log.
    assert "handshake" not in (cluster.info.folder / "server.log").read_text()


def test_debug_adds_an_ephemeral_container_the_kubelet_runs(cluster: Any) -> None:
    # kubectl debug writes pods/NAME/ephemeralcontainers; the kubelet runs the container. The
    # attach `-i` asks for then fails as exec does, and kubectl shows the container's log.
    cluster.kubectl("run", "target", "--image=nginx:1.29")
    cluster.kubectl("wait", "--for=condition=Ready", "pod/target", "--timeout=30s")
    debug = ("debug", "target", "--image=busybox", "--profile=general")
    shell = cluster.kubectl(*debug, "-i", "-c", "shell", "--", "sh", input="")
    assert 'cannot attach to pod "target"' in shell.stderr
    assert "INFO running sh" in shell.stdout
    cluster.kubectl(*debug, "-c", "once", "--", "sh", "-c", "echo hi")
    done = "jsonpath={.status.ephemeralContainerStatuses[1].state.terminated.reason}=Completed"
    cluster.kubectl("wait", "pod/target", f"--for={done}", "--timeout=10s")
    pod = json.loads(cluster.kubectl("get", "pod", "target", "-o", "json").stdout)
    statuses = pod["status"]["ephemeralContainerStatuses"]
    assert [(s["name"], list(s["state"]), s["ready"]) for s in statuses] == [
        ("shell", ["running"], False),
        ("once", ["terminated"], False),
    ]
    target = cluster.kubectl(*debug, "-c", "peek", "--target=nobody", "--", "sh", check=False)
    assert (
        'The Pod "target" is invalid: spec.ephemeralContainers[2].targetContainerName: '
        'Not found: "nobody"'
    ) in target.stderr
    with cluster.http() as api:
        path = "/api/v1/namespaces/default/pods/target"
        change = [{"op": "replace", "path": "/spec/ephemeralContainers/0/image", "value": "x"}]
        json_patch = {"Content-Type": "application/json-patch+json"}
        r = api.patch(path + "/ephemeralcontainers", json=change, headers=json_patch)
        assert r.status_code == 422
        assert r.json()["details"]["causes"][0] == {
            "reason": "FieldValueForbidden",
            "message": 'Forbidden: existing ephemeral containers "shell" may not be changed',
            "field": "spec.ephemeralContainers[shell]",
        }
        # The pod itself may not add one; a path nothing serves is a 404 with empty details
        # (kubectl debug reads them: it panicked on a 404 without).
        add = [{"op": "add", "path": "/spec/ephemeralContainers/-", "value": {"name": "x"}}]
        assert api.patch(path, json=add, headers=json_patch).status_code == 422
        assert api.get(path + "/nothing").json()["details"] == {}
        served = api.get("/openapi/v3/api/v1").json()["paths"]
        assert "patch" in served["/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers"]
    found = json.loads(cluster.kubectl("get", "--raw", "/api/v1").stdout)["resources"]
    ephemeral = next(r for r in found if r["name"] == "pods/ephemeralcontainers")
    assert ephemeral["verbs"] == ["get", "patch", "update"]


def test_endpoints_answer_with_their_deprecation_warning(cluster: Any) -> None:
    # kube-apiserver 1.33 deprecates v1 Endpoints: every request gets the warning, failed ones too.
    warning = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    listed = cluster.kubectl("get", "endpoints", "-A")
    assert listed.stderr.strip() == warning
    missing = cluster.kubectl("get", "endpoints", "nope", check=False)
    assert missing.stderr.splitlines() == [
        warning,
        'Error from server (NotFound): endpoints "nope" not found',
    ]
    assert cluster.kubectl("get", "endpointslices", "-A").stderr == ""


def test_logs_follow_the_running_container_until_it_ends(cluster: Any) -> None:
    # `kubectl logs -f` stays open while the container runs and ends with it, as a kubelet's
    # follow does: a Job's log ends with its exit line; a server's ends when its pod goes.
    script = "echo start; sleep 40"  # 2 s at speed 1
    cluster.kubectl("create", "job", "tick", "--image=busybox", "--", "sh", "-c", script)
    cluster.kubectl("wait", "--for=condition=Ready", "pod", "-l", "job-name=tick", "--timeout=30s")
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig)}
    # With --limit-bytes it follows too, and stops once it has that many, as a kubelet's.
    limit = len(cluster.kubectl("logs", "job/tick").stdout.encode()) + 10
    limited = ["kubectl", "logs", "-f", f"--limit-bytes={limit}", "job/tick"]
    with subprocess.Popen(limited, env=env, stdout=subprocess.PIPE) as limited_follower:
        whole = cluster.kubectl("logs", "-f", "job/tick").stdout
        assert limited_follower.communicate(timeout=15)[0] == whole.encode()[:limit]
    followed = whole.splitlines()
    assert followed[-1].endswith("INFO exiting with code 0"), followed
    cluster.kubectl("run", "server", "--image=nginx:1.29")
    cluster.kubectl("wait", "--for=condition=Ready", "pod/server", "--timeout=30s")
    command = ["kubectl", "logs", "-f", "pod/server"]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as follower:
        assert follower.stdout is not None
        assert "INFO starting nginx:1.29" in follower.stdout.readline()
        with pytest.raises(subprocess.TimeoutExpired):
            follower.wait(timeout=1)  # still following
        cluster.kubectl("delete", "pod", "server", "--wait=false")
        assert follower.wait(timeout=15) == 0


def test_get_componentstatuses_as_a_1_33_server_answers(cluster: Any) -> None:
    # `kubectl get cs`: deprecated, still served (get and list only), every part healthy.
    shown = cluster.kubectl("get", "cs")
    assert shown.stderr.strip() == "Warning: v1 ComponentStatus is deprecated in v1.19+"
    assert [line.split() for line in shown.stdout.splitlines()] == [
        ["NAME", "STATUS", "MESSAGE", "ERROR"],
        ["scheduler", "Healthy", "ok"],
        ["controller-manager", "Healthy", "ok"],
        ["etcd-0", "Healthy", "ok"],
    ]
    etcd = json.loads(cluster.kubectl("get", "componentstatus", "etcd-0", "-o", "json").stdout)
    assert etcd["conditions"] == [{"type": "Healthy", "status": "True", "message": "ok"}]
    refused = cluster.kubectl("delete", "cs", "etcd-0", check=False)
    assert "(MethodNotAllowed)" in refused.stderr
    # A list's selectors filter, as upstream's: they listed every part.
    by_name = cluster.kubectl("get", "cs", "--field-selector=metadata.name=etcd-0", "-o", "name")
    assert by_name.stdout.split() == ["componentstatus/etcd-0"]
    by_label = cluster.kubectl("get", "cs", "-l", "app=nothing", "-o", "name")
    assert by_label.stdout.split() == []
