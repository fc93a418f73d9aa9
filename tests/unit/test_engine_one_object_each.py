"""Two resources of a program may not name one Kubernetes object.

Each would apply over the other's fields (server-side apply lets one field manager
overwrite its own fields), and the preview showed the first one as unchanged: a
ConfigMap whose data the page depended on was rewritten by the other resource without
a word. `preview` and `up` refuse it before anything changes, naming both lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from engine_stack import Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import StepDone, StepStarted
from stackwright.engine.testing import FakeCluster
from stackwright.errors import UsageError
from stackwright.sdk.context import Program
from stackwright.sdk.output import Output
from stackwright.sdk.resource import ResourceOptions

CM = "kubernetes:core/v1:ConfigMap"
ConfigMap = k8s.core.v1.ConfigMap


def page(p: Program) -> None:
    k8s.core.v1.ConfigMap("web-page", data={"index.html": "<h1>Hello</h1>"})


def with_another(metadata: dict[str, Any], kind: Any = k8s.core.v1.ConfigMap) -> Declare:
    def declare(p: Program) -> None:
        page(p)
        kind("other", metadata=metadata, data={"a": "b"})

    return declare


def test_a_name_another_resource_auto_named_its_object_is_refused_before_any_change(
    stack: Stack,
) -> None:
    assert stack.up(page).ok
    name = stack.recorded(urn(CM, "web-page")).inputs["metadata"]["name"]
    stack.fake.calls.clear()

    for run in (stack.preview, stack.up):
        with pytest.raises(
            UsageError,
            match=rf"test_engine_one_object_each\.py:\d+: kubernetes:core/v1:ConfigMap other "
            rf"names the same ConfigMap {name} as kubernetes:core/v1:ConfigMap web-page "
            r"\(\S+test_engine_one_object_each\.py:\d+\): .*another metadata\.name.*nothing was "
            "changed",
        ):
            run(with_another({"name": name}))
    assert stack.fake.calls == []
    assert [r.urn for r in stack.state().resources] == [urn(CM, "web-page")]


def test_the_provider_default_namespace_given_or_not_is_one_object(stack: Stack) -> None:
    def two(first: dict[str, Any], second: dict[str, Any]) -> Declare:
        def declare(p: Program) -> None:
            k8s.core.v1.Namespace("team", metadata={"name": "team"})
            k8s.core.v1.ConfigMap("a", metadata=first)
            k8s.core.v1.ConfigMap("b", metadata=second)

        return declare

    with pytest.raises(UsageError, match="ConfigMap b names the same ConfigMap default/shared"):
        stack.preview(two({"name": "shared"}, {"name": "shared", "namespace": "default"}))
    assert stack.fake.calls == []
    # Another namespace, another kind, or a name known only once applied: not refused here.
    assert stack.up(two({"name": "shared"}, {"name": "shared", "namespace": "team"})).ok
    assert stack.up(with_another({"name": "x"}, kind=k8s.core.v1.Secret)).ok

    def later(p: Program) -> None:
        k8s.core.v1.ConfigMap("a", metadata={"name": "shared"})
        k8s.core.v1.ConfigMap("b", metadata={"name": Output.from_input("other")})

    assert stack.up(later).ok

    def imported(p: Program) -> None:  # an import's namespace given as an Output
        k8s.core.v1.ConfigMap(
            "c",
            metadata={"namespace": Output.from_input("team")},
            opts=ResourceOptions(import_="team/c"),
        )

    # Left to the run, which says what it finds: the check asks no Output its truth value.
    assert stack.preview(imported).failures == [
        f"{__file__}:{imported.__code__.co_firstlineno + 1}: {CM} c: cannot import team/c: "
        "no ConfigMap of that name exists in the cluster"
    ]


def test_an_imports_namespace_is_the_one_its_id_names(stack: Stack) -> None:
    def importing(second: dict[str, Any]) -> Declare:
        def declare(p: Program) -> None:
            k8s.core.v1.ConfigMap("a", opts=ResourceOptions(import_="team/shared"))
            k8s.core.v1.ConfigMap("b", metadata=second)

        return declare

    # `team/shared` and `default/shared` are two objects: no refusal, the import is tried.
    line = importing.__code__.co_firstlineno + 2  # a's, in `declare`
    assert stack.preview(importing({"name": "shared"})).failures == [
        f"{__file__}:{line}: {CM} a: cannot import team/shared: no ConfigMap of that name "
        "exists in the cluster"
    ]
    stack.fake.calls.clear()
    with pytest.raises(UsageError, match="ConfigMap b names the same ConfigMap team/shared"):
        stack.preview(importing({"name": "shared", "namespace": "team"}))
    assert stack.fake.calls == []


def test_one_object_from_two_manifests_is_left_out_of_one_of_them(stack: Stack) -> None:
    # The same Namespace in two apps' manifest files: renaming it is no fix.
    shared = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shared}\n"

    def two_files(p: Program) -> None:
        k8s.yaml.ConfigGroup("one", yaml=[shared])
        k8s.yaml.ConfigGroup("two", yaml=[shared], resource_prefix="two")

    def same_names(p: Program) -> None:
        k8s.yaml.ConfigGroup("one", yaml=[shared])
        k8s.yaml.ConfigGroup("two", yaml=[shared])

    # Without a prefix the two children are one URN: that comes first, and says how.
    with pytest.raises(
        UsageError,
        match=r"duplicate resource URN .*; give one of their components a resource_prefix$",
    ):
        stack.preview(same_names)
    with pytest.raises(UsageError) as refused:
        stack.preview(two_files)
    message = str(refused.value)
    assert "Namespace:shared (from " in message, message
    assert "names the same Namespace shared" in message
    assert message.endswith(
        "leave it out of one of them (a transformation that empties it, `obj.clear()`, drops "
        "it), or declare it once in the program; nothing was changed"
    )
    assert stack.fake.calls == []


def test_a_renamed_resource_keeps_its_objects_name_for_the_check(stack: Stack) -> None:
    """A resource renamed by an alias keeps the object its record names (the run applies
    it so): another resource naming that object is refused before anything changes, not
    at its create, once the rest of the run went on."""
    assert stack.up(page).ok
    name = stack.recorded(urn(CM, "web-page")).inputs["metadata"]["name"]

    def renamed(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "page",
            data={"index.html": "<h1>Hello</h1>"},
            opts=ResourceOptions(aliases=[urn(CM, "web-page")]),
        )
        k8s.core.v1.ConfigMap("other", metadata={"name": name}, data={"a": "b"})

    stack.fake.calls.clear()
    for run in (stack.preview, stack.up):
        with pytest.raises(
            UsageError, match=f"ConfigMap other names the same ConfigMap {name} as {CM} page"
        ):
            run(renamed)
    assert stack.fake.calls == []
    assert [r.urn for r in stack.state().resources] == [urn(CM, "web-page")]


def test_two_patches_of_one_object_applying_as_one_manager_are_refused(stack: Stack) -> None:
    # One manager's apply is all its fields: the second Patch's would drop the first's, and
    # each run would take them back from the other.
    stack.fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}})
    manager = {"stackwright.io/patch-field-manager": "tuning"}

    def two(second: dict[str, Any]) -> Declare:
        def declare(p: Program) -> None:
            k8s.core.v1.ConfigMapPatch(
                "first", metadata={"name": "shared", "annotations": manager}, data={"a": "1"}
            )
            k8s.core.v1.ConfigMapPatch("second", metadata=second, data={"b": "2"})

        return declare

    for run in (stack.preview, stack.up):
        with pytest.raises(
            UsageError,
            match=r"kubernetes:core/v1:ConfigMapPatch second applies to ConfigMap shared as "
            r"field manager tuning, as kubernetes:core/v1:ConfigMapPatch first \(\S+\) does: .*"
            r"another stackwright\.io/patch-field-manager annotation.*nothing was changed",
        ):
            run(two({"name": "shared", "annotations": manager}))
    assert stack.fake.writes() == []
    # A manager of its own: no refusal.
    assert stack.preview(two({"name": "shared"})).ok


def test_a_patch_may_not_apply_as_the_stacks_own_manager(stack: Stack) -> None:
    def declare(p: Program) -> None:
        meta = {
            "name": "shared",
            "annotations": {"stackwright.io/patch-field-manager": "stackwright"},
        }
        k8s.core.v1.ConfigMapPatch("mine", metadata=meta, data={"a": "1"})

    with pytest.raises(
        UsageError, match=r"^\S+:\d+: ConfigMapPatch 'mine': .* names stackwright, "
    ):
        stack.preview(declare)


def named_after_a(p: Program) -> None:
    """b names a's object, auto-named: a name only an applied resource tells."""
    a = k8s.core.v1.ConfigMap("a", data={"k": "v"})
    k8s.core.v1.ConfigMap("b", metadata={"name": a.metadata["name"]}, data={"k": "w"})


