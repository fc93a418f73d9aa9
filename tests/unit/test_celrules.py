"""A CRD's `x-kubernetes-validations` rules as kube-apiserver 1.33 reports them: where
each runs, what `self` and `oldSelf` are, the message / messageExpression / reason /
fieldPath of a failure, and the CRD refused for a rule that does not parse."""

from __future__ import annotations

from typing import Any

import pytest

from stackwright.localcluster import cel, celrules
from stackwright.localcluster import validation as v
from stackwright.localcluster.cel_kubernetes import KUBERNETES
from stackwright.localcluster.status import Cause


def rule(text: str, **extra: Any) -> dict[str, Any]:
    return {"rule": text, **extra}


def scaler_schema(*rules: dict[str, Any], **props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": list(rules),
                "properties": {
                    "minReplicas": {"type": "integer"},
                    "maxReplicas": {"type": "integer"},
                    "name": {"type": "string"},
                    **props,
                },
            }
        },
    }


def scaler(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Scaler",
        "metadata": {"name": "s"},
        "spec": spec,
    }


def rendered(obj: dict[str, Any], schema: dict[str, Any], old: Any = None) -> list[str]:
    return [c.render() for c in v.validate_custom(obj, schema, old)]


MIN_MAX = rule(
    "self.minReplicas <= self.maxReplicas", message="minReplicas must not exceed maxReplicas"
)


def test_a_failing_rule_is_an_invalid_value_of_the_nodes_type() -> None:
    schema = scaler_schema(MIN_MAX)
    assert rendered(scaler(minReplicas=1, maxReplicas=3), schema) == []
    assert v.validate_custom(scaler(minReplicas=5, maxReplicas=3), schema) == [
        Cause(
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": minReplicas must not exceed maxReplicas',
        )
    ]


def test_the_default_message_names_the_rule() -> None:
    schema = scaler_schema(rule("  self.name != 'x'  "))
    assert rendered(scaler(name="x"), schema) == [
        "spec: Invalid value: \"object\": failed rule: self.name != 'x'"
    ]


def test_a_rule_at_the_root_has_a_nil_path() -> None:
    schema = {**scaler_schema(), "x-kubernetes-validations": [rule("self.metadata.name != 's'")]}
    assert rendered(scaler(), schema) == [
        "<nil>: Invalid value: \"object\": failed rule: self.metadata.name != 's'"
    ]


def test_message_expression_reason_and_field_path() -> None:
    schema = scaler_schema(
        rule(
            "self.minReplicas <= self.maxReplicas",
            messageExpression="'min ' + string(self.minReplicas) + ' over max'",
            reason="FieldValueForbidden",
            fieldPath=".minReplicas",
        ),
        rule("has(self.name)", message="name is required", reason="FieldValueRequired"),
        rule("self.minReplicas != 7", reason="FieldValueDuplicate"),
        # a message expression that fails (or says nothing) leaves the message
        rule("false", message="kept", messageExpression="self.missing"),
        rule("false", message="kept too", messageExpression="'  '"),
        rule("false", message="no old value", messageExpression="'was ' + oldSelf.name"),
    )
    assert rendered(scaler(minReplicas=7, maxReplicas=3), schema) == [
        "spec.minReplicas: Forbidden: min 7 over max",
        "spec: Required value: name is required",
        'spec: Duplicate value: "object"',
        'spec: Invalid value: "object": kept',
        'spec: Invalid value: "object": kept too',
        'spec: Invalid value: "object": no old value',
    ]


def test_an_evaluation_error_is_reported_with_the_rule() -> None:
    schema = scaler_schema(
        rule("self.maxReplicas > 0", message="needs max"),
        rule("self.minReplicas / 0 > 1"),
        rule("self.name + 1 == 'x'"),
    )
    assert rendered(scaler(minReplicas=1, name="n"), schema) == [
        'spec: Invalid value: "object": no such key: maxReplicas evaluating rule: needs max',
        'spec: Invalid value: "object": division by zero evaluating rule: self.minReplicas / 0 > 1',
        "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
        "supported operator, function or macro signature for rule: self.name + 1 == 'x'",
    ]


def test_rules_run_where_declared_and_only_on_present_values() -> None:
    schema = scaler_schema(
        tags={
            "type": "array",
            "items": {"type": "string", "x-kubernetes-validations": [rule("self.size() < 4")]},
        },
        limits={
            "type": "object",
            "additionalProperties": {
                "type": "number",
                "x-kubernetes-validations": [rule("self <= 1.5")],  # an integer reads as double
            },
        },
        note={"type": "string", "nullable": True, "x-kubernetes-validations": [rule("false")]},
    )
    assert rendered(scaler(), schema) == []
    assert rendered(scaler(note=None, tags=["ok"], limits={"cpu": 1}), schema) == []
    assert rendered(scaler(tags=["ok", "long"], limits={"cpu": 2, "mem": 1.5}), schema) == [
        'spec.tags[1]: Invalid value: "string": failed rule: self.size() < 4',
        'spec.limits[cpu]: Invalid value: "number": failed rule: self <= 1.5',
    ]


