"""The Kubernetes provider against the real local cluster: apply, conflicts, deletes, readiness."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from stackwright.errors import InputsRejected
from stackwright.providers.kubernetes import (
    ApplyConflict,
    ApplySet,
    DeleteTimeout,
    InvalidObject,
    KubernetesProvider,
    NotFoundError,
    PermanentError,
    ReadinessFailed,
    ReadinessTimeout,
    applyset_id,
    stamp,
)
from stackwright.providers.kubernetes.applyset import (
    ID_LABEL,
    PART_OF,
    ensure_parent,
    list_members,
    remove_parent,
)

pytestmark = pytest.mark.integration

T = TypeVar("T")
LiveCluster = Any  # tests/conftest.py's LiveCluster (conftest is not importable as a module)


def with_provider(
    cluster: LiveCluster, body: Callable[[KubernetesProvider], Awaitable[T]], **kwargs: Any
) -> T:
    async def go() -> T:
        async with KubernetesProvider(str(cluster.kubeconfig), **kwargs) as provider:
            return await body(provider)

    return asyncio.run(go())


async def namespace(provider: KubernetesProvider, name: str) -> None:
    live = await provider.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    await provider.await_ready(live)


def configmap(ns: str, name: str, data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, **meta},
        "data": data,
    }


def volume_claim(name: str, ns: str, storage_class: str | None = None) -> dict[str, Any]:
    """A 1Gi claim; without a class, the cluster's default class provisions it."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def deployment(ns: str, name: str, image: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": name, "image": image}]},
            },
        },
    }


def test_context_and_default_namespace_come_from_the_kubeconfig(cluster: LiveCluster) -> None:
    provider = KubernetesProvider(str(cluster.kubeconfig))
    assert provider.default_namespace == "default"
    assert provider.config.context == cluster.info.context
    asyncio.run(provider.close())
    env = {"KUBECONFIG": str(cluster.kubeconfig)}
    other = KubernetesProvider(namespace="team", environ=env)
    assert (other.default_namespace, other.config.server) == ("team", cluster.server)
    asyncio.run(other.close())


