"""What an operation finds when the one before it was interrupted: killed, cancelled, fenced.

Scenarios against the fake cluster and a real SQLite store (`engine_stack`): the
journal a killed run left, the lock it held, and what the next run says and does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Stack
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.engine.records import describe
from stackwright.engine.testing import Call
from stackwright.errors import UsageError
from stackwright.model import URN_ANNOTATION, Op, make_urn
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"


def urn(type_: str, name: str, stack: str = STACK) -> str:
    return make_urn(stack, PROJECT, type_, name)


def one_config_map(p: Program) -> None:
    k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": "fast"})


def settings(mode: str) -> Callable[[Program], None]:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": mode})

    return declare


def update_with_lost_reply(stack: Stack) -> None:
    """Create `settings`, then update it with an answer that never comes: the update
    landed, and its step stays pending."""
    assert stack.up(settings("fast")).ok
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.up(settings("slow")).ok


def dead_holder(stack: Stack, kind: str) -> None:
    """Leave the stack locked by an operation of `kind` whose process died: its lease lapses."""
    dead = stack.backend.begin_operation(PROJECT, STACK, kind=kind, lease_seconds=0.05)
    dead._keeper.stop(1.0)  # type: ignore[attr-defined]  # no renewal any more
    time.sleep(0.1)


def test_taking_over_a_dead_holders_lock_names_it(stack: Stack) -> None:
    """An `up` killed while holding the lock leaves a lease that lapses; the next
    operation takes it over and says whose it was, so the user knows why steps are
    being settled (and that the other run really is gone)."""
    dead_holder(stack, "destroy")

    assert stack.up(one_config_map).ok
    notes = [e.message for e in stack.of(Diagnostic)]
    took = [n for n in notes if n.startswith("took over the lock")]
    assert len(took) == 1, notes
    assert "a `destroy` started" in took[0] and f"(pid {os.getpid()})" in took[0]
    assert took[0].endswith(": its lease lapsed, so it is no longer running")


def test_after_a_state_move_the_source_stack_does_not_take_the_object_back(
    stack: Stack,
) -> None:
    """`state move` hands a resource to another stack, but its object keeps the marks of
    the source stack's URN until the destination's next `up`. Meanwhile an `up` of the
    source, whose program still declares the resource, found an object marked as its own
    under the same (URN-derived) name and adopted it: two stacks recorded one object, and
    destroying either deleted the other's."""

    def settings(p: Program) -> None:
        k8s.core.v1.ConfigMap("b", data={"n": "b"})  # auto-named from its URN

    assert stack.up(settings).ok
    (name,) = stack.fake.names("ConfigMap")
    stack.backend.create_stack(PROJECT, "prod")
    stack.backend.move_resource(PROJECT, STACK, "prod", [urn(CM, "b")])

    for run in (stack.preview, stack.up):
        summary = run(settings)
        assert not summary.ok
        (failure,) = summary.failures
        assert (
            f"ConfigMap {name} already exists: stack prod records it (a `stackwright state "
            "move` gave it there)" in failure
        ), failure
    assert stack.fake.names("ConfigMap") == [name]
    assert stack.state().resources == []
    moved = stack.backend.load(PROJECT, "prod").resources
    assert [(r.urn, r.id) for r in moved] == [(urn(CM, "b", "prod"), name)]


def test_a_create_that_never_landed_does_not_adopt_an_object_made_since_by_someone_else(
    stack: Stack,
) -> None:
    """A create whose answer never came stays pending (it may have landed). If it did not,
    and someone else made an object of that name meanwhile, settling the step by reading
    the cluster took that object for the stack's own: the next `up` updated it, and once
    the program dropped the resource, deleted it. Only an object marked with the step's URN
    is the create's."""
    stack.fake.fail_apply["settings"] = ConnectionResetError("connection reset by peer")
    assert not stack.up(one_config_map).ok
    assert [p.op for p in stack.state().pending] == [Op.CREATE]
    assert stack.fake.names("ConfigMap") == []
    stack.fake.fail_apply.clear()
    theirs = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"owner": "someone else"},
    }
    stack.fake.put(theirs)
    stack.fake.calls.clear()

    summary = stack.up(lambda p: None)

    assert summary.ok, summary.failures
    assert stack.state().pending == [] and stack.state().resources == []
    assert stack.fake.names("ConfigMap") == ["default/settings"]
    assert [c for c in stack.fake.calls_to("apply", "delete") if c.name == "settings"] == []


