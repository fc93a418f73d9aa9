"""The provider's JSONPath subset for `stackwright.io/wait-for: jsonpath=...`."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackwright.providers.kubernetes.jsonpath import compile_path, evaluate, format_value

POD: dict[str, Any] = {
    "metadata": {"name": "web", "annotations": {"example.com/role": "front", "a.b": "dots"}},
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.7",
        "conditions": [
            {"type": "Initialized", "status": "True"},
            {"type": "Ready", "status": "False", "lastProbe": 3},
        ],
        "containerStatuses": [
            {"name": "web", "ready": True, "restartCount": 0},
            {"name": "sidecar", "ready": False, "restartCount": 4},
        ],
    },
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("{.status.phase}", ["Running"]),
        (".status.phase", ["Running"]),
        ("status.phase", ["Running"]),
        ("$.status.podIP", ["10.0.0.7"]),
        ("{.status.conditions[1].type}", ["Ready"]),
        ("{.status.conditions[-1].type}", ["Ready"]),
        ("{.status.conditions[5].type}", []),
        ("{.status.conditions[*].type}", ["Initialized", "Ready"]),
        ('{.status.conditions[?(@.type=="Ready")].status}', ["False"]),
        ("{.status.conditions[?(@.type=='Ready')].status}", ["False"]),
        ("{.status.conditions[?(@.type != 'Ready')].type}", ["Initialized"]),
        ("{.status.conditions[?(@.lastProbe)].type}", ["Ready"]),
        ("{.status.conditions[?(@.lastProbe >= 3)].type}", ["Ready"]),
        ("{.status.containerStatuses[?(@.ready==true)].name}", ["web"]),
        ("{.status.containerStatuses[?(@.restartCount > 1)].name}", ["sidecar"]),
        ("{.metadata.annotations['example.com/role']}", ["front"]),
        ("{.metadata.annotations.a\\.b}", ["dots"]),
        ('{.metadata["name"]}', ["web"]),
        ("{..name}", ["web", "web", "sidecar"]),
        ("{.status.missing.deeper}", []),
        ("{.metadata.*}", ["web", {"example.com/role": "front", "a.b": "dots"}]),
    ],
)
def test_evaluate(expression: str, expected: list[Any]) -> None:
    assert evaluate(expression, POD) == expected


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("{.status.phase", "missing the closing }"),
        ("{}", "is empty"),
        ("{.status[}", "expected an index"),
        ("{.status['open]}", "unterminated quoted string"),
        ("{.a[?(@.b == nope)]}", "expected a quoted string, a number"),
        ("{.a[?(b == 1)]}", "must start with @"),
        ("{.a]}", "unexpected text"),
    ],
)
def test_malformed_expressions_say_where(expression: str, problem: str) -> None:
    with pytest.raises(ValueError, match=r"position|closing|empty") as info:
        compile_path(expression)
    assert problem in str(info.value)


def test_format_value_prints_like_kubectl() -> None:
    assert [format_value(v) for v in ("Running", True, 3, None, [1])] == [
        "Running",
        "true",
        "3",
        "null",
        "[1]",
    ]


keys = st.text(
    alphabet=st.characters(categories=("Ll", "Lu", "Nd"), max_codepoint=127), min_size=1, max_size=8
)
leaves = st.one_of(st.text(max_size=5), st.integers(), st.booleans(), st.none())
documents = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(keys, documents, min_size=1))
def test_a_field_path_reads_what_indexing_reads(document: dict[str, Any]) -> None:
    for key, value in document.items():
        assert evaluate(f"{{.{key}}}", document) == [value]
        assert evaluate(f"{{['{key}']}}", document) == [value]


@given(st.lists(leaves, max_size=6))
def test_wildcard_and_indexes_agree(items: list[Any]) -> None:
    document = {"items": items}
    assert evaluate("{.items[*]}", document) == items
    assert [evaluate(f"{{.items[{i}]}}", document)[0] for i in range(len(items))] == items
    assert evaluate(f"{{.items[{len(items)}]}}", document) == []


@given(documents)
def test_evaluation_never_raises_on_any_document(document: Any) -> None:
    for expression in ("{.a.b}", "{..x}", "{.a[*].b}", "{.a[?(@.b=='c')].d}", "{.a[0]}", "{.*}"):
        assert isinstance(evaluate(expression, document), list)


@given(st.text(max_size=30))
def test_parsing_arbitrary_text_either_compiles_or_raises_value_error(text: str) -> None:
    with contextlib.suppress(ValueError):
        compile_path(text)
