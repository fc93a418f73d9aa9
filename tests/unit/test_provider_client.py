"""The provider's requests over a fake transport: request shape, retries with backoff, errors."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from stackwright.providers.kubernetes import (
    AccessDenied,
    ApplyConflict,
    ClusterConfig,
    ConfigError,
    FieldConflict,
    InvalidObject,
    KubernetesProvider,
    NotFoundError,
    PermanentError,
    RetryPolicy,
    TransientError,
    UnknownKind,
)
from stackwright.providers.kubernetes.auth import NoAuth, TokenAuth
from stackwright.providers.kubernetes.client import ApiClient
from stackwright.providers.kubernetes.errors import Unreachable

CORE = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        {"name": "configmaps", "namespaced": True, "kind": "ConfigMap"},
        {"name": "namespaces", "namespaced": False, "kind": "Namespace"},
        {"name": "namespaces/status", "namespaced": False, "kind": "Namespace"},
    ],
}
APPS = {
    "kind": "APIResourceList",
    "groupVersion": "apps/v1",
    "resources": [{"name": "deployments", "namespaced": True, "kind": "Deployment"}],
}

CM = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings", "namespace": "web"},
    "data": {"a": "1"},
}


def status(
    code: int, reason: str, message: str, causes: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    if causes:
        body["details"] = {"causes": causes}
    return body


class FakeServer:
    """Discovery answers, then a scripted list of answers for everything else."""

    def __init__(
        self, *answers: httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]
    ) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.discovery: dict[str, dict[str, Any]] = {"/api/v1": CORE, "/apis/apps/v1": APPS}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path in self.discovery and request.method == "GET" and not request.url.query:
            return httpx.Response(200, json=self.discovery[request.url.path])
        if (
            request.url.path.startswith("/apis/")
            and request.url.path.count("/") == 3
            and request.method == "GET"
        ):
            return httpx.Response(
                404,
                json=status(404, "NotFound", "the server could not find the requested resource"),
            )
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        return answer


def provider(
    server: FakeServer, sleeps: list[float] | None = None, **kwargs: Any
) -> KubernetesProvider:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    config = ClusterConfig(
        server="https://k8s.test",
        context="test",
        namespace="team",
        source="kubeconfig /dev/null",
        ssl_context=None,
        auth=kwargs.pop("auth", NoAuth()),
    )
    retry = RetryPolicy(attempts=4, base=0.25, cap=2.0, sleep=sleep, random=lambda: 0.5)
    return KubernetesProvider(
        config=config, transport=httpx.MockTransport(server), retry=retry, **kwargs
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def echo(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=request.content)


def test_apply_is_a_server_side_apply_patch_with_the_field_manager() -> None:
    server = FakeServer(echo)

    async def go() -> dict[str, Any]:
        async with provider(server) as p:
            return await p.apply(CM)

    live = run(go())
    assert live == CM
    (request,) = server.requests
    assert request.method == "PATCH"
    assert request.url.path == "/api/v1/namespaces/web/configmaps/settings"
    assert dict(request.url.params) == {"fieldManager": "stackwright"}
    assert request.headers["content-type"] == "application/apply-patch+yaml"
    assert json.loads(request.content) == CM


def test_force_and_preview_add_their_query_parameters_only_when_asked() -> None:
    server = FakeServer(echo)

    async def go() -> None:
        async with provider(server, field_manager="ci") as p:
            await p.apply(CM, force=True)
            await p.preview(CM)
            await p.preview(CM, force=True)

    run(go())
    params = [dict(r.url.params) for r in server.requests]
    assert params == [
        {"fieldManager": "ci", "force": "true"},
        {"fieldManager": "ci", "dryRun": "All"},
        {"fieldManager": "ci", "force": "true", "dryRun": "All"},
    ]


def test_default_namespace_and_cluster_scoped_objects() -> None:
    server = FakeServer(echo)

    async def go() -> None:
        async with provider(server) as p:
            assert p.default_namespace == "team"
            await p.apply({**CM, "metadata": {"name": "settings"}})
            await p.apply(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": "web", "namespace": "oops"},
                }
            )

    run(go())
    assert server.requests[0].url.path == "/api/v1/namespaces/team/configmaps/settings"
    assert server.requests[1].url.path == "/api/v1/namespaces/web"
    assert "namespace" not in json.loads(server.requests[1].content)["metadata"]


def test_objects_without_a_name_or_kind_are_invalid_before_any_request() -> None:
    server = FakeServer(echo)

    async def go(obj: dict[str, Any]) -> None:
        async with provider(server) as p:
            await p.apply(obj)

    with pytest.raises(
        InvalidObject, match=r"ConfigMap without metadata\.name: server-side apply needs a name"
    ):
        run(go({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-"}}))
    with pytest.raises(InvalidObject, match="needs apiVersion and kind"):
        run(go({"metadata": {"name": "x"}}))
    assert server.requests == []


def test_transient_answers_are_retried_with_exponential_backoff_and_jitter() -> None:
    server = FakeServer(
        httpx.Response(503, json=status(503, "ServiceUnavailable", "etcd is busy")),
        httpx.Response(500, json=status(500, "InternalError", "try again")),
        httpx.Response(504, text="gateway timeout"),
        echo,
    )
    sleeps: list[float] = []

    async def go() -> dict[str, Any]:
        async with provider(server, sleeps) as p:
            return await p.apply(CM)

    assert run(go()) == CM
    assert len(server.requests) == 4
    assert sleeps == [0.125, 0.25, 0.5]  # random()=0.5 of 0.25 * 2**n


def test_retry_after_is_honoured_within_the_cap() -> None:
    server = FakeServer(
        httpx.Response(
            429, headers={"Retry-After": "1"}, json=status(429, "TooManyRequests", "slow down")
        ),
        httpx.Response(
            429, headers={"Retry-After": "30"}, json=status(429, "TooManyRequests", "slow down")
        ),
        echo,
    )
    sleeps: list[float] = []

    async def go() -> None:
        async with provider(server, sleeps) as p:
            await p.apply(CM)

    run(go())
    assert sleeps == [1.0, 2.0]


def test_retries_are_bounded_then_transient_error() -> None:
    server = FakeServer(httpx.Response(503, json=status(503, "ServiceUnavailable", "etcd is busy")))
    sleeps: list[float] = []

    async def go() -> None:
        async with provider(server, sleeps) as p:
            await p.apply(CM)

    with pytest.raises(TransientError) as info:
        run(go())
    assert len(server.requests) == 4
    assert len(sleeps) == 3
    assert info.value.status == 503
    assert str(info.value).startswith(
        "settings: the API server answered 503 ServiceUnavailable 4 times over"
    )
    assert str(info.value).endswith(": etcd is busy; try again later")


def test_connection_failures_are_retried_then_reported_with_the_server() -> None:
    server = FakeServer(httpx.ConnectError("connection refused"))

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM)

    with pytest.raises(TransientError) as info:
        run(go())
    assert len(server.requests) == 4
    message = str(info.value)
    assert message.startswith(
        "settings: cannot reach the API server at https://k8s.test (context 'test' (kubeconfig /dev/null)): connection refused, 4 attempts"
    )
    assert message.endswith("check that the cluster is running and reachable, then retry")
    assert isinstance(info.value.__cause__, ConnectionError)


def test_a_reset_then_success() -> None:
    server = FakeServer(httpx.ReadError("reset by peer"), echo)

    async def go() -> dict[str, Any]:
        async with provider(server, []) as p:
            return await p.apply(CM)

    assert run(go()) == CM


def test_conflict_names_fields_and_managers_and_is_not_retried() -> None:
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-edit" using apps/v1',
            "field": ".spec.replicas",
        },
    ]
    server = FakeServer(
        httpx.Response(409, json=status(409, "Conflict", "Apply failed with 1 conflict", causes))
    )

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": "web"},
                    "spec": {"replicas": 3},
                }
            )

    with pytest.raises(ApplyConflict) as info:
        run(go())
    assert str(info.value) == (
        "web: conflict on .spec.replicas with manager kubectl-edit; re-run with --force-conflicts "
        "(or set `force` on the resource) to take ownership (one the stack set before, changed since: "
        "`up --refresh` takes it back)"
    )
    assert info.value.conflicts == (FieldConflict(".spec.replicas", "kubectl-edit"),)
    assert len(server.requests) == 1


def test_a_yaml_programs_conflict_names_only_force_conflicts() -> None:
    """A YAML program has no `force` option: the advice names only what works there."""
    causes = [
        {"reason": "FieldManagerConflict", "message": 'conflict with "helm"', "field": ".data.a"}
    ]
    server = FakeServer(
        httpx.Response(409, json=status(409, "Conflict", "Apply failed with 1 conflict", causes))
    )

    async def go() -> None:
        async with provider(server, [], force_option=None) as p:
            await p.apply(CM)

    with pytest.raises(ApplyConflict) as info:
        run(go())
    assert str(info.value) == (
        "settings: conflict on .data.a with manager helm; re-run with --force-conflicts "
        "to take ownership (one the stack set before, changed since: "
        "`up --refresh` takes it back)"
    )


def test_several_conflicts_are_listed() -> None:
    causes = [
        {"reason": "FieldManagerConflict", "message": 'conflict with "helm"', "field": ".data.a"},
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl" using v1',
            "field": ".data.b",
        },
    ]
    server = FakeServer(
        httpx.Response(409, json=status(409, "Conflict", "Apply failed with 2 conflicts", causes))
    )

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM)

    with pytest.raises(
        ApplyConflict,
        match=r"settings: conflicts on \.data\.a \(manager helm\), \.data\.b \(manager kubectl\); re-run",
    ):
        run(go())


def test_invalid_objects_carry_the_servers_message_and_causes() -> None:
    causes = [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: must be greater than or equal to 0",
            "field": "spec.replicas",
        }
    ]
    message = 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    server = FakeServer(httpx.Response(422, json=status(422, "Invalid", message, causes)))

    async def go() -> None:
        async with provider(server, []) as p:
            await p.preview(
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": {"name": "web"},
                    "spec": {"replicas": -1},
                }
            )

    with pytest.raises(InvalidObject) as info:
        run(go())
    assert str(info.value) == f"web: {message}"
    assert info.value.causes[0].field == "spec.replicas"
    assert len(server.requests) == 1


def test_a_typed_patch_500_is_the_objects_fault_not_a_transient_one() -> None:
    server = FakeServer(
        httpx.Response(
            500,
            json=status(
                500,
                "InternalError",
                "failed to create typed patch object (/v1, Kind=ConfigMap): .data.a: expected string, got number",
            ),
        )
    )

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM)

    with pytest.raises(InvalidObject, match="expected string, got number"):
        run(go())
    assert len(server.requests) == 1


def test_bad_annotations_fail_preview_before_any_request() -> None:
    server = FakeServer(echo)
    bad = {
        **CM,
        "metadata": {**CM["metadata"], "annotations": {"stackwright.io/timeout-seconds": "soon"}},
    }

    async def go() -> None:
        async with provider(server) as p:
            await p.preview(bad)

    with pytest.raises(
        InvalidObject,
        match=r"settings: annotation stackwright\.io/timeout-seconds must be a number",
    ):
        run(go())
    assert server.requests == []


def test_bad_annotations_fail_apply_before_any_request() -> None:
    """`up --yes` applies without a preview first: a malformed wait-for must not reach the
    cluster and only then fail the wait."""
    server = FakeServer(echo)
    bad = {
        **CM,
        "metadata": {
            **CM["metadata"],
            "annotations": {"stackwright.io/wait-for": "jsonpath={.status.ready=2"},
        },
    }

    async def go() -> None:
        async with provider(server) as p:
            await p.apply(bad)

    with pytest.raises(InvalidObject, match=r"settings: annotation stackwright\.io/wait-for"):
        run(go())
    assert server.requests == []


def test_401_renews_credentials_once_then_access_denied() -> None:
    class CountingAuth(TokenAuth):
        refreshed = 0

        async def refresh(self) -> bool:
            self.refreshed += 1
            return True

    auth = CountingAuth("old")
    server = FakeServer(httpx.Response(401, json=status(401, "Unauthorized", "Unauthorized")))

    async def go() -> None:
        async with provider(server, [], auth=auth) as p:
            await p.apply(CM)

    with pytest.raises(
        AccessDenied,
        match=r"settings: the API server rejected the credentials of context 'test' .*log in again",
    ):
        run(go())
    assert auth.refreshed == 1
    assert len(server.requests) == 2
    assert server.requests[0].headers["authorization"] == "Bearer old"


def test_forbidden_is_access_denied_with_the_servers_words() -> None:
    text = 'configmaps "settings" is forbidden: User "ci" cannot patch resource "configmaps" in the namespace "web"'
    server = FakeServer(httpx.Response(403, json=status(403, "Forbidden", text)))

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM)

    with pytest.raises(AccessDenied, match='settings: configmaps "settings" is forbidden'):
        run(go())


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        (
            'deployments.apps "web" is forbidden: User "ci" cannot patch resource "deployments/scale" in API group "apps" in the namespace "web"',
            'to fix, grant "patch" on deployments.apps/scale in namespace "web" to ci (a Role and a RoleBinding), or deploy with a kubeconfig whose user holds it',
        ),
        (
            'namespaces "web" is forbidden: User "ci" cannot get resource "namespaces" in API group "" at the cluster scope',
            'to fix, grant "get" on namespaces cluster-wide to ci (a ClusterRole and a ClusterRoleBinding), or deploy with a kubeconfig whose user holds it',
        ),
        (
            'forbidden: User "ci" cannot get path "/metrics"',
            "grant the kubeconfig's user this permission, or deploy with credentials that hold it",
        ),
        # Admission's refusals (an immortal or terminating namespace, a quota, a webhook)
        # are lifted by no permission: the server's words stand alone.
        ('namespaces "default" is forbidden: this namespace may not be deleted', ""),
        ('pods "web" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=4, limited: pods=4', ""),
        ('configmaps "cfg" is forbidden: unable to create new content in namespace web because it is being terminated', ""),
        ('admission webhook "deny.example.com" denied the request: forbidden by a webhook', ""),
    ],
)  # fmt: skip
def test_forbidden_says_what_to_grant_and_to_whom(text: str, hint: str) -> None:
    server = FakeServer(httpx.Response(403, json=status(403, "Forbidden", text)))

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM)

    with pytest.raises(AccessDenied) as denied:
        run(go())
    assert str(denied.value) == f"settings: {text}" + (f"; {hint}" if hint else "")


def test_read_list_and_delete_treat_not_found_as_absence() -> None:
    missing = httpx.Response(404, json=status(404, "NotFound", 'configmaps "x" not found'))
    server = FakeServer(missing)

    async def go() -> None:
        async with provider(server, []) as p:
            assert await p.read("v1", "ConfigMap", "web", "x") is None
            await p.delete("v1", "ConfigMap", "web", "x")

    run(go())
    assert [r.method for r in server.requests] == ["GET", "DELETE"]
    assert json.loads(server.requests[1].content)["propagationPolicy"] == "Background"


def uid_refused(registry: bool) -> httpx.Response:
    """kube-apiserver's 409 to a DELETE whose uid precondition fails, in either of its
    wordings: its registry's (`rest.BeforeDelete`, staging/src/k8s.io/apiserver/pkg/registry/
    rest/delete.go), or its storage's (`storage.Preconditions.Check`, as a Conflict by
    `storeerr.InterpretDeleteError`), which the local cluster sends."""
    why = (
        "the UID in the precondition (old-uid) does not match the UID in record (new-uid). "
        "The object might have been deleted and then recreated"
        if registry
        else "Precondition failed: UID in precondition: old-uid, UID in object meta: new-uid"
    )
    message = f'Operation cannot be fulfilled on ConfigMap "settings": {why}'
    return httpx.Response(409, json=status(409, "Conflict", message))


def test_delete_with_a_uid_sends_it_as_a_precondition_on_the_one_request() -> None:
    server = FakeServer(httpx.Response(200, json=CM))

    async def go() -> Any:
        async with provider(server) as p:
            return await p.delete("v1", "ConfigMap", "web", "settings", uid="old-uid")

    assert run(go()) is None
    assert len(server.requests) == 1
    assert json.loads(server.requests[0].content)["preconditions"] == {"uid": "old-uid"}


@pytest.mark.parametrize("registry", [True, False], ids=["registry", "storage"])
def test_delete_refused_for_its_uid_returns_the_other_object_left(registry: bool) -> None:
    other = {**CM, "metadata": {**CM["metadata"], "uid": "new-uid"}}
    server = FakeServer(uid_refused(registry), httpx.Response(200, json=other))

    async def go() -> Any:
        async with provider(server) as p:
            return await p.delete("v1", "ConfigMap", "web", "settings", uid="old-uid")

    assert run(go()) == other
    assert [r.method for r in server.requests] == ["DELETE", "GET"]


def test_delete_refused_for_its_uid_of_an_object_gone_since_is_done() -> None:
    missing = httpx.Response(404, json=status(404, "NotFound", 'configmaps "settings" not found'))
    server = FakeServer(uid_refused(True), missing)

    async def go() -> Any:
        async with provider(server) as p:
            return await p.delete("v1", "ConfigMap", "web", "settings", uid="old-uid")

    assert run(go()) is None


@pytest.mark.parametrize("uid", [None, "old-uid"])
def test_a_delete_conflict_not_about_its_uid_is_raised(uid: str | None) -> None:
    """A 409 to a delete that named no uid, or with the object still of that uid, is the
    error it says: never taken for another object."""
    same = {**CM, "metadata": {**CM["metadata"], "uid": "old-uid"}}
    busy = httpx.Response(409, json=status(409, "Conflict", "the object has been modified"))
    server = FakeServer(busy, httpx.Response(200, json=same))

    async def go() -> Any:
        async with provider(server) as p:
            return await p.delete("v1", "ConfigMap", "web", "settings", uid=uid)

    with pytest.raises(PermanentError, match="the object has been modified"):
        run(go())
    sent = json.loads(server.requests[0].content)
    assert sent.get("preconditions") == ({"uid": uid} if uid else None)


def test_list_follows_continue_tokens_and_fills_in_kind() -> None:
    pages = iter(
        [
            {"metadata": {"continue": "next"}, "items": [{"metadata": {"name": "a"}}]},
            {"metadata": {}, "items": [{"metadata": {"name": "b"}}]},
        ]
    )
    server = FakeServer(lambda request: httpx.Response(200, json=next(pages)))

    async def go() -> list[dict[str, Any]]:
        async with provider(server) as p:
            return await p.list("v1", "ConfigMap", "web", label_selector="app=web")

    items = run(go())
    assert [i["metadata"]["name"] for i in items] == ["a", "b"]
    assert items[0]["kind"] == "ConfigMap" and items[0]["apiVersion"] == "v1"
    assert dict(server.requests[0].url.params) == {"limit": "500", "labelSelector": "app=web"}
    assert server.requests[1].url.params["continue"] == "next"


def test_delete_outright_does_not_wait() -> None:
    server = FakeServer(httpx.Response(200, json=CM))

    async def go() -> None:
        async with provider(server) as p:
            await p.delete("v1", "ConfigMap", "web", "settings", propagation="Foreground")

    run(go())
    assert len(server.requests) == 1
    assert json.loads(server.requests[0].content)["propagationPolicy"] == "Foreground"


def test_unknown_kind_refreshes_discovery_once_then_names_the_missing_crd() -> None:
    server = FakeServer(echo)
    sleeps: list[float] = []

    async def go() -> None:
        async with provider(server, sleeps) as p:
            await p.apply(
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
            )

    with pytest.raises(UnknownKind) as info:
        run(go())
    assert str(info.value) == (
        "Widget (example.com/v1) is not served by the cluster at https://k8s.test: if it is a custom resource, "
        "its CustomResourceDefinition may be missing or not yet Established; "
        "check `kubectl api-resources --api-group=example.com`"
    )
    assert sleeps == [0.5]


@pytest.mark.parametrize(
    ("api_version", "kind", "hint"),
    [
        (
            "apps/v1",
            "Deploymnt",
            "did you mean Deployment, which it serves? Otherwise, if it is a custom resource, its "
            "CustomResourceDefinition may be missing or not yet Established; check "
            "`kubectl api-resources --api-group=apps`",
        ),
        (
            "v1",
            "ConfigMapp",
            "did you mean ConfigMap, which it serves? No CustomResourceDefinition adds a kind to "
            "the core group; `kubectl api-resources --api-group=''` lists the kinds it has",
        ),
        (
            "v1",
            "Gizmo",
            "no CustomResourceDefinition adds a kind to the core group; "
            "`kubectl api-resources --api-group=''` lists the kinds it has",
        ),
    ],
    ids=["group-close", "core-close", "core"],
)
def test_an_unknown_kind_is_told_a_close_kind_and_where_to_look(
    api_version: str, kind: str, hint: str
) -> None:
    """A close name first, then the named group's CRD or the core group's kinds: each hint
    reads as one plain sentence ("If not, if it is a custom resource" it said)."""
    server = FakeServer(echo)

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}})

    with pytest.raises(UnknownKind) as info:
        run(go())
    assert str(info.value) == (
        f"{kind} ({api_version}) is not served by the cluster at https://k8s.test: {hint}"
    )


def test_read_and_delete_of_a_kind_no_longer_served_mean_absent() -> None:
    server = FakeServer(echo)

    async def go() -> None:
        async with provider(server, []) as p:
            assert await p.read("example.com/v1", "Widget", "web", "w") is None
            await p.delete("example.com/v1", "Widget", "web", "w")
            with pytest.raises(UnknownKind):
                await p.list("example.com/v1", "Widget")

    run(go())
    assert server.requests == []


def test_a_kind_that_appears_later_is_found_on_a_cache_miss() -> None:
    server = FakeServer(echo)
    widgets = {
        "kind": "APIResourceList",
        "groupVersion": "example.com/v1",
        "resources": [{"name": "widgets", "namespaced": True, "kind": "Widget"}],
    }

    async def go() -> None:
        async with provider(server, []) as p:
            assert await p.namespaced("v1", "ConfigMap")
            with pytest.raises(UnknownKind):
                await p.resource_info("example.com/v1", "Widget")
            server.discovery["/apis/example.com/v1"] = widgets  # the CRD got Established
            info = await p.resource_info("example.com/v1", "Widget")
            assert (info.plural, info.namespaced, info.group_kind) == (
                "widgets",
                True,
                "Widget.example.com",
            )

    run(go())


def test_not_found_namespace_on_apply() -> None:
    server = FakeServer(
        httpx.Response(404, json=status(404, "NotFound", 'namespaces "web" not found'))
    )

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM)

    with pytest.raises(NotFoundError, match='settings: namespaces "web" not found'):
        run(go())


def test_a_proxy_that_cannot_be_used_is_one_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl takes proxy-url socks5://; without the socksio package, or for a scheme no
    client speaks, the user gets one line naming the fix, not an ImportError traceback, and
    never the proxy's password."""
    monkeypatch.setitem(sys.modules, "socksio", None)  # as where it is not installed

    def config(proxy: str) -> ClusterConfig:
        return ClusterConfig(
            server="https://k8s.test",
            context="test",
            namespace="team",
            source="kubeconfig /dev/null",
            ssl_context=None,
            auth=NoAuth(),
            proxy=proxy,
        )

    with pytest.raises(ConfigError) as socks:
        KubernetesProvider(config=config("socks5://me:s3cret@proxy:1080"))
    assert "pip install 'httpx[socks]'" in str(socks.value)
    assert "context 'test'" in str(socks.value)
    with pytest.raises(ConfigError) as ftp:
        KubernetesProvider(config=config("ftp://me:s3cret@proxy:21"))
    assert "http, https or socks5" in str(ftp.value)
    assert "s3cret" not in str(socks.value) + str(ftp.value)


