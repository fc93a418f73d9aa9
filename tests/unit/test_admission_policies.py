"""ValidatingAdmissionPolicies of the local cluster, with kube-apiserver's words.

A Cluster over an in-memory store, no server: which writes a policy and its binding
match (rules, selectors, exclusions, names, scope), what their expressions see
(`object`, `oldObject`, `request`, `params`, `namespaceObject`, `variables`), and what
a failure does under each validation action, reason and failure policy.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from stackwright.localcluster import rbac, status
from stackwright.localcluster.cluster import Cluster, DeleteOptions, WriteOptions, Written
from stackwright.localcluster.controllers.base import Retry
from stackwright.localcluster.controllers.namespaces import NamespaceController
from stackwright.localcluster.store import Store

OPTS = WriteOptions(field_manager="test")
RULE = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
        "resources": ["deployments"]}  # fmt: skip


@pytest.fixture
def cluster() -> Cluster:
    made = Cluster(Store(":memory:"))
    for name, labels in (("test", {"env": "test"}), ("prod", {"env": "prod"})):
        write(made, "", "v1", "namespaces", "", {"metadata": {"name": name, "labels": labels}})
    return made


def write(
    cluster: Cluster, group: str, version: str, plural: str, namespace: str,
    body: dict[str, Any], opts: WriteOptions = OPTS,
) -> Written:  # fmt: skip
    rtype = cluster.type_for(group, version, plural)
    full = {"apiVersion": rtype.api_version, "kind": rtype.kind, **body}
    return cluster.create(rtype, namespace, full, opts)


def policy(cluster: Cluster, name: str, **spec: Any) -> None:
    spec.setdefault("matchConstraints", {"resourceRules": [RULE]})
    write(cluster, "admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "",
          {"metadata": {"name": name}, "spec": spec})  # fmt: skip


def binding(cluster: Cluster, name: str, policy_name: str, *actions: str, **spec: Any) -> None:
    spec = {"policyName": policy_name, "validationActions": list(actions or ["Deny"]), **spec}
    write(cluster, "admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", "",
          {"metadata": {"name": name}, "spec": spec})  # fmt: skip


def deployment(name: str, replicas: int, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"app": name, **labels}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]}},
        },
    }  # fmt: skip


def deploy(cluster: Cluster, namespace: str, name: str, replicas: int, **kw: Any) -> Written:
    opts = kw.pop("opts", OPTS)
    return write(cluster, "apps", "v1", "deployments", namespace,
                 deployment(name, replicas, **kw), opts)  # fmt: skip


def refusal(call: Any) -> status.APIError:
    with pytest.raises(status.APIError) as caught:
        call()
    return caught.value


def max_replicas(cluster: Cluster, **validation: Any) -> None:
    """The brief's guardrail: no more than 5 replicas in namespaces labelled env=test."""
    policy(cluster, "max-replicas",
           validations=[{"expression": "object.spec.replicas <= 5", **validation}])  # fmt: skip
    binding(cluster, "max-replicas-test", "max-replicas",
            matchResources={"namespaceSelector": {"matchLabels": {"env": "test"}}})  # fmt: skip


def test_a_denied_create_is_refused_in_the_plugins_words_and_nothing_is_stored(cluster):
    max_replicas(cluster, message="replicas must be at most 5")
    for opts in (WriteOptions(field_manager="t", dry_run=True), OPTS):
        exc = refusal(lambda opts=opts: deploy(cluster, "test", "web", 10, opts=opts))
        said = ("ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-test' "
                "denied request: replicas must be at most 5")  # fmt: skip
        assert exc.to_status() == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'deployments.apps "web" is forbidden: {said}',
            "reason": "Invalid", "code": 422,
            "details": {"name": "web", "group": "apps", "kind": "deployments",
                        "causes": [{"message": said}]},
        }  # fmt: skip
    assert cluster.store.get(("apps", "deployments"), "test", "web") is None
    # The binding's namespaceSelector narrows it: another namespace, or few replicas, pass.
    deploy(cluster, "prod", "web", 10)
    deploy(cluster, "test", "small", 3)