def test_state_delete_of_a_resource_with_a_pending_step_is_refused(stack: Stack) -> None:
    """`state delete` promises to forget a resource and leave its object alone. With a
    step a crash left pending on it, the next run settled that step and so recorded the
    resource again, and an `up` whose program no longer declared it deleted the object."""

    update_with_lost_reply(stack)
    assert [p.op for p in stack.state().pending] == [Op.UPDATE]
    stack.fake.lose_reply.clear()

    with pytest.raises(UsageError) as caught:
        stack.backend.delete_resource(PROJECT, STACK, urn(CM, "settings"))
    assert str(caught.value) == (
        f"cannot delete {urn(CM, 'settings')} from the state: stack dev has a pending step on "
        "it that a crash left; run `stackwright refresh` on stack dev first"
    )
    assert stack.up(lambda p: None).ok  # the program dropped it: deleted, as it should be
    assert stack.fake.names("ConfigMap") == []


def test_a_delete_that_landed_does_not_keep_an_object_made_since_by_someone_else(
    stack: Stack,
) -> None:
    """A delete whose answer never came stays pending. If it landed and someone else then
    made an object of that name, settling the step found "the object" still there and kept
    the resource: the next `destroy` deleted their object. The object recorded is told
    apart from a new one of the same name by its uid."""
    assert stack.up(one_config_map).ok
    recorded_uid = stack.recorded(urn(CM, "settings")).outputs["metadata"]["uid"]
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    assert [p.op for p in stack.state().pending] == [Op.DELETE]
    stack.fake.lose_reply.clear()
    theirs = stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default"},
            "data": {"owner": "someone else"},
        }
    )
    assert theirs["metadata"]["uid"] != recorded_uid
    stack.fake.calls.clear()

    summary = stack.destroy()

    assert summary.ok, summary.failures
    assert stack.state().pending == [] and stack.state().resources == []
    assert stack.fake.names("ConfigMap") == ["default/settings"]
    assert stack.fake.calls_to("delete") == []


def test_an_update_whose_object_was_replaced_by_someone_else_is_not_adopted(
    stack: Stack,
) -> None:
    """The same for an update a crash left pending: its object deleted and another made
    under its name, settling recorded theirs as the stack's and the next `up` applied over
    it. Now the resource is found gone, and its create refuses to take over their object."""

    update_with_lost_reply(stack)
    stack.fake.lose_reply.clear()
    del stack.fake.objects[stack.fake._find_key("ConfigMap", "settings", "default")]
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default"},
            "data": {"owner": "someone else"},
        }
    )
    stack.fake.calls.clear()

    summary = stack.up(settings("slow"))

    assert not summary.ok
    (failure,) = summary.failures
    assert (
        "ConfigMap default/settings already exists (it is not this stack's: made outside it, or forgotten by `state delete`)"
        in failure
    )
    assert stack.fake.calls_to("apply") == []
    assert stack.state().resources == [] and stack.state().pending == []


def test_a_destroy_after_an_interrupted_one_removes_the_applyset_parent(stack: Stack) -> None:
    """A destroy stopped with its last delete pending left the stack's ApplySet parent: the
    next destroy settled that delete (the object was gone), found nothing left to delete
    and so no namespace whose parent to remove. The parent stayed for good, a ConfigMap
    labelled as Stackwright's that no state records."""
    assert stack.up(one_config_map).ok
    assert stack.fake.applysets == {(STACK, "default")}
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    assert [p.op for p in stack.state().pending] == [Op.DELETE]
    stack.fake.lose_reply.clear()

    assert stack.destroy().ok

    assert stack.state().resources == [] and stack.state().pending == []
    assert stack.fake.applysets == set()