def test_transition_rules_run_on_updates_with_an_old_value() -> None:
    schema = scaler_schema(
        name={
            "type": "string",
            "x-kubernetes-validations": [rule("self == oldSelf", message="immutable")],
        },
    )
    assert rendered(scaler(name="a"), schema) == []  # a create: no old value
    assert rendered(scaler(name="b"), schema, scaler(name="a")) == [
        'spec.name: Invalid value: "string": immutable'
    ]
    assert rendered(scaler(name="a"), schema, scaler(name="a")) == []
    assert rendered(scaler(name="b"), schema, scaler()) == []  # newly set: no old value


def test_list_map_items_are_correlated_by_their_keys() -> None:
    schema = scaler_schema(
        ports={
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {
                "type": "object",
                "x-kubernetes-validations": [rule("self.port == oldSelf.port", message="fixed")],
                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
            },
        },
    )
    old = scaler(ports=[{"name": "a", "port": 1}, {"name": "b", "port": 2}])
    new = scaler(
        ports=[{"name": "b", "port": 3}, {"name": "a", "port": 1}, {"name": "c", "port": 9}]
    )
    assert rendered(new, schema, old) == ['spec.ports[0]: Invalid value: "object": fixed']


def test_an_unchanged_value_is_not_refused_again() -> None:
    """Validation ratcheting: an update leaving a failing value as it was is taken."""
    schema = scaler_schema(MIN_MAX)
    stored = scaler(minReplicas=5, maxReplicas=3, name="a")
    assert rendered(scaler(minReplicas=5, maxReplicas=3, name="b"), schema, stored) != []
    stored["spec"]["name"] = "b"
    moved = {**stored, "metadata": {"name": "s", "labels": {"x": "y"}}}
    schema_on_name = scaler_schema(
        name={"type": "string", "x-kubernetes-validations": [rule("self != 'b'")]}
    )
    assert rendered(moved, schema_on_name, stored) == []


def test_schema_errors_that_block_the_rules() -> None:
    schema = scaler_schema(MIN_MAX, minReplicas={"type": "integer"})
    schema["properties"]["spec"]["required"] = ["name"]
    assert rendered(scaler(minReplicas=5, maxReplicas=3), schema) == [
        "spec.name: Required value",
        '<nil>: Invalid value: "null": some validation rules were not checked because the '
        "object was invalid; correct the existing errors to complete validation",
    ]


def test_a_rule_calling_what_is_not_implemented_is_not_evaluated() -> None:
    schema = scaler_schema(rule("isSemver(self.name)"), MIN_MAX)  # Kubernetes 1.31's semver
    assert rendered(scaler(minReplicas=5, maxReplicas=3, name="::"), schema) == [
        'spec: Invalid value: "object": minReplicas must not exceed maxReplicas'
    ]


def test_ip_and_optional_rules_are_evaluated() -> None:
    schema = scaler_schema(
        rule("isIP(self.name)", message="name must be an IP address"),
        rule("self.?name.orValue('') != '10.0.0.9'", message="name is reserved"),
    )
    assert rendered(scaler(minReplicas=1, maxReplicas=3, name="10.0.0.1"), schema) == []
    assert rendered(scaler(minReplicas=1, maxReplicas=3, name="web"), schema) == [
        'spec: Invalid value: "object": name must be an IP address'
    ]
    assert rendered(scaler(minReplicas=1, maxReplicas=3, name="10.0.0.9"), schema) == [
        'spec: Invalid value: "object": name is reserved'
    ]


def test_an_optional_old_self_rule_runs_on_a_create_with_old_self_none() -> None:
    schema = scaler_schema(
        rule(
            "oldSelf.hasValue() || self.name.startsWith('new-')",
            optionalOldSelf=True,
            message="a new scaler's name starts with new-",
        ),
        rule(
            "!oldSelf.hasValue() || self.name == oldSelf.value().name",
            optionalOldSelf=True,
            message="name is immutable",
        ),
    )
    created = scaler(minReplicas=1, maxReplicas=3, name="web")
    assert rendered(created, schema) == [
        'spec: Invalid value: "object": a new scaler\'s name starts with new-'
    ]
    assert rendered(scaler(minReplicas=1, maxReplicas=3, name="new-web"), schema) == []
    renamed = scaler(minReplicas=1, maxReplicas=3, name="other")
    assert rendered(renamed, schema, created) == [
        'spec: Invalid value: "object": name is immutable'
    ]


def test_a_schema_without_rules_costs_a_lookup() -> None:
    schema = scaler_schema()
    assert celrules.rule_tree(schema) is None
    assert celrules.rule_tree(schema) is None
    with_rules = scaler_schema(MIN_MAX)
    tree = celrules.rule_tree(with_rules)
    assert tree is not None and celrules.rule_tree(with_rules) is tree  # compiled once
    assert list(tree.properties) == ["spec"] and not tree.rules


