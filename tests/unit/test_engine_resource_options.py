"""`additional_secret_outputs`, `deleted_with` and transforms through the engine (fake cluster).

Lifecycle scenarios as in test_engine_lifecycle: real programs through `operations.run`,
a real state store; asserted are the delete calls the fake cluster received, the state
and the events.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Declare, Stack, program, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.errors import UsageError
from stackwright.model import Op
from stackwright.sdk.context import Program

NS = "kubernetes:core/v1:Namespace"
CM = "kubernetes:core/v1:ConfigMap"
DEPLOY = "kubernetes:apps/v1:Deployment"


def deletes(stack: Stack) -> list[str]:
    return [c.name for c in stack.fake.calls_to("delete")]


def app(
    *, riders: tuple[str, ...] = ("a", "b", "c"), alone: tuple[str, ...] = ("own",), **opts: Any
) -> Declare:
    """Namespace `apps`, ConfigMaps deleted with it (`riders`) and not (`alone`)."""

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        for name in riders:
            k8s.core.v1.ConfigMap(
                name,
                metadata={"name": name, "namespace": "apps"},
                data={"k": name},
                opts=sw.ResourceOptions(deleted_with=ns, **opts),
            )
        for name in alone:
            k8s.core.v1.ConfigMap(
                name, metadata={"name": name, "namespace": "apps"}, data={"k": name}
            )

    return declare


# --- deleted_with ---------------------------------------------------------------------------


def test_destroy_skips_the_delete_calls_of_what_goes_with_the_namespace(stack: Stack) -> None:
    stack.up(app())
    assert stack.recorded(urn(CM, "a")).deleted_with == urn(NS, "apps")
    stack.fake.calls.clear()

    previewed = stack.run("destroy", None, dry_run=True)
    assert previewed.counts == {"delete": 5}
    said = {e.urn.rpartition("::")[2] for e in stack.of(Diagnostic) if "deleted with" in e.message}
    assert said == {"a", "b", "c"}

    done = stack.destroy()
    assert done.ok and done.counts == {"delete": 5}
    # One call for the namespace, one for the object not deleted with it: none for the rest.
    assert deletes(stack) == ["own", "apps"]
    assert stack.state().resources == []
    assert stack.fake.find("ConfigMap", "a", "apps") is None


def test_dropping_both_from_the_program_skips_the_riders_delete_calls(stack: Stack) -> None:
    stack.up(app())
    stack.fake.calls.clear()
    done = stack.up(lambda p: None)
    assert done.ok and done.counts == {"delete": 5}
    assert deletes(stack) == ["own", "apps"]
    assert stack.state().resources == []


def test_dropped_alone_it_is_deleted_on_its_own(stack: Stack) -> None:
    stack.up(app())
    stack.fake.calls.clear()
    done = stack.up(app(riders=("a", "b")))
    assert done.ok and done.counts == {"delete": 1, "same": 4}
    assert deletes(stack) == ["c"]
    assert stack.fake.find("ConfigMap", "c", "apps") is None


def test_a_namespace_that_fails_to_go_leaves_its_riders_recorded_then_deletes_them(
    stack: Stack,
) -> None:
    """The riders' records go only once their carrier's object is gone: a carrier whose
    delete fails loses track of nothing, and its riders are deleted on their own."""
    stack.up(app(alone=()))
    stack.fake.calls.clear()
    stack.fake.fail_delete = {"apps": "the API server is on fire"}

    done = stack.destroy()
    assert not done.ok
    assert sorted(deletes(stack)) == ["a", "apps", "b", "c"]
    assert [r.urn for r in stack.state().resources] == [urn(NS, "apps")]
    assert stack.fake.find("ConfigMap", "a", "apps") is None


def test_a_namespace_delete_whose_reply_is_lost_loses_track_of_nothing(stack: Stack) -> None:
    """The namespace's delete lands but its reply never comes: whether it went is unknown,
    so its riders are deleted on their own (already gone: nothing to do), its step stays
    pending, and the next run settles it by reading the cluster."""
    stack.up(app(alone=()))
    stack.fake.lose_reply["apps"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    assert stack.fake.find("Namespace", "apps") is None
    assert [p.resource.urn for p in stack.state().pending] == [urn(NS, "apps")]
    assert {r.urn for r in stack.state().resources} == {urn(NS, "apps")}

    stack.fake.lose_reply.clear()
    assert stack.destroy().ok
    assert stack.state().resources == [] and stack.state().pending == []


def test_a_crash_after_the_namespace_went_settles_its_riders_records_as_gone(
    stack: Stack,
) -> None:
    """Killed between the namespace's delete and its riders' records (which go only once it
    is gone): the next run settles the namespace's delete as done and removes the riders'
    records with it, so the program declaring them again creates them; kept, they were
    planned as unchanged while their objects had gone with the namespace."""
    stack.up(app(alone=()))
    carrier = stack.recorded(urn(NS, "apps"))
    with stack.backend.begin_operation(PROJECT, STACK, kind="destroy") as operation:
        operation.begin(1, Op.DELETE, carrier)  # begun, never ended: the kill
    asyncio.run(stack.fake.delete("v1", "Namespace", None, "apps"))
    assert stack.fake.find("ConfigMap", "a", "apps") is None  # gone with it

    done = stack.up(app(alone=()))

    assert done.ok and done.counts == {"create": 4}, (done.counts, done.failures)
    assert stack.fake.find("ConfigMap", "a", "apps") is not None
    said = {e.urn.rpartition("::")[2] for e in stack.of(Diagnostic) if "went with" in e.message}
    assert said == {"a", "b", "c"}


def test_protected_or_retained_riders_do_not_ride(stack: Stack) -> None:
    stack.up(app(riders=("kept",), alone=(), retain_on_delete=True))
    stack.fake.calls.clear()
    done = stack.destroy()
    assert done.ok
    assert deletes(stack) == ["apps"]
    assert [c.name for c in stack.fake.calls_to("unmark")] == ["kept"]  # retained: as before

    stack.up(app(riders=("guarded",), alone=(), protect=True))
    stack.fake.calls.clear()
    with pytest.raises(UsageError, match=r"destroy refused: .*guarded.* is protected"):
        stack.destroy()  # before any change, as Pulumi's preview stops it
    assert deletes(stack) == []  # nothing deleted: neither the namespace nor its objects
    assert {r.urn for r in stack.state().resources} == {urn(NS, "apps"), urn(CM, "guarded")}


def test_an_object_in_another_namespace_is_deleted_on_its_own(stack: Stack) -> None:
    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        k8s.core.v1.ConfigMap(
            "elsewhere",
            metadata={"name": "elsewhere", "namespace": "default"},
            opts=sw.ResourceOptions(deleted_with=ns),
        )

    stack.up(declare)
    stack.fake.calls.clear()
    assert stack.destroy().ok
    assert sorted(deletes(stack)) == ["apps", "elsewhere"]


def test_a_rider_using_what_its_namespace_waits_for_does_not_deadlock(stack: Stack) -> None:
    """The Deployment rides; the ConfigMap it mounts does not, and must go after it while
    the namespace goes after the ConfigMap: the Deployment is deleted on its own."""

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        k8s.core.v1.ConfigMap("conf", metadata={"name": "conf", "namespace": "apps"})
        template = {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [{"name": "web", "image": "nginx:1.29"}],
                "volumes": [{"name": "c", "configMap": {"name": "conf"}}],
            },
        }
        k8s.apps.v1.Deployment(
            "web",
            metadata={"name": "web", "namespace": "apps"},
            spec={"selector": {"matchLabels": {"app": "web"}}, "template": template},
            opts=sw.ResourceOptions(deleted_with=ns),
        )
        k8s.core.v1.ConfigMap(
            "rider",
            metadata={"name": "rider", "namespace": "apps"},
            opts=sw.ResourceOptions(deleted_with=ns),
        )

    stack.up(declare)
    stack.fake.calls.clear()
    done = stack.destroy()
    assert done.ok
    assert deletes(stack) == ["web", "conf", "apps"]
    assert stack.state().resources == []


def test_deleted_with_recorded_alone_is_a_state_only_change(stack: Stack) -> None:
    stack.up(app(riders=(), alone=("a",)))
    stack.fake.calls.clear()
    changed = stack.up(app(riders=("a",), alone=()))
    assert changed.counts == {"same": 2}
    assert stack.fake.writes() == []
    assert stack.recorded(urn(CM, "a")).deleted_with == urn(NS, "apps")


# --- additional_secret_outputs ---------------------------------------------------------------


def test_additional_secret_outputs_make_top_level_fields_secret(stack: Stack) -> None:
    def declare(secret: tuple[str, ...]) -> Declare:
        def program(p: Program) -> None:
            cm = k8s.core.v1.ConfigMap(
                "settings",
                metadata={"name": "settings"},
                data={"token": "plain-value"},
                opts=sw.ResourceOptions(additional_secret_outputs=secret),
            )
            sw.export("token", cm.data["token"])

        return program

    plain = stack.up(declare(()))
    assert plain.outputs == {"token": "plain-value"}

    # Added to a resource that does not change otherwise: the state learns it, no API call.
    stack.fake.calls.clear()
    secret = stack.up(declare(("data",)))
    assert secret.counts == {"same": 1} and stack.fake.writes() == []
    assert secret.outputs == {"token": "[secret]"}
    assert "data" in stack.recorded(urn(CM, "settings")).secret_paths


def test_additional_secret_outputs_take_snake_case_and_refuse_nested_paths() -> None:
    def declare(secret: Any) -> Declare:
        def program(p: Program) -> None:
            k8s.core.v1.Secret(
                "s",
                string_data={"a": "b"},
                opts=sw.ResourceOptions(additional_secret_outputs=secret),
            )

        return program

    made = program(declare("string_data"))
    assert made.resources[0].opts.additional_secret_outputs == ("stringData",)
    with pytest.raises(UsageError, match="must name top-level fields"):
        program(declare(["data.password"]))


# --- transforms ------------------------------------------------------------------------------


def labelled(key: str, value: str) -> Any:
    def transform(args: sw.ResourceTransformArgs) -> sw.ResourceTransformResult | None:
        if not args.custom:
            return None
        meta = dict(args.props.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), key: value}
        return sw.ResourceTransformResult({**args.props, "metadata": meta}, args.opts)

    return transform


def test_transforms_apply_to_the_resource_its_children_and_the_stack(stack: Stack) -> None:
    seen: list[tuple[str, str]] = []

    def spy(args: sw.ResourceTransformArgs) -> None:
        seen.append((args.type_, args.name))

    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap("before", metadata={"name": "before"})
        sw.register_resource_transform(labelled("team", "shop"))
        sw.register_resource_transform(spy)
        group = sw.ComponentResource(
            "acme:App", "group", opts=sw.ResourceOptions(transforms=[labelled("tier", "web")])
        )
        k8s.core.v1.ConfigMap(
            "child",
            metadata={"name": "child", "labels": {"tier": "own"}},
            opts=sw.ResourceOptions(
                parent=group, transforms=[labelled("own", "yes"), labelled("tier", "mine")]
            ),
        )
        k8s.core.v1.ConfigMap("after", metadata={"name": "after"})

    assert stack.up(declare).ok
    labels = {
        name: (stack.fake.find("ConfigMap", name, "default") or {})["metadata"].get("labels", {})
        for name in ("before", "child", "after")
    }
    assert "team" not in labels["before"]  # registered after it was declared
    assert labels["after"]["team"] == "shop"
    # Its own transforms first, then its parent's (which win here), then the stack's.
    assert labels["child"]["own"] == "yes"
    assert labels["child"]["tier"] == "web"
    assert labels["child"]["team"] == "shop"
    assert seen == [("acme:App", "group"), (CM, "child"), (CM, "after")]


def test_a_transform_may_change_options(stack: Stack) -> None:
    def protect(args: sw.ResourceTransformArgs) -> sw.ResourceTransformResult:
        return sw.ResourceTransformResult(
            args.props, sw.ResourceOptions.merge(args.opts, sw.ResourceOptions(protect=True))
        )

    def declare(p: Program) -> None:
        sw.register_resource_transform(protect)
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"})

    stack.up(declare)
    assert stack.recorded(urn(CM, "settings")).protect


def test_an_async_transform_is_awaited(stack: Stack) -> None:
    """Pulumi's Python SDK takes `async def` transforms too, and a failure inside one is
    the same one line as a plain transform's."""

    async def protect(args: sw.ResourceTransformArgs) -> sw.ResourceTransformResult:
        await asyncio.sleep(0)
        return sw.ResourceTransformResult(
            args.props, sw.ResourceOptions.merge(args.opts, sw.ResourceOptions(protect=True))
        )

    async def failing(args: sw.ResourceTransformArgs) -> None:
        await asyncio.sleep(0)
        raise ValueError("no labels")

    def declare(p: Program) -> None:
        sw.register_resource_transform(protect)
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"})

    stack.up(declare)
    assert stack.recorded(urn(CM, "settings")).protect

    async def inside_a_loop() -> Program:  # a program declared from a coroutine
        return program(declare)

    declared = asyncio.run(inside_a_loop())
    assert [r.opts.protect for r in declared.resources] == [True]
    with pytest.raises(
        UsageError, match=r"transform 'failing' of .*ConfigMap 'x'.*ValueError: no labels"
    ):
        program(lambda p: k8s.core.v1.ConfigMap("x", opts=sw.ResourceOptions(transforms=[failing])))


