"""The published OpenAPI documents have the shapes kubectl reads from kube-apiserver's."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from stackwright.localcluster.openapi import OpenAPI
from stackwright.localcluster.registry import Registry, ResourceType

DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
DEPLOYMENT_GVK = {"group": "apps", "kind": "Deployment", "version": "v1"}
WIDGET_GVK = {"group": "example.com", "kind": "Widget", "version": "v1"}
SCALE_GVK = {"group": "autoscaling", "kind": "Scale", "version": "v1"}
WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A widget.",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size", "note"],
            "properties": {
                "size": {"type": "integer", "description": "How big."},
                "note": {"type": "string", "nullable": True},
                "port": {
                    "x-kubernetes-int-or-string": True,
                    "anyOf": [{"type": "integer"}, {"type": "string"}],
                },
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


def widget(version: str = "v1") -> ResourceType:
    return ResourceType(
        group="example.com",
        version=version,
        kind="Widget",
        plural="widgets",
        namespaced=True,
        subresources=frozenset({"status", "scale"}),
        schema=WIDGET_SCHEMA,
        crd="widgets.example.com",
    )


@pytest.fixture(scope="module")
def builtin() -> OpenAPI:
    return OpenAPI(Registry())


@pytest.fixture
def with_widget() -> OpenAPI:
    registry = Registry()
    registry.add(widget())
    return OpenAPI(registry)


def v3(openapi: OpenAPI, group: str, version: str) -> dict[str, Any]:
    data = openapi.v3_document(group, version)
    assert data is not None
    document: dict[str, Any] = orjson.loads(data)
    return document


def refs(node: Any) -> Iterator[str]:
    """Every `$ref` in a document (a property *named* "$ref" holds a schema, not a string)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def unresolved_v3(document: dict[str, Any]) -> set[str]:
    schemas = document["components"]["schemas"]
    prefix = "#/components/schemas/"
    return {r for r in refs(document) if not (r.startswith(prefix) and r[len(prefix) :] in schemas)}