def assert_b_refused(stack: Stack, declare: Declare, verb: str) -> None:
    """A preview and an up of `declare` fail b's step alone, as a's object's (a's step `verb`)."""
    refused = (  # b's line first, as every message about a place in the program
        rf"{re.escape(__file__)}:\d+: kubernetes:core/v1:ConfigMap b: ConfigMap "
        r"default/a-[0-9a-f]{8} is the object "
        rf"kubernetes:core/v1:ConfigMap a {verb} \({re.escape(__file__)}:\d+\): each would "
        r"overwrite the other's fields; give one of them another metadata\.name"
    )
    for run in (stack.preview, stack.up):
        failures = run(declare).failures
        assert len(failures) == 1 and re.fullmatch(refused, failures[0]), failures
    name = stack.recorded(urn(CM, "a")).inputs["metadata"]["name"]
    made = stack.fake.find("ConfigMap", name)
    assert made is not None and made["data"] == {"k": "v"}


def test_a_name_only_an_applied_resource_tells_fails_the_second_ones_step(stack: Stack) -> None:
    """`metadata={"name": a.metadata["name"]}` names a's own object, which the check before
    the run cannot see (an Output) and the creates' LIST of the namespace, made before a's
    create, does not hold: the run refused nothing, and b applied over a's object."""
    assert_b_refused(stack, named_after_a, "creates too")
    assert [r.urn for r in stack.state().resources] == [urn(CM, "a")]


