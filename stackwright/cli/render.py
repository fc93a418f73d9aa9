"""How the CLI shows the engine's events: JSON lines, plain lines, or a live terminal display.

Three renderers behind one listener (`make_renderer`): `--json` writes one JSON
object per event; a pipe or CI log gets one plain line when a step starts and
one when it ends; a terminal gets a `rich` live tree of the steps in progress.
They only format what the engine reports: they decide nothing, read no state,
and never show a value the events have not already masked (field changes go
through `list_changes.readable_changes`). How each operation looks (symbol, colour,
verbs) is one table, `OP_DISPLAY`, shared by all three.
"""

from __future__ import annotations

import abc
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from stackwright.cli.lines import VALUE_WIDTH, compact, json_line
from stackwright.cli.terminal import watched
from stackwright.engine.events import (
    SKIPPED,
    Diagnostic,
    Drift,
    Event,
    Log,
    PolicyChecked,
    StepDone,
    StepProgress,
    StepSkipped,
    StepStarted,
    Summary,
    event_json,
    plural,
    step_type_and_name,
    type_and_name,
)
from stackwright.engine.list_changes import readable_changes
from stackwright.engine.plan import ABSENT, FieldChange, Step
from stackwright.errors import redact, redact_within, shown_path
from stackwright.model import STACK_TYPE, Op, parse_urn
from stackwright.sdk.output import join_path

if TYPE_CHECKING:
    from rich.console import Console, Group, RenderableType
    from rich.live import Live
    from rich.text import Text
    from rich.tree import Tree

    from stackwright.policy import Finding, Report


def _import_rich() -> None:
    """Bind rich's classes, which only the plain and live renderers use: `--json` (what
    scripts and benchmarks run) does not pay for importing rich (~13 ms)."""
    global Console, Group, Live, Text, Tree
    from rich.console import Console, Group
    from rich.live import Live
    from rich.text import Text
    from rich.tree import Tree


__all__ = ["KINDS", "OP_DISPLAY", "OpDisplay", "Renderer", "make_renderer", "policy_lines"]

KINDS = ("preview", "up", "destroy", "refresh", "import")

#: Seconds between two progress lines of one resource in plain mode: a rollout
#: reports every pod transition, and a CI log should not get hundreds of lines.
PROGRESS_INTERVAL = 1.0
#: The live display redraws at most this often; more is flicker, not information.
REFRESH_PER_SECOND = 8


@dataclass(frozen=True)
class OpDisplay:
    """How one operation looks, wherever it is shown."""

    symbol: str  # "+", "~", "+-" …; "" for unchanged
    style: str  # rich style of the symbol and verb
    verb: str  # what the step will do: "create"
    done: str  # what it did: "created" (also the summary's wording after an up)
    planned: str  # the summary's wording in a preview: "to create"


#: In the order the summary lists the counts (unchanged last, as Pulumi does).
OP_DISPLAY: dict[Op, OpDisplay] = {
    Op.CREATE: OpDisplay("+", "green", "create", "created", "to create"),
    Op.UPDATE: OpDisplay("~", "yellow", "update", "updated", "to update"),
    Op.REPLACE: OpDisplay("+-", "magenta", "replace", "replaced", "to replace"),
    Op.CREATE_REPLACEMENT: OpDisplay(
        "++", "magenta", "create replacement", "created replacement", "to create as replacement"
    ),
    Op.DELETE_REPLACED: OpDisplay(
        "--", "magenta", "delete replaced", "deleted replaced", "to delete after replacement"
    ),
    Op.DELETE: OpDisplay("-", "red", "delete", "deleted", "to delete"),
    Op.IMPORT: OpDisplay("=", "cyan", "import", "imported", "to import"),
    Op.READ: OpDisplay(">", "cyan", "read", "read", "to read"),
    Op.DISCARD: OpDisplay("<", "dim", "discard", "discarded", "to discard"),
    Op.REFRESH: OpDisplay("~", "blue", "refresh", "refreshed", "to refresh"),
    Op.SAME: OpDisplay("", "dim", "same", "unchanged", "unchanged"),
}

