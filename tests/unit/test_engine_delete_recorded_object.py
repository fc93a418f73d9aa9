"""A delete is of the object the state records (its uid, as a precondition on the DELETE),
through the engine and the fake cluster: one deleted and made again by hand under its name
is left in place with a warning, its record's object counted as gone; one made again with
the resource's marks (restored from a backup) is still the resource's, and is deleted; a
record an older Stackwright wrote, with no uid, deletes by name as then.

What a real API server answers is the provider's business (tests/unit/test_provider_client.py)
and the integration tests' (tests/integration/test_delete_recorded_object.py)."""

from __future__ import annotations

from typing import Any

from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"
LEFT = "the object named default/{name} is now another one, made outside this stack: left in place"


def config_maps(*names: str, named: bool = True, value: str = "1") -> Declare:
    def declare(p: Program) -> None:
        for name in names:
            k8s.core.v1.ConfigMap(
                name, metadata={"name": name} if named else None, data={"k": value}
            )

    return declare


def made_again(
    stack: Stack, name: str, *, kind: str = "ConfigMap", marked: bool = False
) -> dict[str, Any]:
    """The object `name` deleted outside Stackwright and made again under its name: by
    hand (none of the stack's marks), or `marked` (a copy with its labels and annotations).
    A ConfigMap made again holds `theirs: "1"`; another kind, the same spec."""
    before = stack.fake.find(kind, name)
    assert before is not None
    stack.fake.remove(kind, name)
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if marked:
        meta.update({k: before["metadata"][k] for k in ("labels", "annotations")})
    fields = {"spec": before["spec"]} if "spec" in before else {"data": {"theirs": "1"}}
    again = stack.fake.put(
        {"apiVersion": before["apiVersion"], "kind": kind, "metadata": meta, **fields},
        manager="kubectl-create",
    )
    assert again["metadata"]["uid"] != before["metadata"]["uid"]
    return again


def warnings(stack: Stack) -> list[str]:
    return [e.message for e in stack.of(Diagnostic) if e.severity == "warning"]


def test_a_dropped_resource_leaves_an_object_made_again_by_hand(stack: Stack) -> None:
    stack.up(config_maps("a", "b"))
    made_again(stack, "b")

    done = stack.up(config_maps("a"))

    assert done.ok, done.failures
    assert done.counts == {"same": 1, "delete": 1}
    found = stack.fake.find("ConfigMap", "b")
    assert found is not None and found["data"] == {"theirs": "1"}
    assert warnings(stack) == [LEFT.format(name="b")]
    assert [r.urn for r in stack.state().resources] == [urn(CM, "a")]


def test_destroy_leaves_an_object_made_again_by_hand(stack: Stack) -> None:
    stack.up(config_maps("a", "b"))
    made_again(stack, "a")

    done = stack.destroy()

    assert done.ok, done.failures
    assert stack.fake.names("ConfigMap") == ["default/a"]
    assert warnings(stack) == [LEFT.format(name="a")]
    assert stack.state().resources == [] and stack.state().pending == []


def test_an_object_made_again_with_the_resources_marks_is_deleted(stack: Stack) -> None:
    stack.up(config_maps("a", "b"))
    made_again(stack, "b", marked=True)

    done = stack.up(config_maps("a"))

    assert done.ok, done.failures
    assert stack.fake.names("ConfigMap") == ["default/a"]
    assert warnings(stack) == []
    # The first delete named the recorded uid and was refused; the second, the one found.
    assert [c.name for c in stack.fake.calls_to("delete")] == ["b", "b"]


def test_a_record_without_a_uid_deletes_by_name(stack: Stack) -> None:
    """A record an older Stackwright wrote (no uid kept): the object under its name is
    deleted, as it was then."""
    stack.up(config_maps("a", "b"))
    document = stack.backend.export("shop", "dev")
    for resource in document["resources"]:
        resource["outputs"]["metadata"].pop("uid", None)
    stack.backend.import_("shop", "dev", document)
    made_again(stack, "b")

    done = stack.up(config_maps("a"))

    assert done.ok, done.failures
    assert stack.fake.names("ConfigMap") == ["default/a"]


