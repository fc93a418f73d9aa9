"""What the engine tells its front ends while it works.

Front ends (the CLI's live display, `--json` lines, the automation API, the
operator) subscribe with one callback and render these; the engine never prints.
Values in events are safe to show: secrets are already replaced by `[secret]`
(`shown_changes`), and stack outputs in `Summary` are masked the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from stackwright.engine.plan import FieldChange, Step
from stackwright.model import SECRET_TEXT as SECRET_TEXT  # re-exported for displays
from stackwright.model import SecretValue
from stackwright.policy import Report
from stackwright.sdk.output import UNKNOWN

UNKNOWN_TEXT = "(known after apply)"


@dataclass(frozen=True)
class StepStarted:
    """A step begins (in a preview: a step is planned)."""

    step: Step


@dataclass(frozen=True)
class StepProgress:
    """A live status line for a step in progress: `web: 2/3 ready`."""

    urn: str
    message: str


@dataclass(frozen=True)
class StepDone:
    step: Step
    ok: bool
    elapsed: float
    error: str = ""


@dataclass(frozen=True)
class StepSkipped:
    """A step not taken: a dependency failed, or the resource is outside `--target`."""

    step: Step
    reason: str


@dataclass(frozen=True)
class DriftedField:
    path: str
    recorded: Any  # what Stackwright applied (already masked when secret)
    live: Any  # what the cluster holds now
    manager: str = ""  # the field manager that owns the live value, when known


@dataclass(frozen=True)
class Drift:
    """`refresh` found the live object differing from what Stackwright applied.

    `gone` when the object no longer exists. Fields other managers own that
    Stackwright never set (controllers, HPAs, webhooks) are not drift and never
    appear here.
    """

    urn: str
    fields: tuple[DriftedField, ...] = ()
    gone: bool = False


@dataclass(frozen=True)
class Diagnostic:
    urn: str
    message: str
    severity: str = "warning"  # warning / error / info


@dataclass(frozen=True)
class PolicyChecked:
    """The policy packs ran over the program's objects, before any API call.

    Advisory findings are warnings and the operation goes on; a blocking one
    (mandatory, or a policy that raised) stops it right after this event."""

    report: Report


@dataclass(frozen=True)
class Summary:
    kind: str  # preview / up / destroy / refresh / import
    ok: bool
    counts: dict[str, int]
    outputs: dict[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    failures: list[str] = field(default_factory=list)
    dry_run: bool = False
    #: Operations not carried out because a dependency failed (or the run stopped).
    not_done: list[str] = field(default_factory=list)
    #: Payload bytes the operation wrote to the state store (`Operation.bytes_written`);
    #: 0 for a preview, which writes nothing.
    state_bytes_written: int = 0


Event = (
    StepStarted
    | StepProgress
    | StepDone
    | StepSkipped
    | Drift
    | Diagnostic
    | PolicyChecked
    | Summary
)
Listener = Callable[[Event], None]


def ignore(event: Event) -> None:
    """A listener that drops every event (tests, the automation API's quiet mode)."""


def within(path: str, prefixes: Iterable[str]) -> bool:
    """Whether a dotted field path is one of `prefixes` or lies under one (`data.pw` under
    `data`, `spec.ports[0]` under `spec.ports`): secret paths, ignore_changes."""
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


def shown(value: Any) -> Any:
    """A value as a display shows it: unknowns spelled out, structures copied."""
    if value is UNKNOWN:
        return UNKNOWN_TEXT
    if isinstance(value, SecretValue):
        return SECRET_TEXT
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


def shown_changes(step: Step) -> list[FieldChange]:
    """The step's field changes with secret values masked and unknowns spelled out."""
    secrets = tuple(step.old.secret_paths if step.old else ()) + tuple(
        step.new.secret_paths if step.new else ()
    )
    out = []
    for change in step.changes:
        if within(change.path, secrets) or any(p.startswith(change.path + ".") for p in secrets):
            old = change.old if change.kind == "add" else SECRET_TEXT
            new = change.new if change.kind == "delete" else SECRET_TEXT
            out.append(FieldChange(change.path, old, new))
        else:
            out.append(FieldChange(change.path, shown(change.old), shown(change.new)))
    return out