_BY_VALUE: dict[str, OpDisplay] = {op.value: display for op, display in OP_DISPLAY.items()}

#: A delete that leaves the object in the cluster (`retain_on_delete`), said so in each of its
#: lines as Pulumi's `delete[retain]`: its summary count stays a delete's.
_RETAINED = OpDisplay("-", "red", "delete [retain]", "deleted [retain]", "to delete")


def op_display(step: Step) -> OpDisplay:
    """How a step's operation is said: a retained delete as one."""
    old = step.old
    if step.op is Op.DELETE and old is not None and old.retain_on_delete and old.custom:
        return _RETAINED
    return OP_DISPLAY[step.op]


#: What the live display's root says while the operation runs.
_ACTIVITY = {
    "preview": "previewing",
    "up": "updating",
    "destroy": "destroying",
    "refresh": "refreshing",
    "import": "importing",
}


class Renderer(abc.ABC):
    """The engine's listener: shows each event; `close` ends the display."""

    #: Each renderer masks secrets as it formats an event (`shown_changes`, `redact`), so
    #: the automation layer hands it the raw events (`stackwright.engine.events.masking`).
    masks_secrets = True

    @abc.abstractmethod
    def __call__(self, event: Event) -> None: ...

    @abc.abstractmethod
    def close(self) -> None:
        """Stop any live display and flush; calling it again does nothing."""