def test_an_adopting_apply_refused_stays_refused_when_the_takeover_fails() -> None:
    """An adopting apply the server refuses takes the fields the stack applied before over
    and tries once more (a run stopped before its takeover); when that takeover cannot be
    written (here a webhook refuses every change to the object), the refusal is what the user
    is told, and what the engine judges (a refused write changed nothing), not "adopted, but
    the object kept changing"."""
    invalid = status(422, "Invalid", 'ConfigMap "settings" is invalid: data: Invalid value')
    owned = {
        **CM,
        "metadata": {
            **CM["metadata"],
            "resourceVersion": "7",
            "managedFields": [
                {"manager": "stackwright", "operation": "Apply", "apiVersion": "v1",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}},
                {"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}}}},
            ],
        },
    }  # fmt: skip
    denied = status(403, "Forbidden", "admission webhook denied the request")

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=owned)
        if request.headers["content-type"] == "application/json-patch+json":
            return httpx.Response(403, json=denied)
        return httpx.Response(422, json=invalid)

    server = FakeServer(answer)

    async def go() -> None:
        async with provider(server, []) as p:
            await p.apply(CM, adopting=True)

    with pytest.raises(InvalidObject) as info:
        run(go())
    assert "data: Invalid value" in str(info.value)
    assert info.value.status == 422


