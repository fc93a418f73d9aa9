"""The project commands: new, stack, config, preview, up, destroy, refresh, cancel, import, state.

Each handler parses its options, calls one function of `stackwright.automation`
and renders the engine's events (`render.make_renderer`). Exit codes follow
DESIGN.md: 1 when the operation failed, 2 for bad input, 4 for a locked stack.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Protocol, TypeVar

import typer

from stackwright.automation import templates
from stackwright.automation.secrets import NEW_PASSPHRASE_ENV
from stackwright.automation.stored import StoredStack, backend_url_of
from stackwright.automation.workspace import (
    Project,
    StackConfig,
    check_name,
    find_project,
    select_stack,
    selected_stack,
    unselect_stack,
)
from stackwright.cli.lines import compact, json_document, json_line
from stackwright.cli.terminal import machine_stdout, why_no_one_answers
from stackwright.errors import StackwrightError, UsageError
from stackwright.files import write_private
from stackwright.lazy import lazy_module
from stackwright.model import SECRET_TEXT, ResourceState, map_secrets, masked, urn_name
from stackwright.state import (
    Backend,
    HistoryEntry,
    open_backend,
    require_stack,
    version_spans,
)

if TYPE_CHECKING:
    from stackwright import policy
    from stackwright.automation import stack as automation
    from stackwright.automation.stack import ImportEntry, Selection, Workspace
    from stackwright.cli import render as renderers
    from stackwright.cli.render import Renderer
    from stackwright.engine import events
    from stackwright.engine.events import Diagnostic, Event, Summary
    from stackwright.engine.records import Edge
else:
    # The operations, the engine behind them, its events, their displays and the policy
    # packs (~0.15 s of imports), imported by the commands that run an operation: those
    # that only read or edit a stack (`config get`, `stack output`) need none of them.
    automation = lazy_module("stackwright.automation.stack")
    events = lazy_module("stackwright.engine.events")
    renderers = lazy_module("stackwright.cli.render")
    policy = lazy_module("stackwright.policy")

Stack = Annotated[
    str | None, typer.Option("--stack", "-s", help="The stack to use (default: the selected one).")
]
# Pulumi's short flags too (`-j`, `-r`, `-x`, `stack rm -f`): its users' scripts pass them.
Json = Annotated[bool, typer.Option("--json", "-j", help="One JSON event per line.")]
JsonDone = Annotated[bool, typer.Option("--json", "-j", help="What was done, as one JSON line.")]
# What a report prints (`stack ls`, `config get`): one indented document, as Pulumi's, no events.
JsonReport = Annotated[
    bool, typer.Option("--json", "-j", help="Print a JSON document instead of text.")
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
Targets = Annotated[
    list[str] | None,
    typer.Option(
        "--target", "-t", help="Only this resource (URN; * and ** match) and what it depends on."
    ),
]
RefreshTargets = Annotated[
    list[str] | None,
    typer.Option("--target", "-t", help="Only this resource (URN; * and ** match)."),
]
DestroyTargets = Annotated[
    list[str] | None,
    typer.Option(
        "--target", "-t", help="Only this resource (URN; * and ** match) and what depends on it."
    ),
]
TargetDependents = Annotated[
    bool,
    typer.Option("--target-dependents", help="With --target: what depends on the targets too."),
]
Excludes = Annotated[
    list[str] | None,
    typer.Option("--exclude", "-x", help="Everything but this resource (URN; * and ** match)."),
]
ExcludeDependents = Annotated[
    bool,
    typer.Option("--exclude-dependents", help="With --exclude: nor what depends on it."),
]
Replaces = Annotated[
    list[str] | None,
    typer.Option(
        "--replace", help="Replace this resource (URN; * and ** match) even if unchanged."
    ),
]
TargetReplaces = Annotated[
    list[str] | None,
    typer.Option("--target-replace", help="Replace this resource (URN), and only it."),
]
ExpectNoChanges = Annotated[
    bool,
    typer.Option(
        "--expect-no-changes", help="Fail (exit 1), changing nothing, if any would change."
    ),
]
PolicyPacks = Annotated[
    list[str] | None,
    typer.Option(
        "--policy-pack",
        help="Also run the policy packs of this directory (repeatable).",
        metavar="DIR",
    ),
]
PolicyLevel = Annotated[
    str | None,
    typer.Option(
        "--policy-level",
        help="Run every enabled policy at this level for this run: mandatory or advisory.",
    ),
]
Parallel = Annotated[
    int,
    typer.Option(
        "--parallel", "-p", help="How many API calls (reads, dry runs, writes) run at once.", min=1
    ),
]

stack_app = typer.Typer(
    help="Create, select, list and inspect stacks; with no subcommand, show the current one."
)
config_app = typer.Typer(help="A stack's configuration; with no subcommand, list it.")
state_app = typer.Typer(help="Edit a stack's state directly.", no_args_is_help=True)


class _Closable(Protocol):
    def close(self) -> None: ...


_C = TypeVar("_C", bound=_Closable)

#: What the running command opened (workspaces, state stores), closed when it ends however
#: it ends: a failure's traceback holds them in a reference cycle, which would otherwise
#: keep their SQLite connections (and file handles) open until a garbage collection.
_OPENED: ContextVar[contextlib.ExitStack | None] = ContextVar("stackwright_opened", default=None)


@contextlib.contextmanager
def command_scope() -> Iterator[None]:
    """Run one command: what it opens with `_for_the_command` is closed as it ends."""
    with contextlib.ExitStack() as opened:
        token = _OPENED.set(opened)
        try:
            yield
        finally:
            _OPENED.reset(token)


def _for_the_command(resource: _C) -> _C:
    """`resource`, closed when the running command ends."""
    opened = _OPENED.get()
    if opened is None:
        resource.close()
        raise AssertionError("a command runs inside `command_scope()`")
    opened.callback(resource.close)
    return resource


def _backend(project: Project) -> Backend:
    """The project's state store, for the running command."""
    return _for_the_command(open_backend(backend_url_of(project)))


def _stored(stack: str | None, *, existing: bool = True) -> StoredStack:
    """The stack as stored, for a command that reads or edits it without an operation (its
    configuration, outputs, history, state): the engine is not imported. One the state
    store does not have is refused unless not `existing` (`stack import` creates it)."""
    return _opened(StoredStack, stack, existing)


def _workspace(stack: str | None) -> Workspace:
    """The workspace of the stack, for the running command's operation; the stack must exist."""
    return _opened(automation.Workspace, stack, True)


_S = TypeVar("_S", bound=StoredStack)


def _opened(kind: type[_S], stack: str | None, existing: bool) -> _S:
    opened = _for_the_command(kind.open(Path.cwd(), stack))
    if existing:
        opened.require_stack()
    return opened


@contextlib.contextmanager
def rendering(kind: str, *, json_lines: bool, show_diff: bool) -> Iterator[Renderer]:
    """The display of one operation, closed (live region stopped) however it ends."""
    # `--json` promises nothing but events on stdout: what the program, its callbacks and
    # what they run print goes to stderr (Pulumi makes it diagnostics).
    with machine_stdout() if json_lines else contextlib.nullcontext(sys.stdout) as out:
        render = renderers.make_renderer(
            kind, json_lines=json_lines, show_diff=show_diff, stream=out
        )
        try:
            yield render
        finally:
            render.close()


class _SaidOnce:
    """A renderer less the warnings about the stack (no resource) in `said`, which collects
    those it shows: the operation after a command's preview (`up` without --yes) says its
    preview's again (a policy level with no pack to run, the program's notes)."""

    masks_secrets = True  # it hands the raw events to a renderer, which masks them

    def __init__(self, render: Renderer, said: set[Diagnostic]) -> None:
        self._render = render
        self._said = said

    def __call__(self, event: Event) -> None:
        if isinstance(event, events.Diagnostic) and not event.urn:
            if event in self._said:
                return
            self._said.add(event)
        self._render(event)


def _finish(summary: Summary) -> None:
    if not summary.ok:
        raise typer.Exit(summary.exit_code)


def _selection(
    targets: list[str] | None,
    target_dependents: bool,
    excludes: list[str] | None = None,
    exclude_dependents: bool = False,
    replace: list[str] | None = None,
    target_replace: list[str] | None = None,
    *,
    exclude_protected: bool = False,
) -> Selection:
    if target_dependents and not (targets or target_replace):
        raise UsageError("--target-dependents needs a --target: add the resources to start from")
    if exclude_dependents and not excludes:
        raise UsageError("--exclude-dependents needs an --exclude: add the resources to leave out")
    return automation.Selection(
        targets=(*(targets or ()), *(target_replace or ())),
        target_dependents=target_dependents,
        excludes=tuple(excludes or ()),
        exclude_dependents=exclude_dependents,
        replace=(*(replace or ()), *(target_replace or ())),
        exclude_protected=exclude_protected,
    )


