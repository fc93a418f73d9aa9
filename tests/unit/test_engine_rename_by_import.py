"""A resource renamed by an import: the program drops `a` and adopts its object as `b`.

`_check_importable` asked the backend who manages the object and found this very stack,
so it refused with "stack dev … manages it; remove it from that stack first". The object
a dropped resource of this stack manages passes to the importer, as a create's name
does: the import adopts it, and the dropped resource's delete removes only its record.
"""

from __future__ import annotations

import pytest
from engine_stack import Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright as sw
import stackwright.kubernetes as k8s
from stackwright.engine import deletes, execute, records
from stackwright.engine.events import Diagnostic
from stackwright.model import URN_ANNOTATION, Op, ResourceState
from stackwright.sdk.context import Program

CM = "kubernetes:core/v1:ConfigMap"
DATA = {"a": "1"}


def declared_as_a(p: Program) -> None:
    k8s.core.v1.ConfigMap("a", metadata={"name": "x"}, data=DATA)


def adopted_as_b(p: Program) -> None:
    opts = sw.ResourceOptions(import_="default/x")
    k8s.core.v1.ConfigMap("b", metadata={"name": "x"}, data=DATA, opts=opts)


def a_moved_and_b_adopting_its_object(p: Program) -> None:
    k8s.core.v1.ConfigMap("a", metadata={"name": "y"}, data=DATA)  # a replacement: x deleted
    adopted_as_b(p)


def test_an_import_adopts_the_object_of_a_dropped_resource_and_nothing_is_deleted(
    stack: Stack,
) -> None:
    assert stack.up(declared_as_a).ok
    uid = stack.fake.find("ConfigMap", "x")["metadata"]["uid"]  # type: ignore[index]

    preview = stack.preview(adopted_as_b)
    assert preview.ok, preview.failures
    assert sorted(stack.started()) == [("delete", "a"), ("import", "b")]

    stack.fake.calls.clear()
    summary = stack.up(adopted_as_b)
    assert summary.ok, summary.failures
    assert stack.fake.calls_to("delete") == []
    live = stack.fake.find("ConfigMap", "x")
    assert live is not None and live["metadata"]["uid"] == uid  # the same object, kept
    assert live["metadata"]["annotations"][URN_ANNOTATION] == urn(CM, "b")
    assert [r.urn for r in stack.state().resources if r.custom] == [urn(CM, "b")]
    kept = [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "a")]
    assert kept == [f"kept default/x: {CM} b holds that object now; only the old record is removed"]

    # And from then on, b is the object's only resource: nothing to do.
    assert stack.up(adopted_as_b).ok
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == ["default/x"]


def test_an_import_of_the_object_a_resource_the_program_still_declares_is_refused(
    stack: Stack,
) -> None:
    """Its replacement deletes the object: refused, in words about this program."""
    assert stack.up(declared_as_a).ok
    summary = stack.up(a_moved_and_b_adopting_its_object)
    assert not summary.ok
    # b's line leads, as every message about a place in the program; a's is said beside a.
    b_line = adopted_as_b.__code__.co_firstlineno + 2
    a_line = a_moved_and_b_adopting_its_object.__code__.co_firstlineno + 1
    assert (
        f"{__file__}:{b_line}: {CM} b: cannot import default/x: {CM} a ({__file__}:{a_line}), "
        "which the program still declares, manages it; drop that resource from the program "
        "to pass the object on (its delete then keeps it), or import another object"
    ) in summary.failures, summary.failures
    assert "remove it from that stack first" not in "\n".join(summary.failures)
    assert stack.state().resource(urn(CM, "b")) is None
    assert stack.fake.calls_to("delete") == []  # the failed run deletes no replaced object


def test_an_import_targeted_alone_leaves_the_dropped_record_whose_later_delete_keeps_it(
    stack: Stack,
) -> None:
    assert stack.up(declared_as_a).ok
    assert stack.up(adopted_as_b, targets=frozenset({urn(CM, "b")})).ok
    assert sorted(r.urn for r in stack.state().resources if r.custom) == [
        urn(CM, "a"),
        urn(CM, "b"),
    ]
    assert stack.up(adopted_as_b).ok
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == ["default/x"]
    assert [r.urn for r in stack.state().resources if r.custom] == [urn(CM, "b")]


