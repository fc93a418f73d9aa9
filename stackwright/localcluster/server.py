"""The local cluster's HTTPS front: Kubernetes REST paths onto `Cluster` verbs.

An ASGI application (run by uvicorn) that authenticates the request (a client certificate
the client CA signed, read from the TLS connection, else the bearer token), authorizes
the request (`rbac`: the administrator at once, anyone else by RBAC), parses
`/api/v1/...` and `/apis/G/V/...` paths, serves discovery, OpenAPI and health
endpoints, and streams watches as newline-delimited JSON. It holds no API
semantics of its own: every decision about objects is the `Cluster`'s.

Must never: accept a request without a credential (health checks aside), or answer
an error in any shape but a Kubernetes `Status`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import logging
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import orjson

from stackwright.localcluster import health, rbac, status
from stackwright.localcluster.cluster import (
    Cluster,
    DeleteOptions,
    WatchEvent,
    WriteOptions,
    parse_apply_body,
)
from stackwright.localcluster.registry import COMPONENT_STATUSES, DEPRECATED, ResourceType
from stackwright.localcluster.schema import KUBERNETES_VERSION

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

log = logging.getLogger("stackwright.localcluster")

JSON = b"application/json"
_PUBLIC_PATHS = frozenset({"/healthz", "/livez", "/readyz"})
#: The scope key under which the connection's client-certificate user (or None) comes.
CERTIFICATE_USER = "stackwright.certificate_user"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    #: Impersonate-* headers, each with all its values (Impersonate-Group repeats).
    impersonation: dict[str, list[str]] = field(default_factory=dict)
    #: Who asks: the administrator unless a service account's token, a client certificate
    #: (or impersonation) says else.
    user: rbac.User = rbac.ADMIN
    #: Every value of a query parameter given more than once (`/readyz?exclude=a&exclude=b`);
    #: `query` keeps the last, as Go's `Query().Get` keeps the first of most parameters.
    repeated: dict[str, list[str]] = field(default_factory=dict)

    def every(self, name: str) -> list[str]:
        """All the values of a query parameter, in order."""
        return self.repeated.get(name) or ([self.query[name]] if name in self.query else [])

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("true", "1")


#: The media type kubectl (client-go's discovery) asks /openapi/v2 for.
_OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: ...and the type kube-openapi answers with (Go's mime parser refuses the "@").
_OPENAPI_V2_PROTOBUF_ANSWER = b"application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


@dataclass
class Response:
    code: int
    body: bytes
    content_type: bytes = JSON
    headers: list[tuple[bytes, bytes]] | None = None


@dataclass(frozen=True)
class Target:
    """What a resource path names."""

    rtype: ResourceType
    namespace: str | None  # None: across all namespaces (or cluster-scoped)
    name: str | None
    subresource: str
    watch_path: bool  # legacy /watch/ prefix


class APIServerApp:
    """The ASGI application."""

    def __init__(self, cluster: Cluster, token: str, *, port: int = 0, openapi: Any = None) -> None:
        self.cluster = cluster
        self._token = token.encode()
        from stackwright.localcluster.tokens import signing_key

        self.token_key = signing_key(self._token)
        self.port = port
        self._openapi = openapi
        # Set when the server stops: open watches end then, as a kube-apiserver's do, so a
        # stop does not wait on clients that would keep a watch open for minutes.
        self.stopping = asyncio.Event()

    # --- ASGI plumbing ---------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request = await _read_request(scope, receive)
        try:
            self._authenticate(request, scope.get(CERTIFICATE_USER))
            result = await self._dispatch(request)
        except status.APIError as exc:
            headers = [*_encode_headers(exc.headers), *(_warning(w) for w in exc.warnings)]
            result = Response(exc.code, orjson.dumps(exc.to_status()), headers=headers)
        except Exception as exc:  # an internal error still answers in the Status shape
            log.exception("internal error serving %s %s", request.method, request.path)
            error = status.InternalError(f"Internal error occurred: {type(exc).__name__}: {exc}")
            result = Response(500, orjson.dumps(error.to_status()))
        if isinstance(result, Response):
            await _send_response(send, result)
        else:
            # A followed log is text; everything else streamed is a watch's JSON lines.
            text = request.path.endswith("/log")
            await _stream(send, receive, result, self.stopping, b"text/plain" if text else JSON)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _authenticate(self, request: Request, certified: rbac.User | None) -> None:
        if request.path in _PUBLIC_PATHS:
            return
        # kube-apiserver asks its x509 authenticator before any token one.
        user = certified or self._token_user(request)
        if request.impersonation:
            user = rbac.impersonate(self.cluster.store, user, request.impersonation)
        if not user.privileged:  # the administrator's requests skip RBAC: the hot path
            attrs = rbac.request_attributes(user, request.method, request.path, request.query)
            rbac.check(self.cluster.store, attrs)
        request.user = user

    def _token_user(self, request: Request) -> rbac.User:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            raise status.Unauthorized("Unauthorized")
        token = token.strip()
        if hmac.compare_digest(token.encode(), self._token):
            return rbac.ADMIN
        from stackwright.localcluster.tokens import authenticate  # a service account's

        account = authenticate(self.cluster, self.token_key, token)
        if account is None:
            raise status.Unauthorized("Unauthorized")
        return account

    # --- routing -----------------------------------------------------------------

    async def _dispatch(self, request: Request) -> Response | AsyncIterator[bytes]:
        path = request.path.rstrip("/") or "/"
        if path in _PUBLIC_PATHS or path.startswith(("/healthz/", "/livez/", "/readyz/")):
            return Response(
                200,
                health.answer(path, request.every("verbose") != [], request.every("exclude")),
                b"text/plain; charset=utf-8",
            )
        if path == "/version":
            return _json(200, _version())
        if path.startswith("/openapi"):
            return self._openapi_response(path, request)
        parts = [p for p in path.split("/") if p]
        if not parts or parts[0] not in ("api", "apis"):
            if path == "/":
                return _json(
                    200,
                    {
                        "paths": [
                            "/api",
                            "/api/v1",
                            "/apis",
                            "/healthz",
                            "/livez",
                            "/openapi/v2",
                            "/openapi/v3",
                            "/readyz",
                            "/version",
                        ]
                    },
                )
            raise status.no_such_path()
        if parts[0] == "api":
            if len(parts) == 1:
                return _json(200, self._api_versions())
            group, version, rest = "", parts[1], parts[2:]
            if version != "v1":
                raise status.no_such_path()
        else:
            if len(parts) == 1:
                return _json(200, self._api_group_list())
            if len(parts) == 2:
                return _json(200, self._api_group(parts[1]))
            group, version, rest = parts[1], parts[2], parts[3:]
        if not rest:
            return _json(200, self._resource_list(group, version))
        target = self._target(group, version, rest)
        deprecated = DEPRECATED.get((group, version, target.rtype.plural))
        if deprecated is None:
            return await self._serve(request, target)
        # As kube-apiserver: every request to a deprecated resource is answered with a warning
        # (kubectl prints it), failed ones too; a watch's stream has no room for it.
        warning = _warning(deprecated)
        try:
            answer = await self._serve(request, target)
        except status.APIError as exc:
            exc.headers.setdefault("warning", warning[1].decode())
            raise
        if isinstance(answer, Response):
            answer = replace(answer, headers=[*(answer.headers or []), warning])
        return answer

    def _target(self, group: str, version: str, rest: list[str]) -> Target:
        watch_path = False
        if rest[0] == "watch":
            watch_path, rest = True, rest[1:]
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = self.cluster.registry.by_plural(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        if not rest:
            raise status.no_such_path()
        rtype = self.cluster.type_for(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else None
        subresource = "/".join(rest[2:])
        if subresource.startswith("proxy/"):
            subresource = "proxy"  # what follows is the proxied server's own path
        if (
            subresource
            and subresource not in rtype.subresources
            and not (rtype.key == ("", "namespaces") and subresource == "finalize")
        ):
            raise status.no_such_path()
        if rtype.namespaced and namespace is None and name is not None:
            raise status.no_such_path()
        return Target(rtype, namespace, name, subresource, watch_path)

    async def _serve(self, request: Request, target: Target) -> Response | AsyncIterator[bytes]:
        if not target.rtype.storage and target.rtype.crd is None:
            return await self._serve_converted(request, target)
        cluster, rtype, method, q = self.cluster, target.rtype, request.method, request.query
        ns = target.namespace or ""
        if rtype.verbs == ("create",):  # the review APIs: answered, never stored
            if method != "POST" or target.name is not None or target.watch_path:
                raise _not_allowed(method)
            from stackwright.localcluster.reviews import answer

            body = _parse_body(request)
            review = answer(
                self.cluster.store, request.user, rtype.kind, rtype.api_version, ns, body
            )
            return _json(201, review)
        if rtype.key == COMPONENT_STATUSES:
            return self._component_statuses(request, target)
        if target.name is None:
            if method == "GET":
                if target.watch_path or request.flag("watch"):
                    return self._watch(request, target)
                listed = cluster.list_objects(
                    rtype, target.namespace,
                    label_selector=q.get("labelSelector", ""), field_selector=q.get("fieldSelector", ""),
                    limit=_int(q.get("limit"), "limit"), continue_token=q.get("continue", ""),
                )  # fmt: skip
                list_meta: dict[str, Any] = {"resourceVersion": listed.resource_version}
                if listed.continue_token:
                    list_meta["continue"] = listed.continue_token
                if listed.remaining is not None:
                    list_meta["remainingItemCount"] = listed.remaining
                if _wants_table(request):
                    return _table(request, rtype, listed.items, list_meta)
                return _json(
                    200,
                    {
                        "kind": rtype.list_kind,
                        "apiVersion": rtype.api_version,
                        "metadata": list_meta,
                        "items": listed.items,
                    },
                )
            if method == "POST":
                written = cluster.create(rtype, ns, _parse_body(request), _write_options(request))
                return _json(201, written.obj, warnings=written.warnings)
            if method == "DELETE":
                listed = cluster.delete_collection(
                    rtype, target.namespace, _delete_options(request),
                    label_selector=q.get("labelSelector", ""), field_selector=q.get("fieldSelector", ""),
                )  # fmt: skip
                return _json(
                    200,
                    {
                        "kind": rtype.list_kind,
                        "apiVersion": rtype.api_version,
                        "metadata": {"resourceVersion": listed.resource_version},
                        "items": listed.items,
                    },
                )
            raise _not_allowed(method)
        name = target.name
        sub = target.subresource
        if sub == "scale":
            return await self._scale(request, target)
        if sub in ("log", "binding", "eviction"):
            return self._pod_subresource(request, target)
        if sub == "token":
            if method != "POST":
                raise _not_allowed(method)
            from stackwright.localcluster.tokens import issue

            return _json(201, issue(cluster, self.token_key, ns, name, _parse_body(request)))
        if sub == "proxy":
            # `[scheme:]name[:port]` names what to reach (net.SplitSchemeNamePort).
            parts = name.split(":")
            cluster.get(rtype, ns, parts[1] if len(parts) == 3 else parts[0])
            kind = rtype.kind.lower()
            raise status.ServiceUnavailable(
                f'cannot proxy to {kind} "{name}": the local cluster\'s '
                + ("nodes are simulated: no kubelet serves" if kind == "node" else
                   "pods are simulated: no container process runs")
            )  # fmt: skip
        if sub in _STREAMS:
            if method not in ("GET", "POST"):
                raise _not_allowed(method)
            cluster.get(rtype, ns, name)  # a missing pod is 404, as it is for a real server
            raise status.BadRequest(
                f'cannot {_STREAMS[sub]} pod "{name}": the local cluster\'s pods are simulated: '
                "no container process runs"
            )
        if method == "GET":
            if target.watch_path:
                request.query["fieldSelector"] = f"metadata.name={name}"
                return self._watch(request, target)
            obj = cluster.get(rtype, ns, name)
            if _wants_table(request):
                version = obj["metadata"].get("resourceVersion", "")
                return _table(request, rtype, [obj], {"resourceVersion": version})
            return _json(200, obj)
        if method == "PUT":
            written = cluster.update(
                rtype, ns, name, _parse_body(request), _write_options(request), sub
            )
            return _json(201 if written.created else 200, written.obj, warnings=written.warnings)
        if method == "PATCH":
            content_type = request.headers.get("content-type", "").split(";")[0].strip()
            written = cluster.patch(
                rtype, ns, name, content_type, request.body, _write_options(request), sub
            )
            return _json(201 if written.created else 200, written.obj, warnings=written.warnings)
        if method == "DELETE":
            options = _delete_options(request)
            warnings: list[str] = []
            obj, gone = cluster.delete(rtype, ns, name, options, warnings)
            # As kube-apiserver's DELETE handler: 200 with the object, whether it went or is
            # still being deleted (a Terminating Namespace, an object held by finalizers,
            # again or for the first time); 202 only when an object not yet gone was deleted
            # with `orphanDependents: false`.
            return _json(
                202 if options.cascade_requested and not gone else 200, obj, warnings=warnings
            )
        raise _not_allowed(method)

    async def _serve_converted(
        self, request: Request, target: Target
    ) -> Response | AsyncIterator[bytes]:
        """A built-in kind in a version it is not stored in: converted at the door."""
        from stackwright.localcluster import patch
        from stackwright.localcluster.versions import (
            CONVERTED,
            FIELD_LABELS,
            stored_field_selector,
        )

        rtype = target.rtype
        key = (rtype.group, rtype.version, rtype.plural)
        stored_group, stored_version, to_storage, to_served = CONVERTED[key]
        selector = request.query.get("fieldSelector")
        if selector and key in FIELD_LABELS:
            in_storage = stored_field_selector(selector, FIELD_LABELS[key])
            request = replace(request, query={**request.query, "fieldSelector": in_storage})
        stored = replace(
            target, rtype=self.cluster.type_for(stored_group, stored_version, rtype.plural)
        )
        content_type = request.headers.get("content-type", "").split(";")[0].strip()
        body = request.body
        if request.method in ("POST", "PUT") or content_type.startswith("application/apply-patch"):
            served = _parse_body(request) if request.method != "PATCH" else parse_apply_body(body)
            # A replace or an apply keeps what the served version cannot say from the stored
            # object (an apply, too, would otherwise replace v2's atomic spec.metrics whole).
            old = self._stored_or_none(stored) if request.method != "POST" else None
            body = orjson.dumps(to_storage(served, old))
        elif request.method == "PATCH":
            assert target.name is not None
            current = to_served(self.cluster.get(stored.rtype, target.namespace or "", target.name))
            try:
                document = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                raise status.BadRequest(f"error decoding patch: {exc}") from None
            patched = patch.apply_patch(
                content_type, current, document, rtype.schema, rtype.resolve
            )
            old = self.cluster.get(stored.rtype, target.namespace or "", target.name)
            body = orjson.dumps(to_storage(patched, old))
            request = replace(request, method="PUT")
        if body is not request.body:
            kept = content_type if content_type.startswith("application/apply-patch") else None
            headers = {**request.headers, "content-type": kept or "application/json"}
            request = replace(request, body=body, headers=headers)
        answer = await self._serve(request, stored)
        if isinstance(answer, Response):
            if answer.content_type == JSON and answer.body:
                answer = replace(answer, body=orjson.dumps(to_served(orjson.loads(answer.body))))
            return answer
        return _map_lines(answer, lambda line: orjson.dumps(to_served(orjson.loads(line))) + b"\n")

    def _component_statuses(self, request: Request, target: Target) -> Response:
        """componentstatuses (`kubectl get cs`): the control plane as kube-apiserver probes it;
        the local cluster's parts all answer while it serves."""
        if request.method != "GET" or target.watch_path or request.flag("watch"):
            raise _not_allowed(request.method)
        items: list[dict[str, Any]] = [
            {
                "kind": "ComponentStatus",
                "apiVersion": "v1",
                "metadata": {"name": name},
                "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
            }
            for name in ("scheduler", "controller-manager", "etcd-0")
        ]
        if target.name is not None:
            items = [i for i in items if i["metadata"]["name"] == target.name]
            if not items:
                raise status.not_found(target.rtype.plural, "", target.name)
        else:  # a list filters by its selectors, as upstream's componentstatus REST does
            q = request.query
            selected = self.cluster.matcher(
                target.rtype, q.get("labelSelector", ""), q.get("fieldSelector", "")
            )
            items = [i for i in items if selected(i)]
        if _wants_table(request):
            return _table(request, target.rtype, items, {})
        if target.name is not None:
            return _json(200, items[0])
        rtype = target.rtype
        return _json(
            200, {"kind": rtype.list_kind, "apiVersion": "v1", "metadata": {}, "items": items}
        )

    def _stored_or_none(self, target: Target) -> dict[str, Any] | None:
        try:
            return self.cluster.get(target.rtype, target.namespace or "", target.name or "")
        except status.APIError:
            return None

    async def _scale(self, request: Request, target: Target) -> Response:
        from stackwright.localcluster.scale import read_scale, write_scale

        assert target.name is not None
        ns = target.namespace or ""
        if request.method == "GET":
            return _json(200, read_scale(self.cluster, target.rtype, ns, target.name))
        if request.method in ("PUT", "PATCH"):
            return _json(
                200,
                write_scale(
                    self.cluster,
                    target.rtype,
                    ns,
                    target.name,
                    request.method,
                    request.headers.get("content-type", ""),
                    request.body,
                    _write_options(request),
                ),
            )
        raise _not_allowed(request.method)

    def _pod_subresource(self, request: Request, target: Target) -> Response | AsyncIterator[bytes]:
        """pods/NAME/log (GET), pods/NAME/binding and pods/NAME/eviction (POST)."""
        assert target.name is not None
        ns, name, sub = target.namespace or "", target.name, target.subresource
        if sub == "log":
            return self._pod_log(request, target)
        if request.method != "POST":
            raise _not_allowed(request.method)
        if sub == "binding":
            return _json(
                201, self.cluster.bind(ns, name, _parse_body(request), _write_options(request))
            )
        from stackwright.localcluster.eviction import evict

        return _json(201, evict(self.cluster, ns, name, _parse_body(request)))

    def _pod_log(self, request: Request, target: Target) -> Response | AsyncIterator[bytes]:
        """pods/NAME/log (GET): the container's log so far; with `follow`, a stream of it
        while the run read is running (not for `previous`), up to `limitBytes` if given."""
        if request.method != "GET":
            raise _not_allowed(request.method)
        from stackwright.localcluster.controllers.kubelet import container_log, running_run

        assert target.name is not None
        q = request.query
        container = q.get("container", "")
        pod = self.cluster.get(target.rtype, target.namespace or "", target.name)
        # A follow watches from the store's version as the pod was read (the pod's own may
        # be older than the watch history): no change after the read is missed.
        since = str(self.cluster.store.resource_version)
        tail = q.get("tailLines")
        limit = _int(q["limitBytes"], "limitBytes") if q.get("limitBytes") else None
        previous, timestamps = request.flag("previous"), request.flag("timestamps")
        text = container_log(
            pod,
            container,
            previous=previous,
            tail_lines=_int(tail, "tailLines") if tail else None,
            timestamps=timestamps,
            limit_bytes=limit,
        )
        run = "" if previous else running_run(pod, container)
        # With `limitBytes`, a follow goes on until it has sent that many, as a kubelet's.
        left = limit - len(text.encode()) if limit is not None else None
        if request.flag("follow") and run and (left is None or left > 0):
            return self._follow_log(
                target.rtype, pod, container, run, since=since, sent=text,
                timestamps=timestamps, left=left,
            )  # fmt: skip
        return Response(200, text.encode(), b"text/plain")

    async def _follow_log(
        self,
        rtype: ResourceType,
        pod: dict[str, Any],
        container: str,
        run: str,
        *,
        since: str,
        sent: str,
        timestamps: bool,
        left: int | None = None,
    ) -> AsyncIterator[bytes]:
        """`kubectl logs -f`: the log `sent` so far, then what the run (its containerID) still
        writes once it ends (a simulated container writes its last lines as it exits), then
        the end, as a kubelet's follow ends with the container it follows. `since`: the
        store's version as `pod` was read; `left`: how many more bytes it may send."""
        from stackwright.localcluster.controllers.kubelet import container_log, ended_run_log

        whole = container_log(pod, container, timestamps=timestamps)
        yield sent.encode()
        meta = pod["metadata"]
        events = self.cluster.watch(
            rtype,
            meta.get("namespace", ""),
            resource_version=since,
            field_selector=f"metadata.name={meta['name']}",
        )
        try:
            async for event in events:
                same_pod = event.obj["metadata"].get("uid") == meta.get("uid")
                ended = (
                    ended_run_log(event.obj, container, run, timestamps=timestamps)
                    if same_pod and event.type != "DELETED"
                    else ""
                )
                if ended is not None:
                    if ended.startswith(whole):
                        yield ended[len(whole) :].encode()[:left]
                    return
        finally:
            await events.aclose()  # type: ignore[attr-defined]

    def _watch(self, request: Request, target: Target) -> AsyncIterator[bytes]:
        q = request.query
        timeout = q.get("timeoutSeconds")
        events = self.cluster.watch(
            target.rtype,
            target.namespace,
            resource_version=q.get("resourceVersion", ""),
            label_selector=q.get("labelSelector", ""),
            field_selector=q.get("fieldSelector", ""),
            bookmarks=request.flag("allowWatchBookmarks"),
            send_initial_events=request.flag("sendInitialEvents"),
            timeout=float(timeout) if timeout else None,
        )
        return _encode_events(events)

    # --- discovery ---------------------------------------------------------------

    def _api_versions(self) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{self.port}"}
            ],
        }

    def _group_entry(self, group: str, versions: list[str]) -> dict[str, Any]:
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}

    def _api_group_list(self) -> dict[str, Any]:
        groups = [
            self._group_entry(group, versions)
            for group, versions in self.cluster.registry.group_versions().items()
            if group
        ]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def _api_group(self, group: str) -> dict[str, Any]:
        versions = self.cluster.registry.group_versions().get(group)
        if not versions or not group:
            raise status.no_such_path()
        return {"kind": "APIGroup", "apiVersion": "v1", **self._group_entry(group, versions)}

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        types = self.cluster.registry.in_group_version(group, version)
        if not types:
            raise status.no_such_path()
        resources: list[dict[str, Any]] = []
        for rtype in sorted(types, key=lambda t: t.plural):
            entry: dict[str, Any] = {
                "name": rtype.plural,
                "singularName": rtype.singular,
                "namespaced": rtype.namespaced,
                "kind": rtype.kind,
                "verbs": list(rtype.verbs),
            }
            if rtype.short_names:
                entry["shortNames"] = list(rtype.short_names)
            if rtype.categories:
                entry["categories"] = list(rtype.categories)
            resources.append(entry)
            for sub in sorted(rtype.subresources):
                sub_entry: dict[str, Any] = {
                    "name": f"{rtype.plural}/{sub}",
                    "singularName": "",
                    "namespaced": rtype.namespaced,
                    "kind": rtype.kind,
                    "verbs": ["get", "patch", "update"],
                }
                if sub == "scale":
                    sub_entry.update(group="autoscaling", version="v1", kind="Scale")
                elif sub in ("log",):
                    sub_entry.update(kind="Pod", verbs=["get"])
                elif sub == "proxy":
                    sub_entry.update(
                        kind=f"{rtype.kind}ProxyOptions",
                        verbs=["create", "delete", "get", "patch", "update"],
                    )
                elif sub in _STREAMS:
                    options = {"exec": "PodExecOptions", "attach": "PodAttachOptions"}
                    sub_entry.update(
                        kind=options.get(sub, "PodPortForwardOptions"), verbs=["create", "get"]
                    )
                elif sub == "token":
                    sub_entry.update(
                        group="authentication.k8s.io",
                        version="v1",
                        kind="TokenRequest",
                        verbs=["create"],
                    )
                elif sub in ("binding", "eviction"):
                    sub_entry.update(
                        kind="Binding" if sub == "binding" else "Eviction", verbs=["create"]
                    )
                    if sub == "eviction":
                        sub_entry.update(group="policy", version="v1")
                resources.append(sub_entry)
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    def _openapi_response(self, path: str, request: Request) -> Response:
        openapi = self._openapi_doc()
        if path == "/openapi/v2":
            accept = request.headers.get("accept", "")
            if _OPENAPI_V2_PROTOBUF in accept and "json" not in accept and "*/*" not in accept:
                # kubectl asks for this (and only this) for a kind /openapi/v3 does not
                # serve, then finds no schema and lets the server answer (`no matches for
                # kind ... ensure CRDs are installed first`). A gnostic Document holding
                # `swagger: "2.0"` alone (field 1): the definitions are served as JSON only.
                return Response(200, b"\x0a\x032.0", _OPENAPI_V2_PROTOBUF_ANSWER)
            return Response(200, openapi.v2())
        if path == "/openapi/v3":
            return _json(200, openapi.v3_index())
        prefix = "/openapi/v3/"
        if path.startswith(prefix):
            parts = path[len(prefix) :].split("/")
            group, version = ("", parts[1]) if parts[0] == "api" and len(parts) == 2 else (
                (parts[1], parts[2]) if parts[0] == "apis" and len(parts) == 3 else ("", "")
            )  # fmt: skip
            if version:
                document = openapi.v3_document(group, version)
                if document is not None:
                    return Response(200, document)
        raise status.no_such_path()

    def _openapi_doc(self) -> Any:
        if self._openapi is None:
            from stackwright.localcluster.openapi import OpenAPI

            self._openapi = OpenAPI(self.cluster.registry)
        return self._openapi

    def invalidate_openapi(self) -> None:
        if self._openapi is not None:
            self._openapi.invalidate()