def test_a_replacement_onto_the_object_another_resource_creates_is_refused(stack: Stack) -> None:
    """b's name changes to one only an applied resource tells, the object a creates in the
    same run: b's replacement (made first under its new name) would apply over a's object,
    as a second create would; it is refused the same way, the step shown as a replace."""
    assert stack.up(lambda p: k8s.core.v1.ConfigMap("b", metadata={"name": "b"})).ok
    assert_b_refused(stack, named_after_a, "creates too")
    assert ("replace", "b") in stack.started()
    assert stack.recorded(urn(CM, "b")).id == "default/b" and stack.fake.find("ConfigMap", "b")


def test_a_new_resource_onto_the_object_another_resource_keeps_is_refused(stack: Stack) -> None:
    """b, new, is named after a's object, which a keeps: b's create used to apply over it and
    mark it as b's, and b's rename later deleted it as its own old object."""
    assert stack.up(lambda p: k8s.core.v1.ConfigMap("a", data={"k": "v"})).ok
    stack.fake.calls.clear()
    assert_b_refused(stack, named_after_a, "holds")
    assert stack.fake.writes() == []
    assert [r.urn for r in stack.state().resources] == [urn(CM, "a")]


# --- an object a resource keeps is its own from the run's start ----------------------------

A = urn(CM, "a")


def keeper(p: Program) -> ConfigMap:
    return k8s.core.v1.ConfigMap("a", metadata={"name": "shared"}, data={"k": "v"})


def b_then(after_b: Callable[[ConfigMap], None], name: Any = None) -> Declare:
    """b, named "shared" by an Output (the check before the run cannot see it), then what
    `after_b` declares depending on b: its step runs after b's create."""

    def declare(p: Program) -> None:
        b = k8s.core.v1.ConfigMap(
            "b", metadata={"name": name or Output.from_input("shared")}, data={"k": "w"}
        )
        after_b(b)

    return declare


def a_after(b: ConfigMap, **options: Any) -> None:
    k8s.core.v1.ConfigMap(
        "a",
        metadata={"name": "shared"},
        data={"k": "v"},
        opts=ResourceOptions(depends_on=[b], **options),
    )


def assert_b_refused_as_a_keeps(stack: Stack, summary: Any, keeper_: str = CM + " a") -> None:
    (failure,) = summary.failures
    assert re.match(
        rf"{re.escape(__file__)}:\d+: {CM} b: ConfigMap default/shared is the object "
        rf"{keeper_} holds \({re.escape(__file__)}:\d+\): ",
        failure,
    ), failure
    shared = stack.fake.find("ConfigMap", "shared")
    assert shared is not None and shared["data"] == {"k": "v"}


def test_a_create_onto_the_object_a_later_step_keeps_is_refused_before_it_applies(
    stack: Stack,
) -> None:
    """a keeps its object, but its step runs after b's create onto it: b used to apply over
    it (the object marked as a's passed the create's check, as one of the stack's) and a's
    step was the one refused, its object b's by then."""
    assert stack.up(keeper).ok
    stack.fake.calls.clear()
    for run in (stack.preview, stack.up):
        assert_b_refused_as_a_keeps(stack, run(b_then(a_after)))
    assert stack.fake.writes() == []
    assert [r.urn for r in stack.state().resources] == [A]
    assert stack.recorded(A).inputs["data"] == {"k": "v"}


