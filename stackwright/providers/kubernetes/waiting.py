"""Waiting on the cluster: until an object is ready, or until a deleted one is gone.

`await_ready` first judges the object it was given (the answer of the apply): kinds
with nothing to wait for — ConfigMaps, Secrets, RBAC, most of a typical stack —
return at once, with no request. Otherwise it watches the object and the objects
its rule reads (informers.py), re-judges on every change with the pure rules of
readiness.py, reports each new status line through `on_status`, and stops on
ready, on a terminal failure, on a retried failure that outlasts the grace, or at
the deadline. When a Pod keeps a wait going without saying why, its Warning
Events are fetched (at most every few seconds) to name the cause.

`wait_deleted` follows a deleted object with a watch until it is gone and, at the
deadline, says what holds it (finalizers, a namespace's remaining content).
Must never: poll in a tight loop, or return "ready" for an object it did not see.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, NamedTuple
from urllib.parse import quote

import orjson

from stackwright.providers.kubernetes import readiness
from stackwright.providers.kubernetes.client import ApiClient, Expired
from stackwright.providers.kubernetes.discovery import ResourceInfo
from stackwright.providers.kubernetes.errors import (
    AccessDenied,
    DeleteTimeout,
    ProviderError,
    ReadinessFailed,
    ReadinessTimeout,
)
from stackwright.providers.kubernetes.informers import Informer, Informers
from stackwright.providers.kubernetes.readiness import Readiness, Related, State

__all__ = ["DeletionLimit", "Waiter", "format_duration"]

# Built-in collections the rules read, by `Related` field: (api version, kind, path under the namespace).
_RELATED = {
    "pods": ("v1", "Pod", "/api/v1/namespaces/{ns}/pods"),
    "replicasets": ("apps/v1", "ReplicaSet", "/apis/apps/v1/namespaces/{ns}/replicasets"),
    "endpointslices": (
        "discovery.k8s.io/v1",
        "EndpointSlice",
        "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
    ),
}

#: Related lists without which readiness can never be seen (a Service is ready by its
#: EndpointSlices); a list only the messages use (Pods, ReplicaSets) may be forbidden.
_ESSENTIAL = frozenset({"endpointslices"})


class DeletionLimit(NamedTuple):
    """How long to wait for a deleted object to go, and which setting said so, with how to
    change it (`set_by`, for the message when the wait runs out)."""

    seconds: float
    set_by: str


#: How long an object may be missing from its watch before a GET settles whether it exists.
_MISSING_GRACE = 2.0


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes}m"


class Waiter:
    def __init__(
        self,
        api: ApiClient,
        informers: Informers,
        *,
        failure_grace: float = 5.0,
        events_every: float = 5.0,
        clock: Callable[[], float] | None = None,
        unreachable_limit: float = 60.0,
    ) -> None:
        self._api = api
        self._informers = informers
        self._grace = failure_grace
        #: How long the API server may not answer a wait's watch before the wait fails.
        self._unreachable_limit = unreachable_limit
        self._events_every = events_every
        self._clock = clock

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    async def await_ready(
        self,
        obj: Mapping[str, Any],
        info: ResourceInfo,
        *,
        timeout: float,
        on_status: Callable[[str], None] | None = None,
        fed_later: str = "",
        wait_longer: str = "",
    ) -> dict[str, Any]:
        """`wait_longer`: which setting to raise for a longer wait, when the timeout came
        from one the object's own annotation does not name (the stack's)."""
        meta = obj.get("metadata") or {}
        name = str(meta.get("name", ""))
        namespace = str(meta.get("namespace") or "") if info.namespaced else None
        reported: list[str] = []

        def report(message: str) -> None:
            if on_status is not None and (not reported or reported[-1] != message):
                reported.append(message)
                on_status(message)

        first = readiness.evaluate(obj, fed_later=fed_later)
        wanted = readiness.needs(obj, fed_later)
        # Under wait-for the lists only explain a wait: none is needed to see it is over.
        annotated = readiness.waits_for(obj)
        if first.state is State.READY and (annotated or not wanted):
            report(first.message)
            return dict(obj)
        if first.state is State.FAILED and not wanted:
            raise ReadinessFailed(first.message)

        started = self._now()
        deadline = started + timeout
        wake = asyncio.Event()
        async with self._watches(info, namespace, name, wanted, wake) as (
            primary,
            related_informers,
        ):
            essential = frozenset() if annotated else _ESSENTIAL
            await self._first_lists(primary, related_informers, name, deadline, timeout, essential)
            classes = await self._classes(wanted)
            events: list[dict[str, Any]] = []
            events_at = -math.inf
            failing_since: float | None = None
            verdict: Readiness = first
            known: dict[str, Any] = dict(obj)
            missing_since: float | None = None
            while True:
                wake.clear()
                live = primary.get(namespace, name)
                if live is not None and _older(live, known):
                    live = known  # the shared watch has not delivered our own write yet
                if live is None:
                    live, missing_since = await self._missing(
                        primary, info, namespace, name, known, missing_since
                    )
                else:
                    missing_since = None
                known = live
                related = Related(
                    pods=_items(related_informers.get("pods")),
                    replicasets=_items(related_informers.get("replicasets")),
                    endpointslices=_items(related_informers.get("endpointslices")),
                    storageclasses=classes[0] or (),
                    ingressclasses=classes[1],
                    events=events,
                )
                verdict = readiness.evaluate(live, related, fed_later)
                silent = _silence(primary)
                report(self._status_line(name, verdict, silent))
                now = self._now()
                if verdict.state is State.READY:
                    return live
                if verdict.state is State.FAILED:
                    raise ReadinessFailed(verdict.message)
                if verdict.state is State.FAILING:
                    failing_since = now if failing_since is None else failing_since
                    if now - failing_since >= self._grace:
                        # A class missing when the wait began (read once) may have come
                        # since (a chart installing its controller): look again first.
                        fresh = await self._classes(wanted)
                        if fresh == classes:
                            raise ReadinessFailed(verdict.message)
                        classes, failing_since = fresh, None
                        continue
                else:
                    failing_since = None
                # A Pod that keeps the wait going without saying why: its Warning Events may.
                explain = (
                    verdict.state is State.WAITING and bool(verdict.culprit) and bool(namespace)
                )
                next_events = max(events_at + self._events_every, started + self._events_every / 2)
                if explain and now >= next_events:
                    events_at = now
                    fetched = await self._events(namespace or "", verdict.culprit)
                    if fetched != events:
                        events = fetched
                        continue
                    next_events = now + self._events_every
                if now >= deadline:
                    raise _timeout(name, timeout, verdict, wait_longer)
                # Look again at the first moment something can have changed without a watch
                # event: a grace ending, Events due, or (the API server silent) soon, to say
                # so or to give up.
                wake_at = min(
                    deadline,
                    _after(missing_since, _MISSING_GRACE),
                    _after(failing_since, self._grace),
                    next_events if explain else math.inf,
                    now + 1.0 if silent is not None else math.inf,
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.01, wake_at - now)):
                        await wake.wait()

    @contextlib.asynccontextmanager
    async def _watches(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        wanted: frozenset[str],
        wake: asyncio.Event,
    ) -> AsyncIterator[tuple[Informer, dict[str, Informer]]]:
        """The watches a wait reads, each setting `wake` on a change: the object's own (of
        its namespace, or of the one object when it has none), and the lists its rule reads
        (keyed by `Related` field)."""
        async with contextlib.AsyncExitStack() as stack:
            primary = await stack.enter_async_context(
                self._informers.watching(
                    info.collection(namespace),
                    api_version=info.api_version,
                    kind=info.kind,
                    field_selector="" if info.namespaced else f"metadata.name={name}",
                )
            )
            related_informers: dict[str, Informer] = {}
            for field in sorted(wanted & _RELATED.keys()):
                api_version, kind, path = _RELATED[field]
                related_informers[field] = await stack.enter_async_context(
                    self._informers.watching(
                        path.format(ns=quote(namespace or "", safe="")),
                        api_version=api_version,
                        kind=kind,
                    )
                )
            for informer in (primary, *related_informers.values()):
                informer.listen(wake)
                stack.callback(informer.unlisten, wake)
            yield primary, related_informers

    async def _first_lists(
        self,
        primary: Informer,
        related_informers: dict[str, Informer],
        name: str,
        deadline: float,
        timeout: float,
        essential: frozenset[str],
    ) -> None:
        """Return once the watches have their first lists, or raise: the API server did not
        answer, or it refuses a list without which readiness cannot be seen (`essential`)."""
        # An API server that does not answer the object's first list is as silent as one
        # that stops answering later: the same limit, not the whole wait, before giving
        # up. Not the related lists (Pods, Events of a big namespace): slow is not silent.
        limited = self._unreachable_limit < deadline - self._now()
        silent_for = self._unreachable_limit if limited else deadline - self._now()
        try:
            async with asyncio.timeout(max(0.0, silent_for)):
                await primary.synced()
            limited = False  # it answered: what follows has the whole wait
            async with asyncio.timeout(max(0.0, deadline - self._now())):
                for informer in related_informers.values():
                    # Without Pods (a 403, say) we still wait, only with vaguer messages.
                    with contextlib.suppress(ProviderError):
                        await informer.synced()
            for field in sorted(essential & related_informers.keys()):
                refused = related_informers[field].error
                if isinstance(refused, AccessDenied):  # it would wait out its timeout
                    raise AccessDenied(
                        f"{name}: its readiness cannot be seen without reading {field}: "
                        f'{refused}; or annotate it stackwright.io/skip-await: "true"',
                        status=refused.status,
                    ) from refused
        except TimeoutError:
            if limited:
                why = f" ({primary.failure})" if primary.failure else ""
                raise ReadinessFailed(
                    f"{name}: the API server has not answered its watch for "
                    f"{silent_for:.0f}s{why}; is the cluster running?"
                ) from None
            raise ReadinessTimeout(
                f"{name}: not ready after {format_duration(timeout)} — the API server did not answer the watch",
                last_status="",
            ) from None

    def _status_line(self, name: str, verdict: Readiness, silent: tuple[float, str] | None) -> str:
        """The status to report: the verdict's, and while the API server does not answer
        the watch, that too; raise once it has not answered for the limit."""
        if silent is None or silent[0] < _UNREACHABLE_NOTE:
            return verdict.message
        seconds, why = silent
        if seconds >= self._unreachable_limit:
            raise ReadinessFailed(
                f"{name}: the API server has not answered for {seconds:.0f}s "
                f"({why}); is the cluster running? (last status: "
                f"{verdict.message.removeprefix(f'{name}: ')})"
            )
        return f"{verdict.message} (the API server is not answering: {why}; retrying)"

    async def _missing(
        self,
        primary: Informer,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        known: dict[str, Any],
        since: float | None,
    ) -> tuple[dict[str, Any], float | None]:
        """The object while the watch does not show it: deleted (raise), or not delivered yet.

        A shared watch may not have delivered an object applied a moment ago, so absence
        alone proves nothing: a DELETED event for its uid does, and so does a 404 once it
        has been absent for a little while.
        """
        if primary.error is not None:
            raise primary.error
        uid = str((known.get("metadata") or {}).get("uid") or "")
        last = primary.deleted.get(f"{namespace or ''}/{name}")
        gone = None if last is None else str((last.get("metadata") or {}).get("uid") or "")
        if last is not None and (not uid or not gone or gone == uid):
            if readiness.evaluate(last).state is State.READY:
                # Done before it went: a Job its `ttlSecondsAfterFinished: 0` deleted on
                # completion, whose Complete the watch gave only with the DELETED event.
                return dict(last), None
            raise ReadinessFailed(f"{name}: was deleted while waiting for it to become ready")
        now = self._now()
        if since is None:
            return known, now
        if now - since < _MISSING_GRACE:
            return known, since
        response = await self._api.request("GET", info.path(namespace, name), what=name, ok=(404,))
        if response.status == 404:
            raise ReadinessFailed(f"{name}: was deleted while waiting for it to become ready")
        live: dict[str, Any] = orjson.loads(response.body)
        return live, now

    async def _classes(
        self, wanted: frozenset[str]
    ) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]] | None]:
        """The StorageClasses and IngressClasses the object's rule reads (None: not wanted,
        or not readable)."""
        storage = (
            await self._cluster_list("/apis/storage.k8s.io/v1/storageclasses", "StorageClasses")
            if "storageclasses" in wanted
            else None
        )
        ingress = (
            await self._cluster_list("/apis/networking.k8s.io/v1/ingressclasses", "IngressClasses")
            if "ingressclasses" in wanted
            else None
        )
        return storage, ingress

    async def _cluster_list(self, path: str, what: str) -> list[dict[str, Any]] | None:
        """The items of a cluster-scoped list a rule reads once (StorageClasses,
        IngressClasses), or None when it cannot be read: the rule then says less."""
        with contextlib.suppress(ProviderError):
            data = await self._api.json("GET", path, what=what)
            return list((data or {}).get("items") or ())
        return None

    async def _events(self, namespace: str, name: str) -> list[dict[str, Any]]:
        selector = quote(f"involvedObject.name={name}", safe="")
        with contextlib.suppress(ProviderError):
            data = await self._api.json(
                "GET",
                f"/api/v1/namespaces/{quote(namespace, safe='')}/events?fieldSelector={selector}",
                what=f"events of {name}",
            )
            return list((data or {}).get("items") or ())
        return []

    async def wait_deleted(
        self,
        info: ResourceInfo,
        namespace: str | None,
        name: str,
        *,
        limit: DeletionLimit,
        what: str,
        last: Mapping[str, Any] | None = None,
        on_status: Callable[[str], None] | None = None,
    ) -> None:
        """Return once `name` is gone; raise DeleteTimeout naming what holds it, and what
        set the limit, after `limit.seconds`. `on_status` hears what holds it whenever that
        changes."""
        timeout = limit.seconds
        path = info.path(namespace, name)
        selector = quote(f"metadata.name={name}", safe="")
        seen: Mapping[str, Any] | None = last
        deadline = self._now() + timeout
        failures = 0
        told: list[str] = []

        def tell(obj: Mapping[str, Any] | None) -> None:
            text = _holding(info, obj)
            if on_status is not None and text and text not in told[-1:]:
                told.append(text)
                on_status(text)

        tell(last)
        try:
            async with asyncio.timeout(timeout):
                while True:
                    response = await self._api.request("GET", path, what=what, ok=(404,))
                    if response.status == 404:
                        return
                    seen = orjson.loads(response.body)
                    tell(seen)
                    version = str(((seen or {}).get("metadata") or {}).get("resourceVersion") or "")
                    remaining = max(1, math.ceil(deadline - self._now()))
                    target = (
                        f"{info.collection(namespace)}?watch=1&fieldSelector={selector}"
                        f"&resourceVersion={quote(version, safe='')}&timeoutSeconds={min(remaining, 60)}"
                    )
                    try:
                        async for event in self._api.watch(target, what=what, idle_timeout=90):
                            if event.get("type") == "DELETED":
                                return
                            if event.get("type") in ("ADDED", "MODIFIED"):
                                seen = event.get("object") or seen
                                tell(seen)
                        failures = 0
                    except Expired:
                        pass
                    except (ConnectionError, TimeoutError, OSError):
                        # Network trouble, not the deadline (that one cancels us): look again
                        # after a backoff; the GET's own retries decide when to give up.
                        failures += 1
                        await self._api.retry.sleep(self._api.retry.delay(min(failures, 5)))
        except TimeoutError:
            users = None
            if info.kind == "PersistentVolumeClaim" and _PVC_PROTECTION in _finalizers(seen):
                users = await self._claim_users(namespace or "", name)
            raise _delete_timeout(what, info, namespace, name, limit, seen, users) from None

    async def _claim_users(self, namespace: str, claim: str) -> list[str] | None:
        """The Pods that mount `claim` (what its pvc-protection finalizer waits for); None if unknown."""
        with contextlib.suppress(ProviderError, TimeoutError):
            async with asyncio.timeout(5):
                data = await self._api.json(
                    "GET",
                    f"/api/v1/namespaces/{quote(namespace, safe='')}/pods",
                    what=f"Pods using {claim}",
                )
            users = []
            for pod in (data or {}).get("items") or ():
                phase = (pod.get("status") or {}).get("phase")
                volumes = (pod.get("spec") or {}).get("volumes") or ()
                if phase not in ("Succeeded", "Failed") and any(
                    (v.get("persistentVolumeClaim") or {}).get("claimName") == claim
                    for v in volumes
                ):
                    users.append(str((pod.get("metadata") or {}).get("name", "")))
            return sorted(users) or None
        return None


def _older(seen: Mapping[str, Any], known: Mapping[str, Any]) -> bool:
    """Whether a watch's copy of an object predates the version already known (the apply's
    answer): judging it would call an update ready before the controller saw it, and
    return the object as it was before the update. A copy of the incarnation before (a
    delete-first replacement, its delete not delivered yet by a watch already open) would
    call the new object ready as the old one was, and return the old one."""
    a, b = seen.get("metadata") or {}, known.get("metadata") or {}
    # resourceVersions are opaque, but an API server's are increasing integers (etcd
    # revisions, across objects too); anything else is compared by generation alone, and
    # another incarnation then by nothing: the watch's word counts.
    ra, rb = str(a.get("resourceVersion", "")), str(b.get("resourceVersion", ""))
    before = ra.isdigit() and rb.isdigit() and int(ra) < int(rb)
    if a.get("uid") != b.get("uid"):
        return before
    return int(a.get("generation") or 0) < int(b.get("generation") or 0) or before


def _after(since: float | None, wait: float) -> float:
    """When `wait` seconds from `since` are up; never when it has not begun."""
    return math.inf if since is None else since + wait


def _items(informer: Informer | None) -> list[dict[str, Any]]:
    return list(informer.items.values()) if informer is not None else []


#: After how long without an answer a wait's progress says the API server is silent.
_UNREACHABLE_NOTE = 3.0


def _silence(informer: Informer) -> tuple[float, str] | None:
    """(seconds, why) the API server has not answered the informer; None while it does."""
    if informer.failing_since is None:
        return None
    return asyncio.get_running_loop().time() - informer.failing_since, informer.failure


def _timeout(name: str, timeout: float, verdict: Readiness, wait_longer: str) -> ReadinessTimeout:
    status = verdict.message.removeprefix(f"{name}: ")
    per_object = f"the {readiness.TIMEOUT_SECONDS} annotation (or custom timeouts)"
    longer = f"raise {wait_longer} or set {per_object}" if wait_longer else f"set {per_object}"
    # Failing (an image that is not there, a crash loop): waiting longer does not mend it.
    advice = (
        ""
        if verdict.state is State.FAILING
        else f'; to wait longer {longer}, or set {readiness.SKIP_AWAIT}: "true" to not wait'
    )
    return ReadinessTimeout(
        f"{name}: not ready after {format_duration(timeout)} — {status}{advice}",
        last_status=verdict.message,
    )


#: The finalizer that keeps a claim while a Pod mounts it (kube-controller-manager's).
_PVC_PROTECTION = "kubernetes.io/pvc-protection"


def _finalizers(obj: Mapping[str, Any] | None) -> tuple[str, ...]:
    meta = (obj or {}).get("metadata") or {}
    return tuple(str(f) for f in meta.get("finalizers") or ())


def _namespace_remaining(obj: Mapping[str, Any] | None) -> list[str]:
    """What a Terminating Namespace's conditions say remains in it (the namespace
    controller's words: which resources, which finalizers hold them)."""
    return [
        str(c.get("message"))
        for c in ((obj or {}).get("status") or {}).get("conditions") or ()
        if c.get("status") == "True" and c.get("message")
    ]


