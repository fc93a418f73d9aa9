"""The `stackwright` command: parses, calls one function, renders the result.

Errors a user can fix are one line on stderr with exit code 2 (1 for failed
operations); a traceback is shown only for Stackwright's own bugs.
"""

from __future__ import annotations

import codecs
import gc
import io
import os
import re
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from stackwright.cli import _typer, cluster, policy, project, watch
from stackwright.cli.lines import error_line
from stackwright.errors import StackwrightError, UsageError, record_starting_directory, redact
from stackwright.lazy import lazy_module
from stackwright.version import VERSION

if TYPE_CHECKING:
    from stackwright import interrupts
else:  # asyncio (~15 ms), for the commands that run an operation
    interrupts = lazy_module("stackwright.interrupts")

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
app.command("watch")(watch.watch)


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
        if cwd.exists() and not cwd.is_dir():  # `--cwd app/Stackwright.yaml`
            raise UsageError(
                f"--cwd {cwd}: a file, not a directory; pass the project's directory ({cwd.parent})"
            )
        if not cwd.is_dir():
            raise UsageError(f"--cwd {cwd}: no such directory; pass an existing project directory")
        os.chdir(cwd)
    # Messages name the user's files from here, as compilers do (the program runs elsewhere).
    try:
        record_starting_directory(os.getcwd())
    except FileNotFoundError:  # started in a folder since deleted: `cluster list` works there
        record_starting_directory(None)


# A command allocates many objects that live until it exits (the program's resources, their
# states, the engine's tasks); with the default thresholds (700, 10, 10) the cyclic collector
# runs ~230 times in an `up` of 1,000 resources, repeatedly walking all of them (~40 ms, ~8% of
# its CPU). Young cycles are still collected, just less often.
_GC_THRESHOLDS = (10_000, 50, 100)


_INTERRUPTED = (
    "interrupted: the next operation picks up anything that was under way (it reads the "
    "cluster and waits again for what was not ready)"
)


#: Exit code after SIGTERM (128 + 15), as a shell reports a process it terminated.
_TERMINATED_CODE = 143


class _Signals:
    """SIGTERM — a CI job cancelled, `kill`, a container stopping — is handled as Ctrl-C
    is: the operation stops, what was under way stays pending for the next one to settle,
    the history says cancelled and the lock is released (not left to lapse, as after
    kill -9); only the exit code tells the two apart."""

    terminated = False


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _Signals.terminated = True
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started with Ctrl-C ignored (in the background of a script, `cmd &`): a SIGINT
        # would be dropped, and SIGTERM with it. Running coroutines are cancelled as asyncio
        # cancels them on Ctrl-C; elsewhere (or a second time) KeyboardInterrupt is raised.
        if interrupts.interrupt():
            return
        raise KeyboardInterrupt
    # Delivered as Ctrl-C is: inside `asyncio.run`, its SIGINT handler cancels the running
    # work in order (a KeyboardInterrupt raised into a task instead would leave a "Task
    # exception was never retrieved" traceback); elsewhere SIGINT raises KeyboardInterrupt.
    signal.raise_signal(signal.SIGINT)


def main(argv: list[str] | None = None) -> None:
    thresholds = gc.get_threshold()
    gc.set_threshold(*_GC_THRESHOLDS)
    # Only from the main thread, and never over a handler the embedding program set.
    handle = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    )
    if handle:
        signal.signal(signal.SIGTERM, _on_sigterm)
    if argv is None:  # the process's own streams, not those of a program that embeds this
        _never_unencodable()
    _Signals.terminated = False
    try:
        _main(argv)
    finally:
        if argv is None:
            _leave_to_exit()
        gc.set_threshold(*thresholds)  # for callers that run commands in-process
        record_starting_directory(None)
        if handle:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _leave_to_exit() -> None:
    """The command's objects (its modules, program, state and clients: ~40,000 of them
    after a one-object `up`) are left to the process's exit rather than walked by the
    cyclic collector: restoring the thresholds above set off a full collection (~20 ms),
    and the interpreter's exit another, with every cycle freed one object at a time —
    ~60 ms of a one-object `up`'s ~0.35 s, after its work was done. Only when the command
    is the process's own (`argv` is None): the process ends as `main` returns. What must
    happen at exit still does: files and the state store are closed by the command
    (`command_scope`), streams are flushed and `atexit` handlers run as before."""
    gc.freeze()