def test_a_resource_the_run_leaves_alone_keeps_its_object(stack: Stack) -> None:
    """`--exclude a` or `--target b`: a's step is not taken, yet its object is still its."""
    assert stack.up(keeper).ok
    stack.fake.calls.clear()

    def both(p: Program) -> None:
        keeper(p)
        k8s.core.v1.ConfigMap("b", metadata={"name": Output.from_input("shared")}, data={"k": "w"})

    for selection in ({"excludes": frozenset({A})}, {"targets": frozenset({urn(CM, "b")})}):
        assert_b_refused_as_a_keeps(stack, stack.up(both, **selection))
    assert stack.fake.writes() == []


def test_a_renamed_keeper_keeps_its_object_under_its_new_urn(stack: Stack) -> None:
    assert stack.up(keeper).ok

    def renamed(b: ConfigMap) -> None:
        k8s.core.v1.ConfigMap(
            "page", metadata={"name": "shared"}, data={"k": "v"},
            opts=ResourceOptions(depends_on=[b], aliases=[A]),
        )  # fmt: skip

    summary = stack.up(b_then(renamed))
    assert_b_refused_as_a_keeps(stack, summary, f"{CM} page")
    assert [r.urn for r in stack.state().resources] == [urn(CM, "page")]


def test_an_object_its_keeper_gives_up_in_the_run_may_be_taken(stack: Stack) -> None:
    """What a resource does not keep is free: a dropped one's object (deleted, then made
    anew as b's), one it is renamed away from, and the same name through another provider
    (another cluster)."""
    assert stack.up(keeper).ok
    summary = stack.up(b_then(lambda b: None))
    assert summary.ok, summary.failures
    assert [r.urn for r in stack.state().resources] == [urn(CM, "b")]
    shared = stack.fake.find("ConfigMap", "shared")
    assert shared is not None and shared["data"] == {"k": "w"}

    assert stack.destroy().ok
    assert stack.up(keeper).ok

    def moved(b: ConfigMap) -> None:
        k8s.core.v1.ConfigMap(
            "a", metadata={"name": "moved"}, data={"k": "v"},
            opts=ResourceOptions(depends_on=[b]),
        )  # fmt: skip

    summary = stack.up(b_then(moved))
    assert summary.ok, summary.failures
    assert stack.recorded(A).id == "default/moved"
    assert stack.recorded(urn(CM, "b")).id == "default/shared"


def test_the_same_name_through_another_provider_is_another_object(stack: Stack) -> None:
    east = FakeCluster(name="east")
    stack.factory = stack.fake.factory({"east": east})
    assert stack.up(keeper).ok

    def elsewhere(p: Program) -> None:
        b = k8s.core.v1.ConfigMap(
            "b", metadata={"name": Output.from_input("shared")}, data={"k": "w"},
            opts=ResourceOptions(provider=k8s.Provider("east", context="east")),
        )  # fmt: skip
        a_after(b)

    summary = stack.up(elsewhere)
    assert summary.ok, summary.failures
    made = east.find("ConfigMap", "shared")
    assert made is not None and made["data"] == {"k": "w"}


def test_a_replacement_under_a_new_auto_name_gives_its_old_object_up(stack: Stack) -> None:
    """a, auto-named, is replaced (`--replace`): its new object has a new name, and its old
    one, deleted by the run, is no longer a's to keep: b, after a, may name it."""
    assert stack.up(lambda p: k8s.core.v1.ConfigMap("a", data={"k": "v"})).ok
    old = stack.recorded(A).inputs["metadata"]["name"]

    def after_a(p: Program) -> None:
        a = k8s.core.v1.ConfigMap("a", data={"k": "v"})
        k8s.core.v1.ConfigMap(
            "b", metadata={"name": a.id.apply(lambda _: old)}, data={"k": "w"},
        )  # fmt: skip

    summary = stack.up(after_a, replace=frozenset({A}))
    assert summary.ok, summary.failures
    assert stack.recorded(A).inputs["metadata"]["name"] != old
    assert stack.recorded(urn(CM, "b")).id == f"default/{old}"