def test_a_destroy_finds_a_parent_left_once_every_delete_had_ended(stack: Stack) -> None:
    """Killed after its last delete ended and before it removed the ApplySet parent, a
    destroy left a state with nothing in it: the next destroy had nothing to tell where
    the stack had parents. A destroy that takes over a dead holder's lock now asks the
    cluster where the stack's parents are, and removes those with no members."""
    assert stack.up(one_config_map).ok
    stack.fake.applysets.add(("another-stack", "default"))
    stack.fake.calls.clear()
    del stack.fake.objects[stack.fake._find_key("ConfigMap", "settings", "default")]
    stack.backend.delete_resource(PROJECT, STACK, urn(CM, "settings"))  # as its delete ended
    assert stack.state().resources == []
    assert stack.destroy().ok  # a destroy of an empty stack asks the cluster nothing
    assert stack.fake.calls == []
    dead_holder(stack, "destroy")  # killed before it removed the parent

    assert stack.destroy().ok

    assert stack.fake.applysets == {("another-stack", "default")}
    assert stack.fake.calls_to("remove_applyset") == [
        Call("remove_applyset", "ApplySet", "default")
    ]


def test_a_cancel_stops_a_running_up_at_once(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """`stackwright cancel` while an `up` waits (here: an apply that takes 30 s): the run
    stops within a lock check, not when its wait ends, its step stays pending, and the
    next run settles it (as Pulumi's cancel stops a running update)."""
    import threading

    from stackwright.engine import operations
    from stackwright.state import LockLost

    monkeypatch.setattr(operations, "LOCK_CHECK_SECONDS", 0.05)
    stack.fake.latency = 30.0
    timer = threading.Timer(0.3, lambda: stack.backend.cancel(PROJECT, STACK))
    timer.start()
    started = time.monotonic()
    with pytest.raises(LockLost, match="was cancelled"):
        stack.up(one_config_map)
    assert time.monotonic() - started < 5
    timer.join()
    assert [p.op for p in stack.state().pending] == [Op.CREATE]
    assert stack.backend.history(PROJECT, STACK, limit=1)[0].result == "cancelled"

    stack.fake.latency = 0.0
    assert stack.up(one_config_map).ok
    assert stack.state().pending == [] and stack.fake.names("ConfigMap") == ["default/settings"]


def test_an_interrupted_update_whose_object_is_gone_leaves_no_reference_behind(
    stack: Stack,
) -> None:
    """The update's reply was lost, then the object was deleted outside: settling drops the
    resource, and what refers to it stops naming it first, so the state loads (it failed
    with 'the state was edited or damaged' for good) and the up makes the object again."""

    def app(mode: str) -> Callable[[Program], None]:
        def declare(p: Program) -> None:
            cfg = k8s.core.v1.ConfigMap(
                "settings", metadata={"name": "settings"}, data={"mode": mode}
            )
            k8s.core.v1.ConfigMap(
                "reader", metadata={"name": "reader"}, data={"of": cfg.metadata["name"]}
            )

        return declare

    assert stack.up(app("fast")).ok
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.up(app("slow")).ok
    del stack.fake.lose_reply["settings"]
    assert [p.resource.urn for p in stack.state().pending] == [urn(CM, "settings")]
    (gone,) = [key for key in stack.fake.objects if key[-1] == "settings"]
    del stack.fake.objects[gone]

    summary = stack.up(app("slow"))

    assert summary.ok, summary.failures
    assert summary.counts == {"create": 1, "same": 1}
    state = stack.state()
    assert not state.pending
    reader = state.resource(urn(CM, "reader"))
    assert reader is not None and reader.dependencies == (urn(CM, "settings"),)
    assert stack.fake.find("ConfigMap", "settings") is not None


def test_a_preview_after_an_interrupted_up_plans_as_the_next_up_and_writes_nothing(
    stack: Stack,
) -> None:
    """An `up` killed midway leaves creates pending whose objects may exist. The next `up`
    settles them by reading the cluster and then plans; a preview planned against the state
    as the crash left it and showed "+ create" for objects that were there, disagreeing with
    the `up` after it. It now settles them in memory (reads only) and plans the same steps,
    leaving the state and its journal as they were."""

    def app(p: Program) -> None:
        for name in ("landed", "lost", "kept"):
            k8s.core.v1.ConfigMap(name, metadata={"name": name}, data={"n": name})

    assert stack.up(lambda p: k8s.core.v1.ConfigMap("kept", metadata={"name": "kept"})).ok
    stack.fake.lose_reply["landed"] = TimeoutError("read timed out")  # made, never confirmed
    stack.fake.fail_apply["lost"] = ConnectionResetError("connection reset by peer")
    assert not stack.up(app).ok
    stack.fake.lose_reply.clear()
    stack.fake.fail_apply.clear()
    before = stack.state()
    assert sorted((p.op, p.resource.urn) for p in before.pending) == [
        (Op.CREATE, urn(CM, "landed")),
        (Op.CREATE, urn(CM, "lost")),
    ]
    assert stack.fake.names("ConfigMap") == ["default/kept", "default/landed"]
    stack.fake.calls.clear()

    preview = stack.preview(app)

    assert preview.ok, preview.failures
    previewed = sorted(stack.started())
    # `landed` was made and never seen ready: the `up` waits for it again, as an update.
    assert previewed == [("create", "lost"), ("same", "kept"), ("update", "landed")]
    assert stack.fake.writes() == []
    assert stack.state() == before
    (warning,) = [d.message for d in stack.of(Diagnostic) if d.severity == "warning"]
    assert warning == (
        "2 step(s) of an interrupted operation are pending; this preview read their objects "
        "from the cluster, and the next `up` settles them the same way"
    )

    summary = stack.up(app)

    assert summary.ok, summary.failures
    assert sorted(stack.started()) == previewed
    assert summary.counts == preview.counts
    assert stack.state().pending == []


def test_a_preview_while_an_operation_runs_names_it_not_an_interrupted_one(
    stack: Stack,
) -> None:
    """A CI job previews a stack while another job's `up` is under way (a preview takes no
    lock): the steps it finds pending are that `up`'s, running now. The preview said they
    were "of an interrupted operation" that "the next `up` settles", sending the reader to
    look for a crash; it names the operation that holds the lock instead."""
    update_with_lost_reply(stack)
    with stack.backend.begin_operation(PROJECT, STACK, kind="up"):
        preview = stack.preview(settings("slow"))

    assert preview.ok, preview.failures
    (warning,) = [d.message for d in stack.of(Diagnostic) if d.severity == "warning"]
    assert "interrupted" not in warning
    assert warning.startswith("1 step(s) are under way in an `up` started ")
    assert f"(pid {os.getpid()}), which holds the stack's lock" in warning
    assert warning.endswith("before that operation ends: preview again once it has")
    assert not [d.message for d in stack.of(Diagnostic) if "interrupted" in d.message]

    dead_holder(stack, "up")  # a holder whose lease lapsed runs no more
    stack.preview(settings("slow"))
    (warning,) = [d.message for d in stack.of(Diagnostic) if d.severity == "warning"]
    assert warning.startswith("1 step(s) of an interrupted operation are pending")


def test_a_preview_of_a_destroy_after_an_interrupted_one_shows_a_landed_delete_done(
    stack: Stack,
) -> None:
    """A delete left pending whose object is gone: the preview deletes it no more, as the
    `destroy` after it (which settles the step) does not."""
    assert stack.up(one_config_map).ok
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    stack.fake.lose_reply.clear()
    before = stack.state()
    assert [p.op for p in before.pending] == [Op.DELETE]
    assert stack.fake.names("ConfigMap") == []
    stack.fake.calls.clear()

    preview = stack.run("destroy", None, dry_run=True)

    assert preview.ok, preview.failures
    assert stack.started() == [] and preview.counts == {}
    assert stack.fake.writes() == [] and stack.state() == before
    assert stack.destroy().ok
    assert stack.started() == [] and stack.state().resources == []


def test_settling_reads_the_pending_objects_at_once_and_resolves_them_in_order(
    stack: Stack,
) -> None:
    """A run killed with many creates in flight leaves them all pending, and the next run
    read their objects one at a time: a round trip each, over a real network. It reads
    them at once, as many as `--parallel` lets the run's API calls be, and still settles
    them in the journal's order."""
    names = [f"cm-{i:02d}" for i in range(12)]

    def app(p: Program) -> None:
        for name in names:
            k8s.core.v1.ConfigMap(name, metadata={"name": name}, data={"n": name})

    for name in names[::2]:  # made, never confirmed; the others never made
        stack.fake.lose_reply[name] = TimeoutError("read timed out")
    for name in names[1::2]:
        stack.fake.fail_apply[name] = ConnectionResetError("connection reset by peer")
    assert not stack.up(app).ok
    stack.fake.lose_reply.clear()
    stack.fake.fail_apply.clear()
    pending = [p.resource.urn for p in stack.state().pending]
    assert sorted(pending) == sorted(urn(CM, name) for name in names)
    reading, most = 0, 0
    read = stack.fake.read

    async def counted(*args: Any) -> Any:
        nonlocal reading, most
        reading += 1
        most = max(most, reading)
        try:
            return await read(*args)
        finally:
            reading -= 1

    stack.fake.read = counted  # type: ignore[method-assign]
    for run in (stack.preview, stack.up):
        most = 0

        summary = run(app, parallel=4)

        assert summary.ok, summary.failures
        assert most == 4
        settled = [d.urn for d in stack.of(Diagnostic) if " create of " in d.message]
        assert settled == pending
    assert stack.state().pending == []
    assert stack.fake.names("ConfigMap") == [f"default/{name}" for name in names]


def _someone_elses_settings_patched(stack: Stack) -> Callable[[Program], None]:
    """ConfigMap `settings`, made by kubectl; the program of a Patch that adds a field to it."""
    stack.fake.put(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "default"},
            "data": {"owner": "someone else"},
        },
        manager="kubectl",
    )

    def patched(p: Program) -> None:
        k8s.core.v1.ConfigMapPatch("tuning", metadata={"name": "settings"}, data={"mode": "fast"})

    return patched