class Down:
    """A server that answers after `refusals` refused connections (never, by default),
    counting every request that reached it."""

    def __init__(self, refusals: float = float("inf"), *, then: FakeServer | None = None) -> None:
        self.refusals = refusals
        self.then = then or FakeServer(echo)
        self.requests: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(f"{request.method} {request.url.path}")
        if len(self.requests) <= self.refusals:
            raise httpx.ConnectError("connection refused")
        return self.then(request)


def down_provider(server: Down, context: str = "test", **kwargs: Any) -> KubernetesProvider:
    async def sleep(seconds: float) -> None:
        await asyncio.sleep(0)  # lets another request in flight go on, as a real sleep does

    config = ClusterConfig(
        server="https://k8s.test",
        context=context,
        namespace="team",
        source="kubeconfig /dev/null",
        ssl_context=None,
        auth=NoAuth(),
    )
    retry = RetryPolicy(sleep=sleep, random=lambda: 0.5, **kwargs)
    return KubernetesProvider(config=config, transport=httpx.MockTransport(server), retry=retry)


def test_a_server_that_never_answered_is_given_up_on_once_for_the_operation() -> None:
    """Its first request stops after the first contact's few attempts; every later one (a
    discovery, an apply: each step's) fails at once with that failure, naming its own object."""
    server = Down()
    failures: list[Unreachable] = []

    async def go() -> None:
        async with down_provider(server) as p:
            for ask in (p.cluster_uid, lambda: p.apply(CM), lambda: p.namespaced("v1", "Pod")):
                with pytest.raises(Unreachable) as info:
                    await ask()
                failures.append(info.value)

    run(go())
    assert server.requests == ["GET /api/v1/namespaces/kube-system"] * 3
    reason = failures[0].reason
    assert reason.startswith(
        "cannot reach the API server at https://k8s.test (context 'test' (kubeconfig /dev/null)): "
        "connection refused, 3 attempts over "
    )
    assert reason.endswith(
        "; check that the cluster is running and that this is the context meant "
        "(`kubectl config get-contexts` lists them), then retry"
    )
    assert [str(f) for f in failures] == [
        f"kube-system: {reason}",
        f"discovery of v1: {reason}",
        f"discovery of v1: {reason}",
    ]
    assert all(isinstance(f, TransientError) and f.exit_code == 1 for f in failures)


