"""Planning one resource: which step, which field changes, and why a replacement."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from stackwright.engine.plan import (
    ABSENT,
    FieldChange,
    Intent,
    Step,
    diff,
    forcing_rules,
    plan,
    plan_delete,
    recorded_options,
    with_ignored,
)
from stackwright.model import Op, ResourceState
from stackwright.sdk.output import UNKNOWN

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"}},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]},
        },
    },
}
SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
}


def state(obj: dict[str, Any], **options: Any) -> ResourceState:
    urn = f"urn:sw:dev::p::kubernetes:{obj['apiVersion']}:{obj['kind']}::web"
    return ResourceState(urn=urn, type=obj["kind"], inputs=obj, **options)


def changed(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of `obj` with the dotted `path` set to `value`."""
    result = copy.deepcopy(obj)
    target = result
    *parents, last = path.split(".")
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return result


def step_for(old: dict[str, Any], new: dict[str, Any], **intent: Any) -> Step:
    return plan(Intent(state(new), **intent), state(old))


def paths(step: Step) -> list[str]:
    return [c.path for c in step.changes]


# --- the operation ----------------------------------------------------------------------------


def test_create_when_not_in_the_state() -> None:
    step = plan(Intent(state(SERVICE)), None)
    assert step.op is Op.CREATE
    assert step.old is None and step.new == state(SERVICE)
    assert paths(step) == ["apiVersion", "kind", "metadata", "spec"]
    assert all(c.kind == "add" for c in step.changes)
    # An old object left to delete after a replacement does not count as existing.
    pending = plan(Intent(state(SERVICE)), state(SERVICE, delete_pending=True))
    assert pending.op is Op.CREATE


def test_same_when_nothing_changed() -> None:
    step = step_for(DEPLOYMENT, copy.deepcopy(DEPLOYMENT))
    assert step.op is Op.SAME
    assert step.changes == ()
    assert step.type == "Deployment"


def test_a_helm_release_given_another_name_or_namespace_is_replaced_creating_first() -> None:
    """Helm knows a release by its namespace and name (its id): renamed (an alias rename
    renames it, its name being the resource's) or moved, another release is installed and
    this one uninstalled. The preview said `~ update name: "rel" → "rel2"` while `up`
    installed rel2 and uninstalled rel."""
    release = "kubernetes:helm.sh/v4:Release"
    urn = f"urn:sw:dev::p::{release}::rel2"

    def recorded(namespace: str, name: str, **values: Any) -> ResourceState:
        inputs = {"name": name, "namespace": namespace, "chart": "/charts/web", "values": values}
        return ResourceState(urn=urn, type=release, id=f"{namespace}/{name}", inputs=inputs)

    for old in (recorded("default", "rel"), recorded("web", "rel2")):
        step = plan(Intent(recorded("default", "rel2")), old)
        assert step.op is Op.REPLACE and not step.delete_before_replace
        assert step.replace_reasons == (
            f"another Helm release: {old.id} → default/rel2 (Helm knows a release by its "
            "namespace and name)",
        )
    upgraded = plan(Intent(recorded("default", "rel2", replicas=2)), recorded("default", "rel2"))
    assert upgraded.op is Op.UPDATE


def test_update_for_a_mutable_field() -> None:
    step = step_for(DEPLOYMENT, changed(DEPLOYMENT, "spec.replicas", 3))
    assert step.op is Op.UPDATE
    assert step.changes == (FieldChange("spec.replicas", 2, 3),)
    assert step.replace_reasons == ()