def test_check_custom_evaluates_the_rules() -> None:
    schema = scaler_schema(MIN_MAX)
    assert v.check_custom(scaler(minReplicas=1, maxReplicas=3), schema) is None
    assert v.check_custom(scaler(minReplicas=5, maxReplicas=3), schema) == (
        'Scaler.example.com "s" is invalid: spec: Invalid value: "object": '
        "minReplicas must not exceed maxReplicas"
    )


def crd(*rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "scalers.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "scalers",
                "singular": "scaler",
                "kind": "Scaler",
                "listKind": "ScalerList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": scaler_schema(*rules)},
                }
            ],
        },
    }


def test_a_crd_whose_rule_does_not_parse_is_refused() -> None:
    at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations"
    causes = [
        c.render()
        for c in v.validate_crd(
            crd(
                MIN_MAX,
                rule("self.minReplicas <"),
                rule("true", messageExpression="'a' +"),
                rule("true", reason="FieldValueWrong"),
                rule("quantity(self.q) > 1"),  # not implemented here: taken
            ),
            None,
        )
    ]
    assert causes == [
        f'{at}[1].rule: Invalid value: {{"rule":"self.minReplicas <"}}: compilation failed: '
        "ERROR: <input>:1:19: Syntax error: mismatched input '<EOF>' expecting an expression",
        f'{at}[2].messageExpression: Invalid value: {{"rule":"true","messageExpression":"\'a\' +"}}: '
        "messageExpression compilation failed: ERROR: <input>:1:6: Syntax error: mismatched "
        "input '<EOF>' expecting an expression",
        f'{at}[3].reason: Unsupported value: "FieldValueWrong": supported values: '
        '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
    ]
    assert v.validate_crd(crd(MIN_MAX), None) == []


LIBRARY: list[tuple[str, Any]] = [
    ("quantity('1Gi').isGreaterThan(quantity('1000Mi'))", True),
    ("quantity('500m').isLessThan(quantity('1'))", True),
    ("quantity('1') == quantity('1000m')", True),
    ("quantity('1.5').compareTo(quantity('2'))", -1),
    ("quantity('1k').add(24).asInteger()", 1024),
    ("quantity('1').sub(quantity('250m')).asApproximateFloat()", 0.75),
    ("quantity('-2').sign()", -1),
    ("quantity('1.5').isInteger()", False),
    ("isQuantity('1Gi') && !isQuantity('1GB')", True),
    ("isURL('https://example.com:8443/a?b=c')", True),
    ("isURL('/just/a/path')", True),
    ("isURL('example.com')", False),
    ("isURL('mailto:someone')", False),
    ("isURL('https://example.com:http/')", False),
    ("isURL('https://exa mple.com/')", False),
    ("isURL('https://example.com/%zz')", False),
    ("url('https://example.com:8443/a?b=c').getHost()", "example.com:8443"),
    ("url('https://example.com:8443/a').getHostname()", "example.com"),
    ("url('https://[::1]:80/').getHostname()", "::1"),
    ("url('https://example.com:8443/a').getPort()", "8443"),
    ("url('https://example.com').getPort()", ""),
    ("url('https://example.com/a/b?x=1&x=2').getEscapedPath()", "/a/b"),
    ("url('https://example.com/?x=1&x=2&y=').getQuery()", {"x": ["1", "2"], "y": [""]}),
    ("url('http://example.com').getScheme()", "http"),
]


@pytest.mark.parametrize(("text", "expected"), LIBRARY)
def test_the_quantity_and_url_libraries(text: str, expected: Any) -> None:
    assert (
        cel.compile_expr(text, frozenset({"self"}), KUBERNETES).evaluate({"self": None}) == expected
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("quantity('1Mm')", "unable to parse quantity's suffix"),
        ("quantity('1.5').asInteger()", "cannot convert value to integer"),
        (
            "url('example.com')",
            'URL parse error during conversion from string: parse "example.com": invalid URI '
            "for request",
        ),
        ("quantity('1').isLessThan(1)", "no such overload"),
    ],
)
def test_library_errors(text: str, message: str) -> None:
    program = cel.compile_expr(text, frozenset({"self"}), KUBERNETES)
    with pytest.raises(cel.CelError) as caught:
        program.evaluate({"self": None})
    assert str(caught.value) == message


def test_rules_use_the_kubernetes_libraries() -> None:
    schema = scaler_schema(
        rule("quantity(self.memory).isLessThan(quantity('1Gi'))", message="at most 1Gi"),
        rule("isURL(self.endpoint)", message="endpoint must be a URL"),
        memory={"type": "string"},
        endpoint={"type": "string"},
    )
    assert rendered(scaler(memory="512Mi", endpoint="https://a.example"), schema) == []
    assert rendered(scaler(memory="2Gi", endpoint="a.example"), schema) == [
        'spec: Invalid value: "object": at most 1Gi',
        'spec: Invalid value: "object": endpoint must be a URL',
    ]


def test_public_surface() -> None:
    assert celrules.__all__ == sorted(celrules.__all__)
