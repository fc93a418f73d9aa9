"""`stackwright watch`: run `up` now, and again whenever a file of the project changes, as
`pulumi watch` does — the inner loop of working on a program against a dev cluster.

Files are polled (`POLL_SECONDS`), which needs nothing installed and sees every editor's
way of saving; a burst of saves runs one `up` once the files are still (`SETTLE_SECONDS`).
Hidden files and folders, `__pycache__`, `node_modules` and virtual environments are not
watched. A failed `up`, a program that does not run or a busy stack is said and waited past:
the next change runs `up` again. Ctrl-C while waiting stops it (exit 0); during an `up`, the
`up` stops as it does on its own and the command ends.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated

import typer

from stackwright.automation.workspace import find_project
from stackwright.cli import project
from stackwright.cli.project import rendering
from stackwright.errors import StackwrightError, UsageError, redact

#: How often the files are looked at, and how long they must stay unchanged before `up` runs.
POLL_SECONDS = 0.5
SETTLE_SECONDS = 0.3

#: Folders no program reads from: what tools and editors keep beside it.
_SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})

#: (modification time in ns, size) of each watched file, by path.
Files = dict[str, tuple[int, int]]


def watched_files(roots: Iterable[Path]) -> Files:
    """Every watched file under `roots` (each a folder or a file) as it is now."""
    found: Files = {}

    def note(path: str) -> None:
        try:
            stat = os.stat(path)
        except OSError:  # removed while walking
            return
        found[path] = (stat.st_mtime_ns, stat.st_size)

    for root in roots:
        if not root.is_dir():
            note(str(root))
            continue
        for folder, folders, files in os.walk(root):
            folders[:] = [
                name
                for name in folders
                if not name.startswith(".")
                and name not in _SKIPPED_FOLDERS
                and not os.path.exists(os.path.join(folder, name, "pyvenv.cfg"))
            ]
            for name in files:
                if not name.startswith(".") and not name.endswith((".pyc", "~")):
                    note(os.path.join(folder, name))
    return found


def changed_files(before: Files, after: Files) -> list[str]:
    """The paths added, removed or changed between two looks, sorted."""
    return sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )


def wait_for_change(
    roots: Sequence[Path],
    since: Files,
    *,
    sleep: Callable[[float], None] = time.sleep,
    poll: float = POLL_SECONDS,
    settle: float = SETTLE_SECONDS,
) -> tuple[list[str], Files]:
    """Wait until a file under `roots` differs from `since` and then stays still for
    `settle` seconds: the paths changed, and the files as they are then."""
    while True:
        sleep(poll)
        now = watched_files(roots)
        if now == since:
            continue
        while True:  # an editor's save, a `git checkout`: wait for the burst to end
            sleep(settle)
            later = watched_files(roots)
            if later == now:
                return changed_files(since, now), now
            now = later


def _named(paths: list[str], base: Path) -> str:
    """The first few changed paths, from the project's folder."""
    shown = [os.path.relpath(path, base) for path in paths[:3]]
    more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
    return ", ".join(shown) + more


def _up_once(stack: str | None, refresh: bool, parallel: int, diff: bool) -> None:
    """One `up --yes` as the `up` command runs it, its stack opened anew (the project file
    and the stack's configuration may have changed) and closed after. A failed `up` is said
    by its summary; bad input or a busy stack raise."""
    from stackwright.automation.stack import Workspace  # the engine: only once it runs

    workspace = Workspace.open(Path.cwd(), stack)
    with workspace:
        workspace.require_stack()
        with rendering("up", json_lines=False, show_diff=diff) as render:
            workspace.up(render, refresh=refresh, parallel=parallel)


def watch(
    stack: project.Stack = None,
    paths: Annotated[
        list[Path] | None,
        typer.Option(
            "--path",
            help="Watch this file or folder instead of the project's folder (repeatable).",
            metavar="PATH",
        ),
    ] = None,
    refresh: Annotated[
        bool,
        typer.Option("--refresh", "-r", help="Read the cluster first on each run; undo drift."),
    ] = False,
    parallel: project.Parallel = 16,
    diff: Annotated[bool, typer.Option("--diff", help="Show field-level changes.")] = False,
) -> None:
    """Run `up` now and again whenever a file of the project changes, until Ctrl-C."""
    for path in paths or ():
        if not path.exists():
            raise UsageError(f"--path {path}: no such file or folder; pass one that exists")
    folder = find_project(Path.cwd()).folder
    roots = [path.resolve() for path in paths] if paths else [folder]
    shown = ", ".join(str(root) for root in roots)
    typer.echo(f"Watching {shown}: `up` runs now and whenever a file changes (Ctrl-C stops).")
    changed: list[str] = []
    while True:
        if changed:
            typer.echo(f"\nChanged: {_named(changed, folder)} — running `up`")
        try:
            _up_once(stack, refresh, parallel, diff)
        except StackwrightError as exc:  # bad input, a busy stack: said, and waited past
            print(f"error: {redact(str(exc))}", file=sys.stderr, flush=True)
        since = watched_files(roots)
        typer.echo("Waiting for a change (Ctrl-C stops).")
        try:
            changed, _ = wait_for_change(roots, since)
        except KeyboardInterrupt:
            typer.echo("Stopped watching.")
            return
