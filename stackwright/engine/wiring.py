"""The only place the engine meets the Kubernetes provider: it adapts one to `ports.Provider`.

`kubernetes_providers(default)` is the provider factory front ends hand to
`operations.run`: a provider resource's settings (kubeconfig, context,
namespace) make one provider; None makes the stack's default one from the
settings the front end found in the stack's configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stackwright.engine.ports import Provider, ProviderFactory
from stackwright.providers.kubernetes import ApplySet, KubernetesProvider, stamp
from stackwright.providers.kubernetes.applyset import ensure_parent


class KubernetesCluster:
    """`ports.Provider` over a `KubernetesProvider`, with DESIGN's marks and ApplySets."""

    def __init__(self, provider: KubernetesProvider, project: str = "") -> None:
        self.provider = provider
        self.project = project

    @property
    def default_namespace(self) -> str:
        return self.provider.default_namespace

    async def namespaced(self, api_version: str, kind: str) -> bool:
        return await self.provider.namespaced(api_version, kind)

    def stamp(
        self, obj: Mapping[str, Any], *, stack: str, urn: str, namespace: str | None
    ) -> dict[str, Any]:
        return stamp(
            obj,
            stack=stack,
            urn=urn,
            applyset=ApplySet(stack, namespace, self.project) if namespace else None,
        )

    async def ensure_applyset(self, stack: str, namespace: str, group_kinds: Iterable[str]) -> None:
        await ensure_parent(self.provider, ApplySet(stack, namespace, self.project), group_kinds)

    async def remove_applyset(self, stack: str, namespace: str) -> None:
        await self.provider.delete(
            "v1", "ConfigMap", namespace, ApplySet(stack, namespace, self.project).name
        )

    async def preview(self, desired: Mapping[str, Any], *, force: bool = False) -> dict[str, Any]:
        return await self.provider.preview(desired, force=force)

    async def apply(self, desired: Mapping[str, Any], *, force: bool = False) -> dict[str, Any]:
        return await self.provider.apply(desired, force=force)

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
    ) -> dict[str, Any]:
        return await self.provider.await_ready(obj, timeout=timeout, on_status=on_status)

    async def read(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        return await self.provider.read(api_version, kind, namespace, name)

    async def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
    ) -> None:
        await self.provider.delete(api_version, kind, namespace, name, timeout=timeout)

    async def close(self) -> None:
        await self.provider.close()


def kubernetes_providers(
    default: Mapping[str, Any] | None = None, *, timeout: float = 600, project: str = ""
) -> ProviderFactory:
    """A factory of providers; `default` holds the stack's kubeconfig / context / namespace settings."""

    def make(settings: Mapping[str, Any] | None) -> Provider:
        chosen = settings if settings is not None else (default or {})
        return KubernetesCluster(
            KubernetesProvider(
                chosen.get("kubeconfig") or None,
                chosen.get("context") or None,
                chosen.get("namespace") or None,
                timeout=float(chosen.get("timeout") or timeout),
            ),
            project,
        )

    return make
