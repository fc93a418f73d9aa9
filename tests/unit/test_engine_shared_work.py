"""Work many steps wait for at once (`shared_work.SharedWork`): a namespace's ApplySet
parent, a kind's marks. Each waiter gets its result or its error; one cancelled (Ctrl-C, a
failed run) leaves the work running for the others, as `asyncio.shield` did."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from stackwright.engine.shared_work import SharedWork


def test_a_cancelled_waiter_leaves_the_work_running_for_the_others() -> None:
    async def main() -> None:
        gate = asyncio.Event()
        runs: list[int] = []

        async def work() -> int:
            runs.append(1)
            await gate.wait()
            return 7

        shared = SharedWork(work())
        first = asyncio.create_task(shared.result())
        second = asyncio.create_task(shared.result())
        await asyncio.sleep(0)
        first.cancel()
        await asyncio.sleep(0)
        gate.set()
        assert await second == 7
        assert first.cancelled()
        assert await shared.result() == 7, "a late waiter gets it at once"
        assert runs == [1], "made once"

    asyncio.run(main())


def test_its_error_reaches_every_waiter_and_none_is_reported_unretrieved() -> None:
    reported: list[dict[str, Any]] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: reported.append(context)
        )

        async def work() -> None:
            await asyncio.sleep(0)
            raise RuntimeError("refused")

        shared = SharedWork(work())
        waiters = [asyncio.create_task(shared.result()) for _ in range(3)]
        for waiter in waiters:
            with pytest.raises(RuntimeError, match="refused"):
                await waiter
        # Every waiter cancelled before it failed: the error is still retrieved.
        alone = SharedWork(work())
        waiter = asyncio.create_task(alone.result())
        await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.sleep(0.01)
        del alone, waiter
        gc.collect()

    asyncio.run(main())
    assert not reported