def test_a_protected_keeper_renamed_keeps_its_object(stack: Stack) -> None:
    """A protected resource's replacement is refused: renamed, it still keeps its object,
    which b's create before it (or b alone, `--target`) took over, two records of one
    object left in the state. The whole `up` is refused before any change where the
    replacement is known before the run; `--target b` leaves a out, and b's create is
    refused."""
    assert stack.up(lambda p: k8s.core.v1.ConfigMap(
        "a", metadata={"name": "shared"}, data={"k": "v"},
        opts=ResourceOptions(protect=True),
    )).ok  # fmt: skip

    def renamed(b: ConfigMap) -> None:
        k8s.core.v1.ConfigMap(
            "a", metadata={"name": "moved"}, data={"k": "v"},
            opts=ResourceOptions(depends_on=[b], protect=True),
        )  # fmt: skip

    with pytest.raises(UsageError, match=rf"^up refused: .*:\d+: {CM} a: resource .*::a cannot be"):
        stack.up(b_then(renamed))
    assert [r.urn for r in stack.state().resources] == [A]
    summary = stack.up(b_then(renamed), targets=frozenset({urn(CM, "b")}))
    assert_b_refused_as_a_keeps(stack, summary)
    assert [r.urn for r in stack.state().resources] == [A]


def test_a_protected_job_its_ttl_deleted_gives_its_name_up_once_replaced(stack: Stack) -> None:
    """Its replacement is not refused (nothing to delete): renamed, its old name is free to
    a step after it."""
    job = "kubernetes:batch/v1:Job"
    spec = {"ttlSecondsAfterFinished": 5, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}],
    }}}  # fmt: skip

    def renamed(p: Program) -> None:
        a = k8s.batch.v1.Job(
            "a", metadata={"name": "y"}, spec=spec, opts=ResourceOptions(protect=True)
        )
        k8s.batch.v1.Job("b", metadata={"name": a.id.apply(lambda _: "x")}, spec=spec)

    assert stack.up(
        lambda p: k8s.batch.v1.Job(
            "a", metadata={"name": "x"}, spec=spec, opts=ResourceOptions(protect=True)
        )
    ).ok
    stack.fake.edit("Job", "x", {"status.conditions": [{"type": "Complete", "status": "True"}]})
    assert stack.refresh().ok
    stack.fake.remove("Job", "x")
    summary = stack.up(renamed)
    assert summary.ok, summary.failures
    assert stack.recorded(urn(job, "a")).id == "default/y"
    assert stack.recorded(urn(job, "b")).id == "default/x"


def test_an_import_of_the_object_another_resource_keeps_says_to_drop_the_import(
    stack: Stack,
) -> None:
    """Another metadata.name is no fix for an import: its id names the object."""
    assert stack.up(keeper).ok

    def importing(p: Program) -> None:
        keeper(p)
        k8s.core.v1.ConfigMap("c", opts=ResourceOptions(import_="default/shared"))

    with pytest.raises(
        UsageError,
        match=rf"ConfigMap c names the same ConfigMap default/shared as {CM} a \(\S+\): each "
        rf"would overwrite the other's fields; drop one of them \({CM} c imports it: another "
        r"metadata\.name would not match its import id\); nothing was changed$",
    ):
        stack.preview(importing)


# --- two providers reaching one cluster ------------------------------------------------------


def through(provider: Any, name: Any, **options: Any) -> ConfigMap:
    """ConfigMap b, named `name`, through `provider` (None: the stack's default one)."""
    return k8s.core.v1.ConfigMap(
        "b", metadata={"name": name}, data={"k": "w"},
        opts=ResourceOptions(provider=provider, **options),
    )  # fmt: skip


def test_two_providers_of_one_cluster_naming_one_object_are_refused_before_any_change(
    stack: Stack,
) -> None:
    """The stack's default provider and an explicit one reach the same cluster (the fake):
    a and b name one object through them, each would apply over the other's fields; they
    are told apart by the cluster each reaches (its kube-system uid), not by the provider."""

    def declare(p: Program) -> None:
        keeper(p)
        through(k8s.Provider("east", context="east"), "shared")

    for run in (stack.preview, stack.up):
        with pytest.raises(
            UsageError,
            match=rf"ConfigMap b names the same ConfigMap shared as {CM} a \(\S+\): each "
            r"would overwrite the other's fields; .*nothing was changed$",
        ):
            run(declare)
    assert stack.fake.writes() == [] and stack.state().resources == []

    # Another cluster behind "east": two objects.
    east = FakeCluster(name="east")
    stack.factory = stack.fake.factory({"east": east})
    assert stack.up(declare).ok
    assert stack.fake.find("ConfigMap", "shared") and east.find("ConfigMap", "shared")


