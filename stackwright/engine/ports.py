"""What the engine needs from a provider and from the state store, as protocols.

The engine codes against these; its wiring (`engine.wiring`) plugs in the
Kubernetes provider and the configured state backend, and tests plug in fakes.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from stackwright.model import ClusterIdentity, Op, PendingOperation, ResourceState


class Provider(Protocol):
    """One cluster: apply, wait, read and delete objects, and mark what a stack owns."""

    @property
    def default_namespace(self) -> str: ...

    @property
    def cluster(self) -> str:
        """Which cluster it reaches (its API server): two providers that name the same one
        manage the same objects, so moving a resource between them replaces nothing."""
        ...

    async def identity(self) -> ClusterIdentity | None:
        """The cluster's identity (`ClusterIdentity`), asked once (one GET) and kept; None when
        it has none the credentials may read."""
        ...

    async def namespaced(self, api_version: str, kind: str) -> bool:
        """Whether a kind is namespaced; raises when the cluster does not serve it."""
        ...

    def stamp(
        self, obj: Mapping[str, Any], *, stack: str, urn: str, namespace: str | None
    ) -> dict[str, Any]:
        """`obj` with the marks of a managed object (labels, annotations, ApplySet membership)."""
        ...

    async def ensure_applyset(
        self, stack: str, namespace: str, group_kinds: Iterable[str]
    ) -> None: ...

    async def check_applyset(self, stack: str, namespace: str) -> None:
        """Fail as `ensure_applyset` would if what has the parent's name is not the stack's
        parent (a preview's check: one read, no write)."""
        ...

    async def applyset_namespaces(self, stack: str) -> list[str]:
        """The namespaces where the stack has an ApplySet parent (one read, no write): what a
        destroy killed before removing them left, which no state records any more."""
        ...

    async def remove_applyset(self, stack: str, namespace: str) -> None:
        """Delete the stack's ApplySet parent in `namespace` once its set has no members;
        nothing when it is gone. Raises, deleting nothing, when the object of that name is
        not the stack's parent (a user's ConfigMap) or objects still carry the set's mark."""
        ...

    async def preview(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]: ...

    async def apply(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
        adopting: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply; `warn` gets each warning the API server sends back (an
        unknown field it dropped, a deprecated API). `field_manager`: a Patch resource's
        own, instead of the provider's. `adopting`: an object the stack adopts (an import,
        or the apply that finishes one a crash cut short), whose fields the apply sets
        become the stack's alone: taken from the managers that wrote them by updates."""
        ...

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        fed_later: str = "",
    ) -> dict[str, Any]:
        """The object once ready (`on_status` gets each status line). `fed_later`: for a
        Service, the resource that makes the Pods it selects when that waits for the Service
        (`graph.services_fed_later`): its endpoints come after it, so are not waited for."""
        ...

    async def read(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None: ...

    async def list(
        self, api_version: str, kind: str, namespace: str | None
    ) -> list[dict[str, Any]]:
        """Every object of a kind in `namespace` (the cluster's, for a cluster-scoped kind)."""
        ...

    async def list_page(
        self, api_version: str, kind: str, *, limit: int
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        """One LIST of at most `limit` objects of a kind in all namespaces, and how many more
        there are (0: none; None: more, uncounted). Raises when the kind is not served or
        the credentials may not list it."""
        ...

    async def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        reusing_name: bool = False,
        propagation: str | None = None,
        uid: str | None = None,
    ) -> dict[str, Any] | None:
        """Delete and wait until it is gone (unless its object says not to wait, and no
        new object needs its name: `reusing_name`); `on_status` hears what still holds it.
        `propagation` (Orphan, Background, Foreground; None: Background) says what becomes
        of the objects it owns: with Foreground it goes only after they have. With `uid`,
        only the object of that uid is deleted (a precondition on the same request): another
        one under the name is left and returned as read; None: deleted, or none there."""
        ...

    async def await_deleted(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        timeout: float | None = None,
        reusing_name: bool = False,
    ) -> None:
        """Return once an object being deleted is gone, sending no delete; raises as
        `delete`'s wait does after `timeout`, and skips it as `delete` does."""
        ...

    async def unmark(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        dry_run: bool = False,
    ) -> None:
        """Take Stackwright's labels and annotations off an object it leaves behind (a
        resource with `retain_on_delete`), so no tool counts it as the stack's any more;
        an object that is gone is done. With `dry_run`, the server checks the change (its
        RBAC and admission too) and makes none."""
        ...

    async def release_apply(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Install a Helm release, or upgrade it if it exists, and wait up to `timeout`
        seconds (the resource's `custom_timeouts.create` / `.update`), else the release's own
        `timeout`; its outputs.

        `spec` is a `helm.Release`'s inputs with `namespace` filled in.
        """
        ...

    async def release_preview(self, spec: Mapping[str, Any]) -> None:
        """Helm's dry run of `release_apply` (the chart rendered, the cluster asked); no change."""
        ...

    async def release_uninstall(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        """Uninstall a Helm release, waiting up to `timeout` seconds (the resource's
        `custom_timeouts.delete`), else the release's own `timeout`, for what it deletes to
        go; nothing when it is not installed."""
        ...

    async def release_read(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        """A Helm release's outputs, or None when it is not installed."""
        ...

    async def close(self) -> None: ...


#: Makes the provider for a provider resource's settings (kubeconfig, context,
#: namespace); None asks for the stack's default provider.
ProviderFactory = Callable[[Mapping[str, Any] | None], Provider]


class Journal(Protocol):
    """One operation's write-ahead record in the state store."""

    def begin(self, step: int, op: Op, resource: ResourceState) -> None: ...

    def end(self, step: int, result: ResourceState | None) -> None: ...

    def begin_many(self, steps: Sequence[tuple[int, Op, ResourceState]]) -> None:
        """`begin` of several steps in one transaction (group commit)."""
        ...

    def end_many(self, steps: Sequence[tuple[int, ResourceState | None]]) -> None:
        """`end` of several steps in one transaction, in the order given."""
        ...

    def fail_step(self, step: int) -> None: ...

    def resolve_pending(self, pending: PendingOperation, result: ResourceState | None) -> None: ...

    def rename(self, urn: str, new_urn: str) -> None: ...

    def set_outputs(self, outputs: Mapping[str, Any]) -> None: ...

    def set_former_names(self, names: Sequence[str]) -> None:
        """Keep only these of the stack's former names: the ones whose ApplySet parents
        could not be removed yet."""
        ...

    def set_default_cluster(self, identity: ClusterIdentity) -> None:
        """Record the cluster the stack's default provider talks to."""
        ...
