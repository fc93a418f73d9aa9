"""Work that many of a run's steps wait for at once, made once (`SharedWork`).

Must never: let one waiter's cancellation cancel the work for the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Generic, TypeVar

_T = TypeVar("_T")


class SharedWork(Generic[_T]):
    """Work that many steps wait for at once, made once (a namespace's ApplySet parent,
    before its first member is applied; a kind's marks, listed once a namespace). A waiter
    cancelled leaves it running for the others, as `asyncio.shield` does; each waiter wakes
    once when it is done, where shield's own future wakes it through three callbacks (a
    namespace of a 1,000-object `up` has ~100 steps waiting for its parent)."""

    def __init__(self, work: Awaitable[_T]) -> None:
        self._task = asyncio.ensure_future(work)
        self._done = asyncio.Event()
        self._task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Future[_T]) -> None:
        if not task.cancelled():
            task.exception()  # retrieved: each waiter raises it, even when none is left
        self._done.set()

    async def result(self) -> _T:
        if not self._task.done():
            await self._done.wait()
        return self._task.result()