def make_renderer(
    kind: str,
    *,
    json_lines: bool,
    show_diff: bool,
    stream: TextIO | None = None,
    live: bool | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Renderer:
    """The renderer for one CLI operation.

    `kind` is the operation (preview / up / destroy / refresh / import).
    `json_lines` wins over everything else; otherwise `live=None` chooses the
    live display when `stream` (default: sys.stdout) is a person's terminal, plain
    lines when it is not (a pipe, a file, a CI job's terminal). `clock` is injectable for tests (progress rate limits, ages).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown operation kind {kind!r}; expected one of {', '.join(KINDS)}")
    out = stream if stream is not None else sys.stdout
    if json_lines:
        return JsonLinesRenderer(out)
    _import_rich()
    if live is None:
        live = watched(out)
    if live:
        console = Console(file=out, force_terminal=True, highlight=False)
        # Only capture stray prints while the live region owns the real stdout.
        return LiveRenderer(
            kind, show_diff=show_diff, console=console, clock=clock, redirect=out is sys.stdout
        )
    return PlainRenderer(kind, show_diff=show_diff, stream=out, clock=clock)


# ---------------------------------------------------------------------------
# Formatting shared by the plain and live renderers: each returns rich Text,
# printed styled on a terminal and as `.plain` elsewhere.


def _is_future(kind: str) -> bool:
    return kind == "preview"


def _seconds(elapsed: float, places: int) -> str:
    if elapsed < 60:
        return f"{elapsed:.{places}f}s"
    minutes, seconds = divmod(int(elapsed), 60)
    return f"{minutes}m{seconds:02d}s"


def _symbol(display: OpDisplay) -> str:
    return f"{display.symbol} " if display.symbol else ""


def step_line(step: Step) -> Text:
    """`+ create  kubernetes:core/v1:ConfigMap  app-config`, with replacement reasons."""
    display = op_display(step)
    type_, name = step_type_and_name(step)
    text = Text.assemble((f"{_symbol(display)}{display.verb}", display.style), f"  {type_}  {name}")
    if step.replace_reasons:
        text.append(f" ({'; '.join(step.replace_reasons)})", style=display.style)
    return text


def diff_lines(step: Step) -> list[Text]:
    """The step's field changes, secrets masked: `+ path: v` / `- path: v` / `~ path: a → b`;
    a changed list by item (`+ env[name=B]: {…}`), a multi-line string line by line (as
    `kubectl diff` reads)."""
    lines = []
    for change in readable_changes(step):
        for field in _fields(change):
            lines += _change_lines(field)
    return lines


def _fields(change: FieldChange) -> list[FieldChange]:
    """An added or deleted map or list too wide for one line, field by field (`+
    spec.template.spec.containers[0].image: "nginx:1.29"`), as Pulumi's `--diff` shows a
    created object whole, rather than cut off before what matters."""
    kind, value = change.kind, change.new if change.kind == "add" else change.old
    if kind not in ("add", "delete") or not value or not isinstance(value, dict | list):
        return [change]
    if len(compact(value, None)) <= VALUE_WIDTH:
        return [change]
    items = value.items() if isinstance(value, dict) else enumerate(value)
    return [
        field
        for key, item in items
        for field in _fields(
            FieldChange(
                join_path(change.path, key),
                ABSENT if kind == "add" else item,
                item if kind == "add" else ABSENT,
                (*change.keys, key),
            )
        )
    ]


def _change_lines(change: FieldChange) -> list[Text]:
    kind, old, new = change.kind, change.old, change.new
    if kind == "add":
        return [Text(f"    + {change.path}: {compact(new)}", style="green")]
    if kind == "delete":
        return [Text(f"    - {change.path}: {compact(old)}", style="red")]
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        return [Text(f"    ~ {change.path}:", style="yellow"), *_text_lines(old, new)]
    return [Text(f"    ~ {change.path}: {compact(old)} → {compact(new)}", style="yellow")]


def _text_lines(old: str, new: str) -> list[Text]:
    """A unified diff of two texts' lines, three lines of context, hunks headed `@@`."""
    import difflib

    styles = {"+": "green", "-": "red", "@": "dim"}
    lines = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        sign = line[:1]
        text = line if sign == "@" else f"{sign or ' '} {line[1:]}"
        lines.append(Text(f"        {text}", style=styles.get(sign, "")))
    return lines


def done_line(step: Step, elapsed: float, *, with_type: bool, with_symbol: bool = False) -> Text:
    """`  created  app-config (0.05s)`, with the type where names collide; the live display
    adds the symbol and always the type."""
    display = op_display(step)
    type_, name = step_type_and_name(step)
    if with_symbol:
        return Text.assemble(
            (f"{_symbol(display)}{display.done}", display.style),
            f"  {type_}  {name} ",
            (f"({_seconds(elapsed, 2)})", "dim"),
        )
    who = f"{type_}  {name}" if with_type and type_ else name
    return Text(f"  {display.done}  {who} ({_seconds(elapsed, 2)})")


def failed_line(done: StepDone, *, with_type: bool) -> Text:
    # The summary's failure, led by the program's line and naming the resource itself: said
    # as it is, not after the name a second time.
    if done.located:
        return Text(f"! failed  {done.error}", style="bold red")
    type_, name = step_type_and_name(done.step)
    who = f"{type_}  {name}" if with_type and type_ else name
    # Provider errors often name the object already ("web: 0/3 ready"); say it once.
    detail = done.error.removeprefix(f"{name}:").strip() if done.error else ""
    return Text(f"! failed  {who}: {detail}" if detail else f"! failed  {who}", style="bold red")


def stopped_line(step: Step, status: str, elapsed: float) -> Text:
    """`  stopped  kubernetes:apps/v1:Deployment  web after 3s: 0/3 ready`: under way when
    the command ended, so the next operation settles it."""
    type_, name = step_type_and_name(step)
    where = f": {status}" if status else ""
    return Text(f"  stopped  {type_}  {name} after {_seconds(elapsed, 0)}{where}", style="yellow")


def _skipped(future: bool) -> str:
    """What a step not taken is called: in a preview, what it would do was not previewed."""
    return "not previewed" if future else "skipped"


def skipped_line(step: Step, reason: str, *, future: bool) -> Text:
    """`  not previewed  ~ update  kubernetes:apps/v1:Deployment  web (… failed …)`: the
    step's operation as planned, marked as not taken, never a line of a step that runs."""
    display = op_display(step)
    type_, name = step_type_and_name(step)
    return Text.assemble(
        (f"  {_skipped(future)}  ", "dim"),
        (f"{_symbol(display)}{display.verb}", display.style),
        (f"  {type_}  {name}" + (f" ({reason})" if reason else ""), "dim"),
    )


def drift_lines(drift: Drift) -> list[Text]:
    """The drifted resource and each field `path: recorded → live (changed by MANAGER)`."""
    type_, name = type_and_name(drift.urn)
    if drift.gone:
        return [Text(f"- gone  {type_}  {name} (deleted outside Stackwright)", style="red")]
    lines = [Text.assemble(("~ drifted", "yellow"), f"  {type_}  {name}")]
    for drifted in drift.fields:
        by = f" (changed by {drifted.manager})" if drifted.manager else ""
        # The live side of a field (or list item) someone removed is absent, not a null.
        live = "(removed)" if drifted.live is None else compact(drifted.live)
        lines.append(Text(f"    {drifted.path}: {compact(drifted.recorded)} → {live}{by}"))
    return lines


_SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}