#: The codec error handler `_never_unencodable` gives stdout and stderr.
_JSON_ESCAPE = "stackwright-json-escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    """What an encoding lacks as JSON writes it: `→` as `\\u2192`, `😀` as its surrogate
    pair — the same character inside a JSON string, and readable elsewhere (Python's own
    `backslashreplace` writes `é` as `\\xe9`, which no JSON parser reads)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be")
    escaped = "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))
    return escaped, error.end


def _never_unencodable() -> None:
    """A character stdout's or stderr's encoding lacks is escaped (`\\u2192`), not raised.

    Output holds `→`, `—`, `…` and the user's own text: a CI agent whose locale is not UTF-8
    (LANG=en_US.ISO-8859-1, a Windows runner's cp1252, PYTHONIOENCODING=ascii) made the
    renderer raise UnicodeEncodeError — a traceback and exit 1 after an `up` had applied
    everything. Escaped as JSON escapes it, each `--json` line stays valid JSON."""
    codecs.register_error(_JSON_ESCAPE, _json_escape)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "backslashreplace"):
            stream.reconfigure(errors=_JSON_ESCAPE)


def _interrupted(argv: list[str] | None) -> None:
    """Say so, and exit as a shell expects after Ctrl-C (130) or SIGTERM (143)."""
    _fail(_INTERRUPTED, _TERMINATED_CODE if _Signals.terminated else 130, argv, prefix="")


def _fail(message: str, code: int, argv: list[str] | None, *, prefix: str = "error: ") -> None:
    """The one line on stderr; with --json also the last event line, so a machine reading
    the events learns why there are no more."""
    print(f"{prefix}{message}", file=sys.stderr)
    if any(map(_asks_json, sys.argv[1:] if argv is None else argv)):
        # Written as the event lines are (compact, UTF-8), so `grep '"event":"error"'` and
        # a line-by-line reader treat it as one of them.
        print(error_line(message, code), flush=True)
    sys.exit(code)


def _asks_json(arg: str) -> bool:
    """Whether `arg` is `--json`, or `-j` alone or among short flags (`-jr`, as click and
    Pulumi take them: up to a flag that takes a value, the rest of `-xj` being its value)."""
    if arg == "--json":
        return True
    if arg.startswith("--") or not arg.startswith("-"):
        return False
    for letter in arg[1:]:
        if letter == "j":
            return True
        if letter in _VALUE_FLAGS:
            return False
    return False


#: The short options that take a value (`-s NAME`, `-t URN`, `-p 8`, `import -f FILE`, …).
_VALUE_FLAGS = frozenset("dfmnopstx")


def _cwd_first(argv: list[str]) -> list[str]:
    """`--cwd DIR` moved before the command wherever it was given (and `--json` given
    before it moved after it), as Pulumi's `--cwd` works anywhere (`pulumi stack output --cwd infra` in CI scripts); click takes a
    group's options only before the subcommand. Nothing after `--` is touched."""
    end = argv.index("--") if "--" in argv else len(argv)
    lifted: list[str] = []
    rest: list[str] = []
    index = 0
    while index < end:
        arg = argv[index]
        if arg == "--cwd" and index + 1 < end:
            lifted += argv[index : index + 2]
            index += 2
            continue
        (lifted if arg.startswith("--cwd=") else rest).append(arg)
        index += 1
    # `--json` and `--stack NAME` / `-s NAME` before the command (`stackwright -s prod up`,
    # as kubectl takes its flags anywhere) belong to the command: they were refused with
    # "No such option".
    leading = 0
    while leading < len(rest):
        arg = rest[leading]
        width = 2 if arg in ("--stack", "-s") else 1
        if not (arg in ("--json", "-j") or width == 2 or arg.startswith("--stack=")):
            break
        leading += width
    # With no command after them, click's "No such option: -s" misled (every stack command
    # has one): say what is missing.
    if leading > len(rest):
        raise UsageError(
            f"{rest[-1]} needs a stack name, then the command: `stackwright {rest[-1]} STACK up`"
        )
    if leading and leading == len(rest):
        given = " ".join(rest)
        raise UsageError(
            f"`stackwright {given}` names no command: put one after it, as `stackwright {given} up`"
        )
    if leading:
        rest = [*rest[leading:], *rest[:leading]]
    return [*lifted, *rest, *argv[end:]]


