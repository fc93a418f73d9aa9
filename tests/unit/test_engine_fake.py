"""The fake cluster the engine's tests run against behaves like an API server where it matters.

If the fake were lenient where a real server is strict (conflicts, immutable
fields, namespaces and kinds that must exist), the lifecycle tests would pass
for an engine that fails against a real cluster; these tests pin that down.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stackwright.engine.ports import Provider
from stackwright.engine.testing import Call, FakeApiError, FakeCluster, FakeNotReady

URN = "urn:sw:dev::shop::kubernetes:core/v1:ConfigMap::settings"


def cm(name: str = "settings", namespace: str | None = None, **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


def deployment(app: str = "web", replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}}},
    }


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "caches.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Cache"}},
}
CACHE = {"apiVersion": "example.com/v1", "kind": "Cache", "metadata": {"name": "c"}, "spec": {}}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_apply_adds_what_the_server_owns_and_bumps_versions_only_on_change() -> None:
    fake = FakeCluster()

    first = run(fake.apply(deployment(replicas=1)))
    same = run(fake.apply(deployment(replicas=1)))
    scaled = run(fake.apply(deployment(replicas=3)))
    labelled = run(
        fake.apply({**deployment(replicas=3), "metadata": {"name": "web", "labels": {"a": "b"}}})
    )

    meta = first["metadata"]
    assert meta["uid"] and meta["namespace"] == "default" and meta["generation"] == 1
    assert meta["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert first["status"]["readyReplicas"] == 1
    assert same["metadata"]["resourceVersion"] == meta["resourceVersion"]
    assert scaled["metadata"]["generation"] == 2
    assert int(scaled["metadata"]["resourceVersion"]) > int(meta["resourceVersion"])
    assert scaled["status"] == {
        "observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
        "updatedReplicas": 3,
    }  # fmt: skip
    assert labelled["metadata"]["generation"] == 2  # metadata is not spec
    assert labelled["metadata"]["resourceVersion"] != scaled["metadata"]["resourceVersion"]
    assert {m["manager"] for m in labelled["metadata"]["managedFields"]} == {"stackwright"}


def test_apply_drops_fields_it_no_longer_sets_and_keeps_other_managers_fields() -> None:
    fake = FakeCluster()
    run(fake.apply(cm(a="1", b="2")))
    fake.edit("ConfigMap", "settings", {"data.c": "3"}, manager="kubectl-edit")

    live = run(fake.apply(cm(a="1")))

    assert live["data"] == {"a": "1", "c": "3"}
    owners = {m["manager"]: m["fieldsV1"] for m in live["metadata"]["managedFields"]}
    assert owners["kubectl-edit"] == {"f:data": {"f:c": {}}}


def test_changing_a_field_another_manager_owns_conflicts_unless_forced() -> None:
    fake = FakeCluster()
    run(fake.apply(cm(mode="fast")))
    fake.edit("ConfigMap", "settings", {"data.mode": "edited"})

    with pytest.raises(
        FakeApiError, match=r'conflict.*\.data\.mode \(owned by "kubectl-edit"\)'
    ) as info:
        run(fake.apply(cm(mode="fast")))
    assert info.value.status == 409
    assert fake.find("ConfigMap", "settings")["data"] == {"mode": "edited"}  # type: ignore[index]

    live = run(fake.apply(cm(mode="fast"), force=True))
    assert live["data"] == {"mode": "fast"}
    assert [m["manager"] for m in live["metadata"]["managedFields"]] == ["stackwright"]
    assert fake.applied[-1].force


def test_an_immutable_field_is_refused_like_the_api_server_does() -> None:
    fake = FakeCluster()
    run(fake.apply(deployment(app="web")))

    with pytest.raises(FakeApiError, match="selector is immutable") as info:
        run(fake.apply(deployment(app="other")))

    assert info.value.status == 422
    assert fake.find("Deployment", "web")["spec"]["selector"] == {"matchLabels": {"app": "web"}}  # type: ignore[index]


def test_an_apply_naming_a_uid_changes_that_object_only() -> None:
    # As kube-apiserver: a uid in an apply is a precondition, never a create.
    fake = FakeCluster()
    bound = cm(mode="fast")
    bound["metadata"]["uid"] = "00000000-0000-4000-8000-000000000999"
    with pytest.raises(FakeApiError, match="uid mismatch") as absent:
        run(fake.apply(bound))
    assert absent.value.status == 409 and fake.find("ConfigMap", "settings") is None
    uid = run(fake.apply(cm(mode="slow")))["metadata"]["uid"]
    with pytest.raises(FakeApiError, match=r"metadata\.uid") as other:
        run(fake.apply(bound))
    assert other.value.status == 422
    bound["metadata"]["uid"] = uid
    assert run(fake.apply(bound))["data"] == {"mode": "fast"}


def test_namespaces_and_custom_kinds_must_exist_first() -> None:
    fake = FakeCluster()

    with pytest.raises(FakeApiError, match='namespaces "apps" not found'):
        run(fake.apply(cm(namespace="apps")))
    with pytest.raises(FakeApiError, match="doesn't have a resource type Cache"):
        run(fake.namespaced("example.com/v1", "Cache"))
    assert run(fake.read("example.com/v1", "Cache", "default", "c")) is None

    run(fake.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}}))
    run(fake.apply(CRD))
    run(fake.apply(cm(namespace="apps")))
    run(fake.apply(CACHE))

    assert run(fake.namespaced("example.com/v1", "Cache")) is True
    assert run(fake.namespaced("v1", "Namespace")) is False
    assert run(fake.namespaced("rbac.authorization.k8s.io/v1", "ClusterRole")) is False
    assert fake.names("ConfigMap") == ["apps/settings"]
    with pytest.raises(FakeApiError, match="cluster-scoped"):
        run(fake.apply({**CRD, "metadata": {"name": "x", "namespace": "apps"}}))

    # Deleting a namespace or a CRD takes what it held with it.
    run(fake.delete("v1", "Namespace", None, "apps"))
    run(
        fake.delete(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, CRD["metadata"]["name"]
        )
    )  # type: ignore[index]
    assert fake.names("ConfigMap") == [] and fake.names("Cache") == []
    assert ("example.com", "Cache") not in fake.served


def test_a_preview_stores_nothing_and_allocates_nothing() -> None:
    fake = FakeCluster()

    previewed = run(
        fake.preview({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}})
    )
    created = run(fake.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}}))

    assert previewed["spec"]["clusterIP"] == created["spec"]["clusterIP"]
    assert previewed["metadata"]["uid"] == created["metadata"]["uid"]
    assert fake.names("Service") == ["default/b"]
    assert fake.writes() == [Call("apply", "Service", "b")]
    assert [a.dry_run for a in fake.applied] == [True, False]


def test_failures_are_injected_by_object_name_or_logical_name() -> None:
    fake = FakeCluster(fail_apply={"settings": "denied"}, fail_ready={"web": "0/3 ready"})
    auto_named = fake.stamp(cm("settings-1a2b3c4d"), stack="dev", urn=URN, namespace="default")

    with pytest.raises(FakeApiError, match=r"^denied$"):
        run(fake.apply(auto_named))
    assert fake.names("ConfigMap") == []

    run(fake.apply(deployment()))
    seen: list[str] = []
    with pytest.raises(FakeNotReady, match="0/3 ready"):
        run(fake.await_ready(deployment(), on_status=seen.append))
    assert seen == ["0/3 ready"]

    fake.fail_ready.clear()
    ready = run(fake.await_ready(deployment(), on_status=seen.append))
    assert ready["metadata"]["uid"] and seen[-1] == "web: ready"

    fake.fail_delete["web"] = PermissionError("forbidden")
    with pytest.raises(PermissionError):
        run(fake.delete("apps/v1", "Deployment", "default", "web"))
    assert fake.find("Deployment", "web") is not None


def test_stamp_marks_a_copy_as_managed() -> None:
    fake = FakeCluster()
    body = cm()

    stamped = fake.stamp(body, stack="dev", urn=URN, namespace="default")

    assert body == cm()
    assert stamped["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "stackwright"}
    assert stamped["metadata"]["annotations"] == {
        "stackwright.io/stack": "dev",
        "stackwright.io/urn": URN,
    }


def test_the_factory_gives_this_fake_or_the_one_a_provider_context_names() -> None:
    home, east = FakeCluster(), FakeCluster(name="east")
    make = home.factory({"east": east})

    chosen: list[Provider] = [make(None), make({"context": "east"}), make({"context": "west"})]

    assert chosen == [home, east, home]
    assert home.factory()({"context": "east"}) is home


def test_calls_are_recorded_in_order_and_writes_are_told_apart() -> None:
    fake = FakeCluster()

    async def session() -> None:
        await fake.namespaced("v1", "ConfigMap")
        await fake.ensure_applyset("dev", "default", ["ConfigMap"])
        await fake.apply(cm())
        await fake.read("v1", "ConfigMap", "default", "settings")
        await fake.delete("v1", "ConfigMap", "default", "settings")
        await fake.delete("v1", "ConfigMap", "default", "settings")  # NotFound counts as done
        await fake.remove_applyset("dev", "default")
        await fake.close()

    run(session())

    assert fake.calls == [
        Call("namespaced", "ConfigMap", ""),
        Call("ensure_applyset", "ApplySet", "default"),
        Call("apply", "ConfigMap", "settings"),
        Call("read", "ConfigMap", "settings"),
        Call("delete", "ConfigMap", "settings"),
        Call("delete", "ConfigMap", "settings"),
        Call("remove_applyset", "ApplySet", "default"),
        Call("close", "", ""),
    ]
    assert [c.method for c in fake.writes()] == [
        "ensure_applyset", "apply", "delete", "delete", "remove_applyset",
    ]  # fmt: skip
    assert fake.applysets == set() and fake.closed == 1