def diagnostic_line(diagnostic: Diagnostic | Log) -> Text:
    type_, name = type_and_name(diagnostic.urn) if diagnostic.urn else ("", "")
    # A message that names its resource (`app.py:3: kubernetes:core/v1:ConfigMap cfg: …`,
    # a failed diff's) says it once.
    where = f"{name}: " if name and f"{type_} {name}: " not in diagnostic.message else ""
    return Text(
        f"{diagnostic.severity}: {where}{diagnostic.message}",
        style=_SEVERITY_STYLE.get(diagnostic.severity, ""),
    )


class Logged:
    """The program's messages (`sw.log`) of one operation as a display shows them: debug
    ones not at all (the CLI has no verbose flag: `--json` has them), warnings and errors
    kept to be said again, counted, in the summary, as Pulumi's "Diagnostics" section."""

    def __init__(self) -> None:
        self._kept: list[Log] = []

    def lines(self, log: Log) -> list[Text]:
        if log.severity == "debug":
            return []
        if log.severity in ("warning", "error"):
            self._kept.append(log)
        return [diagnostic_line(log)]

    def summary_lines(self) -> list[Text]:
        if not self._kept:
            return []
        counts = [
            plural(n, severity)
            for severity in ("error", "warning")
            if (n := sum(1 for log in self._kept if log.severity == severity))
        ]
        head = Text(f"Diagnostics ({', '.join(counts)}):", style="bold")
        said = [Text("    ").append_text(diagnostic_line(log)) for log in self._kept]
        return [head, *said, Text("")]  # a blank line before the next section, as Pulumi's


def _finding_where(finding: Finding) -> str:
    resource = finding.resource
    if resource is None:
        return "(the stack as a whole)"
    if resource.source:
        line = f":{resource.line}" if resource.line else ""
        return f"{shown_path(resource.source)}{line} {resource.display}"
    return resource.display


