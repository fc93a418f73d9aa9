"""Lifecycle scenarios of the engine: program v1 → up → program v2 → preview → up.

Each scenario runs real programs through `operations.run` against the fake cluster
(`stackwright.engine.testing.FakeCluster`) and a real SQLite state store, then
asserts the steps (events), what the cluster was asked to do (the fake's calls)
and what the state recorded — Pulumi's lifecycletest, which its README calls the
specification.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_stack import PROJECT, STACK, Declare, Stack, urn
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import (
    UNKNOWN_TEXT,
    Diagnostic,
    Drift,
    DriftedField,
    StepDone,
    StepProgress,
    StepSkipped,
    StepStarted,
    shown_changes,
)
from stackwright.engine.operations import left_applysets
from stackwright.engine.plan import FieldChange, Step
from stackwright.engine.records import unchanged_by
from stackwright.engine.testing import Call, FakeCluster, FakeNotReady, Key
from stackwright.errors import ClusterUnreachable, UsageError
from stackwright.kubernetes.provider import PROVIDER_TYPE
from stackwright.model import ClusterIdentity, Op, ResourceState, make_urn
from stackwright.sdk.context import Program
from stackwright.sdk.output import UNKNOWN, Output
from stackwright.sdk.resource import ComponentResource, CustomTimeouts, ResourceOptions
from stackwright.state import open_backend

CM = "kubernetes:core/v1:ConfigMap"
PROVIDER = PROVIDER_TYPE
NS = "kubernetes:core/v1:Namespace"
DEPLOY = "kubernetes:apps/v1:Deployment"
SVC = "kubernetes:core/v1:Service"
SECRET = "kubernetes:core/v1:Secret"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def applies_and_deletes(fake: FakeCluster) -> list[tuple[str, str]]:
    return [(c.method, c.name) for c in fake.calls_to("apply", "delete")]


# --- programs -----------------------------------------------------------------------------


def settings(mode: str = "fast", **opts: Any) -> Declare:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "settings",
            metadata={"name": "settings"},
            data={"mode": mode},
            opts=ResourceOptions(**opts),
        )

    return declare


def web_spec(*, app: str = "web", replicas: int = 2, image: str = "nginx:1.29") -> dict[str, Any]:
    return {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": app}},
        "template": {
            "metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "web", "image": image}]},
        },
    }


def web(*, named: bool = True, **spec: Any) -> Declare:
    def declare(p: Program) -> None:
        k8s.apps.v1.Deployment(
            "web", metadata={"name": "web"} if named else None, spec=web_spec(**spec)
        )

    return declare


def both(*declares: Declare) -> Declare:
    def declare(p: Program) -> None:
        for each in declares:
            each(p)

    return declare


# --- create, no-op, update ----------------------------------------------------------------


def test_create_records_every_object_and_a_second_up_changes_nothing(stack: Stack) -> None:
    v1 = both(settings("fast"), web(replicas=2))

    summary = stack.up(v1)

    assert summary.ok and summary.counts == {"create": 2}
    assert sorted(stack.started()) == [("create", "settings"), ("create", "web")]
    assert stack.fake.names("ConfigMap") == ["default/settings"]
    assert stack.fake.names("Deployment") == ["default/web"]
    state = stack.state()
    assert [r.urn for r in state.resources] == [urn(CM, "settings"), urn(DEPLOY, "web")]
    assert not state.pending
    deployment = stack.recorded(urn(DEPLOY, "web"))
    assert deployment.id == "default/web"
    assert deployment.inputs["spec"]["replicas"] == 2
    # The state holds the live object the cluster returned, with what the server added.
    live = stack.fake.find("Deployment", "web")
    assert live is not None
    assert deployment.outputs == live
    assert deployment.outputs["metadata"]["uid"]
    assert deployment.outputs["status"]["readyReplicas"] == 2
    assert live["metadata"]["annotations"]["stackwright.io/urn"] == urn(DEPLOY, "web")
    assert live["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "stackwright"

    version = state.version
    stack.fake.calls.clear()
    again = stack.up(v1)

    assert again.ok and again.counts == {"same": 2}
    assert stack.fake.writes() == []
    assert stack.fake.calls_to("preview", "await_ready") == []
    # One read only: the cluster's identity (kube-system's uid), the one the first up
    # recorded, tells that the stack's default provider reaches the cluster its objects are
    # in (`check_clusters`); no object is read.
    assert stack.fake.calls_to("read") == []
    assert stack.fake.calls_to("identity") == [Call("identity", "Namespace", "kube-system")]
    assert stack.state().version == version, "a no-op up journaled something"


def test_preview_of_an_update_shows_field_changes_and_writes_nothing(stack: Stack) -> None:
    stack.up(both(settings("fast"), web(replicas=2)))
    before = stack.state()
    stack.fake.calls.clear()

    summary = stack.preview(both(settings("slow"), web(replicas=2)))

    assert summary.ok and summary.dry_run and summary.kind == "preview"
    assert summary.counts == {"update": 1, "same": 1}
    assert stack.started() == [("update", "settings"), ("same", "web")]
    assert stack.changes(urn(CM, "settings")) == [FieldChange("data.mode", "fast", "slow")]
    assert stack.fake.writes() == []
    assert stack.fake.calls_to("preview") == [Call("preview", "ConfigMap", "settings")]
    assert stack.fake.applied[-1].dry_run
    assert stack.fake.find("ConfigMap", "settings")["data"] == {"mode": "fast"}  # type: ignore[index]
    assert stack.state().version == before.version


def test_update_applies_only_what_changed_and_records_the_new_live_object(stack: Stack) -> None:
    stack.up(both(settings("fast"), web(replicas=2)))
    stack.fake.calls.clear()

    summary = stack.up(both(settings("fast"), web(replicas=3)))

    assert summary.ok and summary.counts == {"update": 1, "same": 1}
    assert stack.started() == [("same", "settings"), ("update", "web")]
    assert stack.changes(urn(DEPLOY, "web")) == [FieldChange("spec.replicas", 2, 3)]
    assert applies_and_deletes(stack.fake) == [("apply", "web")]
    recorded = stack.recorded(urn(DEPLOY, "web"))
    assert recorded.inputs["spec"]["replicas"] == 3
    assert recorded.outputs["metadata"]["generation"] == 2
    assert recorded.outputs["status"]["readyReplicas"] == 3
    done = stack.of(StepDone)
    assert [(d.step.op, d.ok) for d in done] == [(Op.UPDATE, True)]
    assert any(isinstance(e, StepProgress) and e.message == "ready" for e in stack.events)


# --- replace ----------------------------------------------------------------------------------


def test_replacing_an_auto_named_object_creates_the_new_one_before_deleting_the_old(
    stack: Stack,
) -> None:
    stack.up(web(named=False, app="web"))
    (old_name,) = [n.split("/")[1] for n in stack.fake.names("Deployment")]
    assert old_name.startswith("web-")
    stack.fake.calls.clear()

    summary = stack.up(web(named=False, app="web2"))

    assert summary.ok, summary.failures
    assert summary.counts == {"replace": 1, "delete-replaced": 1}
    assert stack.started() == [("replace", "web"), ("delete-replaced", "web")]
    (replace_step,) = [e.step for e in stack.of(StepStarted) if e.step.op is Op.REPLACE]
    assert replace_step.replace_reasons == ("spec.selector: a Deployment's selector is immutable",)
    (new_name,) = [n.split("/")[1] for n in stack.fake.names("Deployment")]
    assert new_name != old_name and new_name.startswith("web-")
    assert applies_and_deletes(stack.fake) == [("apply", new_name), ("delete", old_name)]
    state = stack.state()
    assert [(r.urn, r.id, r.delete_pending) for r in state.resources] == [
        (urn(DEPLOY, "web"), f"default/{new_name}", False)
    ]


def test_replacing_an_explicitly_named_object_deletes_it_first(stack: Stack) -> None:
    stack.up(web(named=True, app="web"))
    first_uid = stack.fake.find("Deployment", "web")["metadata"]["uid"]  # type: ignore[index]
    stack.fake.calls.clear()

    summary = stack.up(web(named=True, app="web2"))

    assert summary.ok, summary.failures
    assert summary.counts == {"replace": 1}
    (step,) = [e.step for e in stack.of(StepStarted)]
    assert step.op is Op.REPLACE and step.delete_before_replace
    # The same name cannot exist twice: delete, then create (never an in-place update,
    # which the fake refuses like the API server does).
    assert applies_and_deletes(stack.fake) == [("delete", "web"), ("apply", "web")]
    live = stack.fake.find("Deployment", "web")
    assert live is not None and live["metadata"]["uid"] != first_uid
    assert live["spec"]["selector"] == {"matchLabels": {"app": "web2"}}
    state = stack.state()
    assert [(r.id, r.delete_pending) for r in state.resources] == [("default/web", False)]
    assert state.resources[0].outputs["metadata"]["uid"] == live["metadata"]["uid"]


def test_what_the_program_dropped_goes_before_the_delete_before_replace_it_depends_on(
    stack: Stack,
) -> None:
    """A fixed-name claim replaced (delete first) while the Deployment mounting it is
    dropped: the Deployment is deleted first, as Pulumi does; left to the end of the run,
    its pods would hold the claim (pvc-protection) and its deletion would wait for good."""

    def claim(storage_class: str) -> Declare:
        def declare(p: Program) -> k8s.core.v1.PersistentVolumeClaim:
            return k8s.core.v1.PersistentVolumeClaim(
                "data",
                metadata={"name": "data"},
                spec={
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": storage_class,
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            )

        return declare

    def with_consumer(p: Program) -> None:
        data = claim("fast")(p)
        spec = web_spec()
        spec["template"]["spec"]["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": data.metadata["name"]}}
        ]
        k8s.apps.v1.Deployment("web", metadata={"name": "web"}, spec=spec)

    stack.up(with_consumer)
    stack.fake.calls.clear()

    summary = stack.up(claim("slow"))

    assert summary.ok, summary.failures
    assert summary.counts == {"replace": 1, "delete": 1}
    assert applies_and_deletes(stack.fake) == [
        ("delete", "web"),
        ("delete", "data"),
        ("apply", "data"),
    ]
    assert [r.urn for r in stack.state().resources] == [urn(PVC, "data")]


def test_a_delete_before_replace_whose_new_object_is_refused_leaves_a_state_that_loads(
    stack: Stack,
) -> None:
    """The old object is deleted, then the server refuses the new one (an admission
    webhook): the resource has no object and no record, and what refers to it no longer
    names it, so the state still loads and the next up makes the object and records the
    dependency again. It used to leave a dependency on a URN the state lacked: every later
    command of the stack failed with 'the state was edited or damaged'."""

    def app(selector: str) -> Declare:
        def declare(p: Program) -> None:
            web = k8s.apps.v1.Deployment(
                "web", metadata={"name": "web"}, spec=web_spec(app=selector)
            )
            k8s.core.v1.ConfigMap(
                "reader", metadata={"name": "reader"}, data={"of": web.metadata["name"]}
            )

        return declare

    stack.up(app("web"))
    stack.fake.fail_apply["web"] = "admission webhook denied the request"

    failed = stack.up(app("web2"))

    assert not failed.ok
    assert failed.failures == [
        "kubernetes:apps/v1:Deployment web: admission webhook denied the request"
    ]
    state = stack.state()  # loads: nothing names a URN it lacks
    assert [(r.urn, r.dependencies) for r in state.resources] == [(urn(CM, "reader"), ())]

    del stack.fake.fail_apply["web"]
    again = stack.up(app("web2"))
    assert again.ok, again.failures
    assert again.counts == {"create": 1, "same": 1}
    reader = stack.state().resource(urn(CM, "reader"))
    assert reader is not None and reader.dependencies == (urn(DEPLOY, "web"),)


def replaced_namespace(team: str, names: tuple[str, ...] = ("settings", "flags")) -> Declare:
    """A Namespace replaced delete-first when its `team` label changes, and ConfigMaps in it."""

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace(
            "apps",
            metadata={"name": "apps", "labels": {"team": team}},
            opts=ResourceOptions(
                delete_before_replace=True, replace_on_changes=["metadata.labels"]
            ),
        )
        for name in names:
            k8s.core.v1.ConfigMap(
                name, metadata={"name": name, "namespace": ns.metadata["name"]}, data={"k": "v"}
            )

    return declare


def test_a_namespace_replaced_delete_first_makes_the_objects_in_it_anew(stack: Stack) -> None:
    """Deleting a Namespace's old object deletes the objects in it: their records go with
    it, and the up (and its preview) makes them anew in the new Namespace. They used to be
    kept as unchanged: the state recorded objects the cluster no longer had."""
    app = replaced_namespace
    stack.up(app("a"))

    preview = stack.preview(app("b"))
    assert preview.counts == {"replace": 1, "create": 2}, stack.started()
    summary = stack.up(app("b"))

    assert summary.ok, summary.failures
    assert summary.counts == {"replace": 1, "create": 2}
    gone = [e.message for e in stack.of(Diagnostic) if "went with" in e.message]
    assert len(gone) == 2 and "replaced (deleted first): record removed" in gone[0]
    recorded = {r.id: r.outputs["metadata"]["uid"] for r in stack.state().resources}
    for name in ("settings", "flags"):
        live = stack.fake.find("ConfigMap", name, "apps")
        assert live is not None and recorded[f"apps/{name}"] == live["metadata"]["uid"]
    assert stack.up(app("b")).counts == {"same": 3}


def test_a_preview_of_a_namespace_replaced_delete_first_shows_the_deletes_up_runs_first(
    stack: Stack,
) -> None:
    """What the program dropped from a Namespace replaced delete-first is deleted before
    the Namespace's old object (`_delete_dropped_dependents`): the preview shows that
    delete too, where it forgot the record as one that went with the Namespace."""
    app = replaced_namespace
    stack.up(app("a", ("settings", "flags")))

    preview = stack.preview(app("b", ("settings",)))
    summary = stack.up(app("b", ("settings",)))

    assert summary.ok, summary.failures
    assert preview.counts == summary.counts == {"delete": 1, "replace": 1, "create": 1}


def test_dropping_a_namespace_the_program_still_puts_objects_in_is_refused(stack: Stack) -> None:
    """The API server deletes what is in a Namespace with it: an `up` that deleted the
    Namespace the program dropped, its ConfigMaps still declared in it, left them gone while
    the state, and every later preview, called them unchanged. Refused before any change,
    in the preview as in the up (a --target too); with the ConfigMap moved out, it goes."""

    def app(namespace: bool, where: str = "apps") -> Declare:
        def declare(p: Program) -> None:
            if namespace:
                k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
            k8s.core.v1.ConfigMap(
                "settings", metadata={"name": "settings", "namespace": where}, data={"k": "v"}
            )
            k8s.rbac.v1.ClusterRole("reader", metadata={"name": "reader"}, rules=[])

        return declare

    stack.up(app(True))
    stack.fake.calls.clear()
    refusal = (
        "kubernetes:core/v1:ConfigMap settings is in namespace apps, which `up` would delete: "
        f"the program no longer declares {urn(NS, 'apps')}, and the API server deletes what "
        "is in a namespace with it; declare the Namespace again, or move or remove what the "
        f"program puts in it (`stackwright state delete {urn(NS, 'apps')}` stops managing "
        "the Namespace and leaves it in the cluster); nothing was changed"
    )
    only_ns = frozenset({urn(NS, "apps")})
    for run in (
        lambda: stack.preview(app(False)),
        lambda: stack.up(app(False)),
        lambda: stack.up(app(False), targets=only_ns, target_dependents=True),
    ):
        with pytest.raises(UsageError) as refused:
            run()
        assert str(refused.value).endswith(refusal), str(refused.value)
    assert stack.fake.writes() == []
    assert stack.fake.find("Namespace", "apps") is not None

    def renamed(p: Program) -> None:  # another resource declares the Namespace: it stays
        app(False)(p)
        k8s.core.v1.Namespace("team", metadata={"name": "apps"})

    assert stack.preview(renamed).counts == {"create": 1, "delete": 1, "same": 2}
    stack.up(renamed)
    assert stack.fake.find("ConfigMap", "settings", "apps") is not None
    summary = stack.up(app(False, where="default"))
    assert summary.ok, summary.failures
    assert stack.fake.find("Namespace", "apps") is None
    assert stack.fake.find("ConfigMap", "settings", "default") is not None


def test_a_namespace_replaced_delete_first_is_refused_while_it_holds_a_protected_object(
    stack: Stack,
) -> None:
    """Deleting the Namespace's old object would delete a protected ConfigMap in it (the
    cluster deletes what a Namespace holds): its replacement fails, in the preview as in
    the up, and nothing is deleted."""

    def app(team: str) -> Declare:
        def declare(p: Program) -> None:
            replaced_namespace(team, ("flags",))(p)
            k8s.core.v1.ConfigMap(
                "settings",
                metadata={"name": "settings", "namespace": "apps"},
                data={"k": "v"},
                opts=ResourceOptions(protect=True),
            )

        return declare

    stack.up(app("a"))
    refusal = (
        "Namespace apps: replacing it deletes it first, and with it the object of "
        f"protected resource {urn(CM, 'settings')}: run `stackwright state unprotect"
    )
    preview = stack.preview(app("b"))
    summary = stack.up(app("b"))

    for outcome in (preview, summary):
        assert not outcome.ok
        assert any(refusal in failure for failure in outcome.failures), outcome.failures
    for name in ("settings", "flags"):
        assert stack.fake.find("ConfigMap", name, "apps") is not None
    assert stack.fake.find("Namespace", "apps") is not None


# --- delete and destroy ------------------------------------------------------------------------


def namespaced_app(p: Program) -> None:
    ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
    cfg = k8s.core.v1.ConfigMap(
        "settings", metadata={"name": "settings", "namespace": "apps"}, data={"mode": "fast"}
    )
    k8s.apps.v1.Deployment(
        "web",
        metadata={"name": "web", "namespace": ns.metadata["name"]},
        spec=web_spec(),
        opts=ResourceOptions(depends_on=[cfg]),
    )
    p.export("namespace", ns.metadata["name"])


def test_a_resource_dropped_from_the_program_is_deleted(stack: Stack) -> None:
    stack.up(both(settings(), web()))
    stack.fake.calls.clear()

    summary = stack.up(settings())

    assert summary.ok and summary.counts == {"same": 1, "delete": 1}
    assert applies_and_deletes(stack.fake) == [("delete", "web")]
    assert stack.fake.find("Deployment", "web") is None
    assert [r.urn for r in stack.state().resources] == [urn(CM, "settings")]


def test_destroy_deletes_dependents_first_and_empties_the_state(stack: Stack) -> None:
    stack.up(namespaced_app)
    assert stack.state().outputs == {"namespace": "apps"}
    assert ("dev", "apps") in stack.fake.applysets
    stack.fake.calls.clear()

    summary = stack.destroy()

    assert summary.ok and summary.counts == {"delete": 3}
    deletes = [c.name for c in stack.fake.calls_to("delete")]
    assert deletes.index("web") < deletes.index("settings") < deletes.index("apps")
    assert stack.fake.names("Namespace") == sorted(
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    )
    assert stack.fake.calls_to("remove_applyset") == [Call("remove_applyset", "ApplySet", "apps")]
    state = stack.state()
    assert state.resources == [] and state.pending == [] and state.outputs == {}


def test_an_up_that_leaves_a_namespace_removes_the_applyset_parent_there(stack: Stack) -> None:
    def app(guest: bool, mode: str = "a") -> Declare:
        def declare(p: Program) -> None:
            namespaced_app(p)
            if guest:  # in a namespace the stack uses but does not own
                k8s.core.v1.ConfigMap("guest", metadata={"name": "guest"}, data={"a": "1"})
            k8s.core.v1.ConfigMap(
                "extra", metadata={"name": "extra", "namespace": "apps"}, data={"mode": mode}
            )

        return declare

    stack.up(app(guest=True))
    assert stack.fake.applysets == {(STACK, "apps"), (STACK, "default")}
    stack.fake.calls.clear()

    # A run that fails does not know what it leaves: every parent stays.
    stack.fake.fail_apply["extra"] = "denied"
    assert not stack.up(app(guest=False, mode="b")).ok
    assert stack.fake.calls_to("remove_applyset") == []

    stack.fake.fail_apply.clear()
    summary = stack.up(app(guest=False, mode="b"))

    assert summary.ok and summary.counts["delete"] == 1
    assert stack.fake.calls_to("remove_applyset") == [
        Call("remove_applyset", "ApplySet", "default")
    ]
    assert stack.fake.applysets == {(STACK, "apps")}
    assert stack.fake.find("Namespace", "default") is not None


def test_which_applyset_parents_an_up_leaves_without_members() -> None:
    def member(name: str, namespace: str, provider: str = "") -> ResourceState:
        return ResourceState(
            urn=urn(CM, name),
            type=CM,
            id=f"{namespace}/{name}" if namespace else name,
            inputs={"apiVersion": "v1", "kind": "ConfigMap"},
            provider=provider,
        )

    before = [
        member("a", "apps"),
        member("b", "jobs"),
        member("c", "apps", provider="urn:p"),
        member("d", ""),  # cluster-scoped: no ApplySet
        ResourceState(urn=urn("sw:Component", "e"), type="sw:Component", custom=False),
    ]
    after = {("", "apps"), ("urn:p", "apps")}

    assert left_applysets("dev", (), before, after) == [("dev", "", "jobs")]
    assert left_applysets("dev", ("old", "older"), before, after) == [
        ("dev", "", "jobs"),
        ("old", "", "apps"),
        ("old", "", "jobs"),
        ("old", "urn:p", "apps"),
        ("older", "", "apps"),
        ("older", "", "jobs"),
        ("older", "urn:p", "apps"),
    ]
    assert left_applysets("dev", (), [], set()) == []


# --- failures -----------------------------------------------------------------------------


def app_with_dependent(p: Program) -> None:
    cfg = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": "a"})
    k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": "b"})
    k8s.apps.v1.Deployment(
        "web",
        metadata={"name": "web", "annotations": {"config": cfg.metadata["name"]}},
        spec=web_spec(),
    )


def test_a_failed_apply_stops_its_dependents_and_independent_work_completes(
    stack: Stack,
) -> None:
    stack.fake.fail_apply["settings"] = 'admission webhook "deny" denied the request'

    summary = stack.up(app_with_dependent)

    assert not summary.ok
    assert summary.counts == {"create": 1, "skipped": 1}
    assert summary.failures == [f'{CM} settings: admission webhook "deny" denied the request']
    assert summary.not_done == [f"{DEPLOY} web: {CM} settings failed or was not done"]
    (skipped,) = stack.of(StepSkipped)
    assert skipped.step.urn == urn(DEPLOY, "web")
    assert (skipped.step.op, skipped.dependency) == (Op.CREATE, urn(CM, "settings"))
    failed = [e for e in stack.of(StepDone) if not e.ok]
    assert [e.step.urn for e in failed] == [urn(CM, "settings")]
    assert [c.name for c in stack.fake.calls_to("apply")] == ["settings", "other"]
    assert stack.fake.names("ConfigMap") == ["default/other"]
    state = stack.state()
    assert [r.urn for r in state.resources] == [urn(CM, "other")]
    assert state.pending == []
    assert stack.backend.history(PROJECT, STACK, limit=1)[0].result == "failed"

    stack.fake.fail_apply.clear()
    retry = stack.up(app_with_dependent)
    assert retry.ok and retry.counts == {"create": 2, "same": 1}


def test_a_write_whose_reply_is_lost_stays_pending_and_the_next_run_settles_it(
    stack: Stack,
) -> None:
    """A create or delete whose answer never came (a reset connection, a timeout, Ctrl-C)
    may have landed: unlike the server's refusal above, its step stays pending, and the
    next run reads the cluster, so the object is neither forgotten nor left marked."""
    stack.fake.lose_reply["settings"] = ConnectionResetError("connection reset by peer")

    summary = stack.up(app_with_dependent)

    assert not summary.ok
    assert stack.fake.names("ConfigMap") == ["default/other", "default/settings"]
    state = stack.state()
    assert [r.urn for r in state.resources] == [urn(CM, "other")]
    assert [(p.op, p.resource.urn) for p in state.pending] == [(Op.CREATE, urn(CM, "settings"))]

    # The program no longer declares it: the next run records it, then deletes it.
    stack.fake.lose_reply.clear()
    later = stack.up(
        lambda p: k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": "b"})
    )
    assert later.ok, later.failures
    assert later.counts == {"same": 1, "delete": 1}
    assert stack.fake.names("ConfigMap") == ["default/other"]
    assert stack.state().pending == []

    # A delete whose reply is lost: pending until a run finds the object gone.
    stack.fake.lose_reply["other"] = TimeoutError("read timed out")
    assert not stack.destroy().ok
    assert stack.fake.names("ConfigMap") == []
    assert [p.op for p in stack.state().pending] == [Op.DELETE]
    stack.fake.lose_reply.clear()
    assert stack.destroy().ok
    assert stack.state().resources == [] and stack.state().pending == []


def test_an_update_whose_reply_is_lost_is_applied_again_when_the_program_goes_back(
    stack: Stack,
) -> None:
    """An update left pending may have landed: the state keeps the inputs recorded before
    it, so a program back at those inputs plans no change, and the object kept a field only
    the lost update set (no drift: the recorded inputs do not have it). Settled, it is
    applied again (and waited for), whatever the program."""

    def program(data: dict[str, str]) -> Declare:
        return lambda p: k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data=data)

    assert stack.up(program({"mode": "fast"})).ok
    stack.fake.lose_reply["settings"] = TimeoutError("read timed out")
    assert not stack.up(program({"mode": "fast", "extra": "1"})).ok
    assert [p.op for p in stack.state().pending] == [Op.UPDATE]
    stack.fake.lose_reply.clear()

    back = stack.up(program({"mode": "fast"}))

    assert back.ok and back.counts == {"update": 1}
    found = stack.fake.find("ConfigMap", "settings", "default")
    assert found is not None and found["data"] == {"mode": "fast"}
    assert stack.state().pending == []
    assert stack.up(program({"mode": "fast"})).counts == {"same": 1}


#: How a same step whose dependencies or options changed says so.
ONLY_RECORDED = "no change to its object; recorded in the state only: "


def test_options_alone_are_recorded_without_a_write_and_a_note_says_which(stack: Stack) -> None:
    """Protect and depends_on live only in the state: a change of them alone is a same
    step (as in Pulumi) that writes no object; a note says what the state records."""

    def program(protect: bool, after: bool) -> Declare:
        def declare(p: Program) -> None:
            first = k8s.core.v1.ConfigMap("first", metadata={"name": "first"}, data={"a": "1"})
            k8s.core.v1.ConfigMap(
                "second",
                metadata={"name": "second"},
                opts=ResourceOptions(protect=protect, depends_on=[first] if after else []),
            )

        return declare

    assert stack.up(program(False, False)).ok
    stack.fake.calls.clear()
    assert stack.up(program(True, True)).counts == {"same": 2}
    assert stack.fake.writes() == []
    notes = [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "second")]
    assert notes == [ONLY_RECORDED + "protect False → True; now depends on first"]
    recorded = stack.recorded(urn(CM, "second"))
    assert recorded.protect and recorded.dependencies == (urn(CM, "first"),)
    stack.up(program(True, False))
    notes = [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "second")]
    assert notes == [ONLY_RECORDED + "no longer depends on first"]
    assert stack.recorded(urn(CM, "second")).dependencies == ()
    version = stack.state().version
    assert stack.up(program(True, False)).counts == {"same": 2}
    assert not stack.of(Diagnostic)
    assert stack.state().version == version, "a no-op up journaled something"
    assert stack.fake.writes() == []


def test_option_notes_name_options_as_python_spells_them(stack: Stack) -> None:
    """A Python program's notes keep ResourceOptions' names (a YAML program's say
    retainOnDelete and customTimeouts.delete: test_yaml_program)."""

    def program(opts: ResourceOptions) -> Declare:
        def declare(p: Program) -> None:
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return declare

    assert stack.up(program(ResourceOptions())).ok
    later = ResourceOptions(retain_on_delete=True, custom_timeouts=CustomTimeouts(delete="5m"))
    assert stack.up(program(later)).counts == {"same": 1}
    notes = [e.message for e in stack.of(Diagnostic) if e.urn == urn(CM, "cm")]
    assert notes == [
        ONLY_RECORDED + "retain_on_delete False → True; custom_timeouts.delete (default) → 300s"
    ]


def test_a_new_dependency_alone_is_a_same_step_recorded_for_destroy(stack: Stack) -> None:
    """Inputs as recorded, dependencies new (an Output edge, a depends_on): the preview
    and the up show a same step and send nothing; the up records the dependencies, so
    a destroy deletes the dependent first."""

    def program(linked: bool) -> Declare:
        def declare(p: Program) -> None:
            first = k8s.core.v1.ConfigMap("first", metadata={"name": "first"}, data={"a": "1"})
            # The same value either way: read from `first` (an edge) or written out.
            value = first.data.apply(lambda d: d["a"]) if linked else "1"
            k8s.core.v1.ConfigMap("second", metadata={"name": "second"}, data={"copy": value})
            k8s.core.v1.ConfigMap(
                "third",
                metadata={"name": "third"},
                data={"b": "2"},
                opts=ResourceOptions(depends_on=[first] if linked else []),
            )

        return declare

    assert stack.up(program(False)).ok
    before = stack.state()
    stack.fake.calls.clear()

    preview = stack.preview(program(True))
    assert preview.ok and preview.counts == {"same": 3}
    assert sorted(stack.started()) == [("same", "first"), ("same", "second"), ("same", "third")]
    assert all(e.step.changes == () for e in stack.of(StepStarted))
    notes = {e.urn: e.message for e in stack.of(Diagnostic)}
    assert notes == {
        urn(CM, "second"): ONLY_RECORDED + "now depends on first",
        urn(CM, "third"): ONLY_RECORDED + "now depends on first",
    }
    assert stack.fake.writes() == [] and stack.fake.calls_to("preview") == []
    assert stack.state().version == before.version

    summary = stack.up(program(True))
    assert summary.ok and summary.counts == {"same": 3}
    assert stack.fake.writes() == []
    assert stack.fake.calls_to("preview", "await_ready") == []
    for name in ("second", "third"):
        recorded = stack.recorded(urn(CM, name))
        assert recorded.dependencies == (urn(CM, "first"),)
        assert recorded.outputs == before.resource(urn(CM, name)).outputs  # type: ignore[union-attr]
    assert stack.state().pending == []

    # The recorded edges order the destroy: what cannot delete its dependents stays.
    stack.fake.fail_delete["second"] = "the API server refused"
    destroyed = stack.destroy()
    assert not destroyed.ok
    assert [c.name for c in stack.fake.calls_to("delete")].count("first") == 0
    assert stack.fake.names("ConfigMap") == ["default/first", "default/second"]
    skipped = [(e.step.urn, e.reason) for e in stack.of(StepSkipped)]
    assert skipped == [(urn(CM, "first"), "a resource that depends on it could not be deleted")]


def test_a_failure_that_names_its_object_names_it_once(stack: Stack) -> None:
    stack.fake.fail_ready["web"] = "web: 0/3 ready — pod web-x: ImagePullBackOff"

    summary = stack.up(web())

    assert summary.failures == [f"{DEPLOY} web: 0/3 ready — pod web-x: ImagePullBackOff"]


def test_a_readiness_failure_keeps_the_object_in_the_state(stack: Stack) -> None:
    stack.fake.fail_ready["web"] = "0/3 ready — pod web-x: ImagePullBackOff"

    summary = stack.up(both(settings(), web(named=False)))

    assert not summary.ok
    assert summary.failures == [f"{DEPLOY} web: 0/3 ready — pod web-x: ImagePullBackOff"]
    (name,) = [n.split("/")[1] for n in stack.fake.names("Deployment")]
    # The object exists in the cluster, so the state knows it: nothing is orphaned.
    recorded = stack.recorded(urn(DEPLOY, "web"))
    assert recorded.id == f"default/{name}"
    assert (
        recorded.outputs["metadata"]["uid"]
        == stack.fake.find("Deployment", name)["metadata"]["uid"]
    )  # type: ignore[index]
    assert stack.state().pending == []
    progress = [e.message for e in stack.of(StepProgress) if e.urn == urn(DEPLOY, "web")]
    assert progress == ["0/3 ready — pod web-x: ImagePullBackOff"]

    # A destroy finds it through the state.
    stack.fake.fail_ready.clear()
    assert stack.destroy().ok
    assert stack.fake.names("Deployment") == []


def test_an_object_that_never_became_ready_is_awaited_again_on_the_next_up(
    stack: Stack,
) -> None:
    stack.fake.fail_ready["web"] = FakeNotReady("0/2 ready")
    assert not stack.up(web()).ok

    again = stack.up(web())

    assert not again.ok, "the deployment is still not ready, yet the up succeeded"


# --- resource options ----------------------------------------------------------------------------


def test_protect_blocks_the_delete_and_says_how_to_unprotect(stack: Stack) -> None:
    stack.up(both(settings(protect=True), web()))
    stack.fake.calls.clear()

    planned = stack.preview(web(replicas=5))
    assert not planned.ok and planned.exit_code == 2  # bad input, as `up` refuses it
    (failure,) = planned.failures
    assert "because it is protected" in failure
    assert f"stackwright state unprotect {urn(CM, 'settings')}" in failure
    assert "delete" not in planned.counts  # failed, not a delete (as a refused replacement)
    # `up` (with --yes too) refuses before any change, in the preview's words, where it
    # changed the rest first and failed on the protected delete last; Pulumi's preview,
    # which its `up --yes` runs first, stops it so.
    with pytest.raises(UsageError) as refused:
        stack.up(web(replicas=5))
    assert str(refused.value) == f"up refused: {failure.partition(': ')[2]}; nothing was changed"
    assert stack.fake.writes() == []
    assert stack.fake.find("ConfigMap", "settings") is not None
    assert stack.recorded(urn(CM, "settings")).protect

    # So does a destroy: the unprotected resources stay too, as nothing was deleted.
    with pytest.raises(UsageError, match="--exclude-protected` deletes everything else"):
        stack.destroy()


def test_a_change_that_replaces_a_protected_resource_is_refused_as_bad_input(
    stack: Stack,
) -> None:
    """Its replacement would delete its object: refused as its delete is, exit code 2 (bad
    input, nothing changed), in the preview and in an `up` that changed nothing."""
    protected = {"protect": True, "replace_on_changes": ["data"]}
    stack.up(settings(**protected))
    stack.fake.calls.clear()

    planned = stack.preview(settings("slow", **protected))
    assert not planned.ok and planned.exit_code == 2
    (failure,) = planned.failures
    assert "cannot be replaced because it is protected" in failure
    # `up` refuses the whole run before any change, in the preview's words, as it refuses
    # a protected delete: failing the step alone let the rest of the run go on.
    with pytest.raises(UsageError) as refused:
        stack.up(both(settings("slow", **protected), web(replicas=5)))
    assert str(refused.value) == f"up refused: {failure}; nothing was changed"
    assert stack.fake.writes() == []
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "fast"}
    assert stack.fake.calls_to("delete") == []


def test_destroy_excluding_the_protected_keeps_them_and_what_they_need(stack: Stack) -> None:
    """`destroy --exclude-protected` (Pulumi's): the protected resources stay, and so does
    what they need (their namespace); everything else goes, and the destroy succeeds."""

    def declare(p: Program) -> None:
        ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
        k8s.core.v1.ConfigMap(
            "keep",
            metadata={"name": "keep", "namespace": ns.metadata["name"]},
            opts=ResourceOptions(protect=True),
        )
        k8s.core.v1.ConfigMap("beside", metadata={"name": "beside", "namespace": "apps"})
        k8s.core.v1.ConfigMap("elsewhere", metadata={"name": "elsewhere"})

    stack.up(declare)
    stack.fake.calls.clear()
    assert not stack.destroy(dry_run=True).ok  # without it, as without the flag in Pulumi
    planned = stack.destroy(dry_run=True, exclude_protected=True)
    assert planned.ok and planned.counts == {"delete": 2}
    destroyed = stack.destroy(exclude_protected=True)
    assert destroyed.ok and destroyed.counts == {"delete": 2}
    assert sorted(c.name for c in stack.fake.calls_to("delete")) == ["beside", "elsewhere"]
    assert {r.urn for r in stack.state().resources} == {urn(NS, "apps"), urn(CM, "keep")}


def test_retain_on_delete_forgets_the_object_without_deleting_it(stack: Stack) -> None:
    stack.up(both(settings(retain_on_delete=True), web()))
    stack.fake.calls.clear()

    summary = stack.up(web())

    assert summary.ok and summary.counts == {"delete": 1, "same": 1}
    assert stack.fake.calls_to("delete") == []
    left = stack.fake.find("ConfigMap", "settings")
    assert left is not None and left["data"] == {"mode": "fast"}
    # No longer marked as the stack's: no ApplySet prune or import check counts it so.
    assert "stackwright.io/urn" not in left["metadata"].get("annotations", {})
    assert "applyset.kubernetes.io/part-of" not in left["metadata"].get("labels", {})
    assert [r.urn for r in stack.state().resources] == [urn(DEPLOY, "web")]


def test_ignore_changes_keeps_the_recorded_value(stack: Stack) -> None:
    def declare(mode: str, size: str) -> Declare:
        def program(p: Program) -> None:
            k8s.core.v1.ConfigMap(
                "settings",
                metadata={"name": "settings"},
                data={"mode": mode, "size": size},
                opts=ResourceOptions(ignore_changes=["data.mode"]),
            )

        return program

    stack.up(declare("fast", "s"))
    stack.fake.calls.clear()

    unchanged = stack.up(declare("slow", "s"))
    assert unchanged.counts == {"same": 1}
    assert stack.fake.writes() == []

    changed = stack.up(declare("slow", "m"))
    assert changed.counts == {"update": 1}
    assert stack.changes(urn(CM, "settings")) == [FieldChange("data.size", "s", "m")]
    assert stack.fake.applied[-1].body["data"] == {"mode": "fast", "size": "m"}
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "fast", "size": "m"}


def test_an_ignored_name_keeps_the_object_it_names(stack: Stack) -> None:
    """`ignore_changes=["metadata.name"]` keeps the recorded name, so the object too: the
    program's new name changes nothing (it used to be a replacement that applied to the old
    object, under the old name, recorded the new name's id, then deleted the old object:
    nothing was left in the cluster, and every later `up` said `same`)."""

    def named(name: str) -> Declare:
        def program(p: Program) -> None:
            ignored = ResourceOptions(ignore_changes=["metadata.name"])
            k8s.core.v1.ConfigMap(
                "settings", metadata={"name": name}, data={"a": "1"}, opts=ignored
            )

        return program

    assert stack.up(named("settings")).ok
    stack.fake.calls.clear()

    assert stack.preview(named("config")).counts == {"same": 1}
    assert stack.up(named("config")).counts == {"same": 1}
    assert stack.fake.writes() == []
    assert stack.fake.names("ConfigMap") == ["default/settings"]
    assert stack.recorded(urn(CM, "settings")).id == "default/settings"


def test_an_alias_renames_without_replacing(stack: Stack) -> None:
    def named(logical: str, aliases: tuple[str, ...] = ()) -> Declare:
        def program(p: Program) -> None:
            k8s.core.v1.ConfigMap(
                logical, data={"mode": "fast"}, opts=ResourceOptions(aliases=aliases)
            )

        return program

    stack.up(named("settings"))
    (name,) = stack.fake.names("ConfigMap")
    stack.fake.calls.clear()

    summary = stack.up(named("config", (urn(CM, "settings"),)))

    # No replacement: the same object, applied once more to carry its new URN (the old
    # mark would let another stack claim it).
    assert summary.ok and summary.counts == {"update": 1}
    assert [c.method for c in stack.fake.calls_to("apply", "delete")] == ["apply"]
    assert stack.fake.names("ConfigMap") == [name]
    assert [r.urn for r in stack.state().resources] == [urn(CM, "config")]
    assert stack.recorded(urn(CM, "config")).id == name
    annotations = stack.recorded(urn(CM, "config")).outputs["metadata"]["annotations"]
    assert annotations["stackwright.io/urn"] == urn(CM, "config")
    renamed = [d.message for d in stack.of(Diagnostic)]
    assert renamed == [
        f"renamed from {urn(CM, 'settings')} (alias): no replacement",
        "its object carries an older URN or stack: marking it",
    ]
    assert stack.up(named("config", (urn(CM, "settings"),))).counts == {"same": 1}


def test_targets_limit_the_run_to_the_targets_and_what_they_depend_on(stack: Stack) -> None:
    def declare(mode: str) -> Declare:
        def program(p: Program) -> None:
            cfg = k8s.core.v1.ConfigMap(
                "settings", metadata={"name": "settings"}, data={"mode": mode}
            )
            k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": mode})
            k8s.core.v1.ConfigMap(
                "derived", metadata={"name": "derived"}, data={"from": cfg.data["mode"]}
            )

        return program

    summary = stack.up(declare("a"), targets=frozenset({urn(CM, "derived")}))

    assert summary.ok and summary.counts == {"create": 2}
    assert [c.name for c in stack.fake.calls_to("apply")] == ["settings", "derived"]
    assert stack.fake.find("ConfigMap", "other") is None
    assert {r.urn for r in stack.state().resources} == {urn(CM, "settings"), urn(CM, "derived")}

    stack.up(declare("a"))
    stack.fake.calls.clear()
    stack.up(declare("b"), targets=frozenset({urn(CM, "other")}))
    assert [c.name for c in stack.fake.calls_to("apply")] == ["other"]
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "a"}

    with pytest.raises(UsageError, match=r"--target .*names no resource of stack dev"):
        stack.up(declare("b"), targets=frozenset({urn(CM, "nothing")}))
    # A name as kubectl takes it is no URN: the pattern that matches it by name.
    with pytest.raises(UsageError) as refused:
        stack.up(declare("b"), targets=frozenset({"other"}))
    assert str(refused.value) == (
        "--target other names no resource of stack dev: `stackwright stack --show-urns` lists "
        "the URNs in the state, or match it by name: '**::other'"
    )
    assert stack.up(declare("b"), targets=frozenset({"**::other"})).counts == {"same": 1}
    with pytest.raises(UsageError, match=r"^--target is empty: give the URN of a resource"):
        stack.up(declare("b"), targets=frozenset({""}))
    # `--target-replace web` (targets and replaces it) was told of a `--target web`.
    with pytest.raises(UsageError, match=r"^--target-replace web names no resource"):
        stack.up(declare("b"), targets=frozenset({"web"}), replace=frozenset({"web"}))
    # Empty (a CI variable unset): the flag given is named, and said to be empty.
    with pytest.raises(UsageError, match=r"^--target-replace is empty: give the URN"):
        stack.up(declare("b"), targets=frozenset({""}), replace=frozenset({""}))
    with pytest.raises(UsageError, match=r"^--replace is empty: give the URN"):
        stack.up(declare("b"), replace=frozenset({""}))


def test_a_malformed_stackwright_annotation_is_refused_before_any_change(stack: Stack) -> None:
    """`stackwright.io/timeout-seconds: "abc"` or a `wait-for` it cannot read is bad input:
    one line naming the resource and its program line, nothing applied (found at the
    object's apply, it failed that step while the rest of the run went on). A value only
    known once applied is checked then."""

    def declare(value: Any) -> Declare:
        def program(p: Program) -> None:
            k8s.core.v1.ConfigMap("fine", metadata={"name": "fine"})
            k8s.core.v1.ConfigMap(
                "slow",
                metadata={"name": "slow", "annotations": {"stackwright.io/timeout-seconds": value}},
            )

        return program

    for bad, why in (("abc", "must be a number of seconds, got 'abc'"), ("0", "greater than 0")):
        for run in (stack.preview, stack.up):
            with pytest.raises(
                UsageError, match=rf"test_engine_lifecycle\.py:\d+: .*ConfigMap slow: .*{why}"
            ):
                run(declare(bad))
    with pytest.raises(UsageError, match=r"ConfigMap slow: annotation stackwright\.io/wait-for"):
        stack.up(
            lambda p: k8s.core.v1.ConfigMap(
                "slow", metadata={"annotations": {"stackwright.io/wait-for": "soon"}}
            )
        )
    assert stack.fake.calls == [] and not stack.state().resources
    assert stack.up(declare("30")).ok
    assert stack.up(declare(Output.from_input("30"))).ok


def test_parallel_bounds_the_writes_in_flight(stack: Stack) -> None:
    def many(p: Program) -> None:
        for i in range(6):
            k8s.core.v1.ConfigMap(f"c{i}", metadata={"name": f"c{i}"}, data={"i": str(i)})

    stack.fake.latency = 0.01
    assert stack.up(many, parallel=1).ok
    assert stack.fake.max_in_flight == 1

    stack.fake.max_in_flight = 0
    assert stack.destroy(parallel=4).ok
    assert 1 < stack.fake.max_in_flight <= 4


# --- outputs ----------------------------------------------------------------------------------


def test_outputs_come_from_live_objects_and_secrets_are_masked(stack: Stack) -> None:
    def declare(p: Program) -> None:
        svc = k8s.core.v1.Service("web", metadata={"name": "web"}, spec={"ports": [{"port": 80}]})
        creds = k8s.core.v1.Secret(
            "creds",
            metadata={"name": "creds"},
            string_data={"password": Output.secret("hunter2"), "user": "admin"},
        )
        p.export("ip", svc.spec["clusterIP"])
        p.export("creds", creds.metadata["name"])
        p.export("password", Output.secret("hunter2"))

    summary = stack.up(declare)

    live_ip = stack.fake.find("Service", "web")["spec"]["clusterIP"]  # type: ignore[index]
    assert summary.outputs == {"ip": live_ip, "creds": "creds", "password": "[secret]"}
    assert stack.state().outputs == summary.outputs
    assert "hunter2" not in repr(summary)
    secret = stack.recorded(urn(SECRET, "creds"))
    # The program marked one value; a Secret's data and stringData are secret whatever the
    # program says (the live object returns stringData as data).
    assert secret.secret_paths == ("stringData.password", "data", "stringData")
    assert secret.inputs["stringData"]["password"] == "hunter2"  # the store encrypts, not masks
    (step,) = [e.step for e in stack.of(StepStarted) if e.step.urn == urn(SECRET, "creds")]
    # A create's changes are top-level fields: the one holding a secret is masked whole.
    shown = {c.path: c.new for c in shown_changes(step)}
    assert shown["stringData"] == "[secret]"
    assert "hunter2" not in repr(shown)


def test_a_secrets_values_are_masked_even_when_the_program_did_not_mark_them(stack: Stack) -> None:
    def declare(p: Program) -> None:
        k8s.core.v1.Secret("plain", metadata={"name": "plain"}, string_data={"token": "s3cr3t"})

    stack.up(declare)

    (step,) = [e.step for e in stack.of(StepStarted) if e.step.urn == urn(SECRET, "plain")]
    assert {c.path: c.new for c in shown_changes(step)}["stringData"] == "[secret]"

    def changed(p: Program) -> None:
        k8s.core.v1.Secret("plain", metadata={"name": "plain"}, string_data={"token": "n3w"})

    stack.up(changed)
    (update,) = [e.step for e in stack.of(StepStarted) if e.step.op is Op.UPDATE]
    assert [(c.path, c.old, c.new) for c in shown_changes(update)] == [
        ("stringData.token", "[secret]", "[secret]")
    ]


def test_what_is_read_from_a_secrets_live_data_is_secret(stack: Stack) -> None:
    def declare(p: Program) -> None:
        creds = k8s.core.v1.Secret("creds", metadata={"name": "creds"}, data={"token": "czNjcjN0"})
        k8s.core.v1.ConfigMap(
            "copy", metadata={"name": "copy"}, data={"token": creds.data["token"]}
        )
        p.export("token", creds.data.apply(lambda data: data["token"]))

    summary = stack.up(declare)

    # Read from the Secret's live object, the value is secret in the ConfigMap and the output.
    assert stack.recorded(urn(CM, "copy")).secret_paths == ("data.token",)
    assert summary.outputs == {"token": "[secret]"}
    (step,) = [e.step for e in stack.of(StepStarted) if e.step.urn == urn(CM, "copy")]
    assert "czNjcjN0" not in repr(shown_changes(step))


# --- several clusters ---------------------------------------------------------------------------


def test_a_provider_resource_sends_its_resources_to_another_cluster(tmp_path: Path) -> None:
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home, east = FakeCluster(), FakeCluster(namespace="east-apps", name="east")
    home.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "east-apps"}})
    east.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "east-apps"}})
    stack = Stack(backend, home, factory=home.factory({"east": east}))

    def declare(p: Program) -> None:
        provider = k8s.Provider("east", context="east", namespace="east-apps")
        k8s.core.v1.ConfigMap("here", metadata={"name": "here"}, data={"a": "1"})
        k8s.core.v1.ConfigMap(
            "there", metadata={"name": "there"}, data={"a": "1"},
            opts=ResourceOptions(provider=provider),
        )  # fmt: skip

    try:
        assert stack.up(declare).ok
        assert home.names("ConfigMap") == ["default/here"]
        assert east.names("ConfigMap") == ["east-apps/there"]
        assert stack.recorded(urn(CM, "there")).id == "east-apps/there"

        assert stack.destroy().ok
        assert home.names("ConfigMap") == [] and east.names("ConfigMap") == []
        assert [c.name for c in east.calls_to("delete")] == ["there"]
    finally:
        backend.close()


def test_a_resource_moved_to_another_provider_is_replaced_and_leaves_the_old_cluster(
    tmp_path: Path,
) -> None:
    """As in Pulumi, another provider is a replacement: the object is deleted where it was
    (first: the two providers may reach one cluster) and created through the new one."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home, east = FakeCluster(), FakeCluster(name="east")
    stack = Stack(backend, home, factory=home.factory({"east": east}))

    def declare(moved: bool) -> Declare:
        def program(p: Program) -> None:
            opts = ResourceOptions(provider=k8s.Provider("east", context="east")) if moved else None
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return program

    try:
        assert stack.up(declare(False)).ok
        assert stack.preview(declare(True)).ok
        assert ("replace", "cm") in stack.started()
        assert home.names("ConfigMap") == ["default/cm"] and east.names("ConfigMap") == []

        assert stack.up(declare(True)).ok
        assert home.names("ConfigMap") == [] and east.names("ConfigMap") == ["default/cm"]
        assert stack.recorded(urn(CM, "cm")).provider.endswith("::east")

        assert stack.destroy().ok
        assert east.names("ConfigMap") == []
    finally:
        backend.close()


@contextlib.contextmanager
def east_and_west(tmp_path: Path) -> Iterator[tuple[Stack, FakeCluster, FakeCluster]]:
    """A stack whose providers reach cluster `east` or `west` by their context."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home, east, west = FakeCluster(), FakeCluster(name="east"), FakeCluster(name="west")
    try:
        yield Stack(backend, home, factory=home.factory({"east": east, "west": west})), east, west
    finally:
        backend.close()


def test_a_destroy_with_one_cluster_down_leaves_nothing_pending_to_stop_the_other(
    tmp_path: Path,
) -> None:
    """A delete that never reached its cluster (refused connections) changed nothing: its
    step is not left pending, whose settling would stop every later run — on the cluster
    that answers too — until that one is back. Its record stays, as Pulumi keeps it."""

    def declare(mode: str) -> Declare:
        def program(p: Program) -> None:
            east = k8s.Provider("east", context="east")
            k8s.core.v1.ConfigMap("here", metadata={"name": "here"}, data={"a": mode})
            k8s.core.v1.ConfigMap(
                "there", metadata={"name": "there"}, data={"a": "1"},
                opts=ResourceOptions(provider=east),
            )  # fmt: skip

        return program

    with east_and_west(tmp_path) as (stack, east, _):
        assert stack.up(declare("1")).ok
        east.unreachable = REFUSED

        summary = stack.destroy()

        assert not summary.ok
        state = stack.state()
        assert state.pending == []
        assert sorted(r.urn.rsplit("::", 1)[1] for r in state.resources) == ["east", "there"]
        targeted = stack.up(declare("2"), targets=frozenset({urn(CM, "here")}))
        assert targeted.ok, targeted.failures
        assert stack.fake.find("ConfigMap", "here") is not None


def test_a_destroy_preview_with_one_cluster_down_fails_its_steps_not_the_run(
    tmp_path: Path,
) -> None:
    """A namespace of one name in each cluster: the preview reads whether the other
    resource took the object over, and east does not answer. That delete's step fails, as
    `destroy --yes` fails it; the preview goes on to list the rest and its summary."""

    def declare(p: Program) -> None:
        for where in ("east", "west"):
            region = k8s.Provider(where, context=where)
            k8s.core.v1.Namespace(
                f"ns-{where}", metadata={"name": "apps"}, opts=ResourceOptions(provider=region)
            )

    with east_and_west(tmp_path) as (stack, east, _):
        assert stack.up(declare).ok
        east.unreachable = REFUSED

        planned = stack.destroy(dry_run=True)

        assert not planned.ok
        (failure,) = planned.failures
        assert failure.startswith("kubernetes:core/v1:Namespace ns-east: ") and REFUSED in failure
        assert ("delete", "ns-west") in stack.started()
        assert planned.counts["delete"] == 3  # ns-west and both providers


def test_a_preview_lists_deletes_in_the_order_up_runs_them(tmp_path: Path) -> None:
    """Dependents first, as Pulumi's preview lists them: a provider after what it reaches, a
    namespace after what is in it — whatever order the state recorded them in."""

    def declare(p: Program) -> None:
        east = k8s.Provider("east", context="east")
        ns = k8s.core.v1.Namespace(
            "ns", metadata={"name": "team"}, opts=ResourceOptions(provider=east)
        )
        k8s.core.v1.ConfigMap(
            "cm", metadata={"name": "cm", "namespace": "team"}, data={"a": "1"},
            opts=ResourceOptions(provider=east, depends_on=[ns]),
        )  # fmt: skip

    with east_and_west(tmp_path) as (stack, _, _):
        assert stack.up(declare).ok
        assert stack.destroy(dry_run=True).ok
        assert stack.started() == [("delete", "cm"), ("delete", "ns"), ("delete", "east")]
        assert stack.preview(lambda p: None).ok
        assert stack.started() == [("delete", "cm"), ("delete", "ns"), ("delete", "east")]
        assert stack.destroy().ok
        assert stack.started() == [("delete", "cm"), ("delete", "ns"), ("delete", "east")]


def test_a_provider_switched_to_another_context_replaces_its_objects_there(
    tmp_path: Path,
) -> None:
    """Pulumi replaces a provider's resources when it names another cluster: each object is
    deleted from the cluster it was in (through the former settings) and created anew."""

    def declare(context: str) -> Declare:
        def program(p: Program) -> None:
            opts = ResourceOptions(provider=k8s.Provider("region", context=context))
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return program

    with east_and_west(tmp_path) as (stack, east, west):
        assert stack.up(declare("east")).ok
        assert stack.up(declare("west")).ok
        assert ("replace", "cm") in stack.started()
        assert east.names("ConfigMap") == [] and west.names("ConfigMap") == ["default/cm"]

        assert stack.up(declare("west")).ok
        assert ("same", "cm") in stack.started()


@pytest.mark.parametrize("known", [True, False], ids=["plain", "output"])
def test_a_provider_switched_away_from_a_cluster_that_is_down_says_so(
    tmp_path: Path, known: bool
) -> None:
    """The move deletes the objects through the former context, whose cluster does not
    answer: refused before any change to them, saying that cluster cannot be reached (not
    that the provider was switched by mistake) — also for a context known only once
    another resource is applied, whose provider's step is refused."""

    def declare(context: str) -> Declare:
        def program(p: Program) -> None:
            where = k8s.core.v1.ConfigMap("where", metadata={"name": "where"}, data={"c": context})
            chosen = context if known else where.data.apply(lambda d: d["c"])
            opts = ResourceOptions(provider=k8s.Provider("region", context=chosen))
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return program

    with east_and_west(tmp_path) as (stack, east, west):
        assert stack.up(declare("east")).ok
        region = stack.recorded(urn(PROVIDER, "region"))
        east.unreachable = REFUSED

        if known:
            with pytest.raises(UsageError) as refused:
                stack.up(declare("west"))
            message = str(refused.value)
        else:
            moved = stack.up(declare("west"))
            assert not moved.ok
            (message,) = moved.failures
        assert "now reach the cluster at west" in message
        assert f"which its former settings cannot reach: {REFUSED};" in message
        if known:  # what the program changed is known: it is named
            assert "give provider region back its context 'east' in the program" in message
        assert stack.recorded(urn(PROVIDER, "region")) == region
        assert west.names("ConfigMap") == []


def test_a_protected_resource_is_not_moved_to_the_cluster_its_provider_names_now(
    tmp_path: Path,
) -> None:
    """Its move is a replacement (deleted from the former cluster): the whole `up` is
    refused as protected before any change, its object left where it is and its provider's
    record as it was (the protection was checked before the move made the step a
    replacement, and the object was deleted from east)."""

    def declare(context: str) -> Declare:
        def program(p: Program) -> None:
            region = k8s.Provider("region", context=context)
            opts = ResourceOptions(provider=region, protect=True)
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return program

    with east_and_west(tmp_path) as (stack, east, west):
        assert stack.up(declare("east")).ok
        before = stack.state().resources
        with pytest.raises(UsageError) as refused:
            stack.up(declare("west"))
        message = str(refused.value)
        assert message.startswith("up refused: ") and "::cm cannot be replaced because" in message
        assert "(its provider names another cluster)" in message
        assert message.endswith("; nothing was changed")
        assert east.names("ConfigMap") == ["default/cm"] and west.names("ConfigMap") == []
        assert stack.state().resources == before


def test_a_provider_moved_by_an_output_refuses_its_step_while_it_holds_a_protected_object(
    tmp_path: Path,
) -> None:
    """Settings known only during the run (an Output), which the check before it cannot
    read: the provider's step is refused, so its record, and what goes through it, stay on
    the cluster the protected object is on (the object was deleted from east)."""

    def declare(context: str) -> Declare:
        def program(p: Program) -> None:
            where = k8s.core.v1.ConfigMap("where", metadata={"name": "where"}, data={"c": context})
            region = k8s.Provider("region", context=where.data.apply(lambda d: d["c"]))
            opts = ResourceOptions(provider=region, protect=True)
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return program

    with east_and_west(tmp_path) as (stack, east, west):
        assert stack.up(declare("east")).ok
        region = stack.recorded(urn(PROVIDER, "region"))
        planned = stack.preview(declare("west"))
        assert not planned.ok and planned.exit_code == 2  # bad input, as `up`'s refusal
        moved = stack.up(declare("west"))
        assert not moved.ok
        (failure,) = moved.failures
        assert "provider region now reaches another cluster" in failure
        assert "::cm is protected" in failure
        assert east.names("ConfigMap") == ["default/cm"] and west.names("ConfigMap") == []
        assert stack.recorded(urn(PROVIDER, "region")) == region


def kubeconfig_program(kubeconfig: str) -> Declare:
    def program(p: Program) -> None:
        opts = ResourceOptions(provider=k8s.Provider("region", kubeconfig=kubeconfig))
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

    return program


def test_a_kubeconfig_output_no_provider_can_be_made_of_is_bad_input_at_its_line(
    tmp_path: Path,
) -> None:
    """Known only once another resource is applied, the kubeconfig is refused at the
    provider's step: its failure leads with the provider's declaration, as the check before
    a run says it (and as other declarations refused once Outputs are known say theirs)."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home = FakeCluster()
    made = home.factory()

    def factory(settings: Any) -> Any:
        if settings is not None and settings.get("kubeconfig") == "apiVersion: [":
            raise UsageError("the kubeconfig given inline is not valid YAML at line 1: fix it")
        return made(settings)

    def declare(p: Program) -> None:
        source = k8s.core.v1.ConfigMap("source", metadata={"name": "source"}, data={"k": "x"})
        region = k8s.Provider("region", kubeconfig=source.data.apply(lambda d: "apiVersion: ["))
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, opts=ResourceOptions(provider=region))

    stack = Stack(backend, home, factory=factory)
    try:
        planned = stack.preview(declare)
        assert not planned.ok
        (failure,) = planned.failures
        assert re.fullmatch(
            rf"\S+test_engine_lifecycle\.py:\d+: {PROVIDER} region: the kubeconfig given "
            r"inline is not valid YAML at line 1: fix it",
            failure,
        ), failure
    finally:
        backend.close()


def test_a_provider_whose_new_kubeconfig_names_another_server_replaces_its_objects_there(
    tmp_path: Path,
) -> None:
    """The provider records the server it reached; new kubeconfig contents that reach
    another are a move (as Pulumi's DiffConfig has it), the former contents still reach
    the old server, through which each object is deleted."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home, east, west = FakeCluster(), FakeCluster(name="east"), FakeCluster(name="west")
    clusters = {"east-config": east, "east-rotated": east, "west-config": west}
    stack = Stack(backend, home, factory=home.factory(clusters, key="kubeconfig"))
    try:
        assert stack.up(kubeconfig_program("east-config")).ok
        east_id = east.kube_system_uid()
        assert stack.recorded(urn(PROVIDER, "region")).outputs == {
            "cluster": "east",
            "clusterId": east_id,
            "context": "east",
        }
        # New credentials for the same server: nothing moves.
        assert stack.up(kubeconfig_program("east-rotated")).ok
        assert ("same", "cm") in stack.started()

        assert stack.up(kubeconfig_program("west-config")).ok
        assert ("replace", "cm") in stack.started()
        assert east.names("ConfigMap") == [] and west.names("ConfigMap") == ["default/cm"]
        outputs = stack.recorded(urn(PROVIDER, "region")).outputs
        assert outputs["cluster"] == "west" and outputs["clusterId"] == west.kube_system_uid()
    finally:
        backend.close()


@contextlib.contextmanager
def rewritable(
    tmp_path: Path,
) -> Iterator[tuple[Stack, FakeCluster, FakeCluster, dict[str, FakeCluster]]]:
    """A stack whose providers' kubeconfig file (any settings) reaches `file["path"]`:
    `east` at first, `west` once a test rewrites it."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home, east, west = FakeCluster(), FakeCluster(name="east"), FakeCluster(name="west")
    file = {"path": east}

    def factory(settings: Any) -> Any:
        return file["path"] if settings is not None else home

    try:
        yield Stack(backend, home, factory=factory), east, west, file
    finally:
        backend.close()


def test_a_kubeconfig_file_rewritten_to_another_cluster_is_refused_until_retargeted(
    tmp_path: Path,
) -> None:
    """The same path now reaches another cluster (another kube-system uid than the one the
    provider's record holds): nothing runs (up, destroy, refresh) until the former file is
    back, or `up --retarget` forgets the objects (left on the former cluster) and creates
    them on the new one."""
    with rewritable(tmp_path) as (stack, east, west, file):
        assert stack.up(kubeconfig_program("path")).ok
        east.calls.clear()
        file["path"] = west
        version = stack.state().version
        runs = (lambda: stack.up(kubeconfig_program("path")), stack.destroy, stack.refresh)
        for run in runs:
            with pytest.raises(UsageError, match=r"provider region now reaches the cluster at "
                               r"west \(context 'west'\), not the one its 1 object\(s\) were "
                               r"applied to, east \(context 'east'\)") as e:  # fmt: skip
                run()
            assert "put the former kubeconfig back in path" in str(e.value)
            assert "`stackwright up --retarget`" in str(e.value)
        assert west.writes() == [] and east.writes() == []
        assert stack.state().version == version

        # The preview of --retarget says what it forgets; nothing is written anywhere.
        previewed = stack.preview(kubeconfig_program("path"), retarget=True)
        assert previewed.counts == {"create": 1, "same": 1, "retargeted": 1}
        notices = [e.message for e in stack.events if getattr(e, "severity", "") == "warning"]
        assert any("left on that cluster, not deleted" in n for n in notices), notices
        assert stack.state().version == version and west.writes() == []

        assert stack.up(kubeconfig_program("path"), retarget=True).ok
        assert west.names("ConfigMap") == ["default/cm"]
        assert east.names("ConfigMap") == ["default/cm"]  # left there, no longer the stack's
        assert (
            stack.recorded(urn(PROVIDER, "region")).outputs["clusterId"] == west.kube_system_uid()
        )
        assert stack.up(kubeconfig_program("path")).counts == {"same": 2}


def test_a_refusal_never_quotes_a_kubeconfig_given_as_one_line_of_json(tmp_path: Path) -> None:
    """Inline kubeconfig contents (JSON holds no newline) are credentials, not a file to
    put back: the refusal names the provider's settings, never quotes them."""
    inline = '{"apiVersion": "v1", "users": [{"name": "u", "user": {"token": "t0ken-abc"}}]}'
    with rewritable(tmp_path) as (stack, _east, west, file):
        assert stack.up(kubeconfig_program(inline)).ok
        file["path"] = west
        with pytest.raises(UsageError, match="provider region now reaches") as e:
            stack.up(kubeconfig_program(inline))
        assert "t0ken-abc" not in str(e.value)
        assert "give provider region back its former kubeconfig / context" in str(e.value)


def test_a_provider_known_only_during_the_run_whose_cluster_changed_is_refused(
    tmp_path: Path,
) -> None:
    """A provider that depends on another resource is made during the run, not checked
    before it: reaching another cluster with the settings it had (a kubeconfig file
    rewritten), its step fails (the run's exit 1) before any of its objects is touched."""

    def declare(p: Program) -> None:
        first = k8s.core.v1.ConfigMap("first", metadata={"name": "first"})
        region = k8s.Provider("region", kubeconfig="path", opts=ResourceOptions(depends_on=[first]))
        k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, opts=ResourceOptions(provider=region))

    with rewritable(tmp_path) as (stack, east, west, file):
        assert stack.up(declare).ok
        file["path"] = west
        refused = stack.up(declare)
        assert not refused.ok and refused.counts == {"same": 1, "skipped": 1}
        assert "provider region now reaches the cluster at west" in refused.failures[0]
        assert "put the former kubeconfig back in path" in refused.failures[0]
        assert west.writes() == [] and east.names("ConfigMap") == ["default/cm"]
        assert stack.state().resource(urn(CM, "cm")) is not None


@contextlib.contextmanager
def switchable(
    tmp_path: Path,
) -> Iterator[tuple[Stack, FakeCluster, FakeCluster, dict[str, FakeCluster]]]:
    """A stack whose default provider reaches `current["default"]`: `home` at first, and
    `other` once a test switches it (as `kubectl config use-context` would)."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home, other = FakeCluster(), FakeCluster(name="other")
    current = {"default": home}
    try:
        yield (
            Stack(backend, home, factory=lambda settings: current["default"]),
            home,
            other,
            current,
        )
    finally:
        backend.close()


def test_the_default_provider_switched_to_another_cluster_is_refused(tmp_path: Path) -> None:
    """The state records the identity of the cluster the default provider talked to: one
    reaching another is refused (preview, destroy, refresh), before any change."""
    with switchable(tmp_path) as (stack, home, other, current):
        assert stack.up(settings("fast")).ok
        assert stack.state().default_cluster == ClusterIdentity(
            home.kube_system_uid(), "fake", "fake"
        )
        home.calls.clear()
        current["default"] = other
        for run in (lambda: stack.preview(settings("fast")), stack.destroy, stack.refresh):
            with pytest.raises(UsageError, match=r"provider default now reaches the cluster "
                               r"at other \(context 'other'\)") as e:  # fmt: skip
                run()
            assert "`kubectl config use-context fake`" in str(e.value)
        assert other.writes() == [] and home.writes() == []
        current["default"] = home
        assert stack.preview(settings("fast")).counts == {"same": 1}

        current["default"] = other
        assert stack.up(settings("fast"), retarget=True).counts == {"create": 1, "retargeted": 1}
        assert stack.state().default_cluster == ClusterIdentity(
            other.kube_system_uid(), "other", "other"
        )
        assert home.names("ConfigMap") == other.names("ConfigMap") == ["default/settings"]


def without_identity(cluster: FakeCluster) -> FakeCluster:
    """`cluster` as credentials that may not read kube-system see it (403): no identity."""
    del cluster.objects[Key("v1", "Namespace", None, "kube-system")]
    return cluster


def test_a_switch_to_a_cluster_whose_identity_cannot_be_read_is_still_refused(
    tmp_path: Path,
) -> None:
    """An identity recorded, the cluster reached now lets its kube-system go unread (a
    namespace-scoped kubeconfig's 403): with no identity to compare, the objects are read,
    as for a state older than identities, and found missing: refused, not applied there."""
    with switchable(tmp_path) as (stack, home, other, current):
        assert stack.up(settings("fast")).ok
        assert stack.state().default_cluster is not None
        current["default"] = without_identity(other)
        version = stack.state().version
        for run in (lambda: stack.up(settings("slow")), stack.destroy):
            with pytest.raises(UsageError, match="holds none of the 1 object"):
                run()
        assert other.writes() == [] and home.names("ConfigMap") == ["default/settings"]
        assert stack.state().version == version

    (tmp_path / "explicit").mkdir()
    with rewritable(tmp_path / "explicit") as (stack, east, west, file):
        assert stack.up(kubeconfig_program("path")).ok
        file["path"] = without_identity(west)
        with pytest.raises(UsageError, match="applied its objects to the cluster at east"):
            stack.up(kubeconfig_program("path"))
        assert west.writes() == [] and east.names("ConfigMap") == ["default/cm"]


def test_a_state_without_identities_records_them_and_still_refuses_a_switch(
    tmp_path: Path,
) -> None:
    """A state written before identities (an export of version 1, without
    `defaultCluster`): on its cluster, the next up records the identity without a word;
    on another, reading its objects tells they are not there, as before identities."""
    with switchable(tmp_path) as (stack, home, other, current):
        assert stack.up(settings("fast")).ok
        document = stack.backend.export(PROJECT, STACK)
        old = {**{k: v for k, v in document.items() if k != "defaultCluster"}, "version": 1}
        stack.backend.import_(PROJECT, STACK, old)
        assert stack.state().default_cluster is None

        current["default"] = other
        with pytest.raises(UsageError, match="holds none of the 1 object"):
            stack.preview(settings("fast"))

        current["default"] = home
        assert stack.up(settings("fast")).counts == {"same": 1}
        assert stack.state().default_cluster is not None
        assert stack.state().default_cluster.uid == home.kube_system_uid()


# --- crash recovery ----------------------------------------------------------------------------


def pending_create(stack: Stack, mode: str = "fast") -> ResourceState:
    """Journal the create of `settings` as a crashed `up` would leave it: begun, never ended."""
    state = ResourceState(
        urn=urn(CM, "settings"),
        type=CM,
        id="default/settings",
        inputs={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings"},
            "data": {"mode": mode},
        },
    )
    with stack.backend.begin_operation(PROJECT, STACK, kind="up") as operation:
        operation.begin(1, Op.CREATE, state)
    assert [p.op for p in stack.state().pending] == [Op.CREATE]
    return state


def test_a_crash_after_the_create_reached_the_cluster_is_settled_without_a_second_create(
    stack: Stack,
) -> None:
    pending_create(stack)
    stack.fake.put(
        stack.fake.stamp(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
             "data": {"mode": "fast"}},
            stack=STACK, urn=urn(CM, "settings"), namespace="default",
        )
    )  # fmt: skip

    before = stack.state()
    planned = stack.preview(settings("fast"))
    assert any("pending" in d.message for d in stack.of(Diagnostic))
    # A preview waits for nothing: it says that the `up` will.
    assert [d.message for d in stack.of(Diagnostic) if "not ready" in d.message] == [
        "was not ready after the last update (the run applying it stopped before it was "
        "ready); `up` waits for it again",
    ]
    # A preview settles in memory (a read), plans as the `up` will, and records nothing.
    assert planned.counts == {"update": 1}
    assert stack.fake.writes() == [] and stack.state() == before
    stack.fake.calls.clear()

    summary = stack.up(settings("fast"))

    # Settled from the cluster (no second create); never seen ready, so applied again
    # (the same object) and waited for.
    assert summary.ok and summary.counts == {"update": 1}
    assert stack.fake.calls_to("apply") == [Call("apply", "ConfigMap", "settings")]
    assert stack.fake.calls_to("read") == [Call("read", "ConfigMap", "settings")]
    assert [d.message for d in stack.of(Diagnostic)] == [
        "settled an interrupted create of kubernetes:core/v1:ConfigMap settings",
        "was not ready after the last update (the run applying it stopped before it was "
        "ready); waiting again",
    ]
    assert stack.fake.names("ConfigMap") == ["default/settings"]
    state = stack.state()
    assert state.pending == []
    assert [r.urn for r in state.resources] == [urn(CM, "settings")]
    assert state.resources[0].outputs["metadata"]["uid"]


def test_a_crash_before_the_create_reached_the_cluster_is_settled_and_created_once(
    stack: Stack,
) -> None:
    pending_create(stack)

    summary = stack.up(settings("fast"))

    assert summary.ok and summary.counts == {"create": 1}
    assert [c.name for c in stack.fake.calls_to("apply")] == ["settings"]
    state = stack.state()
    assert state.pending == []
    assert [r.urn for r in state.resources] == [urn(CM, "settings")]


def test_a_crash_during_a_delete_is_settled_by_reading_the_cluster(stack: Stack) -> None:
    stack.up(both(settings(), web()))
    recorded = stack.recorded(urn(DEPLOY, "web"))
    with stack.backend.begin_operation(PROJECT, STACK, kind="up") as operation:
        operation.begin(1, Op.DELETE, recorded)
    stack.fake.remove("Deployment", "web")  # the delete reached the cluster, then the crash
    stack.fake.calls.clear()

    summary = stack.up(settings())

    assert summary.ok and summary.counts == {"same": 1}
    assert stack.fake.calls_to("delete") == []
    state = stack.state()
    assert state.pending == []
    assert [r.urn for r in state.resources] == [urn(CM, "settings")]


# --- refresh and drift ---------------------------------------------------------------------------


def test_refresh_reports_drift_and_up_refresh_takes_the_fields_back(stack: Stack) -> None:
    stack.up(both(settings("fast"), web(replicas=2)))
    stack.fake.edit("ConfigMap", "settings", {"data.mode": "edited"})
    stack.fake.calls.clear()

    # Without --refresh the engine plans against the state: it does not see the drift.
    blind = stack.up(both(settings("fast"), web(replicas=2)))
    assert blind.counts == {"same": 2}
    assert stack.fake.writes() == []

    refreshed = stack.refresh()

    assert refreshed.ok and refreshed.counts == {"drifted": 1, "in-sync": 1}
    (drift,) = stack.of(Drift)
    assert drift.urn == urn(CM, "settings") and not drift.gone
    assert drift.fields == (DriftedField("data.mode", "fast", "edited", "kubectl-edit"),)
    assert stack.fake.writes() == []
    assert stack.recorded(urn(CM, "settings")).outputs["data"] == {"mode": "edited"}
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "fast"}

    stack.fake.calls.clear()
    summary = stack.up(both(settings("fast"), web(replicas=2)), refresh=True)

    assert summary.ok and summary.counts == {"drifted": 1, "in-sync": 1, "update": 1, "same": 1}
    assert stack.changes(urn(CM, "settings")) == [FieldChange("data.mode", "edited", "fast")]
    (applied,) = [a for a in stack.fake.applied if not a.dry_run][-1:]
    assert applied.body["metadata"]["name"] == "settings" and applied.force
    assert stack.fake.find("ConfigMap", "settings")["data"] == {"mode": "fast"}  # type: ignore[index]
    assert stack.recorded(urn(CM, "settings")).outputs["data"] == {"mode": "fast"}


def test_a_refresh_rewrites_only_the_records_whose_object_changed(stack: Stack) -> None:
    # Every read object was journaled, drifted or not: a refresh of 1,010 objects in sync
    # wrote 2,020 transactions and ~3 MB to the state (benchmarks/day2.py).
    stack.up(both(settings("fast"), web(replicas=2)))
    before = stack.state()

    quiet = stack.refresh()

    assert quiet.ok and quiet.counts == {"in-sync": 2}
    assert quiet.state_bytes_written == 0
    assert stack.state().resources == before.resources

    stack.fake.edit("ConfigMap", "settings", {"data.mode": "edited"})
    drifted = stack.refresh()

    assert drifted.ok and drifted.counts == {"drifted": 1, "in-sync": 1}
    after = stack.state()
    # Only the drifted one is rewritten (and so moved last); the other keeps its record.
    assert [r.urn for r in after.resources] == [urn(DEPLOY, "web"), urn(CM, "settings")]
    assert stack.recorded(urn(DEPLOY, "web")) == before.resources[1]
    assert stack.recorded(urn(CM, "settings")).outputs["data"] == {"mode": "edited"}


def dependent_of_settings(p: Program) -> None:
    k8s.core.v1.ConfigMap(
        "follower",
        metadata={"name": "follower"},
        data={"mode": "x"},
        opts=ResourceOptions(depends_on=[p.by_urn[urn(CM, "settings")]]),
    )


@pytest.mark.parametrize("dry_run", [True, False], ids=["preview", "up"])
def test_an_object_its_refresh_could_not_read_fails_once_and_is_not_changed(
    stack: Stack, dry_run: bool
) -> None:
    # `preview --refresh` of an unreachable object failed it twice (the read, then the dry
    # run, each after its retries); `up --refresh` applied it on a state nobody confirmed.
    stack.up(both(settings("fast"), web(replicas=2), dependent_of_settings))
    stack.fake.fail_read["settings"] = "cannot reach the API server"
    stack.fake.calls.clear()

    summary = stack.run(
        "up",
        both(settings("slow"), web(replicas=3), dependent_of_settings),
        refresh=True,
        dry_run=dry_run,
    )

    assert not summary.ok
    assert summary.failures == [f"{CM} settings: cannot reach the API server"]
    assert summary.not_done == [
        f"{CM} settings: the refresh could not read it",
        f"{CM} follower: {CM} settings failed or was not done",
    ]
    skipped = [e.step.urn for e in stack.of(StepSkipped)]
    assert skipped == [urn(CM, "settings"), urn(CM, "follower")]
    touched = [c.name for c in stack.fake.calls_to("apply", "preview")]
    assert "settings" not in touched and "web" in touched, "independent ones still go on"
    assert stack.recorded(urn(CM, "settings")).inputs["data"] == {"mode": "fast"}


REFUSED = "cannot reach the API server at https://127.0.0.1:9 (context 'down'): connection refused"


@pytest.mark.parametrize("dry_run", [True, False], ids=["preview", "up"])
def test_a_cluster_that_never_answers_stops_the_run_before_its_steps(
    stack: Stack, dry_run: bool
) -> None:
    """Each step would fail the same way, each after its own retries (kube-system's, then
    discovery once per kind): one line names the server, exit code 1, nothing recorded."""
    stack.up(both(settings("fast"), web()))
    before = stack.state()
    stack.fake.unreachable = REFUSED
    stack.fake.calls.clear()

    with pytest.raises(ClusterUnreachable) as stopped:
        stack.run("up", both(settings("slow"), web(replicas=3)), dry_run=dry_run)

    assert str(stopped.value) == f"{'preview' if dry_run else 'up'}: {REFUSED}"
    assert stopped.value.exit_code == 1
    asked = [c.method for c in stack.fake.calls if c.method != "close"]
    assert asked == ["identity"]
    assert stack.state().resources == before.resources


def test_a_targeted_run_on_a_cluster_that_never_answers_fails_its_steps_only(
    stack: Stack,
) -> None:
    """A `--target` may need nothing of the cluster: the run goes on, and what does need
    it fails, saying why."""
    stack.up(both(settings("fast"), web()))
    stack.fake.unreachable = REFUSED

    summary = stack.up(both(settings("slow"), web()), targets=frozenset({urn(CM, "settings")}))

    assert not summary.ok
    assert summary.failures == [f"{CM} settings: discovery of v1: {REFUSED}"]


def test_an_object_deleted_outside_is_forgotten_by_refresh_and_recreated_by_up(
    stack: Stack,
) -> None:
    stack.up(both(settings(), web()))
    stack.fake.remove("Deployment", "web")

    refreshed = stack.refresh()

    assert refreshed.counts == {"deleted-outside": 1, "in-sync": 1}
    assert [d.urn for d in stack.of(Drift) if d.gone] == [urn(DEPLOY, "web")]
    assert [r.urn for r in stack.state().resources] == [urn(CM, "settings")]
    stack.fake.calls.clear()

    summary = stack.up(both(settings(), web()))

    assert summary.counts == {"same": 1, "create": 1}
    assert [c.name for c in stack.fake.calls_to("apply")] == ["web"]


# --- more replacements, dependencies and components ---------------------------------------------


def test_moving_an_object_to_another_namespace_creates_it_there_before_deleting_it(
    stack: Stack,
) -> None:
    stack.fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})

    def in_namespace(namespace: str) -> Declare:
        def declare(p: Program) -> None:
            k8s.core.v1.ConfigMap(
                "settings", metadata={"name": "settings", "namespace": namespace}, data={"a": "1"}
            )

        return declare

    stack.up(in_namespace("default"))
    stack.fake.calls.clear()

    summary = stack.up(in_namespace("apps"))

    assert summary.ok and summary.counts == {"replace": 1, "delete-replaced": 1}
    assert applies_and_deletes(stack.fake) == [("apply", "settings"), ("delete", "settings")]
    assert stack.fake.names("ConfigMap") == ["apps/settings"]
    assert [(r.id, r.delete_pending) for r in stack.state().resources] == [("apps/settings", False)]


def test_a_replaced_object_that_could_not_be_deleted_is_deleted_by_the_next_up(
    stack: Stack,
) -> None:
    stack.up(web(named=False, app="a"))
    (old,) = [n.split("/")[1] for n in stack.fake.names("Deployment")]
    stack.fake.fail_delete[old] = 'deployments.apps "web" is forbidden'

    summary = stack.up(web(named=False, app="b"))

    assert not summary.ok and summary.counts == {"replace": 1}
    assert summary.failures == [f'{DEPLOY} web: deployments.apps "web" is forbidden']
    (new,) = [n.split("/")[1] for n in stack.fake.names("Deployment") if not n.endswith(old)]
    assert [(r.id, r.delete_pending) for r in stack.state().resources] == [
        (f"default/{old}", True),
        (f"default/{new}", False),
    ]

    stack.fake.fail_delete.clear()
    stack.fake.calls.clear()
    again = stack.up(web(named=False, app="b"))

    assert again.ok and again.counts == {"same": 1, "delete-replaced": 1}
    assert applies_and_deletes(stack.fake) == [("delete", old)]
    assert [(r.id, r.delete_pending) for r in stack.state().resources] == [
        (f"default/{new}", False)
    ]


def chain(mode: str) -> Declare:
    def declare(p: Program) -> None:
        cfg = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": mode})
        k8s.core.v1.ConfigMap(
            "derived", metadata={"name": "derived"}, data={"from": cfg.data["mode"]}
        )

    return declare


def test_a_dependent_reads_the_new_live_value_of_what_it_depends_on(stack: Stack) -> None:
    stack.up(chain("a"))

    planned = stack.preview(chain("b"))

    assert planned.counts == {"update": 2}
    # The server's dry run of the update says what `settings` will hold.
    (change,) = stack.changes(urn(CM, "derived"))
    assert (change.path, change.old, change.new) == ("data.from", "a", "b")
    assert [str(c.new) for c in shown_changes(stack.of(StepStarted)[1].step)] == ["b"]

    summary = stack.up(chain("b"))

    assert summary.counts == {"update": 2}
    assert stack.started() == [("update", "settings"), ("update", "derived")]
    assert stack.recorded(urn(CM, "derived")).inputs["data"] == {"from": "b"}
    assert stack.recorded(urn(CM, "derived")).dependencies == (urn(CM, "settings"),)


def test_a_component_is_recorded_with_its_children_and_destroyed_after_them(
    stack: Stack,
) -> None:
    from stackwright.sdk.resource import ComponentResource

    def declare(p: Program) -> None:
        app = ComponentResource("acme:web:App", "shop")
        k8s.core.v1.ConfigMap(
            "settings", metadata={"name": "settings"}, data={"a": "1"},
            opts=ResourceOptions(parent=app),
        )  # fmt: skip

    child = make_urn(STACK, PROJECT, CM, "settings", ("acme:web:App",))

    assert stack.up(declare).counts == {"create": 2}
    state = stack.state()
    assert [r.urn for r in state.resources] == [urn("acme:web:App", "shop"), child]
    assert state.resources[1].parent == urn("acme:web:App", "shop")
    assert stack.fake.calls_to("apply") == [Call("apply", "ConfigMap", "settings")]

    assert stack.up(declare).counts == {"same": 2}

    destroyed = stack.destroy()
    assert destroyed.ok and stack.started() == [("delete", "settings"), ("delete", "shop")]
    assert stack.state().resources == []


def component_with_outputs(mode: str = "a", *, fail: bool = False) -> Declare:
    """A component registering a child's live field, a plain value and a secret."""

    def declare(p: Program) -> None:
        from stackwright.sdk.resource import ComponentResource

        app = ComponentResource("acme:web:App", "shop")
        cfg = k8s.core.v1.ConfigMap(
            "settings", metadata={"name": "settings"}, data={"mode": mode},
            opts=ResourceOptions(parent=app),
        )  # fmt: skip
        app.register_outputs(
            {
                "mode": cfg.data.apply(lambda d: d["mode"]),
                "uid": cfg.metadata["uid"],
                "port": 8080,
                "token": Output.secret(f"s3cr3t-{mode}"),
            }
        )

    return declare


def test_a_components_registered_outputs_are_recorded_once_its_children_are_done(
    stack: Stack,
) -> None:
    """As Pulumi's RegisterResourceOutputs: resolved against the children's live objects,
    the secret one at a secret path; a run that changes nothing records nothing."""
    app = urn("acme:web:App", "shop")
    assert stack.up(component_with_outputs("a")).ok
    recorded = stack.recorded(app)
    uid = stack.fake.find("ConfigMap", "settings")["metadata"]["uid"]  # type: ignore[index]
    assert recorded.outputs == {"mode": "a", "uid": uid, "port": 8080, "token": "s3cr3t-a"}
    assert recorded.secret_paths == ("token",)

    version = stack.state().version
    assert stack.up(component_with_outputs("a")).counts == {"same": 2}
    assert stack.state().version == version, "a no-op up journaled something"

    # A preview records nothing; the up records what the updated child gives.
    assert stack.preview(component_with_outputs("b")).ok
    assert stack.recorded(app).outputs["mode"] == "a"
    assert stack.up(component_with_outputs("b")).counts == {"same": 1, "update": 1}
    assert stack.recorded(app).outputs == {
        "mode": "b", "uid": uid, "port": 8080, "token": "s3cr3t-b"
    }  # fmt: skip

    # A child that failed leaves what it would give unknown: the old outputs stay.
    stack.fake.fail_apply["settings"] = "the API server refused"
    assert not stack.up(component_with_outputs("c")).ok
    assert stack.recorded(app).outputs["token"] == "s3cr3t-b"


def test_a_failed_up_reports_the_stack_outputs_it_keeps(stack: Stack) -> None:
    """A failed up records no outputs; its summary said "(known after apply)" for those a
    failed step left unknown, where `stack output` shows what the stack keeps."""

    def declare(mode: str) -> Declare:
        def program(p: Program) -> None:
            cfg = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"m": mode})
            p.export("version", cfg.metadata["resourceVersion"])
            p.export("token", Output.secret("s3cr3t"))

        return program

    assert stack.up(declare("a")).ok
    kept = stack.state().outputs
    stack.fake.fail_apply["settings"] = "the API server refused"

    failed = stack.up(declare("b"))

    assert not failed.ok and stack.state().outputs == kept
    assert failed.outputs == {"version": kept["version"], "token": "[secret]"}


def test_a_preview_whose_update_conflicts_knows_what_the_update_would_not_change(
    stack: Stack,
) -> None:
    """The update's dry run fails (another manager owns a field it sets): outputs read from
    the object are what the state records where the update would not change it, as in
    Pulumi's preview of an update that fails; what it would change or add stays unknown."""

    def declare(data: dict[str, str]) -> Declare:
        def program(p: Program) -> None:
            cm = k8s.core.v1.ConfigMap("settings", data=data)  # auto-named
            p.export("name", cm.metadata["name"])
            p.export("uid", cm.metadata["uid"])
            p.export("version", cm.metadata["resourceVersion"])
            p.export("data", cm.data)

        return program

    first = stack.up(declare({"mode": "a", "kept": "k"}))
    name, uid = first.outputs["name"], first.outputs["uid"]
    stack.fake.edit("ConfigMap", name, {"data.mode": "b"}, namespace="default", manager="intruder")

    preview = stack.preview(declare({"mode": "c", "kept": "k", "added": "n"}))

    assert not preview.ok and "conflict" in preview.failures[0]
    assert preview.outputs == {
        "name": name,
        "uid": uid,
        "version": UNKNOWN_TEXT,  # every write changes it
        "data": {"mode": UNKNOWN_TEXT, "kept": "k", "added": UNKNOWN_TEXT},
    }


def test_what_an_update_would_change_is_unknown_down_to_the_field() -> None:
    """List items by index; a change made outside `diff` (drift an update takes back), whose
    path cannot tell a dotted key from nested ones, leaves the whole map it is in unknown."""
    outputs = {
        "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web"}, "uid": "u"},
        "spec": {"ports": [{"port": 80}, {"port": 81}]},
        "status": {"ready": True},
    }
    old = ResourceState(urn(CM, "web"), CM, "default/web", outputs, outputs)
    changes = (
        FieldChange("spec.ports[1].port", 81, 82, ("spec", "ports", 1, "port")),
        FieldChange("metadata.labels.app.kubernetes.io/name", "web", "api"),
    )

    known = unchanged_by(Step(Op.UPDATE, old.urn, old, old, changes))

    assert known["metadata"] == {"name": "web", "labels": UNKNOWN, "uid": "u"}
    assert known["spec"] == {"ports": [{"port": 80}, {"port": UNKNOWN}]}
    assert known["status"] is UNKNOWN and known["metadata"]["resourceVersion"] is UNKNOWN