def test_the_message_is_the_message_expression_else_the_message_else_the_expression(cluster):
    max_replicas(cluster)
    assert refusal(lambda: deploy(cluster, "test", "web", 10)).message.endswith(
        "denied request: failed expression: object.spec.replicas <= 5"
    )
    policy(cluster, "said", variables=[{"name": "r", "expression": "object.spec.replicas"}],
           validations=[{"expression": "variables.r < 3", "message": "too many",
                         "messageExpression": "'replicas ' + string(variables.r) + ' > 2'"},
                        {"expression": "variables.r < 2", "message": " too many ",
                         "messageExpression": "'two\\nlines'"}])  # fmt: skip
    binding(cluster, "said", "said", matchResources={
        "namespaceSelector": {"matchLabels": {"env": "prod"}}})  # fmt: skip
    exc = refusal(lambda: deploy(cluster, "prod", "web", 4))
    assert exc.message.endswith("with binding 'said' denied request: replicas 4 > 2")
    exc = refusal(lambda: deploy(cluster, "prod", "web", 2))
    assert exc.message.endswith("with binding 'said' denied request: too many")


def test_variables_compose_and_their_errors_name_them(cluster):
    policy(cluster, "composed", variables=[
        {"name": "spec", "expression": "object.spec"},
        {"name": "paused", "expression": "variables.spec.paused"},
        {"name": "twice", "expression": "variables.spec.replicas * 2"},
    ], validations=[{"expression": "variables.twice <= 10"},
                    {"expression": "!variables.paused"}])  # fmt: skip
    binding(cluster, "composed", "composed")
    assert refusal(lambda: deploy(cluster, "test", "web", 6)).message.endswith(
        "denied request: failed expression: variables.twice <= 10"
    )
    assert refusal(lambda: deploy(cluster, "test", "web", 1)).message.endswith(
        "denied request: expression '!variables.paused' resulted in error: composited variable "
        '"paused" fails to evaluate: no such key: paused'
    )


@pytest.mark.parametrize(
    ("reason", "code"),
    [("Forbidden", 403), ("Invalid", 422), ("RequestEntityTooLarge", 413), ("Unauthorized", 401)],
)
def test_a_validations_reason_is_the_refusals_reason_and_code(cluster, reason, code):
    max_replicas(cluster, reason=reason)
    exc = refusal(lambda: deploy(cluster, "test", "web", 10))
    assert (exc.reason, exc.code) == (reason, code)


def test_warn_and_audit_bindings_let_the_write_through_warn_says_why(cluster):
    policy(cluster, "max-replicas", validations=[
        {"expression": "object.spec.replicas <= 5", "message": "at most 5"}])  # fmt: skip
    binding(cluster, "warn", "max-replicas", "Warn")
    binding(cluster, "audit", "max-replicas", "Audit")
    written = deploy(cluster, "test", "web", 10)
    assert written.warnings == [
        "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'warn': "
        "at most 5"
    ]
    assert cluster.store.get(("apps", "deployments"), "test", "web") is not None
    rtype = cluster.type_for("apps", "v1", "deployments")
    updated = cluster.update(rtype, "test", "web", {**written.obj, "spec": {
        **written.obj["spec"], "replicas": 4}}, OPTS)  # fmt: skip
    assert updated.warnings == []
    # A refusal is sent with the warnings, as the API server sends them.
    binding(cluster, "deny", "max-replicas", "Deny")
    exc = refusal(lambda: deploy(cluster, "test", "big", 10))
    assert exc.message.endswith("with binding 'deny' denied request: at most 5")
    assert exc.warnings == [
        "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'warn': "
        "at most 5"
    ]


def test_failure_policy_decides_what_an_evaluation_error_does(cluster):
    for failure, name in (("Fail", "strict"), ("Ignore", "lenient")):
        policy(cluster, name, failurePolicy=failure,
               validations=[{"expression": "object.spec.paused == false"}])  # fmt: skip
        binding(cluster, name, name, matchResources={
            "namespaceSelector": {"matchLabels": {"env": "test" if name == "strict" else "prod"}}})  # fmt: skip
    exc = refusal(lambda: deploy(cluster, "test", "web", 1))
    assert exc.message == (
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'strict' with binding "
        "'strict' denied request: expression 'object.spec.paused == false' resulted in error: "
        "no such key: paused"
    )
    assert (exc.reason, exc.code) == ("Invalid", 422)
    deploy(cluster, "prod", "web", 1)  # Ignore: as if the validation held


