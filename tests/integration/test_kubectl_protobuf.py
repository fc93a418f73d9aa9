"""kubectl's typed commands, which send protobuf bodies, against the local cluster.

For each command: kubectl really sends protobuf (its -v=9 log says so and holds the
bytes); those bytes decode to what `--dry-run=client -o json` prints for the same
command (Go's JSON of the object kubectl built); and the object the server stores from
them equals the one it stores from that JSON, sent by `kubectl create -f`.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from stackwright.localcluster.protobuf import decode

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from test_provider_kubeconfig import pem_pair

pytestmark = pytest.mark.integration

NS, JSON_NS = "pb", "pb-json"

#: (what the command creates, its kubectl arguments after `-n pb`), in the order they run.
COMMANDS: list[tuple[str, list[str]]] = [
    ("deployment/web", ["create", "deployment", "web", "--image=nginx:1.29", "--port=80", "--replicas=0"]),
    ("deployment/pair", ["create", "deployment", "pair", "--image=nginx", "--image=redis:7"]),
    ("job/once", ["create", "job", "once", "--image=busybox", "--", "sh", "-c", "echo hi"]),
    ("cronjob/tick", ["create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *", "--restart=OnFailure", "--", "date"]),
    ("job/manual", ["create", "job", "manual", "--from=cronjob/tick"]),
    ("service/web", ["create", "service", "clusterip", "web", "--tcp=80:8080", "--tcp=443:https"]),
    ("service/headless", ["create", "service", "clusterip", "headless", "--clusterip=None"]),
    ("service/np", ["create", "service", "nodeport", "np", "--tcp=80:http", "--node-port=30123"]),
    ("service/lb", ["create", "service", "loadbalancer", "lb", "--tcp=443:8443"]),
    ("service/ext", ["create", "service", "externalname", "ext", "--external-name=example.com"]),
    ("ingress/front", ["create", "ingress", "front", "--class=nginx", "--rule=shop.example.com/api*=web:80,tls=shop-cert", "--rule=/=web:http", "--default-backend=web:80", "--annotation=a=b"]),
    ("role/reader", ["create", "role", "reader", "--verb=get,list", "--resource=pods,deployments.apps", "--resource-name=web"]),
    ("rolebinding/readers", ["create", "rolebinding", "readers", "--role=reader", "--user=alice", "--group=devs", f"--serviceaccount={NS}:default"]),
    ("clusterrole/pb-nodes", ["create", "clusterrole", "pb-nodes", "--verb=get", "--resource=nodes", "--non-resource-url=/logs/*", "--verb=get"]),
    ("clusterrole/pb-agg", ["create", "clusterrole", "pb-agg", "--aggregation-rule=rbac.example.com/aggregate=true"]),
    ("clusterrolebinding/pb-nodes", ["create", "clusterrolebinding", "pb-nodes", "--clusterrole=pb-nodes", "--user=bob"]),
    ("poddisruptionbudget/half", ["create", "poddisruptionbudget", "half", "--selector=app=web", "--min-available=50%"]),
    ("poddisruptionbudget/none", ["create", "pdb", "none", "--selector=app=web", "--max-unavailable=0"]),
    ("priorityclass/pb-zero", ["create", "priorityclass", "pb-zero", "--value=0", "--description=zero", "--preemption-policy=Never"]),
    ("priorityclass/pb-high", ["create", "priorityclass", "pb-high", "--value=1000000"]),
    ("resourcequota/limits", ["create", "quota", "limits", "--hard=cpu=2,memory=1Gi,pods=10", "--scopes=NotBestEffort"]),
    ("secret/registry", ["create", "secret", "docker-registry", "registry", "--docker-server=reg.example.com", "--docker-username=u", "--docker-password=p"]),
    ("secret/plain", ["create", "secret", "generic", "plain", "--from-literal=pw=hunter2", "--type=Opaque"]),
    ("configmap/settings", ["create", "configmap", "settings", "--from-literal=mode=prod"]),
    ("serviceaccount/runner", ["create", "serviceaccount", "runner"]),
]  # fmt: skip

CLUSTER_SCOPED = ("clusterrole/", "clusterrolebinding/", "priorityclass/")


def _with_flag(args: list[str], *flags: str) -> list[str]:
    """`args` with `flags` placed before a `--` that starts the container command."""
    cut = args.index("--") if "--" in args else len(args)
    return [*args[:cut], *flags, *args[cut:]]


def _logged_body(stderr: str) -> tuple[str, bytes]:
    """The content type and bytes of the write kubectl logged at -v=9."""
    request = re.search(r'curl -v -X(?:POST|PUT) .*-H "Content-Type: ([^"]+)"', stderr)
    assert request, stderr[-3000:]
    dump = re.search(r'"Request Body" body=<\n(.*?)\n\s*>', stderr, re.S)
    assert dump, stderr[-3000:]
    data = bytearray()
    for line in dump.group(1).splitlines():
        data.extend(bytes.fromhex(line.strip()[10:58].replace(" ", "")))
    return request.group(1), bytes(data)


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """What a client asked for: not the server's bookkeeping, status or allocations."""
    uid = obj["metadata"]["uid"]  # a Job's generated selector and labels carry it
    obj = json.loads(json.dumps(obj).replace(uid, "<uid>"))
    out = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    meta = obj["metadata"]
    out["metadata"] = {k: meta[k] for k in ("labels", "annotations") if k in meta}
    owners = [{k: v for k, v in o.items() if k != "uid"} for o in meta.get("ownerReferences", [])]
    if owners:
        out["metadata"]["ownerReferences"] = owners
    spec = out.get("spec")
    if obj["kind"] == "Service" and isinstance(spec, dict):
        spec = out["spec"] = copy.deepcopy(spec)
        for key in ("clusterIP", "clusterIPs"):
            spec.pop(key, None)  # allocated
        for port in spec.get("ports", []):
            port.pop("nodePort", None)  # allocated, and node ports are cluster-wide
    return out


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = pem_pair("shop.example.com")
    (folder / "tls.crt").write_bytes(cert)
    (folder / "tls.key").write_bytes(key)
    return folder / "tls.crt", folder / "tls.key"