# --- request and response helpers ----------------------------------------------


async def _read_request(scope: Scope, receive: Receive) -> Request:
    chunks = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    raw_query = scope.get("query_string", b"").decode("latin-1")
    every = parse_qs(raw_query, keep_blank_values=True)
    query = {k: v[-1] for k, v in every.items()}
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    impersonation: dict[str, list[str]] = {}
    if any(k.startswith("impersonate-") for k in headers):
        for k, v in scope["headers"]:
            name = k.decode("latin-1").lower()
            if name.startswith("impersonate-"):
                impersonation.setdefault(name, []).append(v.decode("latin-1"))
    return Request(
        scope["method"], scope["path"], query, headers, b"".join(chunks), impersonation,
        repeated={k: v for k, v in every.items() if len(v) > 1},
    )  # fmt: skip


def _parse_body(request: Request) -> Any:
    content_type = request.headers.get("content-type", "application/json").split(";")[0].strip()
    if not request.body:
        raise status.BadRequest("the body of the request was empty")
    if content_type in ("application/yaml", "application/x-yaml", "text/yaml"):
        import yaml

        try:
            return yaml.safe_load(request.body)
        except yaml.YAMLError as exc:
            raise status.BadRequest(f"error decoding YAML: {exc}") from None
    if content_type.startswith("application/vnd.kubernetes.protobuf"):
        from stackwright.localcluster.protobuf import ProtobufError, decode

        try:
            return decode(request.body)
        except ProtobufError as exc:
            raise status.UnsupportedMediaType(
                f"the body of the request was in an unknown format: {exc} - accepted media types "
                "include: application/json, application/yaml, and application/vnd.kubernetes.protobuf "
                "for the kinds named"
            ) from None
    try:
        return orjson.loads(request.body)
    except orjson.JSONDecodeError as exc:
        raise status.BadRequest(
            f"the body of the request was in an unknown format: {exc}"
        ) from None