def test_match_conditions_all_must_hold_and_their_errors_follow_the_failure_policy(cluster):
    policy(cluster, "labelled", matchConditions=[
        {"name": "not-exempt", "expression": "!('exempt' in object.metadata.labels)"},
        {"name": "has-tier", "expression": "object.metadata.labels.tier != 'none'"},
    ], validations=[{"expression": "object.spec.replicas <= 5"}])  # fmt: skip
    binding(cluster, "labelled", "labelled")
    deploy(cluster, "test", "a", 10, exempt="yes")  # a condition false: not evaluated
    deploy(cluster, "test", "b", 10, tier="none")
    assert refusal(lambda: deploy(cluster, "test", "c", 10, tier="web")).code == 422
    exc = refusal(lambda: deploy(cluster, "test", "d", 1))  # no `tier` label: an error
    assert exc.message.endswith(
        "denied request: expression 'object.metadata.labels.tier != 'none'' resulted in "
        "error: no such key: tier"
    )


def test_rules_selectors_exclusions_names_and_scope(cluster):
    policy(cluster, "narrow", matchConstraints={
        "resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"],
                           "resources": ["deployments", "configmaps"], "scope": "Namespaced"}],
        "excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
                                  "resources": ["configmaps"], "resourceNames": ["allowed"]}],
        "objectSelector": {"matchExpressions": [{"key": "guarded", "operator": "Exists"}]},
    }, validations=[{"expression": "false", "message": "no"}])  # fmt: skip
    binding(cluster, "narrow", "narrow")
    cm = {"apiVersion": "v1", "kind": "ConfigMap"}
    write(cluster, "", "v1", "configmaps", "test", {**cm, "metadata": {"name": "free"}})
    write(cluster, "", "v1", "configmaps", "test",
          {**cm, "metadata": {"name": "allowed", "labels": {"guarded": "1"}}})  # fmt: skip
    assert refusal(lambda: write(cluster, "", "v1", "configmaps", "test",
                                 {**cm, "metadata": {"name": "x", "labels": {"guarded": "1"}}})
                   ).message.startswith('configmaps "x" is forbidden: ')  # fmt: skip
    assert refusal(lambda: deploy(cluster, "test", "web", 1, guarded="1")).code == 422
    # A cluster-scoped kind is outside a Namespaced rule.
    write(cluster, "rbac.authorization.k8s.io", "v1", "clusterroles", "",
          {"metadata": {"name": "r", "labels": {"guarded": "1"}}})  # fmt: skip


def test_the_policy_kinds_are_never_subject_to_policies(cluster):
    every = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    policy(cluster, "nothing", matchConstraints={"resourceRules": [every]},
           validations=[{"expression": "false", "message": "frozen"}])  # fmt: skip
    binding(cluster, "nothing", "nothing")
    assert refusal(lambda: write(cluster, "", "v1", "configmaps", "test",
                                 {"metadata": {"name": "x"}})).message.endswith(": frozen")  # fmt: skip
    policy(cluster, "another", validations=[{"expression": "true"}])
    binding(cluster, "another", "nothing")
    cluster.delete(cluster.type_for("admissionregistration.k8s.io", "v1",
                                    "validatingadmissionpolicybindings"), "", "nothing", DeleteOptions())  # fmt: skip


def test_update_and_delete_see_the_old_object(cluster):
    policy(cluster, "no-scale-down", matchConstraints={"resourceRules": [
        {**RULE, "operations": ["UPDATE"]}]},
        validations=[{"expression": "object.spec.replicas >= oldObject.spec.replicas"}])  # fmt: skip
    policy(cluster, "protected", matchConstraints={"resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
         "resources": ["configmaps"]}]},
        validations=[{"expression": "object == null && oldObject.metadata.name != 'keep'",
                      "messageExpression": "request.operation + ' of ' + request.name"}])  # fmt: skip
    binding(cluster, "no-scale-down", "no-scale-down")
    binding(cluster, "protected", "protected")
    made = deploy(cluster, "test", "web", 3).obj
    rtype = cluster.type_for("apps", "v1", "deployments")
    exc = refusal(lambda: cluster.update(
        rtype, "test", "web", {**made, "spec": {**made["spec"], "replicas": 2}}, OPTS))  # fmt: skip
    assert exc.message.endswith("denied request: failed expression: "
                                "object.spec.replicas >= oldObject.spec.replicas")  # fmt: skip
    cms = cluster.type_for("", "v1", "configmaps")
    for name in ("keep", "drop"):
        write(cluster, "", "v1", "configmaps", "test", {"metadata": {"name": name}})
    exc = refusal(lambda: cluster.delete(cms, "test", "keep", DeleteOptions()))
    assert exc.message == ('configmaps "keep" is forbidden: ValidatingAdmissionPolicy '
                           "'protected' with binding 'protected' denied request: DELETE of keep")  # fmt: skip
    cluster.delete(cms, "test", "drop", DeleteOptions())
    assert cluster.store.get(("", "configmaps"), "test", "keep") is not None


