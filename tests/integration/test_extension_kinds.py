"""The kinds charts install around workloads, against the local cluster: discovery as a
1.33 server lists them, `kubectl apply / get / delete` of each, defaults and refusals in
the server's words, the "create a user with a CSR" flow, and a Stackwright program that
declares a webhook configuration, an APIService, a RuntimeClass and a PodTemplate."""

from __future__ import annotations

import base64
import datetime
import json
import os
import subprocess
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from test_cli_lifecycle import get
from test_cli_lifecycle import new_project as new_project  # the fixture

pytestmark = pytest.mark.integration

LiveCluster = Any

#: plural → (group/version, namespaced, short names, categories), as a 1.33 server lists them.
DISCOVERY = {
    "validatingwebhookconfigurations": (
        "admissionregistration.k8s.io/v1",
        False,
        "",
        "api-extensions",
    ),
    "mutatingwebhookconfigurations": (
        "admissionregistration.k8s.io/v1",
        False,
        "",
        "api-extensions",
    ),
    "validatingadmissionpolicies": ("admissionregistration.k8s.io/v1", False, "", "api-extensions"),
    "validatingadmissionpolicybindings": (
        "admissionregistration.k8s.io/v1",
        False,
        "",
        "api-extensions",
    ),
    "apiservices": ("apiregistration.k8s.io/v1", False, "", "api-extensions"),
    "runtimeclasses": ("node.k8s.io/v1", False, "", ""),
    "csidrivers": ("storage.k8s.io/v1", False, "", ""),
    "csinodes": ("storage.k8s.io/v1", False, "", ""),
    "volumeattachments": ("storage.k8s.io/v1", False, "", ""),
    "csistoragecapacities": ("storage.k8s.io/v1", True, "", ""),
    "podtemplates": ("v1", True, "", ""),
    "certificatesigningrequests": ("certificates.k8s.io/v1", False, "csr", ""),
    "flowschemas": ("flowcontrol.apiserver.k8s.io/v1", False, "", ""),
    "prioritylevelconfigurations": ("flowcontrol.apiserver.k8s.io/v1", False, "", ""),
    "customresourcedefinitions": ("apiextensions.k8s.io/v1", False, "crd,crds", "api-extensions"),
}

HOOK = """
  - name: check.example.com
    sideEffects: None
    admissionReviewVersions: [v1]
    clientConfig: {service: {name: hook, namespace: default}}
    rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
"""

MANIFEST = f"""
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: ext-vwc}}
webhooks:{HOOK}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: ext-mwc}}
webhooks:{HOOK}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: ext-vap}}
spec:
  matchConstraints:
    resourceRules: [{{operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}}]
  validations: [{{expression: "object.spec.replicas <= 5"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: ext-vapb}}
spec: {{policyName: ext-vap, validationActions: [Deny]}}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1beta1.metrics.k8s.io}}
spec:
  group: metrics.k8s.io
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  insecureSkipTLSVerify: true
  service: {{name: metrics-server, namespace: kube-system}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {{name: ext-gvisor}}
handler: runsc
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {{name: csi.example.com}}
spec: {{}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {{name: ext-node}}
spec: {{drivers: [{{name: csi.example.com, nodeID: a}}]}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {{name: ext-va}}
spec: {{attacher: csi.example.com, nodeName: ext-node, source: {{persistentVolumeName: pv1}}}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {{name: ext-cap, namespace: default}}
storageClassName: standard
capacity: 10Gi
---
apiVersion: v1
kind: PodTemplate
metadata: {{name: ext-tpl, namespace: default}}
template:
  metadata: {{labels: {{app: x}}}}
  spec: {{containers: [{{name: c, image: "nginx:1.29"}}]}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: ext-plc}}
spec: {{type: Limited, limited: {{limitResponse: {{type: Queuing, queuing: {{}}}}}}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: ext-fs}}
spec: {{priorityLevelConfiguration: {{name: ext-plc}}}}
"""

#: `kubectl get TYPE`'s header and first row, as a 1.33 server's printers give them.
TABLES = {
    "validatingwebhookconfigurations": ["NAME WEBHOOKS AGE", "ext-vwc 1"],
    "apiservices": [
        "NAME SERVICE AVAILABLE AGE",
        "v1beta1.metrics.k8s.io kube-system/metrics-server Unknown",
    ],
    "runtimeclasses": ["NAME HANDLER AGE", "ext-gvisor runsc"],
    "csidrivers": [
        "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE",
        "csi.example.com true false false <unset> false Persistent",
    ],
    "podtemplates": ["NAME CONTAINERS IMAGES POD LABELS", "ext-tpl c nginx:1.29 app=x"],
    "prioritylevelconfigurations": [
        "NAME TYPE NOMINALCONCURRENCYSHARES QUEUES HANDSIZE QUEUELENGTHLIMIT AGE",
        "ext-plc Limited 30 64 8 50",
    ],
}