def _write_options(request: Request) -> WriteOptions:
    q = request.query
    dry_run = q.get("dryRun", "")
    if dry_run and dry_run != "All":
        raise status.BadRequest(f'unsupported dry run value "{dry_run}": only "All" is supported')
    validation = q.get("fieldValidation", "Warn") or "Warn"
    if validation not in ("Strict", "Warn", "Ignore"):
        raise status.BadRequest(
            f'fieldValidation parameter unsupported: {validation}. Valid values are: "Strict", "Warn", "Ignore"'
        )
    manager = q.get("fieldManager") or None
    if manager is not None and len(manager) > 128:
        raise status.BadRequest(f"fieldManager must not exceed 128 characters (got {len(manager)})")
    return WriteOptions(
        dry_run=bool(dry_run),
        field_manager=manager,
        field_validation=validation,
        force=request.flag("force"),
        user_agent=request.headers.get("user-agent", ""),
        requester=None if request.user.privileged else request.user,
        user=request.user,
    )


def _delete_options(request: Request) -> DeleteOptions:
    body: dict[str, Any] = {}
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    parsed: Any = None
    if request.body and content_type.startswith("application/vnd.kubernetes.protobuf"):
        parsed = _parse_body(request)  # client-go's typed clients (Helm's release storage)
    elif request.body:
        try:
            parsed = orjson.loads(request.body)
        except orjson.JSONDecodeError as exc:
            raise status.BadRequest(f"error decoding DeleteOptions: {exc}") from None
    if isinstance(parsed, dict):
        body = parsed
    q = request.query
    preconditions = body.get("preconditions") or {}
    dry_run = body.get("dryRun") or ([q["dryRun"]] if q.get("dryRun") else [])
    propagation = body.get("propagationPolicy") or q.get("propagationPolicy") or None
    orphan = body.get("orphanDependents", q.get("orphanDependents"))
    if orphan in (True, "true"):
        propagation = "Orphan"
    elif orphan in (False, "false"):
        propagation = "Foreground"
    grace = body.get("gracePeriodSeconds", q.get("gracePeriodSeconds"))
    return DeleteOptions(
        dry_run=dry_run == ["All"],
        propagation=propagation,
        grace_period_seconds=int(grace) if grace is not None else None,
        precondition_uid=preconditions.get("uid"),
        precondition_rv=preconditions.get("resourceVersion"),
        cascade_requested=orphan in (False, "false"),
        user=request.user,
    )


