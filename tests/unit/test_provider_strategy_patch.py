"""The managedFields entry a Deployment's strategy patch leaves is dropped even when the
Deployment moved on between the apply and the JSON patch that drops it."""

from __future__ import annotations

import json
from typing import Any

import httpx
from test_provider_client import FakeServer, provider, run, status

PATCH_ENTRY = {
    "manager": "stackwright",
    "operation": "Update",
    "apiVersion": "apps/v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:spec": {"f:strategy": {"f:type": {}}}},
}
APPLY_ENTRY = {
    "manager": "stackwright",
    "operation": "Apply",
    "apiVersion": "apps/v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:spec": {"f:strategy": {"f:type": {}}, "f:replicas": {}}},
}


def deployment(version: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "team",
            "resourceVersion": version,
            "managedFields": [APPLY_ENTRY, PATCH_ENTRY],
        },
        "spec": {"replicas": 1, "strategy": {"type": "Recreate"}},
    }


def test_a_status_write_between_apply_and_patch_does_not_leave_the_entry() -> None:
    server = FakeServer(
        httpx.Response(200, json=deployment("7")),  # the apply
        httpx.Response(422, json=status(422, "", "testing value /metadata/resourceVersion failed")),
        httpx.Response(200, json=deployment("8")),  # read anew: the controller wrote status
        httpx.Response(200, json=deployment("9")),  # the patch, on version 8
    )
    desired = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "team"},
        "spec": {"replicas": 1, "strategy": {"type": "Recreate"}},
    }
    run(provider(server).apply(desired))
    patches = [
        json.loads(r.content)
        for r in server.requests
        if r.headers.get("content-type") == "application/json-patch+json"
    ]
    assert [p[0]["value"] for p in patches] == ["7", "8"]
    assert patches[-1][1] == {
        "op": "replace",
        "path": "/metadata/managedFields",
        "value": [APPLY_ENTRY],
    }