def test_discovery_lists_the_kinds_as_a_real_server(cluster: LiveCluster) -> None:
    out = cluster.kubectl("api-resources", "-o", "wide").stdout
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    for plural, (version, namespaced, short, categories) in DISCOVERY.items():
        row = rows[plural].split()
        assert version in row and str(namespaced).lower() in row, rows[plural]
        assert (short in row) if short else row[1] == version, rows[plural]
        assert (categories in row) if categories else not row[-1].startswith("api-"), rows[plural]
        assert "create,delete,deletecollection,get,list,patch,update,watch" in rows[plural]


def test_apply_get_and_delete_each_kind(cluster: LiveCluster) -> None:
    applied = cluster.kubectl("apply", "-f", "-", input=MANIFEST).stdout
    assert applied.count(" created") == 13, applied
    for plural, (header, row) in TABLES.items():
        lines = cluster.kubectl("get", plural, "-n", "default").stdout.splitlines()
        assert " ".join(lines[0].split()) == header
        assert any(" ".join(line.split()).startswith(row) for line in lines[1:]), lines
    hook = json.loads(
        cluster.kubectl("get", "mutatingwebhookconfiguration", "ext-mwc", "-o", "json").stdout
    )
    (webhook,) = hook["webhooks"]
    assert {
        k: webhook[k]
        for k in ("failurePolicy", "matchPolicy", "timeoutSeconds", "reinvocationPolicy")
    } == {
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "timeoutSeconds": 10,
        "reinvocationPolicy": "Never",
    }
    assert webhook["clientConfig"]["service"]["port"] == 443 and webhook["rules"][0]["scope"] == "*"

    # Applied again, nothing changes. (kubectl still says `configured` for the webhook
    # configurations and the policy, whose atomic `rules` lists differ from the live ones by
    # the defaulted `scope`, and sends the patch, as against a real server.)
    def versions() -> list[str]:
        listed = cluster.kubectl("get", "-f", "-", "-o", "json", input=MANIFEST).stdout
        return [item["metadata"]["resourceVersion"] for item in json.loads(listed)["items"]]

    before = versions()
    cluster.kubectl("apply", "-f", "-", input=MANIFEST)
    assert versions() == before
    deleted = cluster.kubectl("delete", "-f", "-", input=MANIFEST).stdout
    assert deleted.count(" deleted") == 13, deleted
    left = cluster.kubectl("get", ",".join(DISCOVERY), "-A", "-o", "name").stdout.split()
    assert not [name for name in left if "ext-" in name or "example.com" in name], left


def test_refusals_name_the_fields_as_upstream(cluster: LiveCluster) -> None:
    bad = textwrap.dedent(
        """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingWebhookConfiguration
        metadata: {name: ext-bad}
        webhooks:
        - name: check
          admissionReviewVersions: [v1]
          clientConfig: {url: "https://a.example.com"}
        """
    )
    refused = cluster.kubectl("apply", "-f", "-", input=bad, check=False)
    assert refused.returncode == 1
    assert 'The ValidatingWebhookConfiguration "ext-bad" is invalid:' in refused.stderr
    assert (
        'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots'
        in refused.stderr
    )
    assert (
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"
        in refused.stderr
    )
    api = textwrap.dedent(
        """
        apiVersion: apiregistration.k8s.io/v1
        kind: APIService
        metadata: {name: v1.wrong.example.com}
        spec: {group: metrics.example.com, version: v1beta1, groupPriorityMinimum: 100, versionPriority: 100}
        """
    )
    refused = cluster.kubectl("apply", "-f", "-", input=api, check=False)
    assert (
        'metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: '
        '"v1beta1.metrics.example.com"'
    ) in refused.stderr


def _key_and_request(tmp: Path, user: str, group: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    (tmp / f"{user}.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, group),
            x509.NameAttribute(NameOID.COMMON_NAME, user),
        ]
    )
    request = (
        x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    )
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


def _csr(name: str, request: str, signer: str) -> str:
    return json.dumps(
        {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            # Whatever the body claims, the requester is who sent it.
            "spec": {
                "request": request,
                "signerName": signer,
                "expirationSeconds": 86400,
                "usages": ["client auth"],
                "username": "someone-else",
            },
        }
    )