def policy_lines(report: Report) -> list[Text]:
    """The findings of the policy packs, blocking ones first, then the exemptions in force."""
    _import_rich()
    packs = ", ".join(sorted({e.pack for e in report.enabled})) or "no packs"
    blocking = report.blocking
    errors = sum(1 for f in report.findings if f.error)
    counts = [
        f"{len(blocking) - errors} mandatory",
        f"{len(report.findings) - len(blocking)} advisory",
    ]
    if errors:
        counts.append(f"{errors} policy error(s)")
    head_style = "bold red" if blocking else ("yellow" if report.findings else "green")
    lines = [
        Text(
            f"Policies ({packs}): {report.checked} object(s) checked, "
            f"{len(report.findings)} violation(s): {', '.join(counts)}",
            style=head_style,
        )
    ]
    for finding in sorted(report.findings, key=lambda f: not f.blocking):
        tag = "error" if finding.error else finding.level.value
        where = _finding_where(finding)
        lines.append(
            Text(
                f"  {tag:<9} {finding.policy.label} ({finding.severity.value})  {where}",
                style="bold red" if finding.blocking else "yellow",
            )
        )
        lines.append(Text(f"            {finding.message}"))
        if finding.path:
            lines.append(Text(f"            at {finding.path}", style="dim"))
        if finding.policy.fix and not finding.error:
            lines.append(Text(f"            fix: {finding.policy.fix}", style="dim"))
    for exemption in report.exemptions:
        by = f", owner {exemption.owner}, until {exemption.expires}" if exemption.owner else ""
        if exemption.via == "config" and exemption.objects:  # a pattern: how many it matched
            by += f", {exemption.objects} object{'s' if exemption.objects > 1 else ''}"
        lines.append(
            Text(
                f"  exempt    {exemption.policy} for {exemption.resource} "
                f"({exemption.via}{by}): {exemption.reason}",
                style="dim",
            )
        )
        if not exemption.objects:
            lines.append(
                Text(
                    "            it matched none of the objects the policy checked: check its "
                    "resource pattern (a glob over the URN, Kind/name or Kind/namespace/name)",
                    style="yellow",
                )
            )
    return lines


def summary_lines(summary: Summary, *, future: bool) -> list[Text]:
    """The closing block: counts per operation, duration, outputs, failures, what was not done."""
    lines = [Text("Resources:", style="bold")]
    counts = {key: n for key, n in summary.counts.items() if n}
    ordered: list[str] = [op.value for op in OP_DISPLAY if op.value in counts]
    ordered += [key for key in counts if key not in _BY_VALUE]  # counts the table does not know
    for key in ordered:
        display = _BY_VALUE.get(key)
        if display is None:
            words = _skipped(future) if key == SKIPPED else key
            lines.append(
                Text(f"    {counts[key]} {words}", style="yellow" if key == SKIPPED else "")
            )
            continue
        words = display.planned if future else display.done
        lines.append(
            Text(f"    {_symbol(display)}{counts[key]} {words}", style=display.style or "")
        )
    if summary.failures:
        lines.append(Text(f"    ! {len(summary.failures)} failed", style="bold red"))
    elif not ordered:
        nothing = "none done" if summary.not_done else "no resources"
        lines.append(Text(f"    {nothing}", style="dim"))
    lines.append(Text(f"Duration: {_seconds(summary.elapsed, 1)}"))
    if summary.outputs:
        lines.append(Text("Outputs:", style="bold"))
        # By name, as `stack output` lists them and Pulumi's display does, whichever
        # operation (an up has them in program order, a refresh as stored).
        outputs = summary.outputs
        lines += [Text(f"    {k}: {compact(outputs[k], None)}") for k in sorted(outputs)]
    if summary.failures:
        lines.append(Text("Failures:", style="bold red"))
        lines += [Text(f"    {failure}", style="red") for failure in summary.failures]
    if summary.not_done:
        # Each item says why (a dependency failed, or the run stopped after a failure).
        lines.append(Text("Not done:", style="bold yellow"))
        lines += [Text(f"    {item}") for item in summary.not_done]
    return lines


# ---------------------------------------------------------------------------
# JSON lines


def _may_quote(event: Event) -> bool:
    """Whether an event carries text beyond names: field changes, messages, errors. The
    many that do not (an unchanged resource, a step done) skip the search for secrets,
    whose cost grows with the secrets a run has seen."""
    if isinstance(event, StepStarted):
        return bool(event.step.changes)
    if isinstance(event, StepDone):
        return not event.ok
    return True