def test_a_components_secret_outputs_are_sealed_in_the_state_and_its_export(
    tmp_path: Path,
) -> None:
    import os

    from stackwright.automation.secrets import DataKey, StateEncrypter
    from stackwright.model import is_sealed

    key = DataKey(os.urandom(32), STACK)
    backend = open_backend(f"file://{tmp_path}/state.db", encrypter=StateEncrypter(lambda: key))
    backend.create_stack(PROJECT, STACK)
    try:
        stack = Stack(backend)
        assert stack.up(component_with_outputs("a")).ok
        assert stack.recorded(urn("acme:web:App", "shop")).outputs["token"] == "s3cr3t-a"
        (exported,) = [
            r for r in backend.export(PROJECT, STACK)["resources"] if r["type"] == "acme:web:App"
        ]
        assert exported["outputs"]["mode"] == "a" and exported["outputs"]["port"] == 8080
        assert is_sealed(exported["outputs"]["token"])
        assert "s3cr3t-a" not in str(backend.export(PROJECT, STACK))
    finally:
        backend.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("state.db*"))
    assert b"s3cr3t-a" not in raw


# --- targets that delete ---------------------------------------------------------------------


def test_a_targeted_destroy_takes_what_depends_on_the_target_with_it(stack: Stack) -> None:
    stack.up(app_with_dependent)

    summary = stack.destroy(targets=frozenset({urn(CM, "settings")}))

    assert summary.ok and summary.counts == {"delete": 2}
    assert [c.name for c in stack.fake.calls_to("delete")] == ["web", "settings"]
    # The state stays loadable: no resource refers to one that is gone.
    assert [r.urn for r in stack.state().resources] == [urn(CM, "other")]
    assert stack.fake.names("ConfigMap") == ["default/other"]