def _int(value: str | None, name: str) -> int:
    if not value:
        return 0
    try:
        return int(value)
    except ValueError:
        raise status.BadRequest(f"invalid {name} parameter: {value!r}") from None


def _wants_table(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "as=Table" in accept


def _table(
    request: Request, rtype: ResourceType, items: list[dict[str, Any]], list_meta: dict[str, Any]
) -> Response:
    """`items` as the Table `kubectl get` asks for (`_wants_table`), with the objects'
    metadata or whole objects as its `includeObject` says."""
    from stackwright.localcluster.tables import render_table

    include = request.query.get("includeObject", "Metadata")
    return _json(200, render_table(rtype, items, list_meta=list_meta, include_object=include))


#: The streaming pod subresources (exec, attach, port-forward) → how a refusal names the act.
_STREAMS = {"exec": "exec in", "attach": "attach to", "portforward": "port-forward to"}


def _not_allowed(method: str) -> status.MethodNotAllowed:
    return status.MethodNotAllowed(
        "the server does not allow this method on the requested resource"
    )


def _version() -> dict[str, str]:
    major, minor, _ = KUBERNETES_VERSION.split(".")
    return {
        "major": major,
        "minor": minor,
        "gitVersion": f"v{KUBERNETES_VERSION}+stackwright",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.24.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def _encode_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), v.encode()) for k, v in headers.items()]


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _warning(text: str) -> tuple[bytes, bytes]:
    # As the API server writes them (RFC 7234): the text quoted, its quotes and backslashes
    # escaped, so a client can tell where each warning ends.
    return (b"warning", f'299 - "{_quoted(text)}"'.encode())


