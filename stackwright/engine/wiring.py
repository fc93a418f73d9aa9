"""The only place the engine meets the Kubernetes provider: it adapts one to `ports.Provider`.

`kubernetes_providers(default)` is the provider factory front ends hand to
`operations.run`: a provider resource's settings (kubeconfig, context,
namespace) make one provider; None makes the stack's default one from the
settings the front end found in the stack's configuration. A provider resource with
`renderYamlToDirectory` makes a `ManifestDirectory` instead, which writes files.
"""

from __future__ import annotations

import asyncio
import builtins
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from stackwright import interrupts
from stackwright.engine.ports import Provider, ProviderFactory
from stackwright.kubernetes.provider import RENDER_SETTING
from stackwright.model import ClusterIdentity
from stackwright.providers.kubernetes import ApplySet, KubernetesProvider, ServedKinds, stamp
from stackwright.providers.kubernetes.applyset import (
    ID_LABEL,
    MANAGED_BY,
    PARENT_PREFIX,
    TOOLING,
    ensure_parent,
    read_parent,
    remove_parent,
    unmark_command,
)
from stackwright.providers.kubernetes.errors import NamespaceMissing, NotFoundError, UnknownKind
from stackwright.providers.kubernetes.kubeconfig import from_folder
from stackwright.providers.kubernetes.readiness import check_annotations
from stackwright.providers.kubernetes.waiting import DeletionLimit, format_duration
from stackwright.providers.manifests import ManifestDirectory, manifest_path
from stackwright.sdk.spelling import PYTHON, Spelling

#: What marks an ApplySet parent (KEP-3659) and how Stackwright names its own, for the rest
#: of the engine, which reaches the provider only through this module.
APPLYSET_TOOLING = TOOLING
APPLYSET_ID_LABEL = ID_LABEL
APPLYSET_PARENT_PREFIX = PARENT_PREFIX
#: The kubectl commands that take Stackwright's marks off an object (by hand).
UNMARK_COMMAND = unmark_command