def test_a_targeted_up_refuses_to_delete_what_an_untargeted_resource_refers_to(
    stack: Stack,
) -> None:
    stack.up(app_with_dependent)

    def without_settings(p: Program) -> None:
        k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"mode": "b"})
        k8s.apps.v1.Deployment("web", metadata={"name": "web"}, spec=web_spec())

    stack.fake.calls.clear()
    with pytest.raises(UsageError, match=r"would delete it, but .*Deployment::web still refers"):
        stack.up(without_settings, targets=frozenset({urn(CM, "settings")}))
    assert stack.fake.writes() == []

    both_targets = frozenset({urn(CM, "settings"), urn(DEPLOY, "web")})
    summary = stack.up(without_settings, targets=both_targets)

    assert summary.ok and summary.counts == {"update": 1, "delete": 1}  # not other: unrelated
    assert stack.recorded(urn(DEPLOY, "web")).dependencies == ()
    assert [r.urn for r in stack.state().resources] == [urn(CM, "other"), urn(DEPLOY, "web")]


# --- more crashes ---------------------------------------------------------------------------------


def test_a_crash_during_a_create_before_delete_replacement_keeps_the_new_object(
    stack: Stack,
) -> None:
    stack.up(web(named=False, app="a"))
    old = stack.recorded(urn(DEPLOY, "web"))
    stack.preview(web(named=False, app="b"))
    (step,) = [e.step for e in stack.of(StepStarted)]
    assert step.new is not None and step.new.id != old.id
    with stack.backend.begin_operation(PROJECT, STACK, kind="up") as operation:
        operation.begin(1, Op.CREATE_REPLACEMENT, step.new)
    # The replacement reached the cluster; the old object was never deleted.
    stack.fake.put(
        stack.fake.stamp(step.new.inputs, stack=STACK, urn=step.new.urn, namespace="default")
    )
    stack.fake.calls.clear()

    summary = stack.up(web(named=False, app="b"))

    assert summary.ok and summary.counts == {"update": 1, "delete-replaced": 1}
    old_name, new_name = old.id.split("/")[1], step.new.id.split("/")[1]
    assert applies_and_deletes(stack.fake) == [("apply", new_name), ("delete", old_name)]
    assert stack.fake.names("Deployment") == [f"default/{new_name}"]
    assert [(r.id, r.delete_pending) for r in stack.state().resources] == [(step.new.id, False)]


