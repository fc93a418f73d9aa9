"""The CEL real CRDs carry (Gateway API, Karpenter; trimmed copies under
fixtures/cel_crds): every rule and messageExpression compiles with the local cluster's
interpreter (none is left unevaluated for a function it lacks), valid objects pass, and
hand-made invalid ones fail with the CRD's own message."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from stackwright.localcluster import cel, celrules
from stackwright.localcluster.cel_kubernetes import KUBERNETES

FIXTURES = Path(__file__).parent / "fixtures" / "cel_crds"
VARIABLES = frozenset({"self", "oldSelf"})


def crd(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((FIXTURES / f"{name}.yaml").read_text())
    return loaded


def schema(name: str) -> dict[str, Any]:
    found: dict[str, Any] = crd(name)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return found


def expressions(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) of every rule and messageExpression below `node`."""
    if isinstance(node, Mapping):
        for index, raw in enumerate(node.get("x-kubernetes-validations") or ()):
            yield f"{path}[{index}].rule", raw["rule"]
            if raw.get("messageExpression"):
                yield f"{path}[{index}].messageExpression", raw["messageExpression"]
        for key, child in node.items():
            if key != "x-kubernetes-validations":
                yield from expressions(child, f"{path}.{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from expressions(child, f"{path}[{index}]")


CRDS = sorted(p.stem for p in FIXTURES.glob("*.yaml"))
ALL = [(name, where, text) for name in CRDS for where, text in expressions(schema(name))]


def test_the_fixtures_hold_a_fair_sample_of_real_rules() -> None:
    assert len(CRDS) >= 4
    assert len(ALL) >= 40


@pytest.mark.parametrize(("name", "where", "text"), ALL, ids=[f"{n}{w}" for n, w, _ in ALL])
def test_every_real_rule_compiles_with_no_function_left_unimplemented(
    name: str, where: str, text: str
) -> None:
    try:
        cel.compile_expr(text, VARIABLES, KUBERNETES)
    except cel.Unsupported as exc:
        pytest.fail(f"{name} {where}: not implemented: {exc}")


def test_no_real_crd_rule_is_refused_or_skipped_by_the_local_cluster() -> None:
    for name in CRDS:
        tree = celrules.rule_tree(schema(name))
        assert tree is not None
        assert celrules.compile_causes(schema(name), "spec") == []
        skipped = [r.text for r in walk_rules(tree) if r.program is None]
        assert skipped == [], name


def walk_rules(tree: celrules.RuleTree) -> Iterator[celrules.Rule]:
    yield from tree.rules
    for child in (*tree.properties.values(), tree.additional, tree.items, *tree.all_of):
        if child is not None:
            yield from walk_rules(child)


def messages(name: str, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [f"{c.field}: {c.message}" for c in celrules.rule_causes(obj, schema(name), old)]


# ------------------------------------------------------------------ Gateway API


def policy(**spec: Any) -> dict[str, Any]:
    base = {
        "targetRefs": [{"group": "", "kind": "Service", "name": "api"}],
        "validation": {"hostname": "api.example.com", "wellKnownCACertificates": "System"},
    }
    return {"spec": {**base, **spec}}


def test_a_valid_backend_tls_policy_passes() -> None:
    valid = policy(
        targetRefs=[
            {"group": "", "kind": "Service", "name": "api", "sectionName": "https"},
            {"group": "", "kind": "Service", "name": "api", "sectionName": "grpc"},
        ],
        validation={
            "hostname": "api.example.com",
            "caCertificateRefs": [{"group": "", "kind": "ConfigMap", "name": "ca"}],
            "subjectAltNames": [
                {"type": "Hostname", "hostname": "api.example.com"},
                {"type": "URI", "uri": "spiffe://cluster.local/ns/a/sa/b"},
            ],
        },
    )
    assert messages("gateway-api_backendtlspolicies", valid) == []


def test_backend_tls_policy_refusals_say_the_crds_words() -> None:
    name = "gateway-api_backendtlspolicies"
    same_target = policy(
        targetRefs=[
            {"group": "", "kind": "Service", "name": "api"},
            {"group": "", "kind": "Service", "name": "api", "sectionName": "https"},
        ]
    )
    assert messages(name, same_target) == [
        'spec.targetRefs: Invalid value: "array": sectionName must be specified when '
        "targetRefs includes 2 or more references to the same target"
    ]
    both = policy(
        validation={
            "hostname": "h",
            "wellKnownCACertificates": "System",
            "caCertificateRefs": [{"group": "", "kind": "ConfigMap", "name": "ca"}],
        }
    )
    assert messages(name, both) == [
        'spec.validation: Invalid value: "object": must not contain both CACertificateRefs '
        "and WellKnownCACertificates"
    ]
    san = policy(validation={"hostname": "h", "wellKnownCACertificates": "System",
                             "subjectAltNames": [{"type": "URI", "hostname": "x"}]})  # fmt: skip
    assert messages(name, san) == [
        'spec.validation.subjectAltNames[0]: Invalid value: "object": SubjectAltName element '
        "must not contain Hostname, if Type is not set to Hostname",
        'spec.validation.subjectAltNames[0]: Invalid value: "object": SubjectAltName element '
        "must contain URI, if Type is set to URI",
    ]


def gateway(**spec: Any) -> dict[str, Any]:
    return {"spec": {"gatewayClassName": "eg", **spec}}


def test_a_valid_gateway_passes() -> None:
    valid = gateway(
        addresses=[
            {"type": "IPAddress", "value": "10.0.0.1"},
            {"type": "IPAddress", "value": "10.0.0.2"},
            {"type": "Hostname", "value": "*.example.com"},
        ],
        infrastructure={
            "labels": {"app.kubernetes.io/name": "gw"},
            "annotations": {"example.com/team": "edge"},
        },
    )
    assert messages("gateway-api_gateways", valid) == []


def test_gateway_refusals_say_the_crds_words() -> None:
    name = "gateway-api_gateways"
    twice = gateway(addresses=[{"type": "IPAddress", "value": "10.0.0.1"}] * 2)
    assert messages(name, twice) == [
        'spec.addresses: Invalid value: "array": IPAddress values must be unique'
    ]
    bad_host = gateway(addresses=[{"type": "Hostname", "value": "Not_A_Host"}])
    assert [m.split(" (matching")[0] for m in messages(name, bad_host)] == [
        'spec.addresses[0]: Invalid value: "object": Hostname value must be empty or contain '
        "only valid characters"
    ]
    bad_label = gateway(infrastructure={"labels": {"-bad": "x"}})
    assert messages(name, bad_label) == [
        'spec.infrastructure.labels: Invalid value: "object": Label keys must be in the form '
        "of an optional DNS subdomain prefix followed by a required name segment of up to 63 "
        "characters."
    ]


# ------------------------------------------------------------------ Karpenter


def nodepool(labels: dict[str, str] | None = None, **template_spec: Any) -> dict[str, Any]:
    spec = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["3"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"], "minValues": 1},
        ],
        **template_spec,
    }
    template: dict[str, Any] = {"spec": spec}
    if labels is not None:
        template["metadata"] = {"labels": labels}
    return {
        "spec": {
            "template": template,
            "disruption": {"budgets": [{"nodes": "10%", "schedule": "@daily", "duration": "1h"}]},
        }
    }


def test_a_valid_nodepool_passes_rules_that_use_find() -> None:
    valid = nodepool(
        labels={"team": "a", "node.kubernetes.io/role": "x", "topology.kubernetes.io/zone": "z"}
    )
    assert messages("karpenter_nodepools", valid) == []


def test_nodepool_refusals_say_the_crds_words() -> None:
    name = "karpenter_nodepools"
    restricted = nodepool(labels={"kubernetes.io/hostname": "n1", "example.k8s.io/x": "y"})
    assert messages(name, restricted) == [
        'spec.template.metadata.labels: Invalid value: "object": label domain "kubernetes.io" '
        "is restricted",
        'spec.template.metadata.labels: Invalid value: "object": label domain "k8s.io" is '
        "restricted",
        'spec.template.metadata.labels: Invalid value: "object": label "kubernetes.io/hostname" '
        "is restricted",
    ]
    gt_two = nodepool(
        requirements=[{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": []}]
    )
    assert messages(name, gt_two) == [
        "spec.template.spec.requirements: Invalid value: \"array\": requirements operator 'Gt' "
        "or 'Lt' must have a single positive integer value"
    ]
    bad_key = nodepool(
        requirements=[{"key": "karpenter.sh/nodepool", "operator": "Exists", "values": []}]
    )
    assert messages(name, bad_key) == [
        'spec.template.spec.requirements[0].key: Invalid value: "string": label '
        '"karpenter.sh/nodepool" is restricted'
    ]


def test_nodepool_transition_rule_refuses_a_changed_node_class_kind() -> None:
    name = "karpenter_nodepools"
    old = nodepool()
    new = nodepool()
    new["spec"]["template"]["spec"]["nodeClassRef"]["kind"] = "OtherNodeClass"
    assert messages(name, new, old) == [
        'spec.template.spec.nodeClassRef: Invalid value: "object": nodeClassRef.kind is immutable'
    ]
    assert messages(name, old, old) == []


def route(*parent_refs: dict[str, Any], path: dict[str, Any] | None = None) -> dict[str, Any]:
    redirect = {"type": "RequestRedirect", "requestRedirect": {"statusCode": 301}}
    if path is not None:
        redirect["requestRedirect"] = {"statusCode": 301, "path": path}
    backend = {"name": "web", "port": 80, "filters": [redirect]}
    return {"spec": {"parentRefs": list(parent_refs), "rules": [{"backendRefs": [backend]}]}}


GW = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}


def test_a_valid_httproute_passes_rules_that_name_the_reserved_word_namespace() -> None:
    valid = route(
        {**GW, "sectionName": "http"},
        {**GW, "sectionName": "https"},
        {**GW, "namespace": "other"},  # another parent: its own namespace
        path={"type": "ReplacePrefixMatch", "replacePrefixMatch": "/v2"},
    )
    assert messages("gateway-api_httproutes", valid) == []


def test_httproute_refusals_say_the_crds_words() -> None:
    name = "gateway-api_httproutes"
    assert messages(name, route(GW, {**GW, "sectionName": "http"})) == [
        'spec.parentRefs: Invalid value: "array": sectionName must be specified when '
        "parentRefs includes 2 or more references to the same parent"
    ]
    assert messages(name, route({**GW, "namespace": "a"}, {**GW, "namespace": "a"})) == [
        'spec.parentRefs: Invalid value: "array": sectionName must be unique when parentRefs '
        "includes 2 or more references to the same parent"
    ]
    mixed = route(GW, path={"type": "ReplaceFullPath", "replacePrefixMatch": "/v2"})
    assert messages(name, mixed) == [
        "spec.rules[0].backendRefs[0].filters[0].requestRedirect.path: Invalid value: "
        "\"object\": replaceFullPath must be specified when type is set to 'ReplaceFullPath'",
        "spec.rules[0].backendRefs[0].filters[0].requestRedirect.path: Invalid value: "
        "\"object\": type must be 'ReplacePrefixMatch' when replacePrefixMatch is set",
    ]