def _wait_for_certificate(cluster: LiveCluster, name: str, within: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        csr = json.loads(cluster.kubectl("get", "csr", name, "-o", "json").stdout)
        if csr.get("status", {}).get("certificate") or time.monotonic() > deadline:
            return csr  # type: ignore[no-any-return]
        time.sleep(0.1)


def test_a_user_made_with_a_csr_can_sign_in(cluster: LiveCluster, tmp_path: Path) -> None:
    signer = "kubernetes.io/kube-apiserver-client"
    cluster.kubectl(
        "create", "-f", "-", input=_csr("jane", _key_and_request(tmp_path, "jane", "dev"), signer)
    )
    cluster.kubectl(
        "create", "-f", "-", input=_csr("joe", _key_and_request(tmp_path, "joe", "dev"), signer)
    )
    other = _csr("custom", _key_and_request(tmp_path, "custom", "dev"), "example.com/signer")
    cluster.kubectl("create", "-f", "-", input=other)
    pending = cluster.kubectl("get", "csr", "jane").stdout.splitlines()
    assert pending[0].split() == [
        "NAME",
        "AGE",
        "SIGNERNAME",
        "REQUESTOR",
        "REQUESTEDDURATION",
        "CONDITION",
    ]
    assert pending[1].split()[2:] == [signer, "kubernetes-admin", "24h", "Pending"]

    # kubectl sends the approval in protobuf, to the approval subresource.
    assert "approved" in cluster.kubectl("certificate", "approve", "jane", "custom").stdout
    assert "denied" in cluster.kubectl("certificate", "deny", "joe").stdout
    jane = _wait_for_certificate(cluster, "jane")
    (approved,) = jane["status"]["conditions"]
    assert approved["type"] == "Approved" and approved["reason"] == "KubectlApprove"
    assert approved["lastUpdateTime"] and approved["lastTransitionTime"]
    certificate = x509.load_pem_x509_certificate(base64.b64decode(jane["status"]["certificate"]))
    lifetime = certificate.not_valid_after_utc - certificate.not_valid_before_utc
    assert lifetime.total_seconds() == 86400 + 300  # backdated five minutes, as upstream
    (tmp_path / "jane.crt").write_bytes(base64.b64decode(jane["status"]["certificate"]))
    conditions = cluster.kubectl("get", "csr", "jane", "joe", "custom", "--no-headers").stdout
    assert [line.split()[-1] for line in conditions.splitlines()] == [
        "Approved,Issued",
        "Denied",
        "Approved",
    ]
    # Approved with jane, whose certificate the signer has issued since: a second more is
    # ample for it to issue one it should not (waiting out the 10 s cost the suite 10 s).
    assert "certificate" not in _wait_for_certificate(cluster, "custom", within=1)["status"]

    env = {**os.environ, "KUBECONFIG": "/dev/null"}
    whoami = subprocess.run(
        [
            "kubectl", "auth", "whoami", "-o", "json", f"--server={cluster.server}",
            f"--certificate-authority={cluster.ca}", f"--client-certificate={tmp_path / 'jane.crt'}",
            f"--client-key={tmp_path / 'jane.key'}",
        ],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    user = json.loads(whoami.stdout)["status"]["userInfo"]
    assert user["username"] == "jane" and "dev" in user["groups"]

    undo = cluster.kubectl(
        "patch", "csr", "jane", "--subresource=approval", "--type=json",
        "-p", '[{"op": "replace", "path": "/status/conditions", "value": []}]', check=False,
    )  # fmt: skip
    assert (
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"'
        in undo.stderr
    )
    cluster.kubectl("delete", "csr", "jane", "joe", "custom")


def test_nobody_may_ask_the_client_signer_for_system_masters(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    # kube-apiserver's CertificateSubjectRestriction: else any user allowed to create a CSR
    # would be a click on "approve" away from a certificate past RBAC; the admin included.
    masters = _key_and_request(tmp_path, "root", "system:masters")
    refused = cluster.kubectl(
        "create", "-f", "-", input=_csr("root", masters, "kubernetes.io/kube-apiserver-client"),
        check=False,
    )  # fmt: skip
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": '
        'certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )
    assert cluster.kubectl("get", "csr", "root", check=False).returncode == 1
    # Another signer may be asked: what it issues is its own business.
    cluster.kubectl("create", "-f", "-", input=_csr("root", masters, "example.com/signer"))
    cluster.kubectl("delete", "csr", "root")


#: May create and decide CSRs (update approval and status), but holds no verb on any signer.
DECIDER = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: csr-decider}
rules:
- apiGroups: [certificates.k8s.io]
  resources: [certificatesigningrequests]
  verbs: [create, get, list, watch]
- apiGroups: [certificates.k8s.io]
  resources: [certificatesigningrequests/approval, certificatesigningrequests/status]
  verbs: [get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: csr-decider}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: csr-decider}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}]
