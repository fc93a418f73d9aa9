"""`sw.log`: a program's messages in the operation's display, as Pulumi's `pulumi.log`.

A message goes to the run's events (`events.Log`), against a resource or the stack:
info, warnings and errors are shown as the run goes and warnings and errors again in the
summary; debug messages only in `--json` events, as the CLI has no verbose flag. As in
Pulumi, `error` fails nothing by itself: raise an exception to stop the program. Outside
a program run a message goes to stderr, as Pulumi's does without an engine.

Must never: stop the program, or write to stdout (which `--json` keeps for events).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from stackwright.sdk.context import run_of_program

if TYPE_CHECKING:
    from stackwright.sdk.resource import Resource

__all__ = ["debug", "error", "info", "warn"]


def debug(msg: str, resource: Resource | None = None) -> None:
    """A message for whoever debugs the program: in `--json` events only."""
    _log("debug", msg, resource)


def info(msg: str, resource: Resource | None = None) -> None:
    """A message shown as the run goes, against `resource` (else the stack)."""
    _log("info", msg, resource)


def warn(msg: str, resource: Resource | None = None) -> None:
    """A warning, shown as the run goes and again in its summary."""
    _log("warning", msg, resource)


def error(msg: str, resource: Resource | None = None) -> None:
    """An error, shown as the run goes and again in its summary; as Pulumi's, it does not
    fail the run: raise an exception after it to stop the program."""
    _log("error", msg, resource)


def _log(severity: str, msg: str, resource: Resource | None) -> None:
    from stackwright.sdk.resource import Resource

    # An Output refuses `str` saying to log from an apply callback, where its value is known.
    text = msg if isinstance(msg, str) else str(msg)
    if resource is not None and not isinstance(resource, Resource):
        raise TypeError(
            "sw.log's resource (its second argument) must be a resource the program "
            f"declared, or None for the stack (got {type(resource).__name__})"
        )
    program = run_of_program()
    if program is None:
        print(f"{severity}: {text}", file=sys.stderr)
        return
    program.log(severity, text, resource.urn if resource is not None else "")