def _confirm(kind: str, yes: bool, as_json: bool, command: str = "", warning: str = "") -> bool:
    """Whether to go ahead after the preview (`warning` said first, in a terminal); a
    non-interactive run needs --yes."""
    if yes:
        return True
    _can_ask(kind, as_json, command)
    if warning:
        typer.echo(warning)
    return typer.confirm(f"Do you want to perform this {kind}?", default=False)


def _declined(what: str = "changed") -> NoReturn:
    """A question answered no: nothing done, exit 1, as Pulumi, Terraform and apt end one
    (Ctrl-D at the question exits 1 too), so `stackwright up && next-step` stops there."""
    typer.echo(f"Cancelled: nothing was {what}.")
    raise typer.Exit(1)


def _can_ask(kind: str, as_json: bool, command: str = "") -> None:
    """Refuse (one line, exit 2) a command that will ask, with no one to answer (no
    terminal, or a CI job's): said before its preview, which would read the cluster only
    to be thrown away (Pulumi's non-interactive mode refuses so too)."""
    why = "without a terminal" if as_json else why_no_one_answers()
    if why:
        command = command or kind
        raise UsageError(
            f"`stackwright {command}` asks for confirmation: pass --yes to run it {why}"
            f"{_WITHOUT_CHANGES.get(command, '')}"
        )


#: How to see what a command that asks would do, with no one to answer.
_WITHOUT_CHANGES = {
    "up": ", or see what it would change with `stackwright preview`",
    "destroy": ", or see what it would delete with --preview-only",
    "refresh": ", or report drift without recording it with --preview-only",
}


def _confirm_state_edit(ws: StoredStack, command: str, what: str, yes: bool, as_json: bool) -> None:
    """As `pulumi state …` asks: an edit of the state bypasses the program and the engine
    (declined: `_declined`)."""
    warning = f"This command will edit stack {ws.stack}'s state directly: {what}."
    if not _confirm("state edit", yes, as_json, command, warning):
        _declined()


def _report_done(
    as_json: bool, event: str, action: str, project: str, stack: str, text: str = "", **more: Any
) -> None:
    """What a command that changes something did: with --json one event line (README: JSON
    events), written as every --json line is, else `text` (when it has any)."""
    if as_json:
        document = {"event": event, "action": action, "project": project, "stack": stack}
        typer.echo(json_line({**document, **more}))
    elif text:
        typer.echo(text)


# --- new -------------------------------------------------------------------------------------


def new(
    template: Annotated[str, typer.Argument(help="kubernetes-python or kubernetes-yaml")],
    directory: Annotated[Path, typer.Argument(help="Where to create the project.")],
    name: Annotated[
        str | None, typer.Option("--name", help="Project name (default: the directory's).")
    ] = None,
    stack: Annotated[str, typer.Option("--stack", help="The first stack.")] = "dev",
    force: Annotated[
        bool,
        typer.Option(
            "--force", "-f", help="Into a folder that is not empty (the template's files replaced)."
        ),
    ] = False,
    as_json: JsonDone = False,
) -> None:
    """Make a new project, with a first stack that deploys to the local cluster."""
    project_name = templates.new_project(template, directory, name=name, stack=stack, force=force)
    # Quoted as a shell needs it: the line is there to be pasted (no `cd .` into the folder
    # the user is in).
    here = directory.resolve() == Path.cwd().resolve()
    cd = "" if here else f"cd {shlex.quote(str(directory))} && "
    _report_done(
        as_json,
        "project",
        "new",
        project_name,
        stack,
        f"Created project {project_name} in {directory} with stack {stack}.\n"
        f"Next: {cd}stackwright up --yes",
        template=template,
        directory=str(directory),
    )


# --- operations ------------------------------------------------------------------------------

ForceConflicts = Annotated[
    bool, typer.Option("--force-conflicts", help="Take over fields other managers own.")
]
Retarget = Annotated[
    bool,
    typer.Option(
        "--retarget",
        help=(
            "A provider now reaching another cluster than its objects are recorded in: "
            "forget them (left there, not deleted) and create them on this one."
        ),
    ),
]