def test_request_and_namespace_object_are_bound(cluster):
    policy(cluster, "who", validations=[{
        "expression": "request.userInfo.username == 'alice' && request.dryRun && "
                      "request.namespace == 'test' && request.kind.kind == 'Deployment' && "
                      "request.resource.resource == 'deployments' && "
                      "namespaceObject.metadata.labels.env == 'test' && "
                      "oldObject == null && params == null"}])  # fmt: skip
    binding(cluster, "who", "who")
    alice = rbac.User("alice", ("system:authenticated",))
    deploy(cluster, "test", "web", 1,
           opts=WriteOptions(field_manager="t", dry_run=True, user=alice))  # fmt: skip
    assert refusal(lambda: deploy(cluster, "test", "web", 1)).code == 422


def test_params_from_a_config_map_and_when_none_is_found(cluster):
    policy(cluster, "limit", paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
           validations=[{"expression": "object.spec.replicas <= int(params.data.max)",
                         "messageExpression": "'at most ' + params.data.max"}])  # fmt: skip
    binding(cluster, "limit-test", "limit", matchResources={
        "namespaceSelector": {"matchLabels": {"env": "test"}}},
        paramRef={"name": "limits", "namespace": "test", "parameterNotFoundAction": "Deny"})  # fmt: skip
    binding(cluster, "limit-prod", "limit", matchResources={
        "namespaceSelector": {"matchLabels": {"env": "prod"}}},
        paramRef={"selector": {"matchLabels": {"kind": "limits"}},
                  "parameterNotFoundAction": "Allow"})  # fmt: skip
    exc = refusal(lambda: deploy(cluster, "test", "web", 1))
    assert exc.message.endswith(
        "with binding 'limit-test' denied request: failed to configure binding: no params "
        "found for policy binding with `Deny` parameterNotFoundAction"
    )
    deploy(cluster, "prod", "web", 9)  # Allow: no params, nothing evaluated
    write(cluster, "", "v1", "configmaps", "test",
          {"metadata": {"name": "limits"}, "data": {"max": "4"}})  # fmt: skip
    write(cluster, "", "v1", "configmaps", "prod",
          {"metadata": {"name": "l", "labels": {"kind": "limits"}}, "data": {"max": "8"}})  # fmt: skip
    deploy(cluster, "test", "web", 4)
    assert refusal(lambda: deploy(cluster, "test", "big", 5)).message.endswith(": at most 4")
    assert refusal(lambda: deploy(cluster, "prod", "big", 9)).message.endswith(": at most 8")


def test_an_unknown_param_kind_or_an_expression_that_does_not_parse_is_an_error(cluster):
    policy(cluster, "odd", paramKind={"apiVersion": "example.com/v1", "kind": "Limits"},
           validations=[{"expression": "true"}])  # fmt: skip
    binding(cluster, "odd", "odd")
    exc = refusal(lambda: deploy(cluster, "test", "web", 1))
    assert exc.message.endswith(
        "ValidatingAdmissionPolicy 'odd' denied request: failed to configure policy: failed to "
        "find resource referenced by paramKind: 'example.com/v1, Kind=Limits'"
    )
    cluster.delete(cluster.type_for("admissionregistration.k8s.io", "v1",
                                    "validatingadmissionpolicybindings"), "", "odd", DeleteOptions())  # fmt: skip
    # The API server refuses an expression that does not parse; one stored nonetheless
    # (by an older server) is an evaluation error.
    broken = {"expression": "object.spec.replicas <=", "messageExpression": "'a' +"}
    exc = refusal(lambda: policy(cluster, "broken", validations=[broken]))
    assert exc.message == (
        'ValidatingAdmissionPolicy.admissionregistration.k8s.io "broken" is invalid: ['
        'spec.validations[0].expression: Invalid value: "object.spec.replicas <=": '
        "compilation failed: ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' "
        "expecting an expression, "
        "spec.validations[0].messageExpression: Invalid value: \"'a' +\": "
        "compilation failed: ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' "
        "expecting an expression]"
    )
    stored = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
              "metadata": {"name": "broken",
                           "resourceVersion": str(cluster.store.next_resource_version())},
              "spec": {"matchConstraints": {"resourceRules": [RULE]}, "validations": [broken]}}  # fmt: skip
    cluster.store.put(("admissionregistration.k8s.io", "validatingadmissionpolicies"), stored, None)
    binding(cluster, "broken", "broken")
    assert refusal(lambda: deploy(cluster, "test", "web", 1)).message.endswith(
        "denied request: compilation error: compilation failed: ERROR: <input>:1:24: Syntax "
        "error: mismatched input '<EOF>' expecting an expression"
    )