def test_configmap_preview_apply_read_list_delete(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-cm")
        desired = configmap("prov-cm", "settings", {"mode": "fast"}, labels={"app": "web"})
        previewed = await p.preview(desired)
        assert previewed["data"] == {"mode": "fast"}
        assert await p.read("v1", "ConfigMap", "prov-cm", "settings") is None  # dry run only
        live = await p.apply(desired)
        assert live["metadata"]["uid"]
        assert [m["manager"] for m in live["metadata"]["managedFields"]] == ["stackwright"]
        assert (await p.await_ready(live))["metadata"]["name"] == "settings"
        updated = await p.apply(
            configmap("prov-cm", "settings", {"mode": "safe"}, labels={"app": "web"})
        )
        assert updated["data"] == {"mode": "safe"}
        read = await p.read("v1", "ConfigMap", "prov-cm", "settings")
        assert read is not None and read["data"] == {"mode": "safe"}
        await p.apply(configmap("prov-cm", "other", {}))
        listed = await p.list("v1", "ConfigMap", "prov-cm", label_selector="app=web")
        assert [i["metadata"]["name"] for i in listed] == ["settings"]
        assert listed[0]["kind"] == "ConfigMap"
        await p.delete("v1", "ConfigMap", "prov-cm", "settings")
        assert await p.read("v1", "ConfigMap", "prov-cm", "settings") is None
        await p.delete("v1", "ConfigMap", "prov-cm", "settings")  # NotFound is done

    with_provider(cluster, body)


def test_deployment_apply_preview_and_read(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-deploy")
        desired = deployment("prov-deploy", "api", "nginx:1.29", replicas=1)
        previewed = await p.preview(desired)
        assert previewed["spec"]["strategy"]["type"] == "RollingUpdate"  # defaulted by the server
        live = await p.apply(desired)
        assert live["metadata"]["generation"] == 1
        read = await p.read("apps/v1", "Deployment", "prov-deploy", "api")
        assert read is not None and read["spec"]["replicas"] == 1

    with_provider(cluster, body)


def test_conflict_with_another_manager_names_the_field_and_manager(cluster: LiveCluster) -> None:
    async def setup(p: KubernetesProvider) -> None:
        await namespace(p, "prov-conflict")
        await p.apply(deployment("prov-conflict", "web", "nginx:1.29", replicas=1))

    with_provider(cluster, setup)
    with cluster.http() as http:
        response = http.patch(
            "/apis/apps/v1/namespaces/prov-conflict/deployments/web",
            params={"fieldManager": "kubectl-edit"},
            headers={"Content-Type": "application/merge-patch+json"},
            content=json.dumps({"spec": {"replicas": 5}}),
        )
        assert response.status_code == 200, response.text

    async def body(p: KubernetesProvider) -> None:
        with pytest.raises(ApplyConflict) as info:
            await p.apply(deployment("prov-conflict", "web", "nginx:1.29", replicas=3))
        assert str(info.value) == (
            "web: conflict on .spec.replicas with manager kubectl-edit; re-run with --force-conflicts "
            "(or set `force` on the resource) to take ownership (one the stack set before, changed since: "
            "`up --refresh` takes it back)"
        )
        assert [(c.field, c.manager) for c in info.value.conflicts] == [
            (".spec.replicas", "kubectl-edit")
        ]
        with pytest.raises(ApplyConflict):
            await p.preview(deployment("prov-conflict", "web", "nginx:1.29", replicas=3))
        forced = await p.apply(
            deployment("prov-conflict", "web", "nginx:1.29", replicas=3), force=True
        )
        assert forced["spec"]["replicas"] == 3

    with_provider(cluster, body)


def test_invalid_object_carries_the_servers_message(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-invalid")
        bad = deployment("prov-invalid", "web", "nginx:1.29", replicas=-1)
        for attempt in (p.preview, p.apply):
            with pytest.raises(InvalidObject) as info:
                await attempt(bad)
            message = str(info.value)
            assert message.startswith('web: Deployment.apps "web" is invalid: ')
            assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in message
            assert any(c.field == "spec.replicas" for c in info.value.causes)
        assert await p.read("apps/v1", "Deployment", "prov-invalid", "web") is None

    with_provider(cluster, body)


def test_a_namespace_that_does_not_exist_is_named_with_the_fix(cluster: LiveCluster) -> None:
    # The server says only `namespaces "x" not found` (and `up` met it first at the stack's
    # ApplySet parent, a ConfigMap the user never declared).
    async def body(p: KubernetesProvider) -> None:
        for attempt in (p.preview, p.apply):
            with pytest.raises(NotFoundError) as info:
                await attempt(configmap("prov-no-such-ns", "settings", {"a": "1"}))
            assert isinstance(info.value, InputsRejected)  # at the resource's line, exit 2
            assert str(info.value) == (
                'settings: namespaces "prov-no-such-ns" not found: declare namespace '
                "prov-no-such-ns in the program (a Namespace resource is applied before what "
                "goes in it) or create it, or put the object in a namespace that exists"
            )

    with_provider(cluster, body)


def test_a_takeover_overtaken_by_another_write_is_made_again(cluster: LiveCluster) -> None:
    # The cluster's answer to the takeover's patch, made from a version another write has
    # since replaced (its `test` of the resourceVersion fails), is one the provider knows
    # to read the object anew for: any other error it reports at once.
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-takeover")
        path = "/api/v1/namespaces/prov-takeover/configmaps/made"
        made = configmap("prov-takeover", "made", {"a": "1"})
        await p.api.request(  # as `kubectl create` makes it
            "POST",
            path.rpartition("/")[0] + "?fieldManager=kubectl-create",
            body=json.dumps(made).encode(),
            what="made",
        )
        stale = await p.apply(made)  # shares data.a with its creator
        await p.api.request(
            "PATCH",
            path + "?fieldManager=controller",
            body=json.dumps({"metadata": {"labels": {"seen": "yes"}}}).encode(),
            content_type="application/merge-patch+json",
            what="made",
        )
        live, sent = await p._take_over(path, "made", stale)
        assert sent and live["metadata"]["labels"] == {"seen": "yes"}
        creator = [e for e in live["metadata"]["managedFields"] if e["manager"] == "kubectl-create"]
        assert all("f:a" not in (e.get("fieldsV1") or {}).get("f:data", {}) for e in creator)

    with_provider(cluster, body)


async def drop_finalizers(p: KubernetesProvider, ns: str, name: str) -> None:
    """Take a ConfigMap's finalizers off, as the controller that handles them would."""
    await p.api.request(
        "PATCH",
        f"/api/v1/namespaces/{ns}/configmaps/{name}?fieldManager=controller",
        body=json.dumps({"metadata": {"finalizers": None}}).encode(),
        content_type="application/merge-patch+json",
        what=name,
    )


def test_delete_waits_until_a_finalizer_is_removed(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> float:
        await namespace(p, "prov-final")
        await p.apply(configmap("prov-final", "held", {"a": "1"}, finalizers=["example.com/hold"]))

        async def release() -> None:
            await asyncio.sleep(1.0)
            live = await p.read("v1", "ConfigMap", "prov-final", "held")
            assert live is not None and live["metadata"].get("deletionTimestamp")
            await drop_finalizers(p, "prov-final", "held")  # as a controller would

        started = time.monotonic()
        releasing = asyncio.ensure_future(release())
        await p.delete("v1", "ConfigMap", "prov-final", "held", timeout=30)
        took = time.monotonic() - started
        await releasing
        assert await p.read("v1", "ConfigMap", "prov-final", "held") is None
        return took

    assert with_provider(cluster, body) >= 1.0


def test_skip_await_skips_the_wait_for_a_delete_unless_the_name_is_needed_again(
    cluster: LiveCluster,
) -> None:
    """As Pulumi's `pulumi.com/skipAwait` does for its await-logic kinds: the delete is
    sent and not waited for. A delete-before-replace still waits, as the new object needs
    the name (pulumi/pulumi-kubernetes#3154: skipping that wait is a race)."""

    async def body(p: KubernetesProvider) -> list[str]:
        seen: list[str] = []
        await namespace(p, "prov-skipdel")
        skip = {"stackwright.io/skip-await": "true"}
        await p.apply(
            configmap("prov-skipdel", "held", {}, finalizers=["example.com/hold"], annotations=skip)
        )
        # Had it waited, the finalizer would hold it past the timeout: DeleteTimeout.
        await p.delete("v1", "ConfigMap", "prov-skipdel", "held", timeout=1, on_status=seen.append)
        live = await p.read("v1", "ConfigMap", "prov-skipdel", "held")
        assert live is not None and live["metadata"].get("deletionTimestamp")
        with pytest.raises(DeleteTimeout):
            await p.delete("v1", "ConfigMap", "prov-skipdel", "held", timeout=1, reusing_name=True)
        await drop_finalizers(p, "prov-skipdel", "held")
        return seen

    assert with_provider(cluster, body) == [
        "held: deletion not waited for (stackwright.io/skip-await)"
    ]


def test_delete_timeout_says_which_finalizer_holds_the_object(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-stuck")
        await p.apply(configmap("prov-stuck", "stuck", {}, finalizers=["example.com/never"]))
        with pytest.raises(DeleteTimeout) as info:
            await p.delete("v1", "ConfigMap", "prov-stuck", "stuck", timeout=1)
        assert str(info.value) == (
            "stuck: still present 1s after its deletion "
            "(the limit is the resource's custom_timeouts.delete; raise it, or set the "
            "object's stackwright.io/timeout-seconds annotation, to wait longer) — held by finalizer "
            "example.com/never: the controller "
            "that handles them may be missing or failing; fix that controller, or remove them with "
            '`kubectl patch configmaps stuck -n prov-stuck --type=merge -p \'{"metadata":{"finalizers":null}}\'`'
        )
        assert info.value.finalizers == ("example.com/never",)
        await p.delete(
            "v1", "ConfigMap", "prov-stuck", "stuck", wait=False
        )  # already deleting: fine

    with_provider(cluster, body)


def test_await_ready_for_namespace_crd_and_custom_object(cluster: LiveCluster) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.prov.example.com"},
        "spec": {
            "group": "prov.example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }

    async def body(p: KubernetesProvider) -> list[str]:
        seen: list[str] = []
        ns = await p.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prov-crd"}}
        )
        await p.await_ready(ns, on_status=seen.append)
        live = await p.apply(crd)
        ready = await p.await_ready(live, on_status=seen.append)
        assert any(
            c["type"] == "Established" and c["status"] == "True"
            for c in ready["status"]["conditions"]
        )
        # The kind was unknown when discovery was first asked; the cache refreshes on the miss.
        gadget = await p.apply(
            {
                "apiVersion": "prov.example.com/v1",
                "kind": "Gadget",
                "metadata": {"name": "g", "namespace": "prov-crd"},
                "spec": {"size": 1},
            }
        )
        await p.await_ready(gadget, on_status=seen.append)
        return seen

    seen = with_provider(cluster, body)
    assert seen == ["prov-crd: Active", "gadgets.prov.example.com: Established", "g: ready"]


def test_await_ready_service_without_selector_configmap_and_skip_await(
    cluster: LiveCluster,
) -> None:
    async def body(p: KubernetesProvider) -> list[str]:
        seen: list[str] = []
        await namespace(p, "prov-svc")
        svc = await p.apply(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "external", "namespace": "prov-svc"},
                "spec": {"ports": [{"port": 5432}]},
            }
        )
        started = time.monotonic()
        await p.await_ready(svc, on_status=seen.append)
        cm = await p.apply(configmap("prov-svc", "settings", {"a": "1"}))
        await p.await_ready(cm, on_status=seen.append)
        skipped = await p.apply(
            {
                **deployment("prov-svc", "later", "nginx:doesnotexist", replicas=1),
                "metadata": {
                    "name": "later",
                    "namespace": "prov-svc",
                    "annotations": {"stackwright.io/skip-await": "true"},
                },
            }
        )
        await p.await_ready(skipped, on_status=seen.append)
        assert time.monotonic() - started < 5
        return seen

    assert with_provider(cluster, body) == [
        "external: no selector, so no endpoints to wait for",
        "settings: ready",
        "later: not waited for (stackwright.io/skip-await)",
    ]


def test_readiness_timeout_reports_the_last_status(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-timeout")
        widget = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "gate",
                "namespace": "prov-timeout",
                "annotations": {
                    "stackwright.io/wait-for": "jsonpath={.data.open}=yes",
                    "stackwright.io/timeout-seconds": "1",
                },
            },
            "data": {"open": "no"},
        }
        live = await p.apply(widget)
        with pytest.raises(ReadinessTimeout) as info:
            await p.await_ready(live, timeout=60)  # the annotation wins
        assert str(info.value).startswith(
            "gate: not ready after 1s — waiting for jsonpath={.data.open}=yes (now no); to wait longer set the "
            "stackwright.io/timeout-seconds annotation"
        )

        async def open_gate() -> None:
            await asyncio.sleep(0.5)
            await p.apply({**widget, "data": {"open": "yes"}})

        opening = asyncio.ensure_future(open_gate())
        patient = {
            **widget,
            "metadata": {
                **widget["metadata"],
                "annotations": {"stackwright.io/wait-for": "jsonpath={.data.open}=yes"},
            },
        }
        ready = await p.await_ready(patient, timeout=30)
        await opening
        assert ready["data"]["open"] == "yes"

    with_provider(cluster, body)


def test_applyset_parent_members_and_kubectl_agree_on_the_id(
    cluster: LiveCluster, tmp_path: Any
) -> None:
    async def body(p: KubernetesProvider) -> list[str]:
        await namespace(p, "prov-set")
        applyset = ApplySet("dev", "prov-set")
        parent = await ensure_parent(p, applyset, ["ConfigMap"])
        assert parent["metadata"]["labels"][ID_LABEL] == applyset.id
        urn = "urn:sw:dev::demo::kubernetes:core/v1:ConfigMap::member"
        await p.apply(
            stamp(
                configmap("prov-set", "member", {"a": "1"}), stack="dev", urn=urn, applyset=applyset
            )
        )
        await p.apply(configmap("prov-set", "outsider", {}))
        await ensure_parent(p, applyset, ["Secret"])  # superset: ConfigMap stays recorded
        members = await list_members(p, applyset)
        live = await p.read("v1", "ConfigMap", "prov-set", applyset.name)
        assert live is not None
        assert (
            live["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"]
            == "ConfigMap,Secret"
        )
        return [m["metadata"]["name"] for m in members]

    assert with_provider(cluster, body) == ["member"]
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(json.dumps(configmap("prov-set", "by-kubectl", {"x": "1"})))
    env_before = os.environ.get("KUBECTL_APPLYSET")
    os.environ["KUBECTL_APPLYSET"] = "true"
    try:
        cluster.kubectl(
            "apply",
            "-n",
            "prov-set",
            "--server-side",
            "--prune",
            "--applyset=kset",
            "-f",
            str(manifest),
        )
    finally:
        if env_before is None:
            os.environ.pop("KUBECTL_APPLYSET", None)
        else:
            os.environ["KUBECTL_APPLYSET"] = env_before
    secret = json.loads(
        cluster.kubectl("get", "secret", "kset", "-n", "prov-set", "-o", "json").stdout
    )
    member = json.loads(
        cluster.kubectl("get", "configmap", "by-kubectl", "-n", "prov-set", "-o", "json").stdout
    )
    expected = applyset_id("kset", "prov-set", "Secret", "")
    assert secret["metadata"]["labels"][ID_LABEL] == expected
    assert member["metadata"]["labels"][PART_OF] == expected


def test_a_users_configmap_with_the_parents_name_is_not_taken_over(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-taken")
        applyset = ApplySet("dev", "prov-taken", "shop")
        users = await p.apply(configmap("prov-taken", applyset.name, {"mine": "yes"}))
        with pytest.raises(
            PermanentError, match=f"ConfigMap prov-taken/{applyset.name} is in the way"
        ):
            await ensure_parent(p, applyset, ["ConfigMap"])
        after = await p.read("v1", "ConfigMap", "prov-taken", applyset.name)
        assert after is not None
        assert after["metadata"]["resourceVersion"] == users["metadata"]["resourceVersion"]
        assert after["data"] == {"mine": "yes"} and ID_LABEL not in after["metadata"].get(
            "labels", {}
        )

        # Once the user's is gone, the parent is made; made, it is the stack's to update.
        await p.delete("v1", "ConfigMap", "prov-taken", applyset.name)
        made = await ensure_parent(p, applyset, ["ConfigMap"])
        assert made["metadata"]["labels"][ID_LABEL] == applyset.id
        again = await ensure_parent(p, applyset, ["Secret"])
        kinds = again["metadata"]["annotations"]["applyset.kubernetes.io/contains-group-kinds"]
        assert kinds == "ConfigMap,Secret"

    with_provider(cluster, body)


def test_only_an_empty_parent_of_the_stack_is_removed(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-unset")
        users = ApplySet("users", "prov-unset")
        await p.apply(configmap("prov-unset", users.name, {"mine": "yes"}))  # a user's, same name
        with pytest.raises(PermanentError, match="is not the ApplySet parent of stack users"):
            await remove_parent(p, users)
        assert await p.read("v1", "ConfigMap", "prov-unset", users.name) is not None

        applyset = ApplySet("dev", "prov-unset")
        await ensure_parent(p, applyset, ["ConfigMap", "Gadget.gone.example.com"])
        urn = "urn:sw:dev::demo::kubernetes:core/v1:ConfigMap::member"
        member = stamp(configmap("prov-unset", "m", {}), stack="dev", urn=urn, applyset=applyset)
        await p.apply(member)
        with pytest.raises(PermanentError, match="still has 1 member") as kept:
            await remove_parent(p, applyset)
        release = "kubectl label configmap m -n prov-unset applyset.kubernetes.io/part-of-"
        assert f"`{release}`" in str(kept.value)
        await p.delete("v1", "ConfigMap", "prov-unset", "m")
        await remove_parent(p, applyset)  # a kind the cluster does not serve has no members
        assert await p.read("v1", "ConfigMap", "prov-unset", applyset.name) is None
        await remove_parent(p, applyset)  # gone already: nothing to do
        await remove_parent(p, ApplySet("dev", "prov-no-such-namespace"))

    with_provider(cluster, body)


# --- workloads: these need the local cluster's simulated nodes, kubelet and controllers ----------


def test_deployment_of_nginx_becomes_ready_with_live_status(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> tuple[dict[str, Any], list[str]]:
        seen: list[str] = []
        await namespace(p, "prov-nginx")
        live = await p.apply(deployment("prov-nginx", "web", "nginx:1.29", replicas=2))
        ready = await p.await_ready(live, timeout=60, on_status=seen.append)
        svc = await p.apply(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web", "namespace": "prov-nginx"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            }
        )
        await p.await_ready(svc, timeout=60, on_status=seen.append)
        return ready, seen

    ready, seen = with_provider(cluster, body)
    assert ready["status"]["readyReplicas"] == 2
    assert seen[-2] == "web: 2/2 ready"
    assert seen[-1] == "web: 2 ready endpoints"
    assert len(seen) >= 3  # it reported progress on the way


def test_missing_image_fails_fast_with_image_pull_backoff(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> float:
        await namespace(p, "prov-pull")
        live = await p.apply(deployment("prov-pull", "web", "nginx:doesnotexist", replicas=3))
        started = time.monotonic()
        with pytest.raises(ReadinessFailed) as info:
            await p.await_ready(live, timeout=600)
        # A kubelet alternates ErrImagePull (each attempt) and ImagePullBackOff (between
        # attempts); the report gives whichever the pod shows when the grace runs out.
        assert re.fullmatch(
            r"web: 0/3 ready — pod web-[a-z0-9]+-[a-z0-9]+: "
            r'(ImagePullBackOff: Back-off pulling image "nginx:doesnotexist"'
            r"|ErrImagePull: .*nginx:doesnotexist.*)",
            str(info.value),
        ), str(info.value)
        return time.monotonic() - started

    assert with_provider(cluster, body, failure_grace=2.0) < 30


def test_failing_job_reports_its_reason(cluster: LiveCluster) -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "prov-job"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "migrate", "image": "busybox:exit1"}],
                }
            },
        },
    }

    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-job")
        live = await p.apply(job)
        with pytest.raises(ReadinessFailed) as info:
            await p.await_ready(live, timeout=120)
        message = str(info.value)
        assert message.startswith(
            "migrate: failed — BackoffLimitExceeded: Job has reached the specified backoff limit"
        )
        assert re.search(r"; pod migrate-[a-z0-9]+: Error \(exit code 1\)$", message), message

    with_provider(cluster, body)


