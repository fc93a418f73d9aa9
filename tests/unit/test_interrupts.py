"""SIGTERM in a process started with Ctrl-C ignored (`stackwright up &` in a script): the
running coroutine is cancelled and unwinds in order, as after Ctrl-C, wherever the loop was
when the signal came."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
from collections.abc import Iterator

import pytest

from stackwright import interrupts
from stackwright.cli.main import _on_sigterm


@pytest.fixture
def ctrl_c_ignored() -> Iterator[None]:
    before = (
        signal.signal(signal.SIGINT, signal.SIG_IGN),
        signal.signal(signal.SIGTERM, _on_sigterm),
    )
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


def test_sigterm_inside_a_task_cancels_the_run_which_unwinds_in_order(
    ctrl_c_ignored: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Shaped as an `up`: steps in a gather, a watch stopped (awaited) in the run's
    `finally`. The signal lands inside a step; a KeyboardInterrupt raised there ended that
    task with it — "Task exception was never retrieved" with a traceback — and left the
    watch's stop to the loop's shutdown, which cancelled it under its feet."""
    unwound: list[str] = []

    async def watch() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            unwound.append("watch")

    async def step(i: int) -> None:
        if i == 1:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this task
            for _ in range(1000):  # still busy here, as a step parsing a response
                pass
        await asyncio.sleep(3600)

    async def up() -> None:
        watcher = asyncio.create_task(watch())
        try:
            await asyncio.gather(*(step(i) for i in range(3)))
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            unwound.append("up")

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        with pytest.raises(KeyboardInterrupt):
            interrupts.run(up())
        gc.collect()  # a task's exception never retrieved is logged when it is collected
    assert unwound == ["watch", "up"]
    assert not caplog.records, [r.getMessage() for r in caplog.records]


def test_a_second_sigterm_stops_at_once(ctrl_c_ignored: None) -> None:
    """As a second Ctrl-C: a run whose unwinding hangs is not waited on forever."""

    async def stuck() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(3600)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(3600)

    with pytest.raises(KeyboardInterrupt):
        interrupts.run(stuck())


def test_without_a_signal_run_is_asyncio_run() -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert interrupts.run(answer()) == 42

    async def cancelled() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(0)

    with pytest.raises(asyncio.CancelledError):
        interrupts.run(cancelled())


def test_runs_inside_one_loop_share_its_loop_and_end_as_asyncio_run_ends_them() -> None:
    """What one run opened (a provider's connection, bound to its loop) serves the next:
    the check of the clusters, then the operation. A task a run left is cancelled as it
    ends, as `asyncio.run` cancels it."""
    left: list[asyncio.Task[None]] = []

    async def loop_leaving_a_task() -> asyncio.AbstractEventLoop:
        left.append(asyncio.create_task(asyncio.sleep(3600)))
        await asyncio.sleep(0)
        return asyncio.get_running_loop()

    with interrupts.one_loop():
        first = interrupts.run(loop_leaving_a_task())
        assert left[0].cancelled()
        with interrupts.one_loop():  # an operation inside another's: still the one loop
            second = interrupts.run(loop_leaving_a_task())
    assert first is second and first.is_closed()
    assert left[1].cancelled()
    assert interrupts.run(loop_leaving_a_task()) is not first  # outside: a loop per run


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited")  # as asyncio.run leaves it
def test_one_loop_where_a_loop_runs_leaves_each_run_to_asyncio_run() -> None:
    """An operation started from a coroutine (a notebook cell, whose loop runs): each run is
    `asyncio.run`'s, as without `one_loop`. It refuses with its own message (or, patched by
    `nest_asyncio`, runs on that loop); a loop of `one_loop`'s could do neither, and
    unset the thread's loop as it closed."""

    async def nothing() -> None:
        pass

    async def cell() -> str:
        work = nothing()
        with interrupts.one_loop(), pytest.raises(RuntimeError) as refused:
            interrupts.run(work)
        work.close()
        return str(refused.value)

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        said = loop.run_until_complete(cell())
        assert said == "asyncio.run() cannot be called from a running event loop"
        assert asyncio.get_event_loop() is loop, "the thread's loop is left as it was"
    finally:
        asyncio.set_event_loop(None)
        loop.close()
        gc.collect()  # `run`'s coroutine, never awaited: its warning ignored here, not later