def test_a_crash_during_an_update_sends_the_update_again(stack: Stack) -> None:
    stack.up(settings("a"))
    recorded = stack.recorded(urn(CM, "settings"))
    update = ResourceState(
        urn=recorded.urn, type=recorded.type, id=recorded.id,
        inputs={**recorded.inputs, "data": {"mode": "b"}},
    )  # fmt: skip
    with stack.backend.begin_operation(PROJECT, STACK, kind="up") as operation:
        operation.begin(1, Op.UPDATE, update)
    stack.fake.calls.clear()

    summary = stack.up(settings("b"))

    # Whether it reached the cluster is unknown: the recorded inputs stay, so it is sent again.
    assert summary.ok and summary.counts == {"update": 1}
    assert applies_and_deletes(stack.fake) == [("apply", "settings")]
    state = stack.state()
    assert state.pending == []
    assert [r.inputs["data"] for r in state.resources] == [{"mode": "b"}]


# --- scale ----------------------------------------------------------------------------------------


def test_a_no_op_over_a_thousand_resources_writes_nothing(stack: Stack) -> None:
    def many(p: Program) -> None:
        for i in range(1000):
            k8s.core.v1.ConfigMap(f"c{i}", metadata={"name": f"c{i}"}, data={"i": str(i)})

    assert stack.up(many).counts == {"create": 1000}
    version = stack.state().version
    stack.fake.calls.clear()

    # Its time (DESIGN: "well under a second for a thousand resources") is measured by
    # benchmarks/up.py (no-op preview / up), not asserted on a shared machine here.
    for summary in (stack.preview(many), stack.up(many)):
        assert summary.counts == {"same": 1000}
    assert stack.fake.writes() == [] and stack.fake.calls_to("preview") == []
    assert stack.state().version == version