def _json(code: int, body: Any, *, warnings: list[str] | None = None) -> Response:
    headers = [_warning(w) for w in (warnings or [])]
    return Response(code, orjson.dumps(body), headers=headers or None)


async def _send_response(send: Send, response: Response) -> None:
    headers = [
        (b"content-type", response.content_type),
        (b"content-length", str(len(response.body)).encode()),
    ]
    if response.headers:
        headers.extend(response.headers)
    await send({"type": "http.response.start", "status": response.code, "headers": headers})
    await send({"type": "http.response.body", "body": response.body})


async def _map_lines(
    chunks: AsyncIterator[bytes], convert: Callable[[bytes], bytes]
) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        yield b"".join(convert(line) for line in chunk.splitlines() if line.strip())


async def _encode_events(events: AsyncIterator[WatchEvent]) -> AsyncIterator[bytes]:
    async for event in events:
        yield orjson.dumps({"type": event.type, "object": event.obj}) + b"\n"


async def _stream(
    send: Send,
    receive: Receive,
    chunks: AsyncIterator[bytes],
    stopping: asyncio.Event,
    content_type: bytes = JSON,
) -> None:
    """Stream a watch until it ends, the client goes away or the server stops."""

    async def first_chunk() -> bytes | None:
        try:
            return await anext(chunks)
        except StopAsyncIteration:
            return None

    first = asyncio.ensure_future(first_chunk())
    # A watch that cannot start fails at once, and gets an error response; a watch with
    # nothing to report yet must still send its headers now, as the API server does —
    # clients (kubectl wait, informers) block until they arrive.
    await asyncio.wait({first}, timeout=0.01)
    if first.done() and first.exception() is not None:
        exc = first.exception()
        if isinstance(exc, status.APIError):
            await _send_response(send, Response(exc.code, orjson.dumps(exc.to_status())))
            return
        first.result()  # anything else is the server's bug: raise it
    await send({
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", content_type), (b"transfer-encoding", b"chunked")],
    })  # fmt: skip

    async def pump() -> None:
        chunk = await first
        if chunk is not None:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            async for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    pumping = asyncio.ensure_future(pump())
    watching = asyncio.ensure_future(disconnected())
    stopped = asyncio.ensure_future(stopping.wait())
    done, _ = await asyncio.wait({pumping, watching, stopped}, return_when=asyncio.FIRST_COMPLETED)
    for task in (pumping, watching, stopped, first):
        task.cancel()
    await asyncio.gather(pumping, watching, stopped, first, return_exceptions=True)
    await chunks.aclose()  # type: ignore[attr-defined]
    if pumping in done or stopped in done:
        with contextlib.suppress(Exception):  # the client may already be gone
            await send({"type": "http.response.body", "body": b"", "more_body": False})


