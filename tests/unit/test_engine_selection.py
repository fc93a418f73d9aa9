"""Which resources an operation touches: `--replace`, `--target-dependents`, `--exclude` and
`--exclude-dependents`, through the engine against the fake cluster (Pulumi's flags of the
same names; `--target` itself is in test_engine_lifecycle.py)."""

from __future__ import annotations

import pytest
from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
import stackwright.kx as kx
from stackwright.engine.events import StepSkipped, StepStarted
from stackwright.engine.plan import FORCED_REPLACE
from stackwright.errors import UsageError
from stackwright.kx._random import RANDOM_PASSWORD
from stackwright.model import Op
from stackwright.sdk.context import Program
from stackwright.sdk.output import Output
from stackwright.sdk.resource import ComponentResource, ResourceOptions

CM = "kubernetes:core/v1:ConfigMap"


def chain(mode: str = "a", *, auto: bool = False) -> Declare:
    """settings ← derived (reads settings), and other on its own."""

    def declare(p: Program) -> None:
        settings = k8s.core.v1.ConfigMap(
            "settings", metadata=None if auto else {"name": "settings"}, data={"mode": mode}
        )
        k8s.core.v1.ConfigMap(
            "derived", metadata={"name": "derived"}, data={"from": settings.data["mode"]}
        )
        k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": mode})

    return declare


def applied(stack: Stack) -> list[str]:
    return sorted(c.name for c in stack.fake.calls_to("apply"))


# --- --replace ----------------------------------------------------------------------------------


def test_replace_recreates_an_unchanged_named_object_deleting_it_first(stack: Stack) -> None:
    assert stack.up(chain()).ok
    stack.fake.calls.clear()

    preview = stack.preview(chain(), replace=frozenset({urn(CM, "settings")}))

    # derived reads the data the program gives settings' new object: known, so derived is
    # the same, as the up finds it.
    assert preview.ok and preview.counts == {"replace": 1, "same": 2}
    (step,) = [e.step for e in stack.of(StepStarted) if e.step.op is Op.REPLACE]
    assert step.replace_reasons == (FORCED_REPLACE,) and step.delete_before_replace
    assert stack.fake.writes() == []

    summary = stack.up(chain(), replace=frozenset({urn(CM, "settings")}))

    assert summary.ok and summary.counts == {"replace": 1, "same": 2}
    # Same name: the old object goes first, then the new one is created.
    assert [(c.method, c.name) for c in stack.fake.calls_to("apply", "delete")] == [
        ("delete", "settings"),
        ("apply", "settings"),
    ]
    assert stack.up(chain()).counts == {"same": 3}


def test_replace_of_an_auto_named_object_creates_the_new_one_first(stack: Stack) -> None:
    assert stack.up(chain(auto=True)).ok
    old = stack.recorded(urn(CM, "settings")).id
    stack.fake.calls.clear()

    summary = stack.up(chain(auto=True), replace=frozenset({urn(CM, "settings")}))

    assert summary.ok and summary.counts == {"replace": 1, "delete-replaced": 1, "same": 2}
    new = stack.recorded(urn(CM, "settings")).id
    assert new != old
    assert [(c.method, c.name) for c in stack.fake.calls_to("apply", "delete")] == [
        ("apply", new.rpartition("/")[2]),
        ("delete", old.rpartition("/")[2]),
    ]


def test_replace_of_a_random_password_makes_a_new_value(stack: Stack) -> None:
    def declare(p: Program) -> None:
        kx.RandomPassword("db", length=16)

    stack.up(declare)
    before = stack.recorded(urn(RANDOM_PASSWORD, "db")).outputs["result"]
    assert stack.up(declare).counts == {"same": 1}
    assert stack.recorded(urn(RANDOM_PASSWORD, "db")).outputs["result"] == before

    summary = stack.up(declare, replace=frozenset({urn(RANDOM_PASSWORD, "db")}))

    assert summary.ok and summary.counts == {"replace": 1}
    after = stack.recorded(urn(RANDOM_PASSWORD, "db")).outputs["result"]
    assert after != before and len(after) == 16