def test_an_object_named_by_an_output_through_another_provider_of_its_cluster_is_refused(
    stack: Stack,
) -> None:
    """b's name, known only once applied, is the object a creates or keeps through the
    stack's default provider; b goes through an explicit provider for the same cluster."""

    def after_a(p: Program) -> None:
        a = keeper(p)
        through(k8s.Provider("east", context="east"), Output.from_input("shared"), depends_on=[a])

    (failure,) = stack.up(after_a).failures
    assert f": {CM} b: ConfigMap default/shared is the object {CM} a creates too (" in failure
    assert [r.urn for r in stack.state().resources if r.type == CM] == [A]

    def before_a(p: Program) -> None:
        b = through(k8s.Provider("east", context="east"), Output.from_input("shared"))
        a_after(b)

    stack.fake.calls.clear()
    for run in (stack.preview, stack.up):
        assert_b_refused_as_a_keeps(stack, run(before_a))
    assert stack.fake.writes() == []


def test_a_provider_whose_settings_are_known_during_the_run_keys_by_cluster_once_made(
    stack: Stack,
) -> None:
    """A provider whose context is known only once a is applied: its cluster is read at its
    step, before any of its resources' steps, which are then keyed by that cluster."""

    def declare(p: Program) -> None:
        a = keeper(p)
        east = k8s.Provider("east", context=a.metadata["name"].apply(lambda _: "east"))
        through(east, Output.from_input("shared"))

    (failure,) = stack.up(declare).failures
    assert f": {CM} b: ConfigMap default/shared is the object {CM} a creates too (" in failure


def test_a_keeper_moved_to_another_provider_of_its_cluster_keeps_its_object(stack: Stack) -> None:
    """a moves from the stack's default provider to an explicit one for the same cluster,
    its step after b's: b, through the default provider, naming a's object (an Output), is
    refused before it applies, and in plain text before the run."""
    assert stack.up(keeper).ok
    stack.fake.calls.clear()

    def moved(name: Any) -> Declare:
        def declare(p: Program) -> None:
            b = through(None, name)
            a_after(b, provider=k8s.Provider("east", context="east"))

        return declare

    for run in (stack.preview, stack.up):
        assert_b_refused_as_a_keeps(stack, run(moved(Output.from_input("shared"))))
        with pytest.raises(
            UsageError, match=f"ConfigMap a names the same ConfigMap shared as {CM} b"
        ):
            run(moved("shared"))
    assert stack.fake.writes() == []
    assert stack.recorded(A).provider == ""


def test_an_object_passed_to_a_resource_through_another_provider_of_its_cluster_stays(
    stack: Stack,
) -> None:
    """a is dropped and b, through an explicit provider for the same cluster, names a's
    object: b takes it over, and a's delete removes only a's record (the object is found
    by kind and name whatever the provider, `Records.naming`, and its mark read)."""
    assert stack.up(keeper).ok
    summary = stack.up(lambda p: through(k8s.Provider("east", context="east"), "shared"))
    assert summary.ok, summary.failures
    assert [r.urn for r in stack.state().resources if r.type == CM] == [urn(CM, "b")]
    shared = stack.fake.find("ConfigMap", "shared")
    assert shared is not None and shared["data"] == {"k": "w"}
    assert ("ConfigMap", "shared") not in [(c.kind, c.name) for c in stack.fake.calls_to("delete")]


def test_one_of_two_records_of_one_object_dropped_leaves_the_object_to_the_other(
    stack: Stack,
) -> None:
    """Two records of one object through two providers of one cluster, which a run made
    before objects were known by cluster (here: while the cluster's identity could not be
    read), b's apply the last: b dropped, its delete removes only its record, as the
    object is a's (its delete went by b's mark, and took a's object)."""
    stack.fake.remove("Namespace", "kube-system")  # no identity: each provider its own cluster
    assert stack.up(keeper).ok

    def both(p: Program) -> None:
        keeper(p)
        through(k8s.Provider("east", context="east"), "shared")

    assert stack.up(both).ok
    assert stack.fake.find("ConfigMap", "shared")["data"] == {"k": "w"}  # b's, over a's
    stack.fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})

    summary = stack.up(keeper)
    assert summary.ok, summary.failures
    assert stack.fake.find("ConfigMap", "shared") is not None
    assert [r.urn for r in stack.state().resources if r.type == CM] == [A]
    assert ("ConfigMap", "shared") not in [(c.kind, c.name) for c in stack.fake.calls_to("delete")]


