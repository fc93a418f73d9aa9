"""How often a run walks a resource's inputs for the Outputs and secrets in them: once.

The check for secrets shown in plain text (before every `preview` and `up`) and the
dependency graph both need what the walk finds, for every object of the program.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, ValuesView
from typing import Any

import pytest
from engine_stack import Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.errors import UsageError
from stackwright.sdk.context import Program


class CountedLabels(Mapping[str, Any]):
    """Labels (a Mapping, not a dict: walked, not taken for plain data) that count how
    often a walk of the inputs asks for their values."""

    def __init__(self, **labels: Any) -> None:
        self._labels = labels
        self.walks = 0

    def values(self) -> ValuesView[Any]:
        self.walks += 1
        return super().values()

    def __getitem__(self, key: str) -> Any:
        return self._labels[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)

    def __len__(self) -> int:
        return len(self._labels)


def test_a_preview_walks_each_objects_inputs_once(stack: Stack) -> None:
    labels: list[CountedLabels] = []

    def counted(args: sw.ResourceTransformArgs) -> sw.ResourceTransformResult:
        # After the object's own conversion to plain dicts, which would copy them.
        labels.append(CountedLabels(app="web", ns=args.props["metadata"]["namespace"]))
        meta = {**args.props["metadata"], "labels": labels[-1]}
        return sw.ResourceTransformResult({**args.props, "metadata": meta}, args.opts)

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        k8s.core.v1.ConfigMap(
            "web",
            metadata={"namespace": ns.metadata["name"]},
            data={"a": "b"},
            opts=sw.ResourceOptions(transforms=[counted]),
        )

    stack.preview(declare)
    assert stack.started() == [("create", "shop"), ("create", "web")]
    assert [label.walks for label in labels] == [1]


def test_inputs_without_outputs_or_secrets_are_only_resolved(
    stack: Stack, monkeypatch: Any
) -> None:
    # Most objects of a program hold no Output and no Secret (their marks say so): a run
    # looks in them for no secret to strip and nothing unknown, before and while applying.
    from stackwright.engine import deletes, execute, preview, records

    walked: list[str] = []

    def unwrap(value: Any) -> Any:
        walked.append(f"secrets of {value['metadata'].get('name')}")
        return unwrap_secrets(value)

    def unknown(value: Any) -> Any:
        walked.append(f"unknowns of {value['metadata'].get('name')}")
        return unknown_paths(value)

    unwrap_secrets, unknown_paths = records.unwrap_secrets, execute.unknown_paths
    monkeypatch.setattr(records, "unwrap_secrets", unwrap)
    monkeypatch.setattr(execute, "unknown_paths", unknown)
    monkeypatch.setattr(deletes, "unknown_paths", unknown)
    monkeypatch.setattr(preview, "unknown_paths", unknown)

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        k8s.core.v1.ConfigMap("plain", metadata={"name": "plain", "namespace": "shop"})
        k8s.core.v1.ConfigMap("read", metadata={"name": "read", "namespace": ns.metadata["name"]})

    stack.up(declare)
    assert stack.started() == [("create", "shop"), ("create", "plain"), ("create", "read")]
    # The one whose namespace an Output gives: before the run, then as its step begins.
    assert walked == ["secrets of read", "secrets of read", "unknowns of read"]


def test_the_check_before_up_resolves_only_inputs_with_outputs_or_secrets(
    stack: Stack, monkeypatch: Any
) -> None:
    # Plain inputs are checked as JSON has them (in C); their step resolves them once.
    from stackwright.engine import declared_schemas

    resolved: list[str] = []

    def counted(value: Any, read: Any) -> Any:
        resolved.append(str(value["metadata"].get("name")))
        return resolve(value, read)

    resolve = declared_schemas.resolve
    monkeypatch.setattr(declared_schemas, "resolve", counted)

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        k8s.core.v1.ConfigMap("plain", metadata={"name": "plain", "namespace": "shop"})
        k8s.core.v1.ConfigMap("read", metadata={"name": "read", "namespace": ns.metadata["name"]})
        k8s.core.v1.Service(
            "typed",
            metadata={"name": "typed", "namespace": "shop"},
            spec={"ports": [{"port": "eighty"}]},
        )

    # The check still reads plain inputs: a string where a number goes is refused.
    with pytest.raises(UsageError, match=r"spec\.ports\[0\]\.port is the string"):
        stack.up(declare)
    assert resolved == ["read"]
    assert stack.started() == []