def test_no_binding_no_cost_and_the_index_follows_writes(cluster):
    bindings = cluster.type_for("admissionregistration.k8s.io", "v1",
                                "validatingadmissionpolicybindings")  # fmt: skip
    assert not cluster.policies.active
    binding(cluster, "early", "later")  # its policy does not exist yet
    assert not cluster.policies.active
    deploy(cluster, "test", "a", 10)
    policy(cluster, "later", validations=[{"expression": "object.spec.replicas <= 5"}])
    assert cluster.policies.active
    assert refusal(lambda: deploy(cluster, "test", "b", 10)).code == 422
    cluster.delete(bindings, "", "early", DeleteOptions())
    assert not cluster.policies.active
    deploy(cluster, "test", "b", 10)
    # Kept from the store: a cluster started over it knows its policies at once.
    binding(cluster, "again", "later")
    again = Cluster(cluster.store, cluster.registry)
    assert again.policies.active


def test_a_scale_subresource_rule_sees_the_scale(cluster):
    """`kubectl scale` writes deployments/scale: a rule naming the subresource sees an
    autoscaling/v1 Scale; one naming `deployments` alone does not match it."""
    from stackwright.localcluster.scale import write_scale

    policy(cluster, "scale", matchConstraints={"resourceRules": [
        {**RULE, "resources": ["deployments/scale"]}]}, validations=[
        {"expression": "object.kind == 'Scale' && request.kind.kind == 'Scale' && "
                       "request.subResource == 'scale' && "
                       "object.spec.replicas <= 5 && oldObject.spec.replicas == 1"}])  # fmt: skip
    max_replicas(cluster)
    binding(cluster, "scale", "scale")
    deploy(cluster, "test", "web", 1)
    rtype = cluster.type_for("apps", "v1", "deployments")
    scale = b'{"spec": {"replicas": %d}}'
    exc = refusal(lambda: write_scale(cluster, rtype, "test", "web", "PATCH",
                                      "application/merge-patch+json", scale % 6, OPTS))  # fmt: skip
    assert exc.message.startswith(
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'scale'"
    )
    assert write_scale(cluster, rtype, "test", "web", "PATCH",
                       "application/merge-patch+json", scale % 5, OPTS)["spec"]["replicas"] == 5  # fmt: skip


def test_a_delete_a_warn_binding_fails_goes_through_with_its_warning(cluster):
    policy(cluster, "keep", matchConstraints={"resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
         "resources": ["configmaps"]}]},
        validations=[{"expression": "request.dryRun", "message": "deleted for real"}])  # fmt: skip
    binding(cluster, "keep", "keep", "Warn")
    write(cluster, "", "v1", "configmaps", "test", {"metadata": {"name": "cm"}})
    cms = cluster.type_for("", "v1", "configmaps")
    warnings: list[str] = []
    cluster.delete(cms, "test", "cm", DeleteOptions(dry_run=True), warnings)
    assert warnings == []
    cluster.delete(cms, "test", "cm", DeleteOptions(), warnings)
    assert warnings == [
        "Validation failed for ValidatingAdmissionPolicy 'keep' with binding 'keep': "
        "deleted for real"
    ]
    assert cluster.store.get(("", "configmaps"), "test", "cm") is None


