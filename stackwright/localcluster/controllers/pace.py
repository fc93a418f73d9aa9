"""Simulated time: how long the local cluster's pretend work takes.

Every delay a simulated component waits (image pulls, container starts, probe
delays, back-offs, load-balancer provisioning) is a base duration in seconds,
chosen so tests are fast, divided by the cluster's `--speed`: speed 1 is the
default, 0.1 makes everything ten times slower (to exercise timeouts and slow
rollouts), 10 ten times faster.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass(frozen=True)
class Pace:
    speed: float = 1.0

    def seconds(self, base: float) -> float:
        """The wall-clock seconds a simulated `base`-second step takes."""
        return base / self.speed

    async def sleep(self, base: float) -> None:
        await asyncio.sleep(self.seconds(base))