def test_an_interrupted_patch_is_settled_as_its_own_and_its_fields_given_up_later(
    stack: Stack,
) -> None:
    """A Patch's apply whose answer never came landed on an object that carries no mark (a
    Patch marks nothing): settling it by the marks, as an object's create, forgot it, and its
    fields stayed on the object for good once the program dropped it. Settled as a Patch, it
    stays recorded, and dropping it gives its fields up, the object kept."""
    patched = _someone_elses_settings_patched(stack)
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.up(patched).ok
    assert [p.op for p in stack.state().pending] == [Op.CREATE]
    stack.fake.lose_reply.clear()
    stack.fake.calls.clear()

    summary = stack.up(lambda p: None)

    assert summary.ok, summary.failures
    assert stack.state().pending == [] and stack.state().resources == []
    (live,) = [o for o in stack.fake.objects.values() if o["metadata"]["name"] == "settings"]
    assert live["data"] == {"owner": "someone else"}
    assert [c.name for c in stack.fake.calls_to("delete")] == []


def test_a_patch_whose_giving_up_was_interrupted_is_applied_again_when_still_declared(
    stack: Stack,
) -> None:
    """The empty apply that gives a Patch's fields up landed, its answer lost: the object is
    still there, so its record stayed as it was, and a next run still declaring the Patch
    found it `same` and never applied it again, its fields gone from the object for good."""
    patched = _someone_elses_settings_patched(stack)
    assert stack.up(patched).ok
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.up(lambda p: None).ok
    assert [p.op for p in stack.state().pending] == [Op.DELETE]
    assert stack.fake.find("ConfigMap", "settings")["data"] == {"owner": "someone else"}  # type: ignore[index]
    stack.fake.lose_reply.clear()

    summary = stack.up(patched)

    assert summary.ok, summary.failures
    assert stack.state().pending == []
    live = stack.fake.find("ConfigMap", "settings")
    assert live is not None and live["data"] == {"owner": "someone else", "mode": "fast"}


