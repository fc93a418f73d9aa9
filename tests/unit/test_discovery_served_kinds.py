"""What an operation's providers share of discovery (`ServedKinds`): one cluster's kinds, and
never another's that is reached at the same URL (a proxy such as Teleport's, which picks
the cluster by the user's client certificate, not by the URL)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
from test_provider_client import FakeServer, echo, run

from stackwright.providers.kubernetes import (
    ClusterConfig,
    KubernetesProvider,
    RetryPolicy,
    ServedKinds,
)
from stackwright.providers.kubernetes.auth import NoAuth

GROUP = "example.com"


def widgets(namespaced: bool) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "groupVersion": f"{GROUP}/v1",
        "resources": [{"name": "widgets", "namespaced": namespaced, "kind": "Widget"}],
    }


def served(namespaced: bool) -> FakeServer:
    server = FakeServer(echo)
    server.discovery[f"/apis/{GROUP}/v1"] = widgets(namespaced)
    return server


CONFIG = ClusterConfig(
    server="https://proxy.test",
    context="a",
    namespace="team",
    source="kubeconfig /dev/null",
    ssl_context=None,
    auth=NoAuth(),
    user="a",
)


def made(
    server: Callable[[httpx.Request], httpx.Response], config: ClusterConfig, kinds: ServedKinds
) -> KubernetesProvider:
    async def sleep(seconds: float) -> None:
        pass

    retry = RetryPolicy(attempts=1, base=0.0, cap=0.0, sleep=sleep, random=lambda: 0.5)
    return KubernetesProvider(
        config=config, transport=httpx.MockTransport(server), retry=retry, served_kinds=kinds
    )


WIDGET = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"}}


def test_two_clusters_behind_one_url_keep_their_own_kinds() -> None:
    # Cluster a serves Widget namespaced, cluster b (the same proxy URL, another user)
    # cluster-scoped: b's apply went where a's scope put it.
    a, b = served(namespaced=True), served(namespaced=False)
    kinds = ServedKinds()

    async def go() -> None:
        first = made(a, CONFIG, kinds)
        second = made(b, replace(CONFIG, context="b", user="b"), kinds)
        try:
            await first.apply(WIDGET)
            await second.apply(WIDGET)
        finally:
            await first.close()
            await second.close()

    run(go())
    assert [r.url.path for r in a.requests] == [f"/apis/{GROUP}/v1/namespaces/team/widgets/w"]
    assert [r.url.path for r in b.requests] == [f"/apis/{GROUP}/v1/widgets/w"]


def test_two_providers_of_one_user_and_url_ask_discovery_once() -> None:
    # A program's providers of one context, each with its own default namespace.
    server = served(namespaced=True)
    asked: list[str] = []

    def counting(request: httpx.Request) -> httpx.Response:
        if request.url.path == f"/apis/{GROUP}/v1":
            asked.append(request.url.path)
        return server(request)

    kinds = ServedKinds()

    async def go() -> None:
        first = made(counting, CONFIG, kinds)
        second = made(counting, replace(CONFIG, namespace="other"), kinds)
        try:
            await first.apply(WIDGET)
            await second.apply(WIDGET)
        finally:
            await first.close()
            await second.close()

    run(go())
    assert asked == [f"/apis/{GROUP}/v1"]
    assert [r.url.path for r in server.requests] == [
        f"/apis/{GROUP}/v1/namespaces/team/widgets/w",
        f"/apis/{GROUP}/v1/namespaces/other/widgets/w",
    ]
