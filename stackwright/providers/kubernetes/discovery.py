"""Which kinds a cluster serves, and where: apiVersion + kind → plural, scope, URL paths.

One discovery request per group-version (`/api/v1`, `/apis/apps/v1`), cached for
the provider's life (for the life of a `ServedKinds`, by the providers given it). A
kind that is not in the cache makes its group-version be fetched again (once more
after a short pause, since a real API server publishes a new CRD's kind a moment
after it is Established), so a custom resource whose CRD was created earlier in the
same run is found. Concurrent lookups of the same group-version share one request.
Must never: list every group of the cluster to find one kind.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from stackwright.providers.kubernetes.client import ApiClient
from stackwright.providers.kubernetes.errors import NotFoundError, UnknownKind

__all__ = ["Discovery", "ResourceInfo", "ServedKinds", "split_api_version"]


@dataclass(frozen=True)
class ResourceInfo:
    """How the API serves one kind."""

    plural: str
    namespaced: bool
    group: str
    version: str
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> str:
        """`Deployment.apps`, or `ConfigMap` for the core group (ApplySet's spelling)."""
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def collection(self, namespace: str | None = None) -> str:
        """The collection's path: all namespaces when `namespace` is None for a namespaced kind."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{_segment(namespace)}/{self.plural}"
        return f"{base}/{self.plural}"

    def path(self, namespace: str | None, name: str) -> str:
        return f"{self.collection(namespace)}/{_segment(name)}"


@lru_cache(maxsize=4096)
def _segment(text: str) -> str:
    """`text` quoted as one segment of a URL path: every request names an object and its
    namespace, the same few namespaces (and each name twice or more) over a whole run."""
    return quote(text, safe="")


def split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


Kinds = dict[tuple[str, str], ResourceInfo]  # (apiVersion, kind) → how it is served


class ServedKinds:
    """What discovery learnt, per cluster, for the providers of one operation to share: a
    CRD that one of them replaces or deletes is then asked again by all of them (a second
    provider of the cluster, with another default namespace, kept its kind's former scope).
    A cluster is told by how it is reached: URL, proxy, TLS server name, and user, as a
    proxy in front of several clusters (Teleport's) picks one by the user's certificate at
    one URL. One cluster may be reached in two ways (`127.0.0.1` and `localhost`, two
    users): a CRD's change is forgotten under every one, at the cost of one discovery
    request of another cluster that serves the kind too. Kept for one operation, not the
    process: another tool may change a CRD between two."""

    def __init__(self) -> None:
        self._clusters: dict[tuple[str | None, ...], Kinds] = {}

    def of(self, *reached: str | None) -> Kinds:
        """The kinds of the cluster reached so (`ClusterConfig`'s server, proxy, ...)."""
        return self._clusters.setdefault(reached, {})

    def forget(self, group: str, kind: str) -> None:
        """`Discovery.forget`, for every cluster's providers."""
        for kinds in self._clusters.values():
            _forget(kinds, group, kind)


def _forget(kinds: Kinds, group: str, kind: str) -> None:
    for key in [k for k in kinds if k[1] == kind and kinds[k].group == group]:
        del kinds[key]


class Discovery:
    def __init__(
        self,
        api: ApiClient,
        *,
        settle: float = 0.5,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        kinds: Kinds | None = None,
    ) -> None:
        self._api = api
        self._settle = settle
        self._sleep = sleep
        self._kinds: Kinds = {} if kinds is None else kinds
        self._fetching: dict[str, asyncio.Future[None]] = {}

    def cached(self, api_version: str, kind: str) -> ResourceInfo | None:
        return self._kinds.get((api_version, kind))

    def forget(self, group: str, kind: str) -> None:
        """Drop what was learnt of `kind` of `group`, at every version: its CRD changed (its
        scope, the versions it serves), so the next request asks the cluster again."""
        _forget(self._kinds, group, kind)

    async def resource_info(self, api_version: str, kind: str) -> ResourceInfo:
        found = self._kinds.get((api_version, kind))
        if found is not None:
            return found
        await self._fetch(api_version)
        found = self._kinds.get((api_version, kind))
        if found is None and self._settle > 0:
            await self._sleep(self._settle)
            await self._fetch(api_version)
            found = self._kinds.get((api_version, kind))
        if found is None:
            served = sorted(k for v, k in self._kinds if v == api_version)
            close = difflib.get_close_matches(kind, served, n=1)
            why = _unknown_kind_hint(split_api_version(api_version)[0], close[0] if close else "")
            raise UnknownKind(
                f"{kind} ({api_version}) is not served by the cluster at {self._api.server}: {why}",
                api_version=api_version,
                kind=kind,
            )
        return found

    async def for_group_kind(self, group: str, kind: str) -> ResourceInfo:
        """The kind in its group's preferred version (for ApplySet's `Kind.group` entries)."""
        if not group:
            return await self.resource_info("v1", kind)
        try:
            data: Any = await self._api.json("GET", f"/apis/{group}", what=f"discovery of {group}")
        except NotFoundError:
            data = None
        preferred = ((data or {}).get("preferredVersion") or {}).get("groupVersion")
        if not preferred:
            raise UnknownKind(
                f"{kind}.{group} is not served by the cluster at {self._api.server}: the API group "
                f"{group} does not exist (a missing CustomResourceDefinition?)",
                api_version=group,
                kind=kind,
            )
        return await self.resource_info(str(preferred), kind)

    async def _fetch(self, api_version: str) -> None:
        running = self._fetching.get(api_version)
        if running is not None:
            await asyncio.shield(running)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._fetching[api_version] = future
        try:
            await self._load(api_version)
            future.set_result(None)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # mark it retrieved: the waiters re-raise it
            raise
        finally:
            del self._fetching[api_version]

    async def _load(self, api_version: str) -> None:
        group, version = split_api_version(api_version)
        if not version or api_version.count("/") > 1:
            raise UnknownKind(
                f"apiVersion {api_version!r} is not valid: use `v1` or `<group>/<version>` (apps/v1)",
                api_version=api_version,
                kind="",
            )
        target = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            data: Any = await self._api.json("GET", target, what=f"discovery of {api_version}")
        except NotFoundError:
            return  # the group-version is not served (yet): the caller reports the kind
        for resource in (data or {}).get("resources") or ():
            name = resource.get("name", "")
            if "/" in name or not resource.get("kind"):
                continue  # subresources (deployments/status)
            info = ResourceInfo(
                plural=name,
                namespaced=bool(resource.get("namespaced")),
                group=group,
                version=version,
                kind=resource["kind"],
            )
            self._kinds[(api_version, info.kind)] = info


def _unknown_kind_hint(group: str, close: str) -> str:
    """What to check when the cluster serves no such kind in `group`: `close`, a kind it
    serves whose name is near, first; then a custom resource's CRD, or, in the core group
    (which no CRD adds to), the kinds it has. `--api-group=''` is the core group as a
    shell passes the empty name."""
    if group and close:
        return (
            f"did you mean {close}, which it serves? Otherwise, if it is a custom resource, its "
            "CustomResourceDefinition may be missing or not yet Established; check "
            f"`kubectl api-resources --api-group={group}`"
        )
    if group:
        return (
            "if it is a custom resource, its CustomResourceDefinition may be missing or not yet "
            f"Established; check `kubectl api-resources --api-group={group}`"
        )
    if close:
        return (
            f"did you mean {close}, which it serves? No CustomResourceDefinition adds a kind to "
            "the core group; `kubectl api-resources --api-group=''` lists the kinds it has"
        )
    return (
        "no CustomResourceDefinition adds a kind to the core group; "
        "`kubectl api-resources --api-group=''` lists the kinds it has"
    )