def _redacted(line: Text) -> Text:
    """The line with every secret value this process has seen shown as [secret] (styles
    dropped where one was found). The engine masks secret fields itself; this catches what
    reaches a display by another road (a list an element of which is secret, a value an
    API server echoes escaped)."""
    plain = line.plain
    clean = redact(plain)
    return line if clean == plain else Text(clean)


class JsonLinesRenderer(Renderer):
    """`--json`: one JSON object per line per event, flushed at once."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        document = event_json(event)
        line = json_line(document)
        if _may_quote(event) and redact(line) != line:  # the last guard: see `_redacted`
            line = json_line(redact_within(document))
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def close(self) -> None:
        with self._lock:
            self._stream.flush()


# ---------------------------------------------------------------------------
# Plain lines


class PlainRenderer(Renderer):
    """A line when a step starts, a line when it ends; for pipes and CI logs.

    Unchanged resources are not printed (only counted in the summary), and a
    resource's progress is printed when it changes, at most once per
    `PROGRESS_INTERVAL`.
    """

    def __init__(
        self,
        kind: str,
        *,
        show_diff: bool,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _import_rich()
        self._kind = kind
        self._show_diff = show_diff
        self._stream = stream
        self._clock = clock
        self._lock = threading.Lock()
        self._progress: dict[str, tuple[str, float]] = {}  # urn → (last message, printed at)
        self._printed = False
        #: Resource name → the types of the steps started under it: a name two resources
        #: share (a Deployment and a Service `web`) gets its type on its progress and end
        #: lines.
        self._types: dict[str, set[str]] = {}
        self._logged = Logged()
        #: Steps started and not done, for `close` to say where each stood when the command
        #: ended before them (Ctrl-C, SIGTERM, a cancel), with their latest progress.
        self._running: dict[tuple[str, Op], _Running] = {}

    def __call__(self, event: Event) -> None:
        lines = self._lines(event)
        if not lines:
            return
        guard = redact if _may_quote(event) else str
        with self._lock:
            self._stream.write("".join(guard(line.plain) + "\n" for line in lines))
            self._stream.flush()
            self._printed = True

    def _lines(self, event: Event) -> list[Text]:
        if isinstance(event, StepStarted):
            if event.step.op is Op.SAME:
                return []
            type_, name = step_type_and_name(event.step)
            self._types.setdefault(name, set()).add(type_)
            if not _is_future(self._kind):
                self._running[event.step.urn, event.step.op] = _Running(event.step, self._clock())
            return [step_line(event.step), *(diff_lines(event.step) if self._show_diff else ())]
        if isinstance(event, StepProgress):
            for row in self._running.values():
                if row.step.urn == event.urn:
                    row.message = event.message
            return self._progress_lines(event)
        if isinstance(event, StepDone):
            self._progress.pop(event.step.urn, None)
            self._running.pop((event.step.urn, event.step.op), None)
            shared = len(self._types.get(step_type_and_name(event.step)[1], ())) > 1
            if not event.ok:
                return [failed_line(event, with_type=shared)]
            if _is_future(self._kind) or event.step.op is Op.SAME:
                return []  # a preview's line was printed when the step was planned
            return [done_line(event.step, event.elapsed, with_type=shared)]
        if isinstance(event, StepSkipped):
            return [skipped_line(event.step, event.reason, future=_is_future(self._kind))]
        if isinstance(event, Drift):
            return drift_lines(event)
        if isinstance(event, Diagnostic):
            return [diagnostic_line(event)]
        if isinstance(event, Log):
            return self._logged.lines(event)
        if isinstance(event, PolicyChecked):
            return policy_lines(event.report)
        self._running.clear()  # a run that ended: nothing was left under way
        block = [
            *self._logged.summary_lines(),
            *summary_lines(event, future=_is_future(self._kind) or event.dry_run),
        ]
        return [Text(""), *block] if self._printed else block

    def _progress_lines(self, event: StepProgress) -> list[Text]:
        now = self._clock()
        last = self._progress.get(event.urn)
        if last is not None and (last[0] == event.message or now - last[1] < PROGRESS_INTERVAL):
            return []
        self._progress[event.urn] = (event.message, now)
        type_, name = type_and_name(event.urn)
        # As end lines do: a Service `web`'s "no ready endpoints" is not its Deployment's.
        who = f"{type_}  {name}" if len(self._types.get(name, ())) > 1 else name
        return [Text(f"  {who}: {event.message}")]

    def close(self) -> None:
        # Closed with steps under way, as the live display says it: a CI log ends with where
        # each stood, not with the last progress line of whichever printed last.
        now = self._clock()
        with self._lock:
            for row in self._running.values():
                line = stopped_line(row.step, row.message, now - row.started)
                self._stream.write(redact(line.plain) + "\n")
            self._running.clear()
            self._stream.flush()


# ---------------------------------------------------------------------------
# Live terminal display


@dataclass
class _Running:
    step: Step
    started: float
    message: str = ""


class LiveRenderer(Renderer):
    """A `rich` live tree of the steps in progress, under their parent components.

    Only running steps live in the redrawn region (plus counts), so a redraw
    costs the parallelism, not the stack size; a finished step is printed once
    above the region. The region is transient: after `close` only the printed
    lines and the summary remain.
    """

    def __init__(
        self,
        kind: str,
        *,
        show_diff: bool,
        console: Console,
        clock: Callable[[], float] = time.monotonic,
        redirect: bool = False,
    ) -> None:
        _import_rich()
        self._kind = kind
        self._show_diff = show_diff
        self._console = console
        self._clock = clock
        self._started = False
        self._stopped = False
        # Guards what the refresh thread reads; never held while printing, since
        # printing takes the Live's lock and the refresh thread holds that first.
        self._state = threading.Lock()
        self._running: dict[tuple[str, Op], _Running] = {}
        self._parents: dict[str, str] = {}  # every step's URN → its parent's URN
        self._finished = 0
        self._planned = 0
        self._began: float | None = None
        self._root = Text(_ACTIVITY[kind], style="dim")  # until a URN names the stack
        self._logged = Logged()
        # Last: Live renders once while it is constructed.
        self._live = Live(
            console=console,
            refresh_per_second=REFRESH_PER_SECOND,
            transient=True,
            redirect_stdout=redirect,
            redirect_stderr=redirect,
            get_renderable=self._render,
        )

    # -- events ------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        if isinstance(event, Summary):
            self._stop()
            with self._state:  # `close` reads it under the lock
                self._running.clear()  # a run that ended: nothing was left under way
            block = summary_lines(event, future=_is_future(self._kind) or event.dry_run)
            self._print([Text(""), *self._logged.summary_lines(), *block])
            return
        self._start()
        if isinstance(event, StepStarted):
            self._on_started(event.step)
        elif isinstance(event, StepProgress):
            with self._state:
                for row in self._running.values():
                    if row.step.urn == event.urn:
                        row.message = event.message
        elif isinstance(event, StepDone):
            self._on_done(event)
        elif isinstance(event, StepSkipped):
            self._print([skipped_line(event.step, event.reason, future=_is_future(self._kind))])
        elif isinstance(event, Drift):
            self._print(drift_lines(event))
        elif isinstance(event, PolicyChecked):
            self._print(policy_lines(event.report))
        elif isinstance(event, Log):
            self._print(self._logged.lines(event))
        else:
            self._print([diagnostic_line(event)])

    def _on_started(self, step: Step) -> None:
        state = step.new or step.old
        with self._state:
            if not self._parents:
                self._root = self._root_label(step.urn)
            self._parents[step.urn] = state.parent if state else ""
            if step.op is Op.SAME:
                return
            if _is_future(self._kind):
                self._planned += 1
            else:
                self._running[(step.urn, step.op)] = _Running(step, self._clock())
        if _is_future(self._kind) or self._show_diff:
            self._print([step_line(step), *(diff_lines(step) if self._show_diff else ())])

    def _on_done(self, event: StepDone) -> None:
        with self._state:
            self._running.pop((event.step.urn, event.step.op), None)
            self._finished += 1
        if not event.ok:
            self._print([failed_line(event, with_type=True)])
        elif not _is_future(self._kind) and event.step.op is not Op.SAME:
            self._print([done_line(event.step, event.elapsed, with_type=True, with_symbol=True)])

    def _print(self, lines: Iterable[Text]) -> None:
        for line in lines:
            self._console.print(_redacted(line), highlight=False, soft_wrap=True)

    # -- the live region -----------------------------------------------------

    def _root_label(self, urn: str) -> Text:
        try:
            parts = parse_urn(urn)
            stack = f"{parts.project}-{parts.stack}"
        except ValueError:
            stack = "stack"
        return Text.assemble((stack, "bold"), (f"  {_ACTIVITY[self._kind]}", "dim"))

    def _row_label(self, row: _Running, now: float) -> Text:
        display = op_display(row.step)
        type_, name = step_type_and_name(row.step)
        text = Text.assemble(
            (f"{_symbol(display)}{display.verb}", display.style),
            "  ",
            (type_, "dim"),
            "  ",
            (name, "bold"),
        )
        if row.message:
            text.append(f"  {redact(row.message)}")
        text.append(f"  {_seconds(now - row.started, 0)}", style="dim")
        return text

    def _render(self) -> RenderableType:
        now = self._clock()
        with self._state:
            rows = list(self._running.values())
            tree = Tree(self._root, guide_style="dim")
            limit = max(5, self._console.size.height - 4)
            nodes: dict[str, Tree] = {}
            labelled: set[str] = set()
            for row in rows[:limit]:
                node = self._node(row.step.urn, tree, nodes, 0)
                if row.step.urn in labelled:  # both halves of a replacement at once
                    node.add(self._row_label(row, now))
                else:
                    node.label = self._row_label(row, now)
                    labelled.add(row.step.urn)
            began = self._began if self._began is not None else now
            if _is_future(self._kind):
                footer = f"{self._planned} planned · {_seconds(now - began, 0)}"
            else:
                footer = (
                    f"{self._finished} done · {len(rows)} in progress · {_seconds(now - began, 0)}"
                )
            if len(rows) > limit:
                footer += f" · {len(rows) - limit} more not shown"
        return Group(tree, Text(footer, style="dim"))

    def _node(self, urn: str, tree: Tree, nodes: dict[str, Tree], depth: int) -> Tree:
        """The tree node for `urn`, creating its ancestors (dimmed) as needed."""
        found = nodes.get(urn)
        if found is not None:
            return found
        parent = self._parents.get(urn, "")
        # Depth bounds a parent cycle in bad state; the stack itself is the root.
        if parent and depth < 32 and type_and_name(parent)[0] != STACK_TYPE:
            holder = self._node(parent, tree, nodes, depth + 1)
        else:
            holder = tree
        type_, name = type_and_name(urn)
        node = holder.add(Text(f"{type_}  {name}", style="dim"))
        nodes[urn] = node
        return node

    # -- lifetime --------------------------------------------------------------

    def _start(self) -> None:
        if not self._started and not self._stopped:
            self._started = True
            with self._state:
                self._began = self._clock()
            self._live.start()

    def _stop(self) -> None:
        if self._started and not self._stopped:
            self._live.stop()
        self._stopped = True

    def close(self) -> None:
        self._stop()
        # Closed with steps under way (Ctrl-C, a cancel, an error that ended the command):
        # the transient region that showed them is gone, so say where each one stood.
        now = self._clock()
        with self._state:
            rows = list(self._running.values())
            self._running.clear()
        self._print([stopped_line(row.step, row.message, now - row.started) for row in rows])
        self._console.file.flush()