def test_options_only_the_state_keeps_are_a_same_step_that_records_them() -> None:
    """No object carries dependencies, protect, retain_on_delete or parent: a change of
    them alone sends nothing (Pulumi's same step) and `recorded_options` gives the old
    record with the new options; another provider (perhaps another cluster) is a replace,
    deleting first."""
    old = replace(state(DEPLOYMENT), outputs={"metadata": {"uid": "u1"}})
    for option in (
        {"protect": True},
        {"retain_on_delete": True},
        {"parent": "urn:sw:dev::p::my:Comp::app"},
        {"dependencies": ("urn:sw:dev::p::x:y:Z::db",)},
    ):
        step = plan(Intent(state(DEPLOYMENT, **option)), old)
        assert step.op is Op.SAME and step.changes == ()
        assert recorded_options(step) == replace(old, **option)
    moved = plan(
        Intent(state(DEPLOYMENT, provider="urn:sw:dev::p::stackwright:providers:kubernetes::b")),
        old,
    )
    assert moved.op is Op.REPLACE and moved.changes == () and moved.delete_before_replace
    assert moved.replace_reasons == (
        "its provider changed (default → b; another cluster, perhaps)",
    )
    assert recorded_options(moved) is None
    # Nothing new to record: a plain same step. Dependencies are compared as a set.
    assert recorded_options(plan(Intent(state(DEPLOYMENT)), old)) is None
    deps = ("urn:a", "urn:b")
    same = plan(
        Intent(state(DEPLOYMENT, dependencies=deps)),
        state(DEPLOYMENT, dependencies=deps[::-1]),
    )
    assert same.op is Op.SAME and recorded_options(same) is None
    # A field change with new options is an update, which records the options anyway.
    updated = plan(Intent(state(changed(DEPLOYMENT, "spec.replicas", 3), protect=True)), old)
    assert updated.op is Op.UPDATE and recorded_options(updated) is None


@pytest.mark.parametrize(
    ("old", "path", "value", "reasons"),
    [
        (
            DEPLOYMENT,
            "spec.selector",
            {"matchLabels": {"app": "other"}},
            ["spec.selector: a Deployment's selector is immutable"],
        ),
        (
            SERVICE,
            "spec.clusterIP",
            "None",
            ["spec.clusterIP: a Service's clusterIP cannot change once set"],
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s"},
                "type": "Opaque",
            },
            "type",
            "kubernetes.io/tls",
            ["type: a Secret's type is immutable"],
        ),
        (
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "rb"},
                "roleRef": {"kind": "Role", "name": "a", "apiGroup": "rbac.authorization.k8s.io"},
            },
            "roleRef.name",
            "b",
            ["roleRef: a RoleBinding's roleRef is immutable"],
        ),
    ],
)
def test_replace_for_an_immutable_field(
    old: dict[str, Any], path: str, value: Any, reasons: list[str]
) -> None:
    step = step_for(old, changed(old, path, value))
    assert step.op is Op.REPLACE
    assert list(step.replace_reasons) == reasons


def test_replace_when_the_name_changes_creates_first() -> None:
    step = step_for(DEPLOYMENT, changed(DEPLOYMENT, "metadata.name", "web2"))
    assert step.op is Op.REPLACE
    assert step.replace_reasons == ("metadata.name: the name identifies the object",)
    # The new object has another name, so both can exist at once.
    assert step.delete_before_replace is False
    moved = step_for(DEPLOYMENT, changed(DEPLOYMENT, "metadata.namespace", "other"))
    assert moved.replace_reasons == ("metadata.namespace: the namespace identifies the object",)
    assert moved.delete_before_replace is False


def test_delete_before_replace_when_the_name_is_fixed() -> None:
    new = changed(DEPLOYMENT, "spec.selector", {"matchLabels": {"app": "v2"}})
    assert step_for(DEPLOYMENT, new).delete_before_replace is True
    assert step_for(DEPLOYMENT, new, auto_named=True).delete_before_replace is False
    forced = step_for(DEPLOYMENT, new, auto_named=True, delete_before_replace=True)
    assert forced.delete_before_replace is True


def test_replace_on_changes() -> None:
    new = changed(DEPLOYMENT, "spec.template.spec.containers.0.image", "nginx:1.30")
    assert step_for(DEPLOYMENT, new).op is Op.UPDATE
    by_path = step_for(
        DEPLOYMENT, new, replace_on_changes=["spec.template.spec.containers[*].image"]
    )
    assert by_path.op is Op.REPLACE
    assert by_path.replace_reasons == (
        "spec.template.spec.containers[*].image: replace_on_changes lists it",
    )
    elsewhere = step_for(DEPLOYMENT, new, replace_on_changes=["spec.template.metadata"])
    assert elsewhere.op is Op.UPDATE


def test_pod_images_update_but_other_container_fields_replace() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1", "command": ["sleep", "1"]}]},
    }
    image = step_for(pod, changed(pod, "spec.containers.0.image", "busybox:2"))
    assert image.op is Op.UPDATE
    command = step_for(pod, changed(pod, "spec.containers.0.command", ["sleep", "2"]))
    assert command.op is Op.REPLACE
    assert command.replace_reasons[0].startswith("spec: a Pod's spec is immutable except")