def test_a_keeper_through_a_provider_known_only_during_the_run_keeps_its_object(
    stack: Stack,
) -> None:
    """a keeps its object through "east", whose context is now known only once c is
    applied: until its step reads its cluster, the one its objects are recorded on tells.
    b, through the stack's default provider on that cluster, naming a's object is refused,
    in plain text before the run, by an Output before it applies."""

    def east(later: bool) -> k8s.Provider:
        c = k8s.core.v1.ConfigMap("c", metadata={"name": "c"})
        return k8s.Provider("east", context=c.id.apply(lambda _: "east") if later else "east")

    assert stack.up(lambda p: a_after(k8s.core.v1.ConfigMap("d"), provider=east(False))).ok

    def both(name: Any) -> Declare:
        def declare(p: Program) -> None:
            a_after(through(None, name), provider=east(True))

        return declare

    stack.fake.calls.clear()
    with pytest.raises(UsageError, match=f"ConfigMap a names the same ConfigMap shared as {CM} b"):
        stack.up(both("shared"))
    assert_b_refused_as_a_keeps(stack, stack.up(both(Output.from_input("shared"))))
    assert [c for c in stack.fake.writes() if c.name == "shared"] == []


def test_what_rides_on_a_namespace_passed_to_another_provider_of_its_cluster_is_deleted(
    stack: Stack,
) -> None:
    """A Namespace passed from the stack's default provider to an explicit one for the same
    cluster stays (its old record's delete removes only the record), so a dropped object
    in it that was to be deleted with it (`deleted_with`) is deleted on its own: it does
    not ride on a delete that never happens, left behind untracked."""

    def first(p: Program) -> None:
        space = k8s.core.v1.Namespace("space", metadata={"name": "apps"})
        ConfigMap(
            "inside", metadata={"name": "inside", "namespace": "apps"}, data={"k": "v"},
            opts=ResourceOptions(deleted_with=space),
        )  # fmt: skip

    assert stack.up(first).ok
    east = lambda p: k8s.core.v1.Namespace(  # noqa: E731
        "moved", metadata={"name": "apps"},
        opts=ResourceOptions(provider=k8s.Provider("east", context="east")),
    )  # fmt: skip
    preview = stack.preview(east)
    assert preview.ok, preview.failures
    summary = stack.up(east)
    assert summary.ok, summary.failures
    assert stack.fake.find("Namespace", "apps") is not None
    assert stack.fake.find("ConfigMap", "inside") is None
    assert ("ConfigMap", "inside") in [(c.kind, c.name) for c in stack.fake.calls_to("delete")]


def test_an_applyset_whose_members_passed_to_another_provider_of_its_cluster_stays(
    stack: Stack,
) -> None:
    """The ApplySet parent of a namespace is one object on the cluster whichever provider
    reached it: its members passed from the stack's default provider to an explicit one
    for the same cluster, it still has them, and is not removed (the API server's refusal
    was a warning that told to take the object out of the set)."""
    assert stack.up(keeper).ok
    (parent,) = stack.fake.applysets
    summary = stack.up(lambda p: through(k8s.Provider("east", context="east"), "shared"))
    assert summary.ok, summary.failures
    assert parent in stack.fake.applysets
    assert ("remove_applyset", "ApplySet") not in [(c.method, c.kind) for c in stack.fake.calls]


def test_a_patch_through_another_provider_of_its_cluster_previews_an_object_made_first(
    stack: Stack,
) -> None:
    """A Patch through an explicit provider for the cluster the stack's default provider
    reaches, of the object a resource through that default provider creates in the run:
    the preview does not refuse it as missing, no more than the up does (it is made first)."""

    def declare(p: Program) -> None:
        made = keeper(p)
        k8s.core.v1.ConfigMapPatch(
            "tuning", metadata={"name": "shared"}, data={"mode": "fast"},
            opts=ResourceOptions(depends_on=[made], provider=k8s.Provider("east", context="east")),
        )  # fmt: skip

    preview = stack.preview(declare)
    assert preview.ok, preview.failures
    summary = stack.up(declare)
    assert summary.ok, summary.failures
    assert stack.fake.find("ConfigMap", "shared")["data"] == {"k": "v", "mode": "fast"}


NamespaceOf = Callable[[Any], Any]  # the Namespace resource → the namespace to name


