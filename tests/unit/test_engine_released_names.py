"""A resource declared again after the state let go of its object gets a fresh auto-name.

Lifecycle scenarios on the fake cluster: an auto-named ConfigMap dropped with
`retain_on_delete` (or forgotten by `state delete`) leaves its object in the cluster; the
same URN declared again is created under a new name, as Pulumi's random suffix would give,
shown by the preview first, and the old object is never touched again.
"""

from __future__ import annotations

from typing import Any

from engine_stack import PROJECT, STACK, Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.events import StepDone, StepStarted
from stackwright.model import Op, auto_name
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"
CACHE = urn(CM, "cache")


def cache(*, declared: bool = True, name: str | None = None, **opts: Any) -> Declare:
    def declare(p: Program) -> None:
        if declared:
            metadata = {"name": name} if name else None
            k8s.core.v1.ConfigMap(
                "cache", metadata=metadata, data={"k": "v"}, opts=sw.ResourceOptions(**opts)
            )

    return declare


def written(stack: Stack) -> list[str]:
    """The ConfigMaps the cluster was asked to change (not the stack's ApplySet parent)."""
    return [c.name for c in stack.fake.writes() if c.kind == "ConfigMap"]


def names(stack: Stack) -> list[str]:
    return [n.split("/")[1] for n in stack.fake.names("ConfigMap")]


def retained_and_declared_again(stack: Stack) -> tuple[str, Any]:
    """Up with the auto-named ConfigMap, drop it retained, then preview its return."""
    assert stack.up(cache(retain_on_delete=True)).ok
    (first,) = names(stack)
    assert stack.up(cache(declared=False)).ok
    assert stack.state().released_names == {CACHE: (first,)}
    return first, stack.fake.find("ConfigMap", first)


def test_declared_again_after_a_retained_delete_it_gets_a_new_name(stack: Stack) -> None:
    first, kept = retained_and_declared_again(stack)
    assert first == auto_name("cache", CACHE)  # what it always was, before any release

    preview = stack.preview(cache())
    (planned,) = [e.step for e in stack.of(StepStarted)]
    assert preview.ok and planned.op is Op.CREATE
    second = planned.new.inputs["metadata"]["name"] if planned.new else ""
    assert second.startswith("cache-") and second != first
    stack.fake.calls.clear()

    done = stack.up(cache())

    assert done.ok and done.counts == {"create": 1}, (done.counts, done.failures)
    assert sorted(names(stack)) == sorted([first, second])  # both exist
    assert stack.recorded(CACHE).id == f"default/{second}"
    assert stack.fake.find("ConfigMap", first) == kept  # the old one untouched
    assert set(written(stack)) == {second}


def test_later_deletes_of_the_new_object_leave_the_retained_one(stack: Stack) -> None:
    first, kept = retained_and_declared_again(stack)
    assert stack.up(cache()).ok
    (second,) = [n for n in names(stack) if n != first]
    stack.fake.calls.clear()

    assert stack.destroy().ok

    assert names(stack) == [first] and stack.fake.find("ConfigMap", first) == kept
    assert written(stack) == [second]


def test_a_third_object_avoids_every_name_let_go_of(stack: Stack) -> None:
    first, _ = retained_and_declared_again(stack)
    assert stack.up(cache(retain_on_delete=True)).ok
    (second,) = [n for n in names(stack) if n != first]
    assert stack.up(cache(declared=False)).ok
    assert stack.state().released_names == {CACHE: (first, second)}

    assert stack.up(cache()).ok

    (third,) = [n for n in names(stack) if n not in (first, second)]
    assert stack.recorded(CACHE).id == f"default/{third}"


def test_a_replacement_after_a_release_avoids_the_released_names(stack: Stack) -> None:
    first, _ = retained_and_declared_again(stack)
    assert stack.up(cache()).ok
    second = stack.recorded(CACHE).id.split("/")[1]

    done = stack.up(changed_cache())

    assert done.ok, done.failures
    third = stack.recorded(CACHE).id.split("/")[1]
    assert third == auto_name("cache", CACHE, second, (first,))
    assert third not in (first, second) and stack.fake.find("ConfigMap", first) is not None


def changed_cache() -> Declare:
    """The ConfigMap with other data, which its `replace_on_changes` makes a replacement."""

    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "cache",
            data={"k": "w"},
            opts=sw.ResourceOptions(replace_on_changes=["data"]),
        )

    return declare


def test_a_state_delete_releases_the_auto_name_too(stack: Stack) -> None:
    assert stack.up(cache()).ok
    (first,) = names(stack)
    stack.backend.delete_resource(PROJECT, STACK, CACHE)
    assert stack.state().released_names == {CACHE: (first,)}

    done = stack.up(cache())

    assert done.ok and done.counts == {"create": 1}, (done.counts, done.failures)
    (second,) = [n for n in names(stack) if n != first]
    assert stack.recorded(CACHE).id == f"default/{second}"


def test_a_name_the_user_gives_is_never_released(stack: Stack) -> None:
    assert stack.up(cache(name="settings", retain_on_delete=True)).ok
    assert stack.up(cache(declared=False)).ok
    assert stack.state().released_names == {}

    done = stack.up(cache())  # auto-named now: its first auto-name, nothing released

    assert done.ok
    assert stack.recorded(CACHE).id == f"default/{auto_name('cache', CACHE)}"


def test_an_object_of_nobody_under_the_fresh_name_is_still_refused(stack: Stack) -> None:
    first, _ = retained_and_declared_again(stack)
    fresh = auto_name("cache", CACHE, released=(first,))
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": fresh, "namespace": "default"},
        }
    )

    done = stack.up(cache())

    assert not done.ok
    (failed,) = [e for e in stack.of(StepDone) if not e.ok]
    assert f"ConfigMap default/{fresh} already exists" in str(failed.error)
    assert "it is not this stack's" in str(failed.error)
    assert stack.state().resource(CACHE) is None


def test_a_create_under_the_fresh_name_cut_short_is_settled_by_the_next_up(stack: Stack) -> None:
    first, kept = retained_and_declared_again(stack)
    fresh = auto_name("cache", CACHE, released=(first,))
    stack.fake.lose_reply["cache"] = TimeoutError("read timed out")  # landed, answer lost
    assert not stack.up(cache()).ok
    assert [(p.op, p.resource.id) for p in stack.state().pending] == [
        (Op.CREATE, f"default/{fresh}")
    ]
    stack.fake.lose_reply.clear()
    stack.fake.calls.clear()

    done = stack.up(cache())

    assert done.ok, done.failures
    assert stack.fake.calls_to("read")[0].name == fresh  # found under the name it journaled
    assert "create" not in done.counts  # no second object
    assert sorted(names(stack)) == sorted([first, fresh])
    assert stack.recorded(CACHE).id == f"default/{fresh}"
    assert stack.fake.find("ConfigMap", first) == kept


def test_import_takes_the_released_object_back_by_its_id(stack: Stack) -> None:
    first, _ = retained_and_declared_again(stack)

    done = stack.up(cache(import_=f"default/{first}"))

    assert done.ok and done.counts == {"import": 1}, (done.counts, done.failures)
    assert names(stack) == [first] and stack.recorded(CACHE).id == f"default/{first}"
