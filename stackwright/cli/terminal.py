"""Whether a person is at the other end of a command: someone to answer a question, or to
watch a live display.

A terminal is not enough to say so. CI runners give their jobs one (Buildkite and CircleCI
run each step in a pseudo-terminal, as do `docker run -t` and Jenkins' terminal plugins),
where a question waits until the job's timeout and a live display's cursor movements
garble the log. As Pulumi's non-interactive detection does, the variables a CI system
sets in every job say that no one is there.

Must never: import anything slow (every command imports this).
"""

from __future__ import annotations

import os
import sys
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
