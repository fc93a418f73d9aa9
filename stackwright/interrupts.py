"""`asyncio.run` that SIGTERM stops in order even where Ctrl-C is ignored.

Inside `asyncio.run`, Ctrl-C cancels the running coroutine, which unwinds (closing its
watches, recording what was under way) before KeyboardInterrupt leaves the loop. The CLI
delivers SIGTERM as that Ctrl-C — except in a process started with SIGINT ignored (`cmd &`
in a script), where asyncio installs no SIGINT handler: there SIGTERM's KeyboardInterrupt
used to be raised wherever the loop happened to be, inside some task, which then ended with
it ("Task exception was never retrieved" and a traceback) while the others were cancelled
around it. `run` lets the signal handler cancel the running coroutine instead.

`one_loop` makes the runs inside it share one event loop, so that what one run opened (a
provider's connection) serves the next: an operation's check of its clusters, then its run.

Imported by the engine, the automation API and programs (which run coroutines) and by the
CLI (which handles the signal); it imports nothing of Stackwright.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["interrupt", "one_loop", "run"]

T = TypeVar("T")


class _Running:
    """The coroutine `run` runs in the main thread (signals are handled only there), and
    whether `interrupt` cancelled it."""

    task: asyncio.Task[Any] | None = None
    interrupted = False


#: The loop `one_loop` keeps for the runs inside it (per thread: a thread starts without).
_KEPT: ContextVar[asyncio.Runner | None] = ContextVar("stackwright_kept_loop", default=None)


@contextlib.contextmanager
def one_loop() -> Iterator[None]:
    """Every `run` inside runs on one event loop, closed as the block ends (inside another
    `one_loop`, on that one's). Each run still ends as `asyncio.run` ends it: the tasks it
    left are cancelled. Called where a loop runs already (a notebook's, which `nest_asyncio`
    lets `asyncio.run` enter again), each run is `asyncio.run`'s, on that loop or refused
    as `asyncio.run` refuses it, and the thread's loop is left as it was."""
    if _KEPT.get() is not None or asyncio.events._get_running_loop() is not None:
        yield
        return
    with asyncio.Runner() as runner:
        token = _KEPT.set(runner)
        try:
            yield
        finally:
            _KEPT.reset(token)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` (on `one_loop`'s loop inside one); cancelled by `interrupt`, it
    raises KeyboardInterrupt once the coroutine has unwound, as `asyncio.run` does after
    Ctrl-C."""
    kept = _KEPT.get()
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coro) if kept is None else kept.run(_alone(coro))

    async def main() -> T:
        _Running.task = asyncio.current_task()
        try:
            return await (coro if kept is None else _alone(coro))
        finally:
            _Running.task = None

    _Running.interrupted = False
    try:
        return asyncio.run(main()) if kept is None else kept.run(main())
    except asyncio.CancelledError:
        if not _Running.interrupted:
            raise
        raise KeyboardInterrupt from None
    finally:
        _Running.interrupted = False


async def _alone(coro: Coroutine[Any, Any, T]) -> T:
    """`coro`, then the tasks it left cancelled, as `asyncio.run` cancels them as it ends."""
    try:
        return await coro
    finally:
        this = asyncio.current_task()
        left = [task for task in asyncio.all_tasks() if task is not this and not task.done()]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)


def interrupt() -> bool:
    """From a signal handler: cancel what `run` is running (once), as asyncio's own Ctrl-C
    handler does. False when nothing runs or it was already cancelled: the caller then
    raises KeyboardInterrupt itself, as a second Ctrl-C does."""
    task = _Running.task
    if task is None or task.done() or _Running.interrupted:
        return False
    _Running.interrupted = True
    task.cancel()
    # Wake the loop should it wait in select() with a long timeout.
    task.get_loop().call_soon_threadsafe(lambda: None)
    return True