def resolve_v3(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a `$ref`, or a lone `allOf: [{$ref}]`, as kubectl's explain and patch code do."""
    while True:
        if "$ref" in node:
            node = document["components"]["schemas"][node["$ref"].rpartition("/")[2]]
        elif len(node.get("allOf", ())) == 1 and "properties" not in node:
            node = node["allOf"][0]
        else:
            return node


def patch_operations(document: dict[str, Any], gvk: dict[str, str]) -> list[dict[str, Any]]:
    return [
        item["patch"]
        for item in document["paths"].values()
        if "patch" in item and item["patch"].get("x-kubernetes-group-version-kind") == gvk
    ]


# --- v2 ---------------------------------------------------------------------------


def test_v2_deployment_has_its_gvk_and_the_containers_merge_key(builtin: OpenAPI) -> None:
    document = orjson.loads(builtin.v2())
    assert document["swagger"] == "2.0"
    definitions = document["definitions"]
    deployment = definitions[DEPLOYMENT]
    assert deployment["x-kubernetes-group-version-kind"] == [DEPLOYMENT_GVK]
    assert deployment["type"] == "object"
    assert "enum" not in deployment["properties"]["apiVersion"]
    assert deployment["properties"]["spec"] == {
        "$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec",
        "description": "Specification of the desired behavior of the Deployment.",
    }
    containers = definitions["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["items"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Container"}
    assert definitions["io.k8s.api.apps.v1.DeploymentSpec"]["required"] == ["selector", "template"]


def test_v2_int_or_string_and_quantity_are_strings(builtin: OpenAPI) -> None:
    definitions = orjson.loads(builtin.v2())["definitions"]
    int_or_string = definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert (int_or_string["type"], int_or_string["format"]) == ("string", "int-or-string")
    assert definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    assert not any("oneOf" in d for d in definitions.values())


def test_v2_types_are_single_and_every_ref_resolves(builtin: OpenAPI) -> None:
    document = orjson.loads(builtin.v2())
    prefix = "#/definitions/"
    definitions = document["definitions"]
    assert all(r.startswith(prefix) and r[len(prefix) :] in definitions for r in refs(document))

    def types(node: Any) -> Iterator[Any]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "type" and not isinstance(value, dict):
                    yield value
                elif key not in ("enum", "default", "example"):
                    yield from types(value)
        elif isinstance(node, list):
            for item in node:
                yield from types(item)

    assert all(isinstance(t, str) and t != "null" for t in types(document["definitions"]))


def test_v2_paths_carry_action_and_gvk(builtin: OpenAPI) -> None:
    paths = orjson.loads(builtin.v2())["paths"]
    item = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert {m: op["x-kubernetes-action"] for m, op in item.items() if m != "parameters"} == {
        "get": "get", "put": "put", "patch": "patch", "delete": "delete",
    }  # fmt: skip
    operations = [op for method, op in item.items() if method != "parameters"]
    assert all(op["x-kubernetes-group-version-kind"] == DEPLOYMENT_GVK for op in operations)
    assert "application/strategic-merge-patch+json" in item["patch"]["consumes"]
    scale = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["get"]
    assert scale["x-kubernetes-group-version-kind"] == SCALE_GVK
    assert paths["/api/v1/namespaces"]["get"]["x-kubernetes-action"] == "list"
    assert "/api/v1/pods" in paths  # the across-namespaces list


def test_v2_is_cached_until_invalidated(builtin: OpenAPI) -> None:
    first = builtin.v2()
    assert builtin.v2() is first
    builtin.invalidate()
    again = builtin.v2()
    assert again is not first and again == first


# --- v3 ---------------------------------------------------------------------------


def test_v3_index_lists_every_group_version_with_its_hash(builtin: OpenAPI) -> None:
    paths = builtin.v3_index()["paths"]
    expected = {
        "api/v1",
        "apis/apps/v1",
        "apis/autoscaling/v2",
        "apis/rbac.authorization.k8s.io/v1",
    }
    assert expected <= set(paths)
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    data = builtin.v3_document("apps", "v1")
    assert data is not None
    assert url == "/openapi/v3/apis/apps/v1?hash=" + hashlib.sha512(data).hexdigest().upper()
    assert builtin.v3_hash("apps", "v1") == url.rpartition("=")[2]
    assert paths["api/v1"]["serverRelativeURL"].startswith("/openapi/v3/api/v1?hash=")


def test_v3_unserved_group_version_is_none(builtin: OpenAPI) -> None:
    assert builtin.v3_document("apps", "v1beta1") is None
    assert builtin.v3_document("example.com", "v1") is None


def test_v3_apps_v1_is_self_contained(builtin: OpenAPI) -> None:
    document = v3(builtin, "apps", "v1")
    assert document["openapi"].startswith("3.0")
    assert unresolved_v3(document) == set()
    schemas = document["components"]["schemas"]
    assert "io.k8s.api.core.v1.Container" in schemas  # reached through the pod template
    assert "io.k8s.api.batch.v1.Job" not in schemas  # another group's kind


def test_every_v3_document_is_self_contained(builtin: OpenAPI) -> None:
    for gv in builtin.v3_index()["paths"]:
        group, version = ("", gv.split("/")[1]) if gv.startswith("api/") else gv.split("/")[1:]
        assert unresolved_v3(v3(builtin, group, version)) == set(), gv


def test_v3_fields_reference_sub_schemas_through_all_of(builtin: OpenAPI) -> None:
    schemas = v3(builtin, "apps", "v1")["components"]["schemas"]
    metadata = schemas[DEPLOYMENT]["properties"]["metadata"]
    assert metadata["allOf"] == [{"$ref": "#/components/schemas/" + OBJECT_META}]
    assert metadata["default"] == {}
    assert metadata["description"].startswith("Standard object's metadata.")
    strategy = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert "$ref" not in strategy and strategy["x-kubernetes-patch-strategy"] == "retainKeys"
    replicas = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]
    assert (replicas["type"], replicas["format"]) == ("integer", "int32")
    max_surge = schemas["io.k8s.api.apps.v1.RollingUpdateDeployment"]["properties"]["maxSurge"]
    int_or_string = resolve_v3({"components": {"schemas": schemas}}, max_surge)
    assert int_or_string["format"] == "int-or-string" and "type" not in int_or_string