def _main(argv: list[str] | None) -> None:
    try:
        args = _cwd_first(sys.argv[1:] if argv is None else argv)
        # Outside standalone mode click returns a `typer.Exit(code)` instead of raising it.
        with project.command_scope():  # what the command opened is closed as it ends
            code = app(args=args, prog_name="stackwright", standalone_mode=False)
        if code == 130:  # typer turns Ctrl-C (KeyboardInterrupt) into this code, silently
            _interrupted(argv)
        if isinstance(code, int) and code != 0:
            sys.exit(code)
    except StackwrightError as exc:
        _fail(redact(str(exc)), exc.exit_code, argv)
    except KeyboardInterrupt:
        _interrupted(argv)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(1)
    except typer.TyperException as exc:
        # typer vendors click; its usage errors (a missing option, an unknown command)
        # derive from TyperException and know how to show themselves.
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)
        _fail(_usage_message(exc, args), 2, argv)
    except Exception:  # a bug of Stackwright's: the traceback helps, its secrets must not show
        import traceback

        print(redact(traceback.format_exc()), file=sys.stderr, end="")
        sys.exit(1)


#: Flags a Pulumi user's scripts pass that Stackwright has no use for, and what to do instead.
PULUMI_ONLY_FLAGS = {
    "--skip-preview": "`--yes` already applies without a preview first",
    "--non-interactive": "Stackwright asks only in a terminal; pass --yes where a command asks",
    "--color": "output to a pipe or file is plain already; NO_COLOR=1 turns colour off",
    "--yes": "this command does not ask for confirmation: leave it out",
    "-y": "this command does not ask for confirmation: leave it out",
}


#: click's refusals that quote the words of `config set` after KEY, which may be a secret's
#: (`config set --secret pw -Xy9…` reads as an option, `… my pass phrase` as extra words),
#: and of `config set-all` (`--secret pw=my pass phrase`).
_VALUE_SLIPS = ("No such option", "Got unexpected extra argument")
_VALUE_COMMANDS = (" config set", " config set-all")


def _config_set_slip(text: str, ctx: object, command: str) -> str:
    """The refusal of `config set`'s (or `set-all`'s) words, without them."""
    if text.startswith("No such option"):
        params = getattr(getattr(ctx, "command", None), "params", [])
        options = [o for p in params for o in getattr(p, "opts", ()) if o.startswith("--")]
        where = (
            "a value goes with its key: `--secret KEY=VALUE`"
            if command.endswith("set-all")
            else f"a value that starts with '-' goes after `--`: `{command} … -- VALUE`"
        )
        return (
            f"No such option (not shown: it may be a secret value; {where}); the options are "
            f"{', '.join(options)}"
        )
    if command.endswith("set-all"):
        return (
            "config set-all takes KEY=VALUE after each flag, and more words followed one (not "
            "shown: they may be part of a secret value); quote a value with spaces: "
            "`--secret KEY='a b'`"
        )
    return (
        "config set takes KEY and one VALUE, and more words followed them (not shown: they "
        "may be part of a secret value); quote a value with spaces: "
        "`stackwright config set KEY 'a b'`"
    )


def _usage_message(exc: Exception, args: list[str]) -> str:
    """click's message on one line, pointing at the command's help (click itself prints
    three: the usage, a hint and the error)."""
    format_message = getattr(exc, "format_message", None)
    text = format_message() if callable(format_message) else str(exc)
    text = " ".join(str(text).split()).rstrip(".")
    option = str(getattr(exc, "option_name", ""))
    instead = PULUMI_ONLY_FLAGS.get(option)
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or _command_named(args)
    if instead is not None and text.startswith("No such option"):
        # click's "Possible options" guess (--type for --yes) would only mislead here.
        text = f"No such option: {option} (a Pulumi flag: {instead})"
    elif command.endswith(_VALUE_COMMANDS) and text.startswith(_VALUE_SLIPS):
        text = _config_set_slip(text, ctx, command)
    elif text.startswith("No such option") and re.fullmatch(r"-\d", option):
        # `config set offset -5 --type int`: a negative number reads as a flag, as it does
        # for Pulumi's CLI; `--` ends the options.
        text = (
            f"No such option: {option} (a value that starts with '-' goes after `--`: "
            f"`{command} … -- VALUE`)"
        )
    return f"{text}; see `{command} --help`"


def _command_named(args: list[str]) -> str:
    """The command `args` name (`stackwright up`), for an error click raises before it knows
    (an option given last without its value: `up --target`), whose help it then pointed to
    as `stackwright --help`."""
    named = typer.main.get_command(app)
    words = ["stackwright"]
    for arg in args:
        sub = getattr(named, "commands", {}).get(arg)
        if sub is not None:  # a group's command; other words are options and their values
            named = sub
            words.append(arg)
    return " ".join(words)


if __name__ == "__main__":
    main()