def test_a_patch_whose_giving_up_may_not_have_landed_is_not_said_to_have_lost_marks(
    stack: Stack,
) -> None:
    """The giving up timed out before it landed: the object still holds the Patch's fields,
    so the Patch declared again is `same` but not ready. A Patch marks no object: its
    record's object, unmarked, is no object that "lost its marks"."""
    patched = _someone_elses_settings_patched(stack)
    assert stack.up(patched).ok
    stack.fake.fail_apply["settings"] = TimeoutError("read timed out")
    assert not stack.up(lambda p: None).ok
    assert [p.op for p in stack.state().pending] == [Op.DELETE]
    stack.fake.fail_apply.clear()

    summary = stack.up(patched)

    assert summary.ok, summary.failures
    said = [d.message for d in stack.of(Diagnostic) if d.urn.endswith("::tuning")]
    assert not [m for m in said if "marks" in m], said
    assert [m for m in said if m.startswith("was not ready after the last update")], said


def test_a_patch_reads_its_object_once_per_apply(stack: Stack) -> None:
    """The read that refuses a missing object before the step is journaled is the one whose
    uid the apply names: no second read (an object deleted or made again in between is
    caught by that uid, and read again then)."""
    patched = _someone_elses_settings_patched(stack)

    def retuned(p: Program) -> None:
        k8s.core.v1.ConfigMapPatch("tuning", metadata={"name": "settings"}, data={"mode": "slow"})

    for declare in (patched, retuned):  # a create, then an update
        stack.fake.calls.clear()
        summary = stack.up(declare)
        assert summary.ok, summary.failures
        assert stack.fake.calls_to("read") == [Call("read", "ConfigMap", "settings")]
        assert stack.fake.calls_to("apply") == [Call("apply", "ConfigMap", "settings")]
    live = stack.fake.find("ConfigMap", "settings")
    assert live is not None and live["data"] == {"owner": "someone else", "mode": "slow"}


