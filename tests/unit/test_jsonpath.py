"""The JSONPath dialect of printer columns and `kubectl wait --for=jsonpath`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackwright.localcluster.jsonpath import JSONPath, evaluate, format_value, parse

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "labels": {"app.kubernetes.io/name": "web", "tier": "front"},
        "annotations": {"key.with.dots": "yes"},
    },
    "spec": {"replicas": 3, "paused": False},
    "status": {
        "replicas": 3,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
            {"type": "Progressing", "status": "False", "observedGeneration": 4},
            {"type": "Ready", "status": "True"},
        ],
    },
    "items": [10, 20, 30, 40, 50],
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (".spec.replicas", [3]),
        ("{.spec.replicas}", [3]),
        ("$.spec.replicas", [3]),
        ("{$.spec.replicas}", [3]),
        ("spec.replicas", [3]),  # kubectl's relaxed form
        (".spec.paused", [False]),
        (".spec.missing", []),
        (".spec.replicas.deeper", []),
        ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
        (".status.conditions[?(@.type=='Available')].reason", ["MinimumReplicasAvailable"]),
        ('.status.conditions[?(@.status != "True")].type', ["Progressing"]),
        (".status.conditions[?(@.observedGeneration >= 4)].type", ["Progressing"]),
        (".status.conditions[?(@.observedGeneration)].type", ["Progressing"]),
        ('.status.conditions[?(@.type=="Nope")].status', []),
        (".status.conditions[*].type", ["Available", "Progressing", "Ready"]),
        (".status.conditions[0].type", ["Available"]),
        (".status.conditions[-1].type", ["Ready"]),
        (".items[0]", [10]),
        (".items[1:3]", [20, 30]),
        (".items[-2:]", [40, 50]),
        (".items[::2]", [10, 30, 50]),
        (".items[0,4]", [10, 50]),
        (".items[7]", []),
        (".metadata['key.with.dots']", []),
        (".metadata.annotations['key.with.dots']", ["yes"]),
        ('.metadata.annotations["key.with.dots"]', ["yes"]),
        (".metadata.labels['app.kubernetes.io/name','tier']", ["web", "front"]),
        (r".metadata.labels.app\.kubernetes\.io/name", ["web"]),
        (".metadata.labels.*", ["web", "front"]),
        ("..observedGeneration", [4]),
        ("..name", ["web"]),
    ],
)
def test_evaluate(expression: str, expected: list[Any]) -> None:
    assert evaluate(expression, DEPLOYMENT) == expected


def test_the_empty_field_selects_the_document() -> None:
    assert evaluate("{.}", DEPLOYMENT) == [DEPLOYMENT]


def test_filters_compare_only_like_with_like() -> None:
    doc = {"xs": [{"v": 1}, {"v": "1"}, {"v": True}, {"v": 1.5}, {"v": None}]}
    assert evaluate(".xs[?(@.v == 1)].v", doc) == [1]
    assert evaluate('.xs[?(@.v == "1")].v', doc) == ["1"]
    assert evaluate(".xs[?(@.v == true)].v", doc) == [True]
    assert evaluate(".xs[?(@.v > 1)].v", doc) == [1.5]
    assert evaluate(".xs[?(@.v < true)].v", doc) == []


def test_filters_can_compare_two_paths() -> None:
    doc = {"xs": [{"a": 1, "b": 1}, {"a": 1, "b": 2}]}
    assert evaluate(".xs[?(@.a == @.b)].b", doc) == [1]


def test_parse_is_cached_and_reusable() -> None:
    path = parse(".spec.replicas")
    assert isinstance(path, JSONPath)
    assert parse(".spec.replicas") is path
    assert evaluate(path, {"spec": {"replicas": 1}}) == [1]


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("", "empty expression"),
        ("{}", "empty expression"),
        ("{.a}{.b}", "expected a single {...} expression"),
        (".spec[", "unterminated bracket at position 5"),
        (".a[?(@.x==1", "unterminated filter at position 2"),
        (".a[?(@.x==1]", "expected ')', found ']' at position 11"),
        (".a[?(@.x==1)", "unclosed filter, expected ')]' at position 11"),
        (".a[x]", "invalid array index 'x' at position 3"),
        (".a[::0]", "step must be > 0"),
        (".a[?(@.x=!1)]", "unrecognized filter operator '=!'"),
        (".a['x]", "unterminated bracket"),
        (".a b", "unexpected ' '"),
    ],
)
def test_malformed_expressions_raise_value_error(expression: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse(expression)
    assert message in str(info.value)
    assert repr(expression) in str(info.value)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("Running", "Running"),
        (3, "3"),
        (True, "true"),
        (False, "false"),
        (1.5, "1.5"),
        (100000.0, "100000"),
        (1e6, "1e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (None, "<nil>"),
        ({"b": 1, "a": "<x>"}, '{"a":"\\u003cx\\u003e","b":1}'),
        (["a", 2, 2.5, None], '["a",2,2.5,null]'),
    ],
)
def test_format_value_prints_as_kubectl_does(value: Any, text: str) -> None:
    assert format_value(value) == text


# ------------------------------------------------------------------------------------
# Properties

keys = st.text(alphabet=st.sampled_from("abcXYZ_-/0"), min_size=1, max_size=6)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=20,
)


def walk(document: Any, path: list[str]) -> list[Any]:
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return []
        document = document[key]
    return [document]


@given(documents, st.lists(keys, min_size=1, max_size=4))
def test_dotted_and_bracketed_fields_agree_with_a_plain_walk(
    document: Any, path: list[str]
) -> None:
    dotted = "".join("." + k for k in path)
    bracketed = "".join(f"['{k}']" for k in path)
    assert evaluate(dotted, document) == walk(document, path)
    assert evaluate(bracketed, document) == walk(document, path)


@given(st.lists(st.integers(), max_size=8), st.integers(-10, 10))
def test_an_index_is_one_element_or_none(items: list[int], index: int) -> None:
    expected = [items[index]] if -len(items) <= index < len(items) else []
    assert evaluate(f".xs[{index}]", {"xs": items}) == expected


@given(
    st.lists(st.integers(), max_size=8),
    st.one_of(st.none(), st.integers(-10, 10)),
    st.one_of(st.none(), st.integers(-10, 10)),
    st.one_of(st.none(), st.integers(1, 4)),
)
def test_slices_follow_python_slicing(
    items: list[int], start: int | None, end: int | None, step: int | None
) -> None:
    def show(n: int | None) -> str:
        return "" if n is None else str(n)

    expression = f".xs[{show(start)}:{show(end)}" + (f":{step}]" if step else "]")
    assert evaluate(expression, {"xs": items}) == items[start:end:step]


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(".[]()?@$*'\"=!<>,:ab1- {}\\"), max_size=16), documents)
def test_any_text_parses_or_raises_value_error(expression: str, document: Any) -> None:
    try:
        path = parse(expression)
    except ValueError:
        return
    assert isinstance(path.find(document), list)


def test_public_surface() -> None:
    from stackwright.localcluster import jsonpath

    assert set(jsonpath.__all__) == {"JSONPath", "evaluate", "format_value", "parse"}
    assert all(hasattr(jsonpath, name) for name in jsonpath.__all__)
