"""Kubernetes API requests: credentials, retries with backoff, and errors the user can act on.

`ApiClient` sits on a `Transport` (http.py). It adds the credentials from `auth.py`
(renewing them once after a 401), retries what may pass — 429, 500, 502, 503,
504, connection resets and timeouts — with exponential backoff and full jitter,
bounded by `RetryPolicy`, honouring `Retry-After`, and turns every other answer
into the provider's error tree with the API server's own message.

A server that has not answered once in this client's life is not waited for as one that
went away mid-run (an API server restarting during a long `up`): its first request gives
up after `RetryPolicy.first_contact_attempts`, and every later request is answered at once
with that failure (`Unreachable`), not retried again for each object.

Every method takes `what`, the name the user knows the object by ("web"), and
puts it first in messages. The sleep and the random source are injectable so
retry tests run instantly. Must never: retry a 4xx other than 429, or hide the
server's message.
"""

from __future__ import annotations

import asyncio
import random
import re
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from stackwright.providers.kubernetes.auth import Auth
from stackwright.providers.kubernetes.errors import (
    AccessDenied,
    ApplyConflict,
    Cause,
    ConfigError,
    FieldConflict,
    InvalidObject,
    NotFoundError,
    PermanentError,
    ProviderError,
    TransientError,
    Unreachable,
)
from stackwright.providers.kubernetes.http import Response, Transport

__all__ = ["ApiClient", "Expired", "RetryPolicy", "parse_status"]

JSON = "application/json"
APPLY_PATCH = "application/apply-patch+yaml"
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_MANAGER = re.compile(r'conflict with "((?:[^"\\]|\\.)*)"')
_SUBRESOURCE = re.compile(r'with subresource "([^"]*)"')
#: How to fix a server that stopped answering.
_RUNNING = "check that the cluster is running and reachable"


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(cap, base * 2**n)).

    `attempts` counts the first try. A `Retry-After` from the server replaces the
    computed delay (capped by `cap`). With the defaults the worst case is about 16 s.
    `first_contact_attempts` bounds a connection that fails before the server has ever
    answered: a refused first contact is rarely a restart (a started local cluster is
    waited for until it answers), and kubectl reports it within a second.
    """

    attempts: int = 6
    first_contact_attempts: int = 3
    base: float = 0.25
    cap: float = 8.0
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)
    random: Callable[[], float] = field(default=random.random)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(self.cap, max(0.0, retry_after))
        return float(self.random() * min(self.cap, self.base * (2**attempt)))


class Expired(Exception):
    """410 Gone: a watch's resourceVersion is too old; the caller lists again."""


@dataclass(frozen=True)
class Status:
    """The parts of a Kubernetes `Status` body that messages use."""

    code: int
    reason: str
    message: str
    causes: tuple[Cause, ...]


def parse_status(response: Response) -> Status:
    """The server's `Status`, or a stand-in built from the raw body when it sent something else."""
    data: Any = None
    if response.body:
        try:
            data = orjson.loads(response.body)
        except orjson.JSONDecodeError:
            data = None
    if isinstance(data, dict) and data.get("kind") == "Status":
        causes = tuple(
            Cause(str(c.get("field", "")), str(c.get("reason", "")), str(c.get("message", "")))
            for c in (data.get("details") or {}).get("causes") or ()
            if isinstance(c, dict)
        )
        return Status(
            int(data.get("code") or response.status),
            str(data.get("reason") or ""),
            str(data.get("message") or ""),
            causes,
        )
    text = response.body.decode(errors="replace").strip()[:300]
    return Status(response.status, "", text or f"HTTP {response.status}", ())


