"""What an experienced Pulumi user expects of the SDK, checked against the engine and the fake cluster."""

from __future__ import annotations

from engine_stack import Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.model import make_urn
from stackwright.sdk.context import Program
from stackwright.sdk.resource import ComponentResource, ResourceOptions

CM = "kubernetes:core/v1:ConfigMap"


def app_and_dependent(p: Program) -> None:
    app = ComponentResource("acme:web:App", "shop")
    inner = ComponentResource("acme:web:Part", "part", opts=ResourceOptions(parent=app))
    k8s.core.v1.ConfigMap(
        "settings", metadata={"name": "settings"}, data={"a": "1"},
        opts=ResourceOptions(parent=inner),
    )  # fmt: skip
    k8s.core.v1.ConfigMap(
        "after", metadata={"name": "after"}, data={"b": "2"},
        opts=ResourceOptions(depends_on=[app]),
    )  # fmt: skip


def test_depends_on_a_component_waits_for_all_its_children(stack: Stack) -> None:
    stack.fake.fail_apply["settings"] = "denied"

    summary = stack.up(app_and_dependent)

    assert not summary.ok
    assert [c.name for c in stack.fake.calls_to("apply")] == ["settings"]
    assert summary.not_done and summary.not_done[0].startswith(f"{CM} after:")

    stack.fake.fail_apply.clear()
    assert stack.up(app_and_dependent).ok
    child = make_urn("dev", "shop", CM, "settings", ("acme:web:App", "acme:web:Part"))
    assert child in stack.recorded(urn(CM, "after")).dependencies

    assert stack.destroy().ok
    deleted = [c.name for c in stack.fake.calls_to("delete")]
    assert deleted.index("after") < deleted.index("settings")
