"""lightkube (sync and async, with watch) and the `kubernetes` package against the local cluster."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def lightkube_client(cluster: Any, *, asynchronous: bool = False) -> Any:
    from lightkube import AsyncClient, Client, KubeConfig

    config = KubeConfig.from_file(str(cluster.kubeconfig))
    return AsyncClient(config) if asynchronous else Client(config)


def test_lightkube_sync_crud_and_apply(cluster: Any) -> None:
    from lightkube import ApiError
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.apps_v1 import Deployment
    from lightkube.resources.core_v1 import ConfigMap, Namespace

    client = lightkube_client(cluster)
    client.create(Namespace(metadata=ObjectMeta(name="lk")))
    created = client.create(
        ConfigMap(metadata=ObjectMeta(name="c1", namespace="lk"), data={"a": "1"})
    )
    assert created.metadata.uid
    fetched = client.get(ConfigMap, "c1", namespace="lk")
    assert fetched.data == {"a": "1"}
    client.patch(ConfigMap, "c1", {"data": {"b": "2"}}, namespace="lk")
    assert client.get(ConfigMap, "c1", namespace="lk").data == {"a": "1", "b": "2"}
    applied = client.apply(
        Deployment.from_dict({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "lk"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]}}},
        }),
        field_manager="stackwright",
    )  # fmt: skip
    assert applied.spec.replicas == 1
    names = [c.metadata.name for c in client.list(ConfigMap, namespace="lk")]
    assert [n for n in names if n != "kube-root-ca.crt"] == ["c1"]  # that one is in every namespace
    client.delete(ConfigMap, "c1", namespace="lk")
    with pytest.raises(ApiError) as caught:
        client.get(ConfigMap, "c1", namespace="lk")
    assert caught.value.status.code == 404 and caught.value.status.reason == "NotFound"


def test_lightkube_sync_watch(cluster: Any) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap, Namespace

    client = lightkube_client(cluster)
    client.create(Namespace(metadata=ObjectMeta(name="lk-watch")))
    start_rv = client.create(
        ConfigMap(metadata=ObjectMeta(name="w0", namespace="lk-watch"))
    ).metadata.resourceVersion

    def writer() -> None:
        writer_client = lightkube_client(cluster)
        writer_client.create(
            ConfigMap(metadata=ObjectMeta(name="w1", namespace="lk-watch"), data={"x": "1"})
        )
        writer_client.delete(ConfigMap, "w1", namespace="lk-watch")

    # The watch resumes from start_rv, so writes made before it connects are replayed.
    thread = threading.Thread(target=writer)
    thread.start()
    thread.join()
    seen = []
    for event_type, obj in client.watch(ConfigMap, namespace="lk-watch", resource_version=start_rv):
        if obj.metadata.name == "kube-root-ca.crt":  # published in every namespace
            continue
        seen.append((event_type, obj.metadata.name))
        if len(seen) == 2:
            break
    assert seen == [("ADDED", "w1"), ("DELETED", "w1")]


def test_lightkube_async_and_watch(cluster: Any) -> None:
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap, Namespace

    async def scenario() -> list[tuple[str, str]]:
        client = lightkube_client(cluster, asynchronous=True)
        await client.create(Namespace(metadata=ObjectMeta(name="lk-async")))
        seen: list[tuple[str, str]] = []

        async def watch() -> None:
            async for event_type, obj in client.watch(ConfigMap, namespace="lk-async"):
                if obj.metadata.name == "kube-root-ca.crt":  # published in every namespace
                    continue
                seen.append((event_type, obj.metadata.name))
                if len(seen) == 3:
                    return

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.3)
        await client.create(ConfigMap(metadata=ObjectMeta(name="a1", namespace="lk-async")))
        await client.patch(ConfigMap, "a1", {"data": {"k": "v"}}, namespace="lk-async")
        await client.delete(ConfigMap, "a1", namespace="lk-async")
        await asyncio.wait_for(watcher, 10)
        listed = [c async for c in client.list(Namespace)]
        assert "lk-async" in [n.metadata.name for n in listed]
        await client.close()
        return seen

    assert asyncio.run(scenario()) == [("ADDED", "a1"), ("MODIFIED", "a1"), ("DELETED", "a1")]


def test_kubernetes_package(cluster: Any) -> None:
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException

    api_client = config.new_client_from_config(config_file=str(cluster.kubeconfig))
    core = client.CoreV1Api(api_client)
    apps = client.AppsV1Api(api_client)
    core.create_namespace({"metadata": {"name": "kp"}})
    cm = core.create_namespaced_config_map("kp", {"metadata": {"name": "c"}, "data": {"a": "1"}})
    assert cm.metadata.resource_version
    assert core.read_namespaced_config_map("c", "kp").data == {"a": "1"}
    apps.create_namespaced_deployment("kp", {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "busybox:1",
                                                            "command": ["sleep", "infinity"]}]}}},
    })  # fmt: skip
    patched = apps.patch_namespaced_deployment("d", "kp", {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3 and patched.metadata.generation == 2
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_config_map("kp", {"metadata": {"name": "c"}})
    assert caught.value.status == 409
    listed = core.list_namespaced_config_map("kp", label_selector="")
    events = []
    for event in watch.Watch().stream(core.list_namespaced_config_map, "kp",
                                      resource_version=listed.metadata.resource_version, timeout_seconds=2):  # fmt: skip
        events.append(event)
    assert events == []  # nothing changed since the list; the watch times out cleanly
    core.delete_namespaced_config_map("c", "kp")
    assert [c.metadata.name for c in core.list_namespaced_config_map("kp").items] == [
        "kube-root-ca.crt"  # in every namespace
    ]
