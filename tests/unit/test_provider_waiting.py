"""Informers and the waiting loop over a scripted API: resume, 410 re-list, fail fast, timeouts."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from typing import Any

import httpx
import pytest

from stackwright.engine.wiring import KubernetesCluster
from stackwright.providers.kubernetes import (
    ClusterConfig,
    DeleteTimeout,
    KubernetesProvider,
    ReadinessFailed,
    ReadinessTimeout,
    RetryPolicy,
)
from stackwright.providers.kubernetes.auth import NoAuth
from stackwright.providers.kubernetes.informers import Informers
from stackwright.sdk.spelling import PYTHON, YAML, Spelling

DISCOVERY = {
    "/api/v1": {
        "resources": [
            {"name": "pods", "namespaced": True, "kind": "Pod"},
            {"name": "configmaps", "namespaced": True, "kind": "ConfigMap"},
        ]
    },
    "/apis/apps/v1": {
        "resources": [
            {"name": "deployments", "namespaced": True, "kind": "Deployment"},
            {"name": "replicasets", "namespaced": True, "kind": "ReplicaSet"},
        ]
    },
    "/apis/batch/v1": {"resources": [{"name": "jobs", "namespaced": True, "kind": "Job"}]},
}


class ScriptedAPI:
    """Lists from `lists`; each watch of a path serves the next batch of `watches[path]` (then nothing)."""

    def __init__(self) -> None:
        self.lists: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.relists: dict[str, list[dict[str, Any]]] = {}  # served from the second list on
        self.gates: dict[
            str, asyncio.Event
        ] = {}  # a path's first watch answers once its gate opens
        self.list_versions: dict[str, list[str]] = defaultdict(lambda: ["1"])
        self.watches: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
        self.seen: list[tuple[str, str]] = []  # (path, "list" or the watch's resourceVersion)
        self.objects: dict[str, dict[str, Any]] = {}  # answers to a GET of one object

    down = False  # when set, nothing answers: the cluster has gone away

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if self.down:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        if path in DISCOVERY:
            return httpx.Response(200, json=DISCOVERY[path])
        if path in self.objects and not request.url.params.get("watch"):
            return httpx.Response(200, json=self.objects[path])
        if request.url.params.get("watch"):
            self.seen.append((path, request.url.params.get("resourceVersion", "")))
            gate = self.gates.pop(path, None)
            if gate is not None:
                await gate.wait()
            batches = self.watches[path]
            events = batches.pop(0) if batches else []
            return httpx.Response(
                200, content=b"".join(json.dumps(e).encode() + b"\n" for e in events)
            )
        items = (
            self.relists.get(path, self.lists[path])
            if (path, "list") in self.seen
            else self.lists[path]
        )
        self.seen.append((path, "list"))
        versions = self.list_versions[path]
        version = versions.pop(0) if len(versions) > 1 else versions[0]
        return httpx.Response(200, json={"metadata": {"resourceVersion": version}, "items": items})


def provider(api: ScriptedAPI, **kwargs: Any) -> KubernetesProvider:
    config = ClusterConfig(
        server="https://k8s.test",
        context="test",
        namespace="web",
        source="test",
        ssl_context=None,
        auth=NoAuth(),
    )
    retry = RetryPolicy(base=0.01, cap=0.05)
    return KubernetesProvider(
        config=config, transport=httpx.MockTransport(api), retry=retry, **kwargs
    )


def obj(kind: str, name: str, version: str, **rest: Any) -> dict[str, Any]:
    api_version = "apps/v1" if kind in ("Deployment", "ReplicaSet") else "v1"
    meta = {"name": name, "namespace": "web", "resourceVersion": version, **rest.pop("meta", {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}


async def eventually(check: Any, timeout: float = 3.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


def test_informer_resumes_from_the_last_version_and_relists_after_410() -> None:
    api = ScriptedAPI()
    path = "/api/v1/namespaces/web/configmaps"
    api.lists[path] = [obj("ConfigMap", "a", "5")]
    api.list_versions[path] = ["10", "20"]
    api.relists[path] = [obj("ConfigMap", "a", "13", data={"x": "2"}), obj("ConfigMap", "b", "14")]
    api.watches[path] = [
        [
            {"type": "ADDED", "object": obj("ConfigMap", "b", "11")},
            {"type": "MODIFIED", "object": obj("ConfigMap", "a", "12", data={"x": "1"})},
        ],
        [
            {
                "type": "ERROR",
                "object": {
                    "kind": "Status",
                    "code": 410,
                    "reason": "Expired",
                    "message": "too old resource version: 12 (15)",
                },
            }
        ],
        [
            {
                "type": "BOOKMARK",
                "object": {"kind": "ConfigMap", "metadata": {"resourceVersion": "25"}},
            },
            {"type": "DELETED", "object": obj("ConfigMap", "b", "26")},
        ],
    ]

    async def go() -> dict[str, Any]:
        p = provider(api)
        informers = Informers(p.api, linger=0)
        async with informers.watching(path, api_version="v1", kind="ConfigMap") as informer:
            await informer.synced()
            assert informer.get("web", "a") is not None
            assert informer.get("web", "a")["kind"] == "ConfigMap"  # filled in for list items
            await eventually(lambda: (path, "26") in api.seen)
            items = dict(informer.items)
        await informers.close()
        await p.close()
        return items

    items = asyncio.run(go())
    watched = [v for p, v in api.seen if p == path]
    assert watched[:6] == ["list", "10", "12", "list", "20", "26"]
    assert sorted(items) == ["web/a"]  # b came back with the re-list, then was deleted
    assert items["web/a"]["data"] == {"x": "2"}


def test_informers_are_shared_and_stopped_after_the_last_user() -> None:
    api = ScriptedAPI()
    path = "/api/v1/namespaces/web/pods"

    async def go() -> None:
        p = provider(api)
        informers = Informers(p.api, linger=0)
        async with (
            informers.watching(path, api_version="v1", kind="Pod") as first,
            informers.watching(path, api_version="v1", kind="Pod") as second,
        ):
            assert first is second
            await first.synced()
        await asyncio.sleep(0.05)
        assert informers._by_key == {}
        await informers.close()
        await p.close()

    asyncio.run(go())
    assert [v for _, v in api.seen].count("list") == 1


DEPLOY_PATH = "/apis/apps/v1/namespaces/web/deployments"
RS_PATH = "/apis/apps/v1/namespaces/web/replicasets"
POD_PATH = "/api/v1/namespaces/web/pods"


def deployment(
    version: str,
    ready: int,
    *,
    replicas: int = 2,
    generation: int = 1,
    total: int | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """web at `generation` (its revision too), observed, every replica updated, `ready` of
    them ready; `total` counts the old ones too."""
    return obj(
        "Deployment",
        "web",
        version,
        meta={
            "uid": "d",
            "generation": generation,
            "annotations": {"deployment.kubernetes.io/revision": str(generation)},
        },
        spec={"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}},
        status={
            "observedGeneration": generation,
            "replicas": replicas if total is None else total,
            "updatedReplicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            **({"conditions": conditions} if conditions else {}),
        },
    )


def scripted_rollout(pod_state: dict[str, Any] | None) -> ScriptedAPI:
    api = ScriptedAPI()
    api.lists[DEPLOY_PATH] = [deployment("3", 0)]
    api.lists[RS_PATH] = [
        obj(
            "ReplicaSet",
            "web-1",
            "2",
            meta={
                "uid": "rs",
                "ownerReferences": [{"uid": "d"}],
                "annotations": {"deployment.kubernetes.io/revision": "1"},
            },
        )
    ]
    api.lists[POD_PATH] = [
        obj(
            "Pod",
            "web-1-a",
            "4",
            meta={"ownerReferences": [{"uid": "rs"}]},
            status={
                "phase": "Pending",
                "containerStatuses": [
                    {"name": "web", "state": {"waiting": {"reason": "ContainerCreating"}}}
                ],
            },
        )
    ]
    if pod_state is not None:
        api.watches[POD_PATH] = [
            [
                {
                    "type": "MODIFIED",
                    "object": obj(
                        "Pod",
                        "web-1-a",
                        "5",
                        meta={"ownerReferences": [{"uid": "rs"}]},
                        status=pod_state,
                    ),
                }
            ]
        ]
    return api


def await_reporting(api: ScriptedAPI, first: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """await_ready of the Deployment `first`, its watch answering only once a first status
    has been reported: the live object, and the statuses reported."""
    seen: list[str] = []

    async def go() -> dict[str, Any]:
        api.gates[DEPLOY_PATH] = shown = asyncio.Event()

        def report(message: str) -> None:
            seen.append(message)
            shown.set()

        async with provider(api) as p:
            return await p.await_ready(first, timeout=5, on_status=report)

    return asyncio.run(go()), seen


def test_await_ready_follows_watches_until_ready_and_reports_each_new_status() -> None:
    api = scripted_rollout(None)
    api.watches[DEPLOY_PATH] = [[{"type": "MODIFIED", "object": deployment("6", 2)}]]
    live, seen = await_reporting(api, deployment("3", 0))
    assert live["status"]["readyReplicas"] == 2
    assert seen[0] == "web: 0/2 ready — pod web-1-a: ContainerCreating"
    assert seen[-1] == "web: 2/2 ready"


def test_a_watch_still_holding_the_incarnation_a_replacement_deleted_is_not_its_word() -> None:
    """A delete-first replacement: the namespace's watch, open for another wait, still holds
    the deleted Deployment (ready) when the new one is applied. The wait judges the new one
    (and returns it), not the old one under the same name."""
    api = scripted_rollout(None)
    former = deployment("3", 2)
    former["metadata"]["uid"] = "former"
    api.lists[DEPLOY_PATH] = [former]
    api.watches[DEPLOY_PATH] = [
        [{"type": "DELETED", "object": former}, {"type": "ADDED", "object": deployment("9", 2)}]
    ]
    new = deployment("5", 0)
    new["metadata"]["resourceVersion"] = "5"
    del new["status"]  # as made: not observed yet
    live, seen = await_reporting(api, new)
    assert live["metadata"]["uid"] == "d" and live["metadata"]["resourceVersion"] == "9"
    assert seen[0] != "web: 2/2 ready" and seen[-1] == "web: 2/2 ready"


def reverted_deployment(version: str, *, done: bool) -> dict[str, Any]:
    """web, its stalled rollout (web-bad) reverted to web-good: in the controller's first
    status of the new generation (the stall's condition still on it), or `done`."""
    progressing = (
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
        if done
        else {
            "type": "Progressing",
            "status": "False",
            "reason": "ProgressDeadlineExceeded",
            "message": 'ReplicaSet "web-bad" has timed out progressing.',
        }
    )
    return deployment(
        version, 1, replicas=1, generation=3, total=1 if done else 2, conditions=[progressing]
    )


def test_a_revert_is_waited_for_though_the_stalled_rollouts_deadline_is_still_reported() -> None:
    api = ScriptedAPI()
    api.lists[DEPLOY_PATH] = [reverted_deployment("7", done=False)]
    api.watches[DEPLOY_PATH] = [
        [{"type": "MODIFIED", "object": reverted_deployment("9", done=True)}]
    ]
    api.lists[RS_PATH] = [
        obj(
            "ReplicaSet",
            name,
            "5",
            meta={
                "uid": name,
                "ownerReferences": [{"uid": "d"}],
                "annotations": {"deployment.kubernetes.io/revision": revision},
            },
        )
        for name, revision in (("web-good", "3"), ("web-bad", "2"))
    ]
    ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    api.lists[POD_PATH] = [
        obj("Pod", "web-good-a", "6", meta={"ownerReferences": [{"uid": "web-good"}]}, status=ready)
    ]
    # The bad pod goes (and the condition with it) only after the stale status was judged.
    live, seen = await_reporting(api, reverted_deployment("7", done=False))
    assert live["metadata"]["resourceVersion"] == "9"
    assert seen == ["web: 1/1 ready — 1 old replica pending termination", "web: 1/1 ready"]


def test_await_ready_fails_once_a_failing_state_outlasts_the_grace() -> None:
    pulling = {
        "phase": "Pending",
        "containerStatuses": [
            {
                "name": "web",
                "state": {
                    "waiting": {
                        "reason": "ImagePullBackOff",
                        "message": 'Back-off pulling image "nginx:doesnotexist"',
                    }
                },
            }
        ],
    }
    api = scripted_rollout(pulling)

    async def go() -> float:
        async with provider(api, failure_grace=0.3) as p:
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(ReadinessFailed) as info:
                await p.await_ready(deployment("3", 0), timeout=60)
            assert str(info.value) == (
                'web: 0/2 ready — pod web-1-a: ImagePullBackOff: Back-off pulling image "nginx:doesnotexist"'
            )
            return loop.time() - started

    took = asyncio.run(go())
    assert 0.3 <= took < 3


def test_a_timeout_while_failing_does_not_advise_waiting_longer() -> None:
    # A timeout shorter than the grace: the image is not there, however long one waits.
    api = scripted_rollout(
        {
            "phase": "Pending",
            "containerStatuses": [
                {
                    "name": "web",
                    "state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}},
                }
            ],
        }
    )

    async def go() -> None:
        async with provider(api, failure_grace=30) as p:
            await p.await_ready(deployment("3", 0), timeout=0.3)

    with pytest.raises(ReadinessTimeout) as info:
        asyncio.run(go())
    assert (
        str(info.value)
        == "web: not ready after 0s — 0/2 ready — pod web-1-a: ErrImagePull: not found"
    )


def test_a_class_made_while_an_ingress_waits_is_looked_for_before_failing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The IngressClasses were read once, as the wait began: a class made meanwhile (a chart
    # installing its controller) failed the Ingress all the same once the grace ran out.
    ingresses = "/apis/networking.k8s.io/v1"
    monkeypatch.setitem(
        DISCOVERY,
        ingresses,
        {"resources": [{"name": "ingresses", "namespaced": True, "kind": "Ingress"}]},
    )
    api = ScriptedAPI()
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": "web", "resourceVersion": "3"},
        "spec": {"ingressClassName": "nginx"},
    }
    api.lists[f"{ingresses}/namespaces/web/ingresses"] = [ingress]
    other, nginx = ({"metadata": {"name": name}} for name in ("traefik", "nginx"))
    api.lists[f"{ingresses}/ingressclasses"] = [other]
    api.relists[f"{ingresses}/ingressclasses"] = [other, nginx]

    async def go() -> None:
        async with provider(api, failure_grace=0.2) as p:
            await p.await_ready(ingress, timeout=1.0)

    with pytest.raises(ReadinessTimeout) as info:  # not ReadinessFailed: the class is there
        asyncio.run(go())
    assert "waiting for an ingress controller for class nginx to admit it" in str(info.value)


def test_await_ready_times_out_with_the_last_status() -> None:
    api = scripted_rollout(
        {
            "phase": "Pending",
            "containerStatuses": [
                {"name": "web", "state": {"waiting": {"reason": "ContainerCreating"}}}
            ],
        }
    )

    async def go() -> None:
        async with provider(api) as p:
            await p.await_ready(deployment("3", 0), timeout=0.5)

    with pytest.raises(ReadinessTimeout) as info:
        asyncio.run(go())
    assert str(info.value).startswith(
        "web: not ready after 0s — 0/2 ready — pod web-1-a: ContainerCreating; to wait longer"
    )
    assert info.value.last_status == "web: 0/2 ready — pod web-1-a: ContainerCreating"


def test_a_wait_that_runs_out_the_stacks_timeout_names_that_setting() -> None:
    """The limit came from the stack's `kubernetes:timeout`: raising it is the way to wait
    longer for every object, not only the per-object annotation."""
    api = scripted_rollout(
        {
            "phase": "Pending",
            "containerStatuses": [
                {"name": "web", "state": {"waiting": {"reason": "ContainerCreating"}}}
            ],
        }
    )

    async def go() -> None:
        setting = "the stack's kubernetes:timeout setting"
        async with provider(api, timeout=0.5, timeout_setting=setting) as p:
            await p.await_ready(deployment("3", 0))

    with pytest.raises(ReadinessTimeout) as info:
        asyncio.run(go())
    assert str(info.value).endswith(
        "; to wait longer raise the stack's kubernetes:timeout setting or set the "
        "stackwright.io/timeout-seconds annotation (or custom timeouts), or set "
        'stackwright.io/skip-await: "true" to not wait'
    ), info.value


def test_a_job_its_ttl_deleted_as_soon_as_it_completed_is_ready() -> None:
    """`ttlSecondsAfterFinished: 0`: the TTL controller deletes the Job the moment it
    completes, and the watch may give the wait only its DELETED event, whose object says
    Complete. The Job did its work: ready, not "deleted while waiting"."""
    path = "/apis/batch/v1/namespaces/web/jobs"
    spec = {"ttlSecondsAfterFinished": 0, "template": {"spec": {"restartPolicy": "Never"}}}

    def job(version: str, **status: Any) -> dict[str, Any]:
        made = obj("Job", "migrate", version, meta={"uid": "j"}, spec=spec, status=status)
        return {**made, "apiVersion": "batch/v1"}

    complete = {"type": "Complete", "status": "True"}
    api = ScriptedAPI()
    api.lists[path] = [job("3", active=1)]
    api.watches[path] = [
        [{"type": "DELETED", "object": job("5", succeeded=1, conditions=[complete])}]
    ]

    async def go() -> dict[str, Any]:
        async with provider(api) as p:
            return await p.await_ready(job("3", active=1), timeout=5)

    done = asyncio.run(go())
    assert done["status"]["conditions"] == [complete]


@pytest.mark.parametrize("given", [None, 30.0])
def test_waiting_for_an_earlier_delete_stops_at_the_objects_own_timeout(
    given: float | None,
) -> None:
    """The next run after an interrupted destroy waits for the object already being
    deleted (`await_deleted`): its `stackwright.io/timeout-seconds` bounds that wait too,
    not the ten-minute default nor a timeout the engine gives (`custom_timeouts.delete`),
    and the failure names what holds it."""
    path = "/api/v1/namespaces/web/configmaps/held"
    held = obj(
        "ConfigMap",
        "held",
        "3",
        meta={
            "uid": "c",
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["example.com/never"],
            "annotations": {"stackwright.io/timeout-seconds": "0.3"},
        },
    )
    api = ScriptedAPI()
    api.objects[path] = held
    api.gates[path.rpartition("/")[0]] = asyncio.Event()  # its watch: nothing happens

    async def go() -> None:
        async with provider(api) as p:
            async with asyncio.timeout(10):
                await p.await_deleted("v1", "ConfigMap", "web", "held", timeout=given)

    with pytest.raises(DeleteTimeout) as info:
        asyncio.run(go())
    assert str(info.value).startswith(
        "held: still present 0s after its deletion (the limit is the object's "
        "stackwright.io/timeout-seconds annotation; raise it to wait longer) — held by"
    ), info.value


@pytest.mark.parametrize(
    ("setting", "limit"),
    [
        ("", "the default; set"),
        (
            "the stack's kubernetes:timeout setting",
            "the stack's kubernetes:timeout setting; raise it, or set",
        ),
    ],
    ids=["default", "stack setting"],
)
def test_a_delete_that_waits_out_the_providers_limit_says_how_to_wait_longer(
    setting: str, limit: str
) -> None:
    """Neither the object nor the resource set a limit: the message says it was the
    default, or the stack's setting that replaced it, and names the settings that change it."""
    path = "/api/v1/namespaces/web/configmaps/held"
    meta = {"uid": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"}
    api = ScriptedAPI()
    api.objects[path] = obj("ConfigMap", "held", "3", meta={**meta, "finalizers": ["x.io/f"]})
    api.gates[path.rpartition("/")[0]] = asyncio.Event()  # its watch: nothing happens

    async def go() -> None:
        async with provider(api, timeout=0.3, timeout_setting=setting) as p:
            async with asyncio.timeout(10):
                await p.await_deleted("v1", "ConfigMap", "web", "held")

    with pytest.raises(DeleteTimeout) as info:
        asyncio.run(go())
    assert str(info.value).startswith(
        f"held: still present 0s after its deletion (the limit is {limit} the "
        "resource's custom_timeouts.delete or the object's stackwright.io/timeout-seconds "
        "annotation to wait longer) — held by finalizer x.io/f"
    ), info.value


def test_an_object_deleted_while_waiting_fails() -> None:
    api = scripted_rollout({"phase": "Pending"})
    api.watches[DEPLOY_PATH] = [[{"type": "DELETED", "object": deployment("7", 0)}]]

    async def go() -> None:
        async with provider(api) as p:
            await p.await_ready(deployment("3", 0), timeout=5)

    with pytest.raises(
        ReadinessFailed, match="web: was deleted while waiting for it to become ready"
    ):
        asyncio.run(go())


def test_a_wait_says_when_the_api_server_stops_answering_and_gives_up_in_the_end() -> None:
    api = scripted_rollout(None)
    gate = api.gates[DEPLOY_PATH] = asyncio.Event()  # the first watch hangs until the fall
    messages: list[str] = []

    async def go() -> None:
        async with provider(api, unreachable_limit=4.5) as p:
            waiting = asyncio.ensure_future(
                p.await_ready(deployment("3", 0), timeout=60, on_status=messages.append)
            )
            await eventually(lambda: bool(messages))
            api.down = True
            gate.set()  # the hanging watch ends; every request after it is refused
            await waiting

    with pytest.raises(ReadinessFailed) as info:
        asyncio.run(go())
    assert str(info.value).startswith("web: the API server has not answered for ")
    assert "Connection refused" in str(info.value) and "is the cluster running?" in str(info.value)
    assert any("(the API server is not answering: " in m for m in messages), messages


def test_a_wait_whose_first_list_never_answers_gives_up_at_the_silence_limit() -> None:
    """An API server that hangs (a TLS handshake that never ends) before the watch has its
    first list: the wait fails after the silence limit, not at its own deadline."""
    scripted = scripted_rollout(None)
    hang = asyncio.Event()

    async def api(request: httpx.Request) -> httpx.Response:
        if request.url.path == DEPLOY_PATH and not request.url.params.get("watch"):
            await hang.wait()
        return await scripted(request)

    async def go() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with provider(api, unreachable_limit=0.5) as p:  # type: ignore[arg-type]
            with pytest.raises(ReadinessFailed) as info:
                await p.await_ready(deployment("3", 0), timeout=30)
        assert str(info.value) == (
            "web: the API server has not answered its watch for 0s; is the cluster running?"
        )
        return loop.time() - started

    assert asyncio.run(go()) < 5


def test_a_slow_list_of_the_related_pods_is_not_a_silent_api_server() -> None:
    """The silence limit is for the object's own first list: the Pods of a big namespace
    may take longer to list than the limit, and the wait goes on (it failed, saying the API
    server had not answered its watch, while the object's watch had synced)."""
    scripted = scripted_rollout(None)
    scripted.lists[DEPLOY_PATH] = [deployment("3", 3)]

    async def api(request: httpx.Request) -> httpx.Response:
        if request.url.path == POD_PATH and not request.url.params.get("watch"):
            await asyncio.sleep(1.0)
        return await scripted(request)

    async def go() -> dict[str, Any]:
        async with provider(api, unreachable_limit=0.5) as p:  # type: ignore[arg-type]
            return await p.await_ready(deployment("3", 3), timeout=30)

    assert asyncio.run(go())["metadata"]["name"] == "web"


def test_a_delete_wait_whose_watch_cannot_connect_looks_again_rather_than_timing_out() -> None:
    """A watch that times out connecting (an API server busy for a moment) is network
    trouble, not the deletion's deadline: the wait looks again and sees the object gone."""
    held = obj("ConfigMap", "cfg", "5", meta={"finalizers": ["example.com/hold"]})
    gets: list[int] = []

    async def api(request: httpx.Request) -> httpx.Response:
        if request.url.path in DISCOVERY:
            return httpx.Response(200, json=DISCOVERY[request.url.path])
        if request.method == "DELETE":
            deleting = {**held, "metadata": {**held["metadata"], "deletionTimestamp": "x"}}
            return httpx.Response(200, json=deleting)
        if request.url.params.get("watch"):
            raise httpx.ConnectTimeout("timed out", request=request)
        gets.append(1)
        if len(gets) == 1:
            return httpx.Response(200, json=held)
        return httpx.Response(404, json={"kind": "Status", "code": 404, "reason": "NotFound"})

    async def go() -> None:
        async with provider(api) as p:  # type: ignore[arg-type]
            await p.delete("v1", "ConfigMap", "web", "cfg", timeout=30)

    asyncio.run(go())
    assert len(gets) == 2


@pytest.mark.parametrize(
    ("spelling", "option"),
    [(PYTHON, "custom_timeouts.update"), (YAML, "customTimeouts.update")],
)
def test_helms_wait_names_the_timeout_option_as_the_program_writes_it(
    spelling: Spelling, option: str
) -> None:
    """Which setting bounded Helm's wait for a release, in the program's language."""
    cluster = KubernetesCluster(provider(ScriptedAPI()), spelling=spelling)
    given = cluster._release_limit({}, 3.0, "update")
    assert given.set_by == f"the resource's {option}; raise it to wait longer"
    default = cluster._release_limit({"timeout": 60}, None, "update")
    assert default == (
        60,
        f"the release's timeout; raise it, or set the resource's {option}, to wait longer",
    )
