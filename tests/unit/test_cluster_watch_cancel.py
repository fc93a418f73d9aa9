"""A watch of the local cluster ends when its consumer is cancelled, whenever that happens."""

from __future__ import annotations

import asyncio

import pytest

from stackwright.localcluster.cluster import Cluster, WriteOptions
from stackwright.localcluster.store import Store


@pytest.mark.parametrize("bookmarks", [False, True], ids=["plain", "bookmarks"])
def test_a_watch_cancelled_as_a_change_arrives_ends(bookmarks: bool) -> None:
    # With bookmarks the watch waits for a change with a timeout. Python 3.11's
    # `asyncio.wait_for` returns a result that arrives as the task is cancelled and drops
    # the cancellation: the server's watch of a client that had gone waited on for the
    # next change, so each such watch leaked, and a stop of the server waited out its kill.
    async def scenario() -> None:
        cluster = Cluster(Store(":memory:"))
        configmaps = cluster.type_for("", "v1", "configmaps")
        events = cluster.watch(configmaps, "default", resource_version="1", bookmarks=bookmarks)

        async def consume() -> None:
            async for _ in events:
                pass

        task = asyncio.ensure_future(consume())
        await asyncio.sleep(0.05)  # it waits for a change
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        cluster.create(configmaps, "default", body, WriteOptions())  # the change arrives
        task.cancel()  # as the client goes
        done, _ = await asyncio.wait({task}, timeout=2)
        assert done, "the cancelled watch went on waiting for the next change"
        assert task.cancelled()

    asyncio.run(scenario())