class ApiClient:
    """One cluster's API: `request` for single answers, `watch` for event streams."""

    def __init__(
        self,
        transport: Transport,
        auth: Auth,
        *,
        server: str,
        cluster: str,
        retry: RetryPolicy | None = None,
        request_timeout: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        force_option: str | None = "force",
        unreachable_advice: str = _RUNNING,
    ) -> None:
        self.transport = transport
        #: The resource option that forces an apply, as the program spells it; None where
        #: the program has none (YAML's), for the advice of a conflict.
        self.force_option = force_option
        self.auth = auth
        # For messages: a server URL may carry credentials (https://user:token@host).
        self.server = _without_userinfo(server)
        self.cluster = cluster  # `context "x" (kubeconfig y)`, for messages
        self.retry = retry or RetryPolicy()
        self.request_timeout = request_timeout
        self._clock = clock
        #: How to fix a server that cannot be reached, for its message.
        self.unreachable_advice = unreachable_advice
        #: Whether the server has answered once: from then on a failed connection is a
        #: restart or a blip, retried in full.
        self._answered = False
        #: Why the server could not be reached before it ever answered: every later request
        #: fails at once with it.
        self._unreachable: str | None = None

    def _never_reached(self, what: str) -> Unreachable | None:
        if self._unreachable is None or self._answered:
            return None
        return Unreachable(what, self._unreachable, sent=False)  # failed before sending

    async def request(
        self,
        method: str,
        target: str,
        *,
        body: bytes | None = None,
        content_type: str = JSON,
        what: str,
        ok: tuple[int, ...] = (),
    ) -> Response:
        """Send with retries; returns 2xx answers and any status in `ok`, raises for the rest."""
        renewed = False
        attempt = 0
        started = self._clock()
        sent = False  # whether an attempt of a write may have reached the server
        while True:
            failed = self._never_reached(what)  # also one that failed while this one slept
            if failed is not None:
                raise failed
            headers = {**(await self.auth.headers()), "Accept": JSON}
            if body is not None:
                headers["Content-Type"] = content_type
            try:
                response = await self.transport.request(
                    method, target, headers, body, self.request_timeout
                )
            except ssl.SSLCertVerificationError as exc:
                raise ConfigError(
                    f"{what}: the API server at {self.server} failed TLS verification "
                    f"({exc.verify_message}); check certificate-authority / tls-server-name of {self.cluster}"
                ) from exc
            except (ConnectionError, TimeoutError, OSError, ssl.SSLError) as exc:
                refused = _refused_certificate(exc)
                if refused:
                    raise ConfigError(
                        f"{what}: the API server at {self.server} {refused} ({self.cluster}); "
                        "check the user's client-certificate and client-key: signed by the "
                        "cluster's client CA, not expired, the key the certificate's"
                    ) from exc
                failure = _network_reason(exc)
                sent = sent or (method not in _READS and not _before_sending(exc))
                attempts = self.retry.attempts
                if not self._answered:
                    attempts = min(attempts, self.retry.first_contact_attempts)
                if attempt + 1 < attempts:
                    await self.retry.sleep(self.retry.delay(attempt))
                    attempt += 1
                    continue
                # Gone since it answered: a restart or the network, not the wrong cluster.
                advice = _RUNNING if self._answered else self.unreachable_advice
                reason = (
                    f"cannot reach the API server at {self.server} ({self.cluster}): {failure}, "
                    f"{attempt + 1} attempts over {self._clock() - started:.1f}s; "
                    f"{advice}, then retry"
                )
                if self._answered:
                    raise TransientError(f"{what}: {reason}") from exc
                self._unreachable = self._unreachable or reason
                raise Unreachable(what, reason, sent=sent) from exc
            self._answered = True
            status = response.status
            if 200 <= status < 300 or status in ok:
                return response
            if status == 401 and not renewed:
                renewed = True
                if await self.auth.refresh():
                    continue
            if status in _RETRY_STATUSES and not _permanent_500(response):
                retry_after = _retry_after(response)
                if attempt + 1 < self.retry.attempts:
                    await self.retry.sleep(self.retry.delay(attempt, retry_after))
                    attempt += 1
                    continue
                info = parse_status(response)
                raise TransientError(
                    f"{what}: the API server answered {status} {info.reason or ''}".rstrip()
                    + f" {attempt + 1} times over {self._clock() - started:.1f}s: {info.message}; try again later",
                    status=status,
                    retry_after=retry_after,
                )
            raise self.error(response, what=what, method=method)

    async def json(
        self,
        method: str,
        target: str,
        *,
        body: bytes | None = None,
        content_type: str = JSON,
        what: str,
    ) -> Any:
        response = await self.request(
            method, target, body=body, content_type=content_type, what=what
        )
        return orjson.loads(response.body) if response.body else None

    def error(self, response: Response, *, what: str, method: str = "GET") -> ProviderError:
        """The provider error for a non-retryable answer (also used for a stream's first answer)."""
        info = parse_status(response)
        status = response.status
        message = info.message or f"HTTP {status}"
        if status == 409 and any(c.reason == "FieldManagerConflict" for c in info.causes):
            conflicts = tuple(
                FieldConflict(c.field, _manager(c.message), _subresource(c.message))
                for c in info.causes
                if c.reason == "FieldManagerConflict"
            )
            return ApplyConflict(
                _conflict_message(what, conflicts, self.force_option), conflicts=conflicts
            )
        if status in (400, 422) or _permanent_500(response):
            return InvalidObject(f"{what}: {message}", causes=info.causes, status=status)
        if status == 404:
            return NotFoundError(f"{what}: {message}", status=404)
        if status == 401:
            return AccessDenied(
                f"{what}: the API server rejected the credentials of {self.cluster} (401 Unauthorized): "
                "log in again or refresh the kubeconfig",
                status=401,
            )
        if status == 403:
            hint = _grant_hint(message)
            return AccessDenied(f"{what}: {message}{hint and f'; {hint}'}", status=403)
        if status == 410:
            return PermanentError(f"{what}: {message}", status=410)
        return PermanentError(
            f"{what}: {message} (HTTP {status} {info.reason})".rstrip(), status=status
        )

    async def watch(
        self, target: str, *, what: str, idle_timeout: float | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """Watch events (`{"type", "object"}`) until the server ends the stream.

        Raises `Expired` for a 410 (an answer or an ERROR event), the provider's errors
        for other failures, and ConnectionError / TimeoutError when the stream breaks.
        """
        for renew in (False, True):
            headers = {**(await self.auth.headers()), "Accept": JSON}
            async with self.transport.stream("GET", target, headers, idle_timeout) as stream:
                if stream.status == 401 and not renew and await self.auth.refresh():
                    continue
                if stream.status == 410:
                    raise Expired(parse_status(Response(410, stream.headers, stream.body)).message)
                if stream.status >= 300:
                    raise self.error(
                        Response(stream.status, stream.headers, stream.body), what=what
                    )
                async for line in stream.lines:
                    event = orjson.loads(line)
                    if event.get("type") == "ERROR":
                        obj = event.get("object") or {}
                        if obj.get("code") == 410:
                            raise Expired(str(obj.get("message", "")))
                        raise self.error(
                            Response(int(obj.get("code") or 500), {}, orjson.dumps(obj)), what=what
                        )
                    yield event
                return


#: The API server's RBAC refusal (responsewriters' forbiddenMessage).
_REFUSAL = re.compile(
    r'User "(?P<user>[^"]*)" cannot (?P<verb>\S+) resource "(?P<resource>[^"]*)" in API group '
    r'"(?P<group>[^"]*)" (?:in the namespace "(?P<namespace>[^"]*)"|at the cluster scope)'
)


def _grant_hint(message: str) -> str:
    """How to fix a 403: the permission to grant, to whom, and with what; "" for a refusal
    no authorizer made (admission: an immortal or terminating namespace, a quota, Pod
    Security, a webhook), which no grant would lift and whose message says why."""
    found = _REFUSAL.search(message)
    if found is None:
        if 'User "' not in message or '" cannot ' not in message:
            return ""
        return (
            "grant the kubeconfig's user this permission, or deploy with credentials that hold it"
        )
    resource, group = found["resource"], found["group"]
    if group:
        base, slash, sub = resource.partition("/")
        resource = f"{base}.{group}{slash}{sub}"
    if found["namespace"]:
        where, objects = f' in namespace "{found["namespace"]}"', "a Role and a RoleBinding"
    else:
        where, objects = " cluster-wide", "a ClusterRole and a ClusterRoleBinding"
    return (
        f'to fix, grant "{found["verb"]}" on {resource}{where} to {found["user"]} ({objects}), '
        "or deploy with a kubeconfig whose user holds it"
    )


def _manager(message: str) -> str:
    found = _MANAGER.search(message)
    return found.group(1) if found else message


def _subresource(message: str) -> str:
    found = _SUBRESOURCE.search(message)
    return found.group(1) if found else ""


def force_advice(option: str | None) -> str:
    """How to force an apply: `--force-conflicts`, or the resource's `option` where the
    program has one (a Python program's `force`; a YAML program has none)."""
    if option is None:
        return "re-run with --force-conflicts"
    return f"re-run with --force-conflicts (or set `{option}` on the resource)"


def _conflict_message(
    what: str, conflicts: tuple[FieldConflict, ...], force_option: str | None
) -> str:
    force = force_advice(force_option)
    # A field the stack applied before and someone changed since is drift, which
    # `up --refresh` takes back without forcing what the stack never held.
    fix = (
        f"{force} to take ownership (one the stack set before, changed since: "
        "`up --refresh` takes it back)"
    )
    if len(conflicts) == 1:
        c = conflicts[0]
        if c.subresource == "scale":
            # An autoscaler owns the count now: taking it back only starts a tug of war.
            return (
                f"{what}: conflict on {c.field} with manager {c.manager}, which scales it "
                "through the scale subresource (an autoscaler, `kubectl scale`); leave "
                f"`replicas` out of the program to let it, or {force} to set the program's count"
            )
        return f"{what}: conflict on {c.field} with manager {c.manager}; {fix}"
    listed = ", ".join(f"{c.field} (manager {c.manager})" for c in conflicts)
    return f"{what}: conflicts on {listed}; {fix}"


def _permanent_500(response: Response) -> bool:
    """Server-side apply reports a patch that does not fit the schema as a 500; it is the object's fault."""
    return response.status == 500 and b"failed to create typed patch object" in response.body


def _retry_after(response: Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


#: The TLS alerts with which a server refuses the client's certificate (OpenSSL's reasons):
#: no retry mends them, unlike a dropped connection.
_CERTIFICATE_ALERTS = frozenset(
    {
        "SSLV3_ALERT_BAD_CERTIFICATE",
        "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
        "SSLV3_ALERT_CERTIFICATE_REVOKED",
        "SSLV3_ALERT_CERTIFICATE_EXPIRED",
        "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
        "TLSV1_ALERT_UNKNOWN_CA",
        "TLSV1_ALERT_ACCESS_DENIED",
        "TLSV1_ALERT_DECRYPT_ERROR",  # the certificate's signature, or its key's, is bad
        "TLSV13_ALERT_CERTIFICATE_REQUIRED",
    }
)


def _refused_certificate(exc: BaseException) -> str:
    """What the server's TLS alert says of the client certificate ("" for other errors)."""
    reason = getattr(exc, "reason", None) if isinstance(exc, ssl.SSLError) else None
    if reason not in _CERTIFICATE_ALERTS:
        return ""
    if reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED":
        return "requires a client certificate and the kubeconfig gives none"
    alert = reason.partition("_ALERT_")[2].lower().replace("_", " ")
    return f"refused the client certificate (TLS alert: {alert})"


#: Methods that change nothing on the server, whatever became of them.
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


def _before_sending(exc: BaseException) -> bool:
    """Whether a request's network failure came before any of it was sent: the connection
    was refused or its host not found. A timeout or a reset may follow a request the server
    received and carried out."""
    return isinstance(exc, (ConnectionRefusedError, socket.gaierror))


def _network_reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    text = str(exc).strip()
    return text or type(exc).__name__


def json_body(obj: Mapping[str, Any]) -> bytes:
    return orjson.dumps(obj)


def _without_userinfo(url: str) -> str:
    """`url` without the `user:password@` part its authority may have."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"
