"""The Kubernetes provider: apply, preview, read, list, delete and await objects in one cluster.

What the engine calls (`stackwright.engine.ports.Provider`). Objects go in and
come out as plain dicts in the API's own JSON shape; every write is a server-side
apply with field manager `stackwright` (forcing conflicts only when asked, or when all
are over Stackwright's own marks), so the
provider never computes a patch and never needs the previous state. One exception,
which no apply can get past: a Deployment switched to `strategy.type: Recreate` while
the API server still holds the `rollingUpdate` it defaulted (see `_defaulted_rolling_update`),
and the Recreate that patch leaves when the apply after it never came (a run killed in
between) and the program went back (see `_rolling_update_under_recreate`, `_left_recreate`).

Layering: this module wires the pieces (kubeconfig → transport → ApiClient →
discovery / waiting) and owns no protocol logic itself. It may import
`stackwright.model` and `stackwright.errors` and nothing else of Stackwright; the
engine and the CLI are above it, the local cluster is only a test fixture.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import orjson

from stackwright.model import (
    FIELD_MANAGER,
    LOCAL_CONTEXT_PREFIX,
    PROPAGATION_POLICIES,
    always_secret,
)
from stackwright.providers.kubernetes import readiness
from stackwright.providers.kubernetes.applyset import MARK_ANNOTATIONS, MARK_LABELS, TOOLING_VALUE
from stackwright.providers.kubernetes.client import (
    APPLY_PATCH,
    ApiClient,
    RetryPolicy,
    force_advice,
)
from stackwright.providers.kubernetes.discovery import Discovery, ResourceInfo, ServedKinds
from stackwright.providers.kubernetes.errors import (
    ApplyConflict,
    ApplyRejected,
    ConfigError,
    FieldConflict,
    InvalidObject,
    NamespaceMissing,
    NotFoundError,
    ProviderError,
    TransientError,
    UnknownKind,
)
from stackwright.providers.kubernetes.http import (
    Http1Transport,
    HttpxTransport,
    Response,
    Transport,
    api_warnings,
)
from stackwright.providers.kubernetes.informers import Informers
from stackwright.providers.kubernetes.kubeconfig import ClusterConfig, load_config
from stackwright.providers.kubernetes.managed_fields import taken_over
from stackwright.providers.kubernetes.waiting import DeletionLimit, Waiter

if TYPE_CHECKING:
    import httpx

__all__ = ["KubernetesProvider"]

#: Stackwright's marks as a conflict names them (`.metadata.labels.app.kubernetes.io/managed-by`).
_MARKS = frozenset(
    [f".metadata.labels.{k}" for k in MARK_LABELS]
    + [f".metadata.annotations.{k}" for k in MARK_ANNOTATIONS]
)


def _encode(obj: Mapping[str, Any]) -> bytes:
    return orjson.dumps(obj, default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} cannot be sent to the API server as JSON")


def _without(mapping: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k != key}


#: Tries of the JSON patches that rewrite an object's managedFields (`_rewritten`): one
#: write when none fails, two for the strategy patch's entry and the Recreate it left.
_REWRITE_ATTEMPTS = 4

#: How the API server says a JSON patch's `test` of the resourceVersion failed: a 422 whose
#: message is kube-apiserver's generic one for a JSON patch it could not apply to the object
#: as it is now (`NewGenericServerResponse`, which leaves evanphx/json-patch's own words out
#: of the answer), or, where a server passes them on, those words.
_VERSION_TEST_FAILED = (
    "the server rejected our request due to an error in our request",
    "testing value /metadata/resourceVersion failed",
)


def _overtaken(exc: ProviderError) -> bool:
    """Whether a JSON patch guarded by the resourceVersion it was made from was refused
    only because the object changed since: its `test` failed (422), or its write lost the
    race the API server retries a patch over (409 Conflict, not a field manager's). Any
    other error (a 422 that names an invalid field, a 403) is not cured by reading the
    object anew."""
    if exc.status == 409:
        return not isinstance(exc, ApplyConflict)
    if exc.status != 422:
        return False
    causes = exc.causes if isinstance(exc, InvalidObject) else ()
    said = [text.lower() for text in (str(exc), *(cause.message for cause in causes))]
    return any(words.lower() in text for words in _VERSION_TEST_FAILED for text in said)


def _is_deployment(body: Mapping[str, Any]) -> bool:
    return (body.get("apiVersion"), body.get("kind")) == ("apps/v1", "Deployment")


def _defaulted_rolling_update(body: Mapping[str, Any], refused: InvalidObject) -> bool:
    """Whether the API server refused `body`, a Deployment the program switched to
    `strategy.type: Recreate` without a `rollingUpdate`, only for the `rollingUpdate` it
    defaulted when the type was RollingUpdate: that field belongs to no manager, so
    server-side apply never removes it (kubernetes/kubernetes#24198)."""
    strategy = _refused_for_rolling_update(body, refused)
    return (
        strategy is not None
        and strategy.get("type") == "Recreate"
        and "rollingUpdate" not in strategy
    )


def _rolling_update_under_recreate(body: Mapping[str, Any], refused: InvalidObject) -> bool:
    """Whether the API server refused `body`, a Deployment whose program sets a
    `rollingUpdate` and no strategy type (so RollingUpdate), only for that field: the
    object's type is Recreate, which no apply of this program set."""
    strategy = _refused_for_rolling_update(body, refused)
    return strategy is not None and "type" not in strategy and "rollingUpdate" in strategy


def _refused_for_rolling_update(
    body: Mapping[str, Any], refused: InvalidObject
) -> Mapping[str, Any] | None:
    """The strategy `body` sets when it is a Deployment the API server refused only for
    `spec.strategy.rollingUpdate`; else None."""
    if not _is_deployment(body) or not refused.causes:
        return None
    if any(c.field != "spec.strategy.rollingUpdate" for c in refused.causes):
        return None
    strategy: Mapping[str, Any] = (body.get("spec") or {}).get("strategy") or {}
    return strategy


async def _strategy_shown(
    send: Callable[..., Awaitable[Any]], body: Mapping[str, Any], strategy: Mapping[str, Any]
) -> _Answer:
    """A dry run of `body` past a strategy only a patch first would let through (a dry-run
    patch would not be there for the dry-run apply to see): the rest applied, the strategy
    shown as it will be."""
    spec = body["spec"]
    response = await send({**body, "spec": _without(spec, "strategy")})
    live = orjson.loads(response.body)
    live.setdefault("spec", {})["strategy"] = dict(strategy)
    return _Answer(orjson.dumps(live), response.headers)


def _left_recreate(body: Mapping[str, Any], live: Mapping[str, Any]) -> bool:
    """Whether `live`'s Recreate is not the program's: `body`, the Deployment applied, sets
    no strategy type (the strategy patch's entry owns the one there)."""
    applied = (body.get("spec") or {}).get("strategy") or {}
    return "type" not in applied and _strategy_type(live) == "Recreate"


def _strategy_type(obj: Mapping[str, Any]) -> Any:
    return ((obj.get("spec") or {}).get("strategy") or {}).get("type")


def _rolling_update_owners(live: Mapping[str, Any], ours: str) -> list[str]:
    """The managers other than `ours` that own part of a Deployment's `spec.strategy.rollingUpdate`."""
    owners = set()
    for entry in (live.get("metadata") or {}).get("managedFields") or ():
        spec = (entry.get("fieldsV1") or {}).get("f:spec") or {}
        if "f:rollingUpdate" in (spec.get("f:strategy") or {}) and entry.get("manager") != ours:
            owners.add(str(entry.get("manager")))
    return sorted(owners)


@dataclass(frozen=True)
class _Answer:
    """An API answer put together from another (a dry run's, with the part it could not show)."""

    body: bytes
    headers: Any


def _proxy_error(config: ClusterConfig) -> ConfigError:
    """httpx refused the proxy: SOCKS without the socksio package, or an unknown scheme.
    The message names the scheme only: a proxy URL may carry a password."""
    scheme, sep, _ = (config.proxy or "").partition("://")
    where = f"the proxy ({scheme.lower()}://…)" if sep else "the proxy"
    where += f" of {config.describe()}"
    if sep and scheme.lower() == "socks5":
        return ConfigError(
            f"{where} needs SOCKS support: pip install 'httpx[socks]' (the socksio package)"
        )
    return ConfigError(
        f"{where} cannot be used: write proxy-url (or HTTPS_PROXY) as an http, https or socks5 URL"
    )


def _unreachable_advice(context: str) -> str:
    """How to fix a cluster that does not answer: a local one is started, another one's
    context may be the wrong one."""
    if context.startswith(LOCAL_CONTEXT_PREFIX):
        name = context.removeprefix(LOCAL_CONTEXT_PREFIX)
        return f"start it (`stackwright cluster start --name {name}`)"
    return (
        "check that the cluster is running and that this is the context meant "
        "(`kubectl config get-contexts` lists them)"
    )


class KubernetesProvider:
    """One cluster, as one user, through one kubeconfig context.

    `kubeconfig` is a path or the kubeconfig's YAML text (None: KUBECONFIG, then
    ~/.kube/config, then the in-cluster service account); `context` overrides the
    current context; `namespace` overrides the context's namespace for objects that
    name none. `timeout` is the default readiness / deletion timeout in seconds.

    Swappable for tests and benchmarks: `config` (a ready `ClusterConfig` instead of
    a kubeconfig), `transport` (an `httpx.AsyncBaseTransport`, e.g. `httpx.MockTransport`),
    `http` ("http1", the lean default; "httpx"; "http2", httpx with HTTP/2 offered),
    `retry` (backoff policy and its sleep), `failure_grace` (how long a retried
    failure such as ImagePullBackOff may last before the wait fails),
    `unreachable_limit` (how long the API server may not answer a wait's watch).
    `served_kinds`: what discovery learns, shared with the other providers given it.
    """

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str | None = None,
        namespace: str | None = None,
        *,
        field_manager: str = FIELD_MANAGER,
        timeout: float = 600,
        config: ClusterConfig | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        http: Literal["http1", "httpx", "http2"] = "http1",
        retry: RetryPolicy | None = None,
        failure_grace: float = 5.0,
        unreachable_limit: float = 60.0,
        request_timeout: float = 60.0,
        max_connections: int = 16,
        environ: Mapping[str, str] | None = None,
        delete_timeout_option: str = "custom_timeouts.delete",
        force_option: str | None = "force",
        served_kinds: ServedKinds | None = None,
        timeout_setting: str = "",
    ) -> None:
        self.config = config or load_config(kubeconfig, context, environ=environ)
        #: The setting `timeout` came from ("the stack's kubernetes:timeout setting"), named
        #: by the message of a wait it ran out; "" for the built-in default.
        self.timeout_setting = timeout_setting
        #: The resource option that bounds a delete's wait, as the program's language spells
        #: it (the engine says which), for the message when the wait runs out.
        self.delete_timeout_option = delete_timeout_option
        self._namespace = namespace or self.config.namespace
        self.field_manager = field_manager
        self.timeout = timeout
        user_agent = TOOLING_VALUE
        http_transport: Transport
        if transport is not None or http != "http1" or self.config.proxy:
            try:
                http_transport = HttpxTransport(
                    self.config.server,
                    self.config.ssl_context,
                    transport=transport,
                    proxy=self.config.proxy,
                    http2=http == "http2",
                    max_connections=max_connections,
                    user_agent=user_agent,
                )
            except (ImportError, ValueError) as exc:
                if not self.config.proxy:
                    raise
                raise _proxy_error(self.config) from exc
        else:
            http_transport = Http1Transport(
                self.config.server,
                self.config.ssl_context,
                tls_server_name=self.config.tls_server_name,
                max_connections=max_connections,
                user_agent=user_agent,
            )
        self.api = ApiClient(
            http_transport,
            self.config.auth,
            server=self.config.server,
            cluster=self.config.describe(),
            retry=retry,
            request_timeout=request_timeout,
            force_option=force_option,
            unreachable_advice=_unreachable_advice(self.config.context),
        )
        at = self.config
        reached = (at.server, at.proxy, at.tls_server_name, at.user)
        kinds = served_kinds.of(*reached) if served_kinds else None
        self.discovery = Discovery(self.api, sleep=self.api.retry.sleep, kinds=kinds)
        self._served_kinds = served_kinds
        self._informers = Informers(self.api)
        self._waiter = Waiter(
            self.api,
            self._informers,
            failure_grace=failure_grace,
            unreachable_limit=unreachable_limit,
        )
        self._apply_query = f"?fieldManager={quote(field_manager, safe='')}"

    # --- identity ------------------------------------------------------------------------

    @property
    def default_namespace(self) -> str:
        return self._namespace

    async def cluster_uid(self) -> str | None:
        """The uid of the cluster's `kube-system` Namespace, its usual id (one GET); None when
        the credentials may not read it (403) or the cluster has none (404)."""
        response = await self.api.request(
            "GET", "/api/v1/namespaces/kube-system", what="kube-system", ok=(403, 404)
        )
        if response.status in (403, 404):
            return None
        uid = (orjson.loads(response.body).get("metadata") or {}).get("uid")
        return uid if isinstance(uid, str) and uid else None

    async def resource_info(self, api_version: str, kind: str) -> ResourceInfo:
        """How the cluster serves `kind`; raises UnknownKind (a CRD may be missing)."""
        return await self.discovery.resource_info(api_version, kind)

    async def resource_info_for_group_kind(self, group: str, kind: str) -> ResourceInfo:
        return await self.discovery.for_group_kind(group, kind)

    async def namespaced(self, api_version: str, kind: str) -> bool:
        return (await self.resource_info(api_version, kind)).namespaced

    async def _locate(
        self, obj: Mapping[str, Any]
    ) -> tuple[ResourceInfo, str | None, str, Mapping[str, Any]]:
        """(info, namespace, name, body): the body drops a namespace a cluster-scoped kind cannot have."""
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if (
            not isinstance(api_version, str)
            or not isinstance(kind, str)
            or not api_version
            or not kind
        ):
            raise InvalidObject(f"{name or '(unnamed)'}: the object needs apiVersion and kind")
        if not isinstance(name, str) or not name:
            raise InvalidObject(
                f"{kind} without metadata.name: server-side apply needs a name (generateName is not supported)"
            )
        cached = self.discovery.cached(api_version, kind)
        info = cached if cached is not None else await self.resource_info(api_version, kind)
        if info.namespaced:
            return info, meta.get("namespace") or self._namespace, name, obj
        if meta.get("namespace"):
            # kubectl ignores a namespace on a cluster-scoped object; so do we.
            body = {**obj, "metadata": {k: v for k, v in meta.items() if k != "namespace"}}
            return info, None, name, body
        return info, None, name, obj

    # --- writes ------------------------------------------------------------------------------

    async def apply(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
        adopting: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply; returns the live object. Conflicts raise ApplyConflict unless
        `force`. `warn` gets each of the API server's warnings (a deprecated version, say).
        `field_manager`: another manager than the provider's (a Patch resource's own), whose
        conflicts are never forced unasked, even over Stackwright's marks. `adopting`: the
        object is one the stack adopts, whose fields the apply sets become its alone
        (`_take_over`); an apply of it that is refused is sent again once what the stack
        applied before is taken over, if any was still shared (`_taken_over_first`)."""
        adopts = adopting and field_manager is None
        try:
            return await self._apply(
                desired,
                force=force,
                dry_run=False,
                warn=warn,
                field_manager=field_manager,
                adopting=adopts,
            )
        except (ApplyRejected, ApplyConflict) as refusal:
            if not adopts:
                raise
            try:
                again = await self._taken_over_first(desired)
            except ProviderError:
                # The refusal is what to tell, and a refused write leaves the step to fail
                # (the object as before), where the takeover's error would leave it pending.
                raise refusal from None
            if not again:
                raise
        return await self._apply(desired, force=force, dry_run=False, warn=warn, adopting=True)

    async def preview(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """Server-side dry-run apply: what the server would store, validation and admission included."""
        return await self._apply(
            desired, force=force, dry_run=True, warn=warn, field_manager=field_manager
        )

    async def _apply(
        self,
        desired: Mapping[str, Any],
        *,
        force: bool,
        dry_run: bool,
        warn: Callable[[str], None] | None,
        field_manager: str | None = None,
        adopting: bool = False,
    ) -> dict[str, Any]:
        # A malformed waiting annotation is bad input: refused before anything is written,
        # not found by the wait after the object changed.
        try:
            readiness.check_annotations(desired)
        except ValueError as exc:
            name = (desired.get("metadata") or {}).get("name") or "(unnamed)"
            raise InvalidObject(f"{name}: {exc}") from exc
        info, namespace, name, body = await self._locate(desired)
        query = self._apply_query
        written_over: frozenset[str] = frozenset()
        if field_manager is None:
            body, written_over = _string_data_as_data(body)
        else:
            query = f"?fieldManager={quote(field_manager, safe='')}"
        if force:
            query += "&force=true"
        if dry_run:
            query += "&dryRun=All"

        async def request(body: Mapping[str, Any], forcing: str = "") -> Any:
            return await self.api.request(
                "PATCH",
                info.path(namespace, name) + query + forcing,
                body=_encode(body),
                content_type=APPLY_PATCH,
                what=name,
            )

        async def send(body: Mapping[str, Any] = body) -> Any:
            try:
                return await request(body)
            except ApplyConflict as exc:
                # Its marks are Stackwright's whoever held them: an object Helm made
                # carries `app.kubernetes.io/managed-by: Helm`, which adopting it takes over.
                # So is what `stackwright` wrote other than by applying (the strategy patch,
                # a run killed before the apply that follows it left it). Every apply of the
                # step, the one after the strategy patch as well. And a Secret's keys given
                # as stringData, which the API server writes over any manager's data.
                if (
                    force
                    or field_manager is not None
                    or not exc.conflicts
                    or not all(self._ours(c) or c.field in written_over for c in exc.conflicts)
                ):
                    raise
                return await request(body, "&force=true")

        try:
            response = await send()
        except NotFoundError as exc:
            if namespace and f'namespaces "{namespace}" not found' in str(exc):
                raise NamespaceMissing(
                    f"{exc}: declare namespace {namespace} in the program (a Namespace "
                    "resource is applied before what goes in it) or create it, or put the "
                    "object in a namespace that exists",
                    namespace=namespace,
                ) from exc
            raise
        except InvalidObject as exc:  # 422, 400, or a patch the schema does not fit (a 500)
            response = None
            if _defaulted_rolling_update(body, exc):
                response = await self._recreate_strategy(
                    info, namespace, name, body, send, force=force, dry_run=dry_run
                )
            elif _rolling_update_under_recreate(body, exc):
                response = await self._undo_strategy_patch(
                    info.path(namespace, name), name, body, send, dry_run=dry_run
                )
            if response is None:
                raise ApplyRejected(exc.message, causes=exc.causes, status=exc.status) from exc
        if warn is not None:
            for text in api_warnings(response.headers):
                warn(text)
        live: dict[str, Any] = orjson.loads(response.body)
        if not dry_run:
            # The server's answer: a Patch of a CRD (its own field manager) may send
            # only the versions it changes, not the group and kind that say which to forget.
            self._forget_kind_of(live)
        if not dry_run and _is_deployment(body):
            # Every apply, not only the one after the patch: a run killed between the two
            # leaves the entry, and the next run's apply goes straight through.
            live = await self._forget_strategy_patch(info.path(namespace, name), name, body, live)
        if not dry_run and adopting:
            live = (await self._take_over(info.path(namespace, name), name, live))[0]
        return live

    def _forget_kind_of(self, obj: Mapping[str, Any]) -> None:
        """A CRD applied or deleted: what discovery learnt of its kind may be stale (a
        replacement that changes its scope keeps its name), so it is asked again."""
        if obj.get("kind") != "CustomResourceDefinition":
            return
        spec = obj.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind")
        if isinstance(spec.get("group"), str) and isinstance(kind, str):
            (self._served_kinds or self.discovery).forget(spec["group"], kind)

    async def _recreate_strategy(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        body: Mapping[str, Any],
        send: Callable[..., Awaitable[Any]],
        *,
        force: bool,
        dry_run: bool,
    ) -> Any:
        """Apply `body`, a Deployment switched to Recreate, past the `rollingUpdate` the API
        server defaulted and no manager owns (so no apply removes it): a merge patch sets
        the type and drops the field together, then the apply goes through. Its dry run
        applies the rest and shows the strategy as the program has it (a dry-run patch
        would not be there for the dry-run apply to see). A `rollingUpdate` another manager
        set is theirs: a conflict, which only forcing patches away."""
        spec = body["spec"]
        if not force:
            current = await self.api.request("GET", info.path(namespace, name), what=name)
            owners = _rolling_update_owners(orjson.loads(current.body), self.field_manager)
            if owners:
                field = ".spec.strategy.rollingUpdate"
                raise ApplyConflict(
                    f"{name}: strategy type Recreate takes no {field}, which manager "
                    f"{', '.join(owners)} set; have it remove the field, or "
                    f"{force_advice(self.api.force_option)} to drop it",
                    conflicts=tuple(FieldConflict(field, owner) for owner in owners),
                )
        if dry_run:
            return await _strategy_shown(send, body, spec["strategy"])
        patch = {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}}
        await self._patch(info.path(namespace, name), name, patch, "application/merge-patch+json")
        return await send()

    async def _undo_strategy_patch(
        self,
        path: str,
        name: str,
        body: Mapping[str, Any],
        send: Callable[..., Awaitable[Any]],
        *,
        dry_run: bool,
    ) -> Any:
        """Apply `body`, a Deployment whose program sets a `rollingUpdate` and no type,
        past the Recreate a strategy patch left (a run killed before the apply after it):
        the type goes back to RollingUpdate, then the apply goes through (over the patch's
        entry, Stackwright's own). None when the Recreate there is not the patch's."""
        current = orjson.loads((await self.api.request("GET", path, what=name)).body)
        entries = (current.get("metadata") or {}).get("managedFields") or ()
        if not any(self._strategy_patch_entry(e) for e in entries):
            return None
        strategy = {"type": "RollingUpdate", **body["spec"]["strategy"]}
        if dry_run:
            return await _strategy_shown(send, body, strategy)
        version = (current.get("metadata") or {}).get("resourceVersion")
        patch = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": version},
            {"op": "replace", "path": "/spec/strategy/type", "value": "RollingUpdate"},
        ]
        await self._patch(path, name, patch, "application/json-patch+json")
        return await send()

    async def _forget_strategy_patch(
        self, path: str, name: str, body: Mapping[str, Any], live: dict[str, Any]
    ) -> dict[str, Any]:
        """Drop the managedFields entry the strategy patch left (an Update by `stackwright`
        owning `spec.strategy.type`, which the apply owns as well): left, it would keep
        Recreate once the program no longer sets it, and conflict with a later type. When
        the apply (`body`) sets no type, the Recreate there is the patch's (a run killed
        before its apply, whose program then went back to the default): it goes back to
        RollingUpdate first, a write that leaves such an entry too, dropped in turn. Past
        the tries (`_rewritten`), the next apply of the Deployment does this again."""

        def change(live: Mapping[str, Any]) -> tuple[dict[str, Any], bool] | None:
            entries = list((live.get("metadata") or {}).get("managedFields") or ())
            kept = [e for e in entries if not self._strategy_patch_entry(e)]
            if len(kept) == len(entries):
                return None
            if _left_recreate(body, live):
                return {"path": "/spec/strategy/type", "value": "RollingUpdate"}, False
            return {"path": "/metadata/managedFields", "value": kept}, True

        return (await self._rewritten(path, name, live, change))[0]

    async def _take_over(
        self, path: str, name: str, live: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """Make the fields the stack applies to an object it adopts its alone: taken out of
        the `Update` entries of the managers that wrote them before (`taken_over`), which
        would otherwise keep them for good, so that a list item the program drops or
        renames (a Service's port) is not kept beside the new one. No request when no such
        entry shares a field with the stack's (`live`, the apply's answer, shows it). The
        object as last seen, and whether a rewrite was sent. Past the tries, a
        TransientError: the step stays pending, and the next run applies it again and takes
        it over then."""
        sent = False

        def change(live: Mapping[str, Any]) -> tuple[dict[str, Any], bool] | None:
            nonlocal sent
            entries = (live.get("metadata") or {}).get("managedFields") or ()
            kept = taken_over(entries, self.field_manager)
            if kept is None:
                return None
            sent = True
            return {"path": "/metadata/managedFields", "value": kept}, True

        live, done = await self._rewritten(path, name, live, change)
        if not done:
            raise TransientError(
                f"{name}: adopted, but its fields could not be taken over from the managers "
                "that wrote them (the object kept changing meanwhile); run the command again"
            )
        return live, sent

    async def _taken_over_first(self, desired: Mapping[str, Any]) -> bool:
        """Take over the fields of an adopted object as its last apply left them (one GET):
        a run stopped between an adoption's apply and its takeover leaves the creator's
        entries owning them too, and an apply that drops a list item of theirs (a port)
        is refused then. Whether that changed anything, so that the apply is worth
        sending again."""
        info, namespace, name, _ = await self._locate(desired)
        path = info.path(namespace, name)
        reply = await self.api.request("GET", path, what=name, ok=(404,))
        if reply.status == 404:
            return False
        return (await self._take_over(path, name, orjson.loads(reply.body)))[1]

    async def _rewritten(
        self,
        path: str,
        name: str,
        live: dict[str, Any],
        change: Callable[[Mapping[str, Any]], tuple[dict[str, Any], bool] | None],
    ) -> tuple[dict[str, Any], bool]:
        """`live` changed by the JSON patches `change` asks for, one at a time, until it asks
        none (None; else the `replace` operation and whether it is the last); each holds
        only against the version read, as managedFields written over a newer version would
        undo its writer's ownership. One that a concurrent write (a controller's status)
        overtook (`_overtaken`) is tried again on the object read anew, a few times; any
        other error is raised at once. The object as last seen, and whether nothing is
        left to change (also when it is gone)."""
        for _ in range(_REWRITE_ATTEMPTS):
            wanted = change(live)
            if wanted is None:
                return live, True
            operation, last = wanted
            patch = [
                {
                    "op": "test",
                    "path": "/metadata/resourceVersion",
                    "value": (live.get("metadata") or {}).get("resourceVersion"),
                },
                {"op": "replace", **operation},
            ]
            try:
                patched = await self._patch(
                    path, name, patch, "application/json-patch+json", ok=(404,)
                )
            except ProviderError as exc:
                if not _overtaken(exc):
                    raise
                reply = await self.api.request("GET", path, what=name, ok=(404,))
                if reply.status == 404:
                    return live, True
                live = orjson.loads(reply.body)
                continue
            if not patched:  # deleted meanwhile
                return live, True
            live = patched
            if last:
                return live, True
        return live, change(live) is None

    def _ours(self, conflict: FieldConflict) -> bool:
        """Whether a conflict is over a field Stackwright holds whoever else did: its marks, or
        one its own field manager wrote other than by applying."""
        return conflict.field in _MARKS or conflict.manager == self.field_manager

    def _strategy_patch_entry(self, entry: Mapping[str, Any]) -> bool:
        owned = entry.get("fieldsV1") or {}
        return (
            entry.get("manager") == self.field_manager
            and entry.get("operation") == "Update"
            and not entry.get("subresource")
            and set(owned) == {"f:spec"}
            and set(owned["f:spec"] or {}) == {"f:strategy"}
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
        """Remove Stackwright's labels and annotations (stack, URN, ApplySet membership) from
        an object left in the cluster; NotFound and an unserved kind count as done. With
        `dry_run` the server checks the patch (dryRun=All: RBAC, admission) and keeps it."""
        try:
            info = await self.resource_info(api_version, kind)
        except UnknownKind:
            return
        ns = (namespace or self._namespace) if info.namespaced else None
        patch = {
            "metadata": {
                "labels": dict.fromkeys(MARK_LABELS),
                "annotations": dict.fromkeys(MARK_ANNOTATIONS),
            }
        }
        await self._patch(
            info.path(ns, name),
            name,
            patch,
            "application/merge-patch+json",
            ok=(404,),
            dry_run=dry_run,
        )

    async def _patch(
        self,
        path: str,
        name: str,
        patch: Any,
        content_type: str,
        ok: tuple[int, ...] = (),
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """A patch that is not an apply (`content_type` says which), as field manager
        `stackwright`; the object it answered with ({} for an answer `ok` let through)."""
        response = await self.api.request(
            "PATCH",
            path + self._apply_query + ("&dryRun=All" if dry_run else ""),
            body=orjson.dumps(patch),
            content_type=content_type,
            what=name,
            ok=ok,
        )
        if response.status in ok or not response.body:
            return {}
        answer: dict[str, Any] = orjson.loads(response.body)
        return answer

    async def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        wait: bool = True,
        timeout: float | None = None,
        propagation: str = "Background",
        on_status: Callable[[str], None] | None = None,
        reusing_name: bool = False,
        uid: str | None = None,
    ) -> dict[str, Any] | None:
        """Delete; NotFound counts as done. With `wait`, return only once the object is gone,
        telling `on_status` what holds it meanwhile (finalizers, a Namespace's content).
        An object annotated `stackwright.io/skip-await: "true"` is not waited for, as
        Pulumi's `skipAwait` does, unless `reusing_name`: a new object takes the name next
        (a delete-before-replace), which it could not while the old one is still there.

        `propagation` is what becomes of the objects it owns (the engine passes the policy
        of its `stackwright.io/deletion-propagation` annotation): with Foreground it stays,
        with the `foregroundDeletion` finalizer, until they are gone, and so is waited for;
        with Orphan they stay, and it goes once the garbage collector has let go of them.

        A kind the cluster no longer serves (its CRD was deleted) counts as done too:
        no object of it can exist.

        With `uid` the delete is of that object only (a uid precondition, on the same
        request): another object under its name is left, and returned as read, for the
        caller to tell whose it is; None when the delete was done.
        """
        if propagation not in PROPAGATION_POLICIES:
            raise InvalidObject(
                f"{name}: propagation must be one of {', '.join(PROPAGATION_POLICIES)}, "
                f"got {propagation!r}"
            )
        try:
            info = await self.resource_info(api_version, kind)
        except UnknownKind:
            return None
        ns = (namespace or self._namespace) if info.namespaced else None
        options: dict[str, Any] = {
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "propagationPolicy": propagation,
        }
        if uid:
            options["preconditions"] = {"uid": uid}
        response = await self.api.request(
            "DELETE", info.path(ns, name), body=orjson.dumps(options), what=name, ok=(404, 409)
        )
        if response.status == 409:
            return await self._another_under_name(info, ns, name, uid, response)
        if kind == "CustomResourceDefinition" and info.group == "apiextensions.k8s.io":
            self._forget_kind_of(orjson.loads(response.body) if response.body else {})
        if response.status == 404 or not wait:
            return None
        last = orjson.loads(response.body) if response.body else {}
        if last.get("kind") == "Status":
            return None  # a Status answer means the object is already gone
        meta = last.get("metadata") or {}
        if (
            response.status == 200
            and not meta.get("deletionTimestamp")
            and not meta.get("finalizers")
        ):
            return None  # deleted outright: the answer is the object's last state
        if readiness.skip_await(last) and not reusing_name:
            if on_status is not None:
                on_status(f"{name}: deletion not waited for ({readiness.SKIP_AWAIT})")
            return None
        await self._waiter.wait_deleted(
            info,
            ns,
            name,
            limit=self._deletion_limit(last, timeout),
            what=name,
            last=last or None,
            on_status=on_status,
        )
        return None

    async def _another_under_name(
        self, info: ResourceInfo, ns: str | None, name: str, uid: str | None, refused: Response
    ) -> dict[str, Any] | None:
        """What a delete answered 409 Conflict left under the name: the object read when it
        is another than `uid` (its precondition failed), None when none is there any more.
        Told by the uid read, not by the message: kube-apiserver words the precondition's
        failure two ways (its registry's "the UID in the precondition (…) does not match
        the UID in record (…)", its storage's "Precondition failed: UID in precondition:
        …"), and a 409 for anything else is that error, raised."""
        if uid:
            response = await self.api.request("GET", info.path(ns, name), what=name, ok=(404,))
            if response.status == 404:
                return None
            live: dict[str, Any] = orjson.loads(response.body)
            if (live.get("metadata") or {}).get("uid") != uid:
                return live
        raise self.api.error(refused, what=name, method="DELETE")

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
        """Return once an object being deleted (by an earlier delete) is gone, waiting as
        `delete` does (skip-await and `reusing_name` included), without sending a delete:
        none is needed (a second one would only be answered 200 with the object, a
        Terminating Namespace included, since Kubernetes 1.17; 409 Conflict before)."""
        try:
            info = await self.resource_info(api_version, kind)
        except UnknownKind:
            return
        ns = (namespace or self._namespace) if info.namespaced else None
        response = await self.api.request("GET", info.path(ns, name), what=name, ok=(404,))
        if response.status == 404:
            return
        last = orjson.loads(response.body)
        if readiness.skip_await(last) and not reusing_name:
            return
        await self._waiter.wait_deleted(
            info, ns, name, limit=self._deletion_limit(last, timeout), what=name, last=last
        )

    def _deletion_limit(self, obj: Mapping[str, Any], timeout: float | None) -> DeletionLimit:
        """How long to wait for `obj` to go: its own `timeout-seconds`, as for its readiness
        (a Namespace a finalizer holds Terminating would otherwise wait out the default), else
        `timeout` (the resource's `custom_timeouts.delete`, as the engine passes it), else the
        default; with which of them it was and how to change it, for the timeout's message."""
        annotated = None
        with contextlib.suppress(ValueError):  # malformed on a live object: ignored
            annotated = readiness.timeout_seconds(obj)
        if annotated:
            return DeletionLimit(
                annotated,
                f"the object's {readiness.TIMEOUT_SECONDS} annotation; raise it to wait longer",
            )
        if timeout:
            return DeletionLimit(
                timeout,
                f"the resource's {self.delete_timeout_option}; raise it, or set the object's "
                f"{readiness.TIMEOUT_SECONDS} annotation, to wait longer",
            )
        return DeletionLimit(
            self.timeout,
            f"{self.timeout_setting or 'the default'}; "
            f"{'raise it, or ' if self.timeout_setting else ''}set the resource's "
            f"{self.delete_timeout_option} or the object's {readiness.TIMEOUT_SECONDS} "
            "annotation to wait longer",
        )

    # --- reads ----------------------------------------------------------------------------------

    async def read(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        """The live object, or None when it does not exist (nor does its kind, any more)."""
        try:
            info = await self.resource_info(api_version, kind)
        except UnknownKind:
            return None
        ns = (namespace or self._namespace) if info.namespaced else None
        response = await self.api.request("GET", info.path(ns, name), what=name, ok=(404,))
        if response.status == 404:
            return None
        live: dict[str, Any] = orjson.loads(response.body)
        return live

    async def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> builtins.list[dict[str, Any]]:
        """Every object of a kind (in `namespace`, or in all namespaces when None), page by page."""
        info = await self.resource_info(api_version, kind)
        base = info.collection(namespace if info.namespaced else None)
        items: builtins.list[dict[str, Any]] = []
        token = ""
        while True:
            query = "limit=500"
            if label_selector:
                query += f"&labelSelector={quote(label_selector, safe='')}"
            if token:
                query += f"&continue={quote(token, safe='')}"
            data = await self.api.json("GET", f"{base}?{query}", what=f"{kind} list")
            for item in data.get("items") or ():
                item.setdefault("apiVersion", info.api_version)
                item.setdefault("kind", kind)
                items.append(item)
            token = (data.get("metadata") or {}).get("continue") or ""
            if not token:
                return items

    async def list_page(
        self, api_version: str, kind: str, *, limit: int
    ) -> tuple[builtins.list[dict[str, Any]], int | None]:
        """One LIST of at most `limit` objects of a kind in all namespaces, and how many more
        the cluster holds: 0 when none, None when it has more and does not count them (a
        server without `remainingItemCount`)."""
        info = await self.resource_info(api_version, kind)
        data = await self.api.json(
            "GET", f"{info.collection(None)}?limit={limit}", what=f"{kind} list"
        )
        items: builtins.list[dict[str, Any]] = list(data.get("items") or ())
        meta = data.get("metadata") or {}
        if not meta.get("continue"):
            return items, 0
        remaining = meta.get("remainingItemCount")
        return items, remaining if isinstance(remaining, int) else None

    # --- readiness -------------------------------------------------------------------------------

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        *,
        timeout: float | None = None,
        on_status: Callable[[str], None] | None = None,
        fed_later: str = "",
    ) -> dict[str, Any]:
        """Wait until `obj` is ready by its kind's rule (readiness.py); returns the live object.

        `stackwright.io/skip-await: "true"` returns at once; `stackwright.io/timeout-seconds`
        beats `timeout`, which beats the provider's default. Raises ReadinessFailed (within
        seconds, with the cause) or ReadinessTimeout. `fed_later`: for a Service, what makes
        the Pods it selects when that waits for the Service (its endpoints are not waited for).
        """
        name = (obj.get("metadata") or {}).get("name") or "(unnamed)"
        if readiness.trivially_ready(obj):
            if on_status is not None:
                on_status(f"{name}: ready")
            return dict(obj)
        if readiness.skip_await(obj):
            if on_status is not None:
                on_status(f"{name}: not waited for ({readiness.SKIP_AWAIT})")
            return dict(obj)
        try:
            annotated = readiness.timeout_seconds(obj)
            readiness.check_annotations(obj)
        except ValueError as exc:
            raise InvalidObject(f"{name}: {exc}") from exc
        info, namespace, _, _ = await self._locate(obj)
        meta = obj.get("metadata") or {}
        if info.namespaced and meta.get("namespace") != namespace:
            obj = {**obj, "metadata": {**meta, "namespace": namespace}}
        return await self._waiter.await_ready(
            obj,
            info,
            timeout=annotated or timeout or self.timeout,
            on_status=on_status,
            fed_later=fed_later,
            wait_longer="" if annotated or timeout else self.timeout_setting,
        )

    # --- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        await self._informers.close()
        await self.api.transport.close()

    async def __aenter__(self) -> KubernetesProvider:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def _string_data_as_data(body: Mapping[str, Any]) -> tuple[Mapping[str, Any], frozenset[str]]:
    """A v1 Secret's `stringData` sent as the base64 `data` the API server keeps it as, and
    those `data` fields as a conflict names them (`.data.pw`). The server folds `stringData`
    into `data` after server-side apply has recorded what the manager owns: `stringData`
    keys, which no object keeps, and no `data` key, so a key the program drops stayed in the
    Secret for ever (kubernetes#108008; Flux folds them alike). Sent as `data`, the keys are
    the stack's, and one dropped is deleted; as the server wrote `stringData` over whatever
    manager's `data`, the apply takes those fields over (`_apply`), as it did. A Patch's
    manager keeps `stringData`: it never takes another's fields unasked."""
    string_data = body.get("stringData")
    data = body.get("data") or {}
    if (
        not always_secret(body)
        or not isinstance(string_data, Mapping)
        or not isinstance(data, Mapping)
        or not all(isinstance(value, str) for value in string_data.values())
    ):
        return body, frozenset()
    encoded = {key: base64.b64encode(value.encode()).decode() for key, value in string_data.items()}
    # stringData wins over data for a key both name, as the API server has it.
    kept = {key: value for key, value in body.items() if key != "stringData"}
    return {**kept, "data": {**data, **encoded}}, frozenset(f".data.{key}" for key in encoded)
