"""Keeps a running operation's lock alive: renews its lease from a daemon thread.

A lock is a lease, not a flag, so that a process killed while holding it frees
the stack on its own once the lease lapses. The holder renews it every third of
the lease, which leaves two chances to renew before it lapses even when one
renewal waits on a busy database. This module only schedules renewals; the
backend's `renew` callable does the compare-and-set on the lock row. It must
never take a lock over or release one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("stackwright.state")


class LeaseKeeper:
    """Calls `renew` every `interval` seconds until stopped or until `renew` says
    the lock is no longer ours (it returned False)."""

    def __init__(self, renew: Callable[[], bool], interval: float, *, name: str) -> None:
        self._renew = renew
        self._interval = interval
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if not self._renew():
                    self.lost.set()
                    return
            except Exception:
                # A busy or briefly unavailable database: the next tick retries, and
                # the lease has room for one missed renewal by design.
                log.warning("renewing a stack lock's lease failed; retrying", exc_info=True)

    def stop(self, timeout: float) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