def _holding(info: ResourceInfo, obj: Mapping[str, Any] | None) -> str:
    """A deletion's progress line: what still holds the object ("" when nothing says)."""
    if info.kind == "Namespace":
        remaining = _namespace_remaining(obj)
        return "Terminating: " + "; ".join(remaining) if remaining else ""
    finalizers = _finalizers(obj)
    if not finalizers:
        return ""
    noun = "finalizer" if len(finalizers) == 1 else "finalizers"
    return f"being deleted, held by {noun} {', '.join(finalizers)}"


def _delete_timeout(
    what: str,
    info: ResourceInfo,
    namespace: str | None,
    name: str,
    limit: DeletionLimit,
    obj: Mapping[str, Any] | None,
    claim_users: list[str] | None = None,
) -> DeleteTimeout:
    finalizers = _finalizers(obj)
    head = (
        f"{what}: still present {format_duration(limit.seconds)} after its deletion "
        f"(the limit is {limit.set_by})"
    )
    where = f" -n {namespace}" if namespace else ""
    if info.kind == "Namespace":
        detail = "; ".join(_namespace_remaining(obj)) or "its contents are still being deleted"
        return DeleteTimeout(
            f"{head} — the namespace is Terminating: {detail}; check the objects left in it "
            f"(`kubectl api-resources --verbs=list --namespaced -o name | xargs -n1 kubectl get -n {name}`)",
            finalizers=finalizers,
        )
    if finalizers == (_PVC_PROTECTION,):
        # Not a missing controller: the claim is in use, and removing the finalizer by
        # hand would pull the volume from under a running Pod.
        if claim_users:
            pods = ", ".join(claim_users)
            who = f"Pod {pods} still uses" if len(claim_users) == 1 else f"Pods {pods} still use"
            fix = (
                f"delete or change {'Pod ' + pods if len(claim_users) == 1 else 'those Pods'} first"
            )
        else:
            who = "a Pod still uses"
            fix = f"`kubectl describe pvc {name}{where}` names it under Used By"
        return DeleteTimeout(
            f"{head} — held by finalizer {_PVC_PROTECTION}: {who} the claim; it goes once no "
            f"Pod mounts it ({fix})",
            finalizers=finalizers,
        )
    if finalizers:
        shown = ", ".join(finalizers)
        noun = "finalizer" if len(finalizers) == 1 else "finalizers"
        if "foregroundDeletion" in finalizers:
            why = "foreground deletion is waiting for its dependents to be deleted"
        else:
            why = "the controller that handles them may be missing or failing"
        return DeleteTimeout(
            f"{head} — held by {noun} {shown}: {why}; fix that controller, or remove them with "
            f'`kubectl patch {info.plural} {name}{where} --type=merge -p \'{{"metadata":{{"finalizers":null}}}}\'`',
            finalizers=finalizers,
        )
    return DeleteTimeout(
        f"{head} — the API server has not removed it yet; check it with `kubectl get {info.plural} {name}{where}`"
    )
