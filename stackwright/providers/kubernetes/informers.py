"""Watch-fed caches of one collection, shared by everything that waits on it.

An `Informer` lists a collection once (a namespace's Pods, or one cluster-scoped
object by name), then follows a watch from that list's resourceVersion: it resumes
from the last version it saw when the server ends the stream, lists again on
410 Expired, and backs off on network trouble. Waiters register an `asyncio.Event`
and are woken on every change, so nobody polls.

`Informers` hands out informers by (path, field selector) with reference counts:
a hundred Deployments waited on in one namespace share one Pod watch, and an
informer lingers a few seconds after its last user so the next object in a
sequence reuses it. Must never: block a waiter on a failed informer forever;
a permanent error (403 on Pods, say) is stored in `error` and wakes everyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from stackwright.providers.kubernetes.client import ApiClient, Expired
from stackwright.providers.kubernetes.errors import PermanentError, ProviderError, TransientError

__all__ = ["Informer", "Informers"]

_WATCH_SECONDS = 290  # ask the server to end each watch, so a dead connection is noticed


def key_of(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


class Informer:
    def __init__(
        self,
        api: ApiClient,
        collection: str,
        *,
        api_version: str,
        kind: str,
        field_selector: str = "",
    ) -> None:
        self._api = api
        self._collection = collection
        self._api_version = api_version
        self._kind = kind
        self._field_selector = field_selector
        self.items: dict[str, dict[str, Any]] = {}
        #: key -> objects this informer saw deleted (since its last list), as they were last:
        #: proof of deletion, where mere absence may only mean the watch has not delivered
        #: them yet, and their final state (a Job that completed before its TTL removed it).
        self.deleted: dict[str, dict[str, Any]] = {}
        self.error: ProviderError | None = None
        #: Since when (event-loop time) the API server has not answered this informer's list
        #: or watch, and why; None while it answers. Waiters say so, and give up in the end.
        self.failing_since: float | None = None
        self.failure = ""
        self.users = 0
        self._synced = asyncio.Event()
        self._listeners: set[asyncio.Event] = set()
        self._events = 0  # events seen by the current watch
        self._task: asyncio.Task[None] | None = None
        self.stop_handle: asyncio.TimerHandle | None = None

    @property
    def what(self) -> str:
        return f"watch of {self._kind} at {self._collection}"

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def synced(self) -> None:
        await self._synced.wait()
        if self.error is not None:
            raise self.error

    def listen(self, event: asyncio.Event) -> None:
        self._listeners.add(event)

    def unlisten(self, event: asyncio.Event) -> None:
        self._listeners.discard(event)

    def get(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.items.get(f"{namespace or ''}/{name}")

    def _notify(self) -> None:
        for event in self._listeners:
            event.set()

    def _query(self, extra: str) -> str:
        parts = [extra] if extra else []
        if self._field_selector:
            parts.append(f"fieldSelector={quote(self._field_selector, safe='')}")
        return f"{self._collection}?{'&'.join(parts)}"

    async def _run(self) -> None:
        version = ""
        failures = 0
        loop = asyncio.get_running_loop()
        while True:
            try:
                if not version:
                    version = await self._list()
                started, self._events = loop.time(), 0
                version = await self._watch(version)
                if self._events == 0 and loop.time() - started < 1.0:
                    # A watch that ends at once with nothing (a proxy cutting streams, say)
                    # must not turn into a busy loop of re-watches.
                    failures += 1
                    await self._api.retry.sleep(self._api.retry.delay(min(failures, 5)))
                else:
                    failures = 0
            except Expired:
                version = ""
            except asyncio.CancelledError:
                raise
            except PermanentError as exc:
                self.error = exc
                self._synced.set()
                self._notify()
                return
            except (
                TransientError,
                ConnectionError,
                TimeoutError,
                OSError,
                ssl.SSLError,
                ValueError,
            ) as exc:
                failures += 1
                if self.failing_since is None:
                    self.failing_since = loop.time()
                self.failure = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                self._notify()
                await self._api.retry.sleep(self._api.retry.delay(min(failures, 5)))

    async def _list(self) -> str:
        items: dict[str, dict[str, Any]] = {}
        token = ""
        while True:
            query = "limit=500" + (f"&continue={quote(token, safe='')}" if token else "")
            data = await self._api.json("GET", self._query(query), what=self.what)
            for item in data.get("items") or ():
                item.setdefault("apiVersion", self._api_version)
                item.setdefault("kind", self._kind)
                items[key_of(item)] = item
            meta = data.get("metadata") or {}
            token = meta.get("continue") or ""
            if not token:
                version = str(meta.get("resourceVersion") or "")
                break
        self.items = items
        self.deleted = {}
        self.failing_since, self.failure = None, ""
        self._synced.set()
        self._notify()
        return version

    async def _watch(self, version: str) -> str:
        query = f"watch=1&allowWatchBookmarks=true&timeoutSeconds={_WATCH_SECONDS}"
        if version:
            query += f"&resourceVersion={quote(version, safe='')}"
        async for event in self._api.watch(
            self._query(query), what=self.what, idle_timeout=_WATCH_SECONDS + 60
        ):
            self._events += 1
            self.failing_since = None
            obj = event.get("object") or {}
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            kind = event.get("type")
            if kind == "BOOKMARK":
                continue
            if kind == "DELETED":
                key = key_of(obj)
                self.items.pop(key, None)
                self.deleted[key] = obj
            elif kind in ("ADDED", "MODIFIED"):
                self.items[key_of(obj)] = obj
            self._notify()
        return version


class Informers:
    """Shared informers keyed by (collection path, field selector)."""

    def __init__(self, api: ApiClient, *, linger: float = 5.0) -> None:
        self._api = api
        self._linger = linger
        self._by_key: dict[tuple[str, str], Informer] = {}
        self._stopping: set[asyncio.Future[None]] = set()

    @contextlib.asynccontextmanager
    async def watching(
        self, collection: str, *, api_version: str, kind: str, field_selector: str = ""
    ) -> AsyncIterator[Informer]:
        key = (collection, field_selector)
        informer = self._by_key.get(key)
        if informer is None:
            informer = Informer(
                self._api,
                collection,
                api_version=api_version,
                kind=kind,
                field_selector=field_selector,
            )
            self._by_key[key] = informer
            informer.start()
        if informer.stop_handle is not None:
            informer.stop_handle.cancel()
            informer.stop_handle = None
        informer.users += 1
        try:
            yield informer
        finally:
            informer.users -= 1
            if informer.users == 0:
                if informer.error is not None or self._linger <= 0:
                    self._drop(key, informer)
                else:
                    loop = asyncio.get_running_loop()
                    informer.stop_handle = loop.call_later(self._linger, self._drop, key, informer)

    def _drop(self, key: tuple[str, str], informer: Informer) -> None:
        if informer.users == 0 and self._by_key.get(key) is informer:
            del self._by_key[key]
            self._stopping.add(asyncio.ensure_future(informer.stop()))
            self._stopping = {t for t in self._stopping if not t.done()}

    async def close(self) -> None:
        informers = list(self._by_key.values())
        self._by_key.clear()
        for informer in informers:
            if informer.stop_handle is not None:
                informer.stop_handle.cancel()
            await informer.stop()