def test_typed_commands_send_protobuf_that_stores_what_their_json_would(
    cluster: Any, tls_files: tuple[Path, Path]
) -> None:
    cert, key = tls_files
    commands = [
        *COMMANDS,
        (
            "secret/shop-cert",
            ["create", "secret", "tls", "shop-cert", f"--cert={cert}", f"--key={key}"],
        ),
    ]
    for namespace in (NS, JSON_NS):
        cluster.kubectl("create", "namespace", namespace)
    for what, args in commands:
        dry = cluster.kubectl("-n", NS, *_with_flag(args, "--dry-run=client", "-o", "json"))
        want = json.loads(dry.stdout)
        sent = cluster.kubectl("-n", NS, *_with_flag(args, "-v=9"))
        content_type, body = _logged_body(sent.stderr)
        assert content_type == "application/vnd.kubernetes.protobuf", what
        decoded = decode(body)
        decoded.pop("status", None)  # servers write it (and kubectl's dry run may not print it)
        assert decoded == {k: v for k, v in want.items() if k != "status"}, what

        as_json = copy.deepcopy(want)
        if what.startswith(CLUSTER_SCOPED):
            as_json["metadata"]["name"] += "-json"
        else:
            as_json["metadata"]["namespace"] = JSON_NS
        for port in as_json.get("spec", {}).get("ports", []) if what.startswith("service/") else []:
            port.pop("nodePort", None)  # node ports are cluster-wide
        for owner in as_json["metadata"].get("ownerReferences", []):
            kind = owner["kind"].lower()
            owner["uid"] = cluster.kubectl(
                "-n", JSON_NS, "get", f"{kind}/{owner['name']}", "-o", "jsonpath={.metadata.uid}"
            ).stdout
        cluster.kubectl("create", "-f", "-", input=json.dumps(as_json))
        scope = [] if what.startswith(CLUSTER_SCOPED) else ["-n", NS]
        stored = json.loads(cluster.kubectl(*scope, "get", what, "-o", "json").stdout)
        json_what = f"{what}-json" if what.startswith(CLUSTER_SCOPED) else what
        json_scope = [] if what.startswith(CLUSTER_SCOPED) else ["-n", JSON_NS]
        from_json = json.loads(cluster.kubectl(*json_scope, "get", json_what, "-o", "json").stdout)
        assert _comparable(stored) == _comparable(from_json), what


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def test_create_token_issues_a_token_the_server_accepts_until_its_account_goes(
    cluster: Any,
) -> None:
    cluster.kubectl("create", "namespace", "tok")
    cluster.kubectl("-n", "tok", "create", "serviceaccount", "robot")
    cluster.kubectl("-n", "tok", "run", "holder", "--image=nginx")
    args = ["-n", "tok", "create", "token", "robot", "--duration=15m", "--audience=vault"]
    bound = ["--bound-object-kind=Pod", "--bound-object-name=holder"]
    sent = cluster.kubectl(*args, *bound, "-v=9")
    assert _logged_body(sent.stderr)[0] == "application/vnd.kubernetes.protobuf"
    token = sent.stdout.strip()
    claims = _claims(token)
    robot = json.loads(cluster.kubectl("-n", "tok", "get", "sa", "robot", "-o", "json").stdout)
    assert claims["sub"] == "system:serviceaccount:tok:robot"
    assert claims["aud"] == ["vault"]
    assert claims["exp"] - claims["iat"] == 900
    assert claims["kubernetes.io"]["serviceaccount"]["uid"] == robot["metadata"]["uid"]
    assert claims["kubernetes.io"]["pod"]["name"] == "holder"
    # A token for vault is vault's credential, not the API server's; one for the API
    # server's own audience (the default) is.
    assert "Unauthorized" in cluster.kubectl("--token", token, "get", "ns", check=False).stderr
    token = cluster.kubectl(*args[:5], *bound).stdout.strip()
    # Accepted as the account's user (which RBAC then grants only what is bound to it).
    who = cluster.kubectl("--token", token, "auth", "whoami", "-o", "jsonpath={.status.userInfo}")
    assert json.loads(who.stdout)["username"] == "system:serviceaccount:tok:robot"
    tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    assert "Unauthorized" in cluster.kubectl("--token", tampered, "get", "ns", check=False).stderr
    short = cluster.kubectl(*args[:5], "--duration=5m", check=False)
    assert (
        "spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes"
        in short.stderr
    )
    missing = cluster.kubectl("-n", "tok", "create", "token", "nobody", check=False)
    assert 'serviceaccounts "nobody" not found' in missing.stderr
    cluster.kubectl("-n", "tok", "delete", "sa", "robot")
    assert "Unauthorized" in cluster.kubectl("--token", token, "get", "ns", check=False).stderr