# --- process entry point ----------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    """Run a cluster's server in the foreground: `python -m stackwright.localcluster.server`."""
    parser = argparse.ArgumentParser(prog="stackwright-localcluster")
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--watch-history", type=int, default=10_000)
    args = parser.parse_args(argv)
    run(args.dir, args.port, nodes=args.nodes, speed=args.speed, watch_history=args.watch_history)


class _AlertingSSLObject(ssl.SSLObject):
    """A connection whose client certificate fails verification (another CA's, expired)
    ends with the TLS alert that says so, as kube-apiserver's does. The event loop's TLS
    layer drops a failed handshake without sending what OpenSSL wrote, so a client read a
    bare EOF, which kubectl and client-go retry as a dropped connection — for nearly a
    minute — before failing. So the failure is held (`refused`), the connection handed
    over as made, and its protocol closes it at once: the close sends the alert (and no
    data is ever read from it)."""

    refused: ssl.SSLCertVerificationError | None = None

    def do_handshake(self) -> None:
        try:
            super().do_handshake()
        except ssl.SSLCertVerificationError as exc:
            self.refused = exc

    def read(self, len: int = 1024, buffer: Any = None) -> Any:
        if self.refused is not None:
            raise ssl.SSLWantReadError("the client certificate was refused")
        return super().read(len, buffer)

    def getpeercert(self, binary_form: bool = False) -> Any:
        # The handshake did not finish: OpenSSL's answer would be an error.
        return None if self.refused is not None else super().getpeercert(binary_form)

    def unwrap(self) -> Any:
        # A refused connection's alert ended it: there is no TLS session to close.
        return None if self.refused is not None else super().unwrap()


