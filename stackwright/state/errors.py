"""The state store's own errors, as branches of Stackwright's one exception tree.

    StackwrightError                     the operation failed (exit code 1)
    ├── StateCorrupt                     the stored state is damaged: restore it, do not retry
    ├── UsageError                       bad input: a bad backend URL, stack name or import document
    └── StackLocked                      another operation holds the stack (exit code 4): wait or cancel
        └── LockLost                     this operation's lock was taken over (4) or cancelled (1) while it ran

Only `StateCorrupt` and `LockLost` are defined here; the others come from
`stackwright.errors`. Nothing here touches the database: these are plain
exception classes whose messages say what is wrong, where, and how to proceed.
"""

from __future__ import annotations

from stackwright.errors import StackLocked, StackwrightError


class StateCorrupt(StackwrightError):
    """The database or a stack's state failed an integrity check on load.

    Retrying cannot help; the message names the damaged row or reference and says
    how to restore the stack (`stackwright stack import` of an export).
    """


class LockLost(StackLocked):
    """The running operation no longer holds its stack's lock.

    Raised by a journal write after `stackwright cancel` cleared the lock, or after
    another process took it over because this one's lease lapsed (the process was
    stopped or starved for longer than the lease). The write that raises it did not
    happen, so the caller must not send the change it was about to journal.

    Its exit code is 4 when another operation took the lock over (the stack is locked by
    it), and 1 when the lock was cleared by `cancel` or the stack removed: the operation
    failed, and nothing holds the stack now.
    """

    def __init__(self, message: str, *, taken_over: bool) -> None:
        super().__init__(message)
        self.exit_code = 4 if taken_over else 1