class KubernetesCluster:
    """`ports.Provider` over a `KubernetesProvider`, with DESIGN's marks and ApplySets."""

    def __init__(
        self,
        provider: KubernetesProvider,
        project: str = "",
        kubeconfig: str | None = None,
        spelling: Spelling = PYTHON,
    ) -> None:
        self.provider = provider
        self.project = project
        #: How the program's language spells options, for the messages that name one.
        self.spelling = spelling
        #: The kubeconfig file Helm reads (None: Helm's own resolution, as the provider's).
        self.kubeconfig = kubeconfig
        self._identity: tuple[ClusterIdentity, ...] | None = None  # () when it has none
        self._applysets: dict[tuple[str, str], ApplySet] = {}

    @property
    def default_namespace(self) -> str:
        return self.provider.default_namespace

    @property
    def cluster(self) -> str:
        return self.provider.config.server

    async def identity(self) -> ClusterIdentity | None:
        if self._identity is None:
            uid = await self.provider.cluster_uid()
            config = self.provider.config
            self._identity = (ClusterIdentity(uid, config.server, config.context),) if uid else ()
        return self._identity[0] if self._identity else None

    async def namespaced(self, api_version: str, kind: str) -> bool:
        return await self.provider.namespaced(api_version, kind)

    def stamp(
        self, obj: Mapping[str, Any], *, stack: str, urn: str, namespace: str | None
    ) -> dict[str, Any]:
        return stamp(
            obj,
            stack=stack,
            urn=urn,
            applyset=self._applyset(stack, namespace) if namespace else None,
        )

    def _applyset(self, stack: str, namespace: str) -> ApplySet:
        """The stack's ApplySet in `namespace`, made once: every object applied there is
        stamped with its id (a hash of its parent's name, ~4 µs to work out)."""
        found = self._applysets.get((stack, namespace))
        if found is None:
            found = self._applysets[stack, namespace] = ApplySet(stack, namespace, self.project)
        return found

    async def ensure_applyset(self, stack: str, namespace: str, group_kinds: Iterable[str]) -> None:
        applyset = self._applyset(stack, namespace)
        try:
            await ensure_parent(self.provider, applyset, group_kinds)
        except NotFoundError as exc:
            # The parent is applied before the namespace's first member: its missing
            # namespace is the member's, whose step says so (not in the parent's name).
            said = str(exc).removeprefix(f"{applyset.name}: ")
            if isinstance(exc, NamespaceMissing):  # stays bad input, naming the namespace
                raise NamespaceMissing(said, namespace=str(exc.missing_namespace)) from exc
            raise NotFoundError(said, status=404) from exc

    async def check_applyset(self, stack: str, namespace: str) -> None:
        await read_parent(self.provider, self._applyset(stack, namespace))

    async def applyset_namespaces(self, stack: str) -> list[str]:
        name = ApplySet(stack, "", self.project).name
        parents = await self.provider.list(
            "v1", "ConfigMap", None, label_selector=f"{MANAGED_BY}=stackwright,{ID_LABEL}"
        )
        return sorted(
            str(meta.get("namespace"))
            for meta in (parent.get("metadata") or {} for parent in parents)
            if meta.get("name") == name
        )

    async def remove_applyset(self, stack: str, namespace: str) -> None:
        await remove_parent(self.provider, self._applyset(stack, namespace))

    async def preview(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        return await self.provider.preview(
            desired, force=force, warn=warn, field_manager=field_manager
        )

    async def apply(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
        adopting: bool = False,
    ) -> dict[str, Any]:
        return await self.provider.apply(
            desired, force=force, warn=warn, field_manager=field_manager, adopting=adopting
        )

    async def unmark(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        dry_run: bool = False,
    ) -> None:
        await self.provider.unmark(api_version, kind, namespace, name, dry_run=dry_run)

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        fed_later: str = "",
    ) -> dict[str, Any]:
        return await self.provider.await_ready(
            obj, timeout=timeout, on_status=on_status, fed_later=fed_later
        )

    async def read(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        return await self.provider.read(api_version, kind, namespace, name)

    async def list(
        self, api_version: str, kind: str, namespace: str | None
    ) -> list[dict[str, Any]]:
        return await self.provider.list(api_version, kind, namespace)

    async def list_page(
        self, api_version: str, kind: str, *, limit: int
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        return await self.provider.list_page(api_version, kind, limit=limit)

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
        return await self.provider.delete(
            api_version,
            kind,
            namespace,
            name,
            timeout=timeout,
            propagation=propagation or "Background",
            on_status=on_status,
            reusing_name=reusing_name,
            uid=uid,
        )

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
        await self.provider.await_deleted(
            api_version, kind, namespace, name, timeout=timeout, reusing_name=reusing_name
        )

    # --- Helm releases (`helm.Release`): Helm's blocking calls run in a thread ---------

    def _helm(self, spec: Mapping[str, Any]) -> Any:
        import helm_python

        return helm_python.Config(
            kubeconfig_path=self.kubeconfig,
            kube_context=self.provider.config.context or None,
            namespace=str(spec["namespace"]),
        )

    async def release_apply(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        return await asyncio.to_thread(self._release_apply, spec, timeout=timeout)

    async def release_preview(self, spec: Mapping[str, Any]) -> None:
        await asyncio.to_thread(self._release_apply, spec, dry_run=True)

    async def release_uninstall(
        self, spec: Mapping[str, Any], *, timeout: float | None = None
    ) -> None:
        await asyncio.to_thread(self._release_uninstall, spec, timeout)

    async def release_read(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        return await asyncio.to_thread(self._release_read, spec)

    def _release_apply(
        self, spec: Mapping[str, Any], *, dry_run: bool = False, timeout: float | None = None
    ) -> dict[str, Any]:
        """Install or upgrade, waiting up to `timeout` (the resource's custom timeout) else
        the release's own; with `dry_run`, Helm's server-side dry run of the same (an
        install into a namespace this run creates is dry-run on the client: the server
        would refuse the namespace)."""
        import helm_python

        # Here, not at the top: a run with no Helm release does not load Helm's module.
        from stackwright.kubernetes.helm import helm_refusal, loaded_chart

        name, namespace = str(spec["name"]), str(spec["namespace"])
        repository = dict(spec.get("repositoryOpts") or {})
        common: dict[str, Any] = {
            "namespace": namespace,
            "timeout": _helm_seconds(spec, timeout),
            "wait": None if dry_run else "watcher",
            "rollback_on_failure": bool(spec.get("rollbackOnFailure")),
        }
        what = f"Helm release {namespace}/{name}"
        chart = str(spec["chart"])
        limit = None
        try:
            # Pulled here, not by Helm's install: that takes no credentials or TLS settings.
            with (
                loaded_chart(what, chart, spec.get("version"), repository) as loaded,
                self._helm(spec) as cfg,
            ):
                upgrading = _installed(cfg, name)
                if not dry_run:
                    limit = self._release_limit(spec, timeout, "update" if upgrading else "create")
                if upgrading:
                    release = cfg.upgrade(
                        loaded,
                        name,
                        dict(spec.get("values") or {}),
                        max_history=spec.get("maxHistory"),
                        dry_run="server" if dry_run else None,
                        **common,
                    )
                else:
                    release = cfg.install(
                        loaded,
                        name,
                        dict(spec.get("values") or {}),
                        create_namespace=bool(spec.get("createNamespace")),
                        dry_run=(
                            ("client" if spec.get("createNamespace") else "server")
                            if dry_run
                            else None
                        ),
                        **common,
                    )
                return release_outputs(release, name, namespace)
        except helm_python.HelmError as exc:
            detail = helm_refusal(str(exc.detail), chart, repository)
            raise RuntimeError(_helm_failure(what, detail, limit, _HELM_NOT_READY)) from exc

    def _release_limit(
        self, spec: Mapping[str, Any], timeout: float | None, setting: str
    ) -> DeletionLimit:
        """How long Helm waits for an install (`setting` "create"), an upgrade ("update") or
        an uninstall ("delete"), which setting said so and how to change it."""
        option = self.spelling.name(f"custom_timeouts.{setting}")
        if timeout:
            return DeletionLimit(timeout, f"the resource's {option}; raise it to wait longer")
        return DeletionLimit(
            _helm_seconds(spec, None),
            f"the release's timeout; raise it, or set the resource's {option}, to wait longer",
        )

    def _release_uninstall(self, spec: Mapping[str, Any], timeout: float | None) -> None:
        import helm_python

        name, namespace = str(spec["name"]), str(spec["namespace"])
        limit = self._release_limit(spec, timeout, "delete")
        try:
            with self._helm(spec) as cfg:
                cfg.uninstall(
                    name,
                    ignore_not_found=True,
                    wait="watcher",
                    timeout=math.ceil(limit.seconds),
                )
        except helm_python.HelmError as exc:
            what = f"Helm release {namespace}/{name}"
            raise RuntimeError(
                _helm_failure(what, str(exc.detail), limit, _HELM_WAITED_OUT)
            ) from exc

    def _release_read(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        import helm_python

        name, namespace = str(spec["name"]), str(spec["namespace"])
        try:
            with self._helm(spec) as cfg:
                return release_outputs(cfg.status(name), name, namespace)
        except helm_python.HelmNotFoundError:
            return None
        except helm_python.HelmError as exc:
            raise RuntimeError(f"Helm release {namespace}/{name}: {exc.detail}") from exc

    async def close(self) -> None:
        await self.provider.close()


#: What Helm says when an uninstall's wait ran out (its watcher: what still exists).
_HELM_WAITED_OUT = ("still exists", "context deadline exceeded", "timed out waiting")
#: What Helm's watcher says when an install's or an upgrade's wait ran out (what was not
#: ready); not "context deadline exceeded", which a chart download that timed out says too.
_HELM_NOT_READY = ("not ready. status:",)


def _helm_seconds(spec: Mapping[str, Any], timeout: float | None) -> int:
    """Helm's wait in whole seconds: the resource's custom timeout, else the release's own."""
    return math.ceil(timeout or spec.get("timeout") or 300)


def _helm_failure(
    what: str, detail: str, limit: DeletionLimit | None, waited_out: tuple[str, ...]
) -> str:
    """One line for Helm's error: when its wait ran out (`waited_out` says how Helm tells
    it), as an object's timeout says it — Helm's own first line (what was not ready, or not
    gone), which limit it was and how to wait longer."""
    if limit is None or not any(marker in detail for marker in waited_out):
        return f"{what}: {detail}"
    first = detail.strip().splitlines()[0]
    return (
        f"{what}: {first} — gave up after {format_duration(limit.seconds)} "
        f"(the limit is {limit.set_by})"
    )


def _installed(cfg: Any, name: str) -> bool:
    import helm_python

    try:
        cfg.status(name)
    except helm_python.HelmNotFoundError:
        return False
    return True


def release_outputs(release: Mapping[str, Any], name: str, namespace: str) -> dict[str, Any]:
    """A `helm.Release`'s live outputs from Helm's release summary (manifest left out)."""

    def section(holder: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        found = holder.get(key)
        return found if isinstance(found, Mapping) else {}

    info, chart = section(release, "info"), section(release, "chart")
    meta = section(chart, "metadata")
    status = release.get("status", info.get("status"))
    revision = release.get("revision", release.get("version"))
    return {
        "name": name,
        "namespace": namespace,
        "status": {
            "status": str(status) if status is not None else None,
            "revision": int(revision) if revision is not None else None,
            # helm-python-sdk's summary says `chart_name`; Helm's release object, chart.metadata.
            "chart": meta.get("name")
            or release.get("chart_name")
            or (release.get("chart") if not chart else None),
            "version": meta.get("version") or release.get("chart_version"),
            "app_version": meta.get("appVersion") or release.get("app_version"),
        },
    }


def cluster_context(
    settings: Mapping[str, Any], *, default: bool = False, root: Path | None = None
) -> str | None:
    """The kubeconfig context a provider with these settings talks to (its `context`, else
    the kubeconfig's current one), read without connecting. For the stack's default
    provider (`default`), when there is no kubeconfig to read, the `context` its settings
    name (a local cluster not started yet has its context named before its kubeconfig is
    written), else None: a program that declares providers of its own needs none, and one
    that uses the default provider is refused for it, before any change, when the provider
    is made. A relative kubeconfig path is `root`'s, as the providers made read it."""
    from stackwright.providers.kubernetes.errors import ConfigError
    from stackwright.providers.kubernetes.kubeconfig import load_config

    try:
        return load_config(
            from_folder(settings.get("kubeconfig") or None, root),
            settings.get("context") or None,
        ).context
    except ConfigError:
        if default:
            return settings.get("context") or None
        raise


def default_namespace(settings: Mapping[str, Any], root: Path | None = None) -> str | None:
    """The namespace a provider with these settings puts objects without one in (its
    `namespace`, else its context's, as `KubernetesProvider` decides), read without
    connecting; None when the kubeconfig cannot be read (the operation then says why). A
    relative kubeconfig path is `root`'s, as the providers made read it."""
    from stackwright.providers.kubernetes.errors import ConfigError
    from stackwright.providers.kubernetes.kubeconfig import load_config

    if settings.get("namespace"):
        return str(settings["namespace"])
    if settings.get(RENDER_SETTING):
        return "default"  # no kubeconfig is read: no cluster's context decides
    try:
        return load_config(
            from_folder(settings.get("kubeconfig") or None, root),
            settings.get("context") or None,
        ).namespace
    except ConfigError:
        return None


def manifest_file(directory: str, obj: Mapping[str, Any]) -> str:
    """The file, under a rendering provider's `directory`, that holds the object `obj`
    (its namespace filled in when namespaced), as messages show it."""
    meta = obj.get("metadata") or {}
    relative = manifest_path(
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        meta.get("namespace") or None,
        str(meta.get("name", "")),
    )
    return str(Path(directory) / relative)


def check_marks(obj: Mapping[str, Any]) -> None:
    """Raise ValueError when one of Stackwright's annotations on `obj` (`timeout-seconds`,
    `wait-for`, `deletion-propagation`) is malformed, so a run refuses it before any change, not at its apply.
    Here because the engine reaches the provider's rules only through this module."""
    check_annotations(obj)


def kubernetes_providers(
    default: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    *,
    timeout: float = 600,
    project: str = "",
    check_context: Callable[[str], None] | None = None,
    root: Path | None = None,
    spelling: Spelling = PYTHON,
) -> ProviderFactory:
    """A factory of providers; `default` holds the stack's kubeconfig / context / namespace
    settings (or makes them, once the default provider is first needed); `check_context` may refuse a provider's context (environment separation).
    A provider whose settings name a `renderYamlToDirectory` writes files there (relative
    to `root`, the program's folder) and reaches no cluster. `spelling`: how the program's
    language spells options, for the messages of a wait that runs out. The providers it makes
    share what discovery learns of each cluster (`ServedKinds`): a factory serves one operation."""
    served = ServedKinds()

    def make(settings: Mapping[str, Any] | None) -> Provider:
        if settings is not None:
            chosen = settings
        else:  # asked only when the default provider is made (it may start a local cluster)
            chosen = (default() if callable(default) else default) or {}
        rendered = chosen.get(RENDER_SETTING)
        if rendered:
            directory = (root or Path.cwd()) / str(rendered)
            return ManifestDirectory(directory, chosen.get("namespace") or None)
        kubeconfig = from_folder(chosen.get("kubeconfig") or None, root)
        # Which setting the waits' timeout is, for their messages: the stack's default
        # provider reads the stack's configuration, a provider resource its own arguments.
        setting = ""
        if chosen.get("timeout"):
            setting = (
                "the stack's kubernetes:timeout setting"
                if settings is None
                else "its provider's timeout"
            )
        provider = KubernetesProvider(
            kubeconfig,
            chosen.get("context") or None,
            chosen.get("namespace") or None,
            timeout=float(chosen.get("timeout") or timeout),
            timeout_setting=setting,
            delete_timeout_option=spelling.name("custom_timeouts.delete"),
            force_option=spelling.name("force") if spelling.has("force") else None,
            served_kinds=served,
        )
        if check_context is not None:
            check_context(provider.config.context)
        return KubernetesCluster(
            provider, project, str(kubeconfig) if kubeconfig else None, spelling
        )

    return make


def live_objects(
    settings: Mapping[str, Any],
) -> Callable[[Iterable[tuple[str, str]]], list[dict[str, Any]]]:
    """A reader of every object of the given (apiVersion, kind)s in the cluster the settings
    (kubeconfig / context) name, in all namespaces; kinds the cluster does not serve are skipped."""

    def read(kinds: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
        async def list_all() -> list[dict[str, Any]]:
            provider = KubernetesProvider(
                settings.get("kubeconfig") or None, settings.get("context") or None
            )
            found: list[dict[str, Any]] = []
            try:
                for api_version, kind in kinds:
                    try:
                        found.extend(await provider.list(api_version, kind))
                    except UnknownKind:
                        continue
            finally:
                await provider.close()
            return found

        return interrupts.run(list_all())

    return read