def test_requests_in_flight_when_the_first_contact_fails_stop_with_it() -> None:
    server = Down()

    async def go() -> list[BaseException | bool]:
        async with down_provider(server, first_contact_attempts=2) as p:
            return await asyncio.gather(
                p.cluster_uid(), p.namespaced("v1", "Pod"), return_exceptions=True
            )

    assert all(isinstance(r, Unreachable) for r in run(go()))
    assert len(server.requests) < 4, "the second one stopped when the first gave up"


def test_a_local_cluster_that_never_answered_is_told_to_be_started() -> None:
    async def go() -> None:
        async with down_provider(Down(), context="stackwright-dev") as p:
            await p.cluster_uid()

    with pytest.raises(Unreachable) as info:
        run(go())
    assert info.value.reason.endswith(
        "start it (`stackwright cluster start --name dev`), then retry"
    )


class Failing:
    """A transport whose every request fails on the network with `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def request(self, *args: Any) -> Any:
        raise self.error


@pytest.mark.parametrize(
    ("method", "error", "sent"),
    [
        ("GET", TimeoutError("timed out"), False),
        ("DELETE", ConnectionRefusedError(), False),
        ("DELETE", TimeoutError("timed out"), True),
        ("PATCH", ConnectionResetError(), True),
    ],
    ids=["read-timed-out", "write-refused", "write-timed-out", "write-reset"],
)
def test_an_unreachable_server_says_whether_the_request_may_have_reached_it(
    method: str, error: Exception, sent: bool
) -> None:
    """A read changes nothing, and a refused connection carries nothing: the engine drops
    such a write's journaled step. A write that timed out or was reset may have landed."""

    async def instantly(seconds: float) -> None:
        return None

    client = ApiClient(
        Failing(error), NoAuth(), server="https://k8s.test", cluster="context 'test'",
        retry=RetryPolicy(sleep=instantly, random=lambda: 0.5),
    )  # fmt: skip
    with pytest.raises(Unreachable) as info:
        run(client.request(method, "/api/v1/namespaces/web/configmaps/settings", what="cm"))
    assert info.value.sent is sent
    with pytest.raises(Unreachable) as again:  # never sent: failed as the first one did
        run(client.request("DELETE", "/api/v1/namespaces/web/configmaps/other", what="cm"))
    assert again.value.sent is False