def a_and_b_recorded(stack: Stack) -> None:
    """Both records name the object: b imported it in a run targeting b alone."""
    assert stack.up(declared_as_a).ok
    assert stack.up(adopted_as_b, targets=frozenset({urn(CM, "b")})).ok


def test_the_dropped_record_targeted_alone_keeps_the_object_b_adopted(stack: Stack) -> None:
    a_and_b_recorded(stack)
    assert stack.preview(adopted_as_b, targets=frozenset({urn(CM, "a")})).ok
    kept = [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "a")]
    assert kept == [f"kept default/x: {CM} b holds that object now; only the old record is removed"]
    assert stack.up(adopted_as_b, targets=frozenset({urn(CM, "a")})).ok
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == ["default/x"]
    assert [r.urn for r in stack.state().resources if r.custom] == [urn(CM, "b")]


def test_destroy_of_the_dropped_record_alone_keeps_the_object_b_adopted(stack: Stack) -> None:
    a_and_b_recorded(stack)
    assert stack.destroy(targets=frozenset({urn(CM, "a")})).ok
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == ["default/x"]


def test_destroy_of_both_records_deletes_the_object_once_as_b(stack: Stack) -> None:
    a_and_b_recorded(stack)
    assert stack.destroy().ok
    assert len(stack.fake.calls_to("delete")) == 1
    assert stack.fake.names("ConfigMap") == []


def declared_as_a_through_another_provider(p: Program) -> None:
    east = k8s.Provider("east", context="fake")  # the same cluster as the default provider
    opts = sw.ResourceOptions(provider=east)
    k8s.core.v1.ConfigMap("a", metadata={"name": "x", "namespace": "default"}, data=DATA, opts=opts)


def adopted_as_b_beside_that_provider(p: Program) -> None:
    k8s.Provider("east", context="fake")
    adopted_as_b(p)


def test_an_import_adopts_the_object_a_dropped_resource_made_through_another_provider(
    stack: Stack,
) -> None:
    """The records name the object through two providers: it is the same one (its uid)."""
    assert stack.up(declared_as_a_through_another_provider).ok
    said = f"kept default/x: {CM} b holds that object now; only the old record is removed"

    assert stack.preview(adopted_as_b_beside_that_provider).ok
    assert [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "a")] == [said]

    assert stack.up(adopted_as_b_beside_that_provider).ok
    assert [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "a")] == [said]
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == ["default/x"]


def test_an_interrupted_import_settled_next_run_keeps_the_object(stack: Stack) -> None:
    """The import landed but its reply was lost: the run stops before any delete; the next
    settles the import (b holds the object) and a's delete keeps it."""
    assert stack.up(declared_as_a).ok
    stack.fake.lose_reply["b"] = TimeoutError("read timed out")
    assert not stack.up(adopted_as_b).ok
    assert [p.op for p in stack.state().pending] == [Op.IMPORT]
    stack.fake.lose_reply.clear()
    assert stack.up(adopted_as_b).ok
    assert stack.fake.calls_to("delete") == []
    assert stack.fake.names("ConfigMap") == ["default/x"]
    assert [r.urn for r in stack.state().resources if r.custom] == [urn(CM, "b")]


def test_a_destroy_finds_the_records_naming_an_object_by_lookup_not_by_scanning_them_all(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each delete asks which other records name its object (one adopted it?): a scan of
    every record per delete made a destroy of n resources cost n² object keys."""
    count = 150
    stack.up(
        lambda p: [
            k8s.core.v1.ConfigMap(f"cm{i}", metadata={"name": f"cm{i}"}, data={})
            for i in range(count)
        ]
    )
    keys = 0
    real = records.object_key

    def counted(state: ResourceState) -> tuple[str, str, str]:
        nonlocal keys
        keys += 1
        return real(state)

    monkeypatch.setattr(records, "object_key", counted)
    monkeypatch.setattr(execute, "object_key", counted)
    monkeypatch.setattr(deletes, "object_key", counted)
    summary = stack.destroy()
    assert summary.ok and summary.counts == {"delete": count}
    assert keys < 20 * count, keys
