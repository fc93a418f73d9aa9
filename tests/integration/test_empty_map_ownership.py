"""An empty map applied to a built-in object, as a real API server treats it: the object's Go
type drops it (`omitempty`: `data: {}` is stored and read back as no `data`), while its
applier owns it (structured-merge-diff's ToFieldSet: `f:data: {}`). So whoever adds the map
back adds a field that applier owns: another applier conflicts, a patch takes it over.
Empty lists alike (`env: []`), but that ToFieldSet records an empty list only when it is
atomic (`command: []`), and a list field without `omitempty` comes back null (`rules: []`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = pytest.mark.integration

NS = "emptymap"


@pytest.fixture(scope="module")
def ns(cluster: Any) -> str:
    cluster.kubectl("create", "namespace", NS)
    return NS


def configmap(name: str, data: dict[str, str] | None, **meta: Any) -> str:
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NS, **meta},
    }
    if data is not None:
        obj["data"] = data
    return json.dumps(obj)


def apply(cluster: Any, manifest: str, manager: str, *flags: str, check: bool = True) -> Any:
    return cluster.kubectl(
        "apply", "--server-side", f"--field-manager={manager}", *flags, "-f", "-",
        input=manifest, check=check,
    )  # fmt: skip


def get(cluster: Any, name: str, kind: str = "configmap") -> dict[str, Any]:
    out = cluster.kubectl("get", kind, name, "-n", NS, "-o", "json", "--show-managed-fields")
    obj: dict[str, Any] = json.loads(out.stdout)
    return obj


def fields(obj: dict[str, Any]) -> dict[str, Any]:
    """Each manager's fieldsV1, by manager name."""
    return {m["manager"]: m.get("fieldsV1", {}) for m in obj["metadata"].get("managedFields", [])}


def test_an_applied_empty_map_is_not_stored_but_owned_and_adding_it_back_conflicts(
    cluster: Any, ns: str
) -> None:
    apply(cluster, configmap("applied", {}, annotations={}), "first")
    obj = get(cluster, "applied")
    assert "data" not in obj and "annotations" not in obj["metadata"], obj
    assert fields(obj)["first"] == {"f:data": {}, "f:metadata": {"f:annotations": {}}}

    # The map is added back by the second applier: `.data` is a field the first owns.
    refused = apply(cluster, configmap("applied", {"x": "y"}), "second", check=False)
    assert refused.returncode == 1, refused.stdout
    assert 'conflict with "first"' in refused.stderr and ".data" in refused.stderr, refused.stderr
    assert "data" not in get(cluster, "applied")

    apply(cluster, configmap("applied", {"x": "y"}), "second", "--force-conflicts")
    obj = get(cluster, "applied")
    assert obj["data"] == {"x": "y"}
    assert fields(obj)["first"] == {"f:metadata": {"f:annotations": {}}}
    assert fields(obj)["second"] == {"f:data": {"f:x": {}}}
    # The map is there now: the first's `data: {}` changes nothing, owns it again and
    # prunes none of the second's keys; withdrawing it leaves them too.
    apply(cluster, configmap("applied", {}, annotations={}), "first")
    obj = get(cluster, "applied")
    assert obj["data"] == {"x": "y"}
    assert fields(obj)["first"] == {"f:data": {}, "f:metadata": {"f:annotations": {}}}
    apply(cluster, configmap("applied", None), "first")
    obj = get(cluster, "applied")
    assert obj["data"] == {"x": "y"} and "first" not in fields(obj)


def test_a_patch_filling_an_applied_empty_map_takes_the_map_over(cluster: Any, ns: str) -> None:
    """An update (kubectl patch, edit, rollout restart) is never refused: it takes the map
    it adds, `.` in its entry, from the applier of `data: {}`."""
    apply(cluster, configmap("patched", {}), "first")
    patch = json.dumps({"data": {"g": "1"}})
    cluster.kubectl(
        "patch", "configmap", "patched", "-n", NS, "--type=merge",
        "--field-manager=filler", "-p", patch,
    )  # fmt: skip
    obj = get(cluster, "patched")
    assert obj["data"] == {"g": "1"}
    assert fields(obj) == {"filler": {"f:data": {".": {}, "f:g": {}}}}
    # Created with an empty map by an update (kubectl create), it is not there to own.
    cluster.kubectl("create", "-f", "-", input=configmap("created", {}))
    obj = get(cluster, "created")
    assert "data" not in obj and "f:data" not in json.dumps(fields(obj)), obj


def test_an_empty_map_in_a_keyed_list_item_conflicts_alike(cluster: Any, ns: str) -> None:
    """A container's `resources: {limits: {}}`: the empty struct stays, the empty map of
    limits goes and is its applier's, so another applier's limits for that container add it."""
    container = {"name": "web", "image": "nginx:1.29", "resources": {"limits": {}}}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "limited", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "limited"}},
            "template": {
                "metadata": {"labels": {"app": "limited"}},
                "spec": {"containers": [container]},
            },
        },
    }
    apply(cluster, json.dumps(deployment), "first")
    out = cluster.kubectl("get", "deployment", "limited", "-n", NS, "-o", "json")
    assert json.loads(out.stdout)["spec"]["template"]["spec"]["containers"][0]["resources"] == {}
    limits = {"name": "web", "resources": {"limits": {"cpu": "1"}}}
    other = {**deployment, "spec": {"template": {"spec": {"containers": [limits]}}}}
    refused = apply(cluster, json.dumps(other), "second", check=False)
    assert refused.returncode == 1, refused.stdout
    at = '.spec.template.spec.containers[name="web"].resources.limits'
    assert 'conflict with "first"' in refused.stderr and at in refused.stderr, refused.stderr


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "tags": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                    "items": {"type": "array", "items": {"type": "string"}},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