def _certificate_protocol() -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol, with the user a verified client certificate names in
    each request's scope (uvicorn's scope has no peer certificate). The certificate is read
    once per connection, which the TLS handshake has verified against the client CA."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class CertificateProtocol(HttpToolsProtocol):
        certificate_user: rbac.User | None = None
        #: When the certificate expires (seconds since the epoch): a keep-alive connection
        #: may outlive it, and kube-apiserver checks the validity at every request.
        certificate_expires = 0.0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            tls = transport.get_extra_info("ssl_object")
            if isinstance(tls, _AlertingSSLObject) and tls.refused is not None:
                transport.close()  # which sends the alert the failed handshake wrote
                return
            peer = tls.getpeercert() if tls is not None else None
            self.certificate_user = rbac.certificate_user(peer)
            if peer:
                self.certificate_expires = ssl.cert_time_to_seconds(peer["notAfter"])

        def on_message_begin(self) -> None:
            super().on_message_begin()
            user = self.certificate_user
            if user is not None and time.time() >= self.certificate_expires:
                user = None  # expired since the handshake: a token may still authenticate
            self.scope[CERTIFICATE_USER] = user  # type: ignore[literal-required]

    return CertificateProtocol


class _RefusedUpgrades(logging.Filter):
    """Drops uvicorn's lines about the WebSocket and SPDY upgrades kubectl exec / attach /
    port-forward try: the server refuses both (the WebSocket one with a 500, then the
    request's own 400, which kubectl shows), so the lines only alarm a reader of server.log."""

    LINES = frozenset(
        {"Unsupported upgrade request.", "ASGI callable returned without completing handshake."}
    )

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in self.LINES