def test_pvc_waiting_for_its_first_consumer_does_not_block(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> str:
        seen: list[str] = []
        await namespace(p, "prov-pvc")
        claim = await p.apply(volume_claim("data", "prov-pvc", "standard-wffc"))
        ready = await p.await_ready(claim, timeout=30, on_status=seen.append)
        assert ready["status"]["phase"] == "Pending"
        return seen[-1]

    assert with_provider(cluster, body) == (
        "data: Pending until its first consumer is scheduled (StorageClass standard-wffc binds on first consumer)"
    )


def test_pvc_of_a_missing_storage_class_fails_within_seconds(cluster: LiveCluster) -> None:
    async def body(p: KubernetesProvider) -> tuple[str, float]:
        await namespace(p, "prov-pvc-nope")
        claim = await p.apply(volume_claim("data", "prov-pvc-nope", "nope"))
        started = time.monotonic()
        with pytest.raises(ReadinessFailed) as info:
            await p.await_ready(claim, timeout=40)
        return str(info.value), time.monotonic() - started

    message, elapsed = with_provider(cluster, body)
    assert message.startswith("data: Pending — StorageClass nope does not exist"), message
    assert elapsed < 30


def test_delete_timeout_of_a_claim_in_use_names_the_pod_that_uses_it(
    cluster: LiveCluster,
) -> None:
    """kubernetes.io/pvc-protection is not a missing controller: a Pod mounts the claim.
    The message names the Pod and does not advise removing the protection."""

    async def body(p: KubernetesProvider) -> None:
        await namespace(p, "prov-inuse")
        claim = await p.apply(volume_claim("data", "prov-inuse"))
        await p.await_ready(claim, timeout=30)
        pod = await p.apply(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "db", "namespace": "prov-inuse"},
                "spec": {
                    "containers": [{"name": "db", "image": "postgres"}],
                    "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                },
            }
        )
        await p.await_ready(pod, timeout=30)
        with pytest.raises(DeleteTimeout) as info:
            await p.delete("v1", "PersistentVolumeClaim", "prov-inuse", "data", timeout=1)
        message = str(info.value)
        assert message == (
            "data: still present 1s after its deletion "
            "(the limit is the resource's custom_timeouts.delete; raise it, or set the "
            "object's stackwright.io/timeout-seconds annotation, to wait longer) — held by finalizer "
            "kubernetes.io/pvc-protection: Pod db still uses the claim; it goes once no Pod "
            "mounts it (delete or change Pod db first)"
        ), message
        await p.delete("v1", "Pod", "prov-inuse", "db", timeout=30)
        await p.delete("v1", "PersistentVolumeClaim", "prov-inuse", "data", timeout=30)

    with_provider(cluster, body)
