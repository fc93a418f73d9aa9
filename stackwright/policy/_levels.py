"""What a failing policy does to the run (`Level`) and how bad its violation is (`Severity`).

Apart from `_core`, whose policies, packs and subjects a run with no pack does without:
every `preview` and `up` reads the stack's policy settings, which name levels.
Must never: import anything of Stackwright but `errors`.
"""

from __future__ import annotations

import enum
from typing import Any

from stackwright.errors import UsageError


class Level(enum.Enum):
    """What a failing policy does to the run."""

    ADVISORY = "advisory"  # shown as a warning; the operation continues
    MANDATORY = "mandatory"  # blocks: nothing is changed, exit code 3
    DISABLED = "disabled"  # not run at all

    @classmethod
    def parse(cls, value: Any, where: str) -> Level:
        for level in cls:
            if value == level.value:
                return level
        raise UsageError(
            f"{where}: enforcement level {value!r} is not one of advisory, mandatory, disabled"
        )

    @classmethod
    def override(cls, value: str | None, where: str) -> Level | None:
        """A run's override of every enabled policy's level (`--level`): mandatory or advisory."""
        if value is None:
            return None
        if value not in (cls.MANDATORY.value, cls.ADVISORY.value):  # disabled re-enables none
            raise UsageError(f"{where} {value}: use mandatory or advisory")
        return cls(value)


class Severity(enum.Enum):
    """How bad a violation is (independent of whether it blocks)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @classmethod
    def parse(cls, value: Any, where: str) -> Severity:
        for severity in cls:
            if value == severity.value:
                return severity
        raise UsageError(f"{where}: severity {value!r} is not one of low, medium, high, critical")