def test_a_transform_returning_something_else_is_one_clear_error() -> None:
    def wrong(args: sw.ResourceTransformArgs) -> Any:
        return args.props

    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap("settings", opts=sw.ResourceOptions(transforms=[wrong]))

    with pytest.raises(
        UsageError, match=r"transform 'wrong' of .*ConfigMap 'settings'.*returned dict"
    ):
        program(declare)
    with pytest.raises(UsageError, match="must be functions"):
        program(lambda p: k8s.core.v1.ConfigMap("x", opts=sw.ResourceOptions(transforms=[1])))  # type: ignore[list-item]
    with pytest.raises(UsageError, match="must be functions"):
        program(lambda p: k8s.core.v1.ConfigMap("x", opts=sw.ResourceOptions(transforms=1)))  # type: ignore[arg-type]


def test_a_transform_that_raises_quoting_a_secret_shows_it_masked() -> None:
    """The one line a raising transform becomes masks secrets as the program's own
    failure does: the message reaches automation callers, not only the CLI."""

    def checked(args: sw.ResourceTransformArgs) -> None:
        raise ValueError(f"refusing password {args.props['data']['password']}")

    def declare(p: Program) -> None:
        sw.Output.secret("hunter2-password")
        k8s.core.v1.ConfigMap(
            "settings",
            data={"password": "hunter2-password"},
            opts=sw.ResourceOptions(transforms=[checked]),
        )

    with pytest.raises(UsageError) as raised:
        program(declare)
    assert "transform 'checked' of" in str(raised.value)
    assert "hunter2" not in str(raised.value) and "[secret]" in str(raised.value)


def test_a_transform_cannot_change_what_kind_of_object_it_is() -> None:
    """The type token (in the URN and the state) names the object's apiVersion and kind: a
    transform that changes them would record a Deployment for a StatefulSet."""

    def other_kind(args: sw.ResourceTransformArgs) -> sw.ResourceTransformResult:
        return sw.ResourceTransformResult({**args.props, "kind": "StatefulSet"}, args.opts)

    def declare(p: Program) -> None:
        k8s.apps.v1.Deployment("web", opts=sw.ResourceOptions(transforms=[other_kind]))

    with pytest.raises(
        UsageError,
        match=r"transform 'other_kind' of .*Deployment 'web'.*changed its kind to 'StatefulSet'",
    ):
        program(declare)


def test_the_new_names_are_exported() -> None:
    for name in ("ResourceTransformArgs", "ResourceTransformResult", "register_resource_transform"):
        assert name in sw.__all__ and hasattr(sw, name)