def test_drain_evicts_through_protobuf_evictions(cluster: Any) -> None:
    cluster.kubectl("create", "namespace", "drain")
    cluster.kubectl("-n", "drain", "create", "deployment", "app", "--image=nginx")
    cluster.kubectl("-n", "drain", "rollout", "status", "deployment/app", "--timeout=60s")
    (before,) = cluster.kubectl("-n", "drain", "get", "pods", "-o", "name").stdout.split()
    try:
        drained = cluster.kubectl(
            "drain", "node-1", "--ignore-daemonsets", "--force", "--timeout=60s", "-v=9"
        )
        assert f"{before} evicted" in drained.stdout
        assert "application/vnd.kubernetes.protobuf" in drained.stderr
    finally:
        cluster.kubectl("uncordon", "node-1")


def test_autoscale_creates_an_autoscaling_v1_hpa_served_from_v2_storage(cluster: Any) -> None:
    cluster.kubectl("create", "namespace", "hpa")
    cluster.kubectl("-n", "hpa", "create", "deployment", "web", "--image=nginx")
    args = ["-n", "hpa", "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=60"]
    sent = cluster.kubectl(*args, "-v=9")
    assert _logged_body(sent.stderr)[0] == "application/vnd.kubernetes.protobuf"
    v1 = "horizontalpodautoscalers.v1.autoscaling"
    served = json.loads(cluster.kubectl("-n", "hpa", "get", v1, "web", "-o", "json").stdout)
    assert served["apiVersion"] == "autoscaling/v1"
    assert served["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 5,
        "targetCPUUtilizationPercentage": 60,
    }
    stored = json.loads(cluster.kubectl("-n", "hpa", "get", "hpa", "web", "-o", "json").stdout)
    assert stored["apiVersion"] == "autoscaling/v2"
    cpu = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}
    assert stored["spec"]["metrics"] == [{"type": "Resource", "resource": cpu}]
    # A v2-only metric and behavior survive a v1 patch, which sees neither.
    memory = {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    cluster.kubectl(
        "-n", "hpa", "patch", "hpa", "web", "--type=merge",
        "-p", json.dumps({"spec": {"metrics": [stored["spec"]["metrics"][0], {"type": "Resource", "resource": memory}], "behavior": behavior}}),
    )  # fmt: skip
    patch = {"spec": {"targetCPUUtilizationPercentage": 75}}
    cluster.kubectl("-n", "hpa", "patch", v1, "web", "--type=merge", "-p", json.dumps(patch))
    stored = json.loads(cluster.kubectl("-n", "hpa", "get", "hpa", "web", "-o", "json").stdout)
    cpu["target"]["averageUtilization"] = 75
    assert stored["spec"]["metrics"] == [
        {"type": "Resource", "resource": cpu},
        {"type": "Resource", "resource": memory},
    ]
    assert stored["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    listed = json.loads(cluster.kubectl("-n", "hpa", "get", v1, "-o", "json").stdout)
    assert [i["apiVersion"] for i in listed["items"]] == ["autoscaling/v1"]
    assert "metrics" not in listed["items"][0]["spec"]


def test_a_v1_server_side_apply_keeps_the_metrics_a_v2_client_set(cluster: Any) -> None:
    # v2's spec.metrics is an atomic list: a v1 apply converted without the stored object
    # would replace the memory metric below with the one cpu metric v1 can say.
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    memory = {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}}
    v2 = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": ref, "maxReplicas": 4, "metrics": [{"type": "Resource", "resource": memory}],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}}},
    }  # fmt: skip
    cluster.kubectl("create", "-f", "-", input=json.dumps(v2))
    v1 = {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"scaleTargetRef": ref, "maxReplicas": 4, "targetCPUUtilizationPercentage": 70},
    }  # fmt: skip
    apply = ["apply", "--server-side", "--force-conflicts", "--field-manager=v1-tool", "-f", "-"]
    cluster.kubectl(*apply, input=json.dumps(v1))  # takes spec.metrics over from the creator
    stored = json.loads(cluster.kubectl("get", "hpa", "web", "-o", "json").stdout)
    cpu = {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}
    assert stored["spec"]["metrics"] == [
        {"type": "Resource", "resource": cpu},
        {"type": "Resource", "resource": memory},
    ]
    assert stored["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 30