def test_replace_refuses_what_it_cannot_replace_before_any_change(stack: Stack) -> None:
    def grouped(p: Program) -> None:
        group = ComponentResource("shop:index:Group", "group")
        k8s.core.v1.ConfigMap(
            "inner", metadata={"name": "inner"}, opts=ResourceOptions(parent=group)
        )

    stack.up(grouped)
    stack.fake.calls.clear()
    component = urn("shop:index:Group", "group")
    with pytest.raises(UsageError, match=r"--replace .*Group::group: it is a component"):
        stack.up(grouped, replace=frozenset({component}))
    with pytest.raises(UsageError, match=r"--replace .*::missing names no resource the program"):
        stack.up(grouped, replace=frozenset({urn(CM, "missing")}))
    inner = next(r.urn for r in stack.state().resources if r.urn.endswith("::inner"))
    with pytest.raises(UsageError, match=r"also excluded"):
        stack.up(grouped, replace=frozenset({inner}), excludes=frozenset({inner}))
    assert stack.fake.calls == []


def test_a_protected_resource_is_not_replaced_by_replace(stack: Stack) -> None:
    def kept(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "kept", metadata={"name": "kept"}, data={"a": "1"}, opts=ResourceOptions(protect=True)
        )

    stack.up(kept)
    stack.fake.calls.clear()

    with pytest.raises(UsageError, match="cannot be replaced because it is protected"):
        stack.up(kept, replace=frozenset({urn(CM, "kept")}))
    assert stack.fake.writes() == []


# --- --target-dependents ------------------------------------------------------------------------


def test_target_dependents_takes_what_depends_on_the_targets_too(stack: Stack) -> None:
    stack.up(chain("a"))
    stack.fake.calls.clear()

    alone = stack.up(chain("b"), targets=frozenset({urn(CM, "settings")}))
    assert alone.counts == {"update": 1}
    assert stack.recorded(urn(CM, "derived")).inputs["data"] == {"from": "a"}

    stack.fake.calls.clear()
    summary = stack.up(chain("b"), targets=frozenset({urn(CM, "settings")}), target_dependents=True)

    assert summary.ok and summary.counts == {"same": 1, "update": 1}
    assert applied(stack) == ["derived"]
    assert stack.recorded(urn(CM, "derived")).inputs["data"] == {"from": "b"}
    assert stack.recorded(urn(CM, "other")).inputs["data"] == {"mode": "a"}


def test_target_dependents_of_a_dropped_resource_takes_what_the_state_says_needs_it(
    stack: Stack,
) -> None:
    stack.up(chain("a"))

    def without_settings(p: Program) -> None:
        k8s.core.v1.ConfigMap("derived", metadata={"name": "derived"}, data={"from": "a"})
        k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": "a"})

    with pytest.raises(UsageError, match=r"or add --target-dependents"):
        stack.up(without_settings, targets=frozenset({urn(CM, "settings")}))

    stack.fake.calls.clear()
    summary = stack.up(
        without_settings, targets=frozenset({urn(CM, "settings")}), target_dependents=True
    )

    # derived no longer reads settings: its record drops the dependency before it goes
    # (a same step: its object is as it was, nothing is applied).
    assert summary.ok and summary.counts == {"same": 1, "delete": 1}
    assert applied(stack) == []
    assert stack.recorded(urn(CM, "derived")).dependencies == ()
    assert {r.urn.rpartition("::")[2] for r in stack.state().resources} == {"derived", "other"}


# --- --exclude ----------------------------------------------------------------------------------


def test_exclude_leaves_a_resource_as_it_is_and_its_dependents_read_its_recorded_outputs(
    stack: Stack,
) -> None:
    stack.up(chain("a"))
    stack.fake.calls.clear()

    summary = stack.up(chain("b"), excludes=frozenset({urn(CM, "settings")}))

    assert summary.ok and summary.counts == {"update": 1, "same": 1}
    assert applied(stack) == ["other"]
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "a"}
    # derived reads what the state records of settings, which did not change.
    assert stack.recorded(urn(CM, "derived")).inputs["data"] == {"from": "a"}

    stack.fake.calls.clear()
    summary = stack.up(
        chain("b"), excludes=frozenset({urn(CM, "settings")}), exclude_dependents=True
    )
    assert summary.ok and summary.counts == {"same": 1} and stack.fake.writes() == []


def test_a_resource_that_needs_an_excluded_new_one_is_not_done_and_says_why(stack: Stack) -> None:
    summary = stack.up(chain(), excludes=frozenset({urn(CM, "settings")}))

    # other was created: the run changed the cluster, and failed (as refused inputs after
    # other steps' changes do).
    assert not summary.ok and summary.exit_code == 1
    assert summary.counts == {"create": 1, "skipped": 1}  # the one not done counted so
    assert applied(stack) == ["other"]
    (skipped,) = stack.of(StepSkipped)
    assert skipped.step.urn == urn(CM, "derived")
    # Said in parentheses after the name (`skipped  derived (…)`): none of its own inside.
    assert skipped.reason == (
        "it needs kubernetes:core/v1:ConfigMap settings, which is excluded and not created yet: "
        "exclude this one too, or add --exclude-dependents"
    )

    stack.fake.calls.clear()
    quiet = stack.up(chain(), excludes=frozenset({urn(CM, "settings")}), exclude_dependents=True)
    assert quiet.ok and quiet.counts == {"same": 1} and stack.of(StepSkipped) == []


