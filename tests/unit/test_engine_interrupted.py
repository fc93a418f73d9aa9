"""What an operation finds when the one before it was interrupted: killed, cancelled, fenced.

Scenarios against the fake cluster and a real SQLite store (`engine_stack`): the
journal a killed run left, the lock it held, and what the next run says and does.
"""

from __future__ import annotations

import os
import time

from engine_stack import PROJECT, STACK, Stack
from engine_stack import stack as stack  # the fixture

import stackwright.kubernetes as k8s
from stackwright.engine.events import Diagnostic
from stackwright.sdk.context import Program


def one_config_map(p: Program) -> None:
    k8s.core.v1.ConfigMap("settings", metadata={"name": "settings"}, data={"mode": "fast"})


def test_taking_over_a_dead_holders_lock_names_it(stack: Stack) -> None:
    """An `up` killed while holding the lock leaves a lease that lapses; the next
    operation takes it over and says whose it was, so the user knows why steps are
    being settled (and that the other run really is gone)."""
    dead = stack.backend.begin_operation(PROJECT, STACK, kind="destroy", lease_seconds=0.05)
    dead._keeper.stop(1.0)  # type: ignore[attr-defined]  # the process died: no renewal
    time.sleep(0.1)

    assert stack.up(one_config_map).ok
    notes = [e.message for e in stack.of(Diagnostic)]
    took = [n for n in notes if n.startswith("took over the lock")]
    assert len(took) == 1, notes
    assert "a `destroy` started" in took[0] and f"(pid {os.getpid()})" in took[0]
    assert took[0].endswith(": its lease lapsed, so it is no longer running")
