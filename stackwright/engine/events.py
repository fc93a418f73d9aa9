"""What the engine tells its front ends while it works.

Front ends (the CLI's live display, `--json` lines, the automation API, the
operator) subscribe with one callback and render these; the engine never prints.
The engine's events carry the steps as planned, raw values included; the CLI's
renderers mask what they show (`shown_changes`, `redact`), and every other listener
(a script's, through the automation API) is handed `safe_event`s through `masking`:
secret fields and every known secret value shown as `[secret]`. Stack outputs in
`Summary` are masked by the engine itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from stackwright.engine.plan import FieldChange, Step
from stackwright.errors import redact, redact_within

# How a value shows lives with the values (the CLI's `stack output` shows them without the
# engine); re-exported for the displays.
from stackwright.model import SECRET_TEXT as SECRET_TEXT
from stackwright.model import UNKNOWN_TEXT as UNKNOWN_TEXT
from stackwright.model import Op, ResourceState, parse_urn, paths_below
from stackwright.model import masked as masked
from stackwright.model import shown as shown

if TYPE_CHECKING:
    from stackwright.policy import Report


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
    #: The failure is the program's to fix (its inputs refused, its declaration refused, a
    #: callback raised): `error` is then the summary's failure, led by the program's
    #: FILE:LINE and naming the resource itself. Not in `--json` (`event_json`), whose keys
    #: are a contract; a reader there has the error's leading FILE:LINE.
    located: bool = False


#: The summary's count of steps not taken (`StepSkipped`), beside the counts by operation.
SKIPPED = "skipped"


@dataclass(frozen=True)
class StepSkipped:
    """A step not taken (in a preview: not previewed) because what it needs failed or was
    not done, or needs an excluded resource. `step.op` is what the step would have done, as
    far as the program says it without the failed one (`Run._skipped_op`); `dependency` is
    the URN of the resource it waited for ("" when none did: a delete after a failure, a
    refresh that could not read it)."""

    step: Step
    reason: str
    dependency: str = ""


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
class Log:
    """A message the program logged (`sw.log`), against a resource or the stack ("")."""

    urn: str
    message: str
    severity: str  # debug / info / warning / error


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
    #: How many of `failures` are bad input refused before it changed anything: a
    #: resource's own inputs the cluster refused (not a delete-first replacement's, whose
    #: old object went first), or the delete of a protected resource (which `up` and
    #: `destroy` refuse at once).
    rejected: int = 0
    dry_run: bool = False
    #: Operations not carried out because a dependency failed (or the run stopped).
    not_done: list[str] = field(default_factory=list)
    #: How many of `not_done` the selection alone left undone: a resource that needs one
    #: `--exclude` names and that is not created yet (Pulumi refuses such a selection as
    #: bad usage); what follows from them (their dependents, the deletes after) is theirs.
    unselected: int = 0
    #: Payload bytes the operation wrote to the state store (`Operation.bytes_written`);
    #: 0 for a preview, which writes nothing.
    state_bytes_written: int = 0
    #: `--expect-no-changes` gates the command: a change (a refresh's drift) is exit code 1.
    expect_no_changes: bool = False

    def changes(self) -> dict[str, int]:
        """What `--expect-no-changes` refuses, by what it is: a refresh's objects drifted or
        deleted outside the stack (what it read, `in-sync`, is no change); else the steps
        that change something (drift an update would undo is counted by its own step)."""
        if self.kind == "refresh":
            changed: Iterable[str] = ("drifted", "deleted-outside")
        else:
            changed = [op.value for op in Op if op.mutates]
        return {key: self.counts[key] for key in changed if self.counts.get(key)}

    @property
    def exit_code(self) -> int:
        """The command's exit code, decided here alone: 0 for success; 2 for a preview, or
        an `up` that changed nothing, whose every failure is bad input (`rejected`: inputs
        the cluster refused, a Patch's missing object, a protected resource's delete, which
        `up` and `destroy` refuse with 2 too) and that failed or left something undone for
        it (`unselected`: a selection that leaves out what another needs); else 1, the
        failed operation's, also for an `up` whose bad input comes after other steps changed
        the cluster, and for a run that `--expect-no-changes` refuses."""
        if self.ok:
            return 1 if self.expect_no_changes and self.changes() else 0
        unchanged = self.dry_run or (self.kind == "up" and not self.changes())
        refused = bool(self.failures or self.unselected)
        bad_input = unchanged and refused and self.rejected == len(self.failures)
        return 2 if bad_input else 1


Event = (
    StepStarted
    | StepProgress
    | StepDone
    | StepSkipped
    | Drift
    | Diagnostic
    | Log
    | PolicyChecked
    | Summary
)
Listener = Callable[[Event], None]


def ignore(event: Event) -> None:
    """A listener that drops every event (tests, the automation API's quiet mode)."""


def plural(count: int, noun: str) -> str:
    """`1 resource`, `3 resources`: a count with its noun, for messages."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def within(path: str, prefixes: Iterable[str]) -> bool:
    """Whether a dotted field path is one of `prefixes` or lies under one (`data.pw` under
    `data`, `spec.ports[0]` under `spec.ports`): secret paths, ignore_changes."""
    return any(path == p or path.startswith((p + ".", p + "[")) for p in prefixes)


def shown_changes(step: Step) -> list[FieldChange]:
    """The step's field changes with secret values masked and unknowns spelled out.

    A change to a structure that holds a secret (a list whose length changed is one change
    at the list's path) shows the structure with the secret parts masked. Positions in a
    list may differ between the old and new values: each side is masked at both sides'
    secret positions."""
    secrets = [
        *(step.old.secret_paths if step.old else ()),
        *(step.new.secret_paths if step.new else ()),
    ]
    if not secrets:  # most steps: nothing to mask (each `--json` step-started line shows them)
        return [FieldChange(c.path, shown(c.old), shown(c.new)) for c in step.changes]
    return [shown_change(change, secrets) for change in step.changes]


def shown_change(change: FieldChange, secrets: list[str]) -> FieldChange:
    """One field change with what lies at `secrets` (paths in the change's own frame: from
    the object, or from a list item for a change within one) masked on both of its sides."""
    if within(change.path, secrets):
        old = change.old if change.kind == "add" else SECRET_TEXT
        new = change.new if change.kind == "delete" else SECRET_TEXT
        return FieldChange(change.path, old, new)
    # The secret paths below this change, found once for both of its sides.
    below = paths_below(secrets, change.path) if change.path else secrets
    return FieldChange(
        change.path, shown(masked(change.old, below)), shown(masked(change.new, below))
    )


def mask_at(path: str, value: Any, secret_paths: Iterable[str]) -> Any:
    """The value found at `path` as a display may show it: [secret] when the path is (or
    lies under) a secret path, else with the secret paths below it masked. None (the
    field is gone: a drifted secret someone removed) hides nothing and stays None."""
    paths = list(secret_paths)
    if value is None:
        return None
    if within(path, paths):
        return SECRET_TEXT
    return masked(value, paths_below(paths, path) if path else paths)


# --- events as JSON (`--json`, and scripts that forward them) --------------------------------


@functools.lru_cache(maxsize=4096)
def type_and_name(urn: str) -> tuple[str, str]:
    """The type and logical name a URN spells ("" and the URN itself if it is none).

    Remembered: `--json` spells each step's type and name on its start and its end line
    (2,020 parses of ~2.4 µs each for a 1,000-object `up`)."""
    try:
        parts = parse_urn(urn)
    except ValueError:
        return "", urn
    return parts.type, parts.name


def step_type_and_name(step: Step) -> tuple[str, str]:
    """The type and logical name of a step's resource."""
    type_, name = type_and_name(step.urn)
    return step.type or type_, name


def _change_json(change: FieldChange) -> dict[str, Any]:
    """An absent side (the field is added or deleted) is left out, not encoded."""
    out: dict[str, Any] = {"path": change.path, "kind": change.kind}
    if change.kind != "add":
        out["old"] = change.old
    if change.kind != "delete":
        out["new"] = change.new
    return out


def _step_json(step: Step) -> dict[str, Any]:
    type_, name = step_type_and_name(step)
    # Which cluster the step reaches, as Pulumi's events name the provider: the one it goes
    # through now (a resource moved to another provider is made through the new one).
    acted = step.new if step.new is not None else step.old
    provider = acted.provider if acted is not None else ""
    return {"op": step.op.value, "urn": step.urn, "type": type_, "name": name, "provider": provider}


def event_json(event: Event) -> dict[str, Any]:
    """One event as the JSON object `--json` prints on its line (README: JSON events). A
    step's changes are always included (masked): a machine reading `--json` should not need
    to know the display's `--diff` flag."""
    if isinstance(event, StepStarted):
        started: dict[str, Any] = {"event": "step-started", **_step_json(event.step)}
        started["changes"] = [_change_json(c) for c in shown_changes(event.step)]
        if event.step.replace_reasons:
            started["replaceReasons"] = list(event.step.replace_reasons)
        return started
    if isinstance(event, StepProgress):
        return {"event": "step-progress", "urn": event.urn, "message": event.message}
    if isinstance(event, StepDone):
        return {
            "event": "step-done",
            **_step_json(event.step),
            "ok": event.ok,
            "elapsed": round(event.elapsed, 3),
            "error": event.error,
        }
    if isinstance(event, StepSkipped):
        return {
            "event": "step-skipped",
            **_step_json(event.step),
            "reason": event.reason,
            "dependency": event.dependency,
        }
    if isinstance(event, Drift):
        return {
            "event": "drift",
            "urn": event.urn,
            "gone": event.gone,
            "fields": [
                {
                    "path": f.path,
                    "recorded": shown(f.recorded),
                    "live": shown(f.live),
                    "manager": f.manager,
                }
                for f in event.fields
            ],
        }
    if isinstance(event, PolicyChecked):
        return {"event": "policy", **event.report.to_dict()}
    if isinstance(event, Diagnostic | Log):
        return {
            "event": "diagnostic" if isinstance(event, Diagnostic) else "log",
            "urn": event.urn,
            "severity": event.severity,
            "message": event.message,
        }
    summary = {
        "event": "summary",
        "kind": event.kind,
        "ok": event.ok,
        "counts": dict(event.counts),
        "outputs": shown(dict(event.outputs)),
        "elapsed": round(event.elapsed, 3),
        "failures": list(event.failures),
        "notDone": list(event.not_done),
        "dryRun": event.dry_run,
        "exitCode": event.exit_code,
    }
    if not event.dry_run:  # every operation that may write state (0 if it wrote none)
        summary["stateBytesWritten"] = event.state_bytes_written
    return summary


# --- events a listener may show as they are --------------------------------------------------


def _safe_value(value: Any) -> Any:
    return redact_within(shown(value))


def _safe_state(state: ResourceState | None) -> ResourceState | None:
    if state is None:
        return None
    return replace(
        state,
        inputs=_safe_value(masked(state.inputs, state.secret_paths)),
        outputs=_safe_value(masked(state.outputs, state.secret_paths)),
        init_errors=tuple(redact(e) for e in state.init_errors),
    )


def _safe_step(step: Step) -> Step:
    changes = tuple(
        FieldChange(
            c.path,
            c.old if c.kind == "add" else _safe_value(c.old),  # an absent side stays absent
            c.new if c.kind == "delete" else _safe_value(c.new),
            c.keys,
        )
        for c in shown_changes(step)
    )
    return replace(step, old=_safe_state(step.old), new=_safe_state(step.new), changes=changes)


def safe_event(event: Event) -> Event:
    """`event` as any listener may log it: its steps' objects and changes with secret fields
    masked, and every secret value this process knows (a secret config value, something
    computed from one that the program read as plain) shown as [secret] wherever it
    appears, in values and messages alike."""
    if isinstance(event, StepStarted):
        return StepStarted(_safe_step(event.step))
    if isinstance(event, StepDone):
        return replace(event, step=_safe_step(event.step), error=redact(event.error))
    if isinstance(event, StepSkipped):
        return replace(event, step=_safe_step(event.step), reason=redact(event.reason))
    if isinstance(event, StepProgress):
        return replace(event, message=redact(event.message))
    if isinstance(event, Diagnostic | Log):
        return replace(event, message=redact(event.message))
    if isinstance(event, Drift):
        fields = tuple(
            replace(f, recorded=_safe_value(f.recorded), live=_safe_value(f.live))
            for f in event.fields
        )
        return replace(event, fields=fields)
    if isinstance(event, Summary):
        return replace(
            event,
            outputs=_safe_value(event.outputs),
            failures=[redact(f) for f in event.failures],
            not_done=[redact(n) for n in event.not_done],
        )
    return event


class ExpectingNoChanges:
    """`listener`, each summary it is handed gated by `--expect-no-changes` (its
    `exit_code` 1 when it counts a change), so that the summary says the code the command
    exits with."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self.masks_secrets = getattr(listener, "masks_secrets", False)

    def __call__(self, event: Event) -> None:
        if isinstance(event, Summary):
            event = replace(event, expect_no_changes=True)
        self._listener(event)


def expecting_no_changes(listener: Listener | None, gated: bool) -> Listener | None:
    """`listener`, as `ExpectingNoChanges` when `gated` (None, no listener, stays None)."""
    return ExpectingNoChanges(listener) if gated and listener is not None else listener


def masking(listener: Listener) -> Listener:
    """`listener`, handed `safe_event`s, unless it masks what it shows itself (the CLI's
    renderers set `masks_secrets`), which spares it the copies."""
    if getattr(listener, "masks_secrets", False):
        return listener

    def masked_listener(event: Event) -> None:
        listener(safe_event(event))

    return masked_listener


class Guarded:
    """A listener whose exceptions do not stop the operation: a script's listener that
    raises mid-`up` would otherwise abandon steps under way (left pending for the next run
    to settle) and fail the run over a logging bug. The first exception is kept in `error`,
    for the caller to raise once the operation is over; events keep flowing to it."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener
        self.error: Exception | None = None

    def __call__(self, event: Event) -> None:
        try:
            self._listener(event)
        except Exception as exc:  # the listener's own bug, raised after the operation
            if self.error is None:
                self.error = exc