def test_a_resource_needing_several_excluded_ones_names_the_same_one_every_run(
    stack: Stack,
) -> None:
    def needing(p: Program) -> None:
        needed = [
            k8s.core.v1.ConfigMap(name, metadata={"name": name}, data={}) for name in "hgfedcba"
        ]
        k8s.core.v1.ConfigMap("last", opts=ResourceOptions(depends_on=needed))

    summary = stack.up(needing, excludes=frozenset(urn(CM, name) for name in "abcdefgh"))
    assert summary.not_done == [
        "kubernetes:core/v1:ConfigMap last: it needs kubernetes:core/v1:ConfigMap a, which is "
        "excluded and not created yet: exclude this one too, or add --exclude-dependents"
    ]


def test_a_selection_that_leaves_out_what_the_rest_needs_is_bad_usage(stack: Stack) -> None:
    """Nothing could be done but for the selection: exit 2, as Pulumi refuses such a
    selection up front, in a preview and in an `up`; a dependent of the one not done is
    not done either, and says so, without making it the operation's failure."""

    def needing(p: Program) -> None:
        settings = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={})
        derived = k8s.core.v1.ConfigMap(
            "derived", metadata={"name": "derived"}, data={"from": settings.metadata["name"]}
        )
        k8s.core.v1.ConfigMap(
            "last", metadata={"name": "last"}, opts=ResourceOptions(depends_on=[derived])
        )

    excluded = frozenset({urn(CM, "settings")})
    preview = stack.preview(needing, excludes=excluded)
    assert not preview.ok and preview.failures == [] and preview.exit_code == 2
    assert [e.step.urn for e in stack.of(StepSkipped)] == [urn(CM, "derived"), urn(CM, "last")]

    summary = stack.up(needing, excludes=excluded)
    assert not summary.ok and summary.counts == {"skipped": 2} and summary.exit_code == 2
    assert stack.fake.writes() == [] and stack.state().resources == []
    assert len(summary.not_done) == 2 and "excluded and not created yet" in summary.not_done[0]
    # The one behind the one not done names the exclusion too, not a failure.
    assert summary.not_done[1] == (
        "kubernetes:core/v1:ConfigMap last: it needs kubernetes:core/v1:ConfigMap derived, "
        "which needs kubernetes:core/v1:ConfigMap settings, which is excluded and not created "
        "yet: exclude this one too, or add --exclude-dependents"
    )


def test_exclude_keeps_a_resource_the_program_dropped_and_what_it_refers_to(
    stack: Stack,
) -> None:
    stack.up(chain())

    def only_other(p: Program) -> None:
        k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": "a"})

    stack.fake.calls.clear()
    summary = stack.up(only_other, excludes=frozenset({urn(CM, "derived")}))

    # derived stays, and so does settings, which derived refers to.
    assert summary.ok and summary.counts == {"same": 1}
    assert stack.fake.writes() == []
    assert {r.urn.rpartition("::")[2] for r in stack.state().resources} == {
        "settings",
        "derived",
        "other",
    }

    summary = stack.up(only_other, excludes=frozenset({urn(CM, "settings")}))
    assert summary.counts == {"same": 1, "delete": 1}
    assert [c.name for c in stack.fake.calls_to("delete")] == ["derived"]


def test_a_destroy_with_exclude_keeps_the_excluded_and_what_they_refer_to(stack: Stack) -> None:
    stack.up(chain())

    summary = stack.destroy(excludes=frozenset({urn(CM, "derived")}))

    assert summary.ok and summary.counts == {"delete": 1}
    assert [c.name for c in stack.fake.calls_to("delete")] == ["other"]
    assert {r.urn.rpartition("::")[2] for r in stack.state().resources} == {"settings", "derived"}

    with pytest.raises(UsageError, match=r"--target .*::settings cannot be deleted"):
        stack.destroy(
            targets=frozenset({urn(CM, "settings")}), excludes=frozenset({urn(CM, "derived")})
        )
    with pytest.raises(UsageError, match=r"--exclude .*::nothing names no resource"):
        stack.destroy(excludes=frozenset({urn(CM, "nothing")}))
    with pytest.raises(UsageError, match=r"::derived is both a --target and an --exclude"):
        stack.destroy(targets=frozenset({urn(CM, "derived")}), excludes=frozenset({"**ived"}))