def test_v3_explain_deployment_spec_replicas(builtin: OpenAPI) -> None:
    """What `kubectl explain deployment.spec.replicas` does: the GVK from the resource's
    path operations, the schema carrying that GVK, then fields through allOf / $ref."""
    document = v3(builtin, "apps", "v1")
    item = document["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]
    gvk = item["get"]["x-kubernetes-group-version-kind"]
    assert gvk == DEPLOYMENT_GVK
    schemas = document["components"]["schemas"].values()
    [kind] = [s for s in schemas if gvk in s.get("x-kubernetes-group-version-kind", [])]
    spec = resolve_v3(document, kind["properties"]["spec"])
    replicas = spec["properties"]["replicas"]
    assert replicas["type"] == "integer" and "Number of desired pods" in replicas["description"]


def test_v3_patch_operations_offer_strategic_merge_and_field_validation(builtin: OpenAPI) -> None:
    # kubectl apply computes a strategic merge patch from v3 only when the kind's PATCH
    # accepts one, and skips its own v2 validation only when PATCH takes fieldValidation.
    document = v3(builtin, "apps", "v1")
    patches = patch_operations(document, DEPLOYMENT_GVK)
    assert len(patches) == 2  # the object and its status
    for patch in patches:
        assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
        assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
        assert all(p["in"] == "query" and "schema" in p for p in patch["parameters"])


# --- custom kinds -----------------------------------------------------------------


def test_custom_kind_in_v2(with_widget: OpenAPI) -> None:
    document = orjson.loads(with_widget.v2())
    definitions = document["definitions"]
    kind = definitions["com.example.v1.Widget"]
    assert kind["x-kubernetes-group-version-kind"] == [WIDGET_GVK]
    assert kind["properties"]["metadata"]["$ref"] == "#/definitions/" + OBJECT_META
    assert kind["properties"]["apiVersion"]["type"] == "string"
    spec = kind["properties"]["spec"]
    assert spec["properties"]["size"] == {"type": "integer", "description": "How big."}
    assert spec["properties"]["note"] == {}  # nullable: untyped in v2
    assert spec["required"] == ["size"]  # nullable fields are not required in v2
    assert spec["properties"]["port"] == {"x-kubernetes-int-or-string": True}
    assert definitions["com.example.v1.WidgetList"]["properties"]["items"]["items"] == {
        "$ref": "#/definitions/com.example.v1.Widget"
    }
    paths = document["paths"]
    item = "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"
    assert paths[item]["get"]["x-kubernetes-group-version-kind"] == WIDGET_GVK
    assert paths[item + "/status"]["patch"]["x-kubernetes-group-version-kind"] == WIDGET_GVK
    prefix = "#/definitions/"
    assert all(r.startswith(prefix) and r[len(prefix) :] in definitions for r in refs(document))


def test_custom_kind_in_its_v3_document(with_widget: OpenAPI) -> None:
    assert "apis/example.com/v1" in with_widget.v3_index()["paths"]
    document = v3(with_widget, "example.com", "v1")
    assert unresolved_v3(document) == set()
    schemas = document["components"]["schemas"]
    kind = schemas["com.example.v1.Widget"]
    assert kind["x-kubernetes-group-version-kind"] == [WIDGET_GVK]
    assert kind["description"] == "A widget."
    assert kind["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/" + OBJECT_META}
    ]
    spec = kind["properties"]["spec"]
    assert spec["properties"]["note"] == {"type": "string", "nullable": True}
    assert spec["required"] == ["size", "note"]
    assert "io.k8s.api.autoscaling.v1.Scale" in schemas  # the scale subresource's body
    assert not any(name.startswith("io.k8s.api.apps.") for name in schemas)


def test_custom_kind_patch_takes_no_strategic_merge(with_widget: OpenAPI) -> None:
    # Without it kubectl's client-side apply falls back to a JSON merge patch, as for real CRDs.
    document = v3(with_widget, "example.com", "v1")
    patches = patch_operations(document, WIDGET_GVK)
    assert patches
    for patch in patches:
        content = patch["requestBody"]["content"]
        assert "application/strategic-merge-patch+json" not in content
        assert "application/merge-patch+json" in content
        assert "fieldValidation" in {p["name"] for p in patch["parameters"]}


def test_custom_kind_without_schema_is_an_object() -> None:
    registry = Registry([])
    registry.add(ResourceType("example.com", "v1", "Blob", "blobs", False, crd="blobs.example.com"))
    openapi = OpenAPI(registry)
    kind = orjson.loads(openapi.v2())["definitions"]["com.example.v1.Blob"]
    assert kind == {
        "type": "object",
        "x-kubernetes-group-version-kind": [
            {"group": "example.com", "kind": "Blob", "version": "v1"}
        ],
    }
    assert "/apis/example.com/v1/blobs/{name}" in orjson.loads(openapi.v2())["paths"]


def test_documents_follow_the_served_types() -> None:
    registry = Registry()
    openapi = OpenAPI(registry)
    before = openapi.v3_index()["paths"]
    apps = openapi.v3_document("apps", "v1")
    assert "apis/example.com/v1" not in before
    assert b"com.example.v1.Widget" not in openapi.v2()

    registry.add(widget())
    openapi.invalidate()
    after = openapi.v3_index()["paths"]
    url = after["apis/example.com/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/example.com/v1?hash=")
    assert after["apis/apps/v1"] == before["apis/apps/v1"]  # same bytes, same hash
    assert openapi.v3_document("apps", "v1") == apps
    assert b"com.example.v1.Widget" in openapi.v2()

    registry.add(widget("v2"))  # a new served version, without invalidate()
    assert "apis/example.com/v2" in openapi.v3_index()["paths"]

    registry.remove_crd("widgets.example.com")
    assert "apis/example.com/v1" not in openapi.v3_index()["paths"]
    assert openapi.v3_document("example.com", "v1") is None
    assert b"com.example.v1.Widget" not in openapi.v2()
