"""Defaults and validation of the kinds charts install around workloads (webhook
configurations, admission policies, APIServices, CSI kinds, PodTemplates, CSRs, flow
control), in kube-apiserver 1.33's values and words."""

from __future__ import annotations

import base64
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from stackwright.localcluster.defaults import apply_defaults
from stackwright.localcluster.validation import validate_builtin

ADMISSION = "admissionregistration.k8s.io"


def _messages(obj: dict[str, Any], group: str, kind: str, old: Any = None) -> list[str]:
    apply_defaults(obj, group, kind)
    return [c.render() for c in validate_builtin(obj, old, group, kind)]


def _hook(**fields: Any) -> dict[str, Any]:
    return {
        "name": "check.example.com",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "hook", "namespace": "system"}},
        **fields,
    }


def _webhooks(*hooks: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "hooks"}, "webhooks": list(hooks)}


def test_webhook_configurations_get_upstreams_defaults() -> None:
    rule = {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["pods"],
    }
    mutating = _webhooks(_hook(rules=[dict(rule)]))
    apply_defaults(mutating, ADMISSION, "MutatingWebhookConfiguration")
    (hook,) = mutating["webhooks"]
    assert hook == {
        **_hook(),
        "rules": [{**rule, "scope": "*"}],
        "clientConfig": {"service": {"name": "hook", "namespace": "system", "port": 443}},
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {},
        "objectSelector": {},
        "timeoutSeconds": 10,
        "reinvocationPolicy": "Never",
    }
    validating = _webhooks(_hook(failurePolicy="Ignore"))
    apply_defaults(validating, ADMISSION, "ValidatingWebhookConfiguration")
    (hook,) = validating["webhooks"]
    assert hook["failurePolicy"] == "Ignore" and "reinvocationPolicy" not in hook
    assert hook["timeoutSeconds"] == 10


def test_admission_policies_csi_drivers_and_flow_control_get_defaults() -> None:
    policy: dict[str, Any] = {
        "spec": {"matchConstraints": {"resourceRules": [{"operations": ["*"]}]}}
    }
    apply_defaults(policy, ADMISSION, "ValidatingAdmissionPolicy")
    assert policy["spec"] == {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [{"operations": ["*"], "scope": "*"}],
            "matchPolicy": "Equivalent",
            "namespaceSelector": {},
            "objectSelector": {},
        },
    }
    driver: dict[str, Any] = {"spec": {}}
    apply_defaults(driver, "storage.k8s.io", "CSIDriver")
    assert driver["spec"] == {
        "attachRequired": True,
        "podInfoOnMount": False,
        "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "volumeLifecycleModes": ["Persistent"],
        "requiresRepublish": False,
        "seLinuxMount": False,
    }
    service: dict[str, Any] = {"spec": {"service": {"name": "m", "namespace": "kube-system"}}}
    apply_defaults(service, "apiregistration.k8s.io", "APIService")
    assert service["spec"]["service"]["port"] == 443
    level: dict[str, Any] = {
        "spec": {"type": "Limited", "limited": {"limitResponse": {"queuing": {}}}}
    }
    apply_defaults(level, "flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration")
    assert level["spec"]["limited"] == {
        "nominalConcurrencyShares": 30,
        "lendablePercent": 0,
        "limitResponse": {"queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}},
    }
    schema: dict[str, Any] = {"spec": {"priorityLevelConfiguration": {"name": "x"}}}
    apply_defaults(schema, "flowcontrol.apiserver.k8s.io", "FlowSchema")
    assert schema["spec"]["matchingPrecedence"] == 1000
    template: dict[str, Any] = {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}
    apply_defaults(template, "", "PodTemplate")
    assert template["template"]["spec"]["restartPolicy"] == "Always"


def test_webhook_configuration_errors_in_upstreams_words() -> None:
    bad = _webhooks(
        {
            "name": "check",
            "clientConfig": {"url": "https://a.example.com", "service": {"name": "s"}},
        },
        _hook(name="dup.example.com", sideEffects="Some", timeoutSeconds=40),
        _hook(name="dup.example.com", clientConfig={"url": "http://a.example.com/x?y=1"}),
        _hook(name="rules.example.com", admissionReviewVersions=["v2"], rules=[{"scope": "Any"}]),
    )
    assert _messages(bad, ADMISSION, "ValidatingWebhookConfiguration") == [
        'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots',
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[0].clientConfig: Required value: exactly one of url or service is required",
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1, v1alpha1",
        'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
        "webhooks[1].timeoutSeconds: Invalid value: 40: the timeout value must be between 1 and 30 seconds",
        "webhooks[2].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
        'webhooks[2].clientConfig.url: Invalid value: "y=1": query parameters are not permitted in the URL',
        'webhooks[2].name: Duplicate value: "dup.example.com"',
        "webhooks[3].rules[0].operations: Required value",
        "webhooks[3].rules[0].apiGroups: Required value",
        "webhooks[3].rules[0].apiVersions: Required value",
        "webhooks[3].rules[0].resources: Required value",
        'webhooks[3].rules[0].scope: Unsupported value: "Any": supported values: "*", "Cluster", "Namespaced"',
        'webhooks[3].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1, v1alpha1',
    ]
    good = _webhooks(_hook(), _hook(name="other.example.com"))
    assert _messages(good, ADMISSION, "MutatingWebhookConfiguration") == []


def test_api_service_errors_in_upstreams_words() -> None:
    def api_service(name: str, **spec: Any) -> dict[str, Any]:
        base = {
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        }
        return {"metadata": {"name": name}, "spec": {**base, **spec}}

    assert (
        _messages(api_service("v1beta1.metrics.k8s.io"), "apiregistration.k8s.io", "APIService")
        == []
    )
    assert _messages(
        api_service("v1.metrics.k8s.io", versionPriority=0, service={"name": "m"}),
        "apiregistration.k8s.io",
        "APIService",
    ) == [
        'metadata.name: Invalid value: "v1.metrics.k8s.io": must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"',
        "spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
        "spec.service.namespace: Required value",
    ]


def _request(common_name: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode()


def test_certificate_signing_request_errors_in_upstreams_words() -> None:
    group, kind = "certificates.k8s.io", "CertificateSigningRequest"
    spec = {
        "request": _request("jane"),
        "signerName": "kubernetes.io/kube-apiserver-client",
        "usages": ["client auth"],
    }
    assert _messages({"metadata": {"name": "jane"}, "spec": spec}, group, kind) == []
    pem = base64.b64encode(b"not a pem").decode()
    both = {
        "conditions": [{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]
    }
    assert _messages(
        {
            "metadata": {"name": "jane"},
            "spec": {"request": pem, "expirationSeconds": 60},
            "status": both,
        },
        group,
        kind,
    ) == [
        f'spec.request: Invalid value: "{pem}": PEM block type must be CERTIFICATE REQUEST',
        "spec.usages: Required value",
        "spec.signerName: Required value",
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)",
        'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    ]
    approved = {
        "metadata": {"name": "jane"},
        "spec": spec,
        "status": {"conditions": [{"type": "Approved", "status": "True"}]},
    }
    undone = {"metadata": {"name": "jane"}, "spec": spec, "status": {}}
    assert _messages(undone, group, kind, old=approved) == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"'
    ]