def test_a_server_that_answers_within_the_first_contact_attempts_is_used() -> None:
    server = Down(refusals=2)

    async def go() -> dict[str, Any]:
        async with down_provider(server) as p:
            return await p.apply(CM)

    assert run(go()) == CM


def test_a_server_gone_after_it_answered_is_retried_in_full_as_a_restart() -> None:
    """An API server restarting during a long `up`: once it has answered (discovery here),
    a refused connection is retried for the whole policy, not the first contact's few
    attempts, and is no `Unreachable` when it gives up."""
    refusals: list[Exception | Callable[[httpx.Request], httpx.Response]] = [
        httpx.ConnectError("connection refused")
    ] * 5
    server = FakeServer(*refusals, echo)

    async def go() -> dict[str, Any]:
        async with down_provider(Down(refusals=0, then=server), attempts=6) as p:
            return await p.apply(CM)

    assert run(go()) == CM
    assert len(server.requests) == 6

    gone = FakeServer(httpx.ConnectError("connection refused"))

    async def gone_for_good() -> None:
        async with down_provider(Down(refusals=0, then=gone), attempts=6) as p:
            await p.apply(CM)

    with pytest.raises(TransientError) as info:
        run(gone_for_good())
    assert not isinstance(info.value, Unreachable)
    assert len(gone.requests) == 6