def in_namespace(p: Program) -> None:
    k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
    k8s.core.v1.ConfigMap("kept", metadata={"name": "kept", "namespace": "shop"}, data={"a": "1"})
    k8s.core.v1.ConfigMap("gone", metadata={"name": "gone"}, data={"a": "1"})


def test_an_excluded_object_keeps_its_namespace_through_a_destroy(stack: Stack) -> None:
    stack.up(in_namespace)

    summary = stack.destroy(excludes=frozenset({urn(CM, "kept")}))

    # Deleting the namespace would take the excluded object with it.
    assert summary.ok and [c.name for c in stack.fake.calls_to("delete")] == ["gone"]
    assert {r.urn.rpartition("::")[2] for r in stack.state().resources} == {"shop", "kept"}


def test_a_destroy_that_keeps_resources_reports_the_outputs_it_keeps(stack: Stack) -> None:
    def declare(p: Program) -> None:
        kept = k8s.core.v1.ConfigMap("kept", metadata={"name": "kept"}, data={"a": "1"})
        k8s.core.v1.ConfigMap("gone", metadata={"name": "gone"}, data={"a": "1"})
        p.export("kept", kept.metadata["name"])
        p.export("token", Output.secret("hunter2"))

    kept = {"kept": "kept", "token": "[secret]"}
    # The state keeps the outputs (as Pulumi's does); the summary said `{}` all the same.
    for options in (
        {"excludes": frozenset({urn(CM, "kept")})},
        {"targets": frozenset({urn(CM, "gone")})},
    ):
        stack.up(declare)
        assert stack.run("destroy", None, dry_run=True, **options).outputs == kept
        assert stack.destroy(**options).outputs == kept
        assert set(stack.state().outputs) == set(kept)
    assert stack.destroy().outputs == {} == stack.state().outputs


def test_a_targeted_destroy_of_a_namespace_takes_the_objects_in_it(stack: Stack) -> None:
    stack.up(in_namespace)

    summary = stack.destroy(targets=frozenset({urn("kubernetes:core/v1:Namespace", "shop")}))

    # The state keeps nothing the namespace's deletion removes from the cluster.
    assert summary.ok and summary.counts == {"delete": 2}
    assert [r.urn.rpartition("::")[2] for r in stack.state().resources] == ["gone"]


# --- URN patterns -------------------------------------------------------------------------------


def test_flags_take_urn_patterns_as_pulumi_does(stack: Stack) -> None:
    stack.up(chain("a"))
    stack.fake.calls.clear()

    # `*` stays within one `:`-separated part; `**` crosses them.
    summary = stack.up(chain("b"), targets=frozenset({"**::kubernetes:core/v1:ConfigMap::*r"}))
    assert summary.counts == {"update": 1}  # other (derived reads settings: not matched)
    assert applied(stack) == ["other"]

    stack.fake.calls.clear()
    summary = stack.up(chain("b"), excludes=frozenset({"**::settings"}), exclude_dependents=True)
    assert summary.ok and summary.counts == {"same": 1} and stack.fake.writes() == []

    summary = stack.up(chain("a"), replace=frozenset({"**ConfigMap::?ther"}))
    assert summary.counts == {"replace": 1, "same": 2}

    with pytest.raises(UsageError, match=r"--target \*\*::nothing\* matches no resource"):
        stack.up(chain("a"), targets=frozenset({"**::nothing*"}))
    with pytest.raises(UsageError, match=r"--replace \*::settings matches no resource"):
        stack.up(chain("a"), replace=frozenset({"*::settings"}))


def test_a_targeted_destroy_takes_no_workload_that_only_an_ordering_rule_ties_to_it(
    stack: Stack,
) -> None:
    def shop(p: Program) -> None:
        k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        k8s.core.v1.ConfigMap("base", metadata={"name": "base", "namespace": "shop"})
        k8s.apps.v1.Deployment(
            "web",
            metadata={"name": "web", "namespace": "shop"},
            spec={
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
                },
            },
        )

    stack.up(shop)
    # ConfigMaps go before the workloads of their namespace, but web does not use base.
    summary = stack.destroy(targets=frozenset({urn(CM, "base")}))

    assert summary.ok and [c.name for c in stack.fake.calls_to("delete")] == ["base"]