@pytest.mark.parametrize(
    ("namespaced", "patch_namespace"),
    [
        (lambda ns: None, lambda ns: "default"),  # the provider's, written out by the Patch
        (lambda ns: ns.metadata["name"], lambda ns: "team"),  # the object's from an Output
        (lambda ns: "team", lambda ns: ns.metadata["name"]),  # the Patch's from an Output
    ],
    ids=["default-written-out", "object-namespace-an-output", "patch-namespace-an-output"],
)
def test_a_patch_follows_its_object_whatever_names_its_namespace(
    stack: Stack, namespaced: NamespaceOf, patch_namespace: NamespaceOf
) -> None:
    """A Patch declared before the object of the program it changes, the two naming its
    namespace otherwise (written out or not, plain or an Output), follows the object. It did
    not: its create found no object to change, and a delete-first replacement of the object
    left it `same`, its fields gone for good."""

    def declare(data: str) -> Declare:
        def declare_(p: Program) -> None:
            ns = k8s.core.v1.Namespace("ns", metadata={"name": "team"})
            k8s.core.v1.ConfigMapPatch(
                "tuning", metadata={"name": "shared", "namespace": patch_namespace(ns)},
                data={"mode": "fast"},
            )  # fmt: skip
            meta = {"name": "shared", "namespace": namespaced(ns)}
            k8s.core.v1.ConfigMap(
                "a", metadata={k: v for k, v in meta.items() if v is not None}, data={"k": data},
                opts=ResourceOptions(replace_on_changes=["data"]),
            )  # fmt: skip

        return declare_

    summary = stack.up(declare("1"))
    assert summary.ok, summary.failures
    assert stack.fake.find("ConfigMap", "shared")["data"] == {"k": "1", "mode": "fast"}
    summary = stack.up(declare("2"))
    assert summary.ok, summary.failures
    assert ("replace", "a") in stack.started() and ("update", "tuning") in stack.started()
    assert stack.fake.find("ConfigMap", "shared")["data"] == {"k": "2", "mode": "fast"}


@pytest.mark.parametrize("patch_first", [True, False], ids=["patch-declared-first", "object-first"])
def test_a_patch_through_another_provider_of_its_cluster_gives_its_fields_up_first(
    stack: Stack, patch_first: bool
) -> None:
    """A Patch, through an explicit provider for the cluster the stack's default provider
    reaches, of the object a resource makes through that default provider: a destroy gives
    the Patch's fields up before the object goes, as the run that made them ordered them
    (by cluster). The recorded graph matched them by provider, as two unrelated objects."""

    def declare(p: Program) -> None:
        def patch() -> None:
            k8s.core.v1.ConfigMapPatch(
                "tuning", metadata={"name": "shared"}, data={"mode": "fast"},
                opts=ResourceOptions(provider=k8s.Provider("east", context="east")),
            )  # fmt: skip

        if patch_first:
            patch()
        keeper(p)
        if not patch_first:
            patch()

    summary = stack.up(declare)
    assert summary.ok, summary.failures
    assert stack.fake.find("ConfigMap", "shared")["data"] == {"k": "v", "mode": "fast"}
    summary = stack.destroy()
    assert summary.ok, summary.failures
    steps = [
        (type(e).__name__, e.step.urn.rpartition("::")[2])
        for e in stack.events
        if isinstance(e, StepStarted | StepDone)
    ]
    assert steps.index(("StepDone", "tuning")) < steps.index(("StepStarted", "a")), steps


def _patched_through_east(p: Program) -> None:
    keeper(p)
    k8s.core.v1.ConfigMapPatch(
        "tuning", metadata={"name": "shared"}, data={"mode": "fast"},
        opts=ResourceOptions(provider=k8s.Provider("east", context="east")),
    )  # fmt: skip


def test_a_destroy_of_an_object_takes_its_patch_through_another_provider_of_its_cluster(
    stack: Stack,
) -> None:
    """`destroy --target` of the object deletes what patches it as what depends on it, by
    cluster as the run orders them: matched by provider, the Patch was left in the state,
    its object gone."""
    assert stack.up(_patched_through_east).ok
    summary = stack.destroy(targets=frozenset({urn(CM, "a")}))
    assert summary.ok, summary.failures
    assert stack.started() == [("delete", "tuning"), ("delete", "a")]


def test_a_destroy_that_excludes_a_patch_keeps_its_object_through_another_provider(
    stack: Stack,
) -> None:
    """`destroy --exclude` of a Patch keeps what it needs, its object among them, by cluster:
    matched by provider, the object was deleted under the Patch the state keeps."""
    assert stack.up(_patched_through_east).ok
    summary = stack.destroy(
        excludes=frozenset({urn("kubernetes:core/v1:ConfigMapPatch", "tuning")})
    )
    assert summary.ok, summary.failures
    assert ("delete", "a") not in stack.started()
    assert stack.fake.find("ConfigMap", "shared")["data"] == {"k": "v", "mode": "fast"}
