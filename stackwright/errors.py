"""Stackwright's errors, split by what the caller does next.

    StackwrightError              the operation failed (exit code 1)
    ├── UsageError                bad input or usage: fix the command or file (exit code 2)
    ├── PolicyViolation           a mandatory policy blocked the change (exit code 3)
    └── StackLocked               another operation holds the stack (exit code 4)

Messages are written for the user: what, where, how to fix, on one line.
"""

from __future__ import annotations


class StackwrightError(Exception):
    exit_code = 1


class UsageError(StackwrightError):
    exit_code = 2


class PolicyViolation(StackwrightError):
    exit_code = 3


class StackLocked(StackwrightError):
    exit_code = 4