def test_a_namespace_whose_delete_a_policy_refuses_for_one_object_is_emptied_of_the_rest(cluster):
    # Upstream's namespace deleter goes on past an object it cannot delete: the rest goes,
    # the refused one stays (and so does the Terminating namespace), retried.
    policy(cluster, "keep", matchConstraints={"resourceRules": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
         "resources": ["configmaps"]}]},
        validations=[{"expression": "oldObject.metadata.name != 'a-keep'"}])  # fmt: skip
    binding(cluster, "keep", "keep")
    for name in ("a-keep", "b-drop"):
        write(cluster, "", "v1", "configmaps", "test", {"metadata": {"name": name}})
    write(cluster, "", "v1", "secrets", "test", {"metadata": {"name": "pw"}})
    cluster.delete(cluster.type_for("", "v1", "namespaces"), "", "test", DeleteOptions())
    with pytest.raises(Retry):
        asyncio.run(NamespaceController(cluster).reconcile("test"))
    assert cluster.store.get(("", "configmaps"), "test", "a-keep") is not None
    assert cluster.store.get(("", "configmaps"), "test", "b-drop") is None
    assert cluster.store.get(("", "secrets"), "test", "pw") is None
    namespace = cluster.store.get(("", "namespaces"), "", "test")
    assert namespace is not None
    conditions = {c["type"]: c for c in namespace["status"]["conditions"]}
    assert conditions["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: configmaps. has 1 resource instances"
    )


def test_a_write_no_rule_matches_is_not_asked_for_its_namespace(cluster):
    # Upstream says a namespace selector's error only for a policy whose rules match: a
    # ConfigMap left in a namespace that is gone is deleted past a Deployments policy.
    policy(cluster, "test-only", matchConstraints={"resourceRules": [RULE],
           "namespaceSelector": {"matchLabels": {"env": "test"}}},
           validations=[{"expression": "false"}])  # fmt: skip
    binding(cluster, "test-only", "test-only")
    cms = cluster.type_for("", "v1", "configmaps")
    rv = str(cluster.store.next_resource_version())
    left = {"name": "left", "namespace": "gone", "resourceVersion": rv}
    cluster.store.put(cms.key, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": left}, None)
    cluster.delete(cms, "gone", "left", DeleteOptions())
    assert cluster.store.get(cms.key, "gone", "left") is None


def test_a_write_evaluates_only_the_policies_whose_rules_can_name_its_resource(
    cluster, monkeypatch
):
    # The policies are indexed by the (apiGroup, resource) their rules name, `*` for either
    # kept as such, and re-indexed as they and their bindings are written.
    rule = {**RULE, "operations": ["*"], "apiVersions": ["*"]}
    spec_of = {
        "a-deployments": [rule],
        "b-any-group": [{**rule, "apiGroups": ["*"], "resources": ["configmaps"]}],
        "c-any-resource": [{**rule, "apiGroups": [""], "resources": ["*"]}],
        "d-everything": [{**rule, "apiGroups": ["*"], "resources": ["*/*"]}],
        "e-subresource": [{**rule, "apiGroups": [""], "resources": ["configmaps/status"]}],
        "f-other-group": [{**rule, "apiGroups": ["batch"], "resources": ["configmaps"]}],
    }
    for name, rules in spec_of.items():
        policy(cluster, name, matchConstraints={"resourceRules": rules},
               validations=[{"expression": "true"}])  # fmt: skip
        binding(cluster, name, name)
    policy(cluster, "g-unruled", matchConstraints={}, validations=[{"expression": "true"}])
    binding(cluster, "g-unruled", "g-unruled")
    evaluated: list[str] = []
    matches = type(cluster.policies)._matches

    def counted(self: Any, match: Any, request: Any) -> bool:
        evaluated.extend(n for n, p in self._policies.items() if p.match is match)
        return matches(self, match, request)

    monkeypatch.setattr(type(cluster.policies), "_matches", counted)
    config_map = {"metadata": {"name": "cm"}, "data": {"a": "1"}}
    write(cluster, "", "v1", "configmaps", "test", config_map)
    assert evaluated == [
        "b-any-group", "c-any-resource", "d-everything", "e-subresource", "g-unruled"
    ]  # fmt: skip
    evaluated.clear()
    deploy(cluster, "test", "web", 1)
    assert evaluated == ["a-deployments", "d-everything", "g-unruled"]

    # A policy rewritten to name ConfigMaps is evaluated for them from then on.
    policies = cluster.type_for("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies")
    rewritten = copy.deepcopy(cluster.store.get(policies.key, "", "f-other-group"))
    rewritten["spec"]["matchConstraints"]["resourceRules"][0]["apiGroups"] = [""]
    cluster.update(policies, "", "f-other-group", rewritten, OPTS)
    evaluated.clear()
    write(cluster, "", "v1", "configmaps", "test", {**config_map, "metadata": {"name": "cm2"}})
    assert "f-other-group" in evaluated