def preview(
    stack: Stack = None,
    diff: Annotated[bool, typer.Option("--diff", help="Show field-level changes.")] = False,
    refresh: Annotated[
        bool,
        typer.Option("--refresh", "-r", help="Read the cluster first; show drift as changes."),
    ] = False,
    targets: Targets = None,
    target_dependents: TargetDependents = False,
    excludes: Excludes = None,
    exclude_dependents: ExcludeDependents = False,
    replace: Replaces = None,
    target_replace: TargetReplaces = None,
    expect_no_changes: ExpectNoChanges = False,
    parallel: Parallel = 16,
    policy_packs: PolicyPacks = None,
    policy_level: PolicyLevel = None,
    retarget: Retarget = False,
    force: ForceConflicts = False,
    save_plan: Annotated[
        Path | None,
        typer.Option(
            "--save-plan",
            help="Also write the plan to FILE, for `up --plan FILE` to apply exactly it.",
            metavar="FILE",
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Show what `up` would change; changes nothing anywhere."""
    level = policy.Level.override(policy_level, "--policy-level")
    select = _selection(
        targets, target_dependents, excludes, exclude_dependents, replace, target_replace
    )
    if save_plan is not None:
        _writable(save_plan, "--save-plan")  # before the preview, which would be lost
    ws = _workspace(stack)
    with rendering("preview", json_lines=as_json, show_diff=diff) as render:
        summary = ws.preview(
            render,
            refresh=refresh,
            select=select,
            parallel=parallel,
            policy_packs=tuple(policy_packs or ()),
            policy_level=level,
            retarget=retarget,
            expect_no_changes=expect_no_changes,
            force=force,
            save_plan=save_plan,
        )
    _finish(summary)
    if save_plan is not None and not as_json:
        typer.echo(
            f"Saved the plan to {save_plan}: apply it with `stackwright up --plan {save_plan}`."
        )


def up(
    stack: Stack = None,
    yes: Yes = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", "-r", help="Read the cluster first; undo drift.")
    ] = False,
    targets: Targets = None,
    target_dependents: TargetDependents = False,
    excludes: Excludes = None,
    exclude_dependents: ExcludeDependents = False,
    replace: Replaces = None,
    target_replace: TargetReplaces = None,
    expect_no_changes: ExpectNoChanges = False,
    parallel: Parallel = 16,
    diff: Annotated[bool, typer.Option("--diff", help="Show field-level changes.")] = False,
    force: ForceConflicts = False,
    message: Annotated[
        str, typer.Option("--message", "-m", help="Recorded in the stack's history.")
    ] = "",
    policy_packs: PolicyPacks = None,
    policy_level: PolicyLevel = None,
    retarget: Retarget = False,
    plan: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            help="Take only the steps of this plan (`preview --save-plan FILE`), with its options.",
            metavar="FILE",
        ),
    ] = None,
    as_json: Json = False,
) -> None:
    """Apply the program: create, update, replace and delete, waiting for each object to be ready."""
    level = policy.Level.override(policy_level, "--policy-level")
    select = _selection(
        targets, target_dependents, excludes, exclude_dependents, replace, target_replace
    )
    ws = _workspace(stack)
    saved = ws.read_plan(plan) if plan is not None else None
    if saved is not None:  # its preview and its run both with the plan's options
        select, refresh, retarget = automation.planned_selection(saved, select, refresh, retarget)
    packs = tuple(policy_packs or ())
    said: set[Diagnostic] = set()
    if not yes:
        _can_ask("update", as_json, "up")
    if not yes or expect_no_changes:
        with rendering("preview", json_lines=as_json, show_diff=diff) as render:
            planned = ws.preview(
                events.expecting_no_changes(_SaidOnce(render, said), expect_no_changes),
                refresh=refresh,
                select=select,
                parallel=parallel,
                policy_packs=packs,
                policy_level=level,
                retarget=retarget,
                force=force,
                plan=saved,
            )
        _finish(planned)
        if expect_no_changes:
            automation.expect_no_changes_in(
                planned, "the preview shows changes; nothing was changed"
            )
        if not _confirm("update", yes, as_json, "up"):
            _declined()
    with rendering("up", json_lines=as_json, show_diff=diff) as render:
        summary = ws.up(
            events.expecting_no_changes(_SaidOnce(render, said), expect_no_changes),
            refresh=refresh,
            select=select,
            parallel=parallel,
            force=force,
            message=message,
            policy_packs=packs,
            policy_level=level,
            retarget=retarget,
            plan=saved,
        )
    _finish(summary)
    if expect_no_changes:  # the cluster or the state changed between the preview and the up
        automation.expect_no_changes_in(
            summary, "the update changed the stack after a preview without changes"
        )


def destroy(
    stack: Stack = None,
    yes: Yes = False,
    targets: DestroyTargets = None,
    excludes: Excludes = None,
    exclude_protected: Annotated[
        bool,
        typer.Option(
            "--exclude-protected",
            help="Keep every protected resource (and what it needs) and destroy the rest, "
            "instead of failing on them.",
        ),
    ] = False,
    remove: Annotated[
        bool,
        typer.Option(
            "--remove", help="Then remove the stack and its configuration file, as `stack rm`."
        ),
    ] = False,
    preview_only: Annotated[
        bool,
        typer.Option("--preview-only", help="Show what the destroy would delete; change nothing."),
    ] = False,
    parallel: Parallel = 16,
    as_json: Json = False,
) -> None:
    """Delete every resource of the stack from its cluster, dependents first."""
    # A targeted destroy always takes the targets' dependents (a state keeps no resource
    # whose dependency is gone), and an excluded resource keeps what it depends on.
    select = _selection(targets, False, excludes, exclude_protected=exclude_protected)
    if remove and (targets or excludes or exclude_protected):
        # Refused before anything is deleted: a destroy that keeps resources leaves a stack
        # that `--remove` would then refuse to remove, after the destroy had run.
        kept = "--target" if targets else "--exclude" if excludes else "--exclude-protected"
        raise UsageError(
            f"--remove removes the whole stack, and {kept} keeps some of its resources: run "
            f"the destroy without --remove, then `stackwright stack rm --force` if the stack "
            "should go with what it kept; nothing was changed"
        )
    if preview_only and remove:
        raise UsageError(
            "--preview-only changes nothing, and --remove would remove the stack: leave one "
            "out; nothing was changed"
        )
    ws = _workspace(stack)
    if preview_only:  # Pulumi's `destroy --preview-only`: no question, so no --yes needed
        with rendering("preview", json_lines=as_json, show_diff=False) as render:
            _finish(ws.destroy(render, select=select, parallel=parallel, preview=True))
        return
    if not yes:
        _can_ask("destroy", as_json)
        with rendering("preview", json_lines=as_json, show_diff=False) as render:
            ws.destroy(render, select=select, parallel=parallel, preview=True)
        if not _confirm("destroy", yes, as_json):
            _declined()
    with rendering("destroy", json_lines=as_json, show_diff=False) as render:
        summary = ws.destroy(render, select=select, parallel=parallel)
    _finish(summary)
    if remove:
        left = ws.backend.load(ws.project.name, ws.stack).resources
        if left:  # kept by --exclude / --exclude-protected, or not targeted
            names = ", ".join(urn_name(r.urn) for r in left[:3]) + (", …" if len(left) > 3 else "")
            raise UsageError(
                f"--remove: stack {ws.stack} still records {len(left)} resource(s) the destroy "
                f"kept ({names}), so it stays; `stackwright stack rm {ws.stack} --force` "
                "removes it anyway"
            )
        _remove_stack(ws.project, ws.stack, force=False, as_json=as_json)


def refresh(
    stack: Stack = None,
    yes: Yes = False,
    preview_only: Annotated[
        bool, typer.Option("--preview-only", help="Report drift; record nothing.")
    ] = False,
    targets: RefreshTargets = None,
    excludes: Excludes = None,
    expect_no_changes: Annotated[
        bool,
        typer.Option(
            "--expect-no-changes",
            help="Fail (exit 1), recording nothing, if any object drifted or was deleted.",
        ),
    ] = False,
    as_json: Json = False,
) -> None:
    """Read every object, report drift field by field, and record what the cluster holds."""
    select = _selection(targets, False, excludes)
    ws = _workspace(stack)
    if not (yes or preview_only):
        _can_ask("refresh", as_json)
    if preview_only or not yes or expect_no_changes:
        with rendering("refresh", json_lines=as_json, show_diff=True) as render:
            summary = ws.refresh(
                events.expecting_no_changes(render, expect_no_changes), select=select, preview=True
            )
        _finish(summary)  # objects it could not read: nothing to record, or to ask about
        if expect_no_changes:
            automation.expect_no_drift_in(summary)
        if preview_only:
            return
        if not _confirm("refresh", yes, as_json):
            _declined()
    with rendering("refresh", json_lines=as_json, show_diff=True) as render:
        summary = ws.refresh(render, select=select)
    _finish(summary)


def cancel(stack: Stack = None, as_json: JsonDone = False) -> None:
    """Release the stack's lock at once (the operation holding it is marked cancelled)."""
    ws = _stored(stack)
    released = ws.cancel()
    if as_json:
        _report_done(True, "stack", "cancel", ws.project.name, ws.stack, released=released)
        return
    typer.echo(
        f"stack {ws.stack}: lock released" if released else f"stack {ws.stack} is not locked"
    )


def import_(
    type_token: Annotated[
        str | None, typer.Argument(metavar="TYPE", help="e.g. kubernetes:apps/v1:Deployment")
    ] = None,
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="The logical name in the program.")
    ] = None,
    object_id: Annotated[
        str | None,
        typer.Argument(metavar="ID", help="NAMESPACE/NAME, or NAME if cluster-scoped."),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file",
            "-f",
            help="Adopt every object this file names: Pulumi's import file (JSON), or "
            "Kubernetes manifests (YAML, several documents or a `kind: List`).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="With --file: write the program here, not to stdout."),
    ] = None,
    parent: Annotated[
        str | None,
        typer.Option(
            "--parent",
            metavar="URN",
            help="Adopt it as a child of this resource: the ConfigFile, ConfigGroup or Chart "
            "whose manifests declare it (NAME as `up` names it, e.g. ConfigMap:shop/settings).",
        ),
    ] = None,
    protect: Annotated[
        bool,
        typer.Option(
            "--protect/--no-protect",
            help="Protect it from deletion until the program says otherwise (as `pulumi import`).",
        ),
    ] = True,
    stack: Stack = None,
    yes: Yes = False,
    as_json: Json = False,
) -> None:
    """Adopt existing objects (TYPE NAME ID, or --file) and print the code declaring them."""
    entries = _import_entries(type_token, name, object_id, file, out, parent)
    ws = _workspace(stack)
    if not yes:
        _can_ask("import", as_json)
        planned = ws.import_objects(entries, protect=protect, preview=True)
        lines = "".join(
            f"\n    = import {done.entry.object_id} as {done.urn}{' (protected)' if protect else ''}"
            for done in planned
        )
        if not _confirm(
            "import", yes, as_json, warning=f"Previewing import into stack {ws.stack}:{lines}"
        ):
            _declined()
    imported = ws.import_objects(entries, protect=protect)
    if file is None:  # TYPE NAME ID: the statement to add to the program
        (done,) = imported
        # Under --parent, its parent's manifests declare it already: nothing to add.
        code = "" if parent else automation.object_code(ws.project.runtime, done, protect=protect)
        if as_json:
            typer.echo(json_line({"event": "imported", "urn": done.urn, "code": code}))
        elif parent:
            typer.echo(
                f"Imported {done.entry.object_id} as {done.urn}.\nThe manifests of {parent} "
                "declare it: `stackwright up` manages it from now on."
            )
        else:
            where = "under `resources:` in" if ws.project.runtime == "yaml" else "to"
            typer.echo(
                f"Imported {done.entry.object_id} as {done.urn}.\nAdd this {where} your program:\n\n{code}"
            )
        return
    program = automation.program_code(ws.project.runtime, imported, protect=protect)
    if out is not None:
        _write(out, program, "import: the objects are adopted, but --out")
    if as_json:
        for done in imported:
            event = {"event": "imported", "urn": done.urn, "id": done.entry.object_id}
            typer.echo(json_line({**event, "source": done.entry.where}))
        typer.echo(json_line({"event": "program", "code": program, "file": out and str(out)}))
        return
    # The program alone on stdout (`… --yes > __main__.py`); what was done on stderr.
    said = f"Imported {events.plural(len(imported), 'object')} into stack {ws.stack}"
    declares = f"the program that declares {'it' if len(imported) == 1 else 'them'}"
    if out is not None:
        typer.echo(f"{said}; {declares} is in {out}.")
        return
    typer.echo(f"{said}; {declares} follows.", err=True)
    typer.echo(program, nl=False)


def _import_entries(
    type_token: str | None,
    name: str | None,
    object_id: str | None,
    file: Path | None,
    out: Path | None,
    parent: str | None,
) -> list[ImportEntry]:
    """What `import` adopts: TYPE NAME ID (under `parent`), or the objects --file names (one
    line, exit 2, for anything else, before a cluster is read)."""
    given = [arg for arg in (type_token, name, object_id) if arg is not None]
    if file is not None and given:
        raise UsageError(
            "import: give TYPE NAME ID or --file FILE, not both (a file names its objects)"
        )
    if file is not None and parent is not None:
        raise UsageError("import: --parent goes with TYPE NAME ID, not --file")
    if file is None:
        if out is not None:
            raise UsageError(
                "import: --out writes the program of an --file import; give --file FILE"
            )
        if type_token is None or name is None or object_id is None:
            raise UsageError(
                "import: give TYPE NAME ID (e.g. kubernetes:apps/v1:Deployment web shop/web), "
                "or --file FILE"
            )
        return [automation.ImportEntry(type_token, name, object_id, parent=parent or "")]
    if out is not None:
        _writable(out, "import --out")  # before anything is adopted: the program would be lost
    from stackwright.automation.import_file import read_import_file  # only for --file

    return read_import_file(file)


def _writable(path: Path, given: str) -> None:
    """Refuse a file the command could not write, before it reads or changes anything."""
    if path.is_dir():
        raise UsageError(f"{given} {path}: that is a folder; name a file, e.g. {path / 'out'}")
    if path.parent.exists() and not path.parent.is_dir():
        raise UsageError(f"{given} {path}: {path.parent} is a file, not a folder to write it in")
    if not path.parent.is_dir():
        raise UsageError(f"{given} {path}: no folder {path.parent} to write it in; make it first")


def _write(path: Path, text: str, given: str, *, private: bool = False) -> None:
    """Write what a command produced to the file its user named; a refusal is one line.
    `private` (secrets in plain text): readable by its owner only, as the state store is."""
    try:
        if private:
            write_private(path, text.encode())
        else:
            path.write_text(text, encoding="utf-8")
    except OSError as exc:  # a full disk, or its folder changed since it was checked
        raise StackwrightError(f"{given} {path}: cannot write it ({exc.strerror or exc})") from exc


# --- stacks ------------------------------------------------------------------------------------


@stack_app.command("init")
def stack_init(
    name: Annotated[str, typer.Argument()],
    copy_config_from: Annotated[
        str | None,
        typer.Option("--copy-config-from", help="Start with this stack's configuration."),
    ] = None,
    secrets_provider: Annotated[
        str | None,
        typer.Option(
            "--secrets-provider",
            help="passphrase, env, file:PATH or local (default: passphrase if "
            "STACKWRIGHT_CONFIG_PASSPHRASE is set, env if STACKWRIGHT_SECRETS_KEY is, else local).",
        ),
    ] = None,
    as_json: JsonDone = False,
) -> None:
    """Create a stack and select it."""
    project = _for_the_command(
        StoredStack.create(
            Path.cwd(), name, secrets_provider=secrets_provider, copy_config_from=copy_config_from
        )
    ).project
    _report_done(
        as_json, "stack", "init", project.name, name, f"Created stack {name} and selected it."
    )


@stack_app.command("select")
def stack_select(
    name: Annotated[str, typer.Argument()],
    create: Annotated[
        bool, typer.Option("--create", "-c", help="Create it if it does not exist.")
    ] = False,
    as_json: JsonDone = False,
) -> None:
    """Select the stack later commands use."""
    project = find_project(Path.cwd())
    backend = _backend(project)
    check_name("stack", name)  # else "does not exist: create it with `stack init`", refused
    created = create and not backend.has_stack(project.name, name)
    if created:
        StoredStack.create(Path.cwd(), name).close()
    else:
        require_stack(backend, project.name, name)
        select_stack(project, name)
    text = f"Created stack {name} and selected it." if created else f"Selected stack {name}."
    _report_done(as_json, "stack", "select", project.name, name, text, created=created)


@stack_app.command("ls")
def stack_ls(as_json: JsonReport = False) -> None:
    """List the project's stacks (`--json`: Pulumi's keys, and the stack's tags)."""
    project = find_project(Path.cwd())
    try:
        current = selected_stack(project)
    except UsageError:
        current = ""
    rows = _backend(project).list_stacks(project.name)
    tags = {r.name: StackConfig(project, r.name).tags for r in rows}
    if as_json:
        typer.echo(
            json_document(
                [
                    {
                        "name": r.name,
                        "current": r.name == current,
                        "lastUpdate": r.last_update.isoformat() if r.last_update else None,
                        "updateInProgress": r.locked,
                        "resourceCount": r.resource_count,
                        "tags": tags[r.name],
                    }
                    for r in rows
                ]
            )
        )
        return
    typer.echo(f"{'NAME':<24}{'RESOURCES':>10}  {'LAST UPDATE':<19}  TAGS")
    for r in rows:
        mark = "*" if r.name == current else ""
        locked = "  (locked)" if r.locked else ""
        shown_tags = ",".join(f"{k}={v}" for k, v in sorted(tags[r.name].items()))
        typer.echo(
            f"{r.name + mark:<24}{r.resource_count:>10}  "
            f"{_local(r.last_update) if r.last_update else 'n/a':<19}  "
            f"{shown_tags}{locked}".rstrip()
        )


@stack_app.command("rm")
def stack_rm(
    name: Annotated[
        str | None, typer.Argument(help="The stack (default: the selected one, as Pulumi's).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Remove even if it still has resources.")
    ] = False,
    preserve_config: Annotated[
        bool,
        typer.Option(
            "--preserve-config",
            help="Keep its stack file (Stackwright.<stack>.yaml) and secrets key, as Pulumi's.",
        ),
    ] = False,
    stack: Stack = None,
    yes: Yes = False,
    as_json: JsonDone = False,
) -> None:
    """Remove a stack (and its state) from the backend."""
    project = find_project(Path.cwd())
    if name:
        _refuse_another_stack(f"stack rm {name}", name, stack)
    name = name or selected_stack(project, stack)
    if not yes and not _confirm(f"removal of stack {name}", yes, as_json, "stack rm"):
        _declined()
    _remove_stack(project, name, force=force, as_json=as_json, preserve_config=preserve_config)


def _remove_stack(
    project: Project, name: str, *, force: bool, as_json: bool, preserve_config: bool = False
) -> None:
    """Remove stack `name` from the backend, its configuration file (unless
    `preserve_config`), and its selection, and say so (`stack rm`, `destroy --remove`)."""
    _backend(project).remove_stack(project.name, name, force=force)
    if preserve_config:
        kept = f"; {project.stack_file(name).name} is kept"
    else:
        StackConfig(project, name).forget()
        kept = ""
    unselect_stack(project, name)
    _report_done(as_json, "stack", "rm", project.name, name, f"Removed stack {name}{kept}.")


@stack_app.command("rename")
def stack_rename(
    names: Annotated[
        list[str],
        typer.Argument(
            metavar="[OLD] NEW",
            help="The new name; the stack's own first (default: --stack, else the selected one, "
            "as Pulumi's `stack rename NEW`).",
        ),
    ],
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Rename a stack: its state (the stack part of every URN) and its stack file."""
    project = find_project(Path.cwd())
    old, new = _rename_names(project, names, stack)
    if old == new:
        raise UsageError(f"stack {old} is named {new} already: nothing to rename")
    config = StackConfig(project, old)
    backend = _backend(project)
    if not _renamed_before(backend, project, old, new):
        # An existing stack is refused by the backend, in its words; a stack file alone here.
        if project.stack_file(new).exists() and not backend.has_stack(project.name, new):
            raise UsageError(
                f"cannot rename stack {old} to {new}: {project.stack_file(new)} exists; move it away first"
            )
        backend.rename_stack(project.name, old, check_name("stack", new))
    config.move_to(new)
    with contextlib.suppress(UsageError):
        if selected_stack(project) == old:
            select_stack(project, new)
    text = f"Renamed stack {old} to {new}."
    _report_done(as_json, "stack", "rename", project.name, new, text, formerName=old)


def _rename_names(project: Project, names: list[str], stack: str | None) -> tuple[str, str]:
    """`stack rename OLD NEW`, or Pulumi's `stack rename NEW` of --stack or the selected one."""
    if len(names) == 1:
        return selected_stack(project, stack), names[0]
    if len(names) > 2:
        given = " ".join([*names, *(["--stack", stack] if stack else [])])
        raise UsageError(
            f"stack rename {given}: name the new name, and the stack at most once: "
            "`stackwright stack rename OLD NEW`, or `stackwright stack rename NEW` for the "
            "selected stack (or --stack OLD)"
        )
    _refuse_another_stack(f"stack rename {names[0]} {names[1]}", names[0], stack)
    return names[0], names[1]


def _refuse_another_stack(command: str, named: str, stack: str | None) -> None:
    """Refuse a --stack (or `stackwright -s`) that names another stack than the command's
    own argument; the same one is accepted (`stackwright -s dev stack rename dev prod`)."""
    if stack and stack != named:
        raise UsageError(
            f"{command} --stack {stack}: --stack names another stack than {named}; "
            "name the stack once"
        )


def _renamed_before(backend: Backend, project: Project, old: str, new: str) -> bool:
    """Whether a `stack rename old new` stopped after renaming the state and before moving
    the stack file (killed, or the move failed): the state has only `new`, which was `old`,
    and the file is still `old`'s. Running the command again then only moves the file."""
    return (
        not backend.has_stack(project.name, old)
        and backend.has_stack(project.name, new)
        and project.stack_file(old).exists()
        and not project.stack_file(new).exists()
        and old in backend.load(project.name, new).former_names
    )


@stack_app.command("change-secrets-provider")
def stack_change_secrets_provider(
    provider: Annotated[
        str, typer.Argument(help="passphrase, env, file:PATH or local.")
    ] = "passphrase",
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Wrap the stack's data key under another provider or a new passphrase.

    The current provider is unlocked as usual (STACKWRIGHT_CONFIG_PASSPHRASE,
    STACKWRIGHT_SECRETS_KEY); a new passphrase comes from
    STACKWRIGHT_NEW_CONFIG_PASSPHRASE (else it is asked for), a new env key from
    STACKWRIGHT_NEW_SECRETS_KEY (else STACKWRIGHT_SECRETS_KEY).
    """
    ws = _stored(stack)
    passphrase = None
    if provider == "passphrase" and not os.environ.get(NEW_PASSPHRASE_ENV):
        # --json: stdout holds the event line only
        why = "without a terminal" if as_json else why_no_one_answers()
        if why:
            raise UsageError(
                f"set {NEW_PASSPHRASE_ENV} to the new passphrase (it cannot be asked for {why})"
            )
        passphrase = typer.prompt("New passphrase", hide_input=True, confirmation_prompt=True)
    name = ws.config.change_secrets_provider(provider, passphrase=passphrase)
    ws.unlock()
    text = f"Stack {ws.stack}'s data key is now wrapped by the {name} secrets provider."
    _report_done(
        as_json, "secrets-provider", "change", ws.project.name, ws.stack, text, provider=name
    )


tag_app = typer.Typer(help="A stack's tags (e.g. `env production`).", no_args_is_help=True)
stack_app.add_typer(tag_app, name="tag")


@tag_app.command("set")
def tag_set(
    name: Annotated[str, typer.Argument()],
    value: Annotated[str, typer.Argument()],
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Set a tag of the stack."""
    ws = _stored(stack)
    ws.config.set_tag(name, value)
    _report_done(as_json, "tag", "set", ws.project.name, ws.stack, name=name, value=value)


@tag_app.command("get")
def tag_get(name: Annotated[str, typer.Argument()], stack: Stack = None) -> None:
    """Print a tag of the stack."""
    ws = _stored(stack)
    if name not in ws.config.tags:
        raise UsageError(
            f"stack {ws.stack} has no tag {name!r}: set it with `stackwright stack tag set {name} VALUE`"
        )
    typer.echo(ws.config.tags[name])


@tag_app.command("rm")
def tag_rm(
    name: Annotated[str, typer.Argument()], stack: Stack = None, as_json: JsonDone = False
) -> None:
    """Remove a tag of the stack."""
    ws = _stored(stack)
    if not ws.config.remove_tag(name):
        raise UsageError(f"stack {ws.stack} has no tag {name!r}")
    _report_done(as_json, "tag", "rm", ws.project.name, ws.stack, name=name)


@tag_app.command("ls")
def tag_ls(stack: Stack = None, as_json: JsonReport = False) -> None:
    """List the stack's tags."""
    tags = _stored(stack).config.tags
    if as_json:
        typer.echo(json_document(tags, sort_keys=True))
        return
    for key in sorted(tags):
        typer.echo(f"{key}: {tags[key]}")


@stack_app.command("output")
def stack_output(
    name: Annotated[str | None, typer.Argument(help="One output (default: all).")] = None,
    stack: Stack = None,
    show_secrets: Annotated[
        bool, typer.Option("--show-secrets", help="Show secret values in plain text.")
    ] = False,
    shell: Annotated[
        bool,
        typer.Option(
            "--shell", help="Print them as shell assignments (NAME=value) for `eval` or `source`."
        ),
    ] = False,
    as_json: JsonReport = False,
) -> None:
    """Print the stack's outputs (secret values masked unless --show-secrets)."""
    if shell and as_json:
        raise UsageError("--shell and --json each choose how outputs print: pass one of them")
    ws = _stored(stack)
    outputs = ws.outputs(show_secrets=show_secrets)
    if shell:
        _print_shell(outputs if name is None else {name: _one_output(ws.stack, outputs, name)})
        return
    if name is not None:
        typer.echo(_value_text(_one_output(ws.stack, outputs, name), as_json))
        return
    if as_json:
        typer.echo(json_document(outputs, sort_keys=True))
        return
    for key in sorted(outputs):
        # As `up` ends: a secret is the bare marker, not a string that reads "[secret]".
        typer.echo(f"{key}: {compact(outputs[key], None)}")


def _one_output(stack: str, outputs: dict[str, Any], name: str) -> Any:
    """The output `name`, or a UsageError saying which there are."""
    if not outputs:  # a stack not updated yet, or destroyed: no typo to look for
        raise UsageError(
            f"stack {stack} has no outputs, so not {name!r}: `stackwright up` records "
            "those its program exports"
        )
    if name not in outputs:
        raise UsageError(
            f"stack {stack} has no output {name!r}; outputs: {', '.join(sorted(outputs))}"
        )
    return outputs[name]


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _print_shell(outputs: dict[str, Any]) -> None:
    """`NAME=value` lines a POSIX shell reads (`eval "$(stackwright stack output --shell)"`),
    as Pulumi's `--shell`: text as it is, anything else as JSON, each quoted; an output whose
    name no shell variable may have is said on stderr and left out."""
    for key in sorted(outputs):
        if not _SHELL_NAME.fullmatch(key):
            typer.echo(f"warning: output {key!r} is no shell variable name: left out", err=True)
            continue
        typer.echo(f"{key}={shlex.quote(_value_text(outputs[key], False))}")


def _value_text(value: Any, as_json: bool) -> str:
    """One value as `stack output NAME` and `config get` print it: text as it is, anything
    else as JSON; with --json, a JSON document."""
    if as_json:
        return json_document(value)
    return value if isinstance(value, str) else json.dumps(value)


@stack_app.command("history")
def stack_history(stack: Stack = None, as_json: JsonReport = False) -> None:
    """The stack's operations, newest first."""
    ws = _stored(stack)
    entries = ws.backend.history(ws.project.name, ws.stack)
    if as_json:
        typer.echo(json_document([_history_json(e) for e in entries]))
        return
    if not entries:  # not a blank answer (Pulumi's: "Stack … has never been updated")
        typer.echo(f"stack {ws.stack} has no history yet: no operation has run on it")
        return
    width = max((len(e.kind) for e in entries), default=0)  # `stack import` is 12 wide
    for e in entries:
        typer.echo(f"#{e.id:<4} {_history_line(e, width)}")
    # One line under the list, not a column on every line: only a store that kept history
    # before it saved each version's state has any such entries.
    unsaved = [e.id for e in entries if not e.exportable and not e.running]
    if unsaved:
        typer.echo(
            f"(no saved state for {'version' if len(unsaved) == 1 else 'versions'} "
            f"{version_spans(unsaved)}: `stack export --version` cannot print "
            f"{'it' if len(unsaved) == 1 else 'them'})"
        )


def _history_json(e: HistoryEntry) -> dict[str, Any]:
    return {
        "id": e.id,
        "kind": e.kind,
        "start": e.start.isoformat(),
        "end": e.end.isoformat() if e.end else None,
        "result": e.result,
        "counts": e.counts,
        "message": e.message,
        # Who ran it, where (a CI runner's user and host), as a lock's holder is named.
        "user": e.owner,
        "host": e.host,
        # Whether `stack export --version` can print the state it left.
        "exportable": e.exportable,
    }


def _local(when: datetime) -> str:
    """A recorded time (UTC) as the user's clock reads it, as `ls -l` and Pulumi show times."""
    return f"{when.astimezone():%Y-%m-%d %H:%M:%S}"


def _took_and_counts(e: HistoryEntry) -> tuple[str, str]:
    """How long an operation took ("" while it runs) and what it did (`3 create, 1 same`)."""
    took = f"{(e.end - e.start).total_seconds():.1f}s" if e.end else ""
    return took, ", ".join(f"{v} {k}" for k, v in sorted(e.counts.items()))


def _history_line(e: HistoryEntry, kind_width: int) -> str:
    """One operation as `stack history` lists it, its kind padded to `kind_width` (the
    widest listed) so that every column lines up."""
    took, counts = _took_and_counts(e)
    tail = "  ".join(part for part in (counts, e.message) if part)
    return (
        f"{e.kind:<{kind_width}} {e.result:<12} {_local(e.start)} {took or '-':>7}  {tail}".rstrip()
    )


@stack_app.callback(invoke_without_command=True)
def stack_show(
    ctx: typer.Context,
    stack: Stack = None,
    show_urns: Annotated[
        bool, typer.Option("--show-urns", "-u", help="Show each resource's URN.")
    ] = False,
    show_secrets: ShowSecrets = False,
    as_json: JsonReport = False,
) -> None:
    """With no subcommand: the stack's last operation, resources and outputs (from its
    state; the cluster is not read)."""
    if ctx.invoked_subcommand is not None:
        return
    ws = _stored(stack)
    snapshot = ws.state(show_secrets=show_secrets)  # without it, no passphrase needed
    history = ws.history()
    last = history[0] if history else None
    outputs = revealed(snapshot.outputs, show=show_secrets)
    if as_json:
        typer.echo(
            json_document(
                {
                    "project": ws.project.name,
                    "stack": ws.stack,
                    "lastOperation": _history_json(last) if last else None,
                    "pendingOperations": len(snapshot.pending),
                    "resources": [_resource_json(r, show_secrets) for r in snapshot.resources],
                    "outputs": outputs,
                },
            )
        )
        return
    typer.echo(f"Current stack is {ws.stack} (project {ws.project.name}):")
    if last is None:
        typer.echo("    Last operation: none yet (run `stackwright up`)")
    else:
        took, counts = _took_and_counts(last)
        typer.echo(
            f"    Last operation: {last.kind} {last.result}, {_local(last.start)}"
            f"{f', took {took}' if took else ''}{f' ({counts})' if counts else ''}"
        )
    if snapshot.pending:
        holder = ws.backend.running(ws.project.name, ws.stack)
        why = (
            "a run stopped mid-step; the next `stackwright up` or `refresh` settles them by "
            "reading the cluster"
            if holder is None  # it said so of the steps of a run still under way, too
            else f"under way in {holder.describe(datetime.now(UTC))}"
        )
        typer.echo(f"    Pending operations: {len(snapshot.pending)} ({why})")
    typer.echo("")
    typer.echo(f"Resources ({len(snapshot.resources)}):")
    if snapshot.resources:
        rows = [("TYPE", "NAME", "ID", "")] + [
            (r.type, urn_name(r.urn), r.id, _resource_notes(r)) for r in snapshot.resources
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for index, row in enumerate(rows):
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            typer.echo(f"    {'  '.join([*cells, row[3]]).rstrip()}")
            if not index:
                continue
            resource = snapshot.resources[index - 1]
            if show_urns:
                typer.echo(f"        {resource.urn}")
            registered = _component_outputs(resource, show_secrets)
            if registered:
                typer.echo(f"        outputs: {json.dumps(registered)}")
    else:
        typer.echo("    none in this stack")
    typer.echo("")
    typer.echo(f"Outputs ({len(outputs)}):")
    if not outputs:
        typer.echo("    none in this stack")
    for key in sorted(outputs):
        typer.echo(f"    {key}: {compact(outputs[key], None)}")


def _resource_notes(state: ResourceState) -> str:
    notes = []
    if state.external:
        notes.append("read, not managed")
    if state.protect:
        notes.append("protected")
    if state.retain_on_delete:
        notes.append("retained on delete")
    if state.deleted_with:
        notes.append(f"deleted with {urn_name(state.deleted_with)}")
    if state.delete_pending:
        notes.append("replaced, to delete")
    if state.init_errors:
        notes.append(f"not ready: {state.init_errors[0]}")
    return f"({'; '.join(notes)})" if notes else ""


def _component_outputs(state: ResourceState, show_secrets: bool) -> dict[str, Any]:
    """What a component registered with `register_outputs` (a custom resource's outputs
    are its whole live object: not shown here), secret parts as [secret] unless shown."""
    if state.custom or not state.outputs:
        return {}
    return dict(state.outputs) if show_secrets else masked(state.outputs, state.secret_paths)


def _resource_json(state: ResourceState, show_secrets: bool = False) -> dict[str, Any]:
    registered = _component_outputs(state, show_secrets)
    return {
        "urn": state.urn,
        "type": state.type,
        "name": urn_name(state.urn),
        "id": state.id,
        "parent": state.parent or None,
        "protect": state.protect,
        "retainOnDelete": state.retain_on_delete,
        "deletedWith": state.deleted_with or None,
        "deletePending": state.delete_pending,
        "initErrors": list(state.init_errors),
        "external": state.external,
        **({"outputs": registered} if registered else {}),
    }


@stack_app.command("graph")
def stack_graph(
    file: Annotated[
        Path | None,
        typer.Argument(help="Write the DOT graph here (default: standard output).", dir_okay=False),
    ] = None,
    stack: Stack = None,
    ignore_parent_edges: Annotated[
        bool, typer.Option("--ignore-parent-edges", help="Leave out parent-child edges.")
    ] = False,
    ignore_dependency_edges: Annotated[
        bool,
        typer.Option(
            "--ignore-dependency-edges",
            help="Leave out dependency edges (declared, provider and Kubernetes' rules).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", "-j", help="Nodes and edges as JSON.")] = False,
) -> None:
    """The stack's resources and the order `up` and `destroy` follow, as Graphviz DOT.

    An arrow points from a resource to one it needs first (`dot -Tsvg` draws it)."""
    from stackwright.engine.records import recorded_edges

    if file is not None:
        _writable(file, "stack graph")
    ws = _stored(stack)
    resources = ws.state().resources  # its secrets masked: no passphrase needed, as `stack`
    edges = [
        e
        for e in recorded_edges(resources)
        if not (ignore_parent_edges and e.why == "parent")
        and not (ignore_dependency_edges and e.why != "parent")
    ]
    nodes = list({r.urn: r for r in resources}.values())
    if as_json:
        text = json_document(
            {
                "nodes": [
                    {"urn": r.urn, "type": r.type, "name": urn_name(r.urn), "id": r.id}
                    for r in nodes
                ],
                "edges": [{"from": e.dependent, "to": e.dependency, "why": e.why} for e in edges],
            },
        )
        text += "\n"  # a line, as every other --json output and the DOT text end with one
    else:
        text = _dot(f"{ws.project.name}/{ws.stack}", nodes, edges)
    if not nodes:
        # It reads the state, as Pulumi's does: before the first up, an empty graph.
        typer.echo(
            f"stack {ws.stack} records no resources yet: the graph is drawn from the state, "
            "so run `stackwright up` first",
            err=True,
        )
    if file is None:
        typer.echo(text, nl=False)
    else:
        _write(file, text, "stack graph")
        counted = f"{events.plural(len(nodes), 'resource')}, {events.plural(len(edges), 'edge')}"
        typer.echo(f"wrote {file}: {counted}", err=True)


#: Edge styles by kind: parents as Pulumi draws them, Kubernetes' rules dashed and named.
_DOT_EDGE = {"parent": 'color="#AA6639", style=dotted', "provider": 'color="#5F5F5F"'}


def _dot(title: str, nodes: list[ResourceState], edges: list[Edge]) -> str:
    def quoted(text: str) -> str:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'

    lines = [
        f"strict digraph {quoted(title)} {{",
        "    // An arrow points from a resource to one it needs first (applied before it,",
        "    // deleted after it); a dashed arrow is one of Kubernetes' rules, named.",
        "    node [shape=box, fontname=Helvetica];",
    ]
    for state in nodes:
        label = f"{urn_name(state.urn)}\n{state.type}"
        lines.append(f"    {quoted(state.urn)} [label={quoted(label)}];")
    for edge in edges:
        style = _DOT_EDGE.get(edge.why)
        if style is None and edge.why != "declared":
            style = f'color="#246C60", style=dashed, label={quoted(edge.why)}'
        attributes = f" [{style}]" if style else ""
        lines.append(f"    {quoted(edge.dependent)} -> {quoted(edge.dependency)}{attributes};")
    lines.append("}")
    return "\n".join(lines) + "\n"


@stack_app.command("export")
def stack_export(
    stack: Stack = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="Write here instead of stdout.")
    ] = None,
    show_secrets: Annotated[
        bool,
        typer.Option(
            "--show-secrets",
            help='Write secrets decrypted, as {"@plaintext": value} (`stack import` encrypts them).',
        ),
    ] = False,
    version: Annotated[
        int | None,
        typer.Option(
            "--version",
            help="The state as that operation of `stack history` left it (#N), not as it is now.",
        ),
    ] = None,
) -> None:
    """The stack's state as a versioned JSON document (secrets encrypted unless --show-secrets)."""
    if file is not None:
        _writable(file, "stack export --file")
    ws = _stored(stack)
    document = ws.export_state(show_secrets=show_secrets, version=version)
    text = json_document(document, sort_keys=True)
    if file is None:
        typer.echo(text)
    else:
        _write(file, text + "\n", "stack export --file", private=show_secrets)


@stack_app.command("import")
def stack_import(
    file: Annotated[
        Path | None,
        typer.Option("--file", help="A document from `stack export` (default: stdin)."),
    ] = None,
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Replace the stack's state with an exported document (stdin without --file).

    `stack export | … | stack import` works as Pulumi's; plain secrets in it are encrypted
    under the stack's key."""
    ws = _stored(stack, existing=False)
    source = str(file) if file is not None else "stdin"
    if file is None and sys.stdin.isatty():
        raise UsageError(
            "stackwright stack import reads the document from stdin: pipe it in "
            "(`stackwright stack export | stackwright stack import`) or pass --file FILE"
        )
    try:
        document = json.loads(
            file.read_text(encoding="utf-8") if file is not None else sys.stdin.read()
        )
    except (OSError, ValueError) as exc:
        raise UsageError(f"{source}: cannot read a JSON document ({exc})") from None
    except RecursionError:
        raise UsageError(
            f"{source}: cannot read a JSON document (it is nested too deeply to be a state)"
        ) from None
    ws.import_state(document, message=f"stack import from {source}")
    text = f"Imported the state of stack {ws.stack} from {source}."
    _report_done(as_json, "state", "import", ws.project.name, ws.stack, text, source=source)


# --- config ---------------------------------------------------------------------------------------


PathFlag = Annotated[
    bool,
    typer.Option(
        "--path", help="KEY is a path into a structured value: app:db.port, app:hosts[0]."
    ),
]


@config_app.command("set")
def config_set(
    key: Annotated[str, typer.Argument()],
    value: Annotated[
        str | None,
        typer.Argument(help="Left out: asked for in a terminal, else read from stdin."),
    ] = None,
    secret: Annotated[
        bool, typer.Option("--secret", help="Encrypt it under the stack's data key.")
    ] = False,
    plaintext: Annotated[
        bool,
        typer.Option("--plaintext", help="Store it in plain text, even where a secret was."),
    ] = False,
    path: PathFlag = False,
    type_: Annotated[
        str,
        typer.Option("--type", help="string, int, float, bool or json (objects and lists)."),
    ] = "string",
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Set a configuration value; KEY is NAME (this project's) or NAMESPACE:NAME."""
    if secret and plaintext:
        raise UsageError("config set takes --secret or --plaintext, not both")
    ws = _stored(stack)
    if not secret and not plaintext:
        ws.config.check_plain(key, path=path)  # before a prompt that would echo it
    if value is None:
        flags = [flag for flag, given in (("--secret", secret), ("--path", path)) if given]
        if type_ != "string":
            flags.append(f"--type {type_}")
        value = _value_from_stdin(" ".join([*flags, key]), secret)
    stored = typed(value, type_, key)
    ws.config.set(key, stored, secret=secret, path=path, plaintext=plaintext)
    shown = {} if secret else {"value": stored}  # a secret's value is never printed
    _report_done(
        as_json,
        "config",
        "set",
        ws.project.name,
        ws.stack,
        key=_shown_key(ws, key, path),
        secret=secret,
        **shown,
    )


def _shown_key(ws: StoredStack, key: str, path: bool) -> str:
    """KEY as `config ls` names it (`shop:replicas`), or with --path as given."""
    return key if path else ws.config.full_key(key)


def _value_from_stdin(arguments: str, secret: bool) -> str:
    """A value not on the command line (so not in the shell's history), as Pulumi takes it:
    asked for in a terminal (not echoed when secret), else all of stdin less the one
    newline that ends it (`cat key.pem | stackwright config set --secret tls:key`).
    ARGUMENTS are the command's flags and KEY (`--secret tls:key`), so the commands a
    refusal names set the value as asked: without `--secret` they would store a secret in
    plain text.

    An empty stdin is refused: in CI it is what `config set --secret pw $UNSET_VARIABLE`
    (the value word gone) or a job without stdin gives, and storing "" would let the
    program's `require_secret` pass with it. So is a newline alone: what `echo "$TOKEN" |`
    pipes when the variable is unset or empty (as a CI system gives a secret it does not
    have). An empty value is given as `''`."""
    if sys.stdin.isatty():
        why = why_no_one_answers()
        if why:  # a CI job's terminal: no one answers, and it never ends
            raise UsageError(
                f"config set {arguments}: no VALUE was given, and it cannot be asked for {why}: "
                f"pass the value (`stackwright config set {arguments} VALUE`), or pipe it in "
                f"(`… | stackwright config set {arguments}`)"
            )
        return str(typer.prompt("value", hide_input=secret))
    text = sys.stdin.read()
    value = text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    if not value:
        what = (
            "empty" if not text else 'empty but for a newline (`echo "$VAR"` of an empty variable)'
        )
        raise UsageError(
            f"config set {arguments}: no VALUE was given and stdin is {what}: pass the value "
            f"(`stackwright config set {arguments} VALUE`), or pipe it in "
            f"(`… | stackwright config set {arguments}`); an empty value is given as ''"
        )
    return value


@config_app.command("get")
def config_get(
    key: Annotated[str, typer.Argument()],
    path: PathFlag = False,
    stack: Stack = None,
    as_json: JsonReport = False,
) -> None:
    """Print a configuration value (a secret too: you asked for it by name)."""
    ws = _stored(stack)
    value = ws.config.get(key, path=path)
    typer.echo(_value_text(value, as_json))


@config_app.command("rm")
def config_rm(
    key: Annotated[str, typer.Argument()],
    path: PathFlag = False,
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Remove a configuration value; one not set is no error, as in Pulumi (a note says so)."""
    ws = _stored(stack)
    shown = _shown_key(ws, key, path)
    removed = _remove_config(ws, key, path)
    _report_done(as_json, "config", "rm", ws.project.name, ws.stack, key=shown, removed=removed)


def _remove_config(ws: StoredStack, key: str, path: bool) -> bool:
    """Remove one key; one not set is no error, as in Pulumi, but a note on stderr says so,
    so that a misspelt key is noticed. Whether it was set."""
    removed = ws.config.remove(key, path=path)
    if not removed:
        shown = _shown_key(ws, key, path)
        typer.echo(f"note: configuration {shown} is not set for stack {ws.stack}", err=True)
    return removed


def _key_value(pair: str, flag: str) -> tuple[str, str]:
    """KEY=VALUE of `config set-all`; the error names the key, never the value."""
    key, sep, value = pair.partition("=")
    if not sep or not key:
        shown = key if sep else "an argument without '='"
        raise UsageError(
            f"config set-all {flag}: {shown or 'an empty key'}: give KEY=VALUE "
            f"(`{flag} replicas=3`)"
        )
    return key, value


@config_app.command("set-all")
def config_set_all(
    plaintext: Annotated[
        list[str] | None,
        typer.Option("--plaintext", help="KEY=VALUE stored in plain text (repeatable)."),
    ] = None,
    secret: Annotated[
        list[str] | None, typer.Option("--secret", help="KEY=VALUE encrypted (repeatable).")
    ] = None,
    path: PathFlag = False,
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Set several values at once, all or none, as `pulumi config set-all` does."""
    pairs = [(*_key_value(p, "--plaintext"), False) for p in plaintext or []]
    pairs += [(*_key_value(p, "--secret"), True) for p in secret or []]
    if not pairs:
        raise UsageError("config set-all needs --plaintext KEY=VALUE or --secret KEY=VALUE")
    ws = _stored(stack)
    with ws.config.together():
        for key, value, is_secret in pairs:
            ws.config.set(key, value, secret=is_secret, path=path, plaintext=not is_secret)
    keys = [_shown_key(ws, key, path) for key, _, _ in pairs]
    _report_done(as_json, "config", "set-all", ws.project.name, ws.stack, keys=keys)


@config_app.command("rm-all")
def config_rm_all(
    keys: Annotated[list[str], typer.Argument(help="The keys to remove.")],
    path: PathFlag = False,
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Remove several values at once, as `pulumi config rm-all` does.

    One write; a key not set is noted and passed over, as by `config rm`."""
    ws = _stored(stack)
    with ws.config.together():
        removed = [_shown_key(ws, key, path) for key in keys if _remove_config(ws, key, path)]
    shown = [_shown_key(ws, key, path) for key in keys]
    _report_done(
        as_json, "config", "rm-all", ws.project.name, ws.stack, keys=shown, removed=removed
    )


@config_app.command("cp")
def config_cp(
    key: Annotated[str | None, typer.Argument(help="Only this key (default: all).")] = None,
    dest: Annotated[
        str, typer.Option("--dest", "-d", help="The stack to copy to.", show_default=False)
    ] = "",
    path: PathFlag = False,
    stack: Stack = None,
    as_json: JsonDone = False,
) -> None:
    """Copy configuration to another stack, as `pulumi config cp` does.

    Secrets are encrypted again under the other stack's key."""
    if not dest:
        raise UsageError("config cp needs --dest STACK: the stack to copy to")
    source = _stored(stack)
    if dest == source.stack:
        raise UsageError(
            f"config cp --dest {dest}: that is the stack copied from; name another stack "
            "(or --stack another source)"
        )
    target = _stored(dest)
    target.config.copy_values_from(source.config, key, path=path)
    target.config.save()
    keys = sorted(source.config.values) if key is None else [_shown_key(source, key, path)]
    project = source.project.name
    _report_done(as_json, "config", "cp", project, source.stack, dest=target.stack, keys=keys)


def _config_list(stack: str | None, as_json: bool, show_secrets: bool) -> None:
    ws = _stored(stack)
    plain = ws.config.resolved()[0] if show_secrets else ws.config.values
    masked = {k for k in ws.config.values if ws.config.is_secret(k) and not show_secrets}
    if as_json:
        typer.echo(
            json_document(
                {
                    key: _config_entry(plain[key], ws.config.is_secret(key), key in masked)
                    for key in sorted(ws.config.values)
                }
            )
        )
        return
    for key in sorted(ws.config.values):
        typer.echo(f"{key}: {'[secret]' if key in masked else _config_text(plain[key])}")


def _config_text(value: object) -> str:
    """A configuration value as `config ls` and Pulumi show it: text as it is, anything
    else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _config_entry(value: object, secret: bool, masked: bool) -> dict[str, object]:
    """One key of `config ls --json`, shaped as `pulumi config --json`'s: `value` as text
    (absent for a secret not asked for), `objectValue` for a structured value, `secret`."""
    if masked:
        return {"secret": True}
    entry: dict[str, object] = {"value": _config_text(value)}
    if isinstance(value, (dict, list)):
        entry["objectValue"] = value
    entry["secret"] = secret
    return entry


ShowSecrets = Annotated[
    bool, typer.Option("--show-secrets", help="Show secret values in plain text.")
]


@config_app.command("ls")
def config_ls(
    stack: Stack = None, show_secrets: ShowSecrets = False, as_json: JsonReport = False
) -> None:
    """List the configuration (secret values masked unless --show-secrets)."""
    _config_list(stack, as_json, show_secrets)


@config_app.callback(invoke_without_command=True)
def config_list(
    ctx: typer.Context,
    stack: Stack = None,
    show_secrets: ShowSecrets = False,
    as_json: JsonReport = False,
) -> None:
    """With no subcommand: list the configuration (secret values masked)."""
    if ctx.invoked_subcommand is not None:
        return
    _config_list(stack, as_json, show_secrets)


def typed(value: str, type_: str, key: str) -> Any:
    """A `config set` value as the type asked for; a clear error when it is not one."""
    try:
        if type_ == "string":
            return value
        if type_ == "int":
            return int(value)
        if type_ == "float" and math.isfinite(number := float(value)):
            return number  # nan and inf are no JSON, and Config.get_float refuses them
        if type_ == "bool" and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if type_ == "json":
            return json.loads(value, parse_constant=_not_json)
    except ValueError:
        pass
    if type_ not in ("string", "int", "float", "bool", "json"):
        raise UsageError(f"--type {type_!r} is not a type: use string, int, float, bool or json")
    article = "an" if type_ == "int" else "a"
    raise UsageError(
        f"configuration {key}: the value is not of type {type_}; "
        f"pass {article} {type_} or another --type"
    )


def _not_json(constant: str) -> Any:
    """Python's json reads NaN and Infinity; JSON has no such values."""
    raise ValueError(constant)


def revealed(value: Any, *, show: bool) -> Any:
    """Stack outputs as shown: secret parts as [secret], or their values with `show`."""
    return map_secrets(value, lambda secret: secret.value if show else SECRET_TEXT)


# --- state ----------------------------------------------------------------------------------------


@state_app.command("delete")
def state_delete(
    urn: Annotated[str, typer.Argument()],
    stack: Stack = None,
    force: Annotated[bool, typer.Option("--force", help="Even if protected.")] = False,
    target_dependents: Annotated[
        bool,
        typer.Option("--target-dependents", help="With what refers to it (children, dependents)."),
    ] = False,
    yes: Yes = False,
    as_json: JsonDone = False,
) -> None:
    """Forget a resource: the object stays in the cluster, without the stack's marks."""
    ws = _workspace(stack)
    what = (
        f"forget {urn} and what refers to it (the objects stay in the cluster, without the "
        "stack's marks)"
        if target_dependents
        else f"forget {urn} (the object stays in the cluster, without the stack's marks)"
    )
    _confirm_state_edit(ws, "state delete", what, yes, as_json)
    left_marked = ""  # why the cluster kept the marks, when it did

    def started(event: Event) -> None:  # a stopped local cluster it started, as `up` says
        if isinstance(event, events.Diagnostic):
            typer.echo(f"note: {event.message}", err=True)

    try:
        done = ws.forget(urn, force=force, target_dependents=target_dependents, listener=started)
    except automation.MarksRemain as remain:
        if not yes and not typer.confirm(
            f"{remain}. Forget it anyway, the object keeping the stack's marks?", default=False
        ):
            # A refusal after others' marks came off changed those (the message said so).
            _declined("forgotten" if remain.unmarked else "changed")
        left_marked = remain.reason
        done = ws.forget(
            urn,
            force=force,
            target_dependents=target_dependents,
            keep_marks=True,
            failed=remain,
        )
    for note in done.kept:
        typer.echo(f"note: {note}", err=True)
    if left_marked:
        commands = "`, `".join(done.unmark_commands)
        typer.echo(
            f"warning: {left_marked}; forgotten anyway, the object keeps the stack's marks "
            f"(kubectl and other tools still count it the stack's): `{commands}` takes them off",
            err=True,
        )
    text = "\n".join(
        f"Removed {each} from the state of stack {ws.stack}; "
        + (
            "its object stays in the cluster, without the stack's marks."
            if each in done.unmarked
            else "nothing in the cluster was changed."
        )
        for each in done.removed
    )
    left = [
        {"urn": each, "why": left_marked, "unmark": command}
        for each, command in done.left_marked.items()
    ]
    _report_done(
        as_json,
        "state",
        "delete",
        ws.project.name,
        ws.stack,
        text,
        urn=urn,
        removed=done.removed,
        unmarked=done.unmarked,
        leftMarked=left,
        notes=done.kept,
    )


@state_app.command("unprotect")
def state_unprotect(
    urns: Annotated[list[str] | None, typer.Argument(help="The resources' URNs.")] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every resource of the stack, as Pulumi's.")
    ] = False,
    stack: Stack = None,
    yes: Yes = False,
    as_json: JsonDone = False,
) -> None:
    """Clear resources' protection so they may be deleted."""
    if every == bool(urns):
        raise UsageError(
            "state unprotect: pass the URNs of the resources to unprotect or --all, not both"
            if every
            else "state unprotect: pass the URNs of the resources to unprotect (`stackwright "
            "stack --show-urns` lists them), or --all for every resource of the stack"
        )
    ws = _stored(stack)
    what = (
        "unprotect every resource of the stack" if every else f"unprotect {', '.join(urns or ())}"
    )
    _confirm_state_edit(ws, "state unprotect", what, yes, as_json)
    cleared = ws.backend.unprotect(ws.project.name, ws.stack, None if every else urns)
    project = ws.project.name
    if urns and len(urns) == 1:
        text = f"{urns[0]} is no longer protected."
        _report_done(as_json, "state", "unprotect", project, ws.stack, text, urn=urns[0])
        return
    named = cleared if every else urns or []
    text = "\n".join(f"{urn} is no longer protected." for urn in named) or (
        f"No resource of stack {ws.stack} is protected: nothing was changed."
    )
    _report_done(as_json, "state", "unprotect", project, ws.stack, text, urns=named)


@state_app.command("rename")
def state_rename(
    urn: Annotated[str, typer.Argument()],
    new_name: Annotated[str, typer.Argument(help="The resource's new logical name.")],
    stack: Stack = None,
    yes: Yes = False,
    as_json: JsonDone = False,
) -> None:
    """Give a resource another logical name in the state; the object is untouched.

    After renaming it in the program, instead of an alias; what refers to it follows."""
    ws = _stored(stack)
    what = f"rename {urn} to {new_name} (what refers to it follows; the object is untouched)"
    _confirm_state_edit(ws, "state rename", what, yes, as_json)
    renamed = ws.backend.rename_resource(ws.project.name, ws.stack, urn, new_name)
    text = f"Renamed {urn} to {renamed}."
    project = ws.project.name
    _report_done(as_json, "state", "rename", project, ws.stack, text, urn=renamed, formerUrn=urn)


@state_app.command("move")
def state_move(
    urns: Annotated[list[str], typer.Argument()],
    dest: Annotated[str, typer.Option("--dest", help="The stack to move them to.")],
    stack: Stack = None,
    yes: Yes = False,
    as_json: JsonDone = False,
) -> None:
    """Move resources to another stack of the project."""
    ws = _stored(stack)
    what = f"move {', '.join(urns)} (and their children) to stack {dest}"
    _confirm_state_edit(ws, "state move", what, yes, as_json)
    moved = ws.backend.move_resource(ws.project.name, ws.stack, dest, urns)
    # Children go with their parents: name every resource moved, as they are named there.
    text = "\n    ".join(
        [f"Moved {len(moved)} resource{'' if len(moved) == 1 else 's'} to stack {dest}:", *moved]
    )
    project = ws.project.name
    _report_done(as_json, "state", "move", project, ws.stack, text, dest=dest, urns=moved)


def register(app: typer.Typer) -> None:
    app.command("new")(new)
    app.command("preview")(preview)
    app.command("up")(up)
    app.command("destroy")(destroy)
    app.command("refresh")(refresh)
    app.command("cancel")(cancel)
    app.command("import")(import_)
    app.add_typer(stack_app, name="stack")
    app.add_typer(config_app, name="config")
    app.add_typer(state_app, name="state")


__all__ = ["PolicyPacks", "StackwrightError", "register"]
