"""A Patch whose object was made anew (a delete-first replacement under its name) in a run
the Patch was not part of (`--target`, `--exclude`, a kill before its step): the new object
holds none of its fields, and its record says it was applied to the former one (its uid).

Scenarios against the fake cluster and a real SQLite store (`engine_stack`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from engine_stack import PROJECT, STACK, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.engine.records import another_object
from stackwright.engine.testing import WRITES
from stackwright.model import UNKNOWN, Op
from stackwright.sdk.context import Program

BASE = urn("kubernetes:core/v1:ConfigMap", "base")
EXTRA = urn("kubernetes:core/v1:ConfigMapPatch", "extra")
#: What each way of leaving the Patch out names: the object alone, or the Patch.
LEFT = {"target": BASE, "exclude": EXTRA}
MADE_ANEW = "its ConfigMap was made anew since it was applied: applying it again"


def base_patched(own: str) -> Callable[[Program], None]:
    """ConfigMap `base` (named: replaced deleting first when its data changes) and a Patch
    adding a key to it."""

    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "base",
            metadata={"name": "base"},
            data={"own": own},
            opts=sw.ResourceOptions(replace_on_changes=["data"]),
        )
        k8s.core.v1.ConfigMapPatch("extra", metadata={"name": "base"}, data={"extra": "1"})

    return declare


def _data(stack: Stack) -> dict[str, str]:
    live = stack.fake.find("ConfigMap", "base")
    assert live is not None
    return dict(live["data"])


def _patch_step(stack: Stack) -> tuple[str, list[str]]:
    """The Patch's op in the last run, and what that run said of it."""
    ops = dict((name, op) for op, name in stack.started())
    said = [d.message for d in stack.of(Diagnostic) if d.urn == EXTRA]
    return ops["extra"], said


@pytest.mark.parametrize("left_out", ["target", "exclude"])
def test_a_patch_left_out_of_its_objects_replacement_applies_again_next_run(
    stack: Stack, left_out: str
) -> None:
    assert stack.up(base_patched("1")).ok
    scope = {"targets" if left_out == "target" else "excludes": frozenset({LEFT[left_out]})}
    replaced = stack.up(base_patched("2"), **scope)
    assert replaced.ok, replaced.failures
    assert ("replace", "base") in stack.started()
    assert _data(stack) == {"own": "2"}, "the new object holds none of the Patch's fields"

    assert stack.preview(base_patched("2")).ok
    assert _patch_step(stack) == ("update", [MADE_ANEW.replace("applying", "`up` applies")])
    assert stack.up(base_patched("2")).ok
    assert _patch_step(stack) == ("update", [MADE_ANEW])
    assert _data(stack) == {"own": "2", "extra": "1"}

    stack.fake.calls.clear()
    assert stack.up(base_patched("2")).ok
    assert _patch_step(stack) == ("same", [])
    assert [c for c in stack.fake.calls if c.method in WRITES] == []


def test_a_patch_recorded_without_its_objects_uid_stays_same(stack: Stack) -> None:
    """A Patch an older version applied may record no uid of its object: unknown, not a
    reason to apply it again."""
    assert stack.up(base_patched("1")).ok
    document = stack.backend.export(PROJECT, STACK)
    (record,) = [r for r in document["resources"] if r["urn"] == EXTRA]
    del record["outputs"]["metadata"]["uid"]
    stack.backend.import_(PROJECT, STACK, document)
    stack.up(base_patched("2"), targets=frozenset({BASE}))  # made anew, the Patch left out

    assert stack.up(base_patched("2")).ok
    assert _patch_step(stack) == ("same", [])


def test_a_patch_of_an_object_made_outside_the_stack_is_not_compared(stack: Stack) -> None:
    """An object no resource of the stack holds has no record telling its uid now: made
    anew by someone else, it is drift, which a refresh finds; a plain run reads nothing to
    learn it."""
    theirs = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "theirs", "namespace": "default"},
        "data": {"owner": "kubectl"},
    }
    stack.fake.put(theirs, manager="kubectl")

    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMapPatch("mine", metadata={"name": "theirs"}, data={"k": "v"})

    assert stack.up(declare).ok
    stack.fake.remove("ConfigMap", "theirs")
    stack.fake.put(theirs, manager="kubectl")
    stack.fake.calls.clear()
    assert stack.up(declare).ok
    assert stack.started() == [(Op.SAME.value, "mine")]
    assert stack.fake.calls_to(*WRITES, "read") == []


def _object(uid: object) -> dict[str, object]:
    return {"metadata": {"name": "base", "uid": uid}}


@pytest.mark.parametrize(
    ("recorded", "found", "another"),
    [
        (_object("u1"), _object("u2"), True),
        (_object("u1"), _object("u1"), False),
        ({"metadata": {"name": "base"}}, _object("u2"), False),  # recorded before uids were
        ({}, _object("u2"), False),  # no object recorded
        (_object("u1"), _object(UNKNOWN), False),  # a preview's, not made yet
        (_object("u1"), UNKNOWN, False),
    ],
)
def test_another_object_needs_both_uids(recorded: object, found: object, another: bool) -> None:
    assert another_object(recorded, found) is another
