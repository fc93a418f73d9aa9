"""How a run says why a step did not finish: the one line of its failure (a program's
apply callback leading with its own line), and the reasons a record keeps for a step a
run stopped in (`init_errors`), which the next run reads to apply or wait again.

Shared by the run and its collaborators (settling, deletes, refresh, adoption), as is
the failure of a declaration a step finds wrong once its Outputs are known, and the
refusal of a change that replaces a protected resource. Must never: let a
failure's text carry a secret (`redact`) or more than its first line.
"""

from __future__ import annotations

import asyncio

from stackwright.engine.plan import Step
from stackwright.errors import UsageError, redact
from stackwright.model import ResourceState
from stackwright.sdk.output import from_callback
from stackwright.sdk.resource import error_text, raised_at

#: Why a resource is waited for again after its run stopped (a kill, Ctrl-C, a cancel).
INTERRUPTED = "the run applying it stopped before it was ready"
#: Why an adopted object is applied again: the run adopting it stopped before its fields
#: were the stack's alone (`Provider.apply`'s `adopting`), which the next apply finishes.
ADOPTION_INTERRUPTED = "the run adopting it stopped before it took its fields over"


def adoption_cut_short(state: ResourceState) -> bool:
    """Whether a run adopting `state`'s object stopped before it took the fields over."""
    return ADOPTION_INTERRUPTED in state.init_errors


def callback_failed(exc: BaseException) -> str:
    """`an apply callback failed: Error: message`; its line leads the failure it is part of."""
    return f"an apply callback failed: {error_text(exc)}"


def callback_line(exc: BaseException) -> str | None:
    """FILE:LINE where the program's apply callback that raised `exc` raised it (None for
    another failure): a failure it caused leads with it, as a message about a place in the
    program does."""
    return raised_at(exc) if isinstance(exc, Exception) and from_callback(exc) else None


def failure_text(exc: BaseException) -> str:
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(exc, Exception) and from_callback(exc):  # its line leads (`callback_line`)
        return callback_failed(exc)
    text = redact(str(exc).strip()) or type(exc).__name__
    return text.splitlines()[0] if "\n" in text else text


class DeclarationRefused(UsageError):
    """Bad input a step finds in its own resource's declaration once Outputs are known (an
    object another resource holds, an import of another resource's object): its failure
    names the line that declared the resource, as the checks before a run do."""


class ProtectedReplacement(UsageError):
    """A change that replaces a protected resource, refused before its step changes anything:
    bad input, as the delete of a protected resource is (`Summary.rejected`). `step` is the
    refused replacement, which the display shows failed, as Pulumi shows it in its tree."""

    def __init__(self, message: str, step: Step) -> None:
        super().__init__(message)
        self.step = step