def test_a_helm_hook_gets_a_note_saying_when_it_runs(stack: Stack) -> None:
    def declare(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "migrate",
            metadata={
                "name": "migrate",
                "annotations": {
                    "helm.sh/hook": "pre-install,pre-upgrade",
                    "helm.sh/hook-delete-policy": "hook-succeeded",
                },
            },
        )
        k8s.core.v1.ConfigMap("plain", metadata={"name": "plain"})

    stack.up(declare)

    notes = {(d.urn, d.message) for d in stack.of(Diagnostic)}
    assert notes == {
        (
            urn(CM, "migrate"),
            "Helm hook (pre-install, pre-upgrade): applied before the chart's other objects; "
            "its delete policy is not applied, it stays as an ordinary object",
        )
    }


def test_a_random_password_is_generated_once_and_kept_until_its_inputs_change(stack: Stack) -> None:
    import stackwright.kx as kx

    def declare(length: int) -> Declare:
        def program_(p: Program) -> None:
            p.export("pw", kx.RandomPassword("db", length=length).result)

        return program_

    first = stack.up(declare(16))
    assert first.outputs == {"pw": "[secret]"}, "never shown"
    recorded = stack.recorded(urn("stackwright:random:RandomPassword", "db"))
    value = recorded.outputs["result"]
    assert len(value) == 16 and value.isalnum() and "result" in recorded.secret_paths
    assert stack.fake.calls_to("apply", "delete") == [], "nothing in the cluster"

    assert stack.up(declare(16)).counts == {"same": 1}
    assert stack.recorded(urn("stackwright:random:RandomPassword", "db")).outputs["result"] == value

    stack.up(declare(24))
    again = stack.recorded(urn("stackwright:random:RandomPassword", "db")).outputs["result"]
    assert len(again) == 24 and again != value


