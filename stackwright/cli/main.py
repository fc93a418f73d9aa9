"""The `stackwright` command: parses, calls one function, renders the result.

Errors a user can fix are one line on stderr with exit code 2 (1 for failed
operations); a traceback is shown only for Stackwright's own bugs.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from stackwright.cli import _typer, cluster, policy, project
from stackwright.errors import StackwrightError, UsageError, redact
from stackwright.version import VERSION

_typer.install()

app = typer.Typer(
    name="stackwright",
    help="Infrastructure as code for Kubernetes, in Python.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(cluster.app, name="cluster")
app.add_typer(policy.app, name="policy")
project.register(app)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"stackwright {VERSION} (Python {sys.version.split()[0]})")
        raise typer.Exit()


@app.callback()
def _global(
    cwd: Annotated[
        Path | None, typer.Option("--cwd", help="Run as if started in DIR.", metavar="DIR")
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Show the version and exit.", callback=_show_version, is_eager=True
        ),
    ] = False,
) -> None:
    if cwd is not None:
        if not cwd.is_dir():
            raise UsageError(f"--cwd {cwd}: no such directory; pass an existing project directory")
        os.chdir(cwd)


# A command allocates many objects that live until it exits (the program's resources, their
# states, the engine's tasks); with the default thresholds (700, 10, 10) the cyclic collector
# runs ~230 times in an `up` of 1,000 resources, repeatedly walking all of them (~40 ms, ~8% of
# its CPU). Young cycles are still collected, just less often.
_GC_THRESHOLDS = (10_000, 50, 100)


_INTERRUPTED = (
    "interrupted: the next operation picks up what was under way (it reads the cluster and "
    "waits again for what was not ready)"
)


def main(argv: list[str] | None = None) -> None:
    thresholds = gc.get_threshold()
    gc.set_threshold(*_GC_THRESHOLDS)
    try:
        _main(argv)
    finally:
        gc.set_threshold(*thresholds)  # for callers that run commands in-process


def _main(argv: list[str] | None) -> None:
    try:
        # Outside standalone mode click returns a `typer.Exit(code)` instead of raising it.
        code = app(args=argv, prog_name="stackwright", standalone_mode=False)
        if code == 130:  # typer turns Ctrl-C (KeyboardInterrupt) into this code, silently
            print(_INTERRUPTED, file=sys.stderr)
        if isinstance(code, int) and code != 0:
            sys.exit(code)
    except StackwrightError as exc:
        message = redact(str(exc))
        print(f"error: {message}", file=sys.stderr)
        if "--json" in (sys.argv[1:] if argv is None else argv):
            # A machine reading the event lines learns why there are no more.
            event = {"event": "error", "message": message, "exitCode": exc.exit_code}
            print(json.dumps(event), flush=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print(_INTERRUPTED, file=sys.stderr)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except typer.TyperException as exc:
        # typer vendors click; its usage errors (a missing option, an unknown command)
        # derive from TyperException and know how to show themselves.
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)
        print(f"error: {_usage_message(exc)}", file=sys.stderr)
        sys.exit(2)
    except Exception:  # a bug of Stackwright's: the traceback helps, its secrets must not show
        import traceback

        print(redact(traceback.format_exc()), file=sys.stderr, end="")
        sys.exit(1)


def _usage_message(exc: Exception) -> str:
    """click's message on one line, pointing at the command's help (click itself prints
    three: the usage, a hint and the error)."""
    format_message = getattr(exc, "format_message", None)
    text = format_message() if callable(format_message) else str(exc)
    text = " ".join(str(text).split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "stackwright"
    return f"{text}; see `{command} --help`"


if __name__ == "__main__":
    main()