@pytest.mark.parametrize("how", ["create", "apply"])
def test_a_custom_objects_metadata_drops_its_empty_maps_and_its_body_keeps_them(
    cluster: Any, ns: str, how: str
) -> None:
    """A custom object is stored as the JSON it is, but for its metadata, which the API
    server round-trips through ObjectMeta (apiextensions' objectmeta.SetObjectMeta, whose
    unstructured converter drops an omitempty empty map or list): `labels: {}` and
    `finalizers: []` go, `tags: {}` and `items: []` stay."""
    cluster.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(CRD))
    cluster.kubectl(
        "wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=30s"
    )
    gadget = {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {
            "name": how,
            "namespace": NS,
            "labels": {},
            "annotations": {},
            "finalizers": [],
        },
        "spec": {"tags": {}, "items": []},
    }
    if how == "create":
        cluster.kubectl("create", "-f", "-", input=json.dumps(gadget))
    else:
        apply(cluster, json.dumps(gadget), "first")
    out = cluster.kubectl("get", "gadget", how, "-n", NS, "-o", "json", "--show-managed-fields")
    obj = json.loads(out.stdout)
    assert not {"labels", "annotations", "finalizers"} & set(obj["metadata"]), obj
    assert obj["spec"] == {"tags": {}, "items": []}


def deployment(name: str, container: dict[str, Any], **pod: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS, "finalizers": [], "ownerReferences": []},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [container], **pod},
            },
        },
    }


def test_applied_empty_lists_are_not_stored_and_only_an_atomic_one_is_owned(
    cluster: Any, ns: str
) -> None:
    """Every list field here is `omitempty`, so none is stored. ToFieldSet records an empty
    atomic list (`command`) as a member and no empty granular one (`env`, keyed by name): a
    second applier adding commands conflicts with the first, adding env does not; a patch
    adding ports adds the list, `.` in its entry, as there was none to change."""
    container = {"name": "web", "image": "nginx:1.29", "command": []}
    container.update(env=[], ports=[], volumeMounts=[])
    apply(
        cluster,
        json.dumps(deployment("listed", container, volumes=[], imagePullSecrets=[])),
        "first",
    )
    obj = get(cluster, "listed", "deployment")
    assert not {"finalizers", "ownerReferences"} & set(obj["metadata"]), obj["metadata"]
    pod = obj["spec"]["template"]["spec"]
    assert not {"volumes", "imagePullSecrets"} & set(pod), pod
    assert not {"command", "env", "ports", "volumeMounts"} & set(pod["containers"][0]), pod
    spec = fields(obj)["first"]["f:spec"]["f:template"]["f:spec"]
    assert not {"f:volumes", "f:imagePullSecrets"} & set(spec), spec
    assert spec["f:containers"]['k:{"name":"web"}'] == {
        ".": {}, "f:command": {}, "f:image": {}, "f:name": {},
    }  # fmt: skip
    assert "f:metadata" not in fields(obj)["first"]  # no finalizers, no ownerReferences

    def other(**fields_: Any) -> str:
        containers = [{"name": "web", **fields_}]
        spec_ = {"template": {"spec": {"containers": containers}}}
        return json.dumps({**deployment("listed", {}), "spec": spec_})

    apply(cluster, other(env=[{"name": "A", "value": "1"}]), "second")
    refused = apply(cluster, other(command=["sleep"]), "third", check=False)
    assert refused.returncode == 1, refused.stdout
    at = '.spec.template.spec.containers[name="web"].command'
    assert 'conflict with "first"' in refused.stderr and at in refused.stderr, refused.stderr

    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "ports": [
        {"containerPort": 80}]}]}}}}  # fmt: skip
    cluster.kubectl(
        "patch", "deployment", "listed", "-n", NS, "--field-manager=filler", "-p",
        json.dumps(patch),
    )  # fmt: skip
    obj = get(cluster, "listed", "deployment")
    entry = fields(obj)["filler"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert "." in entry['k:{"name":"web"}']["f:ports"], entry
    assert obj["spec"]["template"]["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]


@pytest.mark.parametrize("how", ["create", "apply"])
def test_an_empty_list_whose_field_go_prints_comes_back_null(
    cluster: Any, ns: str, how: str
) -> None:
    """A Role's `rules` is `json:"rules"`, no omitempty: protobuf storage has no empty list,
    so it comes back nil, and Go prints null. An applier owns it (an atomic list)."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": f"none-{how}", "namespace": NS, "finalizers": []},
        "rules": [],
    }
    if how == "create":
        cluster.kubectl("create", "-f", "-", input=json.dumps(role))
    else:
        apply(cluster, json.dumps(role), "first")
    obj = get(cluster, f"none-{how}", "role")
    assert obj["rules"] is None and "finalizers" not in obj["metadata"], obj
    if how == "apply":
        assert fields(obj)["first"] == {"f:rules": {}}
        version = obj["metadata"]["resourceVersion"]
        apply(cluster, json.dumps(role), "first")  # the same again: no change, no write
        assert get(cluster, f"none-{how}", "role")["metadata"]["resourceVersion"] == version