WEBAPP_CHART = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"


def chart_fed_by_a_config_map(
    data: dict[str, str], values: Callable[[Any], dict[str, Any]]
) -> Declare:
    """The test chart in namespace shop, its `values(source)` reading a ConfigMap's live state."""

    def declare(p: Program) -> None:
        from stackwright.kubernetes.helm import Chart

        k8s.core.v1.Namespace("shop", metadata={"name": "shop"})
        source = k8s.core.v1.ConfigMap("source", data=data)
        base = {"image": {"tag": "1.29"}, "redis": {"enabled": False}}
        Chart(
            "demo",
            chart=WEBAPP_CHART,
            namespace="shop",
            values={**base, "migrations": {"enabled": False}, **values(source)},
        )

    return declare


def test_a_pre_install_hook_inside_a_namespace_the_chart_makes_comes_after_it(
    stack: Stack, tmp_path: Path
) -> None:
    # The chart's Namespace waited for every pre-install hook, the one inside it too: a
    # dependency cycle refused before any change (and before that, the hook was sent to a
    # namespace not made yet). So with a CRD in its templates and a hook of its kind.
    from stackwright.kubernetes.helm import Chart

    hook = "annotations: {helm.sh/hook: pre-install}"
    files = {
        "Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        "templates/all.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n---\n"
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: migrate, {hook}}}\n---\n"
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\nspec: {group: example.com, scope: Namespaced,"
        " names: {kind: Widget, plural: widgets}, versions: [{name: v1, served: true,"
        " storage: true, schema: {openAPIV3Schema: {type: object}}}]}\n---\n"
        f"apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: first, {hook}}}\n",
    }
    chart = tmp_path / "c"
    for name, text in files.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)

    def declare(p: Program) -> None:
        Chart("c", chart=chart, namespace="apps")

    done = stack.up(declare)
    assert done.ok and done.counts == {"create": 6}
    applied = [(c.kind, c.name) for c in stack.fake.calls_to("apply")]
    assert applied.index(("Namespace", "apps")) < applied.index(("ConfigMap", "migrate"))
    assert applied.index(("ConfigMap", "migrate")) < applied.index(("ConfigMap", "app"))
    crd = applied.index(("CustomResourceDefinition", "widgets.example.com"))
    assert crd < applied.index(("Widget", "first"))


