"""The shape every in-process controller takes: a work queue fed by store changes.

Like client-go's informer + workqueue: a change enqueues keys, a key is never
queued twice at once, and a reconcile that fails (or asks to) is retried after a
delay. Controllers act only through `Cluster` verbs, so the API's rules bind
them exactly as they bind any client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable

from stackwright.localcluster.cluster import Cluster
from stackwright.localcluster.store import Change

log = logging.getLogger("stackwright.localcluster")


class Retry(Exception):
    """Reconcile again after `delay` seconds (something it waits for is not there yet)."""

    def __init__(self, delay: float = 0.1) -> None:
        super().__init__(f"retry in {delay}s")
        self.delay = delay


class Controller:
    """Subclasses say which changes concern them (`keys_for`) and how to act (`reconcile`)."""

    name = "controller"

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._queue: asyncio.Queue[Hashable] = asyncio.Queue()
        self._pending: set[Hashable] = set()
        cluster.store.add_listener(self._on_change)

    def keys_for(self, change: Change) -> list[Hashable]:
        raise NotImplementedError

    def initial_keys(self) -> list[Hashable]:
        """Keys to reconcile at start, for state left by an earlier run."""
        return []

    async def reconcile(self, key: Hashable) -> None:
        raise NotImplementedError

    def enqueue(self, key: Hashable) -> None:
        if key not in self._pending:
            self._pending.add(key)
            self._queue.put_nowait(key)

    def enqueue_after(self, key: Hashable, delay: float) -> None:
        asyncio.get_running_loop().call_later(delay, self.enqueue, key)

    def _on_change(self, change: Change) -> None:
        for key in self.keys_for(change):
            self.enqueue(key)

    async def run(self) -> None:
        for key in self.initial_keys():
            self.enqueue(key)
        while True:
            key = await self._queue.get()
            self._pending.discard(key)
            try:
                await self.reconcile(key)
            except Retry as retry:
                self.enqueue_after(key, retry.delay)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: reconciling %r failed; retrying", self.name, key)
                self.enqueue_after(key, 1.0)