def test_statefulset_spec_is_immutable_except_listed_fields() -> None:
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"a": "b"}}},
    }
    assert step_for(sts, changed(sts, "spec.replicas", 3)).op is Op.UPDATE
    assert step_for(sts, changed(sts, "spec.serviceName", "db2")).op is Op.REPLACE


def test_a_whole_new_map_holding_an_immutable_field_is_looked_into() -> None:
    old = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}
    same_ip = {**old, "spec": {"ports": [{"port": 80}]}}
    new_ip = {**old, "spec": {"clusterIP": "None"}}
    assert step_for(old, same_ip).op is Op.UPDATE
    assert step_for(old, new_ip).op is Op.REPLACE


def test_an_immutable_configmap_is_replaced_to_change_its_data() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    sealed = {**cm, "immutable": True}
    assert step_for(cm, changed(cm, "data.a", "2")).op is Op.UPDATE
    step = step_for(sealed, changed(sealed, "data.a", "2"))
    assert step.op is Op.REPLACE
    assert step.replace_reasons == ("data: the ConfigMap is immutable (immutable: true)",)
    assert forcing_rules(diff(cm, sealed), sealed, ()) == []
    assert step.forcing == ("data.a",)


# --- ignore_changes --------------------------------------------------------------------------------


def test_ignore_changes_keeps_the_recorded_value() -> None:
    step = step_for(
        DEPLOYMENT, changed(DEPLOYMENT, "spec.replicas", 5), ignore_changes=["spec.replicas"]
    )
    assert step.op is Op.SAME
    assert step.new is not None and step.new.inputs["spec"]["replicas"] == 2
    other = changed(changed(DEPLOYMENT, "spec.replicas", 5), "metadata.labels", {"app": "x"})
    step = step_for(DEPLOYMENT, other, ignore_changes=["spec.replicas"])
    assert step.op is Op.UPDATE
    assert paths(step) == ["metadata.labels.app"]


def test_an_ignored_name_or_namespace_keeps_the_recorded_objects_id() -> None:
    moved = changed(changed(DEPLOYMENT, "metadata.namespace", "other"), "metadata.name", "api")
    for ignore in (["metadata.name", "metadata.namespace"], ["metadata"]):
        step = plan(
            Intent(state(moved, id="other/api"), ignore_changes=ignore),
            state(DEPLOYMENT, id="apps/web"),
        )
        assert (step.op, step.new and step.new.id) == (Op.SAME, "apps/web"), ignore
    renamed = plan(
        Intent(state(moved, id="other/api"), ignore_changes=["metadata.namespace"]),
        state(DEPLOYMENT, id="apps/web"),
    )
    assert renamed.op is Op.REPLACE and renamed.new and renamed.new.id == "apps/api"


def test_ignore_changes_paths() -> None:
    old = {
        "metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "t1", "keep": "x"}},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
    }
    desired = {
        "metadata": {"annotations": {"keep": "y"}},
        "spec": {"containers": [{"name": "a", "image": "a:2"}, {"name": "b", "image": "b:2"}]},
        "extra": {"added": True},
    }
    result = with_ignored(
        desired,
        old,
        [
            'metadata.annotations["kubectl.kubernetes.io/restartedAt"]',
            "spec.containers[*].image",
            "extra.added",  # not recorded: removed from the desired object
        ],
    )
    assert result == {
        "metadata": {"annotations": {"keep": "y", "kubectl.kubernetes.io/restartedAt": "t1"}},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
        "extra": {},
    }
    # The desired object itself is left alone.
    assert desired["spec"]["containers"][0]["image"] == "a:2"
    # A recorded list item the desired list does not have is not invented.
    shorter = with_ignored({"spec": {}}, old, ["spec.containers[1].image"])
    assert shorter == {"spec": {}}


def test_paths_to_keys_holding_dots_work_quoted_or_not() -> None:
    old = {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "t1"}}}
    new = {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "t2"}}}
    for path in (
        'metadata.annotations["kubectl.kubernetes.io/restartedAt"]',
        "metadata.annotations.kubectl.kubernetes.io/restartedAt",
    ):
        assert with_ignored(new, old, [path]) == old, path
    tls = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"}}
    with_data = {**tls, "data": {"tls.crt": "A", "tls.key": "B"}}
    for path in ('data["tls.crt"]', "data.tls.crt"):
        rotated = step_for(
            with_data,
            changed(with_data, "data", {"tls.crt": "C", "tls.key": "B"}),
            replace_on_changes=[path],
        )
        assert rotated.op is Op.REPLACE, path
        key_only = step_for(
            with_data,
            changed(with_data, "data", {"tls.crt": "A", "tls.key": "D"}),
            replace_on_changes=[path],
        )
        assert key_only.op is Op.UPDATE, path
        # A whole new `data` map holding the field.
        added = step_for(tls, with_data, replace_on_changes=[path])
        assert added.op is Op.REPLACE, path


