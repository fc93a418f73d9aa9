"""An adopted object's takeover (the JSON patch that takes the stack's fields out of their
creator's managedFields entry, guarded by the resourceVersion it was made from) is tried
again only when the object changed since it was read — the API server's 422 for the
failed `test`, or its 409 Conflict — and any other error is reported at once."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_provider_client import CM, FakeServer, provider, run, status

from stackwright.providers.kubernetes import AccessDenied, InvalidObject, TransientError

OURS = {
    "manager": "stackwright",
    "operation": "Apply",
    "apiVersion": "v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:data": {"f:a": {}}},
}
CREATOR = {
    "manager": "kubectl-create",
    "operation": "Update",
    "apiVersion": "v1",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:data": {".": {}, "f:a": {}}},
}
TAKEN_OVER = {**CREATOR, "fieldsV1": {"f:data": {}}}


def configmap(version: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {
        **CM,
        "metadata": {**CM["metadata"], "resourceVersion": version, "managedFields": [*entries]},
    }


def answer(code: int, reason: str, message: str, *causes: str) -> httpx.Response:
    """An error answer in the API server's `Status` shape; `causes` as the generic server
    response words them (kube-apiserver's `NewGenericServerResponse`)."""
    listed = [{"reason": "UnexpectedServerResponse", "message": c} for c in causes]
    return httpx.Response(code, json=status(code, reason, message, listed or None))


#: What kube-apiserver answers a JSON patch whose `test` failed.
TEST_FAILED = answer(
    422,
    "Invalid",
    "the server rejected our request due to an error in our request",
    "testing value /metadata/resourceVersion failed: test failed",
)
#: What kube-apiserver itself sends for it: `NewGenericServerResponse(422, ..., err.Error(), 0,
#: false)` keeps the library's message out of the answer (no causes), as client libraries'
#: reports show ("details=StatusDetails(causes=[]...)", kubectl's "The request is invalid:
#: the server rejected our request due to an error in our request").
TEST_FAILED_BARE = answer(
    422, "Invalid", "the server rejected our request due to an error in our request"
)
#: What it answers a write that lost to another one (its own retries of a patch used up).
CONFLICT = answer(
    409,
    "Conflict",
    'Operation cannot be fulfilled on configmaps "settings": the object has been modified; '
    "please apply your changes to the latest version and try again",
)


def adopt(server: FakeServer) -> dict[str, Any]:
    return run(provider(server).apply(CM, adopting=True))  # type: ignore[no-any-return]


def json_patches(server: FakeServer) -> list[list[dict[str, Any]]]:
    return [
        json.loads(r.content)
        for r in server.requests
        if r.headers.get("content-type") == "application/json-patch+json"
    ]


@pytest.mark.parametrize(
    "overtaken",
    [TEST_FAILED, TEST_FAILED_BARE, CONFLICT],
    ids=["test-failed", "test-failed-as-kube-apiserver-says-it", "conflict"],
)
def test_a_takeover_overtaken_by_another_write_is_made_again_on_the_object_read_anew(
    overtaken: httpx.Response,
) -> None:
    server = FakeServer(
        httpx.Response(200, json=configmap("7", OURS, CREATOR)),  # the apply
        overtaken,
        httpx.Response(200, json=configmap("8", OURS, CREATOR)),  # read anew
        httpx.Response(200, json=configmap("9", OURS, TAKEN_OVER)),
    )
    assert adopt(server)["metadata"]["resourceVersion"] == "9"
    patches = json_patches(server)
    assert [p[0]["value"] for p in patches] == ["7", "8"]
    assert patches[-1][1]["value"] == [OURS, TAKEN_OVER]


@pytest.mark.parametrize(
    ("refusal", "error", "said"),
    [
        pytest.param(
            answer(
                403,
                "Forbidden",
                'configmaps "settings" is forbidden: User "ci" cannot patch resource '
                '"configmaps" in API group "" in the namespace "web"',
            ),
            AccessDenied,
            "cannot patch",
            id="forbidden",
        ),
        pytest.param(  # a 422 for the patch's content, not for its test
            answer(
                422,
                "Invalid",
                'ConfigMap "settings" is invalid: metadata.managedFields: Invalid value',
            ),
            InvalidObject,
            "metadata.managedFields",
            id="invalid",
        ),
    ],
)
def test_another_error_of_the_takeover_is_reported_at_once(
    refusal: httpx.Response, error: type[Exception], said: str
) -> None:
    # It was sent four times, the object read between (the error of that read ignored),
    # and then reported as "the object kept changing meanwhile".
    server = FakeServer(httpx.Response(200, json=configmap("7", OURS, CREATOR)), refusal)
    with pytest.raises(error, match=said):
        adopt(server)
    assert len(json_patches(server)) == 1
    assert [r.method for r in server.requests] == ["PATCH", "PATCH"]  # no read anew


def test_a_takeover_overtaken_every_time_leaves_the_step_to_the_next_run() -> None:
    server = FakeServer(
        httpx.Response(200, json=configmap("7", OURS, CREATOR)),
        *[
            r
            for _ in range(4)
            for r in (TEST_FAILED, httpx.Response(200, json=configmap("8", OURS, CREATOR)))
        ],
    )
    with pytest.raises(TransientError, match="kept changing meanwhile"):
        adopt(server)
    assert len(json_patches(server)) == 4


def test_an_object_deleted_before_its_takeover_has_nothing_left_to_take() -> None:
    gone = answer(404, "NotFound", 'configmaps "settings" not found')
    server = FakeServer(httpx.Response(200, json=configmap("7", OURS, CREATOR)), gone)
    assert adopt(server)["metadata"]["resourceVersion"] == "7"
    assert len(server.requests) == 2