def web(app: str, *, named: bool) -> Declare:
    """A Deployment whose selector (immutable) is `app`: a new one forces a replacement."""

    def declare(p: Program) -> None:
        k8s.apps.v1.Deployment(
            "web",
            metadata={"name": "web"} if named else None,
            spec={
                "selector": {"matchLabels": {"app": app}},
                "template": {
                    "metadata": {"labels": {"app": app}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                },
            },
        )

    return declare


def test_the_old_half_of_a_replacement_leaves_an_object_made_again_by_hand(
    stack: Stack,
) -> None:
    """Create-before-delete of an auto-named object: its former object, made again by hand
    under its name meanwhile, is not the one the replacement deletes."""
    stack.up(web("web", named=False))
    (old,) = [n.split("/")[1] for n in stack.fake.names("Deployment")]
    made_again(stack, old, kind="Deployment")

    done = stack.up(web("web2", named=False))

    assert done.ok, done.failures
    assert done.counts == {"replace": 1, "delete-replaced": 1}
    assert f"default/{old}" in stack.fake.names("Deployment")
    assert warnings(stack) == [LEFT.format(name=old)]
    assert [(r.id, r.delete_pending) for r in stack.state().resources] == [
        (n, False) for n in stack.fake.names("Deployment") if n != f"default/{old}"
    ]


def test_a_delete_before_replace_leaves_an_object_made_again_by_hand(stack: Stack) -> None:
    """The delete half of a delete-first replacement spares the object made by hand; the
    create half then finds the name taken by an object not the stack's, and says so."""
    stack.up(web("web", named=True))
    made_again(stack, "web", kind="Deployment")

    done = stack.up(web("web2", named=True))

    found = stack.fake.find("Deployment", "web")
    assert found is not None and found["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert "annotations" not in found["metadata"], "not taken over"
    assert warnings(stack)[0] == LEFT.format(name="web")
    assert not done.ok
    assert "already exists" in done.failures[0], done.failures


def test_a_pending_delete_whose_object_was_made_again_by_hand_spares_it(stack: Stack) -> None:
    """A delete whose reply was lost (a kill -9 looks the same to the next run) landed; the
    object made by hand under its name since is not the one recorded: the next run settles
    the delete as done and leaves it."""
    stack.up(config_maps("a", "b"))
    stack.fake.lose_reply["b"] = TimeoutError("read timed out")
    assert not stack.up(config_maps("a")).ok
    stack.fake.lose_reply.clear()
    assert [p.resource.urn for p in stack.state().pending] == [urn(CM, "b")]
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "b", "namespace": "default"},
        },
        manager="kubectl-create",
    )
    stack.fake.calls.clear()

    done = stack.destroy()

    assert done.ok, done.failures
    assert [c.name for c in stack.fake.calls_to("delete")] == ["a"]
    assert stack.fake.names("ConfigMap") == ["default/b"]
    assert stack.state().resources == [] and stack.state().pending == []


def test_a_marked_copy_made_again_at_each_delete_fails_the_step_in_the_end(
    stack: Stack,
) -> None:
    """Something (a controller, a tool applying a copy) makes the object again, marks and
    all, each time it is deleted: the delete says so after a few rounds rather than going
    on for ever, and the record stays for the next run."""
    stack.up(config_maps("a", "b"))
    made_again(stack, "b", marked=True)
    delete = stack.fake.delete
    remade = iter(range(1000))

    async def made_again_each_time(*args: Any, **kwargs: Any) -> dict[str, Any] | None:
        found = await delete(*args, **kwargs)
        if found is not None:  # made again before the next delete, with another uid
            stored = stack.fake.find("ConfigMap", "b")
            assert stored is not None
            stored["metadata"]["uid"] = f"remade-{next(remade)}"
        return found

    stack.fake.delete = made_again_each_time  # type: ignore[method-assign]

    done = stack.up(config_maps("a"))

    assert not done.ok
    assert "was made again under its name, marked as this resource" in done.failures[0]
    assert len(stack.fake.calls_to("delete")) == 5
    assert urn(CM, "b") in [r.urn for r in stack.state().resources]