"""
#: `approve` on every kubernetes.io signer, as upstream's docs grant it (by the domain wildcard).
SIGNER_APPROVER = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kubernetes-signer-approver}
rules:
- apiGroups: [certificates.k8s.io]
  resources: [signers]
  resourceNames: [kubernetes.io/*]
  verbs: [approve]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: kubernetes-signer-approver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: kubernetes-signer-approver}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: mallory}]
"""


def _self_signed(tmp: Path) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mallory")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(1)
        .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


def test_only_a_user_granted_the_signer_approves_or_signs(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    # kube-apiserver's CertificateApproval and CertificateSigning admission: `update` on
    # certificatesigningrequests/approval (or /status) is not enough, the signer must be granted.
    cluster.kubectl("apply", "-f", "-", input=DECIDER)
    signer = "kubernetes.io/kube-apiserver-client"
    mallory = ("--as=mallory", "--as-group=system:authenticated")
    request = _csr("mallory", _key_and_request(tmp_path, "mallory", "dev"), signer)
    cluster.kubectl(*mallory, "create", "-f", "-", input=request)
    csr = json.loads(cluster.kubectl("get", "csr", "mallory", "-o", "json").stdout)
    assert csr["spec"]["username"] == "mallory"  # the impersonated user, not the admin
    forbidden = 'certificatesigningrequests.certificates.k8s.io "mallory" is forbidden: '

    approve = cluster.kubectl(*mallory, "certificate", "approve", "mallory", check=False)
    assert approve.returncode == 1
    assert forbidden + f'user not permitted to approve requests with signerName "{signer}"' in (
        approve.stderr
    )
    patch = json.dumps({"status": {"certificate": _self_signed(tmp_path)}})
    sign = cluster.kubectl(
        *mallory, "patch", "csr", "mallory", "--subresource=status", "--type=merge", "-p", patch,
        check=False,
    )  # fmt: skip
    assert forbidden + f'user not permitted to sign requests with signerName "{signer}"' in (
        sign.stderr
    )
    undecided = json.loads(cluster.kubectl("get", "csr", "mallory", "-o", "json").stdout)
    assert undecided.get("status", {}) == {}

    cluster.kubectl("apply", "-f", "-", input=SIGNER_APPROVER)
    cluster.kubectl(*mallory, "certificate", "approve", "mallory")
    assert _wait_for_certificate(cluster, "mallory")["status"]["certificate"]
    cluster.kubectl("delete", "csr", "mallory")
    cluster.kubectl("delete", "-f", "-", input=DECIDER + "---\n" + SIGNER_APPROVER)


PROGRAM = """
k8s.core.v1.Namespace("ns", metadata={"name": NS})
k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
    "hooks",
    metadata={"name": NS + "-hooks"},
    webhooks=[{
        "name": "check.example.com",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "hook", "namespace": NS}},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods"]}],
    }],
)
k8s.apiregistration.v1.APIService(
    "api",
    metadata={"name": "v1beta1." + NS + ".example.com"},
    spec={"group": NS + ".example.com", "version": "v1beta1", "groupPriorityMinimum": 100,
          "versionPriority": 100, "insecureSkipTLSVerify": True,
          "service": {"name": "api", "namespace": NS}},
)
k8s.node.v1.RuntimeClass("runtime", metadata={"name": NS + "-runc"}, handler="runc")
k8s.core.v1.PodTemplate(
    "template",
    metadata={"name": "template", "namespace": NS},
    template={"metadata": {"labels": {"app": "x"}},
              "spec": {"containers": [{"name": "c", "image": "nginx:1.29"}]}},
)
"""


def test_up_again_is_a_no_op_and_destroy_removes_them(
    new_project: Any, cluster: LiveCluster
) -> None:
    p = new_project()
    p.program(PROGRAM)
    started = time.monotonic()
    assert p.up().summary["counts"] == {"create": 5}
    assert time.monotonic() - started < 30, "up waited on an APIService nothing serves"
    objects = [
        ("validatingwebhookconfigurations", f"{p.ns}-hooks", None),
        ("apiservices", f"v1beta1.{p.ns}.example.com", None),
        ("runtimeclasses", f"{p.ns}-runc", None),
        ("podtemplates", "template", p.ns),
    ]
    found = [get(cluster, kind, name, ns) for kind, name, ns in objects]
    assert all(found), found
    versions = [obj["metadata"]["resourceVersion"] for obj in found if obj]
    # The server's defaults (failurePolicy, timeoutSeconds, port 443, pod defaults) are no diff.
    assert p.preview().changed() == {}
    assert p.up().summary["counts"] == {"same": 5}
    assert [
        obj["metadata"]["resourceVersion"] for obj in (get(cluster, *o) for o in objects) if obj
    ] == versions
    p.sw("destroy", "--yes")
    assert [get(cluster, kind, name, ns) for kind, name, ns in objects] == [None] * 4
