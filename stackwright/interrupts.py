"""`asyncio.run` that SIGTERM stops in order even where Ctrl-C is ignored.

Inside `asyncio.run`, Ctrl-C cancels the running coroutine, which unwinds (closing its
watches, recording what was under way) before KeyboardInterrupt leaves the loop. The CLI
delivers SIGTERM as that Ctrl-C — except in a process started with SIGINT ignored (`cmd &`
in a script), where asyncio installs no SIGINT handler: there SIGTERM's KeyboardInterrupt
used to be raised wherever the loop happened to be, inside some task, which then ended with
it ("Task exception was never retrieved" and a traceback) while the others were cancelled
around it. `run` lets the signal handler cancel the running coroutine instead.

Imported by the engine, the automation API and programs (which run coroutines) and by the
CLI (which handles the signal); it imports nothing of Stackwright.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["interrupt", "run"]

T = TypeVar("T")


class _Running:
    """The coroutine `run` runs in the main thread (signals are handled only there), and
    whether `interrupt` cancelled it."""

    task: asyncio.Task[Any] | None = None
    interrupted = False


def run(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`; cancelled by `interrupt`, it raises KeyboardInterrupt once the
    coroutine has unwound, as `asyncio.run` does after Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coro)

    async def main() -> T:
        _Running.task = asyncio.current_task()
        try:
            return await coro
        finally:
            _Running.task = None

    _Running.interrupted = False
    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if not _Running.interrupted:
            raise
        raise KeyboardInterrupt from None
    finally:
        _Running.interrupted = False


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