# --- diff ----------------------------------------------------------------------------------------------


def test_diff_paths_golden() -> None:
    old = {
        "metadata": {"labels": {"app": "web", "app.kubernetes.io/part-of": "shop"}, "gone": 1},
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.29", "ports": [{"containerPort": 80}]},
                        {"name": "log", "image": "busybox"},
                    ],
                    "volumes": [{"name": "a"}],
                }
            },
        },
    }
    new = {
        "metadata": {"labels": {"app": "web", "app.kubernetes.io/part-of": "store"}},
        "spec": {
            "replicas": 3,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.30", "ports": [{"containerPort": 8080}]},
                        {"name": "log", "image": "busybox", "args": ["-v"]},
                    ],
                    "volumes": [{"name": "a"}, {"name": "b"}],
                }
            },
            "paused": False,
        },
    }
    assert [(c.path, c.kind) for c in diff(old, new)] == [
        ("metadata.labels.app.kubernetes.io/part-of", "update"),
        ("metadata.gone", "delete"),
        ("spec.replicas", "update"),
        ("spec.template.spec.containers[0].image", "update"),
        ("spec.template.spec.containers[0].ports[0].containerPort", "update"),
        ("spec.template.spec.containers[1].args", "add"),
        # Lists of different lengths change as a whole.
        ("spec.template.spec.volumes", "update"),
        ("spec.paused", "add"),
    ]
    # The keys say exactly which: a key may hold dots.
    assert diff(old, new)[0].keys == ("metadata", "labels", "app.kubernetes.io/part-of")
    assert diff(old, new)[3].keys == ("spec", "template", "spec", "containers", 0, "image")


def test_diff_values_and_kinds() -> None:
    changes = diff({"a": 1, "b": {"c": 2}}, {"b": {"c": 2}, "d": [1]})
    assert changes == [FieldChange("a", 1, ABSENT), FieldChange("d", ABSENT, [1])]
    assert [c.kind for c in changes] == ["delete", "add"]
    assert repr(ABSENT) == "(absent)"
    assert diff([1, 2], [1, 2]) == []
    assert diff("x", "y") == [FieldChange("", "x", "y")]
    # JSON tells true from 1.
    assert diff({"a": 1}, {"a": True}) == [FieldChange("a", 1, True)]
    assert diff({"a": 1}, {"a": 1.0}) == []


def test_diff_treats_unknown_as_a_change() -> None:
    assert diff({"spec": {"ip": "10.0.0.1"}}, {"spec": {"ip": UNKNOWN}}) == [
        FieldChange("spec.ip", "10.0.0.1", UNKNOWN)
    ]
    assert diff({"a": {"b": 1}}, {"a": UNKNOWN}) == [FieldChange("a", {"b": 1}, UNKNOWN)]
    assert diff(UNKNOWN, UNKNOWN) == [FieldChange("", UNKNOWN, UNKNOWN)]
    unknown = changed(DEPLOYMENT, "spec.replicas", UNKNOWN)
    assert step_for(DEPLOYMENT, unknown).op is Op.UPDATE


def test_plan_delete() -> None:
    step = plan_delete(state(SERVICE))
    assert step.op is Op.DELETE
    assert step.new is None and step.old == state(SERVICE)
    assert paths(step) == ["apiVersion", "kind", "metadata", "spec"]
    assert all(c.kind == "delete" for c in step.changes)
    assert step.type == "Service"


def test_a_namespace_written_out_that_names_the_same_object_is_an_update() -> None:
    """The object's id (namespace/name) says which object it is: a namespace now written
    where the provider placed it anyway changes no identity."""
    implicit = copy.deepcopy(DEPLOYMENT)
    del implicit["metadata"]["namespace"]
    old = replace(state(implicit), id="apps/web")
    same = plan(Intent(replace(state(DEPLOYMENT), id="apps/web")), old)
    assert same.op is Op.UPDATE and not same.replace_reasons
    moved = replace(state(changed(DEPLOYMENT, "metadata.namespace", "o")), id="o/web")
    assert plan(Intent(moved), old).replace_reasons == (
        "metadata.namespace: the namespace identifies the object",
    )
