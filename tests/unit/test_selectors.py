"""Label and field selectors: grammar, messages and matching as kube-apiserver has them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster.selectors import (
    EVERYTHING,
    NOTHING,
    FieldRequirement,
    FieldSelector,
    Requirement,
    check_field_selector,
    field_value,
    label_selector_from_dict,
    parse_field_selector,
    parse_label_selector,
    validate_label_key,
    validate_label_value,
)
from stackwright.localcluster.status import BadRequest

QNAME_HINT = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_HINT = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def error_of(text: str) -> str:
    with pytest.raises(BadRequest) as info:
        parse_label_selector(text)
    assert info.value.code == 400
    return info.value.message


# ------------------------------------------------------------------------------------
# Label selector grammar


def test_parses_every_operator_and_prints_the_canonical_form() -> None:
    selector = parse_label_selector(
        "app=web,tier!=db,env in (staging, prod),!legacy,release notin (a),team,x==y,n>5,m<7"
    )
    assert str(selector) == (
        "app=web,env in (prod,staging),!legacy,m<7,n>5,release notin (a),team,tier!=db,x==y"
    )
    assert [r.operator for r in selector.requirements] == [
        "=", "in", "!", "lt", "gt", "notin", "exists", "!=", "==",
    ]  # fmt: skip
    assert not selector.empty


def test_empty_text_selects_everything() -> None:
    selector = parse_label_selector("")
    assert selector.empty
    assert selector.matches(None)
    assert selector.matches({"a": "b"})
    assert parse_label_selector("   ") == EVERYTHING


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("x in ()", ("",)),
        ("x in (,a)", ("", "a")),
        ("x in (a,)", ("", "a")),
        ("x in (a,,b)", ("", "a", "b")),
        ("x in (b,a,b)", ("a", "b")),
        ("x=", ("",)),
        ("x in (in,notin)", ("in", "notin")),
    ],
)
def test_value_sets(text: str, values: tuple[str, ...]) -> None:
    (requirement,) = parse_label_selector(text).requirements
    assert requirement.values == values


def test_keywords_are_identifiers_where_a_key_is_expected() -> None:
    (requirement,) = parse_label_selector("in=notin").requirements
    assert requirement == Requirement("in", "=", ("notin",))
    assert parse_label_selector("notin in (in)").requirements[0].operator == "in"


def test_whitespace_separates_tokens() -> None:
    assert str(parse_label_selector(" a = b ,\tc\n")) == "a=b,c"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a,", "found '', expected: identifier after ','"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        ("(a)", "found '(', expected: !, identifier, or 'end of string'"),
        ("k in a", "unable to parse requirement: found 'a' expected: '('"),
        ("k in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
        ("k in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("k in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("k=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
        ("!(", "unable to parse requirement: found '(', expected: identifier"),
        ("a,,b", "found ',', expected: identifier after ','"),
    ],
)
def test_syntax_errors_carry_the_servers_wording(text: str, message: str) -> None:
    assert error_of(text) == message


def test_invalid_keys_are_reported_with_a_nil_field_path() -> None:
    assert error_of("-a") == (
        f'unable to parse requirement: <nil>: Invalid value: "-a": name part {QNAME_HINT}'
    )
    assert error_of("a/b/c=d") == (
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name '
        f"{QNAME_HINT} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    assert error_of("Example.com/a").startswith(
        'unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a '
        "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"
    )
    assert "name part must be no more than 63 characters" in error_of("a" * 64)


def test_invalid_values_name_the_value_index_and_key() -> None:
    assert error_of("app=a/b") == (
        f'unable to parse requirement: values[0][app]: Invalid value: "a/b": {VALUE_HINT}'
    )


def test_inequalities_need_integers_and_aggregate_their_errors() -> None:
    assert error_of("n>") == (
        'unable to parse requirement: values[0]: Invalid value: "": '
        "for 'Gt', 'Lt' operators, the value must be an integer"
    )
    assert error_of("n>a-") == (
        "unable to parse requirement: ["
        "values[0]: Invalid value: \"a-\": for 'Gt', 'Lt' operators, the value must be an integer, "
        f'values[0][n]: Invalid value: "a-": {VALUE_HINT}]'
    )
    # Beyond int64 is not an integer to the server either.
    assert "must be an integer" in error_of("n>9223372036854775808")
    parse_label_selector("n>9223372036854775807")


def test_key_and_value_validation_helpers() -> None:
    assert validate_label_key("example.com/my-name_1.x") == []
    assert validate_label_key("/a") == ["prefix part must be non-empty"]
    assert validate_label_key("a/")[0] == "name part must be non-empty"
    assert validate_label_value("") == []
    assert validate_label_value("a" * 64)[0] == "must be no more than 63 characters"


def test_a_nul_character_is_read_as_go_reads_it() -> None:
    # At the start of a token it ends the input; inside an identifier it only ends the token.
    assert str(parse_label_selector("a=b \0(garbage")) == "a=b"
    assert error_of("a=b\0garbage") == "found 'garbage', expected: ',' or 'end of string'"


# ------------------------------------------------------------------------------------
# Label matching


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app=web", {"app": "db"}, False),
        ("app=web", {}, False),
        ("app!=web", {}, True),
        ("app!=web", {"app": "web"}, False),
        ("env in (a,b)", {"env": "b"}, True),
        ("env in (a,b)", {}, False),
        ("env notin (a,b)", {}, True),
        ("env notin (a,b)", {"env": "a"}, False),
        ("team", {"team": ""}, True),
        ("!team", {"team": ""}, False),
        ("!team", {}, True),
        ("n>5", {"n": "6"}, True),
        ("n>5", {"n": "5"}, False),
        ("n>5", {"n": "x"}, False),
        ("n<5", {"n": "-3"}, True),
        ("n<5", {}, False),
        ("a=1,b=2", {"a": "1", "b": "2"}, True),
        ("a=1,b=2", {"a": "1"}, False),
    ],
)
def test_matching(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_label_selector(text).matches(labels) is expected


def test_requires_exact_match() -> None:
    selector = parse_label_selector("a=1,b in (2),c in (3,4),d!=5")
    assert selector.requires_exact_match("a") == "1"
    assert selector.requires_exact_match("b") == "2"
    assert selector.requires_exact_match("c") is None
    assert selector.requires_exact_match("d") is None
    assert selector.requires_exact_match("zz") is None


# ------------------------------------------------------------------------------------
# metav1.LabelSelector objects


def test_a_missing_selector_matches_nothing_and_an_empty_one_everything() -> None:
    assert label_selector_from_dict(None) is NOTHING
    assert not NOTHING.matches({"a": "b"})
    assert not NOTHING.matches(None)
    assert not NOTHING.empty
    assert label_selector_from_dict({}) is EVERYTHING
    assert label_selector_from_dict({"matchLabels": {}, "matchExpressions": []}).matches({})


def test_match_labels_and_expressions() -> None:
    selector = label_selector_from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["b", "a"]},
                {"key": "legacy", "operator": "DoesNotExist"},
                {"key": "team", "operator": "Exists"},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
            ],
        }
    )
    assert str(selector) == "app=web,env notin (dev),!legacy,team,tier in (a,b)"
    assert selector.matches({"app": "web", "tier": "a", "team": "x"})
    assert not selector.matches({"app": "web", "tier": "a", "team": "x", "legacy": "1"})
    assert not selector.matches({"app": "web", "tier": "a", "team": "x", "env": "dev"})


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        (
            {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
            '"Gt" is not a valid label selector operator',
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
        ),
        ({"matchLabels": {"a": "b c"}}, f'values[0][a]: Invalid value: "b c": {VALUE_HINT}'),
        ({"matchLabels": {"-a": "b"}}, f'key: Invalid value: "-a": name part {QNAME_HINT}'),
    ],
)
def test_invalid_label_selector_objects(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest) as info:
        label_selector_from_dict(selector)
    assert info.value.message == message


# ------------------------------------------------------------------------------------
# Field selectors


def test_field_selector_grammar() -> None:
    selector = parse_field_selector("status.phase!=Running,metadata.name==x")
    assert selector.requirements == (
        FieldRequirement("metadata.name", "=", "x"),
        FieldRequirement("status.phase", "!=", "Running"),
    )
    assert str(selector) == "metadata.name=x,status.phase!=Running"
    assert parse_field_selector("").empty
    assert str(parse_field_selector(",,a=b,")) == "a=b"


def test_field_values_escape_backslash_comma_and_equals() -> None:
    (requirement,) = parse_field_selector(r"metadata.name=a\,b\=c\\d").requirements
    assert requirement.value == "a,b=c\\d"
    assert str(requirement) == r"metadata.name=a\,b\=c\\d"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", "invalid selector: 'a'; can't understand 'a'"),
        ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
        # Go formats the offending rune with %v: its code point.
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(BadRequest) as info:
        parse_field_selector(text)
    assert info.value.message == message


@pytest.mark.parametrize(
    ("group", "kind", "field", "message"),
    [
        ("", "Pod", "spec.foo", "field label not supported: spec.foo"),
        ("", "Node", "metadata.namespace", "field label not supported: metadata.namespace"),
        ("", "Namespace", "metadata.namespace", "field label not supported: metadata.namespace"),
        (
            "batch",
            "Job",
            "status.succeeded",
            'field label "status.succeeded" not supported for batchv1.Job',
        ),
        (
            "",
            "ConfigMap",
            "data.x",
            '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
        ),
        # apps/v1 ReplicaSet has no conversion of its own on a real server.
        (
            "apps",
            "ReplicaSet",
            "status.replicas",
            '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
        ),
    ],
)
def test_unsupported_fields_are_refused_in_the_servers_words(
    group: str, kind: str, field: str, message: str
) -> None:
    with pytest.raises(BadRequest) as info:
        check_field_selector(parse_field_selector(f"{field}=x"), group, kind)
    assert info.value.message == message


@pytest.mark.parametrize(
    ("group", "kind", "text"),
    [
        (
            "",
            "Pod",
            "metadata.name=a,metadata.namespace=b,spec.nodeName=n,spec.restartPolicy=Always",
        ),
        ("", "Pod", "spec.schedulerName=s,spec.serviceAccountName=s,spec.hostNetwork=true"),
        (
            "",
            "Pod",
            "status.phase=Running,status.podIP=1.2.3.4,status.nominatedNodeName=n,spec.host=n",
        ),
        ("", "Event", "involvedObject.kind=Pod,involvedObject.name=a,involvedObject.uid=u"),
        ("", "Event", "involvedObject.apiVersion=v1,involvedObject.resourceVersion=1"),
        ("", "Event", "involvedObject.fieldPath=f,involvedObject.namespace=n,reason=r"),
        ("", "Event", "reportingComponent=c,source=s,type=Normal"),
        ("", "Secret", "type=Opaque,metadata.namespace=x"),
        ("", "Namespace", "status.phase=Active,metadata.name=x"),
        ("", "Node", "spec.unschedulable=true,metadata.name=x"),
        ("", "ReplicationController", "status.replicas=1"),
        ("", "Service", "spec.clusterIP=None,spec.type=ClusterIP"),
        ("batch", "Job", "status.successful=1,metadata.namespace=x"),
        ("", "ConfigMap", "metadata.name=a,metadata.namespace=b"),
        ("apiextensions.k8s.io", "CustomResourceDefinition", "metadata.name=a"),
    ],
)
def test_supported_fields_pass(group: str, kind: str, text: str) -> None:
    check_field_selector(parse_field_selector(text), group, kind)


def test_custom_kinds_accept_their_selectable_fields() -> None:
    selector = parse_field_selector("spec.color=red,metadata.namespace=a")
    check_field_selector(selector, "example.com", "Widget", selectable_fields=["spec.color"])
    with pytest.raises(BadRequest) as info:
        check_field_selector(selector, "example.com", "Widget", selectable_fields=[])
    assert info.value.message == "field label not supported: spec.color"
    # A cluster-scoped custom kind has no namespace to select on.
    with pytest.raises(BadRequest) as info:
        check_field_selector(
            selector, "example.com", "Widget", selectable_fields=["spec.color"], namespaced=False
        )
    assert info.value.message == "field label not supported: metadata.namespace"


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "prod"},
    "spec": {"nodeName": "node-a", "restartPolicy": "Always"},
    "status": {"phase": "Running", "podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.7"}]},
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("metadata.name=web-1", True),
        ("metadata.name!=web-1", False),
        ("metadata.namespace=prod,status.phase=Running", True),
        ("status.phase!=Running", False),
        ("spec.nodeName=node-a", True),
        ("spec.host=node-a", True),
        ("spec.hostNetwork=false", True),
        ("status.podIP=10.0.0.7", True),
        ("status.podIPs=", True),
        ("status.nominatedNodeName=", True),
    ],
)
def test_pod_fields(text: str, expected: bool) -> None:
    assert parse_field_selector(text).matches(POD) is expected


def test_field_values_of_other_kinds() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "status": {"succeeded": 2}}
    assert field_value(job, "status.successful") == "2"
    assert field_value({"apiVersion": "batch/v1", "kind": "Job"}, "status.successful") == "0"
    node = {"apiVersion": "v1", "kind": "Node", "spec": {"unschedulable": True}}
    assert field_value(node, "spec.unschedulable") == "true"
    assert field_value({"apiVersion": "v1", "kind": "Node"}, "spec.unschedulable") == "false"
    assert field_value({"apiVersion": "v1", "kind": "Node"}, "metadata.namespace") == ""
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "status": {}}
    assert field_value(rs, "status.replicas") == "0"
    event: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "reportingComponent": "kubelet"}
    assert field_value(event, "source") == "kubelet"
    event["source"] = {"component": "scheduler"}
    assert field_value(event, "source") == "scheduler"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 3, "on": False}}
    assert field_value(widget, "spec.size") == "3"
    assert field_value(widget, "spec.on") == "false"
    assert field_value(widget, "spec") == ""


def test_field_requires_exact_match() -> None:
    selector = parse_field_selector("metadata.name=a,metadata.namespace!=b")
    assert selector.requires_exact_match("metadata.name") == "a"
    assert selector.requires_exact_match("metadata.namespace") is None
    assert FieldSelector().matches(POD)


# ------------------------------------------------------------------------------------
# Properties: printing and parsing agree, and matching agrees with a plain reference.

_alnum = st.sampled_from("abcxyzABZ019")
_inner = st.sampled_from("abcz09-_.")


@st.composite
def _name_part(draw: st.DrawFn, max_inner: int = 10) -> str:
    first = draw(_alnum)
    if draw(st.booleans()):
        return first
    middle = draw(st.text(_inner, max_size=max_inner))
    return first + middle + draw(_alnum)


_dns_edge = st.sampled_from("ab09")
_dns_label = st.one_of(
    _dns_edge,
    st.tuples(_dns_edge, st.text(st.sampled_from("a0-"), max_size=5), _dns_edge).map("".join),
)
_prefix = st.lists(_dns_label, min_size=1, max_size=3).map(".".join)
label_keys = st.one_of(
    _name_part(),
    st.tuples(_prefix, _name_part()).map("/".join),
    st.sampled_from(["in", "notin", "app", "app.kubernetes.io/name"]),
)
label_values = st.one_of(st.just(""), _name_part(), st.sampled_from(["in", "notin"]))
integers = st.integers(min_value=0, max_value=10**12).map(str)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(label_keys)
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if op in ("exists", "!"):
        return Requirement(key, op)
    if op in ("gt", "lt"):
        return Requirement(key, op, (draw(integers),))
    if op in ("in", "notin"):
        values = draw(st.lists(label_values, min_size=1, max_size=4, unique=True))
        return Requirement(key, op, tuple(sorted(values)))
    return Requirement(key, op, (draw(label_values),))


label_sets = st.dictionaries(label_keys, st.one_of(label_values, integers), max_size=6)


def reference_match(requirement: Requirement, labels: dict[str, str]) -> bool:
    """The rules of labels.Requirement.Matches, written out plainly."""
    key, op, values = requirement.key, requirement.operator, requirement.values
    if op in ("=", "==", "in"):
        return key in labels and labels[key] in values
    if op in ("!=", "notin"):
        return key not in labels or labels[key] not in values
    if op == "exists":
        return key in labels
    if op == "!":
        return key not in labels
    if key not in labels or not labels[key].lstrip("-").isdigit():
        return False
    have, want = int(labels[key]), int(values[0])
    return have > want if op == "gt" else have < want


@given(st.lists(requirements(), max_size=5))
def test_printing_then_parsing_gives_the_same_requirements(reqs: list[Requirement]) -> None:
    text = ",".join(str(r) for r in reqs)
    parsed = parse_label_selector(text)
    assert parsed.requirements == tuple(sorted(reqs, key=lambda r: r.key))
    assert str(parse_label_selector(str(parsed))) == str(parsed)


@given(st.lists(requirements(), max_size=4), label_sets)
def test_matching_agrees_with_the_reference(
    reqs: list[Requirement], labels: dict[str, str]
) -> None:
    selector = parse_label_selector(",".join(str(r) for r in reqs))
    assert selector.matches(labels) == all(reference_match(r, labels) for r in reqs)


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from("ab=!(), \tin/.-_x0<>"), max_size=20))
def test_arbitrary_text_parses_or_is_a_bad_request(text: str) -> None:
    try:
        selector = parse_label_selector(text)
    except BadRequest as err:
        assert err.message
    else:
        # Whatever parses is printed in a form that parses back to itself.
        assert parse_label_selector(str(selector)) == selector


field_names = st.text(st.sampled_from("abZ."), min_size=1, max_size=12)
field_values = st.text(alphabet=st.sampled_from("ab=,\\!x y-"), max_size=8)


@given(
    st.lists(
        st.builds(FieldRequirement, field_names, st.sampled_from(["=", "!="]), field_values),
        max_size=4,
    )
)
def test_field_selectors_round_trip(reqs: list[FieldRequirement]) -> None:
    parsed = parse_field_selector(",".join(str(r) for r in reqs))
    assert sorted(parsed.requirements, key=str) == sorted(reqs, key=str)
    assert parsed.requirements == tuple(sorted(reqs, key=str))


@given(
    st.lists(
        st.builds(
            FieldRequirement,
            st.sampled_from(["metadata.name", "spec.x"]),
            st.sampled_from(["=", "!="]),
            st.sampled_from(["", "a", "b"]),
        ),
        max_size=3,
    ),
    st.sampled_from(["", "a", "b"]),
    st.sampled_from([None, "", "a", "b"]),
)
def test_field_matching_agrees_with_the_reference(
    reqs: list[FieldRequirement], name: str, x: str | None
) -> None:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
    }
    if x is not None:
        obj["spec"] = {"x": x}
    values = {"metadata.name": name, "spec.x": x or ""}
    expected = all((values[r.field] == r.value) == (r.operator == "=") for r in reqs)
    assert FieldSelector(tuple(reqs)).matches(obj) is expected


def test_public_surface() -> None:
    from stackwright.localcluster import selectors

    assert set(selectors.__all__) == {
        "EVERYTHING",
        "NOTHING",
        "FieldRequirement",
        "FieldSelector",
        "LabelSelector",
        "Requirement",
        "check_field_selector",
        "field_value",
        "label_selector_from_dict",
        "parse_field_selector",
        "parse_label_selector",
        "validate_label_key",
        "validate_label_value",
    }
    assert all(hasattr(selectors, name) for name in selectors.__all__)