#: How long a stopping server lets requests in flight finish (lifecycle's kill comes at 10 s).
_STOP_GRACE = 5.0


def run(
    folder: Path, port: int, *, nodes: int = 1, speed: float = 1.0, watch_history: int = 10_000
) -> None:
    import uvicorn

    from stackwright.localcluster.controllers import start_controllers
    from stackwright.localcluster.controllers.clusterroles import ensure_bootstrap_policy
    from stackwright.localcluster.credentials import ensure_credentials
    from stackwright.localcluster.store import Store

    creds = ensure_credentials(folder)
    store = Store(folder / "store.db", history=watch_history)
    cluster = Cluster(store)
    ensure_bootstrap_policy(cluster)
    app = APIServerApp(cluster, creds.token, port=port)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            """Stop within a moment of SIGTERM. uvicorn waits for every response to end
            and every connection to close: a watch ends only when its client leaves, and
            an idle keep-alive connection only closes once its client answers the TLS
            goodbye, so a stop with a client still around waited out its kill (10 s)."""
            for listening in self.servers:
                listening.close()
            app.stopping.set()  # the watches end
            deadline = asyncio.get_running_loop().time() + _STOP_GRACE
            while self.server_state.tasks and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.02)  # requests in flight finish
            for connection in list(self.server_state.connections):
                connection.transport.abort()
            await super().shutdown(sockets)

    async def serve() -> None:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            ssl_certfile=str(creds.server_cert),
            ssl_keyfile=str(creds.server_key),
            # As kube-apiserver's --client-ca-file: a certificate is asked for, not required;
            # one the client CA did not sign (or expired) fails the handshake.
            ssl_cert_reqs=ssl.CERT_OPTIONAL,
            ssl_ca_certs=str(creds.client_ca_cert),
            log_level="warning",
            access_log=False,
            lifespan="off",
            http=_certificate_protocol(),
            loop="none",
            timeout_keep_alive=120,
        )
        config.load()
        logging.getLogger("uvicorn.error").addFilter(_RefusedUpgrades())
        assert config.ssl is not None
        config.ssl.sslobject_class = _AlertingSSLObject
        server = Server(config)
        controllers = start_controllers(
            cluster,
            app,
            nodes=nodes,
            speed=speed,
            root_ca=creds.ca_cert.read_text(),
            token_key=app.token_key,
            credentials=creds,
        )
        try:
            await server.serve()
        finally:
            for task in controllers:
                task.cancel()
            await asyncio.gather(*controllers, return_exceptions=True)
            store.close()

    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
        pass
    asyncio.run(serve())


if __name__ == "__main__":
    main()
