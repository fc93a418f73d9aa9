"""What a refusal names besides the fields that cannot change once set: what decides whether a
delete-first replacement goes ahead (the dry run over the old object refuses those fields)."""

from __future__ import annotations

import pytest

from stackwright.errors import InputsRejected
from stackwright.providers.kubernetes.errors import ApplyRejected, Cause

SELECTOR = Cause(
    "spec.selector",
    "FieldValueInvalid",
    'Invalid value: {"matchLabels":{"app":"b"}}: field is immutable',
)
STATEFULSET = Cause(
    "spec",
    "FieldValueForbidden",
    "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden",
)
REPLICAS = Cause(
    "spec.replicas", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0"
)


def refused(*causes: Cause) -> ApplyRejected:
    return ApplyRejected('Deployment.apps "api" is invalid: [...]', causes=causes, status=422)


def test_only_fields_that_cannot_change_are_no_refusal_of_a_new_object() -> None:
    assert refused(SELECTOR).beyond_immutable() is None
    assert refused(STATEFULSET, SELECTOR).beyond_immutable() is None


def test_a_custom_resource_rule_against_its_old_self_is_no_refusal_of_a_new_object() -> None:
    """A CRD's x-kubernetes-validations rule `self == oldSelf` (a field a replace_on_changes
    lists), which a create is not held to, as a real cluster words it without a message."""
    rule = Cause(
        "spec.size", "FieldValueInvalid", 'Invalid value: "string": failed rule: self == oldSelf'
    )
    assert refused(rule).beyond_immutable() is None
    assert refused(rule, REPLICAS).beyond_immutable() is not None


def test_anything_else_is_said_alone() -> None:
    assert refused(SELECTOR, REPLICAS).beyond_immutable() == (
        'Deployment.apps "api" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0"
    )


def test_a_refusal_without_causes_is_no_verdict() -> None:
    assert refused().beyond_immutable() is None
    assert InputsRejected("the server said no").beyond_immutable() is None


def _update_only(group: str, kind: str, new: dict, old: dict) -> list[Cause]:
    """What the local cluster refuses in `new` as an update of `old` and not as a create:
    the fields that cannot change once set, as the server words each."""
    from stackwright.localcluster.validation import validate_builtin

    created = validate_builtin(new, None, group, kind)
    return [
        Cause(c.field, c.reason, c.message)
        for c in validate_builtin(new, old, group, kind)
        if c not in created
    ]


def _meta(obj: dict, **more: object) -> dict:
    return {"metadata": {"name": "x", "namespace": "default"}, **obj, **more}


_POD = {"containers": [{"name": "a", "image": "nginx"}], "restartPolicy": "Always"}
_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
_UPDATES = {
    "a RoleBinding's roleRef": (
        "rbac.authorization.k8s.io", "RoleBinding",
        _meta({"roleRef": {**_REF, "name": "edit"}}), _meta({"roleRef": _REF}),
    ),
    "a PriorityClass's value": (
        "scheduling.k8s.io", "PriorityClass",
        {"metadata": {"name": "x"}, "value": 2}, {"metadata": {"name": "x"}, "value": 1},
    ),
    "a Service's clusterIP": (
        "", "Service",
        _meta({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.20", "clusterIPs": [
            "10.96.0.20"], "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster"}}),
        _meta({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": [
            "10.96.0.10"], "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster"}}),
    ),
    "a Pod's spec": (
        "", "Pod",
        _meta({"spec": {**_POD, "containers": [{**_POD["containers"][0], "args": ["-v"]}]}}),
        _meta({"spec": _POD}),
    ),
    "a Pod's containers": (
        "", "Pod",
        _meta({"spec": {**_POD, "containers": [*_POD["containers"], {"name": "b", "image": "x"}]}}),
        _meta({"spec": _POD}),
    ),
    "an immutable ConfigMap's data": (
        "", "ConfigMap",
        _meta({"immutable": False, "data": {"k": "2"}}), _meta({"immutable": True, "data": {"k": "1"}}),
    ),
    "a Secret's type": (
        "", "Secret", _meta({"type": "Opaque"}), _meta({"type": "kubernetes.io/tls"}),
    ),
    "a StorageClass's provisioner": (
        "storage.k8s.io", "StorageClass",
        {"metadata": {"name": "x"}, "provisioner": "b", "reclaimPolicy": "Delete",
         "volumeBindingMode": "Immediate"},
        {"metadata": {"name": "x"}, "provisioner": "a", "reclaimPolicy": "Delete",
         "volumeBindingMode": "Immediate"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("update", _UPDATES.values(), ids=_UPDATES.keys())
def test_each_refusal_of_a_field_that_cannot_change_is_none_of_a_new_object(
    update: tuple[str, str, dict, dict],
) -> None:
    group, kind, new, old = update
    causes = _update_only(group, kind, new, old)
    assert causes
    assert refused(*causes).beyond_immutable() is None, causes


def test_a_field_the_plan_says_forces_the_replacement_is_no_refusal_however_worded() -> None:
    """An admission policy (or a kind) may word its refusal of a change its own way: a cause
    on a field the replacement changes because it cannot change, or holding or inside one,
    is no verdict on the new object; one on another field still is."""
    worded = Cause("spec.template", "FieldValueInvalid", "Invalid value: no changes allowed")
    above = Cause("spec", "FieldValueForbidden", "Forbidden: only replicas may be updated")
    assert refused(worded).beyond_immutable(["spec.template"]) is None
    assert refused(worded, above).beyond_immutable(["spec.template.spec.containers[0]"]) is None
    assert refused(worded).beyond_immutable(["spec.templates"]) is not None
    # Key by key: the server writes a map's key bare in brackets, a program's path quotes it.
    keyed = Cause("spec.routes[a: b]", "FieldValueInvalid", "Invalid value: no changes allowed")
    assert refused(keyed).beyond_immutable(['spec.routes["a: b"]']) is None
    assert refused(keyed).beyond_immutable(['spec.routes["a"]']) is not None
    assert refused(worded, REPLICAS).beyond_immutable(["spec.template"]) == (
        'Deployment.apps "api" is invalid: spec.replicas: Invalid value: -1: must be greater '
        "than or equal to 0"
    )
