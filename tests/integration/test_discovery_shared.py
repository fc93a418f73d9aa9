"""What discovery learnt of a custom kind is asked again once its CRD changes, by every
provider of the cluster that the engine made for the operation, and whoever changed it:
a replacement through another provider, or a Patch that sends only part of the CRD."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from stackwright.engine.wiring import KubernetesCluster, kubernetes_providers
from stackwright.providers.kubernetes import KubernetesProvider, UnknownKind

pytestmark = pytest.mark.integration

LiveCluster = Any  # tests/conftest.py's LiveCluster

GROUP = "shared.example.com"


def crd(plural: str, kind: str, scope: str = "Namespaced") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": scope,
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [version("v1", served=True, storage=True)],
        },
    }


def version(name: str, *, served: bool, storage: bool) -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {"openAPIV3Schema": schema},
    }


def custom(kind: str, name: str, api_version: str = f"{GROUP}/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": {}}


def two_providers(cluster: LiveCluster, namespace: str) -> tuple[KubernetesProvider, ...]:
    """Two providers of the test cluster as one operation's factory makes them (a program's
    two `k8s.Provider`s with their own default namespaces)."""
    make = kubernetes_providers({"kubeconfig": str(cluster.kubeconfig)})
    made = [
        make({"kubeconfig": str(cluster.kubeconfig), "namespace": n})
        for n in (namespace, "default")
    ]
    assert all(isinstance(m, KubernetesCluster) for m in made)
    return tuple(m.provider for m in made if isinstance(m, KubernetesCluster))


async def established(provider: KubernetesProvider, body: dict[str, Any]) -> None:
    await provider.await_ready(await provider.apply(body), timeout=30)


async def scope_changed_through_first(
    first: KubernetesProvider, second: KubernetesProvider, kind: str
) -> dict[str, Any]:
    """`second` applies an object of a namespaced custom `kind`; `first` replaces its CRD
    with a cluster-scoped one; what `second` then applies of it (both closed after)."""
    plural = f"{kind.lower()}s"
    try:
        await established(first, crd(plural, kind))
        await second.apply(custom(kind, "one"))  # it learns the kind is namespaced
        await first.delete(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, f"{plural}.{GROUP}"
        )
        await established(first, crd(plural, kind, scope="Cluster"))
        live = await second.apply(custom(kind, "one"))
        await first.delete(
            "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, f"{plural}.{GROUP}"
        )
        return live
    finally:
        await first.close()
        await second.close()


def test_a_crd_replaced_through_one_provider_is_asked_again_by_the_other(
    cluster: LiveCluster,
) -> None:
    # Seen with a program's two providers of one cluster: the second one still sent the
    # object under `namespaces/<ns>/`, where the former CRD served it.
    live = asyncio.run(scope_changed_through_first(*two_providers(cluster, "default"), "Dial"))
    assert "namespace" not in live["metadata"]


def test_a_crd_patch_that_names_no_kind_makes_its_kind_be_asked_again(
    cluster: LiveCluster,
) -> None:
    # The Patch stops serving v1: the kind at v1 is not served, which discovery says
    # (UnknownKind, with its hint), not a request sent to v1's former path.
    async def go() -> None:
        async with KubernetesProvider(str(cluster.kubeconfig)) as provider:
            await established(provider, crd("levers", "Lever"))
            await provider.apply(
                {**custom("Lever", "l1"), "metadata": {"name": "l1", "namespace": "default"}}
            )
            patch = {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"levers.{GROUP}"},
                "spec": {
                    "versions": [
                        version("v1", served=False, storage=False),
                        version("v2", served=True, storage=True),
                    ]
                },
            }
            await provider.apply(patch, field_manager="lever-patch", force=True)
            try:
                with pytest.raises(
                    UnknownKind, match=r"Lever \(shared.example.com/v1\) is not served"
                ):
                    await provider.apply(custom("Lever", "l2"))
            finally:
                await provider.delete(
                    "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, f"levers.{GROUP}"
                )

    asyncio.run(go())


def test_a_crd_replaced_is_asked_again_by_a_provider_that_reaches_its_server_by_another_url(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    # Two kubeconfigs of one API server, `127.0.0.1` in one and `localhost` in the other:
    # what the two providers learn is kept apart (by URL), and a CRD replaced through one
    # must still be asked again by the other, which sent its objects where the former CRD
    # served them.
    text = cluster.kubeconfig.read_text()
    assert "https://127.0.0.1:" in text
    by_name = tmp_path / "by-name.yaml"
    by_name.write_text(text.replace("https://127.0.0.1:", "https://localhost:"))

    make = kubernetes_providers({"kubeconfig": str(cluster.kubeconfig)})
    made = [make({"kubeconfig": str(k)}) for k in (cluster.kubeconfig, by_name)]
    first, second = (m.provider for m in made if isinstance(m, KubernetesCluster))
    assert first.config.server != second.config.server
    live = asyncio.run(scope_changed_through_first(first, second, "Knob"))
    assert "namespace" not in live["metadata"]
