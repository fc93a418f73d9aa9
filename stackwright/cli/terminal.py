"""Who is at the other end of a command's streams: a person (to answer a question, to watch
a live display), or a machine reading stdout (`--json` events, a JSON or SARIF report).

A terminal is not enough to say so. CI runners give their jobs one (Buildkite and CircleCI
run each step in a pseudo-terminal, as do `docker run -t` and Jenkins' terminal plugins),
where a question waits until the job's timeout and a live display's cursor movements
garble the log. As Pulumi's non-interactive detection does, the variables a CI system
sets in every job say that no one is there.

Must never: import anything slow (every command imports this).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Final, TextIO

#: Variables that mark a CI job, in the order they are looked at. `CI` is the convention
#: (GitHub Actions, GitLab CI, CircleCI, Buildkite, Travis CI, Bitbucket Pipelines, Drone,
#: Woodpecker set it); the others are those of CI systems that do not set `CI`.
CI_VARIABLES: Final = (
    "CI",
    "TF_BUILD",  # Azure Pipelines
    "JENKINS_URL",  # Jenkins
    "TEAMCITY_VERSION",  # TeamCity
    "CODEBUILD_BUILD_ID",  # AWS CodeBuild
)
#: Values that say "not CI" (`CI=false` lets a person run in a shell that exports CI).
_NOT_SET: Final = ("", "0", "false", "no", "off")


def ci_marker() -> str:
    """The variable that says a CI job runs this command, as `CI=true`; "" outside CI."""
    for name in CI_VARIABLES:
        value = os.environ.get(name, "")
        if value.strip().lower() not in _NOT_SET:
            return f"{name}={value}"
    return ""


def why_no_one_answers() -> str:
    """ "" when a person can answer a question on stdin; else why not, as the end of a
    sentence: `without a terminal`, `in CI (CI=true is set)`."""
    if not sys.stdin.isatty():
        return "without a terminal"
    marker = ci_marker()
    return f"in CI ({marker} is set)" if marker else ""


def watched(stream: TextIO) -> bool:
    """Whether `stream` goes to a person's terminal, where a live display belongs."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not ci_marker()


@contextlib.contextmanager
def machine_stdout() -> Iterator[TextIO]:
    """stdout kept for what a machine reads, yielded; whatever else writes to stdout meanwhile
    goes to stderr: the program's and its callbacks' `print`, and — the file descriptor
    itself moved — what the subprocesses it runs (`subprocess.run(["git", …])`), C libraries
    and `sys.__stdout__` write, which a `redirect_stdout` alone let into the events.

    Where stdout is no file descriptor (a test's StringIO), only `print` is redirected."""
    out = sys.stdout
    try:
        fd, err_fd = out.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        with contextlib.redirect_stdout(sys.stderr):
            yield out
        return
    out.flush()
    saved = os.dup(fd)
    os.dup2(err_fd, fd)
    try:
        encoding, errors = getattr(out, "encoding", None), getattr(out, "errors", None)
        with (
            open(saved, "w", encoding=encoding, errors=errors, closefd=False) as machine,
            contextlib.redirect_stdout(sys.stderr),
        ):
            yield machine
    finally:
        with contextlib.suppress(OSError):
            out.flush()  # what was written to the stdout object itself: stderr's too
        os.dup2(saved, fd)
        os.close(saved)