def uid_in_settings(source: Any) -> dict[str, Any]:
    """The ConfigMap's uid: unknown until the server assigns it."""
    return {"settings": {"SOURCE": source.metadata["uid"]}}


def test_a_chart_whose_values_come_from_another_resource_renders_once_it_is_applied(
    stack: Stack,
) -> None:
    from stackwright.sdk.output import UNKNOWN

    stack.preview(chart_fed_by_a_config_map({"tag": "a"}, uid_in_settings))
    planned = {e.step.urn.rpartition("::")[2]: e.step.new for e in stack.of(StepStarted)}
    settings = planned["ConfigMap:shop/demo-webapp-settings"]
    assert settings is not None
    # Unknown exactly where the value reaches; the rest of the chart is shown as rendered.
    assert settings.inputs["data"] == {"LOG_LEVEL": "info", "FEATURE_X": "on", "SOURCE": UNKNOWN}
    deployment = planned["Deployment:shop/demo-webapp"]
    assert deployment is not None and deployment.inputs["spec"]["replicas"] == 2
    assert stack.fake.writes() == []

    assert stack.up(chart_fed_by_a_config_map({"tag": "a"}, uid_in_settings)).ok
    source = [c.name for c in stack.fake.calls_to("apply") if c.kind == "ConfigMap"]
    assert source[0].startswith("source-"), "the value's resource is applied first"
    uid = stack.recorded(urn(CM, "source")).outputs["metadata"]["uid"]
    live = stack.fake.find("ConfigMap", "demo-webapp-settings", "shop")
    assert live is not None and live["data"]["SOURCE"] == uid
    chart_urn = "kubernetes:helm.sh/v4:Chart$kubernetes:core/v1:ConfigMap"
    recorded = stack.recorded(
        make_urn(STACK, PROJECT, chart_urn, "ConfigMap:shop/demo-webapp-settings", ())
    )
    assert urn(CM, "source") in recorded.dependencies

    # Unchanged source: the chart renders with the recorded value and nothing changes.
    declared = chart_fed_by_a_config_map({"tag": "a"}, uid_in_settings)
    assert set(stack.up(declared).counts) == {"same"}


def test_a_chart_whose_objects_change_with_a_live_value_is_refused_at_apply(
    stack: Stack,
) -> None:
    # A placeholder is a non-empty string: the redis subchart is on while the program runs,
    # and off once the real (empty) value is known.
    declare = chart_fed_by_a_config_map(
        {"on": "x"},
        lambda source: {"redis": {"enabled": source.data["missing"].apply(lambda v: v or False)}},
    )
    summary = stack.up(declare)
    assert not summary.ok
    assert any(
        "the set of objects must not depend on values that come from other resources" in f
        and "drops" in f
        for f in summary.failures
    ), summary.failures


def test_an_imported_object_the_cluster_cannot_take_names_its_file_and_document(
    stack: Stack, tmp_path: Path
) -> None:
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\n---\n"
        "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g1}\n"
    )

    def declare(p: Program) -> None:
        k8s.yaml.ConfigFile("app", file=str(manifest))

    summary = stack.preview(declare)
    assert not summary.ok
    (failure,) = summary.failures
    assert failure.startswith("kubernetes:example.com/v1:Gizmo Gizmo:g1: ")
    assert failure.endswith(f"[{manifest} (document 2)]"), failure
    assert stack.fake.find("ConfigMap", "fine") is None


def test_what_the_program_notes_is_a_warning_before_any_step(stack: Stack) -> None:
    def declare(p: Program) -> None:
        p.note("configuration shop:pw is a secret, but the program reads it as a plain value")
        settings()(p)

    stack.preview(declare)
    first = stack.events[0]
    assert isinstance(first, Diagnostic) and first.severity == "warning"
    assert first.message.startswith("configuration shop:pw is a secret")
    assert isinstance(stack.events[1], StepStarted)


def test_a_stack_output_whose_callback_raises_is_a_failure_naming_it_never_a_crash(
    stack: Stack,
) -> None:
    from stackwright.errors import forget_secrets, remember_secret

    def declare(p: Program) -> None:
        settings()(p)
        p.export("bad", Output.secret("Xq9-not-a-number").apply(lambda s: int(s)))
        p.export("good", "fine")

    remember_secret("Xq9-not-a-number")
    try:
        summary = stack.up(declare)
    finally:
        forget_secrets()
    assert not summary.ok
    (failure,) = summary.failures
    assert failure.startswith(f"{__file__}:")  # the line the callback raised on
    assert ": stack output bad: an apply callback failed: " in failure, failure
    # What it says, the secret it quotes masked.
    said = "ValueError: invalid literal for int() with base 10: '[secret]'"
    assert failure.endswith(said), failure
    assert "Xq9" not in failure
    assert summary.outputs == {"good": "fine"}


@pytest.mark.parametrize(
    ("value", "failure"),
    [
        # A set was shown as "{1, 2}" by the preview, and `up` applied everything, then ended
        # with exit 2 as the state could not record the outputs, naming none of them.
        (
            {80, 443},
            "Type is not JSON serializable: set; export JSON values (dicts, lists, strings, "
            "numbers, booleans, None)",
        ),
        # How the state stores a secret's ciphertext: recorded as it was, every later run of
        # the stack failed on it (`cannot decrypt a secret of stack dev`), and `stack output`
        # showed it as [secret].
        (
            {"a": [{"@secret": "abc"}]},
            "a[0] is a map whose only key is @secret, which is how the state stores a secret; "
            "add another key, or name it otherwise",
        ),
    ],
)
def test_a_stack_output_the_state_cannot_record_is_a_failure_naming_it(
    stack: Stack, value: Any, failure: str
) -> None:
    def declare(p: Program) -> None:
        settings()(p)
        p.export("bad", value)
        p.export("good", "fine")

    for run in (stack.preview, stack.up):
        summary = run(declare)
        assert summary.failures == [f"stack output bad: {failure}"]
        assert summary.outputs == {"good": "fine"}
    assert stack.recorded(urn(CM, "settings")) is not None
    assert stack.preview(settings()).ok