def named_settings(logical: str, mode: str, *, broken: bool = False) -> Callable[[Program], None]:
    """ConfigMap `settings` declared by the resource `logical` (and one more, `broken`)."""

    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(logical, metadata={"name": "settings"}, data={"mode": mode})
        if broken:
            k8s.core.v1.ConfigMap("broken", metadata={"name": "broken"}, data={"k": "v"})

    return declare


@pytest.mark.parametrize("cut_short", ["its reply lost", "another step failed"])
def test_a_resource_back_on_an_object_a_run_cut_short_passed_on_takes_it_back(
    stack: Stack, cut_short: str
) -> None:
    """A program that passes an object on (`old` dropped, `new` declaring its name) applies
    `new` onto it, then removes `old`'s record. A run cut short in between (killed, or
    failed elsewhere) leaves `old` recorded, and the object holding `new`'s fields and marks
    (`new`'s step pending, or recorded too); the next run, of a program back to `old`, found
    `old` the same, and the object kept `new`'s fields and a URN the state no longer records."""
    assert stack.up(named_settings("old", "fast")).ok
    if cut_short == "its reply lost":
        stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    else:
        stack.fake.fail_apply["broken"] = "refused"
    assert not stack.up(named_settings("new", "slow", broken=True)).ok
    stack.fake.lose_reply.clear()
    stack.fake.fail_apply.clear()
    assert urn(CM, "old") in [r.urn for r in stack.state().resources]
    live = stack.fake.find("ConfigMap", "settings")
    assert live is not None and live["metadata"]["annotations"][URN_ANNOTATION] == urn(CM, "new")

    summary = stack.up(named_settings("old", "fast"))

    assert summary.ok, summary.failures
    assert ("update", "old") in stack.started()
    said = [d.message for d in stack.of(Diagnostic) if d.urn == urn(CM, "old")]
    assert said == [
        f"its object carries the fields and marks of {describe(urn(CM, 'new'))}, which a run "
        "cut short gave it to: applying it again"
    ]
    live = stack.fake.find("ConfigMap", "settings")
    assert live is not None
    assert live["metadata"]["annotations"][URN_ANNOTATION] == urn(CM, "old")
    assert live["data"] == {"mode": "fast"}
    assert [r.urn for r in stack.state().resources] == [urn(CM, "old")]
    assert stack.up(named_settings("old", "fast")).ok
    assert stack.started() == [("same", "old")]


def kept_settings(p: Program) -> None:
    k8s.core.v1.ConfigMap(
        "settings",
        metadata={"name": "settings"},
        data={"mode": "fast"},
        opts=sw.ResourceOptions(retain_on_delete=True),
    )


def test_a_retained_object_whose_release_was_interrupted_is_marked_again_when_declared(
    stack: Stack,
) -> None:
    """A destroy leaves a `retain_on_delete` object in the cluster with its marks taken off,
    then drops its record. Killed once the marks were off, and before its step ended, the
    record stays; the next `up` found it the same (its record still told the marks), and
    the object stayed unmarked: no stack's to the eye of another stack's import."""
    assert stack.up(kept_settings).ok
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    stack.fake.lose_reply.clear()
    assert [(p.op, p.resource.urn) for p in stack.state().pending] == [
        (Op.DELETE, urn(CM, "settings"))
    ]

    summary = stack.up(kept_settings)

    assert summary.ok, summary.failures
    assert stack.started() == [("update", "settings")]
    live = stack.fake.find("ConfigMap", "settings")
    assert live is not None
    assert live["metadata"]["annotations"][URN_ANNOTATION] == urn(CM, "settings")
    assert stack.up(kept_settings).ok
    assert stack.started() == [("same", "settings")]