def test_a_callback_that_calls_sys_exit_fails_its_resource_not_the_command(stack: Stack) -> None:
    import sys

    def declare(p: Program) -> None:
        cfg = k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "1"})
        k8s.core.v1.ConfigMap(
            "reader",
            metadata={"name": "reader"},
            data={"a": cfg.metadata["name"].apply(lambda name: sys.exit(7))},
        )
        k8s.core.v1.ConfigMap("other", metadata={"name": "other"}, data={"a": "1"})

    summary = stack.up(declare)

    assert not summary.ok and summary.counts == {"create": 2}
    (failure,) = summary.failures
    # At the callback's line, as another error of a callback is.
    line = declare.__code__.co_firstlineno + 5
    assert failure == (
        f"{__file__}:{line}: {CM} reader: an apply callback failed: RuntimeError: it called "
        "sys.exit(7); return a value instead"
    )


def test_a_refresh_keeps_a_secret_someone_copied_into_another_object_encrypted(
    stack: Stack,
) -> None:
    def declare(p: Program) -> None:
        k8s.core.v1.Secret(
            "creds", metadata={"name": "creds"}, string_data={"token": "Copied-S3cret"}
        )
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"a": "b"})

    stack.up(declare)
    stack.fake.edit("ConfigMap", "settings", {"data.copied": "Copied-S3cret", "data.c": "b"})

    refreshed = stack.refresh()

    assert refreshed.counts == {"in-sync": 1, "drifted": 1}
    settings_ = stack.recorded(urn(CM, "settings"))
    assert settings_.outputs["data"]["copied"] == "Copied-S3cret"  # in memory, unsealed
    # A secret path: what the state store seals (tests/integration/test_secrets_lifecycle.py).
    assert "data.copied" in settings_.secret_paths and "data.c" not in settings_.secret_paths


def test_the_api_servers_warnings_are_the_resources_warnings(stack: Stack) -> None:
    stack.fake.warnings["settings"] = ['unknown field "data2"']

    stack.preview(settings("fast"))
    previewed = [(d.urn, d.message, d.severity) for d in stack.of(Diagnostic)]
    stack.up(settings("fast"))
    applied = [(d.urn, d.message, d.severity) for d in stack.of(Diagnostic)]

    expected = [(urn(CM, "settings"), 'the API server warns: unknown field "data2"', "warning")]
    assert previewed == applied == expected


def test_a_create_over_an_object_that_is_not_this_stacks_fails_and_leaves_it(
    stack: Stack,
) -> None:
    stack.fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                    "data": {"owner": "someone"}}, manager="kubectl")  # fmt: skip
    other = "urn:sw:prod::other::kubernetes:core/v1:ConfigMap::web"
    stack.fake.put({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "web", "annotations": {"stackwright.io/urn": other}},
                    "data": {"owner": "other"}})  # fmt: skip

    def declare(p: Program) -> None:
        settings()(p)
        k8s.core.v1.ConfigMap("web", metadata={"name": "web"}, data={"mode": "mine"})

    previewed = stack.preview(declare)  # the preview says so already, with one LIST
    assert not previewed.ok and len(previewed.failures) == 2
    assert [c for c in stack.fake.calls if c.method == "list"] == [
        Call("list", "ConfigMap", "default")
    ]

    summary = stack.up(declare)

    assert not summary.ok and summary.counts == {}
    # Each at the line declaring its resource (`settings`'s, this test's `declare`).
    settings_at = f"{__file__}:{settings.__code__.co_firstlineno + 2}"
    web_at = f"{__file__}:{declare.__code__.co_firstlineno + 2}"
    assert sorted(summary.failures) == sorted(
        [
            f"{settings_at}: {CM} settings: ConfigMap default/settings already exists (it is not this stack's: "
            "made outside it, or forgotten by `state delete`): adopt it with ResourceOptions(import_='default/settings') or `stackwright "
            "import`, or give this resource another name",
            # Not "adopt it": `import_` refuses an object another stack's resource holds too.
            f"{web_at}: {CM} web: ConfigMap default/web already exists: it is marked as {other}, "
            "of a stack this state backend does not have; remove it from that stack first "
            f"(`stackwright state delete {other}` there keeps the object), or if that stack is "
            "gone, drop the mark: `kubectl annotate configmap web -n default stackwright.io/urn-`, "
            "or give this resource another name",
        ]
    )
    assert stack.fake.writes() == [] and stack.state().resources == []
    found = stack.fake.find("ConfigMap", "settings")
    assert found is not None and found["data"] == {"owner": "someone"}

    # Adopting it is asked for: it is imported, then managed.
    def adopted(p: Program) -> None:
        k8s.core.v1.ConfigMap(
            "settings",
            metadata={"name": "settings"},
            data={"owner": "someone"},
            opts=ResourceOptions(import_="default/settings"),
        )

    assert stack.up(adopted).counts == {"import": 1}


def test_an_object_of_a_file_in_the_way_is_adopted_with_a_transformation_as_its_failure_says(
    stack: Stack, tmp_path: Path
) -> None:
    stack.fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                    "data": {"a": "1"}}, manager="kubectl")  # fmt: skip
    manifest = tmp_path / "app.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: '1'}\n"
    )

    def adopt(obj: dict[str, Any], opts: ResourceOptions) -> ResourceOptions:
        return ResourceOptions(import_=f"default/{obj['metadata']['name']}")

    def declare(p: Program, transformations: list[Any]) -> None:
        k8s.yaml.ConfigFile("app", file=str(manifest), transformations=transformations)

    (failure,) = stack.preview(lambda p: declare(p, [])).failures
    assert (
        "ConfigMap default/settings already exists (it is not this stack's: made outside it, or forgotten by `state delete`): adopt it "
        "with a transformation that returns ResourceOptions(import_='default/settings'), or give "
        "this resource another name"
    ) in failure
    assert stack.up(lambda p: declare(p, [adopt])).counts == {"create": 1, "import": 1}


def test_a_secrets_string_data_is_readable_as_an_output_and_stays_secret(stack: Stack) -> None:
    def declare(p: Program) -> None:
        creds = k8s.core.v1.Secret(
            "creds", metadata={"name": "creds"}, string_data={"pw": "s3cr3t-x"}
        )
        k8s.core.v1.ConfigMap(
            "copy", metadata={"name": "copy"}, data={"pw": creds.string_data["pw"]}
        )

    assert stack.up(declare).ok
    # The server keeps only `data`; the output still has what the program gave.
    creds = stack.recorded(urn(SECRET, "creds"))
    assert creds.outputs["stringData"] == {"pw": "s3cr3t-x"}
    assert "stringData" in creds.secret_paths
    copy = stack.recorded(urn(CM, "copy"))
    assert copy.inputs["data"] == {"pw": "s3cr3t-x"} and "data.pw" in copy.secret_paths


def test_a_provider_that_reaches_the_same_cluster_replaces_nothing(tmp_path: Path) -> None:
    """Moving a resource from the stack's default provider to an explicit one for the same
    cluster, or naming that cluster by another context, keeps the object (an update
    through the new provider at most), as Pulumi's provider does when the cluster is the
    same: a replacement would delete it first, taking it down for nothing."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home = FakeCluster(name="home")
    stack = Stack(backend, home, factory=home.factory({"home-admin": home, "home-ci": home}))

    def declare(context: str | None) -> Declare:
        def program(p: Program) -> None:
            provider = k8s.Provider("explicit", context=context) if context else None
            opts = ResourceOptions(provider=provider)
            k8s.core.v1.ConfigMap("cm", metadata={"name": "cm"}, data={"a": "1"}, opts=opts)

        return program

    try:
        assert stack.up(declare(None)).ok
        uid = home.find("ConfigMap", "cm")["metadata"]["uid"]  # type: ignore[index]
        for context in ("home-admin", "home-ci"):
            summary = stack.up(declare(context))
            assert summary.ok, summary.failures
            assert not any(op in ("replace", "delete") for op, _ in stack.started())
            assert home.calls_to("delete") == []
        assert home.find("ConfigMap", "cm")["metadata"]["uid"] == uid  # type: ignore[index]
        assert ("same", "cm") in stack.started() or ("update", "cm") in stack.started()
    finally:
        backend.close()


def _moved_within_the_cluster(stack: Stack, declare: Callable[[str | None], Declare]) -> None:
    """Up through the stack's default provider, then preview and up through `home-admin`,
    another provider of the same cluster: nothing replaced or deleted."""
    assert stack.up(declare(None)).ok
    for run in (stack.preview, stack.up):
        summary = run(declare("home-admin"))
        assert summary.ok, summary.failures
        assert not any(op in ("replace", "delete") for op, _ in stack.started())


def test_a_patch_and_a_release_moved_to_a_provider_of_the_same_cluster_are_not_replaced(
    tmp_path: Path,
) -> None:
    """As an object moved so: a Patch is applied again through the new provider (a replace
    gave its fields up and took them again), a Helm release upgraded (a replace uninstalled
    it and installed it again), where the preview said `+- replace (its provider changed)`."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home = FakeCluster(name="home")
    home.put(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "theirs"}, "data": {"x": "1"}},
        manager="kubectl",
    )
    stack = Stack(backend, home, factory=home.factory({"home-admin": home}))
    chart = Path(__file__).resolve().parents[1] / "data" / "charts" / "webapp"

    def declare(context: str | None) -> Declare:
        def program(p: Program) -> None:
            provider = k8s.Provider("explicit", context=context) if context else None
            opts = ResourceOptions(provider=provider)
            k8s.core.v1.ConfigMapPatch(
                "tune", metadata={"name": "theirs"}, data={"y": "2"}, opts=opts
            )
            k8s.helm.Release("web", chart=str(chart), namespace="shop", opts=opts)

        return program

    try:
        _moved_within_the_cluster(stack, declare)
        assert home.calls_to("delete", "release_uninstall") == []
        assert home.find("ConfigMap", "theirs")["data"] == {"x": "1", "y": "2"}  # type: ignore[index]
    finally:
        backend.close()


def test_a_component_whose_children_move_to_a_provider_of_the_same_cluster_is_not_replaced(
    tmp_path: Path,
) -> None:
    """A component given a provider (`providers=[p]`, for its children) has no object: its
    provider changing is no move to another cluster, and it is not replaced, which the
    preview said (`+- replace acme:App app (its provider changed (another cluster,
    perhaps))`) while its children, moved alike, stayed as they were."""
    backend = open_backend("file://" + str(tmp_path / "state.db"))
    backend.create_stack(PROJECT, STACK)
    home = FakeCluster(name="home")
    stack = Stack(backend, home, factory=home.factory({"home-admin": home}))

    def declare(context: str | None) -> Declare:
        def program(p: Program) -> None:
            provider = k8s.Provider("explicit", context=context) if context else None
            app = ComponentResource(
                "acme:App", "app", opts=ResourceOptions(providers=[provider] if provider else None)
            )
            k8s.core.v1.ConfigMap(
                "cm", metadata={"name": "cm"}, data={"a": "1"}, opts=ResourceOptions(parent=app)
            )

        return program

    try:
        _moved_within_the_cluster(stack, declare)
        assert home.calls_to("delete") == []
        assert stack.recorded("urn:sw:dev::shop::acme:App::app").provider.endswith("::explicit")
        assert stack.up(declare("home-admin")).counts == {"same": 3}
    finally:
        backend.close()


def test_the_unprotect_advice_quotes_a_urn_the_shell_would_expand() -> None:
    """A chart's child has `$` in its URN type: pasted unquoted, the shell would expand
    `$kubernetes` to nothing and unprotect no resource."""
    from stackwright.engine.records import protected

    child = "urn:sw:dev::shop::kubernetes:helm.sh/v4:Chart$kubernetes:core/v1:ConfigMap::cfg"
    assert f"`stackwright state unprotect '{child}'`" in protected(child)


def test_a_step_that_fails_before_its_diff_claims_no_operation_it_was_not_planned_for(
    stack: Stack,
) -> None:
    """A resource that fails before its step is planned (an input raises, its provider or
    cluster fails) was reported as an update if recorded, else a create. A recorded one's
    operation needs its diff: its failure is an error on it, no step; a new one's is known
    from the program alone, an import's too."""
    assert stack.up(settings()).ok
    stack.fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "theirs"}})

    def broken(_: str) -> str:
        raise ValueError("no mode for this cluster")

    def declare(p: Program) -> None:
        mode = Output.from_input("x").apply(broken)
        k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": mode})
        k8s.core.v1.ConfigMap("new", metadata={"name": "new"}, data={"mode": mode})
        k8s.core.v1.ConfigMap(
            "theirs",
            metadata={"name": "theirs"},
            data={"mode": mode},
            opts=ResourceOptions(import_="default/theirs"),
        )

    for run in (stack.preview, stack.up):
        summary = run(declare)

        assert len(summary.failures) == 3
        steps = [
            (type(e).__name__, e.step.op.value, e.step.urn)
            for e in stack.events
            if isinstance(e, StepStarted | StepDone)
        ]
        assert sorted(steps) == [
            ("StepDone", "create", urn(CM, "new")),
            ("StepDone", "import", urn(CM, "theirs")),
            ("StepStarted", "create", urn(CM, "new")),
            ("StepStarted", "import", urn(CM, "theirs")),
        ]
        errors = [(d.urn, d.message) for d in stack.of(Diagnostic) if d.severity == "error"]
        raised = f"{__file__}:{broken.__code__.co_firstlineno + 1}"
        said = (
            f"{raised}: {CM} settings: an apply callback failed: ValueError: no mode for this "
            "cluster"
        )
        assert errors == [(urn(CM, "settings"), said)]


def test_an_adoption_a_crash_cut_short_is_finished_by_the_next_up_and_only_that_one_adopts(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The apply that takes an adopted object's fields over (`adopting`) is the import's and,
    after a crash that left the import pending, the next `up`'s; a preview says so and
    writes nothing; once done, the resource is in sync and later updates adopt nothing."""
    # Its apply landed (the object carries the marks), its takeover did not.
    stack.fake.put(
        stack.fake.stamp(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
             "data": {"mode": "fast"}},
            stack=STACK, urn=urn(CM, "settings"), namespace="default",
        )
    )  # fmt: skip
    adopting: list[bool] = []
    applied = stack.fake.apply

    async def apply(desired: Any, **kwargs: Any) -> Any:
        adopting.append(kwargs.get("adopting", False))
        return await applied(desired, **kwargs)

    monkeypatch.setattr(stack.fake, "apply", apply)
    imported = ResourceState(
        urn=urn(CM, "settings"),
        type=CM,
        id="default/settings",
        inputs={"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "default"}, "data": {"mode": "fast"}},
    )  # fmt: skip
    with stack.backend.begin_operation(PROJECT, STACK, kind="up") as operation:
        operation.begin(1, Op.IMPORT, imported)  # a crashed `up` importing it
    adopt = settings("fast", import_="default/settings")

    before = stack.state()
    assert stack.preview(adopt).counts == {"update": 1}
    assert [d.message for d in stack.of(Diagnostic) if "adopting" in d.message] == [
        "the run adopting it stopped before it took its fields over: `up` applies it again"
    ]
    assert stack.fake.writes() == [] and stack.state() == before and adopting == []

    assert stack.up(adopt).counts == {"update": 1}
    assert [d.message for d in stack.of(Diagnostic) if "adopting" in d.message] == [
        "the run adopting it stopped before it took its fields over: applying it again"
    ]
    assert adopting == [True]
    assert stack.recorded(urn(CM, "settings")).init_errors == ()
    assert stack.preview(adopt).counts == {"same": 1}  # `--expect-no-changes` holds
    assert stack.up(settings("slow")).counts == {"update": 1}
    assert adopting == [True, False]
